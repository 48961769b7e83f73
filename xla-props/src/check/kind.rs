//! What kind of disagreement a verdict is (`MismatchKind`, from
//! `Verdict::kind`), and a failure's signature (`FailureSignature`: the
//! culprit's opcode and the kind), the one key that guards every reduction
//! step and names every reproducer.

use super::error_spec::ElementFailure;
use super::verdict::{Side, Verdict};
use crate::hlo::Opcode;

/// What kind of disagreement a verdict is (see [`Verdict::kind`]).
///
/// ```
/// use xla_props::check::MismatchKind;
/// assert_eq!("values".parse::<MismatchKind>().unwrap(), MismatchKind::Values);
/// assert_eq!(MismatchKind::NonFinite.name(), "non-finite");
/// assert_eq!(MismatchKind::NonFinite.class(), "wrong values");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MismatchKind {
    /// Finite values out of tolerance (or a signed zero).
    Values,
    /// A NaN or infinity where the other side has something else.
    NonFinite,
    /// Outputs of a different number, type or dims.
    Shape,
    /// Only the backend failed.
    BackendFailed,
    /// Only the reference failed.
    ReferenceFailed,
    /// Both failed, differently.
    BothFailedDifferently,
    /// Every unit agrees on the reference's operands, but the whole
    /// departs beyond what their errors explain (see `Certificate`).
    Composition,
}

impl MismatchKind {
    /// Every kind.
    pub const ALL: [MismatchKind; 7] = [
        MismatchKind::Values,
        MismatchKind::NonFinite,
        MismatchKind::Shape,
        MismatchKind::BackendFailed,
        MismatchKind::ReferenceFailed,
        MismatchKind::BothFailedDifferently,
        MismatchKind::Composition,
    ];

    /// The lowercase name used in reports and `.hlotest` expectations.
    pub fn name(self) -> &'static str {
        match self {
            MismatchKind::Values => "values",
            MismatchKind::NonFinite => "non-finite",
            MismatchKind::Shape => "shape",
            MismatchKind::BackendFailed => "backend-failed",
            MismatchKind::ReferenceFailed => "reference-failed",
            MismatchKind::BothFailedDifferently => "both-failed-differently",
            MismatchKind::Composition => "composition",
        }
    }

    /// The coarse class triage groups by (a NaN where a number belongs is
    /// a wrong value like any other: one bug shows both on different inputs).
    pub fn class(self) -> &'static str {
        match self {
            MismatchKind::Values | MismatchKind::NonFinite => "wrong values",
            MismatchKind::Shape => "shape",
            MismatchKind::BackendFailed => "backend failed",
            MismatchKind::ReferenceFailed => "reference failed",
            MismatchKind::BothFailedDifferently => "both failed differently",
            MismatchKind::Composition => "composition",
        }
    }
}

impl std::str::FromStr for MismatchKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        MismatchKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown mismatch kind `{s}`"))
    }
}

impl std::fmt::Display for MismatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Verdict {
    /// The kind of a disagreeing verdict (None for agreement and skips):
    /// the one classifier of a mismatch's kind.
    ///
    /// ```
    /// use xla_props::check::{MismatchKind, Side, Verdict};
    /// let v = Verdict::OnlyOneFailed { failed: Side::Backend, error: "boom".into() };
    /// assert_eq!(v.kind(), Some(MismatchKind::BackendFailed));
    /// assert_eq!(Verdict::Skipped { reason: "n/a".into() }.kind(), None);
    /// ```
    pub fn kind(&self) -> Option<MismatchKind> {
        match self {
            Verdict::Mismatch(r) | Verdict::KnownBug { mismatch: r, .. } => {
                let non_finite = r.outputs.iter().flat_map(|o| &o.worst).any(|w| {
                    matches!(
                        w.failure,
                        ElementFailure::NanClass | ElementFailure::Infinity
                    )
                });
                Some(if non_finite {
                    MismatchKind::NonFinite
                } else {
                    MismatchKind::Values
                })
            }
            Verdict::ShapeMismatch { .. } => Some(MismatchKind::Shape),
            Verdict::OnlyOneFailed {
                failed: Side::Backend,
                ..
            }
            | Verdict::KnownRejection { .. } => Some(MismatchKind::BackendFailed),
            Verdict::OnlyOneFailed {
                failed: Side::Reference,
                ..
            } => Some(MismatchKind::ReferenceFailed),
            Verdict::BothFailedDifferently { .. } => Some(MismatchKind::BothFailedDifferently),
            Verdict::Agree(_) | Verdict::BothFailedAlike { .. } | Verdict::Skipped { .. } => None,
        }
    }
}

/// A failure's signature: the culprit instruction's opcode (inside its
/// fusion when there is one), the kind of mismatch, and the culprit fusion
/// when it must be kept. A reduced program is accepted only when it fails
/// with the same signature; the fuzzer keeps one reproducer per signature.
///
/// ```
/// use xla_props::check::{FailureSignature, MismatchKind};
/// use xla_props::hlo::Opcode;
/// let s = FailureSignature::new(Opcode::Add, MismatchKind::Values);
/// assert_eq!(s.to_string(), "add values");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FailureSignature {
    /// The culprit instruction's opcode (inside the fusion when there is one).
    pub opcode: Opcode,
    /// The kind of mismatch.
    pub kind: MismatchKind,
    /// The culprit fusion's name, kept through every reduction.
    pub fusion: Option<String>,
}

impl FailureSignature {
    /// The signature of a failure at `opcode`, outside any fusion.
    pub fn new(opcode: Opcode, kind: MismatchKind) -> FailureSignature {
        FailureSignature {
            opcode,
            kind,
            fusion: None,
        }
    }
}

impl std::fmt::Display for FailureSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.opcode, self.kind)?;
        if let Some(fusion) = &self.fusion {
            write!(f, " in fusion `{fusion}`")?;
        }
        Ok(())
    }
}
