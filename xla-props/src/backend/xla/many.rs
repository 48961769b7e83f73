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
//! A batch that fails is retried without the group that made it fail when
//! the backend can tell which one (IREE: the line of the batched StableHLO
//! text its compile error points at, [`RowRunner::error_line`]); otherwise
//! (a crash, a timeout, an error without a location) it is split in two and
//! each half retried, down to single groups. A group dropped or failing alone
//! is left unanswered, so the runner runs its cases directly and reports the
//! error there; the backend may keep that error ([`RowRunner::keep_failure`])
//! to answer those direct runs without compiling the module again.
//!
//! What a failure teaches is kept for the rest of the run ([`Learned`]): the
//! op a located error points at is learned as rejected, and later batches
//! leave out every module that holds it. An error without a location that
//! names a missing symbol ([`RowRunner::link_symbol`], IREE's `undefined
//! symbol: tanh` at link time) is split between the modules whose ops all
//! compiled before and the rest, and the module that fails alone teaches
//! its never-compiled ops.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::batch::batch_modules;
use super::learn::{module_keys, op_key, Learned};
use super::lower::{lower_module, LowerError, Lowered};
use crate::backend::{Backend, BatchRequest};
use crate::hlo::Module;
use crate::literal::Literal;
use crate::reference::spmd::DeviceProgram;

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
    /// The 1-based line of the compiled StableHLO text that the error
    /// `e` points at, when it names one (`None`: it cannot tell, and a
    /// failed batch is halved instead).
    fn error_line(_e: &Self::Error) -> Option<usize> {
        None
    }
    /// The symbol a link step found missing, when the error is one (`None`:
    /// not a link error).
    fn link_symbol(_e: &Self::Error) -> Option<String> {
        None
    }
    /// The error `e` of a failed batch, attributed to one of its modules
    /// (`mlir`, that module's own lowered text): its first error's line lies
    /// in that module's part of the batch (`lines`: that line, and the same
    /// line of `mlir`), or it failed alone (`None`). The backend may keep it
    /// to answer the module's direct compile instead of compiling it again.
    fn keep_failure(&self, _mlir: &str, _e: &Self::Error, _lines: Option<(usize, usize)>) {}
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
    /// Lines of its lowered entry's body (see [`group_at_line`]).
    body_lines: usize,
    /// The keys of its ops ([`op_key`]).
    keys: Vec<String>,
    /// Its lowered text.
    mlir: String,
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
        // a module on many devices (partitioned, or annotated for the
        // partitioner) takes global arrays: it runs directly
        if !matches!(DeviceProgram::multi(r.module), Ok(None))
            || crate::hlo::sharding::annotated_devices(r.module).is_some()
        {
            progress(r.args.len());
            continue;
        }
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
                let body_lines = lowered.mlir.lines().count().saturating_sub(FRAME_LINES);
                let keys = module_keys(&lowered.mlir);
                by_text.insert(lowered.mlir.clone(), groups.len());
                groups.push(Group {
                    module: r.module,
                    rows,
                    body_lines,
                    keys,
                    mlir: lowered.mlir,
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
    let learned = Learned::default();
    std::thread::scope(|s| {
        for _ in 0..backend.workers().min(batches.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(i) else {
                    break;
                };
                let done = run_groups(backend, requests, batch, &learned);
                progress(batch.iter().map(|g| g.rows.len()).sum());
                answers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(done);
            });
        }
    });
    let answers = answers.into_inner().unwrap_or_else(|p| p.into_inner());
    let rejected = learned.rejected();
    eprintln!(
        "{}: {group_count} distinct stablehlo modules, {row_count} executions, {} batches of up to {size}, \
         {} answered; {}; {} ops learned as rejected, {} modules left out for them",
        backend.name(),
        batches.len(),
        answers.len(),
        backend.stats_line(),
        rejected.len(),
        learned.left_out()
    );
    if std::env::var_os("XLA_PROPS_DEBUG_BATCH").is_some() {
        for (key, why) in &rejected {
            eprintln!("learned: {key}  <- {why}");
        }
    }
    for ((ri, ai), out) in answers {
        results[ri][ai] = Some(out);
    }
    results
}

