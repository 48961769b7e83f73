//! Running the built `xla-props` binary, as the `cli_*` tests do.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The built binary, with no arguments yet.
pub fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

/// Runs `SUBCOMMAND FILE --backend BACKEND EXTRA...`.
pub fn run_on(subcommand: &str, file: &Path, backend: &str, extra: &[&str]) -> Output {
    xla_props()
        .arg(subcommand)
        .arg(file)
        .args(["--backend", backend])
        .args(extra)
        .output()
        .unwrap()
}

/// Runs the binary on `args`: its exit code (-1 when a signal ended it),
/// stdout and stderr.
pub fn run<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> (i32, String, String) {
    finished(&xla_props().args(args).output().expect("binary runs"))
}

/// A finished run as its exit code (-1 for a signal), stdout and stderr.
pub fn finished(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A run's stdout followed by its stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Asserts that the run exited with `code` (showing stdout and stderr if
/// not); returns its stdout.
pub fn exits(out: &Output, code: i32) -> String {
    assert_eq!(out.status.code(), Some(code), "{}", text(out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts that the run exited with `code` and that its stderr holds every
/// one of `needles`; returns the stderr.
pub fn fails_with(out: &Output, code: i32, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{stderr}");
    }
    stderr
}

/// A JSON file the binary wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `cmd` with its stdout closed at once: it must exit with `code`,
/// and not by a panic.
pub fn closed_stdout_is_not_a_panic(cmd: &mut Command, code: i32) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
