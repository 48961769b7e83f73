//! Exact rounding of f64 values into narrow float formats, and the f8 types.
//!
//! Every conversion here rounds ONCE, to nearest with ties to even, directly
//! from f64 (no intermediate f32 step, unlike `half::f16::from_f64`).

use crate::hlo::{ElementType, FloatFormat};

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

macro_rules! f8_type {
    ($name:ident, $dtype:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub u8);

        impl $name {
            /// Rounds once, to nearest even.
            pub fn from_f64(x: f64) -> Self {
                $name(round_to_bits(x, &$dtype.float_format().unwrap()) as u8)
            }
            /// The exact value.
            pub fn to_f64(self) -> f64 {
                bits_to_f64(self.0 as u64, &$dtype.float_format().unwrap())
            }
        }
    };
}

f8_type!(
    F8E4M3Fn,
    ElementType::F8E4M3Fn,
    "An `f8e4m3fn` value (bits): 4 exponent bits, 3 mantissa bits, no infinities."
);
f8_type!(
    F8E5M2,
    ElementType::F8E5M2,
    "An `f8e5m2` value (bits): 5 exponent bits, 2 mantissa bits, IEEE-like."
);

/// Rounds once, to nearest even, into f16.
pub fn f16_from_f64(x: f64) -> half::f16 {
    half::f16::from_bits(round_to_bits(x, &ElementType::F16.float_format().unwrap()) as u16)
}

/// Rounds once, to nearest even, into bf16.
pub fn bf16_from_f64(x: f64) -> half::bf16 {
    half::bf16::from_bits(round_to_bits(x, &ElementType::Bf16.float_format().unwrap()) as u16)
}

/// Rounds `x` once into float type `t` and returns the exact result as f64
/// (the value the narrow type holds). For non-float types returns `x`.
pub fn round_to_type(x: f64, t: ElementType) -> f64 {
    match t {
        ElementType::F64 => x,
        ElementType::F32 => x as f32 as f64,
        _ => match t.float_format() {
            Some(fmt) => bits_to_f64(round_to_bits(x, &fmt), &fmt),
            None => x,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(t: ElementType) -> FloatFormat {
        t.float_format().unwrap()
    }

    #[test]
    fn f16_all_bits_round_trip() {
        let f = fmt(ElementType::F16);
        for b in 0..=u16::MAX as u64 {
            let v = bits_to_f64(b, &f);
            if v.is_nan() {
                continue;
            }
            assert_eq!(round_to_bits(v, &f), b, "bits {b:#x}");
            assert_eq!(v, half::f16::from_bits(b as u16).to_f64());
        }
    }

    #[test]
    fn bf16_all_bits_round_trip() {
        let f = fmt(ElementType::Bf16);
        for b in 0..=u16::MAX as u64 {
            let v = bits_to_f64(b, &f);
            if v.is_nan() {
                continue;
            }
            assert_eq!(round_to_bits(v, &f), b, "bits {b:#x}");
            assert_eq!(v, half::bf16::from_bits(b as u16).to_f64());
        }
    }

    #[test]
    fn f8_e4m3fn_overflow_is_nan_and_ties_go_even() {
        assert_eq!(F8E4M3Fn::from_f64(448.0).to_f64(), 448.0);
        // 464 is the tie between 448 (even) and 480 (not representable): goes to 448
        assert_eq!(F8E4M3Fn::from_f64(464.0).to_f64(), 448.0);
        assert!(F8E4M3Fn::from_f64(465.0).to_f64().is_nan());
        assert!(F8E4M3Fn::from_f64(f64::INFINITY).to_f64().is_nan());
        assert_eq!(F8E5M2::from_f64(1e6).to_f64(), f64::INFINITY);
        assert_eq!(F8E5M2::from_f64(-1e6).to_f64(), f64::NEG_INFINITY);
    }

    #[test]
    fn signed_zero_and_subnormals() {
        let f = fmt(ElementType::F16);
        assert_eq!(round_to_bits(-0.0, &f), 0x8000);
        // smallest subnormal, and half of it ties to zero (even)
        assert_eq!(round_to_bits(2f64.powi(-24), &f), 1);
        assert_eq!(round_to_bits(2f64.powi(-25), &f), 0);
        assert_eq!(round_to_bits(2f64.powi(-24) * 1.5, &f), 2);
        assert_eq!(round_to_bits(-2f64.powi(-26), &f), 0x8000);
    }
}
