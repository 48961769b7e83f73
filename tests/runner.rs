//! Runner behaviour, through the fixture harness binary (tests/fixture.rs):
//! filters, shards, env twins, Bazel protocol, reports, failure persistence.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use xla_props::hlo::{ElementType, Opcode};
use xla_props::property::CaseId;

/// The fixture binary (tests/fixture.rs).
fn fixture() -> PathBuf {
    support::test_binary("fixture")
}

fn run(args: &[&str], env: &[(&str, &str)], dir: &Path) -> Output {
    let mut cmd = Command::new(fixture());
    cmd.args(args)
        .env("XLA_PROPS_FIXTURE", "1")
        .env("XLA_PROPS_FAILURES_DIR", dir.join("failures"));
    support::without_runner_env(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("fixture runs")
}

fn list(args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["--list", "--format", "terse"];
    all.extend_from_slice(args);
    let out = run(&all, env, dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

fn ids(names: &[String]) -> Vec<CaseId> {
    names.iter().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn list_names_parse_back_and_count_the_space() {
    let names = list(&[], &[]);
    // fixture_vs_ref: 4 ops x 2 dtypes x 6 small shapes (default layout) x 1 distribution,
    // fixture_draw: budget 4; both on 2 backends
    assert_eq!(names.len(), (4 * 2 * 6 + 4) * 2);
    for (n, id) in names.iter().zip(ids(&names)) {
        assert_eq!(&id.to_string(), n);
    }
    let unique: BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
}

#[test]
fn op_dtype_backend_filters_select_exactly_what_they_name() {
    let all = ids(&list(&[], &[]));
    let only = |keep: fn(&CaseId) -> bool| all.iter().copied().filter(keep).collect::<Vec<_>>();
    let sub = ids(&list(&["--op", "subtract"], &[]));
    assert_eq!(sub, only(|i: &CaseId| i.key.op == Opcode::Subtract));
    assert!(!sub.is_empty());
    let s8 = ids(&list(&["--dtype=s8"], &[]));
    assert_eq!(s8, only(|i: &CaseId| i.key.dtype == ElementType::S8));
    let buggy = ids(&list(&["--backend", "buggy"], &[]));
    assert_eq!(buggy, only(|i: &CaseId| i.backend.name() == "buggy"));
    let both = ids(&list(&["--op", "add,negate", "--dtype", "f32"], &[]));
    assert_eq!(
        both,
        only(
            |i: &CaseId| matches!(i.key.op, Opcode::Add | Opcode::Negate)
                && i.key.dtype == ElementType::F32
        )
    );
    // environment twins select the same
    assert_eq!(ids(&list(&[], &[("XLA_PROPS_OPS", "subtract")])), sub);
    assert_eq!(ids(&list(&[], &[("XLA_PROPS_DTYPES", "s8")])), s8);
    assert_eq!(ids(&list(&[], &[("XLA_PROPS_BACKENDS", "buggy")])), buggy);
    // a flag wins over its twin
    assert_eq!(
        ids(&list(&["--op", "subtract"], &[("XLA_PROPS_OPS", "add")])),
        sub
    );
}

#[test]
fn libtest_filters_still_work() {
    let all = list(&[], &[]);
    let names =
        |keep: fn(&str) -> bool| all.iter().filter(|n| keep(n)).cloned().collect::<Vec<_>>();
    let substr = list(&["negate::s8"], &[]);
    assert_eq!(substr, names(|n| n.contains("negate::s8")));
    let skipped = list(&["--skip", "::buggy"], &[]);
    assert_eq!(skipped, names(|n| !n.contains("::buggy")));
    let exact = list(&["--exact", &all[7]], &[]);
    assert_eq!(exact, vec![all[7].clone()]);
    let bazel = list(&[], &[("TESTBRIDGE_TEST_ONLY", "abs::f32")]);
    assert_eq!(bazel, names(|n| n.contains("abs::f32")));
}

#[test]
fn shards_are_disjoint_and_cover_the_list() {
    let all: BTreeSet<String> = list(&[], &[]).into_iter().collect();
    for n in [1u64, 2, 3, 5] {
        let mut union = BTreeSet::new();
        let mut total = 0;
        for k in 1..=n {
            let shard = list(&["--shard", &format!("{k}/{n}")], &[]);
            total += shard.len();
            union.extend(shard);
        }
        assert_eq!(total, all.len(), "shards of {n} overlap");
        assert_eq!(union, all);
    }
    // Bazel's protocol is the same partition, 0-based, and touches the status file
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status");
    let status_s = status.to_str().unwrap();
    let bazel = list(
        &[],
        &[
            ("TEST_SHARD_INDEX", "1"),
            ("TEST_TOTAL_SHARDS", "3"),
            ("TEST_SHARD_STATUS_FILE", status_s),
        ],
    );
    assert_eq!(bazel, list(&["--shard", "2/3"], &[]));
    assert!(status.exists());
    assert_eq!(list(&[], &[("XLA_PROPS_SHARD", "2/3")]), bazel);
}

#[test]
fn bad_runner_arguments_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--op", "frobnicate"][..],
        &["--shard", "4/3"],
        &["--backend", "nope"],
        &["--dtype"],
    ] {
        let out = run(args, &[], dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error: "), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

fn closing_counts(stdout: &str) -> (u64, u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("test result:"))
        .expect("closing line");
    let num = |what: &str| -> u64 {
        let part = line
            .split(';')
            .find(|p| p.trim_end().ends_with(what))
            .unwrap();
        part.split_whitespace()
            .rev()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    (num("passed"), num("failed"), num("ignored"))
}

fn table_totals(stdout: &str) -> (u64, u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("total "))
        .expect("summary total line");
    let n: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    (n[0], n[1], n[2])
}

#[test]
fn a_full_run_reports_consistently_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("out/junit.xml");
    let json = dir.path().join("out/results.json");
    let out = run(
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(101));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (passed, failed, ignored) = closing_counts(&stdout);
    assert_eq!(table_totals(&stdout), (passed, failed, ignored));
    assert_eq!(passed + failed + ignored, (4 * 2 * 6 + 4) * 2);
    // the good backend passes everything; the buggy one fails subtract/s8, negate/f32 (a panic)
    assert!(stdout.lines().any(|l| {
        let mut cols = l.split_whitespace();
        (cols.next(), cols.next()) == (Some("good"), Some("elementwise-binary"))
    }));
    assert!(failed >= 10);

    // JUnit parses back with the same counts
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len() as u64, passed + failed + ignored);
    let count = |tag: &str| {
        cases
            .iter()
            .filter(|c| c.children().any(|x| x.has_tag_name(tag)))
            .count() as u64
    };
    assert_eq!(count("failure"), failed);
    assert_eq!(count("skipped"), ignored);

    // JSON has one object per case with the outcome, verdict and ULP fields;
    // property, op, dtype and backend are the parts of its id
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["passed"], passed);
    assert_eq!(v["failed"], failed);
    assert_eq!(v["skipped"], ignored);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, passed + failed + ignored);
    let id_of = |c: &serde_json::Value| -> CaseId { c["id"].as_str().unwrap().parse().unwrap() };
    let find = |prop: &str, op: Opcode, dtype: ElementType, backend: &str| {
        cases
            .iter()
            .filter(|c| {
                let id = id_of(c);
                id.key.spec().name == prop
                    && id.key.op == op
                    && id.key.dtype == dtype
                    && id.backend.name() == backend
            })
            .collect::<Vec<_>>()
    };
    let sub = find("fixture_vs_ref", Opcode::Subtract, ElementType::S8, "buggy");
    let sub: Vec<_> = sub
        .into_iter()
        .filter(|c| c["outcome"] == "failed")
        .collect();
    assert!(sub.len() >= 3, "{sub:?}");
    for c in &sub {
        assert!(c["worst_mismatch"].as_str().unwrap().contains("expected"));
        assert!(c["verdict"].as_str().unwrap().contains("mismatch"), "{c}");
        let rerun = c["rerun"].as_str().unwrap();
        assert!(rerun.ends_with(&format!("--exact '{}'", c["id"].as_str().unwrap())));
        let repro = Path::new(c["reproducer"].as_str().unwrap());
        assert!(
            repro.join("reproducer.hlotest").exists(),
            "{}",
            repro.display()
        );
        assert!(c.get("kind").is_none(), "a plain failure has no kind: {c}");
    }
    // a passing float case: its ULP histogram counts every compared element
    let add = find("fixture_vs_ref", Opcode::Add, ElementType::F32, "good");
    assert!(!add.is_empty());
    for c in &add {
        assert_eq!(c["max_ulp"], 0);
        // the output's shape is the operands': `f32[5,7]{1,0}` has 35 elements
        let shape = c["id"].as_str().unwrap().split("::").nth(3).unwrap();
        let dims = &shape[shape.find('[').unwrap() + 1..shape.find(']').unwrap()];
        let elements: u64 = dims
            .split(',')
            .filter(|d| !d.is_empty())
            .map(|d| d.parse::<u64>().unwrap())
            .product();
        if elements == 0 {
            assert!(c.get("ulp_histogram").is_none(), "{c}");
        } else {
            let h = c["ulp_histogram"].as_object().unwrap();
            assert_eq!(h.len(), 1, "{c}");
            assert_eq!(h["0"], elements, "{c}");
        }
        // empty fields are left out
        for absent in [
            "message",
            "verdict",
            "rerun",
            "reproducer",
            "worst_mismatch",
            "kind",
        ] {
            assert!(c.get(absent).is_none(), "{absent} in {c}");
        }
    }
    // the declared expected failure is an xfail with the failure's verdict
    let xfail = find("fixture_vs_ref", Opcode::Add, ElementType::F32, "buggy");
    assert!(xfail.iter().any(|c| c["kind"] == "xfail"
        && c["outcome"] == "skipped"
        && c["verdict"]
            .as_str()
            .is_some_and(|v| v.contains("mismatch"))));
    // every op has its family
    assert_eq!(v["families"]["subtract"], "elementwise-binary");
    // the run's metadata
    let meta = &v["metadata"];
    assert_eq!(meta["seed"], 0);
    let names: Vec<&str> = meta["backends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["good", "buggy", "reference"]);
    assert_eq!(meta["backends"][2]["role"], "reference");
    let rev = meta["git_revision"].as_str().unwrap();
    assert!(rev == "unknown" || rev.len() >= 7, "{rev}");
    assert!(meta["duration_ms"].as_u64().is_some());
    assert!(meta["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(meta["command"].as_str().unwrap().contains("--json"));
    assert!(meta["cores"].as_u64().unwrap() >= 1);
}

#[test]
fn failures_print_backend_verdict_rerun_and_reproducer_and_run_first_next_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["--op", "subtract", "--test-threads", "1"],
        &[],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let failing = "fixture_vs_ref::subtract::s8::s8[7]{0}::uniform::buggy";
    let block = stdout
        .split(&format!("---- {failing} ----"))
        .nth(1)
        .expect("failure block");
    assert!(block.contains("backend: buggy"));
    assert!(block.contains("verdict: mismatch"));
    assert!(block.contains("inputs ("));
    let rerun = block.lines().find(|l| l.starts_with("rerun: ")).unwrap();
    assert!(rerun.ends_with(&format!("--exact '{failing}'")), "{rerun}");
    let repro = block
        .lines()
        .find_map(|l| l.strip_prefix("reproducer: "))
        .unwrap();
    for f in [
        "case.txt",
        "reproducer.hlotest",
        "input0.npy",
        "input1.npy",
        "report.txt",
    ] {
        assert!(Path::new(repro).join(f).exists(), "{f}");
    }
    assert!(Path::new(repro).starts_with(dir.path().join("failures")));

    // the rerun command's --exact runs exactly that case
    let again = run(&["--exact", failing], &[], dir.path());
    let text = String::from_utf8(again.stdout).unwrap();
    assert!(text.contains("running 1 test"));
    assert_eq!(closing_counts(&text), (0, 1, 0));

    // failing cases run first the next time
    let next = run(&["--test-threads", "1"], &[], dir.path());
    let text = String::from_utf8(next.stdout).unwrap();
    let first_test = text.lines().find(|l| l.starts_with("test ")).unwrap();
    assert!(
        first_test.contains("subtract::s8") && first_test.contains("::buggy"),
        "{first_test}"
    );
}

#[test]
fn unsupported_and_limitations_are_ignored_with_reasons_never_failures() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["--op", "abs,negate", "--dtype", "s8", "--backend", "buggy"],
        &[],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("abs is not implemented"));
    assert!(stdout.contains("fixture: skipped by limitation"));
    let (p, f, i) = closing_counts(&stdout);
    assert_eq!((p, f), (0, 0));
    assert_eq!(i, 12);
    // an xfail that fails is ignored with its reason
    let out = run(
        &[
            "--op",
            "add",
            "--dtype",
            "f32",
            "--backend",
            "buggy",
            "fixture_vs_ref",
        ],
        &[],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("expected failure: fixture: known off-by-one"));
}

#[test]
fn same_seed_same_inputs_other_seed_other_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let name = "fixture_vs_ref::subtract::s8::s8[7]{0}::uniform::buggy";
    let input = |seed: &str| {
        let d = dir.path().join(seed);
        let out = run(&["--exact", name, "--seed", seed], &[], &d);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let repro = stdout
            .lines()
            .find_map(|l| l.strip_prefix("reproducer: "))
            .unwrap()
            .to_string();
        std::fs::read_to_string(Path::new(&repro).join("input0.txt")).unwrap()
    };
    assert_eq!(input("1"), input("1"));
    assert_ne!(input("1"), input("2"));
}
