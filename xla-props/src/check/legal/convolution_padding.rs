//! Multiplied convolution padding: padding materialized as zeros that are
//! multiplied by the kernel (`0 * w`, NaN for an infinite weight).

use super::{only_semantics, variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{op_semantics_variant, LegalReason};

pub(crate) struct ConvolutionPadding;

impl LegalDifference for ConvolutionPadding {
    fn reason(&self) -> LegalReason {
        LegalReason::ConvolutionPadding
    }
    fn summary(&self) -> &'static str {
        "a convolution's padding (or input dilation holes) multiplied by the kernel instead of skipped (`Numerics::convolution_multiplies_padding`, `convolution_multiplies_dilation_holes`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        (s.numerics.convolution_multiplies_padding
            || s.numerics.convolution_multiplies_dilation_holes)
            && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let n = only_semantics(c.numerics, |n| {
            n.fast_min_max = false;
            n.reduce_precision_in_own_type.clear();
        });
        variant_evidence(c, op_semantics_variant(c.module, &n))
    }
}