/// Runs groups as one batch, leaving out those that hold a learned
/// rejection; on failure, again without the group the error points at (its
/// op learned as rejected), or else split: a link error between the groups
/// whose ops all compiled before and the rest, any other error in halves.
fn run_groups<B: RowRunner>(
    backend: &B,
    requests: &[BatchRequest<'_>],
    groups: &[&Group<'_>],
    learned: &Learned,
) -> Vec<Answer> {
    let groups: Vec<&Group<'_>> = groups
        .iter()
        .filter(|g| !learned.leaves_out(&g.keys))
        .copied()
        .collect();
    if groups.is_empty() {
        return Vec::new();
    }
    let Failed { error, mlir } = match run_once(backend, requests, &groups) {
        Ok(done) => {
            learned.accept(groups.iter().flat_map(|g| &g.keys));
            return done;
        }
        Err(failed) => failed,
    };
    if B::is_unavailable(&error) {
        return Vec::new();
    }
    let symbol = B::link_symbol(&error);
    let why = |what: &str| match &symbol {
        Some(s) => format!("{what}: undefined symbol `{s}`"),
        None => what.to_string(),
    };
    let bodies: Vec<usize> = groups.iter().map(|g| g.body_lines).collect();
    let located = B::error_line(&error)
        .zip(mlir.as_deref())
        .and_then(|(line, text)| {
            let k = group_at_line(&bodies, text.lines().count(), line)?;
            let own = line - bodies[..k].iter().sum::<usize>();
            backend.keep_failure(&groups[k].mlir, &error, Some((line, own)));
            Some((k, op_key(text, line)))
        });
    if let Some((k, key)) = located {
        match (&symbol, key) {
            // a link error is located at its dispatch, whose root may be
            // another op than the one that calls the symbol
            (Some(s), _) => learned.learn_link(s, &groups[k].keys),
            (None, Some(key)) => {
                learned.reject_unless_accepted(key, &why("a located compile error"))
            }
            (None, None) => {}
        }
        if groups.len() <= 1 {
            return Vec::new();
        }
        // the culprit's cases run directly later and report the error
        let rest: Vec<&Group<'_>> = groups
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, g)| *g)
            .collect();
        return run_groups(backend, requests, &rest, learned);
    }
    if groups.len() <= 1 {
        if let Some(s) = &symbol {
            learned.learn_link(s, &groups[0].keys);
        }
        backend.keep_failure(&groups[0].mlir, &error, None);
        return Vec::new();
    }
    let (known, new): (Vec<&Group<'_>>, Vec<&Group<'_>>) = groups
        .iter()
        .partition(|g| learned.suspects(&g.keys).is_empty());
    let (a, b) = if symbol.is_some() && !known.is_empty() && !new.is_empty() {
        (known, new)
    } else {
        let (a, b) = groups.split_at(groups.len() / 2);
        (a.to_vec(), b.to_vec())
    };
    let mut done = run_groups(backend, requests, &a, learned);
    done.extend(run_groups(backend, requests, &b, learned));
    done
}

/// Lines of a lowered module around its entry's body: `module ... {` and
/// `func.func ... {` before it, the return and two closing braces after.
const FRAME_LINES: usize = 5;

/// Which group of a batch the 1-based `line` of the batch's lowered text
/// belongs to, given the body lines of each group's own lowering (`bodies`,
/// in batch order) and the batch text's line count (`total`). The batch's
/// entry calls each group's module in order, and the lowering inlines the
/// calls (parameters and the result tuple print no line), so its body is the
/// groups' bodies one after the other. `None` for a line outside every body
/// or when the counts do not add up (then nothing is guessed).
fn group_at_line(bodies: &[usize], total: usize, line: usize) -> Option<usize> {
    if bodies.iter().sum::<usize>() + FRAME_LINES != total {
        return None;
    }
    // the body starts at line 3
    let mut at = line.checked_sub(3)?;
    for (k, &n) in bodies.iter().enumerate() {
        if at < n {
            return Some(k);
        }
        at -= n;
    }
    None
}

