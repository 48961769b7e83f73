//! Value distributions, edge-value tables and default sampling ranges.

use std::fmt;
use std::str::FromStr;

use rand::{Rng, RngExt};

use super::interval::Interval;
use crate::check::{next_down, next_up};
use crate::hlo::ElementType;
use crate::literal::round_to_type;

/// How argument values are drawn.
///
/// ```
/// use xla_props::inputs::Distribution;
/// let d: Distribution = "log-uniform".parse().unwrap();
/// assert_eq!(d, Distribution::LogUniform);
/// assert_eq!(d.to_string(), "log-uniform");
/// assert!(d.wants_finite());
/// assert!(!Distribution::EdgeValues.wants_finite());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distribution {
    /// Uniform in each parameter's legal interval.
    Uniform,
    /// Uniform over the exponent (magnitudes from the smallest normal up),
    /// with either sign where legal.
    LogUniform,
    /// Half the elements from the float edge table (±0, ±inf, NaN,
    /// subnormals, min normal, max, ±1, rounding ties of converts), half uniform.
    /// Specials ignore the legal domain: this distribution tests special values.
    EdgeValues,
    /// Half the elements from the integer edge table (MIN, MAX, 0, ±1), half uniform.
    IntegerEdges,
    /// Few distinct values, many repeats: ties for sort and compare.
    Duplicates,
    /// Like uniform, but index operands (gather, dynamic-slice) are out of
    /// range half the time, to test clamping on purpose.
    OutOfRangeIndices,
    /// Every bit pattern, in order: element `i` of a float parameter of at
    /// most 16 bits is pattern `i mod 2^bits` (a parameter of `2^bits`
    /// elements is an exhaustive sweep). Other parameters are uniform. Specials
    /// included; the legal domain is not applied.
    Exhaustive,
}

impl Distribution {
    /// Every distribution.
    pub const ALL: &'static [Distribution] = &[
        Distribution::Uniform,
        Distribution::LogUniform,
        Distribution::EdgeValues,
        Distribution::IntegerEdges,
        Distribution::Duplicates,
        Distribution::OutOfRangeIndices,
        Distribution::Exhaustive,
    ];

    /// The name used in case names.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::LogUniform => "log-uniform",
            Distribution::EdgeValues => "edge",
            Distribution::IntegerEdges => "int-edge",
            Distribution::Duplicates => "duplicates",
            Distribution::OutOfRangeIndices => "out-of-range-indices",
            Distribution::Exhaustive => "exhaustive",
        }
    }

    /// Whether generated inputs must give finite results everywhere (the
    /// edge distributions feed specials on purpose).
    pub fn wants_finite(self) -> bool {
        !matches!(
            self,
            Distribution::EdgeValues | Distribution::IntegerEdges | Distribution::Exhaustive
        )
    }

    /// Whether the legal domain is enforced by checking and resampling.
    pub fn enforces_domain(self) -> bool {
        self.wants_finite()
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for an unknown distribution name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown distribution `{0}` (expected one of: uniform, log-uniform, edge, int-edge, duplicates, out-of-range-indices, exhaustive)")]
pub struct UnknownDistribution(pub String);

impl FromStr for Distribution {
    type Err = UnknownDistribution;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Distribution::ALL
            .iter()
            .copied()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDistribution(s.to_string()))
    }
}

/// The default sampling magnitude of a float type: parameters start in
/// `[-magnitude, magnitude]` before the legal domain narrows them.
#[derive(Clone, Copy, Debug)]
pub struct DefaultRange {
    /// The type.
    pub dtype: ElementType,
    /// The magnitude.
    pub magnitude: f64,
    /// Why.
    pub reason: &'static str,
}

