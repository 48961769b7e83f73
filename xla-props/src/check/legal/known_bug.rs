//! Known bugs: a mismatch that a backend's declared known bugs explain is an
//! expected failure (`Verdict::KnownBug`), never an agreement.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{KnownBugNote, LegalReason};
use crate::hlo::Module;

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
    /// Each bug's model alone, and, where two or more rewrite the module,
    /// all of them applied one after the other to one module: in a deep
    /// program two bugs may act on one output (a divide by a broadcast
    /// constant feeding a divide of a divide), and then no one model's
    /// module computes what the backend does.
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let bugs: Vec<_> = c
            .known_bugs
            .iter()
            .filter(|b| c.policy == Policy::Reference || b.model.is_any_value())
            .collect();
        let mut out: Vec<Evidence<'n>> = Vec::new();
        let mut composed: Option<(Vec<KnownBugNote>, Module)> = None;
        for b in bugs {
            if b.model.is_any_value() {
                if let Some(masks) = b.model.any_value_masks(c.module, c.inputs) {
                    out.push(Evidence::KnownBugAnyValue(b.note(), masks));
                }
                continue;
            }
            let Some(m) = b.model.apply(c.module) else {
                continue;
            };
            composed = match composed {
                None => Some((vec![b.note()], m.clone())),
                Some((mut notes, prev)) => match b.model.apply(&prev) {
                    Some(next) => {
                        notes.push(b.note());
                        Some((notes, next))
                    }
                    None => Some((notes, prev)),
                },
            };
            if let Some(outs) = c.eval(&m, c.inputs) {
                out.push(Evidence::KnownBug(vec![b.note()], outs, m));
            }
        }
        if let Some((notes, m)) = composed.filter(|(n, _)| n.len() > 1) {
            if let Some(outs) = c.eval(&m, c.inputs) {
                out.push(Evidence::KnownBug(notes, outs, m));
            }
        }
        out
    }
}
