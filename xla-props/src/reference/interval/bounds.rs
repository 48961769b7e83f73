//! Enclosures: per array element a range of values of its type and a NaN
//! flag ([`Bounds`]), of any value ([`Enclosure`]), and the order keys
//! and widening steps they are built from.

use std::collections::HashMap;

use super::super::OpError;
use crate::hlo::{ArrayShape, ElementType, FloatFormat, Opcode, Shape};
use crate::literal::{Literal, Value};

/// What a backend may legally do besides rounding once to nearest even.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Allowances {
    /// `(op, result type) -> (ulp, abs)` budgets of approximate functions.
    pub budgets: HashMap<(Opcode, ElementType), (u64, f64)>,
    /// Types whose subnormal inputs are read as zero (a flushing backend:
    /// the judge encloses with and without, and takes either).
    pub flush_inputs: Vec<ElementType>,
    /// Types whose subnormal results are written as zero (as above).
    pub flush_outputs: Vec<ElementType>,
    /// Reductions, dots and convolutions may sum in any order (and in f32
    /// for narrower types).
    pub reassociates: bool,
    /// Reduce and reduce-window of narrow floats may round every partial sum
    /// to the declared type.
    pub accumulate_in_declared_type: bool,
    /// Dot and convolution of narrow floats may round every product and
    /// partial sum to the declared type.
    pub contract_in_declared_type: bool,
    /// A float multiply may be left unrounded (contracted
    /// into a fused multiply-add with its user).
    pub contracts_multiply_add: bool,
    /// Narrow float (f16, bf16, f8) results may be kept in f32, unrounded:
    /// everywhere, or (`excess_in_fusions`) inside fused computations only.
    pub excess_anywhere: bool,
    /// See `excess_anywhere`.
    pub excess_in_fusions: bool,
}

/// The enclosure of one array: per element, `[lo, hi]` and whether NaN is
/// possible. An element whose `lo` is NaN has an empty range (NaN only).
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Lower ends, in the array's type.
    pub lo: Literal,
    /// Upper ends, in the array's type.
    pub hi: Literal,
    /// NaN is a possible value.
    pub nan: Vec<bool>,
}

/// An enclosure of any value: arrays, tuples, tokens.
#[derive(Clone, Debug, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "arrays are the common case; tuples hold them by value as `Value` does"
)]
pub enum Enclosure {
    /// An array.
    Array(Bounds),
    /// A tuple.
    Tuple(Vec<Enclosure>),
    /// A token.
    Token,
}

impl Enclosure {
    /// The arrays, tuples flattened.
    pub fn into_flat(self) -> Vec<Bounds> {
        match self {
            Enclosure::Array(b) => vec![b],
            Enclosure::Tuple(t) => t.into_iter().flat_map(Enclosure::into_flat).collect(),
            Enclosure::Token => Vec::new(),
        }
    }
    pub(super) fn point(v: &Value) -> Enclosure {
        match v {
            Value::Array(l) => Enclosure::Array(Bounds::point(l)),
            Value::Tuple(t) => Enclosure::Tuple(t.iter().map(Enclosure::point).collect()),
            Value::Token => Enclosure::Token,
        }
    }
    pub(super) fn unbounded(shape: &Shape) -> Result<Enclosure, OpError> {
        Ok(match shape {
            Shape::Array(a) => Enclosure::Array(Bounds::unbounded(a)?),
            Shape::Tuple(t) => Enclosure::Tuple(
                t.iter()
                    .map(Enclosure::unbounded)
                    .collect::<Result<_, _>>()?,
            ),
            Shape::Token => Enclosure::Token,
        })
    }
    pub(super) fn is_point(&self) -> bool {
        match self {
            Enclosure::Array(b) => b.is_point(),
            Enclosure::Tuple(t) => t.iter().all(Enclosure::is_point),
            Enclosure::Token => true,
        }
    }
    /// The value at the lower (`hi == false`) or upper ends.
    pub(super) fn end(&self, hi: bool) -> Value {
        match self {
            Enclosure::Array(b) => Value::Array(if hi { b.hi.clone() } else { b.lo.clone() }),
            Enclosure::Tuple(t) => Value::Tuple(t.iter().map(|e| e.end(hi)).collect()),
            Enclosure::Token => Value::Token,
        }
    }
    pub(super) fn hull(&self, other: &Enclosure) -> Option<Enclosure> {
        match (self, other) {
            (Enclosure::Array(a), Enclosure::Array(b)) => Some(Enclosure::Array(a.hull(b)?)),
            (Enclosure::Tuple(a), Enclosure::Tuple(b)) if a.len() == b.len() => {
                Some(Enclosure::Tuple(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| x.hull(y))
                        .collect::<Option<_>>()?,
                ))
            }
            (Enclosure::Token, Enclosure::Token) => Some(Enclosure::Token),
            _ => None,
        }
    }
}

