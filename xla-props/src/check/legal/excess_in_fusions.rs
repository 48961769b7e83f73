//! Excess precision inside fusions: narrow float intermediates of a fused
//! computation kept in f32, the fusion's result rounded once.

use super::{variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{excess_precision_variant, LegalReason};

pub(crate) struct ExcessInFusions;

impl LegalDifference for ExcessInFusions {
    fn reason(&self) -> LegalReason {
        LegalReason::ExcessPrecision
    }
    fn summary(&self) -> &'static str {
        "the module with every fusion computed in f32 where it declares a narrower float, rounded once at the fusion's result (`Numerics::excess_precision_in_fusions`; never under `strict_rounding`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.excess_precision_in_fusions && !s.strict_rounding && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        variant_evidence(c, excess_precision_variant(c.module))
    }
}
