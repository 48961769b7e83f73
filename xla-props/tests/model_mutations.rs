//! Bugs inside real models are still found: for every catalogue mutation
//! that changes a corpus module's result (`tests/data/models/`, on the
//! interpreter with the default inputs), `compare --deep` raises the alarm:
//! the one judge disagrees (never "amplified": a departure no unit shows is
//! a composition mismatch), or a unit disagrees on the reference's own
//! operands where the output's bound masks it; and `isolate` names the
//! culprit fusion or instruction. A benign variant raises no alarm on any
//! model. A mutation whose change stays inside the bound the graph's legal
//! differences propagate to the outputs (and that no unit shows on the
//! reference's operands) is printed, not failed: no sound judge sees it on
//! that model, and the suite's own cases must catch it instead.
//!
//! The whole matrix (every module x every mutation) is `--ignored` and run
//! in release by `.ci/run` on a stride of the modules
//! (`XLA_PROPS_MODEL_STRIDE`, default 1: every module; to reproduce one
//! failure, `XLA_PROPS_MODEL_FILTER` keeps the modules whose file name holds
//! it and `XLA_PROPS_MUTATION` names one mutation).

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use xla_props::backend::mutant::{Mutant, Mutation};
use xla_props::backend::{Backend, Interpreter};
use xla_props::check::{LegalReason, Verdict};
use xla_props::hlo::load_module_file;
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::isolate::{
    deep_check, explain_departure, isolate, Departure, Isolation, Options, Oracle, Tested,
};
use xla_props::literal::Literal;
use xla_props::reference::evaluate;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/models");

fn modules() -> Vec<PathBuf> {
    let stride: usize = std::env::var("XLA_PROPS_MODEL_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let files = xla_props::skip::files_in(DATA, "hlo").unwrap_or_else(|e| panic!("{DATA}: {e}"));
    // to reproduce one failure: a part of the module's file name
    let only = std::env::var("XLA_PROPS_MODEL_FILTER").unwrap_or_default();
    files
        .into_iter()
        .step_by(stride)
        .filter(|f| f.to_string_lossy().contains(&only))
        .collect()
}

/// The mutations to apply (`XLA_PROPS_MUTATION`: mutation names, comma-separated, to
/// reproduce one failure; default every one).
fn mutations() -> Vec<Mutation> {
    let only = std::env::var("XLA_PROPS_MUTATION").unwrap_or_default();
    Mutation::ALL
        .iter()
        .copied()
        .filter(|m| only.is_empty() || only.split(',').any(|o| o == m.name()))
        .collect()
}

/// Worker threads (`XLA_PROPS_MODEL_THREADS`, default 2).
fn threads() -> usize {
    std::env::var("XLA_PROPS_MODEL_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(1)
}

fn same(a: &[Literal], b: &[Literal]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.element_count() == y.element_count()
                && (0..x.element_count()).all(|i| {
                    x.get_bits(i) == y.get_bits(i)
                        || (x.get_f64(i).is_nan() && y.get_f64(i).is_nan())
                })
        })
}

/// Whether the mutant's run is accepted with elements inside the bound
/// propagated through the graph, or reached by witness runs (legal runs of
/// the program, never beyond such a bound): its change may be smaller than the legal
/// differences the graph carries to those elements (an error of an ulp at a
/// divide, downstream of an approximate `power`), and no sound judge calls
/// that a bug on this model. Such a mutation is printed, not failed; the
/// suite's own cases (`chains_vs_reference` for the divide) are where it
/// must be caught, and `tests/detection.rs` checks that it is.
fn inside_the_propagated_bound(mutant: &Verdict) -> bool {
    matches!(mutant, Verdict::Agree(a)
        if [LegalReason::PropagatedBound, LegalReason::Witnessed]
            .iter()
            .any(|r| a.legal.get(r).is_some_and(|&n| n > 0)))
}

