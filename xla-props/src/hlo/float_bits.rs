//! Exact conversions between f64 and the bit patterns of narrow float formats.
//!
//! Kept in `hlo` (which depends on nothing) so the text readers and printers
//! can write and read float constants bit-exactly; `literal` re-exports them.

use super::dtype::{FloatFormat, Specials};

/// Rounds `x` to the nearest value of `fmt` (ties to even) and returns its bit pattern.
///
/// Overflow gives infinity, or NaN for formats without infinities
/// (`f8e4m3fn`). NaN keeps its sign and becomes the format's quiet NaN.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::literal::{round_to_bits, bits_to_f64};
/// let f16 = ElementType::F16.float_format().unwrap();
/// // 1 + 2^-11 + 2^-40 lies just above the midpoint between two f16 values; a
/// // detour through f32 would lose the 2^-40 and round to even (down).
/// let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
/// assert_eq!(bits_to_f64(round_to_bits(x, &f16), &f16), 1.0 + 2f64.powi(-10));
/// ```
pub fn round_to_bits(x: f64, fmt: &FloatFormat) -> u64 {
    if fmt.specials == Specials::ExponentOnly {
        return exponent_only_bits(x, fmt);
    }
    let eb = fmt.exponent_bits;
    let mb = fmt.mantissa_bits;
    let sign_bit = 1u64 << (eb + mb);
    let sign = if x.is_sign_negative() { sign_bit } else { 0 };
    let exp_all_ones = (1u64 << eb) - 1;
    let all_ones = (exp_all_ones << mb) | ((1u64 << mb) - 1);
    let nan = match fmt.specials {
        // quiet NaN: all-ones exponent, top mantissa bit set
        Specials::Ieee => sign | (exp_all_ones << mb) | (1u64 << (mb - 1)),
        // the only NaN is all ones
        Specials::AllOnesNan => sign | all_ones,
        Specials::NegativeZeroNan => sign_bit,
        // no NaN: a zero of its sign
        _ => sign,
    };
    if x.is_nan() {
        return nan;
    }
    let overflow = match fmt.specials {
        Specials::Ieee => sign | (exp_all_ones << mb),
        Specials::FiniteOnly => sign | all_ones,
        _ => nan,
    };
    // fnuz has no negative zero
    let zero = if fmt.specials == Specials::NegativeZeroNan {
        0
    } else {
        sign
    };
    if x.is_infinite() {
        return overflow;
    }
    let a = x.abs();
    if a == 0.0 {
        return zero;
    }
    let Some((n, k)) = round_significand(a, mb, 1 - fmt.bias) else {
        return zero;
    };
    if n < (1u64 << mb) {
        // subnormal (k is the subnormal quantum)
        return sign | n;
    }
    let exp_field = (k + mb as i32 + fmt.bias) as i64;
    let mant = n - (1u64 << mb);
    let max_field = if fmt.has_inf {
        exp_all_ones as i64 - 1
    } else {
        exp_all_ones as i64
    };
    if exp_field > max_field {
        return overflow;
    }
    let out = ((exp_field as u64) << mb) | mant;
    if fmt.specials == Specials::AllOnesNan && out == all_ones {
        return overflow;
    }
    sign | out
}

/// `a > 0` rounded to `mb` mantissa bits (ties to even) with exponents
/// down to `min_exp` (below it, subnormal quanta): `(n, k)` with the
/// result `n * 2^k` and `n < 2^(mb+1)`, or None when it rounds to zero.
fn round_significand(a: f64, mb: u32, min_exp: i32) -> Option<(u64, i32)> {
    // a = m * 2^e exactly, with m < 2^53.
    let bits = a.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if raw_exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), raw_exp - 1075)
    };
    // binade of a: floor(log2 a)
    let top = 63 - m.leading_zeros() as i32 + e;
    // quantum exponent k: the value of one unit in the last place at a's binade
    let mut k = top.max(min_exp) - mb as i32;
    // n = round_half_even(m * 2^(e - k))
    let shift = k - e;
    let mut n: u64 = if shift <= 0 {
        // exact; cannot overflow meaningfully for our formats since top-k <= mb
        m << (-shift) as u32
    } else if shift >= 64 {
        0
    } else {
        let q = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    if n >= (1u64 << (mb + 1)) {
        // rounding carried into the next binade (n == 2^(mb+1) exactly)
        n >>= 1;
        k += 1;
    }
    (n != 0).then_some((n, k))
}

/// `f8e8m0fnu`: the nearest power of two `2^(e - bias)`, `e` in
/// `0..=2*bias`. With no mantissa bit the significand is always 1, so a tie
/// (`1.5 * 2^k`) rounds up, as LLVM's APFloat (ties-to-even on an odd
/// significand) does. See [`Specials::ExponentOnly`] for the rest.
fn exponent_only_bits(x: f64, fmt: &FloatFormat) -> u64 {
    let nan = (1u64 << fmt.exponent_bits) - 1;
    if x.is_nan() || x.is_infinite() || (x < 0.0) {
        return nan;
    }
    if x == 0.0 {
        return 0;
    }
    let bits = x.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // x = 2^top * (1 + f), f in [0, 1); subnormal f64 inputs are far below 2^-127
    let (top, up) = if raw_exp == 0 {
        (-1023, false)
    } else {
        (raw_exp - 1023, frac >= 1u64 << 51)
    };
    let e = top + i32::from(up) + fmt.bias;
    if e < 0 {
        0
    } else if e as u64 >= nan {
        nan
    } else {
        e as u64
    }
}

