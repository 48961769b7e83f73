//! The random-program fuzzer: grow a program, make its inputs legal, judge
//! the backend against the reference, minimize each failure (guarded by its
//! signature), and write one `.hlotest` reproducer per unique signature.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::differential::{differential, judge_outputs, run_backend, run_reference};
use super::random::random_program;
use crate::backend::Backend;
use crate::check::{ElementFailure, Verdict};
use crate::hlo::{verify, Computation, InstrId, Instruction, Module, Opcode};
use crate::inputs::{generate_inputs, Distribution};
use crate::isolate::{
    judge_module, render_arg, Case, Minimizer, MismatchKind, Oracle, Signature as IsolateSignature,
    Tested,
};
use crate::literal::Literal;

/// What the fuzzer is asked to do.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// Stop after this long.
    pub time: Duration,
    /// The run seed: program `i` is grown from a seed derived from it.
    pub seed: u64,
    /// Where reproducers are written (created if missing).
    pub out: PathBuf,
    /// At most this many steps per program.
    pub max_ops: usize,
    /// Stop after this many programs, if set (for tests).
    pub max_programs: Option<u64>,
    /// Stop at the first failure (for detection measurements).
    pub stop_at_first_failure: bool,
}

impl FuzzOptions {
    /// Options for `time`, seed 0, writing to `out`.
    pub fn new(time: Duration, out: impl Into<PathBuf>) -> FuzzOptions {
        FuzzOptions {
            time,
            seed: 0,
            out: out.into(),
            max_ops: 8,
            max_programs: None,
            stop_at_first_failure: false,
        }
    }
}

/// A failure's signature: the culprit opcode and the kind of mismatch.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FailureSignature {
    /// The instruction the disagreement starts at.
    pub culprit: Opcode,
    /// `values`, `non-finite`, `shape`, `backend-failed`, `reference-failed`, `both-failed-differently`.
    pub kind: &'static str,
}

impl std::fmt::Display for FailureSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.culprit, self.kind)
    }
}

/// Counters, as the progress line shows them.
#[derive(Clone, Debug, Default)]
pub struct FuzzProgress {
    /// Programs grown.
    pub programs: u64,
    /// Programs judged (the others were skipped: no legal inputs, or unsupported).
    pub judged: u64,
    /// Programs that disagreed, with an instruction wrong given its own operands.
    pub failures: u64,
    /// Programs that disagreed only by amplified rounding (no instruction wrong locally).
    pub amplified: u64,
    /// Unique failure signatures.
    pub unique: u64,
    /// Time since the start.
    pub elapsed: Duration,
}

impl FuzzProgress {
    /// Programs per second so far.
    pub fn rate(&self) -> f64 {
        self.programs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl std::fmt::Display for FuzzProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz: {} programs ({:.0}/s), {} judged, {} failures, {} unique signatures, {} amplified-only",
            self.programs,
            self.rate(),
            self.judged,
            self.failures,
            self.unique,
            self.amplified
        )
    }
}

/// What a fuzz run found.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    /// The final counters.
    pub progress: FuzzProgress,
    /// Each unique signature and the reproducer written for it.
    pub found: Vec<(FailureSignature, PathBuf)>,
    /// Time to the first failure, if any.
    pub first_failure: Option<Duration>,
}

/// Why a fuzz run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The output directory could not be created or written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The mismatch kind of a disagreeing verdict (the names `.hlotest` expectations use).
pub fn mismatch_kind(verdict: &Verdict) -> Option<&'static str> {
    match verdict {
        Verdict::Mismatch(r) => {
            let non_finite = r.outputs.iter().flat_map(|o| &o.worst).any(|w| {
                matches!(
                    w.failure,
                    ElementFailure::NanClass | ElementFailure::Infinity
                )
            });
            Some(if non_finite { "non-finite" } else { "values" })
        }
        Verdict::ShapeMismatch { .. } => Some("shape"),
        Verdict::OnlyOneFailed { failed, .. } => Some(match failed {
            crate::check::Side::Backend => "backend-failed",
            crate::check::Side::Reference => "reference-failed",
        }),
        Verdict::BothFailedDifferently { .. } => Some("both-failed-differently"),
        Verdict::Agree(_) | Verdict::BothFailedAlike { .. } | Verdict::Skipped { .. } => None,
    }
}

/// The seed of program `i` of a run.
fn program_seed(run: u64, i: u64) -> u64 {
    let mut z = run ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^ (z >> 27)
}