/// The order key of an element: floats by value with `-0 < +0` (NaN has
/// none), integers by value, pred as 0/1.
pub(super) fn key(l: &Literal, i: usize) -> Option<i128> {
    let t = l.dtype();
    match t.float_format() {
        Some(fmt) => float_key(l.get_bits(i), &fmt),
        None if t.is_pred() => Some(i128::from(l.get_bits(i) & 1)),
        None => Some(l.get_i128(i)),
    }
}

pub(super) fn float_key(bits: u64, fmt: &FloatFormat) -> Option<i128> {
    let w = fmt.bit_width();
    let sign = 1u64 << (w - 1);
    let mag = bits & (sign - 1);
    let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
    let man = mag & ((1u64 << fmt.mantissa_bits) - 1);
    let is_nan = if fmt.has_inf {
        mag & exp_all == exp_all && man != 0
    } else {
        // f8e4m3fn: only the all-ones pattern is NaN
        mag == sign - 1
    };
    if is_nan {
        return None;
    }
    Some(if bits & sign != 0 {
        -(mag as i128) - 1
    } else {
        mag as i128
    })
}

pub(super) fn float_from_key(k: i128, fmt: &FloatFormat) -> u64 {
    let sign = 1u64 << (fmt.bit_width() - 1);
    if k < 0 {
        sign | ((-(k + 1)) as u64)
    } else {
        k as u64
    }
}

/// The largest key of a float type (its infinity, or its largest finite
/// value when it has none).
pub(super) fn float_max_key(fmt: &FloatFormat) -> i128 {
    let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
    if fmt.has_inf {
        exp_all as i128
    } else {
        let sign = 1u64 << (fmt.bit_width() - 1);
        (sign - 2) as i128
    }
}

