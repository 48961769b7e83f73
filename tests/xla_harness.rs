//! The runner with XLA backends, through the fixture harness
//! (tests/xla_fixture.rs): an abort inside the real XLA worker fails exactly
//! one case and the run goes on; a named backend that is unavailable here has
//! its cases skipped with the reason, never failed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use xla_props::backend::xla::{XlaBackend, XlaPlugin};

mod support;

/// The fixture binary (tests/xla_fixture.rs).
fn fixture() -> PathBuf {
    support::test_binary("xla_fixture")
}

fn run(args: &[&str], env: &[(&str, &str)], dir: &Path) -> (Output, serde_json::Value) {
    let json = dir.join("run.json");
    let mut cmd = Command::new(fixture());
    cmd.args(args)
        .arg("--json")
        .arg(&json)
        .env("XLA_PROPS_FIXTURE", "1")
        .env("XLA_PROPS_FAILURES_DIR", dir.join("failures"));
    support::without_runner_env(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the fixture runs");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no json report ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out,
        serde_json::from_str(&text).expect("the report is json"),
    )
}

fn cases<'a>(report: &'a serde_json::Value, outcome: &str) -> Vec<&'a serde_json::Value> {
    report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["outcome"] == outcome)
        .collect()
}

fn xla_cpu_or_skip() -> bool {
    xla_props::skip::backend_available("xla-cpu", XlaBackend::new(XlaPlugin::Cpu).availability())
}

#[test]
fn an_abort_in_the_xla_worker_fails_one_case_and_the_run_continues() {
    if !xla_cpu_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = run(
        &[
            "vs_reference::",
            "--skip",
            "chains_vs_reference",
            "--backend",
            "xla-cpu-abort-once",
        ],
        &[("XLA_PROPS_OPS", "negate,add"), ("XLA_PROPS_DTYPES", "f32")],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "stderr:\n{stderr}");
    let failed = cases(&report, "failed");
    assert_eq!(
        failed.len(),
        1,
        "exactly the aborted case fails: {failed:#?}\n{stderr}"
    );
    let f = failed[0];
    let id = f["id"].as_str().unwrap();
    assert!(id.starts_with("vs_reference::negate::f32::"), "{id}");
    assert!(id.ends_with("::xla-cpu-abort-once"), "{id}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("replica_count"),
        "the failure carries XLA's abort message: {message}"
    );
    // the run went on, on a restarted worker: the other negate cases and
    // every add case ran and agreed with the reference
    let passed = cases(&report, "passed");
    let negate = passed
        .iter()
        .filter(|c| c["id"].as_str().unwrap().contains("::negate::"))
        .count();
    let add = passed
        .iter()
        .filter(|c| c["id"].as_str().unwrap().contains("::add::"))
        .count();
    assert!(
        negate >= 5 && add >= 5,
        "passed: {negate} negate, {add} add"
    );
    assert_eq!(
        report["failed"].as_u64(),
        Some(1),
        "the summary counts one failure"
    );
}

#[test]
fn an_unavailable_xla_backend_has_its_cases_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    // a plugin path that does not exist makes xla-cpu unavailable
    let missing = dir.path().join("no-such-plugin.so");
    let (out, report) = run(
        &["vs_reference::add::f32", "--backend", "xla-cpu"],
        &[("XLA_PJRT_PLUGIN", missing.to_str().unwrap())],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(
        stderr.contains("backend xla-cpu is unavailable"),
        "the run says why: {stderr}"
    );
    let skipped = cases(&report, "skipped");
    assert!(!skipped.is_empty(), "{report:#}");
    assert!(cases(&report, "failed").is_empty());
    assert!(cases(&report, "passed").is_empty());
    for c in &skipped {
        assert!(c["id"].as_str().unwrap().ends_with("::xla-cpu"));
        let m = c["message"].as_str().unwrap_or_default();
        assert!(m.contains("no-such-plugin.so"), "skip reason: {m}");
    }
}
