//! `cargo nextest` over a harness of ours (the fixture harness,
//! tests/fixture.rs, with `XLA_PROPS_FIXTURE=1`): it lists the cases
//! (`--list --format terse`), runs each by `--exact NAME` in its own process,
//! and `--partition` splits them into disjoint parts that cover the list.

use std::collections::BTreeSet;
use std::process::{Command, Output};

/// `cargo nextest ARGS` on the fixture binary, or `None` when cargo-nextest
/// is not installed (CI installs it: `.ci/run`).
fn nextest(args: &[&str]) -> Option<Output> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let have = Command::new(&cargo)
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "cargo-nextest is not installed (.ci/run installs it)"
        );
        xla_props::skip::this_test("cargo-nextest is not installed");
        return None;
    }
    let release =
        std::env::current_exe().is_ok_and(|e| e.components().any(|c| c.as_os_str() == "release"));
    let mut all = vec![args[0], "--workspace", "--test", "fixture"];
    if release {
        all.push("--release");
    }
    all.extend_from_slice(&args[1..]);
    let out = Command::new(&cargo)
        .arg("nextest")
        .args(&all)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XLA_PROPS_FIXTURE", "1")
        .env("CARGO_TERM_COLOR", "never")
        .env("NEXTEST_HIDE_PROGRESS_BAR", "1")
        .env(
            "XLA_PROPS_FAILURES_DIR",
            std::env::temp_dir().join("xla-props-nextest-failures"),
        )
        .output()
        .expect("cargo nextest runs");
    Some(out)
}

/// The names `cargo nextest list` selects.
fn list(extra: &[&str]) -> Option<BTreeSet<String>> {
    let mut args = vec!["list", "--message-format", "oneline"];
    args.extend_from_slice(extra);
    let out = nextest(&args)?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .map(str::to_string)
            .collect(),
    )
}

/// `N tests run: N passed` of nextest's summary.
fn tests_run(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| l.contains("tests run:") || l.contains("test run:"))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let before = line.split(" test").next().unwrap();
    before
        .split_whitespace()
        .last()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn nextest_lists_every_case_and_partitions_split_the_list() {
    let Some(all) = list(&[]) else { return };
    assert_eq!(all.len(), 104, "{all:?}");
    for kind in ["count", "hash"] {
        let mut union = BTreeSet::new();
        let mut sizes = Vec::new();
        for k in 1..=3 {
            let part = list(&["--partition", &format!("{kind}:{k}/3")]).unwrap();
            assert!(part.is_disjoint(&union), "{kind}:{k}/3 overlaps");
            sizes.push(part.len());
            union.extend(part);
        }
        assert_eq!(union, all, "{kind}: the parts cover the list");
        assert!(sizes.iter().all(|&n| n > 0), "{kind}: {sizes:?}");
    }
}

#[test]
fn nextest_runs_each_case_by_exact_name_and_partitions_add_up() {
    let filter = ["-E", "test(/::good$/)"];
    let Some(whole) = nextest(&[&["run"][..], &filter].concat()) else {
        return;
    };
    let text = String::from_utf8_lossy(&whole.stderr);
    assert!(whole.status.success(), "{text}");
    assert_eq!(tests_run(&whole), 52, "{text}");
    let mut parts = 0;
    for k in 1..=2 {
        let p = format!("count:{k}/2");
        let out = nextest(&[&["run", "--partition", &p][..], &filter].concat()).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        parts += tests_run(&out);
    }
    assert_eq!(parts, 52);
    // a failing case fails under nextest too
    let out = nextest(&[
        "run",
        "--no-fail-fast",
        "-E",
        "test(/::negate::f32::.*::buggy$/)",
    ])
    .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("negate exploded"), "{text}");
}
