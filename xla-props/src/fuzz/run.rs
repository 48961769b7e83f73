//! The random-program fuzzer: grow a program, make its inputs (from a mix of
//! distributions), run it on the reference and the backend, judge every
//! instruction of a program that differs on the backend's own operand values
//! with the full tolerance model, minimize each failure (guarded by its
//! signature), and write one `.hlotest` reproducer per unique signature.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::backend::{run_module, run_reference, Backend};
use crate::check::{
    compare, judge_readings, judge_with_alternatives, unflushed_operands, CompareContext,
    ErrorSpec, FailureSignature, MismatchKind, Numerics, Produced, Verdict,
};
use crate::filetest::{Inputs, JudgeMode, Reproducer};
use crate::hlo::rewrite::with_root;
use crate::hlo::{verify, Computation, InstrId, Instruction, Module, Opcode};
use crate::inputs::{generate_inputs, Distribution, SplitMix};
use crate::isolate::{dead_code_eliminated, judge_module, Case, Minimizer, Oracle, Tested};
use crate::literal::Literal;
use crate::programs::random_program;

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
    /// This campaign's part of the run: `(index, count)`, 0-based. Part `k`
    /// of `n` grows programs `k`, `k + n`, `k + 2n`, ... of the run, so the
    /// parts never grow the same program and together grow what one
    /// machine would. `(0, 1)`: the whole run.
    pub shard: (u64, u64),
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
            shard: (0, 1),
        }
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
    /// Programs grown up to and including the first failing one, if any.
    pub first_failure_program: Option<u64>,
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

/// The seed of program `i` of a run: a bijection of `i` for a given run
/// (each step is invertible), so distinct programs of a run never share a seed.
fn program_seed(run: u64, i: u64) -> u64 {
    let mut z = run ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^ (z >> 27)
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

/// The input distributions a fuzz run mixes, with weights: legal-domain
/// uniform inputs most often, edge values (±0, ±inf, NaN, subnormals, convert
/// ties, integer MIN/MAX, zero divisors) about a third of the time, ties for
/// sorts and scatters, and out-of-range indices for the clamping semantics.
pub const INPUT_MIX: &[(Distribution, u32)] = &[
    (Distribution::Uniform, 4),
    (Distribution::EdgeValues, 2),
    (Distribution::IntegerEdges, 1),
    (Distribution::Duplicates, 2),
    (Distribution::OutOfRangeIndices, 1),
    (Distribution::LogUniform, 1),
];

/// The distribution program `seed` draws its inputs from (see [`INPUT_MIX`]).
pub fn program_distribution(seed: u64) -> Distribution {
    let total: u32 = INPUT_MIX.iter().map(|(_, w)| w).sum();
    let mut r = (SplitMix::new(seed ^ 0x5eed_d157).next_u64() % u64::from(total)) as u32;
    for &(d, w) in INPUT_MIX {
        if r < w {
            return d;
        }
        r -= w;
    }
    Distribution::Uniform
}

/// Judges one instruction, alone in `single` with its operands made
/// parameters, run on the backend's own operand values: the reference's
/// result against the backend's with the full tolerance model, the op's
/// default error spec (exact for correctly rounded ops and converts), the
/// backend's declared `Numerics` (approximate functions, flushing, with the
/// reference re-run on flushed operands, and reassociation within its bound,
/// and the propagated bound). No per-program slack: an error a program
/// amplifies is not blamed on the op that amplifies it, and a correctly
/// rounded op that is one ULP off is a bug.
///
/// ```
/// use xla_props::backend::{Backend, Interpreter};
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::backend::run_reference;
/// use xla_props::check::Produced;
/// use xla_props::fuzz::judge_instruction;
/// let m = parse_module(
///     "HloModule m\nENTRY main { x = f32[1] parameter(0)\n ROOT y = bf16[1] convert(x) }",
/// )
/// .unwrap();
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1]), &[1.005859375]).unwrap();
/// let expected = run_reference(&m, &[x.clone()]);
/// let bf16 = |v: f64| Literal::from_f64s(&ArrayShape::new(ElementType::Bf16, vec![1]), &[v]).unwrap();
/// let numerics = Interpreter::default().numerics();
/// // rounded to nearest: 1 + 2^-7; truncated: 1, one bf16 ULP off, a bug
/// let rounded = Produced::Ok(vec![bf16(1.0078125)]);
/// assert!(judge_instruction(&m, &[x.clone()], &expected, &rounded, &numerics).is_agreement());
/// let truncated = Produced::Ok(vec![bf16(1.0)]);
/// assert!(judge_instruction(&m, &[x], &expected, &truncated, &numerics).is_disagreement());
/// ```
pub fn judge_instruction(
    single: &Module,
    operands: &[Literal],
    expected: &Produced,
    actual: &Produced,
    numerics: &Numerics,
) -> Verdict {
    judge_with_alternatives(
        single,
        operands,
        expected,
        actual,
        numerics,
        &[],
        &run_reference,
    )
}

