//! Closed intervals of real values (endpoints may be infinite), with the
//! forward arithmetic the propagation needs.

use std::fmt;

use crate::check::{round_down, round_up};
use crate::hlo::ElementType;

/// A closed interval `[lo, hi]` of values; empty when `lo > hi`. NaN is never
/// inside an interval.
///
/// ```
/// use xla_props::inputs::Interval;
/// let x = Interval::new(-1.0, 2.0);
/// let y = Interval::new(3.0, 4.0);
/// assert_eq!(x - y, Interval::new(-5.0, -1.0));
/// assert_eq!(x * y, Interval::new(-4.0, 8.0));
/// assert!(x.intersect(y).is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower bound (may be `-inf`).
    pub lo: f64,
    /// Upper bound (may be `+inf`).
    pub hi: f64,
}

impl serde::Serialize for Interval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        fn bound(x: f64) -> serde_json::Value {
            if x.is_finite() {
                serde_json::json!(x)
            } else if x > 0.0 {
                serde_json::json!("inf")
            } else {
                serde_json::json!("-inf")
            }
        }
        let mut st = s.serialize_struct("Interval", 2)?;
        st.serialize_field("lo", &bound(self.lo))?;
        st.serialize_field("hi", &bound(self.hi))?;
        st.end()
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            f.write_str("[]")
        } else {
            write!(f, "[{}, {}]", self.lo, self.hi)
        }
    }
}

fn min4(a: f64, b: f64, c: f64, d: f64) -> f64 {
    a.min(b).min(c).min(d)
}
fn max4(a: f64, b: f64, c: f64, d: f64) -> f64 {
    a.max(b).max(c).max(d)
}

/// `a * b` where `0 * inf` counts as 0 (the limit of finite products inside the intervals).
/// `a / b`, with an infinite quotient of infinities counted as 0 (as
/// `a * (1 / b)` with `0 * inf = 0`).
fn div0(a: f64, b: f64) -> f64 {
    if a.is_infinite() && b.is_infinite() {
        0.0
    } else {
        a / b
    }
}

fn mul0(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        0.0
    } else {
        a * b
    }
}

