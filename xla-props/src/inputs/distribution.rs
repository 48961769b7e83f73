//! The one value distribution (the suite's cases and `compare` alike) and
//! the default sampling ranges. The edge values are in `edges.rs`.

use std::fmt;
use std::str::FromStr;

use super::interval::Interval;
use super::rng::SplitMix;
use crate::check::next_down;
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
    /// Uniform in each parameter's legal interval (a suite case: in its
    /// operands' safe ranges).
    Uniform,
    /// Every element an edge value (see `edges.rs`): the suite's `special`
    /// cases. Index-like operands stay uniform.
    Special,
    /// Each element an edge value or uniform, half the time each: the
    /// suite's `mixed` cases.
    Mixed,
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
        Distribution::Special,
        Distribution::Mixed,
        Distribution::LogUniform,
        Distribution::EdgeValues,
        Distribution::IntegerEdges,
        Distribution::Duplicates,
        Distribution::OutOfRangeIndices,
        Distribution::Exhaustive,
    ];

    /// The suite's distributions (its `default`/`all` group; `exhaustive`
    /// is asked for by name).
    pub const SUITE: &'static [Distribution] = &[
        Distribution::Uniform,
        Distribution::Special,
        Distribution::Mixed,
    ];

    /// Parses a distribution name (`None` when unknown).
    pub fn from_name(s: &str) -> Option<Distribution> {
        s.parse().ok()
    }

    /// Whether some elements are drawn from the edge table.
    pub fn draws_edges(self) -> bool {
        matches!(
            self,
            Distribution::Special
                | Distribution::Mixed
                | Distribution::EdgeValues
                | Distribution::IntegerEdges
        )
    }

    /// The name used in case names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Special => "special",
            Distribution::Mixed => "mixed",
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
        !(self.draws_edges() || self == Distribution::Exhaustive)
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
#[error("unknown distribution `{0}` (expected one of: uniform, special, mixed, log-uniform, edge, int-edge, duplicates, out-of-range-indices, exhaustive)")]
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

/// Draws one value of `dtype` uniformly from `i` (which must be non-empty and
/// representable; floats are rounded once and kept inside).
pub(crate) fn uniform(rng: &mut SplitMix, i: Interval, dtype: ElementType) -> f64 {
    if dtype.is_pred() {
        let lo = i.lo.max(0.0) as u8;
        let hi = i.hi.min(1.0) as u8;
        return rng.int_in(lo.into(), hi.max(lo).into()) as f64;
    }
    if !dtype.is_float() {
        let lo = i.lo as i128;
        let hi = i.hi as i128;
        return rng.int_in(lo, hi) as f64;
    }
    let r = rng.unit();
    let x = i.lo + (i.hi - i.lo) * r;
    let x = if x.is_finite() {
        x
    } else {
        i.lo / 2.0 + i.hi / 2.0
    };
    clamp_into(round_to_type(x, dtype), i)
}

/// Draws one value with a uniformly distributed exponent, inside `i`.
pub(crate) fn log_uniform(rng: &mut SplitMix, i: Interval, dtype: ElementType) -> f64 {
    let Some(fmt) = dtype.float_format() else {
        return uniform(rng, i, dtype);
    };
    let tiny = fmt.min_normal();
    let neg_ok = i.lo < -tiny;
    let pos_ok = i.hi > tiny;
    let negative = match (neg_ok, pos_ok) {
        (true, true) => rng.coin(),
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
    let e = elo + (ehi - elo) * rng.unit();
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
