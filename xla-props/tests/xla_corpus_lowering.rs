//! Every module of the shared corpus either lowers to StableHLO or is
//! reported `Unsupported`; with the plugin, every lowered module compiles.

mod common;

use std::path::Path;

use xla_props::backend::xla::lower::{lower_module, LowerError};
use xla_props::hlo::load_module_file;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/xla-hlo");

fn corpus_files() -> Option<Vec<std::path::PathBuf>> {
    let dir = Path::new(CORPUS);
    let files = xla_props::skip::files_in(dir, "hlo");
    if files.is_err() {
        xla_props::skip::this_test(format!("no shared corpus at {}", dir.display()));
    }
    files.ok()
}

#[test]
fn corpus_modules_lower_or_are_unsupported() {
    let Some(files) = corpus_files() else { return };
    let (mut lowered, mut unsupported) = (0, 0);
    for f in &files {
        let Ok(module) = load_module_file(f) else {
            continue;
        };
        match lower_module(&module) {
            Ok(l) => {
                assert!(l.mlir.contains("func.func public @main"));
                lowered += 1;
            }
            Err(LowerError::Unsupported(_)) => unsupported += 1,
            Err(e @ LowerError::Invalid(_)) => panic!("{}: {e}", f.display()),
        }
    }
    eprintln!("{lowered} corpus modules lowered, {unsupported} unsupported");
    assert!(lowered >= 100, "only {lowered} corpus modules lowered");
}

#[test]
fn lowered_corpus_modules_compile_on_xla_cpu() {
    let Some(files) = corpus_files() else { return };
    let Some(b) = common::xla_cpu() else {
        return;
    };
    let mut failures = Vec::new();
    let mut compiled = 0;
    for f in &files {
        let Ok(module) = load_module_file(f) else {
            continue;
        };
        let Ok(lowered) = lower_module(&module) else {
            continue;
        };
        match b.compile_lowered(lowered) {
            Ok(_) => compiled += 1,
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "xla rejected lowered modules:\n{}",
        failures.join("\n")
    );
    assert!(compiled >= 100, "only {compiled} modules compiled");
}
