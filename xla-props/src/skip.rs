//! Skipping a libtest test at run time, visibly.
//!
//! libtest has no run-time skip: a test that finds what it needs absent (a
//! plugin, a browser, a corpus) and returns early is counted as passed, and
//! libtest captures what it prints, so under `-q` the skip looks like a pass.
//! [`this_test`] writes the reason to the process's stderr itself, past
//! libtest's capture, and the binary's skips are counted again when it exits,
//! after libtest's own result line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The skips of this process: (test, reason).
static SKIPS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Reports that the running test skips, and why; the caller then returns.
///
/// Prints `SKIP <test>: <reason>` on stderr even under `-q` (libtest does
/// not capture it), and when the test binary exits, a line that counts the
/// skips libtest reported as passed.
///
/// ```
/// // in a #[test] fn
/// fn needs_my_compiler() {
///     if std::env::var_os("MY_COMPILER_THAT_IS_NOT_SET").is_none() {
///         xla_props::skip::this_test("MY_COMPILER_THAT_IS_NOT_SET is not set");
///         return;
///     }
///     // ... run the compiler
/// }
/// needs_my_compiler();
/// ```
pub fn this_test(reason: impl std::fmt::Display) {
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("a test")
        .to_string();
    let reason = reason.to_string();
    let line = skip_line(&test, &reason);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
    drop(err);
    SKIPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((test, reason));
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C" fn` taking nothing.
        unsafe {
            libc::atexit(print_count);
        }
    });
}

/// The files of `dir` whose extension is `ext`, sorted by path.
pub fn files_in(dir: impl AsRef<Path>, ext: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// A directory the running test needs, such as a corpus that lives next to
/// the project: `Some(dir)` when it exists; else the test fails when `CI` is
/// set, and skips ([`this_test`]) with the reason otherwise.
pub fn needed_dir(dir: impl Into<PathBuf>) -> Option<PathBuf> {
    let dir = dir.into();
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing, and CI is set",
        dir.display()
    );
    this_test(format!(
        "{} is missing (it lives next to the project; set CI to make this fail)",
        dir.display()
    ));
    None
}

/// The `.hlo` modules of a corpus the running test needs, sorted: the
/// test fails or skips as [`needed_dir`] says when the corpus is missing.
pub fn hlo_corpus(dir: impl Into<PathBuf>) -> Option<Vec<PathBuf>> {
    let dir = needed_dir(dir)?;
    let files = files_in(&dir, "hlo");
    Some(files.unwrap_or_else(|e| panic!("{}: {e}", dir.display())))
}

/// Whether a backend the running test needs is available, from its
/// `availability()`: when it is not, the test fails when `CI` is set and
/// skips ([`this_test`]) with the reason otherwise.
pub fn backend_available(name: &str, availability: Result<(), String>) -> bool {
    let Err(reason) = availability else {
        return true;
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "{name} must be available in CI: {reason}"
    );
    this_test(format!("{name} unavailable: {reason}"));
    false
}

/// The line one skip prints (a newline first: `-q` leaves its dots open).
fn skip_line(test: &str, reason: &str) -> String {
    format!("\nSKIP {test}: {reason}\n")
}

/// The count printed when the binary exits.
fn count_line(skips: &[(String, String)]) -> String {
    let names: Vec<&str> = skips.iter().map(|(t, _)| t.as_str()).collect();
    format!(
        "skipped: {} test{} of this binary (libtest counted {} as passed): {}\n",
        skips.len(),
        if skips.len() == 1 { "" } else { "s" },
        if skips.len() == 1 { "it" } else { "them" },
        names.join(", ")
    )
}

extern "C" fn print_count() {
    let skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    if !skips.is_empty() {
        let _ = std::io::stderr().write_all(count_line(&skips).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_names_the_test_and_the_reason_and_the_count_names_them_all() {
        assert_eq!(
            skip_line("corpus", "../corpus is absent"),
            "\nSKIP corpus: ../corpus is absent\n"
        );
        let skips = vec![
            ("a".to_string(), "x".to_string()),
            ("b".to_string(), "y".to_string()),
        ];
        assert_eq!(
            count_line(&skips),
            "skipped: 2 tests of this binary (libtest counted them as passed): a, b\n"
        );
        assert!(count_line(&skips[..1])
            .starts_with("skipped: 1 test of this binary (libtest counted it as passed)"));
    }
}
