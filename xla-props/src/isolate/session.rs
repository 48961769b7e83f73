//! One isolation from start to end: confirm, localize, look inside,
//! minimize; and the report it produces.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::certificate::{certify, grow_departing_region, Certificate};
use super::deep::{deep_check, fused_location, plain_location, CulpritLocation, LocalDisagreement};
use super::inside::{look_inside, vanishes_when_split, Fused, InsideMethod};
use super::localize::{follow_errors, LocalizeError};
use super::minimize::{Case, Minimizer, Step};
use super::sides::{judge_module, Oracle, Tested};
use crate::backend::Backend;
use crate::check::Verdict;
use crate::check::{FailureSignature, MismatchKind};
use crate::hlo::rewrite::extract_instruction;
use crate::hlo::{Module, Opcode};
use crate::inputs::{generate_inputs, Distribution, InputError};

/// Options of one isolation.
#[derive(Clone, Debug)]
pub struct Options {
    /// Seed of the generated inputs.
    pub seed: u64,
    /// Distribution of the generated inputs.
    pub distribution: Distribution,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Minimize the culprit (on by default).
    pub minimize: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 0,
            distribution: Distribution::Uniform,
            progress: false,
            minimize: true,
        }
    }
}

/// Why an isolation could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum IsolateError {
    /// No legal inputs could be generated.
    #[error("cannot generate inputs: {0}")]
    Inputs(#[from] InputError),
    /// The reference cannot evaluate the module.
    #[error("the reference `{oracle}` cannot run the module: {message}")]
    Reference {
        /// The oracle's name.
        oracle: String,
        /// Why.
        message: String,
    },
    /// The backend cannot express the module (an op or dtype it lacks).
    #[error("{0}")]
    Unsupported(String),
    /// The disagreement could not be localized.
    #[error(transparent)]
    Localize(#[from] LocalizeError),
}

/// What an isolation found, as written to `report.json`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The module isolated.
    pub module: String,
    /// The backend under test.
    pub backend: String,
    /// The reference side.
    pub reference: String,
    /// The input seed.
    pub seed: u64,
    /// The whole-module verdict, in words.
    pub verdict: String,
    /// True when the module's output agrees: the disagreement is masked
    /// downstream and was found only by comparing each instruction on its own.
    pub output_agrees: bool,
    /// Every top-level instruction that disagrees on the reference values of
    /// its operands, in topological order (the culprit is the first, when local).
    pub local_disagreements: Vec<LocalDisagreement>,
    /// The culprit.
    pub culprit: CulpritLocation,
    /// True when the culprit disagrees on the reference values of its operands;
    /// false when its error appears only when upstream errors feed it.
    pub local: bool,
    /// How the inside of the fusion was looked at (None for a plain instruction).
    pub inside: Option<InsideMethod>,
    /// True when splitting the culprit fusion makes the disagreement vanish.
    pub vanishes_when_split: bool,
    /// The kind of mismatch (the failure signature's other half).
    pub mismatch: MismatchKind,
    /// For a departure no unit shows: the certificate of the units'
    /// agreement checked against the whole (a composition mismatch).
    pub certificate: Option<Certificate>,
    /// The culprit's verdict, in words.
    pub culprit_verdict: String,
    /// Top-level candidates in the module.
    pub candidates: usize,
    /// Instructions in the module.
    pub instructions: usize,
    /// Instructions in the reproducer.
    pub reproducer_instructions: usize,
    /// Accepted reduction steps.
    pub reductions: Vec<Step>,
    /// Backend runs (executions and probes).
    pub backend_runs: u64,
    /// Wall time of the isolation.
    pub seconds: f64,
    /// Path of the reproducer, once written.
    pub reproducer: Option<String>,
}

/// The outcome of [`isolate`].
#[derive(Debug)]
pub enum Isolation {
    /// Both sides agree on the whole module and on every top-level
    /// instruction run on the reference values of its operands: nothing to isolate.
    Agree {
        /// The verdict.
        verdict: Verdict,
        /// Backend runs.
        backend_runs: u64,
    },
    /// The output departs from every bound, but every top-level instruction
    /// agrees on the reference values of its operands and their measured
    /// errors, carried through the graph, explain the departure: legal.
    Amplified {
        /// The whole-module verdict, in words.
        verdict: String,
        /// The certificate.
        certificate: Certificate,
        /// Backend runs.
        backend_runs: u64,
    },
    /// The disagreement, isolated.
    Isolated(Box<Isolated>),
}

/// A finished isolation: the report and the minimized reproducer.
#[derive(Debug)]
pub struct Isolated {
    /// The report.
    pub report: Report,
    /// The reproducer: the culprit, minimized, with its arguments.
    pub reproducer: Case,
}

fn stage(bar: &ProgressBar, msg: &'static str, len: u64) {
    bar.set_message(msg);
    bar.set_length(len);
    bar.set_position(0);
}

