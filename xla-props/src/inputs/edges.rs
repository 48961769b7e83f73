//! The one edge-value table: the float and integer values that break
//! numerics (NaN, ±inf, ±0, subnormals, the type's extremes, ±1, ...). The
//! suite's single-op cases draw from it (`special`, `mixed`), and so do the
//! whole-module generator's edge distributions (`edge`, `int-edge`).
//!
//! The order is part of the suite's inputs: a case draws an edge by index,
//! so an edge is only ever appended, and the suite's cases draw from the
//! first [`CASE_FLOAT_EDGES`] float edges (their names pin their inputs;
//! `tests/suite_inputs_digest.rs` checks it).

use crate::check::next_up;
use crate::hlo::ElementType;

/// A float edge value, resolved per type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatEdge {
    /// `+0`.
    PosZero,
    /// `-0`.
    NegZero,
    /// `1`.
    One,
    /// `-1`.
    MinusOne,
    /// The largest finite value.
    Max,
    /// Its negation.
    Lowest,
    /// The smallest normal.
    MinNormal,
    /// Its negation.
    NegMinNormal,
    /// The smallest positive subnormal.
    MinSubnormal,
    /// Its negation.
    NegMinSubnormal,
    /// `0.5`.
    Half,
    /// `-2.5`.
    MinusTwoAndAHalf,
    /// A quiet NaN.
    Nan,
    /// `+inf` (only in types with infinities).
    PosInf,
    /// `-inf` (only in types with infinities).
    NegInf,
    /// The largest subnormal.
    MaxSubnormal,
    /// The value just above 1.
    AboveOne,
}

/// The float edge table, each with its reason, in drawing order.
pub const FLOAT_EDGES: &[(FloatEdge, &str)] = &[
    (FloatEdge::PosZero, "identity of add; sign of zero results"),
    (FloatEdge::NegZero, "signed zero handling"),
    (FloatEdge::One, "identity of multiply"),
    (FloatEdge::MinusOne, "sign flips"),
    (FloatEdge::Max, "overflow boundary"),
    (FloatEdge::Lowest, "overflow boundary"),
    (FloatEdge::MinNormal, "subnormal/normal boundary"),
    (FloatEdge::NegMinNormal, "subnormal/normal boundary"),
    (
        FloatEdge::MinSubnormal,
        "flush-to-zero and gradual underflow",
    ),
    (FloatEdge::NegMinSubnormal, "flush-to-zero keeps the sign"),
    (FloatEdge::Half, "rounding of halves"),
    (FloatEdge::MinusTwoAndAHalf, "ties to even below zero"),
    (FloatEdge::Nan, "NaN propagation"),
    (FloatEdge::PosInf, "overflow propagation"),
    (FloatEdge::NegInf, "overflow propagation"),
    (FloatEdge::MaxSubnormal, "subnormal/normal boundary"),
    (
        FloatEdge::AboveOne,
        "one ULP above 1: precision of the type",
    ),
];

/// How many of [`FLOAT_EDGES`] (a prefix) the suite's single-op cases draw
/// from. Raising it changes every such case's inputs.
pub const CASE_FLOAT_EDGES: usize = 15;

impl FloatEdge {
    /// Its value in `dtype` (0 for a type without a float format).
    pub fn value(self, dtype: ElementType) -> f64 {
        let Some(fmt) = dtype.float_format() else {
            return 0.0;
        };
        match self {
            FloatEdge::PosZero => 0.0,
            FloatEdge::NegZero => -0.0,
            FloatEdge::One => 1.0,
            FloatEdge::MinusOne => -1.0,
            FloatEdge::Max => fmt.max,
            FloatEdge::Lowest => -fmt.max,
            FloatEdge::MinNormal => fmt.min_normal(),
            FloatEdge::NegMinNormal => -fmt.min_normal(),
            FloatEdge::MinSubnormal => fmt.min_subnormal(),
            FloatEdge::NegMinSubnormal => -fmt.min_subnormal(),
            FloatEdge::Half => 0.5,
            FloatEdge::MinusTwoAndAHalf => -2.5,
            FloatEdge::Nan => f64::NAN,
            FloatEdge::PosInf => f64::INFINITY,
            FloatEdge::NegInf => f64::NEG_INFINITY,
            FloatEdge::MaxSubnormal => fmt.min_normal() - fmt.min_subnormal(),
            FloatEdge::AboveOne => next_up(1.0, dtype),
        }
    }

