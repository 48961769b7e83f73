//! One case's run: the run's shared state, the case's context, its body
//! under the panic guard, and how it ended (a pass, a skip, an expected
//! failure naming its known bug, or a failure with its rerun line and
//! reproducer), told to the run's reporters as one typed event.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use libtest_mimic::{Completion, Failed};

use super::batch;
use super::events::{Artifacts, CaseFinished, Measured, RunEvent, SharedReporters};
use super::execute::panic_text;
use super::metadata::RunStart;
use super::persist;
use super::summary;
use crate::backend::Backend;
use crate::check::{Numerics, Side, Verdict};
use crate::property::{
    BackendId, CaseContext, CaseId, Failure, LimitationKind, Outcome, ReferenceCache,
};

pub(super) struct RunState {
    /// True when the reference is the built-in evaluator (called directly).
    pub(super) direct_reference: bool,
    pub(super) backends: Vec<(BackendId, Arc<dyn Backend>)>,
    /// Each backend's numerics, computed once.
    pub(super) numerics: Vec<Arc<Numerics>>,
    pub(super) reference: Arc<dyn Backend>,
    pub(super) cache: ReferenceCache,
    /// The run's reporters, told of every finished case.
    pub(super) reporters: SharedReporters,
    pub(super) seed: u64,
    pub(super) failures_dir: PathBuf,
    pub(super) rerun_prefix: String,
    /// When and how the run started (for the `--json` metadata).
    pub(super) start: Option<RunStart>,
    /// Results computed in bulk for backends that prefer batching (`batch`),
    /// by the first of their cases to run (so libtest's time counts it).
    pub(super) batched: std::sync::OnceLock<batch::Prepared>,
    /// The selected cases to compute in bulk, and their backends.
    pub(super) to_batch: std::sync::OnceLock<(Vec<CaseId>, HashSet<BackendId>)>,
}

impl RunState {
    /// Tells the run's reporters that a case finished.
    pub(super) fn report(&self, finished: &CaseFinished) {
        let mut reporters = self.reporters.lock().unwrap_or_else(|e| e.into_inner());
        reporters.event(&RunEvent::CaseFinished(finished));
    }

    /// The bulk results for a case on `backend`: computed by the first such
    /// case (the others wait for it), inside libtest's run, so its closing
    /// line's time includes the pre-pass.
    pub(super) fn prepared(&self, backend: BackendId) -> Option<&batch::Prepared> {
        match self.to_batch.get() {
            Some((ids, backends)) if backends.contains(&backend) => {
                Some(self.batched.get_or_init(|| {
                    let input = batch::PrepassInput {
                        backends: &self.backends,
                        numerics: &self.numerics,
                        reference: &self.reference,
                        direct_reference: self.direct_reference,
                        seed: self.seed,
                    };
                    batch::prepass(&input, ids)
                }))
            }
            _ => None,
        }
    }
}

/// Runs one case and tells the run's reporters how it ended; returns what
/// libtest reports of it.
pub(super) fn run_case(state: &RunState, id: CaseId, users: usize) -> Result<Completion, Failed> {
    let finished = case_finished(state, id, users);
    let completion = completion(&finished);
    state.report(&finished);
    completion
}

/// What libtest reports of a finished case: its message is a failure's
/// report or the reason a case was ignored.
pub(super) fn completion(c: &CaseFinished) -> Result<Completion, Failed> {
    let message = || c.message.clone().unwrap_or_default();
    match &c.outcome {
        Outcome::Pass | Outcome::XPass => Ok(Completion::Completed),
        Outcome::Skip(_) | Outcome::XFail(_) => Ok(Completion::ignored_with(message())),
        Outcome::Fail(_) | Outcome::Rejected(_) => Err(message().into()),
    }
}

/// Runs one case: its limitation, the backend slot, the batched results,
/// the body; how it ended, with its message, measures and artifacts.
fn case_finished(state: &RunState, id: CaseId, users: usize) -> CaseFinished {
    // the bulk results (the first case of a batching backend computes them
    // for all; that time is the run's, not this case's)
    let prepared = state.prepared(id.backend);
    let start = Instant::now();
    let spec = id.key.spec();
    let limitation = spec
        .limitation(id.key.op, id.key.dtype, id.backend.name())
        .copied();
    let timed = |c: CaseFinished| CaseFinished {
        duration: start.elapsed(),
        ..c
    };
    if let Some(l) = limitation.filter(|l| l.kind == LimitationKind::Skip) {
        let why = format!("limitation: {}", l.reason);
        return timed(CaseFinished::new(id, Outcome::Skip(why.clone()), Some(why)));
    }
    let Some(slot) = state.backends.iter().position(|b| b.0 == id.backend) else {
        let why = "backend not registered".to_string();
        return timed(CaseFinished::new(id, Outcome::Skip(why.clone()), Some(why)));
    };
    let backend = state.backends[slot].1.clone();
    // answered from results computed in bulk, when the pre-pass made them
    let stored = prepared.and_then(|p| p.backend(slot, &backend));
    let on: &dyn Backend = stored
        .as_ref()
        .map_or(backend.as_ref(), |s| s as &dyn Backend);
    let mut ctx = context(state, id, slot, on, users);
    let mut outcome = run_body(&mut ctx);
    // a failure on batched results is confirmed unbatched before it is reported
    let mut batch_note = None;
    if let (Outcome::Fail(f), Some(s)) = (&outcome, &stored) {
        if s.hits() > 0 {
            let mut direct = context(state, id, slot, backend.as_ref(), 1);
            let again = run_body(&mut direct);
            batch_note = match &again {
                Outcome::Fail(g) if g.summary == f.summary => None,
                Outcome::Fail(_) => Some(format!("batched run: {}", f.summary)),
                _ => Some(batch::confirm_note(&f.summary)),
            };
            if let Some(n) = &batch_note {
                eprintln!("note: {id}: {n}");
            }
            (ctx, outcome) = (direct, again);
        }
    }
    let xfail = limitation.filter(|l| l.kind == LimitationKind::XFail);
    // what every outcome records: the checker's worst ULP, mismatch and
    // histogram (recorded only when `--json` will write it; see `context`)
    let measured = Measured {
        max_ulp: ctx.max_ulp,
        legal: ctx.legal.clone(),
        budget: summary::judged_against(&ctx),
        worst_mismatch: ctx.worst_mismatch(),
        ulp_histogram: ctx.ulp_histogram(),
    };
    let checked = |outcome: Outcome, message: Option<String>| CaseFinished {
        measured: measured.clone(),
        ..CaseFinished::new(id, outcome, message)
    };
    timed(match (outcome, xfail) {
        (Outcome::Pass, None) => checked(Outcome::Pass, batch_note),
        // non-strict, like pytest: a case that cannot show the bug (e.g. no elements) passes
        (Outcome::Pass | Outcome::XPass, Some(l)) => {
            let note = format!("xpass: expected to fail ({}), but passed", l.reason);
            checked(Outcome::XPass, Some(note))
        }
        (Outcome::Skip(why), _) => checked(Outcome::Skip(why.clone()), Some(why)),
        (Outcome::Fail(f) | Outcome::Rejected(f) | Outcome::XFail(f), Some(l)) => {
            let why = format!("expected failure: {}", l.reason);
            checked(Outcome::XFail(f), Some(why))
        }
        (Outcome::Fail(f) | Outcome::Rejected(f) | Outcome::XFail(f), None) => {
            failed(state, id, f, batch_note.as_deref(), &ctx, checked)
        }
        (o @ Outcome::XPass, None) => checked(o, batch_note),
    })
}