/// Default sampling magnitudes per float type.
pub const DEFAULT_RANGES: &[DefaultRange] = &[
    DefaultRange {
        dtype: ElementType::F8E4M3Fn,
        magnitude: 8.0,
        reason: "max is 448: a product of two values (64) stays finite",
    },
    DefaultRange {
        dtype: ElementType::F8E5M2,
        magnitude: 16.0,
        reason: "max is 57344: a product of three values (4096) stays finite",
    },
    DefaultRange {
        dtype: ElementType::F16,
        magnitude: 16.0,
        reason: "max is 65504: a product of three values (4096) stays finite",
    },
    DefaultRange {
        dtype: ElementType::Bf16,
        magnitude: 64.0,
        reason: "several binades either side of 1; chains of products rarely overflow",
    },
    DefaultRange {
        dtype: ElementType::F32,
        magnitude: 64.0,
        reason: "several binades either side of 1; chains of products rarely overflow",
    },
    DefaultRange {
        dtype: ElementType::F64,
        magnitude: 64.0,
        reason: "several binades either side of 1; chains of products rarely overflow",
    },
];

/// The starting interval of a parameter of `dtype` before domain narrowing.
pub fn default_interval(dtype: ElementType) -> Interval {
    match DEFAULT_RANGES.iter().find(|r| r.dtype == dtype) {
        Some(r) => Interval::new(-r.magnitude, r.magnitude),
        None => Interval::of_type(dtype),
    }
}

/// A float edge value, resolved per type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatEdge {
    /// `+0`.
    PosZero,
    /// `-0`.
    NegZero,
    /// `+inf` (NaN in types without infinities).
    PosInf,
    /// `-inf`.
    NegInf,
    /// A quiet NaN.
    Nan,
    /// The smallest positive subnormal.
    MinSubnormal,
    /// The smallest negative subnormal magnitude, negated.
    NegMinSubnormal,
    /// The largest subnormal.
    MaxSubnormal,
    /// The smallest normal.
    MinNormal,
    /// The largest finite value.
    Max,
    /// Its negation.
    Lowest,
    /// `1`.
    One,
    /// `-1`.
    MinusOne,
    /// The value just above 1.
    AboveOne,
}

/// The float edge table, each with its reason.
pub const FLOAT_EDGES: &[(FloatEdge, &str)] = &[
    (FloatEdge::PosZero, "identity of add; sign of zero results"),
    (FloatEdge::NegZero, "signed zero handling"),
    (FloatEdge::PosInf, "overflow propagation"),
    (FloatEdge::NegInf, "overflow propagation"),
    (FloatEdge::Nan, "NaN propagation"),
    (
        FloatEdge::MinSubnormal,
        "flush-to-zero and gradual underflow",
    ),
    (FloatEdge::NegMinSubnormal, "flush-to-zero keeps the sign"),
    (FloatEdge::MaxSubnormal, "subnormal/normal boundary"),
    (FloatEdge::MinNormal, "subnormal/normal boundary"),
    (FloatEdge::Max, "overflow boundary"),
    (FloatEdge::Lowest, "overflow boundary"),
    (FloatEdge::One, "identity of multiply"),
    (FloatEdge::MinusOne, "sign flips"),
    (
        FloatEdge::AboveOne,
        "one ULP above 1: precision of the type",
    ),
];

impl FloatEdge {
    /// Its value in `dtype`.
    pub fn value(self, dtype: ElementType) -> f64 {
        let Some(fmt) = dtype.float_format() else {
            return 0.0;
        };
        match self {
            FloatEdge::PosZero => 0.0,
            FloatEdge::NegZero => -0.0,
            FloatEdge::PosInf => f64::INFINITY,
            FloatEdge::NegInf => f64::NEG_INFINITY,
            FloatEdge::Nan => f64::NAN,
            FloatEdge::MinSubnormal => fmt.min_subnormal(),
            FloatEdge::NegMinSubnormal => -fmt.min_subnormal(),
            FloatEdge::MaxSubnormal => fmt.min_normal() - fmt.min_subnormal(),
            FloatEdge::MinNormal => fmt.min_normal(),
            FloatEdge::Max => fmt.max,
            FloatEdge::Lowest => -fmt.max,
            FloatEdge::One => 1.0,
            FloatEdge::MinusOne => -1.0,
            FloatEdge::AboveOne => next_up(1.0, dtype),
        }
    }
}

