//! Multiply-add contraction: `a * b + c` computed as one fused multiply-add.

use super::{variant_evidence, Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{fma_contraction_variant, unrounded_products_variant, LegalReason};

pub(crate) struct Fma;

impl LegalDifference for Fma {
    fn reason(&self) -> LegalReason {
        LegalReason::Fma
    }
    fn summary(&self) -> &'static str {
        "multiply-adds contracted into one fused multiply-add, the product unrounded (f32 and narrower: the contracted module as a variant; f64, which no wider type computes exactly: the product's half-ulp in the enclosures); f64 dots and convolutions whose products are accumulated unrounded, so a product that overflows alone does not make the sum infinite or NaN (`Numerics::contracts_multiply_add`; never under `strict_rounding`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.contracts_multiply_add && !s.strict_rounding && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let mut e = variant_evidence(c, fma_contraction_variant(c.module));
        e.extend(variant_evidence(c, unrounded_products_variant(c.module)));
        e
    }
}
