//! Exact conversions between f64 and the bit patterns of narrow float formats.
//!
//! Kept in `hlo` (which depends on nothing) so the text readers and printers
//! can write and read float constants bit-exactly; `literal` re-exports them.

use super::dtype::FloatFormat;

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
    let eb = fmt.exponent_bits;
    let mb = fmt.mantissa_bits;
    let sign_bit = 1u64 << (eb + mb);
    let sign = if x.is_sign_negative() { sign_bit } else { 0 };
    let exp_all_ones = (1u64 << eb) - 1;
    let nan_bits = if fmt.has_inf {
        // quiet NaN: all-ones exponent, top mantissa bit set
        (exp_all_ones << mb) | (1u64 << (mb - 1))
    } else {
        // f8e4m3fn: the only NaN is all ones
        (exp_all_ones << mb) | ((1u64 << mb) - 1)
    };
    if x.is_nan() {
        return sign | nan_bits;
    }
    let overflow = if fmt.has_inf {
        sign | (exp_all_ones << mb)
    } else {
        sign | nan_bits
    };
    if x.is_infinite() {
        return overflow;
    }
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
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
    let min_exp = 1 - fmt.bias; // exponent of the smallest normal
                                // quantum exponent k: the value of one unit in the last place at a's binade
    let k = top.max(min_exp) - mb as i32;
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
    let mut k = k;
    if n >= (1u64 << (mb + 1)) {
        // rounding carried into the next binade (n == 2^(mb+1) exactly)
        n >>= 1;
        k += 1;
    }
    if n == 0 {
        return sign;
    }
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
    if !fmt.has_inf && out == nan_bits {
        return overflow;
    }
    sign | out
}

/// The exact value of a bit pattern of `fmt`, as f64.
pub fn bits_to_f64(bits: u64, fmt: &FloatFormat) -> f64 {
    let eb = fmt.exponent_bits;
    let mb = fmt.mantissa_bits;
    let negative = (bits >> (eb + mb)) & 1 == 1;
    let exp = ((bits >> mb) & ((1u64 << eb) - 1)) as i32;
    let mant = bits & ((1u64 << mb) - 1);
    let exp_all_ones = (1i32 << eb) - 1;
    let v = if exp == exp_all_ones && fmt.has_inf {
        if mant == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if exp == exp_all_ones && !fmt.has_inf && mant == (1u64 << mb) - 1 {
        f64::NAN
    } else if exp == 0 {
        mant as f64 * 2f64.powi(1 - fmt.bias - mb as i32)
    } else {
        (mant | (1u64 << mb)) as f64 * 2f64.powi(exp - fmt.bias - mb as i32)
    };
    if negative {
        -v
    } else {
        v
    }
}
