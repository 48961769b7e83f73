//! `Backend::execute_many` for compiling backends (XLA, IREE): a whole
//! run's requests in few compiles. A backend plugs in through [`RowRunner`]
//! (compile one lowered module, run it on many argument lists).
//!
//! Requests whose modules lower to the same StableHLO text form one group
//! (one module, many argument lists). Groups are merged, up to a bounded
//! number per batch, into one module with [`super::batch::batch_modules`];
//! each batch compiles once in one worker and runs once per argument list
//! ("row": row `r` gives every group its `r`-th argument list, groups with
//! fewer repeat their last one, whose results are dropped). Groups are sorted
//! by their number of argument lists so a batch wastes few executions.
//! Batches run on every worker process at once.
//!
//! A batch that fails (a compile error, a crash, a timeout) is split in two
//! and each half retried, down to single groups; a group that fails alone is
//! left unanswered, so the runner runs its cases directly and reports the
//! error there.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::batch::batch_modules;
use super::lower::{lower_module, LowerError, Lowered};
use crate::backend::{Backend, BatchRequest};
use crate::hlo::Module;
use crate::literal::Literal;

/// Modules per batch by default. XLA's compile cost is mostly per distinct
/// kernel, so batching saves the per-module overhead only, and very large
/// batches compile superlinearly (docs/perf.md); `XLA_PROPS_XLA_BATCH` overrides.
pub(crate) const DEFAULT_BATCH: usize = 16;

/// The batch size: the variable `var` (e.g. `XLA_PROPS_XLA_BATCH`), or `default`.
pub(crate) fn batch_size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// What a compiling backend gives the batcher.
pub(crate) trait RowRunner: Backend {
    /// Its typed error (a failed lowering converts into it).
    type Error: From<LowerError>;
    /// False when it cannot run at all (nothing is answered in bulk).
    fn ready(&self) -> bool;
    /// How many batches run at once.
    fn workers(&self) -> usize;
    /// Modules per batch.
    fn batch_size(&self) -> usize;
    /// True for an error that no retry can cure (the backend went away).
    fn is_unavailable(e: &Self::Error) -> bool;
    /// An error for outputs that do not split back per module.
    fn output_error(message: String) -> Self::Error;
    /// Compiles `lowered` (a batch of `modules` modules) once and runs it
    /// on every argument list.
    fn run_rows(
        &self,
        lowered: &Lowered,
        modules: usize,
        rows: &[Vec<&Literal>],
    ) -> Result<Vec<Vec<Literal>>, Self::Error>;
    /// Its compile counters, for the line printed after the batches.
    fn stats_line(&self) -> String;
}

/// Requests that lower to one StableHLO text.
struct Group<'a> {
    /// One of its modules (they all lower alike).
    module: &'a Module,
    /// (request, argument list) pairs, in order.
    rows: Vec<(usize, usize)>,
}

/// A request's answer: which (request, argument list) and its outputs.
type Answer = ((usize, usize), Vec<Literal>);

fn fits(lowered: &Lowered, args: &[Literal]) -> bool {
    args.len() == lowered.params.len()
        && args
            .iter()
            .zip(&lowered.params)
            .all(|(a, p)| a.shape().compatible(p))
}

