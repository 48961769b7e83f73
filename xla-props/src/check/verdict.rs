//! `Verdict`: the outcome of comparing a backend against the reference, and the
//! report that a mismatch carries.

use std::collections::BTreeMap;
use std::fmt;

use super::error_spec::ElementFailure;
use crate::hlo::ElementType;
use crate::literal::Fingerprint;

/// A fingerprint in JSON: its 16 bytes in hex, and its lanes in words.
fn serialize_fingerprint<S: serde::Serializer>(fp: &Fingerprint, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let hex: String = fp.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let mut st = s.serialize_struct("Fingerprint", 2)?;
    st.serialize_field("hex", &hex)?;
    st.serialize_field("summary", &fp.to_string())?;
    st.end()
}

/// The outcome of one differential comparison.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every element agrees, exactly or by a legal difference (counted by reason).
    Agree(Agreement),
    /// Some element differs illegally.
    Mismatch(Box<MismatchReport>),
    /// The two sides returned outputs of different number, type or dims.
    ShapeMismatch {
        /// What differs, in words.
        detail: String,
    },
    /// One side failed and the other did not: itself a bug report.
    OnlyOneFailed {
        /// Which side failed.
        failed: Side,
        /// Its error.
        error: String,
    },
    /// Both sides failed with the same error.
    BothFailedAlike {
        /// The error.
        error: String,
    },
    /// Both sides failed, differently.
    BothFailedDifferently {
        /// The reference's error.
        expected_error: String,
        /// The backend's error.
        actual_error: String,
    },
    /// A mismatch that the backend's known bugs explain: every differing
    /// element matches the exact result, a legal alternative or a known bug's
    /// model (`check::KnownBug`). Reported as an expected failure.
    KnownBug {
        /// The bugs whose models explain it.
        bugs: Vec<super::KnownBugNote>,
        /// The mismatch against the exact reference.
        mismatch: Box<MismatchReport>,
    },
    /// The backend failed to compile a valid module that one of its known
    /// bugs says it rejects (`check::BugModel::Rejects`). Reported as an
    /// expected failure naming the bug.
    KnownRejection {
        /// The bugs that declare the rejection.
        bugs: Vec<super::KnownBugNote>,
        /// The backend's error.
        error: String,
    },
    /// Not judged (an unsupported op or dtype, a precondition the case lacks).
    Skipped {
        /// Why.
        reason: String,
    },
}

impl Verdict {
    /// Whether the judge rejected element `element` (flat) of output
    /// `output`: false for every element of a verdict that is no value
    /// mismatch.
    pub fn rejects(&self, output: usize, element: usize) -> bool {
        let report = match self {
            Verdict::Mismatch(r) => r,
            Verdict::KnownBug { mismatch, .. } => mismatch,
            _ => return false,
        };
        report
            .outputs
            .iter()
            .find(|o| o.output == output)
            .is_some_and(|o| o.rejected.binary_search(&element).is_ok())
    }
    /// True for [`Verdict::Agree`] and both-failed-alike.
    pub fn is_agreement(&self) -> bool {
        matches!(self, Verdict::Agree(_) | Verdict::BothFailedAlike { .. })
    }
    /// True for outcomes that indicate a bug on one side (both sides failing,
    /// even with different messages, more likely means the program is invalid).
    pub fn is_disagreement(&self) -> bool {
        matches!(
            self,
            Verdict::Mismatch(_) | Verdict::ShapeMismatch { .. } | Verdict::OnlyOneFailed { .. }
        )
    }
}

/// The side of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The reference (expected).
    Reference,
    /// The backend under test (actual).
    Backend,
}