impl Interval {
    /// Every real value.
    pub const ALL: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };
    /// The empty interval.
    pub const EMPTY: Interval = Interval {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
    };

    /// `[lo, hi]`.
    pub const fn new(lo: f64, hi: f64) -> Interval {
        Interval { lo, hi }
    }
    /// `[x, x]`.
    pub const fn point(x: f64) -> Interval {
        Interval { lo: x, hi: x }
    }
    /// `[lo, +inf)`.
    pub const fn at_least(lo: f64) -> Interval {
        Interval {
            lo,
            hi: f64::INFINITY,
        }
    }
    /// `(-inf, hi]`.
    pub const fn at_most(hi: f64) -> Interval {
        Interval {
            lo: f64::NEG_INFINITY,
            hi,
        }
    }
    /// True when no value is inside.
    pub fn is_empty(&self) -> bool {
        self.lo
            .partial_cmp(&self.hi)
            .is_none_or(|o| o == std::cmp::Ordering::Greater)
    }
    /// True when `x` is inside.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
    /// True when every value of `other` is inside `self`.
    pub fn contains_interval(&self, other: Interval) -> bool {
        other.is_empty() || (self.lo <= other.lo && other.hi <= self.hi)
    }
    /// Both bounds finite.
    pub fn is_bounded(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }
    /// The intersection.
    pub fn intersect(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.min(o.hi))
    }
    /// The smallest interval holding both.
    pub fn hull(self, o: Interval) -> Interval {
        if self.is_empty() {
            return o;
        }
        if o.is_empty() {
            return self;
        }
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }
    /// `hi - lo`.
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
    /// `-x`.
    pub fn negated(self) -> Interval {
        Interval::new(-self.hi, -self.lo)
    }
    /// `x + y`.
    pub fn plus(self, o: Interval) -> Interval {
        if self.is_empty() || o.is_empty() {
            return Interval::EMPTY;
        }
        Interval::new(self.lo + o.lo, self.hi + o.hi).nan_to_all()
    }
    /// `x - y`.
    pub fn minus(self, o: Interval) -> Interval {
        self.plus(o.negated())
    }
    /// `x * y`.
    pub fn times(self, o: Interval) -> Interval {
        if self.is_empty() || o.is_empty() {
            return Interval::EMPTY;
        }
        self.corners(o, mul0)
    }
    /// `x * x` (tighter than `mul` with itself: never negative).
    pub fn square(self) -> Interval {
        if self.is_empty() {
            return self;
        }
        let m = self.lo.abs().max(self.hi.abs());
        let lo = if self.contains(0.0) {
            0.0
        } else {
            self.lo.abs().min(self.hi.abs()).powi(2)
        };
        Interval::new(lo, m * m)
    }
    /// `x / y`; everything when `y` contains 0.
    pub fn over(self, o: Interval) -> Interval {
        if self.is_empty() || o.is_empty() {
            return Interval::EMPTY;
        }
        if o.contains(0.0) {
            return Interval::ALL;
        }
        // each corner one correctly rounded division (monotone: a value of
        // the type inside the exact quotient's range stays inside), not a
        // product with a rounded reciprocal, which put pi/pi at 1 - 2^-53
        // and shut out the operand's own bound 1 (complex64 atan)
        self.corners(o, div0)
    }
    /// The hull of `f` at the four corners of `self` by `o` (for an `f`
    /// monotone in each argument over the two).
    fn corners(self, o: Interval, f: fn(f64, f64) -> f64) -> Interval {
        let (a, b, c, d) = (
            f(self.lo, o.lo),
            f(self.lo, o.hi),
            f(self.hi, o.lo),
            f(self.hi, o.hi),
        );
        Interval::new(min4(a, b, c, d), max4(a, b, c, d))
    }
    /// `n * x` for a count `n`.
    pub fn scale(self, n: f64) -> Interval {
        self.times(Interval::point(n))
    }
    /// `max(x, y)`.
    pub fn max(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }
    /// `min(x, y)`.
    pub fn min(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }
    /// `|x|`.
    pub fn abs(self) -> Interval {
        if self.is_empty() {
            return self;
        }
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.negated()
        } else {
            Interval::new(0.0, (-self.lo).max(self.hi))
        }
    }
    /// `f(x)` for a nondecreasing `f`, with `x` first clipped to `f`'s domain.
    pub fn monotone(self, domain: Interval, f: impl Fn(f64) -> f64) -> Interval {
        let x = self.intersect(domain);
        if x.is_empty() {
            return Interval::EMPTY;
        }
        Interval::new(f(x.lo), f(x.hi)).nan_to_all()
    }
    /// `f(x)` for a nonincreasing `f`, with `x` first clipped to `f`'s domain.
    pub fn antitone(self, domain: Interval, f: impl Fn(f64) -> f64) -> Interval {
        let x = self.intersect(domain);
        if x.is_empty() {
            return Interval::EMPTY;
        }
        Interval::new(f(x.hi), f(x.lo)).nan_to_all()
    }
    fn nan_to_all(self) -> Interval {
        Interval::new(
            if self.lo.is_nan() {
                f64::NEG_INFINITY
            } else {
                self.lo
            },
            if self.hi.is_nan() {
                f64::INFINITY
            } else {
                self.hi
            },
        )
    }
    /// Widened outward to values representable in `dtype` (floats round
    /// outward, integers to whole numbers in the type's range).
    pub fn round_outward(self, dtype: ElementType) -> Interval {
        if self.is_empty() {
            return self;
        }
        if let Some(fmt) = dtype.float_format() {
            // beyond the largest finite value the result may be inf (or NaN
            // in types without infinities): the bound becomes infinite
            let lo = if self.lo < -fmt.max {
                f64::NEG_INFINITY
            } else {
                round_down(self.lo, dtype)
            };
            let hi = if self.hi > fmt.max {
                f64::INFINITY
            } else {
                round_up(self.hi, dtype)
            };
            return Interval::new(lo, hi);
        }
        match dtype.int_range() {
            Some((min, max)) => Interval::new(
                self.lo.floor().max(min as f64),
                self.hi.ceil().min(max as f64),
            ),
            None => self,
        }
    }
    /// Shrunk inward to values representable in `dtype`.
    pub fn round_inward(self, dtype: ElementType) -> Interval {
        if self.is_empty() {
            return self;
        }
        if dtype.is_float() {
            return Interval::new(round_up(self.lo, dtype), round_down(self.hi, dtype));
        }
        match dtype.int_range() {
            Some((min, max)) => Interval::new(
                self.lo.ceil().max(min as f64),
                self.hi.floor().min(max as f64),
            ),
            None => self,
        }
    }
    /// Every value of `dtype` (floats: including infinities).
    pub fn of_type(dtype: ElementType) -> Interval {
        if let Some(fmt) = dtype.float_format() {
            if fmt.has_inf {
                Interval::ALL
            } else {
                Interval::new(-fmt.max, fmt.max)
            }
        } else {
            match dtype.int_range() {
                Some((a, b)) => Interval::new(a as f64, b as f64),
                None => Interval::ALL,
            }
        }
    }
    /// The finite values of `dtype`.
    pub fn finite_of_type(dtype: ElementType) -> Interval {
        match dtype.float_format() {
            Some(fmt) => Interval::new(-fmt.max, fmt.max),
            None => Interval::of_type(dtype),
        }
    }
}

