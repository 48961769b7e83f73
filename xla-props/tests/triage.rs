//! `xla-props triage`: a slice of the suite run on a backend carrying five
//! catalogue mutations (and a benign variant) at once comes back as exactly
//! five groups, one per mutation, each with its culprit op and a small
//! representative reproducer.

mod common;

use std::path::Path;

use common::cli::{exits, fails_with, read_json, xla_props};
use xla_props::backend::create;
use xla_props::filetest::TrialResult;
use xla_props::triage::{collect, triage, Triage, TriageOptions};

/// The five bugs and the one op each miscompiles.
const BUGS: [(&str, &str); 5] = [
    ("int-add-saturates", "add"),
    ("slice-limit-off-by-one", "slice"),
    ("iota-wrong-dimension", "iota"),
    ("concat-offset-wrong", "concatenate"),
    ("reverse-first-dim-only", "reverse"),
];

/// Runs the suite's `ops` in `dtypes` on `backend`; returns the results file.
fn run_suite(dir: &Path, backend: &str, ops: &str, dtypes: &str) -> std::path::PathBuf {
    let json = dir.join("run.json");
    let args = common::suite_args("suite", ops, dtypes, backend, &[], &json);
    xla_props::Harness::from_iter(args, |_| None)
        .with_builtins()
        .failures_dir(dir.join("failures"))
        .run_to_report()
        .expect("the harness runs");
    json
}

fn triage_run(dir: &Path, json: &Path, backend: &str) -> Triage {
    let b = create(backend).unwrap();
    let (failures, not_triaged) = collect(&[json.to_path_buf()], b.name()).unwrap();
    if let Some(n) = not_triaged.first() {
        let text = std::fs::read_to_string(&n.source).unwrap_or_default();
        let names: Vec<_> = std::fs::read_dir(Path::new(&n.source).parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        panic!(
            "{} not triaged; first: {}: {}\n{text}\n{names:?}",
            not_triaged.len(),
            n.name,
            n.why
        );
    }
    let options = TriageOptions {
        seed: 0,
        bisect_passes: true,
        work_dir: dir.join("work"),
        jobs: 2,
    };
    let inputs = [json.display().to_string()];
    triage(
        &failures,
        Vec::new(),
        b.as_ref(),
        &inputs,
        &options,
        &dir.join("triage"),
        &|_, _| {},
    )
    .unwrap()
}

#[test]
fn five_mutations_make_five_groups() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<&str> = BUGS.iter().map(|(m, _)| *m).collect();
    // a benign variant rides along: it must add no group
    let backend = format!("mutant:{}+pairwise-reduction", names.join("+"));
    let ops: Vec<&str> = BUGS.iter().map(|(_, op)| *op).collect();
    let json = run_suite(dir.path(), &backend, &ops.join(","), "s8,f32");
    let t = triage_run(dir.path(), &json, &backend);
    let summary: Vec<String> = t
        .groups
        .iter()
        .map(|g| {
            format!(
                "{} x{} rep {}",
                g.title, g.count, g.representative_instructions
            )
        })
        .collect();
    assert!(t.failures > BUGS.len(), "{} failures", t.failures);
    assert_eq!(
        t.groups.len(),
        BUGS.len(),
        "{summary:#?}\n{:#?}",
        t.ungrouped
    );
    let mut culprits: Vec<&str> = t.groups.iter().map(|g| g.cause.opcode.as_str()).collect();
    culprits.sort_unstable();
    let mut expected = ops.clone();
    expected.sort_unstable();
    assert_eq!(culprits, expected, "{summary:#?}");
    for g in &t.groups {
        assert!(g.representative_instructions <= 10, "{summary:#?}");
        let rep = dir.path().join("triage").join(&g.representative);
        let text = std::fs::read_to_string(&rep).unwrap();
        assert!(text.contains(&format!(" {}(", g.cause.opcode)), "{text}");
        // the representative still fails on the mutant, the way it says
        let test = xla_props::filetest::HloTest::load(&rep).unwrap();
        let b = create(&backend).unwrap();
        let r = xla_props::filetest::run_file_on(&test, b.as_ref());
        assert!(matches!(r, TrialResult::Pass), "{r:?}");
    }
    // every failure of the run is in a group, and triage.json says so
    assert_eq!(t.grouped, t.failures, "{:#?}", t.ungrouped);
    let back: Triage = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("triage/triage.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(back.groups.len(), BUGS.len());
    assert!(dir.path().join("triage/triage.md").is_file());

    // the report links each failure to its group, and lists the groups
    let html = dir.path().join("report.html");
    xla_props::report::write_report_triaged(
        &json,
        &html,
        None,
        &[],
        Some(&dir.path().join("triage/triage.json")),
    )
    .unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    for g in &t.groups {
        assert!(
            page.contains(&format!("<tr id=\"triage-{}\">", g.id)),
            "{}",
            g.id
        );
        assert!(
            page.contains(&format!("href=\"#triage-{}\"", g.id)),
            "{}",
            g.id
        );
    }
}

const ADD_S8: &str = "HloModule m\nENTRY main {\n  x = s8[4] parameter(0)\n  y = s8[4] parameter(1)\n  ROOT z = s8[4] add(x, y)\n}\n";

fn hlotest(args: &[&str], module: &str) -> String {
    let mut s = String::from(
        "// run: backends=interpreter tolerance=default inputs=inline\n// expect: agree\n",
    );
    for a in args {
        s.push_str(&format!("// arg: {a}\n"));
    }
    s + module
}

#[test]
fn the_command_groups_reproducers_and_leaves_agreeing_ones_out() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("findings");
    std::fs::create_dir_all(inputs.join("nested")).unwrap();
    // two overflowing adds (one wraps in two's complement, the mutant saturates) and one that agrees
    let files = [
        (
            "a.hlotest",
            hlotest(&["s8[4] 100 -100 1 2", "s8[4] 100 -100 1 2"], ADD_S8),
        ),
        (
            "nested/b.hlotest",
            hlotest(&["s8[4] 127 0 0 0", "s8[4] 1 0 0 0"], ADD_S8),
        ),
        (
            "c.hlotest",
            hlotest(&["s8[4] 1 2 3 4", "s8[4] 1 2 3 4"], ADD_S8),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(inputs.join(name), text).unwrap();
    }
    let out = dir.path().join("out");
    let run = xla_props()
        .args(["triage", "--quiet", "--backend", "mutant:int-add-saturates"])
        .arg("--out")
        .arg(&out)
        .arg(&inputs)
        .output()
        .unwrap();
    let stdout = exits(&run, 1);
    assert!(
        stdout.starts_with("3 failures: 2 in 1 group(s), 1 in none"),
        "{stdout}"
    );
    let t: Triage = serde_json::from_value(read_json(&out.join("triage.json"))).unwrap();
    assert_eq!(t.groups[0].cause.opcode, "add");
    assert_eq!(t.groups[0].cause.dtype, "integer");
    assert!(
        t.ungrouped[0].conclusion.starts_with("agrees now"),
        "{:?}",
        t.ungrouped
    );
    assert!(out.join(&t.groups[0].representative).is_file());

    // bad input: a clear, located error and exit 2
    let missing = dir.path().join("nope.hlotest");
    let run = xla_props()
        .args(["triage", "--backend", "interpreter", "--out"])
        .arg(&out)
        .arg(&missing)
        .output()
        .unwrap();
    fails_with(&run, 2, &["nope.hlotest: no such file or directory"]);
}