/// What one mutation did to one module.
fn check_one(file: &PathBuf, m: Mutation) -> Result<bool, String> {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let module = load_module_file(file).map_err(|e| e.to_string())?;
    let args = generate_inputs(&module, Distribution::Uniform, 0)
        .map_err(|e| format!("{name}: inputs: {e}"))?
        .args;
    let base = Interpreter::default();
    let mutant = Mutant::new(Interpreter::default(), m);
    let run = |b: &dyn Backend| b.compile(&module).and_then(|x| x.execute(&args));
    let (Ok(b), mutated) = (run(&base), run(&mutant)) else {
        return Err(format!("{name}: the interpreter cannot run it"));
    };
    let actual = match mutated {
        Ok(a) if same(&a, &b) => return Ok(false),
        Ok(a) => a,
        // a mutant that fails is seen by any judge
        Err(_) => return Ok(true),
    };
    let expected = evaluate(&module, &args).map_err(|e| format!("{name}: reference: {e}"))?;
    let numerics = mutant.numerics();
    let eval = |mm: &xla_props::hlo::Module, a: &[Literal]| evaluate(mm, a).ok();
    let verdict = xla_props::check::Judge::new(&numerics, &[], xla_props::check::Policy::Reference)
        .outputs(&module, &args, &expected, &actual, &eval);
    let tested = Tested::new(&mutant);
    let amplified = verdict.is_disagreement()
        && matches!(
            explain_departure(&module, &args, &expected, &actual, &tested, Some(&verdict)),
            Some(Departure::Certified(c)) if c.is_amplified()
        );
    // what `compare --deep` reports: the whole module's verdict, and every
    // unit on the reference's operands (a bug the output's bound masks)
    let masked = || {
        Oracle::Exact
            .all_values(&module, &args)
            .map(|values| {
                !deep_check(&module, &values, &Oracle::Exact, &tested, &mut |_| {})
                    .local_disagreements
                    .is_empty()
            })
            .unwrap_or(false)
    };
    let alarm = (verdict.is_disagreement() && !amplified) || masked();
    if m.is_benign() {
        return if alarm {
            Err(format!(
                "{name}: benign `{}` raises an alarm: {}",
                m.name(),
                verdict.to_string().lines().next().unwrap_or_default()
            ))
        } else {
            Ok(true)
        };
    }
    if !alarm && inside_the_propagated_bound(&verdict) {
        eprintln!(
            "{name}: `{}` changes the result only inside the bound propagated through \
             the graph (no unit shows it on the reference's operands): {}",
            m.name(),
            verdict.to_string().lines().next().unwrap_or_default()
        );
        return Ok(true);
    }
    if !alarm {
        return Err(format!(
            "{name}: `{}` changes the result but is not detected: {}{}",
            m.name(),
            verdict.to_string().lines().next().unwrap_or_default(),
            if amplified {
                " (certified amplified)"
            } else {
                ""
            }
        ));
    }
    let options = Options {
        minimize: false,
        ..Options::default()
    };
    match isolate(&module, &mutant, &Oracle::Exact, &options) {
        Ok(Isolation::Isolated(iso)) => {
            assert!(!iso.report.culprit.instruction.is_empty());
            Ok(true)
        }
        Ok(_) => Err(format!(
            "{name}: `{}` is detected but isolate finds nothing",
            m.name()
        )),
        Err(e) => Err(format!(
            "{name}: `{}` is detected but isolate fails: {e}",
            m.name()
        )),
    }
}

#[test]
#[ignore = "every module x every mutation: run in release by .ci/run"]
fn every_mutation_that_touches_a_model_is_detected_and_isolated() {
    let files = modules();
    let work: Vec<(PathBuf, Mutation)> = files
        .iter()
        .flat_map(|f| mutations().into_iter().map(move |m| (f.clone(), m)))
        .collect();
    let next = Mutex::new(work.iter());
    let failures = Mutex::new(Vec::new());
    let touched = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..threads() {
            s.spawn(|| loop {
                let Some((f, m)) = next.lock().unwrap().next() else {
                    break;
                };
                match check_one(f, *m) {
                    Ok(t) => *touched.lock().unwrap() += usize::from(t),
                    Err(e) => failures.lock().unwrap().push(e),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let touched = touched.into_inner().unwrap();
    eprintln!(
        "{} modules x {} mutations: {touched} pairs change a result",
        files.len(),
        mutations().len()
    );
    assert!(touched > 0, "no mutation changes any module");
    common::assert_none(&failures, "failures");
}
