//! Fast min/max: float minimum and maximum as a compare and select that does
//! not propagate NaN (XLA CPU's `--xla_cpu_enable_fast_min_max`).

use super::{only_semantics, variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{op_semantics_variant_ordered, ConstantOrder, LegalReason};

pub(crate) struct FastMinMax;

impl LegalDifference for FastMinMax {
    fn reason(&self) -> LegalReason {
        LegalReason::FastMinMax
    }
    fn summary(&self) -> &'static str {
        "float minimum/maximum (and clamp) that drop a NaN second operand, in every computation, reducers included (`Numerics::fast_min_max`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.fast_min_max && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let n = only_semantics(c.numerics, |n| {
            n.reduce_precision_in_own_type.clear();
            n.convolution_multiplies_padding = false;
            n.convolution_multiplies_dilation_holes = false;
        });
        let mut e = Vec::new();
        for order in [ConstantOrder::Canonical, ConstantOrder::Widened] {
            e.extend(variant_evidence(
                c,
                op_semantics_variant_ordered(c.module, &n, order),
            ));
        }
        e
    }
}