/// The sub-program computing `root` of the entry computation: unused
/// instructions dropped, every parameter kept (so the same arguments fit).
fn with_root(module: &Module, root: InstrId) -> Option<Module> {
    let entry = module.entry_computation();
    let mut keep = vec![false; entry.instructions.len()];
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if std::mem::replace(keep.get_mut(id.index())?, true) {
            continue;
        }
        stack.extend(entry.instr(id).operands.iter().copied());
    }
    let mut new_id = vec![None; entry.instructions.len()];
    let mut instructions = Vec::new();
    for (i, ins) in entry.instructions.iter().enumerate() {
        if !keep[i] && ins.opcode != Opcode::Parameter {
            continue;
        }
        let mut ins = ins.clone();
        ins.operands = ins
            .operands
            .iter()
            .map(|o| new_id[o.index()].map(InstrId))
            .collect::<Option<Vec<_>>>()?;
        new_id[i] = Some(instructions.len() as u32);
        instructions.push(ins);
    }
    let mut out = module.clone();
    let e = out.entry.index();
    out.computations[e] = Computation {
        name: entry.name.clone(),
        instructions,
        root: InstrId(new_id[root.index()]?),
        other: entry.other.clone(),
    };
    verify(&out).ok()?;
    Some(out)
}

/// One instruction of the entry computation alone, its operands made parameters.
fn single_op(module: &Module, id: InstrId) -> Option<Module> {
    let entry = module.entry_computation();
    let ins = entry.instr(id);
    let mut instructions = Vec::new();
    for (k, o) in ins.operands.iter().enumerate() {
        let mut p = Instruction::new(
            format!("operand.{k}"),
            Opcode::Parameter,
            entry.instr(*o).shape.clone(),
            Vec::new(),
        );
        p.attrs.parameter_number = Some(k as i64);
        instructions.push(p);
    }
    let mut op = ins.clone();
    op.operands = (0..ins.operands.len() as u32).map(InstrId).collect();
    instructions.push(op);
    let mut out = module.clone();
    let e = out.entry.index();
    out.computations[e] = Computation {
        name: entry.name.clone(),
        root: InstrId(instructions.len() as u32 - 1),
        instructions,
        other: entry.other.clone(),
    };
    verify(&out).ok()?;
    Some(out)
}

