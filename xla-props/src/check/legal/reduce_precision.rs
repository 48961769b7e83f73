//! Reduce-precision in the operand's own type: the round-and-mask rule on
//! the operand's own bits instead of through f32.

use super::{only_semantics, variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{op_semantics_variant, LegalReason};

pub(crate) struct ReducePrecisionInOwnType;

impl LegalDifference for ReducePrecisionInOwnType {
    fn reason(&self) -> LegalReason {
        LegalReason::ReducePrecisionInOwnType
    }
    fn summary(&self) -> &'static str {
        "reduce-precision of the types `Numerics::reduce_precision_in_own_type` names computed on the operand's own bit pattern"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        !s.numerics.reduce_precision_in_own_type.is_empty() && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let n = only_semantics(c.numerics, |n| {
            n.fast_min_max = false;
            n.convolution_multiplies_padding = false;
            n.convolution_multiplies_dilation_holes = false;
        });
        variant_evidence(c, op_semantics_variant(c.module, &n))
    }
}