/// Whether two runs produced the same bits (NaNs by class), or failed alike.
fn identical(expected: &Produced, actual: &Produced) -> bool {
    match (expected.outputs(), actual.outputs()) {
        (Some(e), Some(a)) => matches!(
            compare(e, a, &ErrorSpec::exact(), &CompareContext::new()),
            Verdict::Agree(_)
        ),
        _ => false,
    }
}

/// A located failure: the culprit, its signature, and the backend's values of its operands.
struct Culprit {
    id: InstrId,
    signature: FailureSignature,
    operands: Vec<Literal>,
}

/// Where a disagreement starts: the first instruction whose value on the
/// backend differs from the reference applied to the backend's own operand
/// values ([`judge_instruction`]); so an error inherited from its operands
/// and amplified, e.g. by `tan` near a pole, is not blamed on it. The backend
/// computes each value in its context (it runs the program cut at that
/// instruction), so rewrites that look at neighbours are seen. None: no
/// instruction is wrong locally.
fn local_culprit(backend: &dyn Backend, module: &Module, args: &[Literal]) -> Option<Culprit> {
    let entry = module.entry_computation();
    let numerics = backend.numerics();
    // the backend's value of each instruction, tuples flattened
    let mut values: Vec<Option<Vec<Literal>>> = vec![None; entry.instructions.len()];
    for (i, ins) in entry.instructions.iter().enumerate() {
        let id = InstrId(i as u32);
        match ins.opcode {
            Opcode::Parameter => {
                values[i] = ins
                    .attrs
                    .parameter_number
                    .and_then(|n| args.get(n as usize).cloned())
                    .map(|a| vec![a]);
                continue;
            }
            // structure only: no computation to judge
            Opcode::Tuple => {
                values[i] = ins
                    .operands
                    .iter()
                    .map(|o| values[o.index()].clone())
                    .collect::<Option<Vec<_>>>()
                    .map(|v| v.concat());
                continue;
            }
            Opcode::GetTupleElement => {
                let k = ins.attrs.index.unwrap_or(0) as usize;
                values[i] = ins
                    .operands
                    .first()
                    .and_then(|o| values[o.index()].as_ref())
                    .and_then(|v| v.get(k).cloned())
                    .map(|v| vec![v]);
                continue;
            }
            _ => {}
        }
        let prefix = with_root(module, id)?;
        let actual = Produced::from(run_module(backend, &prefix, args));
        let operands: Option<Vec<Literal>> = ins
            .operands
            .iter()
            .map(|o| {
                values[o.index()]
                    .as_ref()
                    .and_then(|v| (v.len() == 1).then(|| v[0].clone()))
            })
            .collect();
        let (Some(operands), Some(single)) = (operands, single_op(module, id)) else {
            return None;
        };
        if let Produced::Unsupported(_) = actual {
            return None;
        }
        let unflushed =
            || unflushed_operands(module, args, ins, &operands, &numerics, &run_reference);
        let verdict = judge_readings(
            &single,
            &operands,
            &actual,
            &numerics,
            unflushed,
            &run_reference,
        );
        if let Some(kind) = verdict.kind() {
            let signature = FailureSignature::new(ins.opcode, kind);
            return Some(Culprit {
                id,
                signature,
                operands,
            });
        }
        values[i] = actual.outputs().map(<[Literal]>::to_vec);
    }
    None
}

