//! The declared op semantics together: when a backend declares more than
//! one (fast min/max, reduce-precision in its own type, multiplied
//! convolution padding), a module that uses several needs all at once.

use super::{variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{op_semantics_variant, LegalReason};

pub(crate) struct OpSemanticsTogether;

fn declared(n: &crate::check::Numerics) -> usize {
    usize::from(n.fast_min_max)
        + usize::from(!n.reduce_precision_in_own_type.is_empty())
        + usize::from(n.convolution_multiplies_padding || n.convolution_multiplies_dilation_holes)
}

impl LegalDifference for OpSemanticsTogether {
    fn reason(&self) -> LegalReason {
        LegalReason::OpSemantics
    }
    fn summary(&self) -> &'static str {
        "every declared op semantics at once, for modules that use more than one"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        declared(s.numerics) > 1 && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        variant_evidence(c, op_semantics_variant(c.module, c.numerics))
    }
}
