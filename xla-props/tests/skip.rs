//! A skipped test is seen as one: its reason is printed past libtest's
//! capture (so also under `-q`), and the test binary counts its skips after
//! libtest's result line. This binary runs itself with a test that skips.

use std::process::Command;

/// Skips when the driver below asks it to; passes otherwise.
#[test]
fn fixture_that_skips() {
    if std::env::var_os("XLA_PROPS_SKIP_FIXTURE").is_some() {
        xla_props::skip::this_test("the fixture's reason");
    }
}

#[test]
fn a_skip_shows_its_reason_under_q_and_is_counted() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fixture_that_skips", "-q"])
        .env("XLA_PROPS_SKIP_FIXTURE", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("SKIP fixture_that_skips: the fixture's reason"),
        "{stderr}"
    );
    // libtest counts it as passed; the count after its result line says otherwise
    assert!(stdout.contains("test result: ok. 1 passed"), "{stdout}");
    let count = "skipped: 1 test of this binary (libtest counted it as passed): fixture_that_skips";
    assert!(stderr.contains(count), "{stderr}");
}