/// Isolates why `backend` disagrees with `oracle` on `module`: confirm,
/// compare every top-level instruction on the reference values of its
/// operands (even when the output agrees, so a masked bug is seen),
/// localize, look inside the culprit fusion, minimize.
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// use xla_props::isolate::{isolate, Isolation, Options, Oracle};
/// let module = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![8]))?;
///         b.binary(Opcode::Add, x, x)
///     })
///     .unwrap();
/// let out = isolate(&module, &Interpreter::default(), &Oracle::Exact, &Options::default()).unwrap();
/// assert!(matches!(out, Isolation::Agree { .. }));
/// ```
pub fn isolate(
    module: &Module,
    backend: &dyn Backend,
    oracle: &Oracle,
    options: &Options,
) -> Result<Isolation, IsolateError> {
    let inputs = generate_inputs(module, options.distribution, options.seed)?;
    isolate_on(module, &inputs.args, backend, oracle, options)
}

/// [`isolate`] on given arguments (a failing case's own inputs, which a
/// fresh draw may not reproduce); `options.seed` is only reported.
pub fn isolate_on(
    module: &Module,
    args: &[crate::literal::Literal],
    backend: &dyn Backend,
    oracle: &Oracle,
    options: &Options,
) -> Result<Isolation, IsolateError> {
    let start = Instant::now();
    let tested = Tested::new(backend);
    let bar = progress_bar(options.progress);
    stage(&bar, "confirm", 1);
    let args = args.to_vec();
    let verdict = judge_module(module, &args, oracle, &tested);
    bar.inc(1);
    if let Verdict::Skipped { reason } = &verdict {
        bar.finish_and_clear();
        return Err(IsolateError::Unsupported(reason.clone()));
    }
    let output_agrees = !verdict.is_disagreement();
    let whole_verdict = verdict.to_string();

    // every top-level instruction on the reference's values: fingerprints, then the judge
    let reference = match oracle.all_values(module, &args) {
        Ok(values) => values,
        // nothing to compare the instructions with, and nothing wrong with the output
        Err(_) if output_agrees => return Ok(agree(&bar, verdict, &tested)),
        Err(e) => {
            return Err(IsolateError::Reference {
                oracle: oracle.name().to_string(),
                message: e,
            })
        }
    };
    let cands = super::localize::candidates(module);
    let mut certificate_found = None;
    stage(&bar, "compare", cands.len() as u64);
    let deep = deep_check(module, &reference, oracle, &tested, &mut |n| bar.inc(n));
    let located = match deep.findings.first() {
        Some(first) => first.located.clone(),
        None if output_agrees => return Ok(agree(&bar, verdict, &tested)),
        None => {
            // no instruction disagrees alone: certify their agreement, or follow the errors
            stage(&bar, "certify", 1);
            match without_local_culprit(module, &args, &reference, oracle, &tested)? {
                Ok((located, certificate)) => {
                    certificate_found = certificate;
                    located
                }
                Err(certificate) => {
                    return Ok(amplified(&bar, whole_verdict, certificate, &tested))
                }
            }
        }
    };
    let composition = certificate_found.is_some();
    let entry = module.entry_computation();
    let top = entry.instr(located.id);
    let cmod = match &located.region {
        Some(region) => region.clone(),
        None => extract_instruction(module, located.id).module,
    };
    let cargs = located.args.clone();

    // look inside
    stage(&bar, "inside", 1);
    let (culprit, inside, vanishes) = if top.opcode == Opcode::Fusion && !composition {
        look_at_fusion(module, &cmod, &cargs, located.id, oracle, &tested)
    } else {
        (plain_location(entry, located.id), None, false)
    };
    bar.inc(1);

    // minimize (a composition departs only whole: its region is not reduced)
    let signature = FailureSignature {
        opcode: culprit.opcode.parse().unwrap_or(top.opcode),
        kind: located.kind,
        fusion: culprit.fusion.clone(),
    };
    let case = Case {
        module: cmod,
        args: cargs,
    };
    let reduce = options.minimize && located.local && !composition;
    let (reproducer, reductions) = minimized(case, signature, reduce, oracle, &tested, &bar);
    bar.finish_and_clear();
    let report = Report {
        module: module.name.clone(),
        backend: backend.name().to_string(),
        reference: oracle.name().to_string(),
        seed: options.seed,
        verdict: whole_verdict,
        output_agrees,
        local_disagreements: deep.local_disagreements,
        culprit,
        local: located.local,
        inside,
        vanishes_when_split: vanishes,
        mismatch: located.kind,
        certificate: certificate_found,
        culprit_verdict: located.verdict.to_string(),
        candidates: deep.candidates,
        instructions: module.instruction_count(),
        reproducer_instructions: reproducer.module.instruction_count(),
        reductions,
        backend_runs: tested.runs(),
        seconds: start.elapsed().as_secs_f64(),
        reproducer: None,
    };
    Ok(Isolation::Isolated(Box::new(Isolated {
        report,
        reproducer,
    })))
}

/// The output agrees and no instruction disagrees alone.
fn agree(bar: &ProgressBar, verdict: Verdict, tested: &Tested<'_>) -> Isolation {
    bar.finish_and_clear();
    Isolation::Agree {
        verdict,
        backend_runs: tested.runs(),
    }
}

