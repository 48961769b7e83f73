//! The StableHLO spec's own interpreter tests (`../shared/corpus/stablehlo-interpret/`,
//! 104 files with `check.expect_*` ops) run through `xla-props check --backend
//! reference`. Every file passes except the ones listed below, each with the
//! reason; a listed file that starts to pass fails the test too, so the list
//! only shrinks.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Files the reference does not pass yet, with why (a file is named by its
/// path under the corpus, without `.mlir`).
const NOT_YET: &[(&str, &str)] = &[];

fn corpus_dir() -> Option<PathBuf> {
    xla_props::skip::needed_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/stablehlo-interpret"),
    )
}

fn mlir_files(dir: &Path, under: &str, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            mlir_files(&path, &format!("{under}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".mlir") {
            out.push((format!("{under}{stem}"), path));
        }
    }
}

#[test]
fn spec_interpreter_tests_pass_on_the_reference() {
    let Some(dir) = corpus_dir() else { return };
    let mut files = Vec::new();
    mlir_files(&dir, "", &mut files);
    assert_eq!(files.len(), 104, "the corpus has 104 files");
    let mut passed = 0usize;
    let mut wrong = Vec::new();
    for (name, path) in &files {
        let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
            .arg("check")
            .arg(path)
            .args(["--backend", "reference"])
            .output()
            .expect("run xla-props check");
        let ok = out.status.success();
        let listed = NOT_YET.iter().find(|(n, _)| n == name);
        match (ok, listed) {
            (true, None) => passed += 1,
            (true, Some(_)) => wrong.push(format!("{name}: passes now; take it off NOT_YET")),
            (false, Some(_)) => {}
            (false, None) => wrong.push(format!(
                "{name}: fails (exit {:?}):\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| !l.contains(": ok ("))
                    .collect::<Vec<_>>()
                    .join("\n"),
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    }
    for (n, _) in NOT_YET {
        assert!(
            files.iter().any(|(f, _)| f == n),
            "NOT_YET names {n}, which is not in the corpus"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert_eq!(passed + NOT_YET.len(), files.len());
    eprintln!("{passed} of {} spec interpreter tests pass", files.len());
}
