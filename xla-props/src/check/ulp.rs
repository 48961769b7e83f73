//! Distances between two values of one element type, in units in the last place.
//!
//! Floats are compared through their bit patterns: the sign-magnitude encoding
//! is mapped onto a monotone integer line (`ordinal`), on which `+0` and `-0`
//! both sit at 0 and neighbouring representable values are 1 apart. This works
//! unchanged for subnormals, for formats without infinities (`f8e4m3fn`) and for
//! f64, where an f64 difference of the values would round.

use crate::hlo::{ElementType, FloatFormat};
use crate::literal::round_to_bits;

/// What a float bit pattern encodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloatClass {
    /// Any NaN, whatever its sign or payload.
    Nan,
    /// Positive infinity.
    PosInf,
    /// Negative infinity.
    NegInf,
    /// `+0` or `-0`.
    Zero,
    /// A nonzero value below the smallest normal.
    Subnormal,
    /// A normal finite value.
    Normal,
}

/// The class of a float bit pattern of `fmt`.
pub fn classify(bits: u64, fmt: &FloatFormat) -> FloatClass {
    let mb = fmt.mantissa_bits;
    let eb = fmt.exponent_bits;
    let exp = (bits >> mb) & ((1u64 << eb) - 1);
    let mant = bits & ((1u64 << mb) - 1);
    let all_ones = (1u64 << eb) - 1;
    let negative = (bits >> (eb + mb)) & 1 == 1;
    if exp == all_ones {
        if fmt.has_inf {
            if mant == 0 {
                return if negative {
                    FloatClass::NegInf
                } else {
                    FloatClass::PosInf
                };
            }
            return FloatClass::Nan;
        }
        // f8e4m3fn: only the all-ones mantissa is NaN, the rest are normals.
        if mant == (1u64 << mb) - 1 {
            return FloatClass::Nan;
        }
        return FloatClass::Normal;
    }
    if exp == 0 {
        if mant == 0 {
            FloatClass::Zero
        } else {
            FloatClass::Subnormal
        }
    } else {
        FloatClass::Normal
    }
}

/// The position of a non-NaN bit pattern on the monotone line of `fmt`'s values:
/// `-0` and `+0` are both 0, the smallest positive subnormal is 1, and so on.
/// NaN has no position.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::check::ordinal;
/// let f16 = ElementType::F16.float_format().unwrap();
/// assert_eq!(ordinal(0x8000, &f16), Some(0)); // -0
/// assert_eq!(ordinal(0x0001, &f16), Some(1)); // smallest subnormal
/// assert_eq!(ordinal(0x8001, &f16), Some(-1));
/// assert_eq!(ordinal(0x7e00, &f16), None); // NaN
/// ```
pub fn ordinal(bits: u64, fmt: &FloatFormat) -> Option<i128> {
    if classify(bits, fmt) == FloatClass::Nan {
        return None;
    }
    let width = fmt.bit_width();
    let sign_bit = 1u64 << (width - 1);
    let magnitude = (bits & (sign_bit - 1)) as i128;
    Some(if bits & sign_bit != 0 {
        -magnitude
    } else {
        magnitude
    })
}

/// The bit pattern at position `ord` of `fmt` (inverse of [`ordinal`]; 0 gives `+0`).
pub fn from_ordinal(ord: i128, fmt: &FloatFormat) -> u64 {
    let width = fmt.bit_width();
    let sign_bit = 1u64 << (width - 1);
    if ord < 0 {
        sign_bit | (ord.unsigned_abs() as u64)
    } else {
        ord as u64
    }
}

/// The ULP distance between two bit patterns of `dtype`.
///
/// For floats: the number of representable values between them (so 0 for
/// `+0` vs `-0`; the sign of zero is judged separately), `None` when either
/// is NaN. For integers and pred: the absolute difference of the values.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::check::ulp_distance;
/// // 1.0 and the next f16 above it (1 + 2^-10)
/// assert_eq!(ulp_distance(0x3c00, 0x3c01, ElementType::F16), Some(1));
/// // the largest negative subnormal and the smallest positive one: -1 .. 1
/// assert_eq!(ulp_distance(0x8001, 0x0001, ElementType::F16), Some(2));
/// // f8e4m3fn has no infinity: 448 (0x7e) is one step below NaN (0x7f)
/// assert_eq!(ulp_distance(0x7e, 0x7f, ElementType::F8E4M3Fn), None);
/// ```
pub fn ulp_distance(a_bits: u64, b_bits: u64, dtype: ElementType) -> Option<u128> {
    match dtype.float_format() {
        Some(fmt) => {
            let a = ordinal(a_bits, &fmt)?;
            let b = ordinal(b_bits, &fmt)?;
            Some(a.abs_diff(b))
        }
        None => {
            let a = int_value(a_bits, dtype);
            let b = int_value(b_bits, dtype);
            Some(a.abs_diff(b))
        }
    }
}

/// The integer value of an integer (or pred) bit pattern of `dtype`.
pub fn int_value(bits: u64, dtype: ElementType) -> i128 {
    let width = dtype.bit_width();
    let masked = if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    };
    if dtype.is_signed_int() && width < 128 {
        let shift = 128 - width;
        ((masked as i128) << shift) >> shift
    } else {
        masked as i128
    }
}

/// The representable value of `dtype` next above `x` (towards +inf); `x` itself
/// is first rounded into the type. Returns `x` for non-float types and at +inf.
pub fn next_up(x: f64, dtype: ElementType) -> f64 {
    step(x, dtype, 1)
}

