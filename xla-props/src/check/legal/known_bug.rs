//! Known bugs: a mismatch that a backend's declared known bugs explain is an
//! expected failure (`Verdict::KnownBug`), never an agreement.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::LegalReason;

pub(crate) struct KnownBugs;

impl LegalDifference for KnownBugs {
    fn reason(&self) -> LegalReason {
        LegalReason::KnownBug
    }
    fn summary(&self) -> &'static str {
        "a known bug of the backend (`Backend::known_bugs`), whose model the reference evaluates: the verdict is an expected failure naming the bug, not an agreement"
    }
    /// Against the reference; and between two runs of the backend for the
    /// bugs whose wrong values are not deterministic (two runs differ there).
    fn admissible(&self, s: &Setting<'_>) -> bool {
        !s.known_bugs.is_empty() && matches!(s.policy, Policy::Reference | Policy::Itself)
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        c.known_bugs
            .iter()
            .filter(|b| c.policy == Policy::Reference || b.model.is_any_value())
            .filter_map(|b| {
                if b.model.is_any_value() {
                    return Some(Evidence::KnownBugAnyValue(
                        b.note(),
                        b.model.any_value_masks(c.module, c.inputs)?,
                    ));
                }
                let m = b.model.apply(c.module)?;
                let outs = c.eval(&m, c.inputs)?;
                Some(Evidence::KnownBug(b.note(), outs, m))
            })
            .collect()
    }
}
