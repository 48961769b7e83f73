//! The interpreter on every module of the shared HLO corpus, with zero
//! arguments: each module compiles and runs, or reports a typed error
//! (unsupported op, while limit, ...). Nothing panics. In release builds
//! (`cargo test --release --test interpreter_corpus`) the heavy modules run too.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use xla_props::backend::{Backend, BackendError, Interpreter};
use xla_props::hlo::parse_module;
use xla_props::literal::Literal;

/// In debug builds, modules whose instructions hold more elements than this
/// are skipped (they take minutes there, seconds in release).
const DEBUG_ELEMENT_LIMIT: u64 = 200_000;

#[test]
fn corpus_runs_or_reports_typed_errors() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/xla-hlo");
    let Some(files) = xla_props::skip::hlo_corpus(corpus) else {
        return;
    };
    let backend = Interpreter::with_while_limit(10_000);
    let (mut ran, mut unsupported, mut failed, mut panicked) = (0, 0, Vec::new(), Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(module) = parse_module(&std::fs::read_to_string(path).unwrap()) else {
            continue;
        };
        if cfg!(debug_assertions) && common::total_elements(&module) > DEBUG_ELEMENT_LIMIT {
            continue;
        }
        if std::env::var_os("XLA_PROPS_VERBOSE").is_some() {
            eprintln!("{name}");
        }
        let start = std::time::Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let exe = backend.compile(&module)?;
            let args: Vec<Literal> = module
                .parameter_shapes()
                .iter()
                .flat_map(|s| s.leaves())
                .map(|a| Literal::zeros(&xla_props::hlo::ArrayShape::new(a.dtype, a.dims.clone())))
                .collect::<Result<_, _>>()
                .map_err(|e| BackendError::BadArguments(e.to_string()))?;
            exe.execute(&args)
        }));
        if std::env::var_os("XLA_PROPS_VERBOSE").is_some() {
            eprintln!("  {:?}", start.elapsed());
        }
        match outcome {
            Ok(Ok(_)) => ran += 1,
            Ok(Err(e)) if e.is_unsupported() => unsupported += 1,
            Ok(Err(e)) => failed.push(format!("{name}: {e}")),
            Err(_) => panicked.push(name),
        }
    }
    eprintln!(
        "corpus: {ran} ran, {unsupported} unsupported, {} errors",
        failed.len()
    );
    for f in &failed {
        eprintln!("  {f}");
    }
    assert!(
        panicked.is_empty(),
        "the interpreter panicked on {panicked:?}"
    );
    assert!(ran > 0);
    // the only typed errors expected from zero arguments: a loop that never ends
    assert!(
        failed.iter().all(|f| f.contains("iteration limit")),
        "unexpected errors: {failed:#?}"
    );
}
