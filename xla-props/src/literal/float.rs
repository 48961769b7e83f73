//! Exact rounding of f64 values into narrow float formats, and the f8 types.
//!
//! Every conversion here rounds ONCE, to nearest with ties to even, directly
//! from f64 (no intermediate f32 step, unlike `half::f16::from_f64`).

use crate::hlo::ElementType;
pub use crate::hlo::{bits_to_f64, round_to_bits};

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
    use crate::hlo::FloatFormat;

    fn fmt(t: ElementType) -> FloatFormat {
        t.float_format().unwrap()
    }

    /// Every non-NaN 16-bit pattern of `t` reads as `half`'s value and
    /// rounds back to itself.
    fn all_16_bit_patterns_round_trip(t: ElementType, half_value: fn(u16) -> f64) {
        let f = fmt(t);
        for b in 0..=u16::MAX as u64 {
            let v = bits_to_f64(b, &f);
            if v.is_nan() {
                continue;
            }
            assert_eq!(round_to_bits(v, &f), b, "bits {b:#x}");
            assert_eq!(v, half_value(b as u16));
        }
    }

    #[test]
    fn f16_all_bits_round_trip() {
        all_16_bit_patterns_round_trip(ElementType::F16, |b| half::f16::from_bits(b).to_f64());
    }

    #[test]
    fn bf16_all_bits_round_trip() {
        all_16_bit_patterns_round_trip(ElementType::Bf16, |b| half::bf16::from_bits(b).to_f64());
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