/// The exact value of a bit pattern of `fmt`, as f64.
pub fn bits_to_f64(bits: u64, fmt: &FloatFormat) -> f64 {
    let eb = fmt.exponent_bits;
    let mb = fmt.mantissa_bits;
    let exp_all_ones = (1i32 << eb) - 1;
    if fmt.specials == Specials::ExponentOnly {
        let e = (bits & ((1u64 << eb) - 1)) as i32;
        return if e == exp_all_ones {
            f64::NAN
        } else {
            2f64.powi(e - fmt.bias)
        };
    }
    let sign_bit = 1u64 << (eb + mb);
    // every bit of the format (all 64 for f64: the shift wraps to 0)
    let bits = bits & (sign_bit << 1).wrapping_sub(1);
    let negative = bits & sign_bit != 0;
    let exp = ((bits >> mb) & ((1u64 << eb) - 1)) as i32;
    let mant = bits & ((1u64 << mb) - 1);
    let v = match fmt.specials {
        Specials::Ieee if exp == exp_all_ones => {
            if mant == 0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        Specials::AllOnesNan if exp == exp_all_ones && mant == (1u64 << mb) - 1 => f64::NAN,
        Specials::NegativeZeroNan if bits == sign_bit => f64::NAN,
        _ if exp == 0 => mant as f64 * 2f64.powi(1 - fmt.bias - mb as i32),
        _ => (mant | (1u64 << mb)) as f64 * 2f64.powi(exp - fmt.bias - mb as i32),
    };
    if negative {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::ElementType;

    fn fmt(t: ElementType) -> FloatFormat {
        t.float_format().unwrap()
    }

    #[test]
    fn every_minifloat_pattern_round_trips_and_the_largest_is_max() {
        for &t in ElementType::ALL.iter().filter(|t| t.is_minifloat()) {
            let f = fmt(t);
            assert_eq!(f.bit_width(), t.bit_width(), "{t}");
            let mut largest = 0.0f64;
            for b in 0..1u64 << f.bit_width() {
                let v = bits_to_f64(b, &f);
                if v.is_nan() {
                    assert!(round_to_bits(v, &f) == b || f.specials != Specials::NegativeZeroNan);
                    continue;
                }
                // fnuz has one zero: 0x80 is NaN, so every other pattern is a value
                assert_eq!(round_to_bits(v, &f), b, "{t} bits {b:#x} = {v}");
                if v.is_finite() {
                    largest = largest.max(v);
                }
            }
            assert_eq!(largest, f.max, "{t}");
        }
    }

    #[test]
    fn specials_follow_each_encoding() {
        let (fnuz, b11) = (
            fmt(ElementType::F8E4M3Fnuz),
            fmt(ElementType::F8E4M3B11Fnuz),
        );
        assert_eq!(round_to_bits(-0.0, &fnuz), 0);
        assert_eq!(round_to_bits(-1e-9, &fnuz), 0);
        assert_eq!(round_to_bits(f64::NAN, &fnuz), 0x80);
        assert_eq!(round_to_bits(1e6, &fnuz), 0x80);
        assert!(bits_to_f64(0x80, &fnuz).is_nan());
        assert_eq!((fnuz.max, b11.max), (240.0, 30.0));
        assert_eq!(fmt(ElementType::F8E5M2Fnuz).max, 57344.0);
        // IEEE-like: e3m4's largest is 15.5; 15.75 ties to even, up to infinity
        let e3m4 = fmt(ElementType::F8E3M4);
        assert_eq!(e3m4.max, 15.5);
        assert_eq!(
            bits_to_f64(round_to_bits(15.75, &e3m4), &e3m4),
            f64::INFINITY
        );
        assert_eq!(fmt(ElementType::F8E4M3).max, 240.0);
        // finite-only: saturates, and NaN becomes a zero of its sign
        let f4 = fmt(ElementType::F4E2M1Fn);
        assert_eq!(round_to_bits(100.0, &f4), 0x7);
        assert_eq!(round_to_bits(f64::NEG_INFINITY, &f4), 0xF);
        assert_eq!(round_to_bits(-f64::NAN, &f4), 0x8);
        assert_eq!(fmt(ElementType::F6E2M3Fn).max, 7.5);
        assert_eq!(fmt(ElementType::F6E3M2Fn).max, 28.0);
        // e8m0: powers of two, ties up, no zero, no sign
        let e8 = fmt(ElementType::F8E8M0Fnu);
        assert_eq!(e8.bit_width(), 8);
        assert_eq!(round_to_bits(1.0, &e8), 127);
        assert_eq!(round_to_bits(3.0, &e8), 129);
        assert_eq!(round_to_bits(2.9, &e8), 128);
        assert_eq!(round_to_bits(0.0, &e8), 0);
        assert_eq!(round_to_bits(1e-300, &e8), 0);
        assert_eq!(round_to_bits(-1.0, &e8), 0xFF);
        assert_eq!(round_to_bits(2f64.powi(128), &e8), 0xFF);
        assert_eq!(round_to_bits(2f64.powi(127), &e8), 254);
        assert_eq!(bits_to_f64(0, &e8), 2f64.powi(-127));
        assert!(bits_to_f64(0xFF, &e8).is_nan());
    }
}
