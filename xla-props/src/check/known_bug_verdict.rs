//! Phase 4 of the judge: a mismatch that the known bugs' models explain,
//! each model alone or all of them together, is an expected failure naming
//! them (`Verdict::KnownBug`).

use super::compare::{compare, CompareContext};
use super::error_spec::ErrorSpec;
use super::known_bugs::KnownBugNote;
use super::verdict::{LegalReason, Verdict};
use crate::literal::Literal;
use crate::reference::Bounds;

/// What a known bug's evidence says: the outputs its model computes, or the
/// elements it may make any value.
pub(super) enum Model {
    /// The model's outputs, and per output the enclosures of what the
    /// model computes with the backend's approximate functions (empty for
    /// an exact model).
    Outputs(Vec<Literal>, Vec<Vec<Bounds>>),
    AnyValue(Vec<Vec<bool>>),
}

/// A mismatch that the known bugs' models explain (every differing element
/// matches the exact result, a legal difference in `ctx`, or a model)
/// becomes `Verdict::KnownBug`, naming the bug that explains it alone, else
/// every bug whose model was needed together; any other verdict is returned
/// unchanged.
pub(super) fn explained_by_known_bugs(
    v: Verdict,
    ctx: &CompareContext<'_>,
    expected: &[Literal],
    actual: &[Literal],
    models: &[(Vec<KnownBugNote>, Model)],
) -> Verdict {
    let Verdict::Mismatch(report) = v else {
        return v;
    };
    if models.is_empty() {
        return Verdict::Mismatch(report);
    }
    let explains = |ms: &[&(Vec<KnownBugNote>, Model)]| {
        let mut c = ctx.clone();
        for (_, model) in ms {
            c = match model {
                Model::Outputs(out, bounds) => {
                    for (k, b) in bounds.iter().enumerate() {
                        if let Some(e) = c.enclosures.get_mut(k) {
                            e.extend(b.iter().cloned());
                        } else {
                            c.enclosures.push(b.clone());
                        }
                    }
                    c.with_alternative(LegalReason::KnownBug, out)
                }
                Model::AnyValue(masks) => c.with_any_value(LegalReason::KnownBug, masks),
            };
        }
        match compare(expected, actual, &ErrorSpec::exact(), &c) {
            Verdict::Agree(a) => Some(a),
            _ => None,
        }
    };
    let named = |ms: &[&(Vec<KnownBugNote>, Model)]| {
        let mut bugs: Vec<KnownBugNote> = Vec::new();
        for n in ms.iter().flat_map(|m| &m.0) {
            if !bugs.contains(n) {
                bugs.push(n.clone());
            }
        }
        bugs
    };
    let found = models
        .iter()
        .find_map(|m| explains(&[m]).map(|a| (named(&[m]), a)))
        .or_else(|| {
            let all: Vec<_> = models.iter().collect();
            (models.len() > 1)
                .then(|| explains(&all))
                .flatten()
                .map(|a| (named(&all), a))
        });
    match found {
        Some((bugs, agreement)) => {
            let mut mismatch = report;
            mismatch.agreement = agreement;
            Verdict::KnownBug { bugs, mismatch }
        }
        None => Verdict::Mismatch(report),
    }
}