/// A failure no limitation expects: an expected failure when the backend's
/// known bugs explain it (a new wrong value still fails), else a failure or
/// a rejection, with its report, rerun line and reproducer.
fn failed(
    state: &RunState,
    id: CaseId,
    f: Box<Failure>,
    batch_note: Option<&str>,
    ctx: &CaseContext<'_>,
    checked: impl Fn(Outcome, Option<String>) -> CaseFinished,
) -> CaseFinished {
    if let Some(Verdict::KnownBug { bugs, .. } | Verdict::KnownRejection { bugs, .. }) = &f.verdict
    {
        let ids: Vec<String> = bugs.iter().map(|b| b.to_string()).collect();
        let why = format!("known bug {}", ids.join("; "));
        return checked(Outcome::XFail(f), Some(why));
    }
    let rejected = matches!(
        f.verdict,
        Some(Verdict::OnlyOneFailed {
            failed: Side::Backend,
            ..
        })
    );
    let name = id.to_string();
    let artifacts = ctx.artifacts().map(|(module, inputs)| Artifacts {
        dir: state.failures_dir.join(persist::sanitize(&name)),
        module,
        inputs,
    });
    let rerun = format!("{} --exact '{name}'", state.rerun_prefix);
    let msg = failure_message(id, &f, rejected, batch_note, &rerun, artifacts.as_ref());
    let outcome = if rejected {
        Outcome::Rejected(f)
    } else {
        Outcome::Fail(f)
    };
    CaseFinished {
        rerun: Some(rerun),
        artifacts,
        ..checked(outcome, Some(msg))
    }
}

/// A failing case's message: backend, verdict, batch note, rerun line and
/// where its reproducer goes.
fn failure_message(
    id: CaseId,
    f: &Failure,
    rejected: bool,
    batch_note: Option<&str>,
    rerun: &str,
    artifacts: Option<&Artifacts>,
) -> String {
    let backend_name = id.backend.name();
    let mut msg = match &f.verdict {
        Some(v) => format!("backend: {backend_name}\nverdict: {v}"),
        None => format!("backend: {backend_name}\nverdict: {}", f.summary),
    };
    if rejected {
        msg = format!("rejected: the backend failed on a module the reference runs\n{msg}");
    }
    if let Some(n) = batch_note {
        msg.push_str(&format!("\n{n}"));
    }
    msg.push_str(&format!("\nrerun: {rerun}"));
    if let Some(a) = artifacts {
        msg.push_str(&format!("\nreproducer: {}", a.dir.display()));
    }
    msg
}

/// A case's context on `backend` (the slot's backend, or its batched stand-in).
fn context<'a>(
    state: &'a RunState,
    id: CaseId,
    slot: usize,
    backend: &'a dyn Backend,
    users: usize,
) -> CaseContext<'a> {
    CaseContext::new(
        id,
        backend,
        state.reference.as_ref(),
        &state.cache,
        users,
        state.seed,
    )
    .with_numerics(state.numerics[slot].clone())
    .with_direct_reference(state.direct_reference)
    .with_ulp_histogram(state.start.as_ref().is_some_and(|s| s.histograms))
}

/// Runs the property body; a panic is a failure.
fn run_body(ctx: &mut CaseContext<'_>) -> Outcome {
    let body = ctx.spec.body;
    catch_unwind(AssertUnwindSafe(|| body(ctx)))
        .unwrap_or_else(|p| Outcome::fail(format!("panicked: {}", panic_text(p.as_ref()))))
}

/// A case whose run panicked outside its body's guard: a failure.
pub(super) fn panicked(id: CaseId, text: &str) -> CaseFinished {
    let summary = format!("panicked: {text}");
    CaseFinished::new(id, Outcome::fail(summary.clone()), Some(summary))
}