/// Why an element that is not bit-identical was accepted: the property's
/// error spec, or one entry of the registry of legal differences
/// (`check::legal`), named the same way in every report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegalReason {
    /// Within the property's `ErrorSpec`.
    WithinErrorSpec,
    /// A subnormal result written as zero by a backend that flushes outputs.
    FlushedSubnormalOutput,
    /// Matches the reference evaluated on flushed inputs.
    FlushedInputs,
    /// Within the budget of an approximate function the backend declares.
    ApproximateFunction,
    /// Within the reassociation bound `n * eps * sum|x|`.
    Reassociation,
    /// Matches the reference without rounding of fused intermediates.
    ExcessPrecision,
    /// Matches the reference computed in f32 wherever the module declares a
    /// narrower float (`xla_allow_excess_precision`).
    ExcessPrecisionAnywhere,
    /// Matches the reference with multiply-adds contracted into one rounding.
    Fma,
    /// Matches the reference with NaN-dropping minimum/maximum.
    FastMinMax,
    /// Matches the reference with reduce-precision on the operand's own bits.
    ReducePrecisionInOwnType,
    /// Matches the reference with convolution padding multiplied by the kernel.
    ConvolutionPadding,
    /// A float -> integer conversion of NaN or of an out-of-range value,
    /// whose result the specification leaves open (any value).
    UnspecifiedConversion,
    /// Matches the reference with the backend's declared op semantics together.
    OpSemantics,
    /// Equal once the carried values of an unstable sort are compared per tie run.
    UnstableSort,
    /// Inside the enclosure of every legal value, carried through the graph
    /// from each op's declared error (`reference::enclose`).
    PropagatedBound,
    /// Between the reference's output and the output of a witness run: the
    /// reference run again with every instruction's result moved within
    /// its declared numerics (`reference::witness_bounds`), where the
    /// propagated bound lost the cancellations of correlated errors.
    Witnessed,
    /// Every unit (fusion or top-level instruction) agrees within its
    /// declared numerics on the reference's own operands, and the
    /// certificate explains the deviation: every unit is legal on its own
    /// operands in the backend's own run, or their measured errors carried
    /// through the graph bound it (`isolate::Certificate`).
    Amplified,
    /// Matches a known bug's model (the verdict is then `KnownBug`, an xfail).
    KnownBug,
    /// Matches another alternative expected result the caller passed.
    Alternative,
}

impl LegalReason {
    /// Every reason, in report order.
    pub const ALL: [LegalReason; 19] = [
        LegalReason::WithinErrorSpec,
        LegalReason::FlushedSubnormalOutput,
        LegalReason::FlushedInputs,
        LegalReason::ApproximateFunction,
        LegalReason::Reassociation,
        LegalReason::ExcessPrecision,
        LegalReason::ExcessPrecisionAnywhere,
        LegalReason::Fma,
        LegalReason::FastMinMax,
        LegalReason::ReducePrecisionInOwnType,
        LegalReason::ConvolutionPadding,
        LegalReason::UnspecifiedConversion,
        LegalReason::OpSemantics,
        LegalReason::UnstableSort,
        LegalReason::PropagatedBound,
        LegalReason::Witnessed,
        LegalReason::Amplified,
        LegalReason::KnownBug,
        LegalReason::Alternative,
    ];

    /// The short name reports use (`fma`, `propagated-bound`).
    pub fn name(self) -> &'static str {
        match self {
            LegalReason::WithinErrorSpec => "error-spec",
            LegalReason::FlushedSubnormalOutput => "flushed-output",
            LegalReason::FlushedInputs => "flushed-inputs",
            LegalReason::ApproximateFunction => "approximate-function",
            LegalReason::Reassociation => "reassociation",
            LegalReason::ExcessPrecision => "excess-precision-in-fusions",
            LegalReason::ExcessPrecisionAnywhere => "excess-precision-anywhere",
            LegalReason::Fma => "fma",
            LegalReason::FastMinMax => "fast-min-max",
            LegalReason::ReducePrecisionInOwnType => "reduce-precision-in-own-type",
            LegalReason::ConvolutionPadding => "convolution-padding",
            LegalReason::UnspecifiedConversion => "unspecified-conversion",
            LegalReason::OpSemantics => "op-semantics",
            LegalReason::UnstableSort => "unstable-sort",
            LegalReason::PropagatedBound => "propagated-bound",
            LegalReason::Witnessed => "witnessed",
            LegalReason::Amplified => "amplified",
            LegalReason::KnownBug => "known-bug",
            LegalReason::Alternative => "alternative",
        }
    }

    /// A short lowercase description.
    pub fn describe(self) -> &'static str {
        match self {
            LegalReason::WithinErrorSpec => "within the error spec",
            LegalReason::FlushedSubnormalOutput => "subnormal result flushed to zero",
            LegalReason::FlushedInputs => "matches the reference on flushed inputs",
            LegalReason::ApproximateFunction => "within an approximate function's budget",
            LegalReason::Reassociation => "within the reassociation bound",
            LegalReason::ExcessPrecision => "matches the reference without intermediate rounding",
            LegalReason::ExcessPrecisionAnywhere => "matches the reference computed in f32",
            LegalReason::Fma => "matches the reference with fused multiply-adds (fma)",
            LegalReason::FastMinMax => "matches NaN-dropping min/max",
            LegalReason::ReducePrecisionInOwnType => "matches reduce-precision in its own type",
            LegalReason::ConvolutionPadding => "matches multiplied convolution padding",
            LegalReason::UnspecifiedConversion => {
                "an unspecified conversion (NaN or out of the integer range)"
            }
            LegalReason::OpSemantics => "matches the backend's declared op semantics",
            LegalReason::UnstableSort => "equal up to the order of sort ties",
            LegalReason::PropagatedBound => "inside the bound propagated through the graph",
            LegalReason::Witnessed => {
                "reached by a run with every instruction moved within its declared numerics"
            }
            LegalReason::Amplified => {
                "amplified (every unit agrees, and the certificate of local agreement explains it)"
            }
            LegalReason::KnownBug => "matches a known bug's model",
            LegalReason::Alternative => "matches an alternative expected result",
        }
    }
}

