//! `xla-props fuzz` through the built binary.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_backend_is_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = run(&[
        "fuzz",
        "--backend",
        "tpu-magic",
        "--time",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown backend `tpu-magic`"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_short_run_on_the_interpreter_finds_nothing_and_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "fuzz",
        "--backend",
        "interpreter",
        "--time",
        "2",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.starts_with("fuzz: "), "{stdout}");
    assert!(
        last.contains("/s)") && last.contains("0 failures"),
        "{last}"
    );
    assert!(stderr.contains("unique signatures"), "{stderr}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