macro_rules! interval_op {
    ($trait:ident, $method:ident, $inherent:ident) => {
        impl std::ops::$trait for Interval {
            type Output = Interval;
            fn $method(self, o: Interval) -> Interval {
                self.$inherent(o)
            }
        }
    };
}
interval_op!(Add, add, plus);
interval_op!(Sub, sub, minus);
interval_op!(Mul, mul, times);
interval_op!(Div, div, over);

impl std::ops::Neg for Interval {
    type Output = Interval;
    fn neg(self) -> Interval {
        self.negated()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_by_hand() {
        let a = Interval::new(-2.0, 3.0);
        assert_eq!(a.square(), Interval::new(0.0, 9.0));
        assert_eq!(Interval::new(2.0, 3.0).square(), Interval::new(4.0, 9.0));
        assert_eq!(a.abs(), Interval::new(0.0, 3.0));
        assert_eq!(
            Interval::new(1.0, 2.0).over(Interval::new(4.0, 8.0)),
            Interval::new(0.125, 0.5)
        );
        assert_eq!(Interval::new(1.0, 2.0).over(a), Interval::ALL);
        // pi32 / pi32 is 1, not 1 - 2^-53 (a product with the rounded 1 / pi32)
        let pi = Interval::point(f64::from(std::f32::consts::PI));
        assert_eq!(
            Interval::new(-3.0, 1.0).times(pi).over(pi),
            Interval::new(-3.0, 1.0)
        );
        // 0 * inf counts as 0
        assert_eq!(
            Interval::new(0.0, 1.0).times(Interval::at_least(1.0)),
            Interval::new(0.0, f64::INFINITY)
        );
        assert_eq!(
            Interval::new(-1.0, 4.0).monotone(Interval::at_least(0.0), f64::sqrt),
            Interval::new(0.0, 2.0)
        );
    }

    #[test]
    fn rounding_directions() {
        let x = Interval::new(0.1, 0.1);
        let out = x.round_outward(ElementType::F16);
        assert!(out.lo < 0.1 && out.hi > 0.1);
        assert!(x.round_inward(ElementType::F16).is_empty());
        assert_eq!(
            Interval::new(-3.5, 300.2).round_inward(ElementType::U8),
            Interval::new(0.0, 255.0)
        );
    }
}