/// See the module docs.
pub(crate) fn execute_many<B: RowRunner>(
    backend: &B,
    requests: &[BatchRequest<'_>],
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<Vec<Option<Vec<Literal>>>> {
    let mut results: Vec<Vec<Option<Vec<Literal>>>> =
        requests.iter().map(|r| vec![None; r.args.len()]).collect();
    if !backend.ready() {
        return results;
    }
    let mut by_text: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (ri, r) in requests.iter().enumerate() {
        // what does not lower (or does not fit) is answered directly later
        let Ok(lowered) = lower_module(r.module) else {
            progress(r.args.len());
            continue;
        };
        let rows: Vec<(usize, usize)> = (0..r.args.len())
            .filter(|&ai| fits(&lowered, r.args[ai]))
            .map(|ai| (ri, ai))
            .collect();
        progress(r.args.len() - rows.len());
        if rows.is_empty() {
            continue;
        }
        match by_text.get(&lowered.mlir) {
            Some(&g) => groups[g].rows.extend(rows),
            None => {
                by_text.insert(lowered.mlir, groups.len());
                groups.push(Group {
                    module: r.module,
                    rows,
                });
            }
        }
    }
    drop(by_text);
    let (group_count, row_count) = (
        groups.len(),
        groups.iter().map(|g| g.rows.len()).sum::<usize>(),
    );
    groups.sort_by_key(|g| Reverse(g.rows.len()));
    let size = backend.batch_size();
    let batches: Vec<Vec<&Group<'_>>> = groups.chunks(size).map(|c| c.iter().collect()).collect();
    let answers: Mutex<Vec<Answer>> = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..backend.workers().min(batches.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(i) else {
                    break;
                };
                let done = run_groups(backend, requests, batch);
                progress(batch.iter().map(|g| g.rows.len()).sum());
                answers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(done);
            });
        }
    });
    let answers = answers.into_inner().unwrap_or_else(|p| p.into_inner());
    eprintln!(
        "{}: {group_count} distinct stablehlo modules, {row_count} executions, {} batches of up to {size}, \
         {} answered; {}",
        backend.name(),
        batches.len(),
        answers.len(),
        backend.stats_line()
    );
    for ((ri, ai), out) in answers {
        results[ri][ai] = Some(out);
    }
    results
}

/// Runs groups as one batch; on failure, each half on its own.
fn run_groups<B: RowRunner>(
    backend: &B,
    requests: &[BatchRequest<'_>],
    groups: &[&Group<'_>],
) -> Vec<Answer> {
    match run_once(backend, requests, groups) {
        Ok(done) => done,
        Err(e) if B::is_unavailable(&e) => Vec::new(),
        Err(_) if groups.len() <= 1 => Vec::new(),
        Err(_) => {
            let (a, b) = groups.split_at(groups.len() / 2);
            let mut done = run_groups(backend, requests, a);
            done.extend(run_groups(backend, requests, b));
            done
        }
    }
}

fn run_once<B: RowRunner>(
    backend: &B,
    requests: &[BatchRequest<'_>],
    groups: &[&Group<'_>],
) -> Result<Vec<Answer>, B::Error> {
    let modules: Vec<&Module> = groups.iter().map(|g| g.module).collect();
    let batch = batch_modules(&modules);
    let lowered = lower_module(&batch.module)?;
    let rows = groups.iter().map(|g| g.rows.len()).max().unwrap_or(0);
    let args: Vec<Vec<&Literal>> = (0..rows)
        .map(|r| {
            groups
                .iter()
                .flat_map(|g| {
                    let (ri, ai) = g.rows[r.min(g.rows.len() - 1)];
                    requests[ri].args[ai].iter()
                })
                .collect()
        })
        .collect();
    let t = std::time::Instant::now();
    let outputs = backend.run_rows(&lowered, groups.len(), &args)?;
    if std::env::var_os("XLA_PROPS_DEBUG_BATCH").is_some() {
        eprintln!(
            "batch: {} groups, {} rows, {} bytes of mlir, {:.2} s",
            groups.len(),
            rows,
            lowered.mlir.len(),
            t.elapsed().as_secs_f64()
        );
    }
    let mut done = Vec::new();
    for (r, out) in outputs.into_iter().enumerate() {
        let per_group = batch
            .split(&out)
            .ok_or_else(|| B::output_error("batched outputs do not split back".into()))?;
        for (g, o) in groups.iter().zip(per_group) {
            if r < g.rows.len() {
                done.push((g.rows[r], o));
            }
        }
    }
    Ok(done)
}
