//! Unstable sort: the values an unstable sort carries along may be in any
//! order within a run of tied keys.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::LegalReason;

pub(crate) struct UnstableSort;

impl LegalDifference for UnstableSort {
    fn reason(&self) -> LegalReason {
        LegalReason::UnstableSort
    }
    fn summary(&self) -> &'static str {
        "an unstable sort's carried values compared as multisets per run of tied keys (`is_stable=false`)"
    }
    fn admissible(&self, _: &Setting<'_>) -> bool {
        true
    }
    fn cheap(&self) -> bool {
        true
    }
    fn evidence<'n>(&self, _: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        vec![Evidence::UnstableSort]
    }
}
