//! One failure, analysed: a known bug's model, else isolation (on the
//! failure's own arguments) and, where the backend can disable its passes,
//! pass bisection on the minimized reproducer; the result is its root cause.

use std::path::PathBuf;
use std::time::Instant;

use super::cause::{culprit_shape, RootCause};
use super::collect::Failure;
use super::forms::needed_forms;
use crate::backend::Backend;
use crate::check::{judge_against_reference, Verdict};
use crate::inputs::{generate_inputs, Distribution};
use crate::isolate::{
    bisect_passes, isolate_on, Isolated, Isolation, Options, Oracle, PassBisectOptions,
    PassVerdict, MAX_PROBES,
};
use crate::literal::Literal;

/// How triage analyses each failure.
#[derive(Clone, Debug)]
pub struct TriageOptions {
    /// Seed of the inputs of a plain module (a reproducer brings its own).
    pub seed: u64,
    /// Bisect the compiler's passes where the backend can disable them.
    pub bisect_passes: bool,
    /// Where pass bisection dumps the compiler's passes (one folder per failure).
    pub work_dir: PathBuf,
    /// Failures analysed at once (at least 1).
    pub jobs: usize,
}

/// One failure's analysis, as `triage.json` lists it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// The case name or file.
    pub name: String,
    /// The file read.
    pub source: String,
    /// Its root cause; `None` when it does not fail (any more) or could not be analysed.
    pub cause: Option<RootCause>,
    /// What the analysis concluded, in a line.
    pub conclusion: String,
    /// The culprit's exact element types and mismatch kind, e.g. `s8, values`.
    pub detail: String,
    /// Instructions of its minimized reproducer (0 when none).
    pub reproducer_instructions: usize,
    /// Elements over its reproducer's arguments and constants.
    pub reproducer_elements: usize,
    /// Wall time of its analysis.
    pub seconds: f64,
}

/// A member and, when isolated, its reproducer (kept for the group's representative).
pub(crate) struct Analysed {
    pub member: Member,
    pub isolated: Option<Box<Isolated>>,
}

