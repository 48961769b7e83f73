//! `xla-props report` through the built binary: writes one self-contained
//! page; bad input gets one lowercase line on stderr and exit code 2.

use std::path::Path;
use std::process::{Command, Output};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/report");

fn report(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
        .arg("report")
        .args(args)
        .output()
        .expect("run xla-props")
}

fn one_line_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.chars().next().is_some_and(|c| !c.is_uppercase()),
        "{err}"
    );
    err
}

#[test]
fn writes_a_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("sub/dir/report.html");
    let results = Path::new(DATA).join("results.json");
    let out = report(&[results.as_os_str(), "-o".as_ref(), page.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"));
    // no external resources of any kind
    for needle in ["<link", "src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(needle), "{needle}");
    }
    // the run's metadata
    assert!(html.contains("0123abcd"));
    assert!(html.contains("5.3 s"));
    assert!(html.contains("the pjrt plugin is not installed"));
}

#[test]
fn missing_file_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let page = dir.path().join("r.html");
    let err = one_line_error(&report(&[
        missing.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]));
    assert!(
        err.starts_with(&format!("{}: cannot read", missing.display())),
        "{err}"
    );
    assert!(!page.exists());
}

#[test]
fn bad_json_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"cases\": [").unwrap();
    let page = dir.path().join("r.html");
    let err = one_line_error(&report(&[bad.as_os_str(), "-o".as_ref(), page.as_os_str()]));
    assert!(err.contains("bad.json: not a results file"), "{err}");
}

/// `--compare` and `--isolation` files that are not what they should be.
#[test]
fn bad_side_files_are_exit_2() {
    // (flag, file name, its contents, what the error says)
    for (flag, name, contents, says) in [
        (
            "--compare",
            "old.json",
            "[]",
            "old.json: not a results file",
        ),
        (
            "--isolation",
            "report.json",
            "{\"culprit\": 7}",
            "report.json: not an isolation report",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let results = Path::new(DATA).join("results.json");
        let side = dir.path().join(name);
        std::fs::write(&side, contents).unwrap();
        let page = dir.path().join("r.html");
        let err = one_line_error(&report(&[
            results.as_os_str(),
            "-o".as_ref(),
            page.as_os_str(),
            flag.as_ref(),
            side.as_os_str(),
        ]));
        assert!(err.contains(says), "{err}");
    }
}