/// What an agreement consisted of.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Agreement {
    /// Elements compared.
    pub elements: u64,
    /// Elements equal bit for bit (or by the NaN/zero rules).
    pub exact: u64,
    /// Elements accepted by a legal difference, by reason.
    pub legal: BTreeMap<LegalReason, u64>,
    /// The largest ULP distance among accepted float elements.
    pub max_ulp: u64,
}

/// An element's position: flat (row-major) and per dimension.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ElementIndex {
    /// Row-major flat index.
    pub flat: usize,
    /// Index per dimension.
    pub multi: Vec<usize>,
}

impl ElementIndex {
    /// The index of flat element `flat` in an array of `dims`.
    pub fn new(flat: usize, dims: &[usize]) -> ElementIndex {
        let mut multi = vec![0; dims.len()];
        let mut rest = flat;
        for (k, &d) in dims.iter().enumerate().rev() {
            if d > 0 {
                multi[k] = rest % d;
                rest /= d;
            }
        }
        ElementIndex { flat, multi }
    }
}

impl fmt::Display for ElementIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        crate::hlo::write_separated(f, &self.multi, ",")?;
        write!(f, "] (flat {})", self.flat)
    }
}

/// One element's value, readable and exact.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ElementValue {
    /// The value in decimal (`nan`, `inf`, `-0` spelled out).
    pub value: String,
    /// Its bit pattern in hex.
    pub bits: String,
}

impl ElementValue {
    /// From a bit pattern and its value.
    pub fn new(bits: u64, value: f64, dtype: ElementType) -> ElementValue {
        let digits = (dtype.bit_width() as usize).div_ceil(4);
        let text = if value.is_nan() {
            "nan".to_string()
        } else if value.is_infinite() {
            if value > 0.0 { "inf" } else { "-inf" }.to_string()
        } else if dtype.is_float() {
            format!("{value:e}")
        } else {
            format!("{value}")
        };
        ElementValue {
            value: text,
            bits: format!("0x{bits:0digits$x}"),
        }
    }
}

impl fmt::Display for ElementValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.value, self.bits)
    }
}

/// One mismatching element.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ElementMismatch {
    /// Where.
    pub index: ElementIndex,
    /// The reference's value.
    pub expected: ElementValue,
    /// The backend's value.
    pub actual: ElementValue,
    /// ULP distance (None when a NaN is involved).
    pub ulp: Option<u64>,
    /// `|actual - expected|` (None when not finite).
    pub abs_error: Option<f64>,
    /// What rule it broke.
    pub failure: ElementFailure,
    /// The inputs at this index, when the computation is elementwise.
    pub inputs: Vec<ElementValue>,
    /// The enclosure of every legal value at this index that the actual
    /// value is outside (when the judge computed one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<ElementBound>,
}

/// The enclosure of one element: `[lo, hi]`, and whether NaN is legal.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ElementBound {
    /// Its lowest legal value.
    pub lo: ElementValue,
    /// Its highest legal value.
    pub hi: ElementValue,
    /// NaN is legal.
    pub nan: bool,
    /// Both ends are finite (or it is one value): an unbounded enclosure
    /// legalizes nothing.
    pub bounded: bool,
}

