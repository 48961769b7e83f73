//! The main job on a terminal (under a pseudo-terminal from `script`): a
//! progress line, the failures as they happen and the summary, not one line
//! per case; `--format pretty` and `-q` keep libtest's output.

mod support;

use std::process::Command;

/// Runs the fixture harness (tests/fixture.rs) with `args` on a
/// pseudo-terminal and returns what the terminal showed, after checking
/// that it has libtest's `case_lines` lines for the cases, or `None` when
/// `script` (util-linux) is missing.
fn on_a_terminal(args: &str, case_lines: usize) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is needed for the terminal test"
        );
        xla_props::skip::this_test("no `script` command");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let fixture = support::test_binary("fixture");
    let command = format!("{} {args}", fixture.display());
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("XLA_PROPS_FIXTURE", "1")
        .env("XLA_PROPS_FAILURES_DIR", dir.path().join("failures"))
        .env("TERM", "xterm-256color")
        .env("COLUMNS", "120")
        .env_remove("XLA_PROPS_PROGRESS")
        .output()
        .expect("script runs");
    // the fixture has failures on purpose: libtest's exit code 101
    assert_eq!(out.status.code(), Some(101), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    assert_eq!(libtest_case_lines(&text), case_lines, "{text}");
    Some(text)
}

/// Asserts that `text` shows each of `parts`.
fn assert_shows(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in {text}");
    }
}

/// libtest's lines for the cases: `test NAME ... ok` (a panic's message may
/// land inside the line, so the names are counted).
fn libtest_case_lines(text: &str) -> usize {
    text.matches("test fixture_").count()
}

#[test]
fn a_terminal_gets_a_progress_line_the_failures_and_the_summary() {
    let Some(text) = on_a_terminal("", 0) else {
        return;
    };
    // the good backend passes every case: no line names any of them
    assert!(!text.contains("::good"), "{text}");
    assert_shows(
        &text,
        &[
            "Starting 104 cases (0 filtered out)",
            "rerun: ",
            "only the backend failed: panicked: ",
            "test result: FAILED.",
            "Finished 104 cases",
        ],
    );
    assert!(text.contains("Running"), "no progress bar: {text}");
    assert!(text.contains("/104: "), "no counts on the bar: {text}");
    // failures are printed as they happen, before the summary
    let first_fail = text.find("FAIL [").expect("a failure line");
    let summary = text.find("xla-props summary").expect("the summary table");
    assert!(first_fail < summary, "{text}");
    // grouped by signature: one row for the panicking negate on f32, whose
    // verdict is the judge's (the backend's side failed: it panicked)
    let groups = &text[text.find("failures by signature").expect("groups")..];
    let negate = groups
        .lines()
        .find(|l| l.contains("negate") && l.contains("float") && l.contains("buggy"))
        .expect("a negate row");
    assert!(negate.contains("only the backend failed"), "{negate}");
}

#[test]
fn format_pretty_restores_libtests_lines_and_quiet_stays_terse() {
    let Some(pretty) = on_a_terminal("--format pretty", 104) else {
        return;
    };
    assert!(!pretty.contains("Starting 104 cases"), "{pretty}");
    let quiet = on_a_terminal("-q", 0).unwrap();
    assert!(!quiet.contains("Starting 104 cases"), "{quiet}");
    // libtest colours the word on a terminal
    assert_shows(&quiet, &["test result: ", "FAILED"]);
}
