//! `xla-props compare --case NAME`: replays one suite case exactly as the
//! suite runs it. The case rebuilds itself from its name (its module from
//! the catalogue, its inputs from the one input generator, seeded from the
//! name and `--seed`, the suite's run seed), runs the property's body on the
//! case's backend (or `--backend`) against `--reference`, and reports the
//! suite's verdict with the inputs' digests.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::compare::{exit_code, input_digest, CompareArgs};
use super::CliError;
use crate::backend;
use crate::property::{BackendId, CaseContext, CaseId, Outcome, ReferenceCache};

/// The outcome as one word and one line, and the exit code: 0 the case
/// passes, 1 it fails (a known bug's values too), 2 skipped, 3 the backend
/// rejected or crashed (as `compare`).
fn describe(outcome: &Outcome) -> (&'static str, String, u8) {
    match outcome {
        Outcome::Pass => ("pass", "the case passes".to_string(), 0),
        Outcome::Skip(why) => ("skip", format!("skipped: {why}"), 2),
        Outcome::Fail(f) => {
            let code = f.verdict.as_ref().map_or(1, |v| exit_code(v, false).max(1));
            ("fail", format!("fails: {}", f.summary), code)
        }
    }
}

/// Runs `--case NAME`; returns the exit code (see [`describe`]).
pub(crate) fn run_case(name: &str, args: &CompareArgs) -> Result<u8, CliError> {
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
            Outcome::Fail(f) => f.verdict.clone(),
            _ => None,
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