pub(super) fn int_range(t: ElementType) -> (i128, i128) {
    let w = t.bit_width();
    if t.is_pred() {
        (0, 1)
    } else if t.is_signed_int() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

impl Bounds {
    /// The enclosure of exactly `l`.
    pub fn point(l: &Literal) -> Bounds {
        let nan = (0..l.element_count())
            .map(|i| key(l, i).is_none())
            .collect();
        Bounds {
            lo: l.clone(),
            hi: l.clone(),
            nan,
        }
    }

    pub(super) fn unbounded(a: &ArrayShape) -> Result<Bounds, OpError> {
        let mut lo = Literal::zeros(a)?;
        let mut hi = lo.clone();
        let n = lo.element_count();
        match a.dtype.float_format() {
            Some(fmt) => {
                let top = float_max_key(&fmt);
                for i in 0..n {
                    lo.set_bits(i, float_from_key(-top - 1, &fmt));
                    hi.set_bits(i, float_from_key(top, &fmt));
                }
            }
            None => {
                let (min, max) = int_range(a.dtype);
                for i in 0..n {
                    lo.set_i128(i, min);
                    hi.set_i128(i, max);
                }
            }
        }
        Ok(Bounds {
            lo,
            hi,
            nan: vec![a.dtype.is_float(); n],
        })
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.nan.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.nan.is_empty()
    }

    pub(super) fn is_point(&self) -> bool {
        (0..self.len()).all(|i| match (key(&self.lo, i), key(&self.hi, i)) {
            (Some(a), Some(b)) => a == b && !self.nan[i],
            (None, None) => true,
            _ => false,
        })
    }

    /// The range of element `i`, None when it is NaN only.
    pub(super) fn range(&self, i: usize) -> Option<(i128, i128)> {
        Some((key(&self.lo, i)?, key(&self.hi, i)?))
    }

    /// Whether element `i` is bounded: both ends finite (or the one value
    /// it may be is infinite), so that its range says something. An
    /// unbounded element legalizes nothing.
    pub fn is_bounded(&self, i: usize) -> bool {
        let (lo, hi) = (self.lo.get_f64(i), self.hi.get_f64(i));
        if !self.lo.dtype().is_float() {
            return true;
        }
        (lo.is_finite() && hi.is_finite()) || self.lo.get_bits(i) == self.hi.get_bits(i)
    }

    /// Whether element `i` may be the value with bit pattern `bits`.
    pub fn contains(&self, i: usize, bits: u64) -> bool {
        let t = self.lo.dtype();
        let k = match t.float_format() {
            Some(fmt) => float_key(bits, &fmt),
            None if t.is_pred() => Some(i128::from(bits & 1)),
            None => {
                let mut one = Literal::zeros(&ArrayShape::new(t, Vec::<i64>::new()))
                    .expect("a scalar of an array's type");
                one.set_bits(0, bits);
                Some(one.get_i128(0))
            }
        };
        match k {
            None => self.nan.get(i).copied().unwrap_or(false),
            Some(k) => self.range(i).is_some_and(|(a, b)| a <= k && k <= b),
        }
    }

    pub(super) fn set(&mut self, i: usize, range: Option<(i128, i128)>, nan: bool) {
        let t = self.lo.dtype();
        match (range, t.float_format()) {
            (Some((a, b)), Some(fmt)) => {
                self.lo.set_bits(i, float_from_key(a, &fmt));
                self.hi.set_bits(i, float_from_key(b, &fmt));
            }
            (Some((a, b)), None) => {
                self.lo.set_i128(i, a);
                self.hi.set_i128(i, b);
            }
            (None, Some(fmt)) => {
                let q = float_from_key(float_max_key(&fmt), &fmt) | 1;
                let nan_bits = if fmt.has_inf {
                    q | (1u64 << (fmt.mantissa_bits - 1))
                } else {
                    (1u64 << (fmt.bit_width() - 1)) - 1
                };
                self.lo.set_bits(i, nan_bits);
                self.hi.set_bits(i, nan_bits);
            }
            (None, None) => {}
        }
        self.nan[i] = nan || (range.is_none() && t.is_float());
    }

    pub(super) fn hull(&self, other: &Bounds) -> Option<Bounds> {
        if self.lo.dtype() != other.lo.dtype() || self.len() != other.len() {
            return None;
        }
        let mut out = self.clone();
        for i in 0..self.len() {
            let r = match (self.range(i), other.range(i)) {
                (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                (x, None) => x,
                (None, y) => y,
            };
            out.set(i, r, self.nan[i] || other.nan[i]);
        }
        Some(out)
    }

    /// Widens integer element `i` by `r` either side, within the type.
    pub(crate) fn widen_int(&mut self, i: usize, r: f64) {
        let t = self.lo.dtype();
        let Some((lo, hi)) = self.range(i) else {
            return;
        };
        let (min, max) = int_range(t);
        let w = if r >= 1e30 {
            i128::MAX / 4
        } else {
            r.ceil() as i128
        };
        let range = (lo.saturating_sub(w).max(min), hi.saturating_add(w).min(max));
        self.set(i, Some(range), self.nan[i]);
    }

    /// Makes element `i` unbounded.
    pub(crate) fn unbound(&mut self, i: usize) {
        let t = self.lo.dtype();
        let range = match t.float_format() {
            Some(fmt) => {
                let top = float_max_key(&fmt);
                (-top - 1, top)
            }
            None => int_range(t),
        };
        self.set(i, Some(range), t.is_float());
    }
}

impl Bounds {
    pub(super) fn nan_bits(t: ElementType) -> u64 {
        match t.float_format() {
            Some(fmt) if fmt.has_inf => {
                let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
                exp_all | (1u64 << (fmt.mantissa_bits - 1))
            }
            Some(fmt) => (1u64 << (fmt.bit_width() - 1)) - 1,
            None => 0,
        }
    }
}

/// The operands' enclosures when every one is an array.
pub(super) fn arrays_of<'e>(ops: &[&'e Enclosure]) -> Option<Vec<&'e Bounds>> {
    ops.iter()
        .map(|o| match o {
            Enclosure::Array(b) => Some(b),
            _ => None,
        })
        .collect()
}