/// A failed batch: the error, and its lowered text (when it lowered).
struct Failed<E> {
    error: E,
    mlir: Option<String>,
}

fn run_once<B: RowRunner>(
    backend: &B,
    requests: &[BatchRequest<'_>],
    groups: &[&Group<'_>],
) -> Result<Vec<Answer>, Failed<B::Error>> {
    let modules: Vec<&Module> = groups.iter().map(|g| g.module).collect();
    let batch = batch_modules(&modules);
    let lowered = lower_module(&batch.module).map_err(|e| Failed {
        error: B::Error::from(e),
        mlir: None,
    })?;
    let failed = |error: B::Error| Failed {
        error,
        mlir: Some(lowered.mlir.clone()),
    };
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
    let outputs = backend
        .run_rows(&lowered, groups.len(), &args)
        .map_err(&failed)?;
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
            .ok_or_else(|| failed(B::output_error("batched outputs do not split back".into())))?;
        for (g, o) in groups.iter().zip(per_group) {
            if r < g.rows.len() {
                done.push((g.rows[r], o));
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;

    #[test]
    fn a_line_maps_to_the_group_whose_body_holds_it() {
        // bodies of 2, 3 and 1 lines: lines 3-4, 5-7, 8 of an 11-line text
        let bodies = [2, 3, 1];
        let at = |line| group_at_line(&bodies, 11, line);
        assert_eq!(
            (3..=8).map(at).collect::<Vec<_>>(),
            [0, 0, 1, 1, 1, 2].map(Some)
        );
        // the header, the closing lines, and beyond
        for line in [0, 1, 2, 9, 10, 11, 12] {
            assert_eq!(at(line), None, "line {line}");
        }
        // counts that do not add up guess nothing
        assert_eq!(group_at_line(&bodies, 12, 5), None);
    }

    #[test]
    fn each_op_of_a_lowered_batch_maps_to_its_own_module() {
        let texts = [
            "HloModule a\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
            "HloModule b\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  \
             ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[1,4,1,3] parameter(0)\n  \
             z = f32[] constant(0)\n  ROOT r = f32[1,2,1,1] reduce-window(p, z), \
             window={size=1x2x1x2 stride=2x2x2x2}, to_apply=add\n}\n",
            "HloModule c\nENTRY e {\n  p = s32[3] parameter(0)\n  q = s32[3] parameter(1)\n  \
             a = s32[3] multiply(p, q)\n  ROOT t = (s32[3], s32[3]) tuple(a, p)\n}\n",
            "HloModule d\nENTRY e {\n  p = f16[4] parameter(0)\n  ROOT c = f32[4] convert(p)\n}\n",
        ];
        let modules: Vec<Module> = texts.iter().map(|t| parse_module(t).unwrap()).collect();
        let bodies: Vec<usize> = modules
            .iter()
            .map(|m| lower_module(m).unwrap().mlir.lines().count() - FRAME_LINES)
            .collect();
        let refs: Vec<&Module> = modules.iter().collect();
        let mlir = lower_module(&batch_modules(&refs).module).unwrap().mlir;
        let total = mlir.lines().count();
        // one op of each module, found by its StableHLO name
        for (k, op) in ["negate", "reduce_window", "multiply", "convert"]
            .iter()
            .enumerate()
        {
            let line = mlir.lines().position(|l| l.contains(op)).unwrap() + 1;
            assert_eq!(
                group_at_line(&bodies, total, line),
                Some(k),
                "{op} at line {line} of\n{mlir}"
            );
        }
        // the reducer's add inside the region is module b's too
        let inner = mlir
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("stablehlo.add"))
            .map(|(i, _)| i + 1)
            .next()
            .unwrap();
        assert_eq!(group_at_line(&bodies, total, inner), Some(1));
    }
}