/// Judges `module` on `args` the fuzzer's way: the culprit's signature, if any.
fn failure_signature(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Option<FailureSignature> {
    let expected = run_reference(module, args);
    let actual = Produced::from(run_module(backend, module, args));
    if identical(&expected, &actual) {
        return None;
    }
    local_culprit(backend, module, args).map(|c| c.signature)
}

/// A minimized failure.
struct Minimized {
    module: Module,
}

/// Minimizes a failing program by moving its root to the culprit and dropping
/// what no longer feeds it; the reduction is kept only when the reduced
/// program fails with the same signature on the same arguments.
fn minimize(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
    culprit: InstrId,
    signature: FailureSignature,
) -> Minimized {
    let reduced = with_root(module, culprit)
        .filter(|m| failure_signature(backend, m, args).as_ref() == Some(&signature));
    Minimized {
        module: reduced.unwrap_or_else(|| module.clone()),
    }
}

/// The culprit alone, on the backend's values of its operands, when the
/// backend still gets it wrong there (a bug that needs its neighbours, such
/// as a rewrite of `convert(convert(x))`, does not reproduce alone).
fn alone(backend: &dyn Backend, module: &Module, culprit: &Culprit) -> Option<Case> {
    let single = single_op(module, culprit.id)?;
    let actual = Produced::from(run_module(backend, &single, &culprit.operands));
    let verdict = judge_readings(
        &single,
        &culprit.operands,
        &actual,
        &backend.numerics(),
        || None,
        &run_reference,
    );
    (verdict.kind() == Some(culprit.signature.kind)).then(|| Case {
        module: dead_code_eliminated(&single),
        args: culprit.operands.clone(),
    })
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
    let kind = judge_module(prefix, args, &oracle, &tested).kind()?;
    let minimizer = Minimizer {
        oracle: &oracle,
        tested: &tested,
        signature: FailureSignature::new(culprit, kind),
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
    fuzz_reproducer(module, backend, Inputs::Inline, args, kind, note)
}

/// The `.hlotest` text of a reproducer.
pub fn hlotest_text(
    module: &Module,
    backend: &str,
    seed: u64,
    signature: &FailureSignature,
    note: &str,
) -> String {
    let kind = signature.kind.name();
    fuzz_reproducer(module, backend, Inputs::Seed(seed), &[], kind, note)
}

/// A fuzz reproducer: `module` on `backend` fails with a mismatch of `kind`.
fn fuzz_reproducer(
    module: &Module,
    backend: &str,
    inputs: Inputs,
    args: &[Literal],
    kind: &str,
    note: &str,
) -> String {
    Reproducer {
        comments: vec![format!("fuzz: {note}")],
        backends: vec![backend.to_string()],
        tolerance: JudgeMode::Default,
        inputs,
        args,
        expect: format!("mismatch {kind}"),
        expect_for: vec![],
        module,
    }
    .text()
}

fn write(path: &Path, text: &str) -> Result<(), FuzzError> {
    std::fs::write(path, text).map_err(|source| FuzzError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// A failing program, its arguments and where it goes wrong.
struct Found {
    module: Module,
    args: Vec<Literal>,
    distribution: Distribution,
    culprit: Culprit,
}

/// Grows program `seed`, makes its inputs, runs it on the reference and on
/// the backend; a program whose outputs differ in any bit is judged
/// instruction by instruction. Counts judged and amplified-only programs.
fn fuzz_one(
    backend: &dyn Backend,
    seed: u64,
    max_ops: usize,
    progress: &mut FuzzProgress,
) -> Option<Found> {
    let module = dead_code_eliminated(&random_program(seed, max_ops).ok()?);
    let distribution = program_distribution(seed);
    let args = generate_inputs(&module, distribution, seed)
        .ok()
        .filter(|g| g.unmet.is_empty())?
        .args;
    let expected = run_reference(&module, &args);
    let actual = Produced::from(run_module(backend, &module, &args));
    match (&expected, &actual) {
        (Produced::Unsupported(_), _) | (_, Produced::Unsupported(_)) => return None,
        (e, a) if e.failure().is_some_and(|f| a.failure() == Some(f)) => return None,
        _ => {}
    }
    progress.judged += 1;
    if identical(&expected, &actual) {
        return None;
    }
    let Some(culprit) = local_culprit(backend, &module, &args) else {
        // every instruction is right given its operands: rounding amplified
        progress.amplified += 1;
        return None;
    };
    Some(Found {
        module,
        args,
        distribution,
        culprit,
    })
}

/// Minimizes a failure and writes its `.hlotest` (arguments inline):
/// the culprit alone on its operands' values when that still fails, else the
/// isolation minimizer's reduction of the program cut at the culprit, else
/// that cut program itself.
fn write_reproducer(
    backend: &dyn Backend,
    backend_name: &str,
    found: &Found,
    seed: u64,
    out: &Path,
) -> Result<PathBuf, FuzzError> {
    let signature = &found.culprit.signature;
    let name = format!(
        "{}-{}-{seed:016x}.hlotest",
        signature.opcode.name(),
        signature.kind
    );
    let path = out.join(name);
    let before = found.module.instruction_count();
    let origin = format!(
        "program seed {seed:#x} ({} inputs), culprit {signature}",
        found.distribution
    );
    let text = if let Some(case) = alone(backend, &found.module, &found.culprit) {
        hlotest_inline_text(
            &case.module,
            &case.args,
            backend_name,
            signature.kind.name(),
            &format!("{origin}, alone on the backend's values of its operands (from {before} instructions)"),
        )
    } else if let Some((case, kind)) = with_root(&found.module, found.culprit.id)
        .and_then(|p| isolate_minimized(backend, &p, &found.args, signature.opcode))
    {
        hlotest_inline_text(
            &case.module,
            &case.args,
            backend_name,
            kind.name(),
            &format!(
                "{origin}, minimized by the isolation minimizer from {before} to {} instructions",
                case.module.instruction_count()
            ),
        )
    } else {
        let min = minimize(
            backend,
            &found.module,
            &found.args,
            found.culprit.id,
            signature.clone(),
        );
        hlotest_inline_text(
            &min.module,
            &found.args,
            backend_name,
            signature.kind.name(),
            &format!(
                "{origin}, cut at the culprit: {before} to {} instructions",
                min.module.instruction_count()
            ),
        )
    };
    write(&path, &text)?;
    Ok(path)
}

/// The seeds of the first `count` programs a campaign grows (part `shard`
/// of its run, see [`FuzzOptions::shard`]).
///
/// ```
/// use xla_props::fuzz::program_seeds;
/// let whole = program_seeds(7, (0, 1), 6);
/// let (a, b) = (program_seeds(7, (0, 2), 3), program_seeds(7, (1, 2), 3));
/// assert!(a.iter().all(|s| !b.contains(s)));
/// assert_eq!(vec![a[0], b[0], a[1], b[1], a[2], b[2]], whole);
/// ```
pub fn program_seeds(run: u64, shard: (u64, u64), count: u64) -> Vec<u64> {
    let (part, parts) = shard;
    (0..count)
        .map(|i| program_seed(run, i * parts.max(1) + part))
        .collect()
}

/// Runs the fuzzer against `backend` (named `backend_name` in reproducers);
/// `progress` is called about once a second and at the end. Reproducers are
/// named by their program's seed, so the parts of a sharded run
/// ([`FuzzOptions::shard`]) can share one findings directory.
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
        let (part, parts) = options.shard;
        let seed = program_seed(options.seed, i * parts.max(1) + part);
        i += 1;
        report.progress.programs += 1;
        if let Some(found) = fuzz_one(backend, seed, options.max_ops, &mut report.progress) {
            report.progress.failures += 1;
            report.first_failure.get_or_insert(start.elapsed());
            report.first_failure_program.get_or_insert(i);
            if seen.insert(found.culprit.signature.clone()) {
                let path = write_reproducer(backend, backend_name, &found, seed, &options.out)?;
                report.found.push((found.culprit.signature.clone(), path));
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
