//! The propagated bound: every declared error (a rounding, an approximate
//! function's budget, a flush, a reassociated sum) carried through the
//! later ops as an enclosure of every legal value (`reference::enclose`).

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::LegalReason;

pub(crate) struct PropagatedBound;

impl LegalDifference for PropagatedBound {
    fn reason(&self) -> LegalReason {
        LegalReason::PropagatedBound
    }
    fn summary(&self) -> &'static str {
        "inside the enclosure of every value a backend within its declared numerics can produce, computed by interval evaluation of the module (and of each admitted variant), only for the elements nothing else explains"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, _: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        vec![Evidence::PropagatedBound]
    }
}