impl fmt::Display for ElementBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.bounded {
            return f.write_str("(none: the enclosure is unbounded here, so it legalizes nothing)");
        }
        write!(f, "[{}, {}]", self.lo, self.hi)?;
        if self.nan {
            f.write_str(" or nan")?;
        }
        Ok(())
    }
}

/// One bucket of the ULP histogram.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HistogramBucket {
    /// `0`, `1`, `2`, `3-4`, `5-8`, ... or `nan/inf` for class differences.
    pub ulp: String,
    /// Elements in it.
    pub count: u64,
}

/// The mismatches of one output.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OutputMismatch {
    /// Which output (tuples flattened).
    pub output: usize,
    /// Its element type.
    pub dtype: ElementType,
    /// Its dims.
    pub dims: Vec<usize>,
    /// Elements compared.
    pub elements: u64,
    /// Elements that mismatch.
    pub count: u64,
    /// The first mismatching element, row-major.
    pub first_index: ElementIndex,
    /// The worst mismatches, by ULP (class failures first).
    pub worst: Vec<ElementMismatch>,
    /// ULP distances over every element of this output.
    pub histogram: Vec<HistogramBucket>,
    /// Fingerprint of the reference's output.
    #[serde(serialize_with = "serialize_fingerprint")]
    pub expected_fingerprint: Fingerprint,
    /// Fingerprint of the backend's output.
    #[serde(serialize_with = "serialize_fingerprint")]
    pub actual_fingerprint: Fingerprint,
    /// Every mismatching element (flat, row-major), in order: what the
    /// certificate of local agreement has to explain (the elements the
    /// judge accepted are legal already).
    #[serde(skip)]
    pub rejected: Vec<usize>,
}

/// What a mismatch verdict carries.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MismatchReport {
    /// Mismatching elements over all outputs.
    pub count: u64,
    /// Elements compared over all outputs.
    pub elements: u64,
    /// Per output with at least one mismatch.
    pub outputs: Vec<OutputMismatch>,
    /// What the agreeing elements consisted of.
    pub agreement: Agreement,
}

impl Verdict {
    /// A value mismatch whose every element the certificate of local
    /// agreement explains, as the agreement it is (`LegalReason::Amplified`).
    pub fn amplified(self) -> Verdict {
        match self {
            Verdict::Mismatch(r) => {
                let mut a = r.agreement;
                a.elements = r.elements;
                *a.legal.entry(LegalReason::Amplified).or_insert(0) += r.count;
                let worst = r
                    .outputs
                    .iter()
                    .flat_map(|o| o.worst.iter().filter_map(|m| m.ulp))
                    .max()
                    .unwrap_or(0);
                a.max_ulp = a.max_ulp.max(worst);
                Verdict::Agree(a)
            }
            v => v,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Agree(a) => {
                write!(f, "agree: {} elements, {} exact", a.elements, a.exact)?;
                for (reason, n) in &a.legal {
                    write!(f, ", {n} {}", reason.describe())?;
                }
                if a.max_ulp > 0 {
                    write!(f, " (max {} ulp)", a.max_ulp)?;
                }
                Ok(())
            }
            Verdict::Mismatch(r) => r.fmt(f),
            Verdict::ShapeMismatch { detail } => write!(f, "shape mismatch: {detail}"),
            Verdict::OnlyOneFailed { failed, error } => {
                match failed {
                    // the backend ran the program: the oracle is what lacks
                    Side::Reference => write!(
                        f,
                        "only the reference failed (a gap in xla-props, ours to fix, not a backend bug): {error}"
                    ),
                    Side::Backend => write!(f, "only the backend failed: {error}"),
                }
            }
            Verdict::BothFailedAlike { error } => write!(f, "both failed alike: {error}"),
            Verdict::BothFailedDifferently {
                expected_error,
                actual_error,
            } => write!(
                f,
                "both failed differently: reference: {expected_error}; backend: {actual_error}"
            ),
            Verdict::Skipped { reason } => write!(f, "skipped: {reason}"),
            Verdict::KnownBug { bugs, mismatch } => {
                let ids: Vec<String> = bugs.iter().map(|b| b.to_string()).collect();
                write!(f, "known bug {}; {mismatch}", ids.join("; "))
            }
            Verdict::KnownRejection { bugs, error } => {
                let ids: Vec<String> = bugs.iter().map(|b| b.to_string()).collect();
                write!(
                    f,
                    "known bug {}; the backend rejected a valid module: {error}",
                    ids.join("; ")
                )
            }
        }
    }
}

