//! One case's run: the run's shared state, the case's context, its body
//! under the panic guard, and what its outcome records (a pass, a skip, an
//! expected failure naming its known bug, or a failure with its rerun line
//! and reproducer).

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use libtest_mimic::{Completion, Failed};

use super::batch;
use super::execute::panic_text;
use super::metadata::RunStart;
use super::persist;
use super::report::{self, CaseKind, CaseRecord};
use crate::backend::Backend;
use crate::check::{Numerics, Verdict};
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
    pub(super) records: Mutex<Vec<CaseRecord>>,
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

pub(super) fn run_case(state: &RunState, id: CaseId, users: usize) -> Result<Completion, Failed> {
    // the bulk results (the first case of a batching backend computes them
    // for all; that time is the run's, not this case's)
    let prepared = state.prepared(id.backend);
    let start = Instant::now();
    let spec = id.key.spec();
    let backend_name = id.backend.name();
    let limitation = spec
        .limitation(id.key.op, id.key.dtype, backend_name)
        .copied();
    let record = |r: CaseRecord| {
        state
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(CaseRecord {
                duration: start.elapsed(),
                ..r
            });
    };
    if let Some(l) = limitation.filter(|l| l.kind == LimitationKind::Skip) {
        let why = format!("limitation: {}", l.reason);
        record(CaseRecord::skipped(id, &why));
        return Ok(Completion::ignored_with(why));
    }
    let Some(slot) = state.backends.iter().position(|b| b.0 == id.backend) else {
        record(CaseRecord::skipped(id, "backend not registered"));
        return Ok(Completion::ignored_with("backend not registered"));
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
    let worst = ctx.worst_mismatch();
    let xfail = limitation.filter(|l| l.kind == LimitationKind::XFail);
    // what every outcome records: the checker's worst ULP, mismatch and
    // histogram (recorded only when `--json` will write it; see `context`)
    let budget = report::judged_against(&ctx);
    let checked = |kind: CaseKind, message: Option<String>| CaseRecord {
        message,
        max_ulp: ctx.max_ulp,
        legal: ctx.legal.clone(),
        budget: budget.clone(),
        worst_mismatch: worst.clone(),
        ulp_histogram: ctx.ulp_histogram(),
        ..CaseRecord::new(id, kind)
    };
    match (outcome, xfail) {
        (Outcome::Pass, None) => {
            record(checked(CaseKind::Pass, batch_note));
            Ok(Completion::Completed)
        }
        (Outcome::Pass, Some(l)) => {
            // non-strict, like pytest: a case that cannot show the bug (e.g. no elements) passes
            let note = format!("xpass: expected to fail ({}), but passed", l.reason);
            record(checked(CaseKind::XPass, Some(note)));
            Ok(Completion::Completed)
        }
        (Outcome::Skip(why), _) => {
            record(checked(CaseKind::Skip, Some(why.clone())));
            Ok(Completion::ignored_with(why))
        }
        (Outcome::Fail(f), Some(l)) => {
            let why = format!("expected failure: {}", l.reason);
            record(CaseRecord {
                verdict: Some(f.summary),
                ..checked(CaseKind::XFail, Some(why.clone()))
            });
            Ok(Completion::ignored_with(why))
        }
        (Outcome::Fail(f), None) => {
            // a mismatch the backend's known bugs explain: an expected
            // failure that names the bugs (a new wrong value still fails)
            if let Some(Verdict::KnownBug { bugs, .. } | Verdict::KnownRejection { bugs, .. }) =
                &f.verdict
            {
                let ids: Vec<String> = bugs.iter().map(|b| b.to_string()).collect();
                let why = format!("known bug {}", ids.join("; "));
                record(CaseRecord {
                    verdict: Some(f.summary),
                    ..checked(CaseKind::XFail, Some(why.clone()))
                });
                return Ok(Completion::ignored_with(why));
            }
            let kind = CaseKind::of_failure(f.verdict.as_ref());
            let (msg, rerun, reproducer) =
                failure_message(state, id, kind, &f, batch_note.as_deref(), &ctx);
            record(CaseRecord {
                verdict: Some(f.summary),
                rerun: Some(rerun),
                reproducer,
                ..checked(kind, Some(msg.clone()))
            });
            Err(msg.into())
        }
    }
}

/// A failing case's message (backend, verdict, batch note, rerun line and
/// reproducer), its rerun line, and where its reproducer was written.
fn failure_message(
    state: &RunState,
    id: CaseId,
    kind: CaseKind,
    f: &Failure,
    batch_note: Option<&str>,
    ctx: &CaseContext<'_>,
) -> (String, String, Option<PathBuf>) {
    let backend_name = id.backend.name();
    let name = id.to_string();
    let mut msg = format!("backend: {backend_name}\nverdict: {}", f.summary);
    if let Some(v) = &f.verdict {
        msg = format!("backend: {backend_name}\nverdict: {v}");
    }
    if kind == CaseKind::Rejected {
        msg = format!("rejected: the backend failed on a module the reference runs\n{msg}");
    }
    if let Some(n) = batch_note {
        msg.push_str(&format!("\n{n}"));
    }
    let rerun = format!("{} --exact '{name}'", state.rerun_prefix);
    msg.push_str(&format!("\nrerun: {rerun}"));
    let mut reproducer = None;
    if let Some((module, inputs)) = ctx.artifacts() {
        match persist::write_reproducer(
            &state.failures_dir,
            &name,
            backend_name,
            &module,
            &inputs,
            &msg,
        ) {
            Ok(dir) => {
                msg.push_str(&format!("\nreproducer: {}", dir.display()));
                reproducer = Some(dir);
            }
            Err(e) => msg.push_str(&format!("\nreproducer not written: {e}")),
        }
    }
    (msg, rerun, reproducer)
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