fn member(failure: &Failure, conclusion: String, start: Instant) -> Member {
    Member {
        name: failure.name.clone(),
        source: failure.source.display().to_string(),
        cause: None,
        conclusion,
        detail: String::new(),
        reproducer_instructions: 0,
        reproducer_elements: 0,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Analyses failure `index` on `backend`.
pub(crate) fn analyse(
    index: usize,
    failure: &Failure,
    backend: &dyn Backend,
    options: &TriageOptions,
) -> Analysed {
    let start = Instant::now();
    let args = match &failure.args {
        Some(a) => a.clone(),
        None => match generate_inputs(&failure.module, Distribution::Uniform, options.seed) {
            Ok(g) => g.args,
            Err(e) => {
                let m = member(failure, format!("cannot generate inputs: {e}"), start);
                return Analysed {
                    member: m,
                    isolated: None,
                };
            }
        },
    };
    let iso_options = Options {
        seed: options.seed,
        ..Options::default()
    };
    let isolation = isolate_on(
        &failure.module,
        &args,
        backend,
        &Oracle::Exact,
        &iso_options,
    );
    if let Some(bugs) = known_bugs(failure, &args, backend) {
        // the bug's id is the cause; its isolation, when there is one, the representative
        let mut m = member(failure, format!("explained by known bug {bugs}"), start);
        m.cause = Some(RootCause::known(&bugs));
        m.detail = "known bug".into();
        let isolated = match isolation {
            Ok(Isolation::Isolated(iso)) => {
                let (instructions, elements) = iso.reproducer.size();
                m.reproducer_instructions = instructions;
                m.reproducer_elements = elements;
                Some(iso)
            }
            _ => None,
        };
        return Analysed {
            member: m,
            isolated,
        };
    }
    let isolated = match isolation {
        Err(e) => {
            let m = member(failure, format!("not isolated: {e}"), start);
            return Analysed {
                member: m,
                isolated: None,
            };
        }
        Ok(Isolation::Agree { verdict, .. }) => {
            let m = member(failure, format!("agrees now: {verdict}"), start);
            return Analysed {
                member: m,
                isolated: None,
            };
        }
        Ok(Isolation::Amplified { certificate, .. }) => {
            let line = format!("legal: every instruction agrees and their errors explain the output ({certificate})");
            return Analysed {
                member: member(failure, line, start),
                isolated: None,
            };
        }
        Ok(Isolation::Isolated(iso)) => iso,
    };
    let pass = if options.bisect_passes && backend.pass_control().is_some() {
        culprit_pass(index, &isolated, &failure.module, &args, backend, options)
    } else {
        "not bisected".to_string()
    };
    culprit_member(failure, isolated, pass, backend, start)
}

/// The member of an isolated failure: its root cause (the culprit's
/// opcode, dtype class, the operand forms it needs, the mismatch class and
/// the culprit `pass`) and its minimized reproducer.
fn culprit_member(
    failure: &Failure,
    isolated: Box<Isolated>,
    pass: String,
    backend: &dyn Backend,
    start: Instant,
) -> Analysed {
    let r = &isolated.report;
    let rep = &isolated.reproducer;
    let (opcode, dtype, forms) =
        culprit_shape(&rep.module, &r.culprit.instruction, &r.culprit.opcode).unwrap_or_else(
            || {
                (
                    r.culprit.opcode.clone(),
                    "unknown".into(),
                    vec!["unknown".into()],
                )
            },
        );
    let class = r.mismatch.class();
    let operand_forms = needed_forms(
        &rep.module,
        &rep.args,
        &r.culprit.instruction,
        r.culprit.fusion.as_deref(),
        class,
        backend,
    )
    .unwrap_or(forms);
    // which forms, not how many operands have each (a concatenate of 2 or 4 arrays is one bug)
    let mut operand_forms = operand_forms;
    operand_forms.sort_unstable();
    operand_forms.dedup();
    let exact = exact_dtype(&rep.module, &r.culprit.instruction, &r.culprit.opcode);
    let (instructions, elements) = rep.size();
    let m = Member {
        name: failure.name.clone(),
        source: failure.source.display().to_string(),
        cause: Some(RootCause {
            opcode,
            dtype,
            operand_forms,
            mismatch: class.to_string(),
            pass,
            known_bug: None,
        }),
        conclusion: format!(
            "culprit `{}` ({}){}: {}",
            r.culprit.instruction,
            r.culprit.opcode,
            r.culprit
                .fusion
                .as_deref()
                .map_or(String::new(), |f| format!(" in fusion `{f}`")),
            r.culprit_verdict.lines().next().unwrap_or_default()
        ),
        detail: format!("{exact}, {}", r.mismatch),
        reproducer_instructions: instructions,
        reproducer_elements: elements,
        seconds: start.elapsed().as_secs_f64(),
    };
    Analysed {
        member: m,
        isolated: Some(isolated),
    }
}

/// The exact element type of the culprit in the reproducer.
fn exact_dtype(module: &crate::hlo::Module, name: &str, opcode: &str) -> String {
    super::cause::find_culprit(module, name, opcode)
        .and_then(|(_, i)| i.shape.as_array().map(|a| a.dtype.name().to_string()))
        .unwrap_or_else(|| "tuple".into())
}

/// The ids of the known bugs of `backend` whose models explain the whole
/// failure, joined; `None` when the backend declares none or they do not.
fn known_bugs(failure: &Failure, args: &[Literal], backend: &dyn Backend) -> Option<String> {
    if backend.known_bugs().is_empty() {
        return None;
    }
    let expected = Oracle::Exact.run(&failure.module, args).into_outputs()?;
    let actual = backend.compile(&failure.module).ok()?.execute(args).ok()?;
    let verdict = judge_against_reference(
        &failure.module,
        args,
        &expected,
        &actual,
        &backend.numerics(),
        backend.known_bugs(),
        false,
    );
    match verdict {
        Verdict::KnownBug { bugs, .. } | Verdict::KnownRejection { bugs, .. } => {
            let ids: Vec<&str> = bugs.iter().map(|b| b.id.as_str()).collect();
            Some(ids.join("+"))
        }
        _ => None,
    }
}

/// The pass whose disabling makes the reproducer's disagreement vanish
/// (else the whole module's, when the reproducer agrees with every pass on).
fn culprit_pass(
    index: usize,
    isolated: &Isolated,
    module: &crate::hlo::Module,
    args: &[Literal],
    backend: &dyn Backend,
    options: &TriageOptions,
) -> String {
    let bisect = |m: &crate::hlo::Module, a: &[Literal], what: &str| {
        let o = PassBisectOptions {
            strict_rounding: false,
            max_probes: MAX_PROBES,
            dump_dir: options.work_dir.join(format!("{index:05}-{what}")),
        };
        bisect_passes(m, a, backend, &o).map(|b| b.verdict)
    };
    let rep = &isolated.reproducer;
    let verdict = match bisect(&rep.module, &rep.args, "reproducer") {
        Ok(PassVerdict::Agrees) => bisect(module, args, "module"),
        other => other,
    };
    match verdict {
        Ok(PassVerdict::Culprits(p)) => format!("pass {}", p.join(" + ")),
        Ok(PassVerdict::EachSuffices(p)) => format!("pass {} (each suffices)", p.join(" or ")),
        Ok(PassVerdict::NotAPass) => "code generation".into(),
        Ok(PassVerdict::Agrees) => "not bisected (agrees with every pass on)".into(),
        Ok(PassVerdict::Inconclusive(_)) | Err(_) => "undetermined".into(),
    }
}
