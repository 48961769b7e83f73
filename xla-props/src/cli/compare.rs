//! `xla-props compare`: generates legal inputs for a module (or reads them
//! with `--arg`), runs the reference and a backend on them, and judges with
//! the tolerance model. `--case NAME` replays a suite case exactly
//! (`run_case`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use super::args::{
    ArgFilesArgs, CaseBackendArgs, JudgingArgs, ModuleArgs, ModuleOrCaseArgs, OutputShardingArgs,
    ReferenceArgs, SeedArgs,
};
use super::CliError;
use crate::backend::{self, run_module, run_reference};
use crate::check::{
    Judge, KnownBug, KnownBugNote, MismatchKind, Numerics, Policy, Produced, Side, Verdict,
};
use crate::hlo::Module;
use crate::inputs::{generate_inputs, Distribution, GeneratedInputs};
use crate::isolate::{
    explain_departure_on, known_bugs_in_own_run, known_bugs_of_unit, Departure, Oracle, Tested,
};
use crate::literal::Literal;
use crate::property::{BackendId, CaseContext, CaseId, Failure, Outcome, ReferenceCache};

/// Arguments of `xla-props compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The module, or the suite case to replay.
    #[command(flatten)]
    pub module: ModuleOrCaseArgs,
    /// The backend under test.
    #[command(flatten)]
    pub tested: CaseBackendArgs,
    /// Argument files instead of generated inputs.
    #[command(flatten)]
    pub arg_files: ArgFilesArgs,
    /// What the backend is judged against.
    #[command(flatten)]
    pub oracle: ReferenceArgs,
    /// The seed of generated inputs.
    #[command(flatten)]
    pub generated: SeedArgs,
    /// How inputs are drawn and the result judged.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Also write the verdict, the input intervals and the reference's
    /// non-finite output count as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also compare every fusion and top-level instruction on the
    /// reference's own values of its operands, and report each local
    /// disagreement (even when the output agrees; then the exit code is 1).
    #[arg(long)]
    pub deep: bool,
    /// Draw this many input sets (seeds from `--seed` on, crossed with the
    /// finite distributions from `--distribution` on) and report the worst.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub trials: u64,
    /// How a multi-device module's outputs are put together.
    #[command(flatten)]
    pub sharding: OutputShardingArgs,
}

/// The distributions `--trials` cycles through after the one asked for.
const TRIAL_DISTRIBUTIONS: &[Distribution] = &[
    Distribution::Uniform,
    Distribution::LogUniform,
    Distribution::Duplicates,
];

/// The seed and distribution of trial `t`.
fn trial(first: Distribution, seed: u64, t: u64) -> (u64, Distribution) {
    let mut dists = vec![first];
    dists.extend(TRIAL_DISTRIBUTIONS.iter().copied().filter(|&d| d != first));
    let n = dists.len() as u64;
    (seed.wrapping_add(t / n), dists[(t % n) as usize])
}

/// How bad a verdict is, for `--trials`: disagreement, then not judged, then agreement.
fn badness(v: &Verdict) -> u8 {
    if v.is_disagreement() {
        2
    } else if v.is_agreement() {
        0
    } else {
        1
    }
}

/// Runs `name` (a backend, or `reference`) on `module`.
fn run_named(
    name: &str,
    module: &Module,
    args: &[Literal],
) -> Result<(Produced, Numerics, Vec<KnownBug>), CliError> {
    if name == "reference" {
        return Ok((run_reference(module, args), Numerics::exact(), Vec::new()));
    }
    let b =
        backend::create(name).map_err(|e| CliError::input(format!("xla-props compare: {e}")))?;
    let numerics = b.numerics();
    let known_bugs = b.known_bugs().to_vec();
    let produced = Produced::from(run_module(b.as_ref(), module, args));
    Ok((produced, numerics, known_bugs))
}