    /// Whether `dtype` has this value (infinities only where the type has them).
    pub fn exists_in(self, dtype: ElementType) -> bool {
        let infinite = matches!(self, FloatEdge::PosInf | FloatEdge::NegInf);
        !infinite || dtype.float_format().is_some_and(|f| f.has_inf)
    }
}

/// The float edge values of `dtype` in table order, the first `count` table
/// entries (those the type has); `[0.0]` for a type without a float format.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::inputs::{float_edges, FLOAT_EDGES};
/// let f32s = float_edges(ElementType::F32, FLOAT_EDGES.len());
/// assert!(f32s.iter().any(|v| v.is_nan()) && f32s.contains(&f64::INFINITY));
/// // f8e4m3fn has no infinities
/// let f8s = float_edges(ElementType::F8E4M3Fn, FLOAT_EDGES.len());
/// assert!(f8s.iter().all(|v| !v.is_infinite()));
/// assert_eq!(f8s.len(), FLOAT_EDGES.len() - 2);
/// ```
pub fn float_edges(dtype: ElementType, count: usize) -> Vec<f64> {
    if dtype.float_format().is_none() {
        return vec![0.0];
    }
    FLOAT_EDGES
        .iter()
        .take(count)
        .filter(|(e, _)| e.exists_in(dtype))
        .map(|(e, _)| e.value(dtype))
        .collect()
}

/// An integer edge value, resolved per type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntEdge {
    /// The type's minimum.
    Min,
    /// The type's maximum.
    Max,
    /// `0`.
    Zero,
    /// `1`.
    One,
    /// One above the minimum.
    AboveMin,
    /// One below the maximum.
    BelowMax,
    /// `-1` (signed types only).
    MinusOne,
}

/// The integer edge table, each with its reason, in drawing order.
pub const INT_EDGES: &[(IntEdge, &str)] = &[
    (IntEdge::Min, "overflow of negation and division (MIN / -1)"),
    (IntEdge::Max, "overflow of addition"),
    (IntEdge::Zero, "division by zero; identity of add"),
    (IntEdge::One, "identity of multiply"),
    (IntEdge::AboveMin, "off-by-one at the bottom of the range"),
    (IntEdge::BelowMax, "off-by-one at the top of the range"),
    (
        IntEdge::MinusOne,
        "all bits set; the partner of MIN in division",
    ),
];

/// The integer edge values of `dtype` in table order (repeats kept: in u8,
/// `Min` and `Zero` are both 0), over its range (`[0, 1]` for a type that
/// has none).
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::inputs::integer_edges;
/// assert_eq!(integer_edges(ElementType::S8), vec![-128, 127, 0, 1, -127, 126, -1]);
/// assert_eq!(integer_edges(ElementType::U8), vec![0, 255, 0, 1, 1, 254]);
/// ```
pub fn integer_edges(dtype: ElementType) -> Vec<i128> {
    let (lo, hi) = dtype.int_range().unwrap_or((0, 1));
    INT_EDGES
        .iter()
        .filter_map(|(e, _)| match e {
            IntEdge::Min => Some(lo),
            IntEdge::Max => Some(hi),
            IntEdge::Zero => Some(0),
            IntEdge::One => Some(1),
            IntEdge::AboveMin => Some(lo + 1),
            IntEdge::BelowMax => Some(hi - 1),
            IntEdge::MinusOne => (lo < 0).then_some(-1),
        })
        .collect()
}