/// Exact rounding ties of converting into `target`: values of a wider type
/// exactly halfway between two `target` values (ties to even go down at
/// `1 + eps/2`, up at `1 + 3eps/2`), and for integer targets the halves.
pub fn convert_ties(target: ElementType) -> Vec<f64> {
    match target.float_format() {
        Some(fmt) => {
            let eps = fmt.epsilon();
            let max_gap = fmt.max - next_down(fmt.max, target);
            vec![
                1.0 + eps / 2.0,
                1.0 + 1.5 * eps,
                -(1.0 + eps / 2.0),
                fmt.min_subnormal() / 2.0,
                fmt.min_subnormal() * 1.5,
                fmt.max + max_gap / 2.0,
            ]
        }
        None => vec![0.5, 1.5, 2.5, -0.5, -1.5],
    }
}

/// Integer edge values of `dtype`: MIN, MIN+1, -1, 0, 1, MAX-1, MAX (those in the type).
pub fn integer_edges(dtype: ElementType) -> Vec<i128> {
    let Some((min, max)) = dtype.int_range() else {
        return Vec::new();
    };
    let mut v: Vec<i128> = [min, min + 1, -1, 0, 1, max - 1, max]
        .into_iter()
        .filter(|x| (min..=max).contains(x))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Draws one value of `dtype` uniformly from `i` (which must be non-empty and
/// representable; floats are rounded once and kept inside).
pub(crate) fn uniform(rng: &mut impl Rng, i: Interval, dtype: ElementType) -> f64 {
    if dtype.is_pred() {
        let lo = i.lo.max(0.0) as u8;
        let hi = i.hi.min(1.0) as u8;
        return rng.random_range(lo..=hi.max(lo)) as f64;
    }
    if !dtype.is_float() {
        let lo = i.lo as i128;
        let hi = i.hi as i128;
        if hi <= lo {
            return lo as f64;
        }
        let span = (hi - lo) as u128 + 1;
        let r = (rng.random::<u128>() % span) as i128;
        return (lo + r) as f64;
    }
    let r: f64 = rng.random();
    let x = i.lo + (i.hi - i.lo) * r;
    let x = if x.is_finite() {
        x
    } else {
        i.lo / 2.0 + i.hi / 2.0
    };
    clamp_into(round_to_type(x, dtype), i)
}

/// Draws one value with a uniformly distributed exponent, inside `i`.
pub(crate) fn log_uniform(rng: &mut impl Rng, i: Interval, dtype: ElementType) -> f64 {
    let Some(fmt) = dtype.float_format() else {
        return uniform(rng, i, dtype);
    };
    let tiny = fmt.min_normal();
    let neg_ok = i.lo < -tiny;
    let pos_ok = i.hi > tiny;
    let negative = match (neg_ok, pos_ok) {
        (true, true) => rng.random::<bool>(),
        (true, false) => true,
        (false, true) => false,
        (false, false) => return uniform(rng, i, dtype),
    };
    let (mlo, mhi) = if negative {
        (i.hi.min(-tiny).abs().max(tiny), -i.lo)
    } else {
        (i.lo.max(tiny), i.hi)
    };
    let (elo, ehi) = (mlo.log2(), mhi.log2());
    let e = elo + (ehi - elo) * rng.random::<f64>();
    let m = e.exp2();
    let x = if negative { -m } else { m };
    clamp_into(round_to_type(x, dtype), i)
}

fn clamp_into(x: f64, i: Interval) -> f64 {
    if x.is_nan() {
        return i.lo;
    }
    x.max(i.lo).min(i.hi)
}