impl fmt::Display for MismatchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "mismatch: {} of {} elements differ",
            self.count, self.elements
        )?;
        if !self.agreement.legal.is_empty() {
            let reasons: Vec<String> = self
                .agreement
                .legal
                .iter()
                .map(|(r, n)| format!("{n} {}", r.name()))
                .collect();
            writeln!(f, "accepted as legal: {}", reasons.join(", "))?;
        }
        for o in &self.outputs {
            let dims: Vec<String> = o.dims.iter().map(|d| d.to_string()).collect();
            writeln!(
                f,
                "output {} ({}[{}]): {} of {} elements differ, first at {}",
                o.output,
                o.dtype,
                dims.join(","),
                o.count,
                o.elements,
                o.first_index
            )?;
            // only the lanes that differ (equal fingerprints say nothing:
            // a summary does not see every difference)
            let parts: Vec<String> = o
                .expected_fingerprint
                .differences(&o.actual_fingerprint)
                .into_iter()
                .map(|(lane, e, a)| format!("{lane} expected {e} actual {a}"))
                .collect();
            if !parts.is_empty() {
                writeln!(f, "  fingerprint: {}", parts.join(", "))?;
            }
            writeln!(f, "  worst:")?;
            for m in &o.worst {
                let ulp = m.ulp.map_or("-".to_string(), |u| u.to_string());
                write!(
                    f,
                    "    at {}: expected {} actual {} ulp {} ({})",
                    m.index,
                    m.expected,
                    m.actual,
                    ulp,
                    m.failure.describe()
                )?;
                if !m.inputs.is_empty() {
                    let ins: Vec<String> = m.inputs.iter().map(|v| v.to_string()).collect();
                    write!(f, " inputs ({})", ins.join(", "))?;
                }
                if let Some(b) = &m.bound {
                    if b.bounded {
                        write!(f, " outside the legal bound {b}")?;
                    } else {
                        write!(f, " legal bound {b}")?;
                    }
                }
                writeln!(f)?;
            }
            let hist: Vec<String> = o
                .histogram
                .iter()
                .map(|b| format!("{}:{}", b.ulp, b.count))
                .collect();
            writeln!(f, "  ulp histogram: {}", hist.join(" "))?;
        }
        Ok(())
    }
}

/// ULP histogram buckets: 0, 1, 2, 3-4, 5-8, ..., up to 2^31, then larger, then class differences.
/// The bucket of a ULP distance (`None`: a class difference).
pub fn histogram_bucket(ulp: Option<u64>) -> usize {
    match ulp {
        None => 34,
        Some(0) => 0,
        Some(1) => 1,
        Some(u) => {
            // 2 -> 2, 3..4 -> 3, 5..8 -> 4, ...
            let b = 64 - (u - 1).leading_zeros() as usize + 1;
            b.min(33)
        }
    }
}

/// The label of a bucket: `0`, `1`, `2`, `3-4`, ..., `nan/inf/sign`.
pub fn histogram_label(bucket: usize) -> String {
    match bucket {
        0 => "0".into(),
        1 => "1".into(),
        2 => "2".into(),
        34 => "nan/inf/sign".into(),
        33 => ">2^31".into(),
        b => format!("{}-{}", (1u64 << (b - 2)) + 1, 1u64 << (b - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_by_hand() {
        let cases = [
            (Some(0), "0"),
            (Some(1), "1"),
            (Some(2), "2"),
            (Some(3), "3-4"),
            (Some(4), "3-4"),
            (Some(5), "5-8"),
            (Some(8), "5-8"),
            (Some(9), "9-16"),
            (Some(u64::MAX), ">2^31"),
            (None, "nan/inf/sign"),
        ];
        for (ulp, label) in cases {
            assert_eq!(histogram_label(histogram_bucket(ulp)), label, "{ulp:?}");
        }
    }

    #[test]
    fn multi_index() {
        // dims [2,3,4]: flat 23 = 1*12 + 2*4 + 3
        assert_eq!(ElementIndex::new(23, &[2, 3, 4]).multi, vec![1, 2, 3]);
        assert_eq!(ElementIndex::new(0, &[]).multi, Vec::<usize>::new());
    }
}