/// The key of `x` rounded to nearest even in `fmt` (infinities clamp to the
/// type's extremes).
pub(super) fn round_key(x: f64, fmt: &FloatFormat) -> i128 {
    let bits = crate::literal::round_to_bits(x, fmt);
    let top = float_max_key(fmt);
    float_key(bits, fmt)
        .unwrap_or(if x < 0.0 { -top - 1 } else { top })
        .clamp(-top - 1, top)
}

/// Whether a range holds values on both sides of zero, or a zero and a
/// non-zero (where `1/x`-like ops jump).
pub(super) fn straddles_zero(b: &Bounds) -> bool {
    (0..b.len()).any(|i| match b.range(i) {
        Some((lo, hi)) => lo != hi && lo <= 0 && hi >= -1,
        None => false,
    })
}

pub(super) fn strictly_positive(b: &Bounds) -> bool {
    (0..b.len()).all(|i| match b.range(i) {
        Some((lo, hi)) => lo == hi || lo > 0,
        None => true,
    })
}

/// Steps an element's ends outward by `ulp` units and `abs` absolutely.
pub(super) fn widen_budget(b: &mut Bounds, fmt: &FloatFormat, ulp: u64, abs: f64) {
    let top = float_max_key(fmt);
    let u = ulp as i128;
    for i in 0..b.len() {
        let Some((lo, hi)) = b.range(i) else { continue };
        // -0 and +0 are one ULP apart in the keys, none in ULP distance
        let mut l = lo - u;
        if lo >= 0 && l < 0 {
            l -= 1;
        }
        let mut h = hi + u;
        if hi < 0 && h >= 0 {
            h += 1;
        }
        let (l, h) = (l.max(-top - 1), h.min(top));
        b.set(i, Some((l, h)), b.nan[i]);
        if abs > 0.0 {
            widen_abs(b, i, fmt, abs);
        }
    }
}

/// Widens element `i` by `bound` absolutely, rounded outward.
pub(crate) fn widen_abs(b: &mut Bounds, i: usize, fmt: &FloatFormat, bound: f64) {
    let Some((lo, hi)) = b.range(i) else { return };
    if bound.is_nan() || bound <= 0.0 {
        return;
    }
    let top = float_max_key(fmt);
    let lo_v = crate::literal::bits_to_f64(float_from_key(lo, fmt), fmt) - bound;
    let hi_v = crate::literal::bits_to_f64(float_from_key(hi, fmt), fmt) + bound;
    let l = if lo_v.is_finite() {
        (round_key(lo_v, fmt) - 1).max(-top - 1)
    } else {
        -top - 1
    };
    let h = if hi_v.is_finite() {
        (round_key(hi_v, fmt) + 1).min(top)
    } else {
        top
    };
    b.set(i, Some((l.min(lo), h.max(hi))), b.nan[i]);
}

/// A flushing backend: every subnormal is read (or written) as the zero of
/// its sign. That map is monotone, so it applies to the ends of a range: a
/// flushed value is zero, never a value between it and zero (a hull with
/// zero would accept a wrong value there, e.g. cbrt of a subnormal halved).
pub(super) fn flush_ends(b: &mut Bounds, fmt: &FloatFormat) {
    let min_normal =
        float_key(crate::literal::round_to_bits(fmt.min_normal(), fmt), fmt).unwrap_or(1);
    // positive subnormals have keys 1..min_normal, negative ones -2..=-min_normal
    let flush = |k: i128| {
        if (1..min_normal).contains(&k) {
            0
        } else if (-min_normal..=-2).contains(&k) {
            -1
        } else {
            k
        }
    };
    for i in 0..b.len() {
        let Some((lo, hi)) = b.range(i) else { continue };
        b.set(i, Some((flush(lo), flush(hi))), b.nan[i]);
    }
}
