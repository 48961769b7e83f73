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

/// Runs `fuzz --backend mutant:NAME` for at most `programs` programs (seed 1),
/// stopping at the first failure; returns the signatures it reports.
fn finds(mutation: &str, programs: u32) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "fuzz",
        "--backend",
        &format!("mutant:{mutation}"),
        "--time",
        "600",
        "--programs",
        &programs.to_string(),
        "--seed",
        "1",
        "--stop-at-first-failure",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{mutation} not found: {stdout}{stderr}");
    assert!(stdout.contains("first failure: program "), "{stdout}");
    let files: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(files.len(), 1, "{stdout}");
    let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(
        text.contains(&format!("// run: backends=mutant:{mutation} "))
            && text.contains("inputs=inline")
            && text.contains("// expect: mismatch "),
        "{text}"
    );
    stdout
        .lines()
        .filter(|l| l.contains(".hlotest"))
        .map(|l| l.split(": ").next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn finds_representative_mutations_of_the_catalogue() {
    // formerly missed: a truncating bf16 convert is one ULP off, which a
    // per-program ULP budget hid; the integer, gather, scatter, sort and
    // bf16-accumulation bugs were outside the old op set
    for (mutation, culprit) in [
        ("bf16-convert-truncates", "convert"),
        ("dot-bf16-accumulate", "dot"),
        ("int-add-saturates", "add"),
        ("gather-no-clamp", "gather"),
        ("scatter-drops-duplicates", "scatter"),
        ("sort-unstable", "sort"),
    ] {
        let sigs = finds(mutation, 2000);
        assert!(
            sigs.iter().any(|s| s.starts_with(culprit)),
            "{mutation}: {sigs:?}"
        );
    }
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_xla-props"))
        .args(["fuzz", "--backend", "mutant:bf16-convert-truncates"])
        .args(["--time", "600", "--programs", "50", "--seed", "1", "--out"])
        .arg(dir.path().join("out"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_bad_shard_is_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for shard in ["0/2", "3/2", "two"] {
        let (code, _, err) = run(&[
            "fuzz",
            "--backend",
            "interpreter",
            "--time",
            "1",
            "--shard",
            shard,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{shard}: {err}");
        assert!(err.contains(&format!("invalid shard `{shard}`")), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn a_sharded_campaign_says_which_programs_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "fuzz",
        "--backend",
        "interpreter",
        "--time",
        "30",
        "--programs",
        "5",
        "--seed",
        "3",
        "--shard",
        "2/4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("fuzz shard 2/4: programs 1, 5, ... of seed 3's run"),
        "{stderr}"
    );
}