/// A progress bar on stderr, or a hidden one.
fn progress_bar(show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(1);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg:<12} [{bar:30}] {pos}/{len} {elapsed}")
    {
        b.set_style(style.progress_chars("=> "));
    }
    b
}

/// The reproducer: `case` reduced by the minimizer, guarded by `signature`
/// (when `reduce`), with the steps taken.
fn minimized(
    case: Case,
    signature: FailureSignature,
    reduce: bool,
    oracle: &Oracle,
    tested: &Tested<'_>,
    bar: &ProgressBar,
) -> (Case, Vec<Step>) {
    if !reduce {
        return (case, Vec::new());
    }
    stage(bar, "minimize", super::minimize::MAX_ATTEMPTS as u64);
    let minimizer = Minimizer {
        oracle,
        tested,
        signature,
    };
    let done = minimizer.minimize(case, &mut |_| bar.inc(1));
    (done.case, done.steps)
}

/// What the certificate of local agreement concluded.
enum Certified {
    Amplified(Certificate),
    /// With the smallest departing region around the worst output, as the
    /// located culprit.
    Composition(Certificate, super::localize::Located),
}

/// The certificate for a disagreeing output with no local disagreement,
/// and for a composition the region that departs when compiled whole.
fn certified(
    module: &Module,
    args: &[crate::literal::Literal],
    reference: &[Option<crate::literal::Value>],
    oracle: &Oracle,
    tested: &Tested<'_>,
) -> Option<Certified> {
    let expected = oracle.run(module, args).into_outputs()?;
    let actual = tested.run(module, args).ok()?;
    let judged = super::sides::judge_outputs(module, args, &expected, &actual, &tested.numerics());
    let certificate = certify(
        module,
        args,
        &expected,
        &actual,
        reference,
        tested,
        Some(&judged),
    )?;
    if certificate.is_amplified() {
        return Some(Certified::Amplified(certificate));
    }
    let output = certificate.explanation().output;
    let numerics = tested.numerics();
    let entry = module.entry_computation();
    let (region, rargs, id) =
        match grow_departing_region(module, output, reference, tested, &numerics) {
            Some((x, a)) => {
                let root = x.module.entry_computation().root;
                let name = x.module.entry_computation().instr(root).name.clone();
                let id = crate::hlo::rewrite::find_instruction(module, &name)
                    .map_or(entry.root, |(_, i)| i);
                (x.module, a, id)
            }
            // only the whole module departs
            None => (module.clone(), args.to_vec(), entry.root),
        };
    let verdict = super::sides::judge_module(&region, &rargs, oracle, tested);
    Some(Certified::Composition(
        certificate,
        super::localize::Located {
            id,
            local: true,
            args: rargs,
            verdict,
            kind: MismatchKind::Composition,
            region: Some(region),
        },
    ))
}

/// Inside a culprit fusion (`cmod`, extracted whole, run on `cargs`): the
/// first diverging instruction, how it was found, and whether splitting
/// the fusion makes the disagreement vanish.
fn look_at_fusion(
    module: &Module,
    cmod: &Module,
    cargs: &[crate::literal::Literal],
    id: crate::hlo::InstrId,
    oracle: &Oracle,
    tested: &Tested<'_>,
) -> (CulpritLocation, Option<InsideMethod>, bool) {
    let entry = module.entry_computation();
    let top = entry.instr(id);
    let croot = cmod.entry_computation().root;
    let at = Fused {
        module: cmod,
        fusion: croot,
        args: cargs,
    };
    let found = look_inside(at, oracle, tested);
    let vanishes = vanishes_when_split(at, oracle, tested);
    // the extracted module keeps the fused computation and its names
    let fused = cmod
        .entry_computation()
        .instr(croot)
        .attrs
        .calls
        .first()
        .map(|&c| cmod.comp(c));
    match (found, fused) {
        (Some(found), Some(fused)) => (
            fused_location(fused, &top.name, found.id),
            Some(found.method),
            vanishes,
        ),
        _ => (plain_location(entry, id), None, vanishes),
    }
}

/// The culprit when no instruction disagrees alone: a composition's region
/// (with its certificate), or the errors followed through the graph; `Err`
/// with the certificate when the departure is amplified (legal).
fn without_local_culprit(
    module: &Module,
    args: &[crate::literal::Literal],
    reference: &[Option<crate::literal::Value>],
    oracle: &Oracle,
    tested: &Tested<'_>,
) -> Result<Result<(super::localize::Located, Option<Certificate>), Certificate>, IsolateError> {
    Ok(match certified(module, args, reference, oracle, tested) {
        Some(Certified::Amplified(c)) => Err(c),
        Some(Certified::Composition(c, located)) => Ok((located, Some(c))),
        None => Ok((follow_errors(module, args, reference, tested)?, None)),
    })
}

/// The outcome of an amplified departure (the progress bar cleared).
fn amplified(
    bar: &ProgressBar,
    verdict: String,
    certificate: Certificate,
    tested: &Tested<'_>,
) -> Isolation {
    bar.finish_and_clear();
    Isolation::Amplified {
        verdict,
        certificate,
        backend_runs: tested.runs(),
    }
}
