//! Excess precision anywhere: narrow float values anywhere in the module
//! kept in f32, only the results rounded (XLA's `xla_allow_excess_precision`).

use super::{variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{whole_module_excess_precision_variant, LegalReason};

pub(crate) struct ExcessAnywhere;

impl LegalDifference for ExcessAnywhere {
    fn reason(&self) -> LegalReason {
        LegalReason::ExcessPrecisionAnywhere
    }
    fn summary(&self) -> &'static str {
        "the whole module computed in f32 wherever it declares a narrower float, only its results rounded (`Numerics::excess_precision_anywhere`; never under `strict_rounding`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.excess_precision_anywhere && !s.strict_rounding && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        variant_evidence(c, whole_module_excess_precision_variant(c.module))
    }
}
