//! `ErrorSpec`: how far an actual element may be from the expected one.

use super::ulp::{classify, ulp_distance, FloatClass};
use crate::hlo::ElementType;

/// How far an actual element may lie from the expected (reference) element.
///
/// An element is accepted when it is within `abs` absolute error, OR within
/// `rel` relative error (of the expected value), OR within `ulp` units in the
/// last place. Three rules hold whatever the bounds:
///
/// - NaN equals NaN by class (sign and payload are not compared), and NaN
///   never equals a number;
/// - infinities are exact: `+inf` only matches `+inf`, and a finite value never
///   matches an infinity (no "replace inf with max" as XLA's tests do);
/// - with `strict_signed_zeros`, `+0` and `-0` differ.
///
/// ```
/// use xla_props::check::ErrorSpec;
/// use xla_props::hlo::ElementType;
/// let spec = ErrorSpec::exact().with_ulp(1);
/// // f16 1.0 (0x3c00) vs the next value up (0x3c01): 1 ULP, accepted
/// assert!(spec.accepts(0x3c00, 0x3c01, ElementType::F16));
/// // +0 vs -0 is a mismatch under strict signed zeros
/// assert!(!spec.accepts(0x0000, 0x8000, ElementType::F16));
/// // NaNs of different payloads and signs are equal by class
/// assert!(spec.accepts(0x7e00, 0xfe01, ElementType::F16));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ErrorSpec {
    /// Absolute error bound (`|actual - expected| <= abs`).
    pub abs: f64,
    /// Relative error bound (`|actual - expected| <= rel * |expected|`).
    pub rel: f64,
    /// Bound in units in the last place of the element type.
    pub ulp: u64,
    /// Whether `+0` and `-0` differ.
    pub strict_signed_zeros: bool,
}

impl Default for ErrorSpec {
    fn default() -> Self {
        ErrorSpec::exact()
    }
}

/// Why one element was judged as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElementFailure {
    /// One side is NaN and the other is not.
    NanClass,
    /// One side is an infinity and the other is a different infinity or finite.
    Infinity,
    /// `+0` against `-0` under strict signed zeros.
    SignedZero,
    /// Both finite, but farther apart than every bound allows.
    OutOfTolerance,
}

impl ElementFailure {
    /// A short lowercase description.
    pub fn describe(self) -> &'static str {
        match self {
            ElementFailure::NanClass => "nan against a number",
            ElementFailure::Infinity => "infinity not matched exactly",
            ElementFailure::SignedZero => "sign of zero differs",
            ElementFailure::OutOfTolerance => "outside the error spec",
        }
    }
}

/// The judgement of one element under an [`ErrorSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementCheck {
    /// Bit-identical, or equal by the rules (NaN class; zeros when not strict).
    Equal,
    /// Different but inside the bounds.
    Within,
    /// Outside.
    Fails(ElementFailure),
}

impl ErrorSpec {
    /// No error allowed; signed zeros strict.
    pub const EXACT: ErrorSpec = ErrorSpec {
        abs: 0.0,
        rel: 0.0,
        ulp: 0,
        strict_signed_zeros: true,
    };

    /// No error allowed; signed zeros strict.
    pub const fn exact() -> ErrorSpec {
        ErrorSpec::EXACT
    }
    /// The same spec with this absolute bound.
    pub const fn with_abs(mut self, abs: f64) -> ErrorSpec {
        self.abs = abs;
        self
    }
    /// The same spec with this relative bound.
    pub const fn with_rel(mut self, rel: f64) -> ErrorSpec {
        self.rel = rel;
        self
    }
    /// The same spec with this ULP bound.
    pub const fn with_ulp(mut self, ulp: u64) -> ErrorSpec {
        self.ulp = ulp;
        self
    }
    /// The same spec with `+0 == -0`.
    pub const fn lenient_signed_zeros(mut self) -> ErrorSpec {
        self.strict_signed_zeros = false;
        self
    }
    /// The loosest of two specs, bound by bound (strict zeros only if both are).
    pub fn loosest(self, other: ErrorSpec) -> ErrorSpec {
        ErrorSpec {
            abs: self.abs.max(other.abs),
            rel: self.rel.max(other.rel),
            ulp: self.ulp.max(other.ulp),
            strict_signed_zeros: self.strict_signed_zeros && other.strict_signed_zeros,
        }
    }

    /// True when `actual` is acceptable for `expected` (bit patterns of `dtype`).
    pub fn accepts(&self, expected: u64, actual: u64, dtype: ElementType) -> bool {
        !matches!(self.check(expected, actual, dtype), ElementCheck::Fails(_))
    }