/// Runs the command; returns the exit code ([`exit_code`]: 0 agree, 1
/// disagree, 2 error or skipped, 3 the backend rejected or crashed).
pub fn run(args: &CompareArgs) -> Result<u8, CliError> {
    if let Some(name) = &args.module.case {
        return run_case(name, args);
    }
    let (Some(module_args), Some(tested)) = (args.module.module(), args.tested.backend.as_deref())
    else {
        return Err(CliError::input(
            "xla-props compare: a module file and --backend are needed (or --case NAME)",
        ));
    };
    let file = module_args.name();
    let mut module = module_args.load()?;
    super::set_output_shardings(&mut module, &args.sharding.output_shardings)?;
    let distribution = args.judging.distribution("compare")?;
    let given = given_inputs(&module, &module_args, args)?;
    let mut worst: Option<(u64, Distribution, GeneratedInputs, CompareReport)> = None;
    let trials = if given.is_some() { 1 } else { args.trials };
    for t in 0..trials {
        let (seed, distribution) = trial(distribution, args.generated.seed, t);
        let inputs = match &given {
            Some((literals, _)) => GeneratedInputs::given(literals.clone()),
            None => generate_inputs(&module, distribution, seed)
                .map_err(|e| CliError::input(format!("{file}: failed to generate inputs: {e}")))?,
        };
        let report = compare_module(&module, &inputs, tested, args)?;
        if worst
            .as_ref()
            .is_none_or(|w| badness(&report.verdict) > badness(&w.3.verdict))
        {
            worst = Some((seed, distribution, inputs, report));
        }
    }
    let Some((seed, distribution, inputs, report)) = worst else {
        return Err(CliError::input(
            "xla-props compare: --trials must be at least 1",
        ));
    };
    if args.trials > 1 {
        say!(
            "trials: {}, worst: seed {seed}, {distribution}",
            args.trials
        );
    }
    print_inputs(&inputs, given.map(|g| g.1), seed, distribution);
    if report.reference_nonfinite_outputs > 0 {
        say!(
            "reference produced {} non-finite output elements",
            report.reference_nonfinite_outputs
        );
    }
    say!("{}", report.verdict);
    if let Some(d) = &report.departure {
        match d {
            Departure::Unit(l) => {
                say!("culprit: {}", super::isolate::describe(l));
                for b in &report.culprit_known_bugs {
                    say!(
                        "  the culprit alone is known bug {} ({})",
                        b.id,
                        b.documented
                    );
                }
            }
            Departure::Certified(c) => say!("{c}"),
        }
    }
    let deep = if args.deep {
        let d = super::deep::deep_compare(
            &file,
            &module,
            &inputs.args,
            tested,
            &args.oracle.reference,
        )?;
        say!(
            "deep: {} top-level instructions compared on the reference's values, {} disagree",
            d.candidates,
            d.local_disagreements.len()
        );
        for l in &d.local_disagreements {
            say!("  local disagreement: {}", super::isolate::describe(l));
        }
        Some(d)
    } else {
        None
    };
    if let Some(path) = &args.json {
        let mut json = serde_json::json!({
            "file": file,
            "backend": tested,
            "reference": args.oracle.reference,
            "seed": seed,
            "distribution": distribution,
            "trials": args.trials,
            "warnings": inputs
                .point_parameters
                .iter()
                .map(|&k| format!("parameter {k} is narrowed to the single value {}", inputs.intervals[k].lo))
                .collect::<Vec<_>>(),
            "verdict": report.verdict,
            "inputs": inputs,
            "input_digests": inputs.args.iter().map(input_digest).collect::<Vec<_>>(),
            "reference_nonfinite_outputs": report.reference_nonfinite_outputs,
            "departure": report.departure,
        });
        if let Some(d) = &deep {
            json["output_agrees"] = serde_json::json!(report.verdict.is_agreement());
            json["deep_candidates"] = serde_json::json!(d.candidates);
            json["local_disagreements"] = serde_json::json!(d.local_disagreements);
        }
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| CliError::input(format!("xla-props compare: cannot encode json: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| CliError::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    let masked = deep.is_some_and(|d| !d.local_disagreements.is_empty());
    Ok(exit_code(&report.verdict, masked))
}

/// The inputs given rather than drawn, and where they come from: the
/// `--arg` files, else a reproducer's own pinned inputs.
fn given_inputs(
    module: &Module,
    file: &ModuleArgs,
    args: &CompareArgs,
) -> Result<Option<(Vec<Literal>, &'static str)>, CliError> {
    if !args.arg_files.args.is_empty() {
        let files = super::read_arguments(module, &args.arg_files.args)?;
        return Ok(Some((files, "argument files")));
    }
    Ok(file
        .own_arguments()?
        .map(|own| (own, "arguments the reproducer brings")))
}

/// Says how the inputs were made: given (`--arg`), or drawn (the
/// distribution, seed, each parameter's interval and role, warnings, notes).
fn print_inputs(
    inputs: &GeneratedInputs,
    given: Option<&str>,
    seed: u64,
    distribution: Distribution,
) {
    if let Some(source) = given {
        say!("inputs: {} {source}", inputs.args.len());
        return;
    }
    say!(
        "inputs: {distribution}, seed {seed}, rejection sampling {}",
        if inputs.rejection_sampling_used {
            "used"
        } else {
            "not needed"
        }
    );
    for (k, i) in inputs.intervals.iter().enumerate() {
        match inputs.roles.get(k) {
            Some(r) if *r != crate::inputs::ParameterRole::Data => {
                say!("  parameter {k}: {i} ({r})")
            }
            _ => say!("  parameter {k}: {i}"),
        }
    }
    for &k in &inputs.point_parameters {
        say!(
            "warning: parameter {k} is narrowed to the single value {}: it carries no signal",
            inputs.intervals[k].lo
        );
    }
    for note in &inputs.notes {
        say!("note: {note}");
    }
}

/// An argument's digest, as `--json` writes it (`input_digests`): 64-bit
/// FNV-1a of its shape and its elements' bits, in hex. The same inputs give
/// the same digest, whether generated, read with `--arg` or replayed with `--case`.
pub(crate) fn input_digest(lit: &Literal) -> String {
    let mut h = crate::property::Fnv::new();
    h.write(lit.shape().to_string().as_bytes());
    h.write_elements(lit);
    format!("{:016x}", h.finish())
}

/// `compare`'s exit code for a verdict: 0 agree, 1 the values disagree
/// (or, with `--deep`, an instruction disagrees locally: `masked`), 2 not
/// judged (skipped, both sides failed), 3 the backend rejected or crashed
/// on a module the reference runs (a compile error, a crash, a timeout; a
/// known rejection too): no values to judge, and no claim that they are
/// wrong.
pub fn exit_code(verdict: &Verdict, masked: bool) -> u8 {
    match verdict {
        v if v.is_agreement() && masked => 1,
        v if v.is_agreement() => 0,
        Verdict::OnlyOneFailed {
            failed: Side::Backend,
            ..
        }
        | Verdict::KnownRejection { .. } => 3,
        // the values disagree; a known bug explains them (it is still wrong)
        Verdict::KnownBug { .. } => 1,
        v if v.is_disagreement() => 1,
        // skipped, or both sides failed: the program could not be judged
        _ => 2,
    }
}

/// The verdict of one comparison and what the reference produced.
struct CompareReport {
    verdict: Verdict,
    reference_nonfinite_outputs: u64,
    /// Why a disagreeing output departs (a unit, or the certificate of the
    /// units' agreement): only for value mismatches against the reference.
    departure: Option<Departure>,
    /// The backend's known bugs that explain the culprit unit, judged alone.
    culprit_known_bugs: Vec<crate::check::KnownBugNote>,
}

fn compare_module(
    module: &Module,
    inputs: &GeneratedInputs,
    tested: &str,
    args: &CompareArgs,
) -> Result<CompareReport, CliError> {
    let (expected, _, _) = run_named(&args.oracle.reference, module, &inputs.args)?;
    let (actual, numerics, known_bugs) = run_named(tested, module, &inputs.args)?;
    let reference_nonfinite_outputs = expected.outputs().map_or(0, |outs| {
        outs.iter()
            .flat_map(|l| (0..l.element_count()).map(move |i| l.get_f64(i)))
            .filter(|v| !v.is_finite())
            .count() as u64
    });
    let verdict = judge_compare(
        module,
        &inputs.args,
        &expected,
        &actual,
        &numerics,
        &known_bugs,
        args.oracle.reference == "reference",
        args.judging.strict_rounding,
    );
    let mut explained_by: Option<Vec<KnownBugNote>> = None;
    let (departure, culprit_known_bugs) =
        match (expected.outputs(), actual.outputs(), verdict.kind()) {
            (Some(e), Some(a), Some(MismatchKind::Values | MismatchKind::NonFinite))
                if args.oracle.reference == "reference" && tested != "reference" =>
            {
                let b = backend::create(tested)
                    .map_err(|e| CliError::input(format!("xla-props compare: {e}")))?;
                let t = Tested::new(b.as_ref());
                let values = Oracle::Exact.all_values(module, &inputs.args).ok();
                let d = values.as_deref().and_then(|v| {
                    explain_departure_on(module, &inputs.args, e, a, v, &t, Some(&verdict))
                });
                // whether the culprit is a documented bug of the backend
                let notes = match (&d, values.as_deref()) {
                    (Some(Departure::Unit(l)), Some(v)) => {
                        known_bugs_of_unit(module, v, l, &t, &known_bugs)
                    }
                    _ => Vec::new(),
                };
                // a known bug at the culprit: the whole departure explained
                // by known bugs and legal steps in the backend's own run
                if !notes.is_empty() {
                    explained_by = values.as_deref().and_then(|v| {
                        known_bugs_in_own_run(module, &inputs.args, a, v, &t, &known_bugs)
                    });
                }
                (d, notes)
            }
            _ => (None, Vec::new()),
        };
    let verdict = match (&departure, explained_by, verdict) {
        (Some(Departure::Certified(c)), _, v) if c.is_amplified() => v.amplified(),
        (_, Some(bugs), Verdict::Mismatch(mismatch)) => Verdict::KnownBug { bugs, mismatch },
        (_, _, v) => v,
    };
    Ok(CompareReport {
        verdict,
        reference_nonfinite_outputs,
        departure,
        culprit_known_bugs,
    })
}

/// How `xla-props compare` judges one run: the one judge against the
/// reference, as `vs_reference` judges. Known bugs are relative to the exact
/// reference, so they apply only when `exact_reference` (the expected side
/// is the reference evaluator, not another backend).
#[expect(clippy::too_many_arguments, reason = "the judge's inputs, each named")]
pub fn judge_compare(
    module: &Module,
    inputs: &[Literal],
    expected: &Produced,
    actual: &Produced,
    numerics: &Numerics,
    known_bugs: &[KnownBug],
    exact_reference: bool,
    strict_rounding: bool,
) -> Verdict {
    let bugs: &[KnownBug] = if exact_reference { known_bugs } else { &[] };
    let eval = |m: &Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
    Judge::new(numerics, bugs, Policy::Reference)
        .strict_rounding(strict_rounding)
        .judge(module, inputs, expected, actual, &eval)
}

// `--case NAME`: replays one suite case exactly as the suite runs it. The
// case rebuilds itself from its name (its module from the catalogue, its
// inputs from the one input generator, seeded from the name and `--seed`,
// the suite's run seed), runs the property's body on the case's backend (or
// `--backend`) against `--reference`, and reports the suite's verdict with
// the inputs' digests.

/// The outcome as one word (`report::Outcome::name`) and one line, and the
/// exit code: 0 the case passes (an unexpected pass too), 1 it fails (an
/// expected failure and a known bug's values too), 2 skipped, 3 the backend
/// rejected or crashed (as `compare`).
fn describe(outcome: &Outcome) -> (&'static str, String, u8) {
    let failed = |f: &Failure| f.verdict.as_ref().map_or(1, |v| exit_code(v, false).max(1));
    let line = match outcome {
        Outcome::Pass => ("the case passes".to_string(), 0),
        Outcome::XPass => (
            "the case passes (declared an expected failure)".to_string(),
            0,
        ),
        Outcome::Skip(why) => (format!("skipped: {why}"), 2),
        Outcome::Fail(f) => (format!("fails: {}", f.summary), failed(f)),
        Outcome::XFail(f) => (format!("fails as expected: {}", f.summary), failed(f)),
        Outcome::Rejected(f) => (format!("rejected: {}", f.summary), 3),
    };
    (outcome.name(), line.0, line.1)
}

/// Runs `--case NAME`; returns the exit code (see [`describe`]).
fn run_case(name: &str, args: &CompareArgs) -> Result<u8, CliError> {
    let err = |m: String| CliError::input(format!("xla-props compare: --case {name}: {m}"));
    if !args.arg_files.args.is_empty() || args.deep || args.trials > 1 {
        return Err(err(
            "a case brings its own inputs (no --arg, --trials or --deep)".to_string(),
        ));
    }
    let mut id: CaseId = name.parse().map_err(|e| err(format!("{e}")))?;
    if let Some(b) = &args.tested.backend {
        id.backend = BackendId::intern(b);
    }
    let tested = backend::create(id.backend.name()).map_err(|e| err(e.to_string()))?;
    let reference = backend::create(&args.oracle.reference).map_err(|e| err(e.to_string()))?;
    let cache = ReferenceCache::new();
    let mut ctx = CaseContext::new(
        id,
        tested.as_ref(),
        reference.as_ref(),
        &cache,
        1,
        args.generated.seed,
    )
    .with_numerics(Arc::new(tested.numerics()))
    .with_direct_reference(args.oracle.reference == "reference");
    let seed = ctx.seed();
    let prepared = ctx.prepared();
    let digests: Vec<String> = match &prepared {
        Ok((built, inputs)) => {
            say!("case {id}: module {}, seed {seed}", built.module.name);
            for (k, a) in inputs.iter().enumerate() {
                say!(
                    "  parameter {k}: {} (digest {})",
                    a.shape(),
                    input_digest(a)
                );
            }
            inputs.iter().map(input_digest).collect()
        }
        // a property that builds its own program (a template) draws its inputs in its body
        Err(_) => {
            say!("case {id}: seed {seed} (the property draws its own program and inputs)");
            Vec::new()
        }
    };
    let body = ctx.spec.body;
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut ctx)))
        .unwrap_or_else(|_| Outcome::fail("panicked (the message is on stderr)".to_string()));
    let (word, line, code) = describe(&outcome);
    say!("{line}");
    if let Some(path) = &args.json {
        let verdict = match &outcome {
            Outcome::Fail(f) | Outcome::XFail(f) | Outcome::Rejected(f) => f.verdict.clone(),
            Outcome::Pass | Outcome::XPass | Outcome::Skip(_) => None,
        };
        let json = serde_json::json!({
            "case": id.to_string(),
            "backend": id.backend.name(),
            "reference": args.oracle.reference,
            "seed": args.generated.seed,
            "case_seed": seed,
            "outcome": word,
            "summary": line,
            "verdict": verdict,
            "input_digests": digests,
        });
        let text = serde_json::to_string_pretty(&json).map_err(|e| err(format!("json: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| CliError::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_that_rejects_or_crashes_is_exit_3() {
        let backend = Verdict::OnlyOneFailed {
            failed: Side::Backend,
            error: "compile error: iree-compile: ...".into(),
        };
        let reference = Verdict::OnlyOneFailed {
            failed: Side::Reference,
            error: "x".into(),
        };
        let known = Verdict::KnownRejection {
            bugs: vec![],
            error: "x".into(),
        };
        let skipped = Verdict::Skipped { reason: "x".into() };
        let shape = Verdict::ShapeMismatch { detail: "x".into() };
        assert_eq!(exit_code(&backend, false), 3);
        assert_eq!(exit_code(&known, false), 3);
        assert_eq!(exit_code(&reference, false), 1);
        assert_eq!(exit_code(&shape, false), 1);
        assert_eq!(exit_code(&skipped, false), 2);
    }

    #[test]
    fn values_a_known_bug_explains_are_still_exit_1() {
        let known = Verdict::KnownBug {
            bugs: vec![],
            mismatch: Box::new(crate::check::MismatchReport {
                count: 1,
                elements: 4,
                outputs: vec![],
                agreement: Default::default(),
            }),
        };
        assert_eq!(exit_code(&known, false), 1);
    }
}