/// The representable value of `dtype` next below `x` (towards -inf).
pub fn next_down(x: f64, dtype: ElementType) -> f64 {
    step(x, dtype, -1)
}

fn step(x: f64, dtype: ElementType, by: i128) -> f64 {
    let Some(fmt) = dtype.float_format() else {
        return x;
    };
    if x.is_nan() {
        return x;
    }
    let bits = float_bits(x, dtype);
    let Some(ord) = ordinal(bits, &fmt) else {
        return x;
    };
    let next = from_ordinal(ord + by, &fmt);
    match classify(next, &fmt) {
        FloatClass::Nan => x,
        _ => crate::literal::bits_to_f64(next, &fmt),
    }
}

/// The bit pattern of `x` rounded once (to nearest even) into float type `dtype`.
pub fn float_bits(x: f64, dtype: ElementType) -> u64 {
    match dtype {
        ElementType::F64 => x.to_bits(),
        ElementType::F32 => (x as f32).to_bits() as u64,
        _ => match dtype.float_format() {
            Some(fmt) => round_to_bits(x, &fmt),
            None => x as i128 as u64,
        },
    }
}

/// Rounds `x` into `dtype` towards -inf (the largest representable value `<= x`).
pub fn round_down(x: f64, dtype: ElementType) -> f64 {
    let r = crate::literal::round_to_type(x, dtype);
    if r > x {
        next_down(r, dtype)
    } else {
        r
    }
}

/// Rounds `x` into `dtype` towards +inf (the smallest representable value `>= x`).
pub fn round_up(x: f64, dtype: ElementType) -> f64 {
    let r = crate::literal::round_to_type(x, dtype);
    if r < x {
        next_up(r, dtype)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_are_monotone_over_all_f16_values() {
        let fmt = ElementType::F16.float_format().unwrap();
        let mut values: Vec<(f64, i128)> = (0..=u16::MAX as u64)
            .filter_map(|b| ordinal(b, &fmt).map(|o| (crate::literal::bits_to_f64(b, &fmt), o)))
            .collect();
        values.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        for w in values.windows(2) {
            assert!(w[0].1 <= w[1].1, "{:?} then {:?}", w[0], w[1]);
        }
        // -inf .. +inf: 2 * (0x7c00) + 1 positions, +0/-0 share one
        assert_eq!(values.first().unwrap().1, -0x7c00);
        assert_eq!(values.last().unwrap().1, 0x7c00);
    }

    #[test]
    fn distances_by_hand() {
        // +0 vs -0: same position
        assert_eq!(ulp_distance(0x0000, 0x8000, ElementType::F16), Some(0));
        // max finite f16 (0x7bff) to +inf (0x7c00): one step
        assert_eq!(ulp_distance(0x7bff, 0x7c00, ElementType::F16), Some(1));
        // min normal (0x0400) and the largest subnormal (0x03ff)
        assert_eq!(ulp_distance(0x0400, 0x03ff, ElementType::F16), Some(1));
        // bf16 1.0 = 0x3f80, 2.0 = 0x4000: 128 values in [1, 2)
        assert_eq!(ulp_distance(0x3f80, 0x4000, ElementType::Bf16), Some(128));
        // f32 -1.0 vs 1.0: 2 * 0x3f800000
        assert_eq!(
            ulp_distance(0xbf80_0000, 0x3f80_0000, ElementType::F32),
            Some(2 * 0x3f80_0000)
        );
        // f8e4m3fn: 0x7e is 448, a normal; 0x77 is 240
        assert_eq!(ulp_distance(0x7e, 0x77, ElementType::F8E4M3Fn), Some(7));
        // NaN anywhere gives no distance
        assert_eq!(ulp_distance(0x7fc0_0000, 0, ElementType::F32), None);
        // integers: plain difference, signedness from the type
        assert_eq!(ulp_distance(0xff, 0x01, ElementType::S8), Some(2));
        assert_eq!(ulp_distance(0xff, 0x01, ElementType::U8), Some(254));
    }

    #[test]
    fn classes() {
        let f8 = ElementType::F8E4M3Fn.float_format().unwrap();
        assert_eq!(classify(0x7f, &f8), FloatClass::Nan);
        assert_eq!(classify(0xff, &f8), FloatClass::Nan);
        assert_eq!(classify(0x78, &f8), FloatClass::Normal);
        assert_eq!(classify(0x01, &f8), FloatClass::Subnormal);
        let f16 = ElementType::F16.float_format().unwrap();
        assert_eq!(classify(0xfc00, &f16), FloatClass::NegInf);
        assert_eq!(classify(0x8000, &f16), FloatClass::Zero);
    }

    #[test]
    fn steps_and_directed_rounding() {
        assert_eq!(next_up(1.0, ElementType::F16), 1.0 + 2f64.powi(-10));
        assert_eq!(next_down(1.0, ElementType::F16), 1.0 - 2f64.powi(-11));
        assert_eq!(next_up(0.0, ElementType::F16), 2f64.powi(-24));
        assert_eq!(next_up(-0.0, ElementType::F16), 2f64.powi(-24));
        assert_eq!(next_up(448.0, ElementType::F8E4M3Fn), 448.0);
        assert_eq!(round_down(0.1, ElementType::F16), 0.0999755859375);
        assert_eq!(
            round_up(0.1, ElementType::F16),
            0.0999755859375 + 2f64.powi(-14)
        );
        assert_eq!(round_up(2.0, ElementType::F16), 2.0);
    }
}
