//! Approximate functions: an op the backend declares approximate at a
//! result type may be off by its budget (ULP, or absolutely near zeros).

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::LegalReason;

pub(crate) struct Approximate;

impl LegalDifference for Approximate {
    fn reason(&self) -> LegalReason {
        LegalReason::ApproximateFunction
    }
    fn summary(&self) -> &'static str {
        "an approximate function within its declared budget (`Numerics::approximations`, ULP or absolute), summed over the module's ops at the output; the propagated bound carries each budget through the graph"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        !s.numerics.approximations.is_empty()
    }
    fn cheap(&self) -> bool {
        true
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        vec![Evidence::Approximations(&c.numerics.approximations)]
    }
}