    /// Judges one element given as bit patterns of `dtype`.
    pub fn check(&self, expected: u64, actual: u64, dtype: ElementType) -> ElementCheck {
        let Some(fmt) = dtype.float_format() else {
            if expected == actual {
                return ElementCheck::Equal;
            }
            let d = ulp_distance(expected, actual, dtype).unwrap_or(u128::MAX);
            let within = d <= self.ulp as u128 || (d as f64) <= self.abs;
            return if within {
                ElementCheck::Within
            } else {
                ElementCheck::Fails(ElementFailure::OutOfTolerance)
            };
        };
        let ce = classify(expected, &fmt);
        let ca = classify(actual, &fmt);
        match (ce, ca) {
            (FloatClass::Nan, FloatClass::Nan) => return ElementCheck::Equal,
            (FloatClass::Nan, _) | (_, FloatClass::Nan) => {
                return ElementCheck::Fails(ElementFailure::NanClass)
            }
            (FloatClass::PosInf | FloatClass::NegInf, _)
            | (_, FloatClass::PosInf | FloatClass::NegInf) => {
                return if ce == ca {
                    ElementCheck::Equal
                } else {
                    ElementCheck::Fails(ElementFailure::Infinity)
                };
            }
            (FloatClass::Zero, FloatClass::Zero) => {
                return if expected == actual || !self.strict_signed_zeros {
                    ElementCheck::Equal
                } else {
                    ElementCheck::Fails(ElementFailure::SignedZero)
                };
            }
            _ => {}
        }
        if expected == actual {
            return ElementCheck::Equal;
        }
        let e = crate::literal::bits_to_f64(expected, &fmt);
        let a = crate::literal::bits_to_f64(actual, &fmt);
        let err = (a - e).abs();
        let ulps = ulp_distance(expected, actual, dtype).unwrap_or(u128::MAX);
        if err <= self.abs || err <= self.rel * e.abs() || ulps <= self.ulp as u128 {
            ElementCheck::Within
        } else {
            ElementCheck::Fails(ElementFailure::OutOfTolerance)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType::*;

    #[test]
    fn signed_zeros_strict_and_lenient() {
        let strict = ErrorSpec::exact();
        assert_eq!(
            strict.check(0x0000, 0x8000, F16),
            ElementCheck::Fails(ElementFailure::SignedZero)
        );
        assert_eq!(
            strict.lenient_signed_zeros().check(0x0000, 0x8000, F16),
            ElementCheck::Equal
        );
        // a large abs bound does not excuse the sign of zero
        assert!(!strict.with_abs(1.0).accepts(0x8000, 0x0000, F16));
    }

    #[test]
    fn nan_by_class() {
        let s = ErrorSpec::exact();
        // f32 quiet NaN vs negative signalling-looking NaN
        assert_eq!(s.check(0x7fc0_0000, 0xff80_0001, F32), ElementCheck::Equal);
        assert_eq!(
            s.with_abs(f64::INFINITY)
                .check(0x7fc0_0000, 0x3f80_0000, F32),
            ElementCheck::Fails(ElementFailure::NanClass)
        );
        // f8e4m3fn: 0x7f and 0xff are its two NaNs
        assert_eq!(s.check(0x7f, 0xff, F8E4M3Fn), ElementCheck::Equal);
    }

    #[test]
    fn infinities_exact() {
        let loose = ErrorSpec::exact().with_rel(1.0).with_ulp(1000);
        // f16 max (0x7bff) vs +inf (0x7c00) is 1 ULP but never accepted
        assert_eq!(
            loose.check(0x7c00, 0x7bff, F16),
            ElementCheck::Fails(ElementFailure::Infinity)
        );
        assert_eq!(
            loose.check(0x7c00, 0xfc00, F16),
            ElementCheck::Fails(ElementFailure::Infinity)
        );
        assert_eq!(loose.check(0xfc00, 0xfc00, F16), ElementCheck::Equal);
    }

    #[test]
    fn bounds_are_alternatives() {
        // expected 1.0, actual 1.0 + 2^-9 (2 ULP in f16)
        let (e, a) = (0x3c00, 0x3c02);
        assert!(!ErrorSpec::exact().with_ulp(1).accepts(e, a, F16));
        assert!(ErrorSpec::exact().with_ulp(2).accepts(e, a, F16));
        // relative error 2^-9 = 0.001953125
        assert!(ErrorSpec::exact().with_rel(0.002).accepts(e, a, F16));
        assert!(!ErrorSpec::exact().with_rel(0.0019).accepts(e, a, F16));
        assert!(ErrorSpec::exact().with_abs(0.002).accepts(e, a, F16));
        // integers: 5 vs 7 needs an ULP (difference) bound of 2
        assert!(!ErrorSpec::exact().with_ulp(1).accepts(5, 7, S32));
        assert!(ErrorSpec::exact().with_ulp(2).accepts(5, 7, S32));
    }
}