/// Where a disagreement starts: the first instruction whose value on the
/// backend differs from the reference applied to the backend's own operand
/// values (so an error inherited from its operands and amplified, e.g. by `tan`
/// near a pole, is not blamed on it). None: no instruction is wrong locally.
fn local_culprit(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Option<(InstrId, FailureSignature)> {
    let entry = module.entry_computation();
    let numerics = backend.numerics();
    let mut values: Vec<Option<Literal>> = vec![None; entry.instructions.len()];
    for (i, ins) in entry.instructions.iter().enumerate() {
        let id = InstrId(i as u32);
        if ins.opcode == Opcode::Parameter {
            values[i] = ins
                .attrs
                .parameter_number
                .and_then(|n| args.get(n as usize).cloned());
            continue;
        }
        let prefix = with_root(module, id)?;
        let actual = run_backend(backend, &prefix, args);
        let operands: Option<Vec<Literal>> = ins
            .operands
            .iter()
            .map(|o| values[o.index()].clone())
            .collect();
        let (Some(operands), Some(single)) = (operands, single_op(module, id)) else {
            return None;
        };
        let expected = run_reference(&single, &operands);
        let verdict = judge_outputs(&single, &operands, &expected, &actual, &numerics, false);
        if let Some(kind) = mismatch_kind(&verdict) {
            let signature = FailureSignature {
                culprit: ins.opcode,
                kind,
            };
            return Some((id, signature));
        }
        // a tuple-shaped value is not an operand of a later local check
        values[i] = actual
            .outputs()
            .and_then(|o| (o.len() == 1).then(|| o[0].clone()));
    }
    None
}

/// Judges `module` with legal inputs from `seed` locally: the culprit's signature, if any.
fn failure_signature(
    backend: &dyn Backend,
    module: &Module,
    seed: u64,
) -> Option<FailureSignature> {
    let args = generate_inputs(module, Distribution::Uniform, seed)
        .ok()?
        .args;
    let whole = differential(backend, module, &args, false);
    mismatch_kind(&whole.verdict)?;
    local_culprit(backend, module, &args).map(|(_, s)| s)
}

/// A minimized failure.
struct Minimized {
    module: Module,
}

/// Minimizes a failing program by moving its root to the culprit and dropping
/// what no longer feeds it; the reduction is kept only when the reduced
/// program fails with the same signature on inputs from the same seed.
fn minimize(
    backend: &dyn Backend,
    module: &Module,
    seed: u64,
    culprit: InstrId,
    signature: FailureSignature,
) -> Minimized {
    let reduced = with_root(module, culprit)
        .filter(|m| failure_signature(backend, m, seed).as_ref() == Some(&signature));
    Minimized {
        module: reduced.unwrap_or_else(|| module.clone()),
    }
}

/// Minimizes with the isolation minimizer (its reduction passes, guarded by
/// its signature) starting from the program cut at the culprit, on the
/// program's own arguments. None when the isolation judge does not see the
/// cut program fail with the culprit at its root.
fn isolate_minimized(
    backend: &dyn Backend,
    prefix: &Module,
    args: &[Literal],
    culprit: Opcode,
) -> Option<(Case, MismatchKind)> {
    let oracle = Oracle::Exact;
    let tested = Tested::new(backend);
    let kind = MismatchKind::of(&judge_module(prefix, args, &oracle, &tested))?;
    let minimizer = Minimizer {
        oracle: &oracle,
        tested: &tested,
        signature: IsolateSignature {
            opcode: culprit,
            kind,
            fusion: None,
        },
    };
    let case = Case {
        module: prefix.clone(),
        args: args.to_vec(),
    };
    if !minimizer.fails_same_way(&case) {
        return None;
    }
    Some((minimizer.minimize(case, &mut |_| {}).case, kind))
}

/// The `.hlotest` text of a reproducer with inline arguments (`// arg:` lines).
pub fn hlotest_inline_text(
    module: &Module,
    args: &[Literal],
    backend: &str,
    kind: &str,
    note: &str,
) -> String {
    let mut s = format!(
        "// fuzz: {note}\n// run: backends={backend} tolerance=default inputs=inline\n// expect: mismatch {kind}\n"
    );
    for a in args {
        s.push_str(&format!("// arg: {}\n", render_arg(a)));
    }
    s.push_str(&module.to_string());
    s
}

/// The `.hlotest` text of a reproducer.
pub fn hlotest_text(
    module: &Module,
    backend: &str,
    seed: u64,
    signature: &FailureSignature,
    note: &str,
) -> String {
    format!(
        "// fuzz: {note}\n// run: backends={backend} tolerance=default inputs=seed:{seed}\n// expect: mismatch {}\n{module}",
        signature.kind
    )
}

fn write(path: &Path, text: &str) -> Result<(), FuzzError> {
    std::fs::write(path, text).map_err(|source| FuzzError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Runs the fuzzer against `backend` (named `backend_name` in reproducers);
/// `progress` is called about once a second and at the end.
pub fn fuzz(
    backend: &dyn Backend,
    backend_name: &str,
    options: &FuzzOptions,
    progress: &mut dyn FnMut(&FuzzProgress),
) -> Result<FuzzReport, FuzzError> {
    std::fs::create_dir_all(&options.out).map_err(|source| FuzzError::Write {
        path: options.out.display().to_string(),
        source,
    })?;
    let start = Instant::now();
    let mut report = FuzzReport::default();
    let mut seen: BTreeSet<FailureSignature> = BTreeSet::new();
    let mut last_progress = Instant::now();
    let mut i = 0u64;
    while start.elapsed() < options.time && options.max_programs.is_none_or(|n| i < n) {
        let seed = program_seed(options.seed, i);
        i += 1;
        report.progress.programs += 1;
        let Ok(module) = random_program(seed, options.max_ops) else {
            continue;
        };
        let Ok(inputs) = generate_inputs(&module, Distribution::Uniform, seed) else {
            continue;
        };
        let args: Vec<Literal> = inputs.args;
        let d = differential(backend, &module, &args, false);
        if !d.verdict.is_agreement() && !d.verdict.is_disagreement() {
            continue;
        }
        report.progress.judged += 1;
        if mismatch_kind(&d.verdict).is_some() {
            let Some((culprit, signature)) = local_culprit(backend, &module, &args) else {
                // every instruction is right given its operands: rounding amplified
                report.progress.amplified += 1;
                continue;
            };
            report.progress.failures += 1;
            report.first_failure.get_or_insert(start.elapsed());
            if seen.insert(signature.clone()) {
                let name = format!(
                    "{}-{}-{seed:016x}.hlotest",
                    signature.culprit.name(),
                    signature.kind
                );
                let path = options.out.join(name);
                let before = module.instruction_count();
                let isolated = with_root(&module, culprit)
                    .and_then(|p| isolate_minimized(backend, &p, &args, signature.culprit));
                let text = match isolated {
                    Some((case, kind)) => hlotest_inline_text(
                        &case.module,
                        &case.args,
                        backend_name,
                        kind.name(),
                        &format!(
                            "program seed {seed:#x}, culprit {signature}, minimized by the isolation minimizer from {before} to {} instructions",
                            case.module.instruction_count()
                        ),
                    ),
                    None => {
                        let min = minimize(backend, &module, seed, culprit, signature.clone());
                        let note = format!(
                            "program seed {seed:#x}, culprit {signature}, cut at the culprit: {before} to {} instructions",
                            min.module.instruction_count()
                        );
                        hlotest_text(&min.module, backend_name, seed, &signature, &note)
                    }
                };
                write(&path, &text)?;
                report.found.push((signature, path));
                report.progress.unique = seen.len() as u64;
            }
            if options.stop_at_first_failure {
                break;
            }
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            report.progress.elapsed = start.elapsed();
            progress(&report.progress);
            last_progress = Instant::now();
        }
    }
    report.progress.elapsed = start.elapsed();
    progress(&report.progress);
    Ok(report)
}

#[cfg(test)]
mod tests;
