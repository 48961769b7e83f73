//! Unit tests of the report model: aggregation, compare diffs, input parsing
//! and the rendered page's links.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

const RESULTS: &str = include_str!("../../tests/data/report/results.json");
const OLD: &str = include_str!("../../tests/data/report/old.json");
const ISOLATE: &str = include_str!("../../tests/data/report/isolate-report.json");
const MUTANT: &str = "mutant:drop-f16-round-trip";

fn run() -> RunResults {
    RunResults::parse(RESULTS, "results.json").unwrap()
}

fn key(b: &str, op: &str, d: &str) -> CellKey {
    (b.into(), op.into(), d.into())
}

#[test]
fn aggregates_counts_per_backend_op_dtype() {
    let m = RunModel::new(&run());
    assert_eq!(
        m.totals,
        Counts {
            passed: 15,
            failed: 4,
            skipped: 2,
            filtered_out: 0
        }
    );
    assert_eq!(m.cells.len(), 10);
    assert_eq!(m.backends, ["interpreter", MUTANT]);
    // binary family before unary, names within a family
    assert_eq!(m.ops, ["add", "subtract", "exponential"]);
    assert_eq!(m.dtypes, ["bf16", "f16", "f32"]);
    let sub = &m.cells[&key(MUTANT, "subtract", "f16")];
    assert_eq!(
        sub.counts,
        Counts {
            passed: 0,
            failed: 3,
            skipped: 1,
            filtered_out: 0
        }
    );
    assert_eq!(sub.max_ulp, Some(1536));
    assert_eq!(sub.failures.len(), 3);
    let bf16 = &m.cells[&key("interpreter", "add", "bf16")];
    assert_eq!(bf16.counts.skipped, 1);
    assert_eq!(bf16.max_ulp, None);
    assert_eq!(m.ops_of("interpreter"), ["add", "exponential"]);
    assert_eq!(m.ops_of(MUTANT), ["add", "subtract", "exponential"]);
    // the sum over cells is the total
    let sum: u64 = m.cells.values().map(|c| c.counts.total()).sum();
    assert_eq!(sum, 21);
    assert_eq!(m.case_time_us, 21 * 120);
}

#[test]
fn ulp_histograms_sum_elements_and_fill_the_axis() {
    let m = RunModel::new(&run());
    let d = &m.ulp[&("subtract".to_string(), "f16".to_string())];
    assert_eq!(d.max_ulp, 1536);
    assert_eq!(d.cases, 3);
    // 0, 1, 2, 3-4, ..., 513-1024, 1025-2048: 13 buckets
    assert_eq!(d.elements.len(), 13);
    assert_eq!(d.elements[0], ("0".to_string(), 84));
    assert_eq!(d.elements[1], ("1".to_string(), 0));
    assert_eq!(d.elements[12], ("1025-2048".to_string(), 12));
    let total: u64 = d.elements.iter().map(|b| b.1).sum();
    assert_eq!(total, 3 * 35);
    assert_eq!(d.case_max.last(), Some(&("1025-2048".to_string(), 3)));
    // add f32 is exact everywhere, on both backends
    let add = &m.ulp[&("add".to_string(), "f32".to_string())];
    assert_eq!((add.max_ulp, add.cases), (0, 4));
    assert_eq!(add.elements, [("0".to_string(), 4 * 35)]);
}

#[test]
fn bucket_labels_match_the_comparator() {
    let cases = [
        (0, "0"),
        (1, "1"),
        (2, "2"),
        (3, "3-4"),
        (4, "3-4"),
        (5, "5-8"),
        (9, "9-16"),
        (1 << 31, "1073741825-2147483648"),
        ((1 << 31) + 1, ">2^31"),
        (u64::MAX, ">2^31"),
    ];
    for (u, label) in cases {
        assert_eq!(ulp_bucket_label(u), label, "{u}");
    }
    let mut labels = vec!["nan/inf/sign", ">2^31", "9-16", "0", "3-4", "2"];
    labels.sort_by_key(|l| ulp_bucket_order(l));
    assert_eq!(labels, ["0", "2", "3-4", "9-16", ">2^31", "nan/inf/sign"]);
}

/// A comparison's ULP changes as (cell, old, new).
fn ulp_changes(c: &Comparison) -> Vec<(CellKey, u64, u64)> {
    c.ulp_changes
        .iter()
        .map(|u| (u.key.clone(), u.old, u.new))
        .collect()
}

#[test]
fn compare_finds_new_failures_fixes_and_ulp_changes() {
    let old = RunResults::parse(OLD, "old.json").unwrap();
    let c = Comparison::new(&old, &run());
    let new: Vec<&str> = c.new_failures.iter().map(String::as_str).collect();
    assert_eq!(new.len(), 3);
    assert!(new
        .iter()
        .all(|id| id.starts_with("fusion_invariance::subtract::f16")));
    assert_eq!(
        c.fixed,
        BTreeSet::from(["vs_reference::add::f32::f32[5,7]{1,0}::uniform::interpreter".to_string()])
    );
    assert_eq!(c.still_failing, 1);
    assert!(c.no_longer_run.is_empty());
    assert_eq!(
        c.old_totals,
        Counts {
            passed: 17,
            failed: 2,
            skipped: 2,
            filtered_out: 0
        }
    );
    assert_eq!(
        ulp_changes(&c),
        [
            (key("interpreter", "add", "f32"), 9, 0),
            (key("interpreter", "exponential", "f32"), 2, 1),
            (key(MUTANT, "subtract", "f16"), 0, 1536),
        ]
    );
    assert_eq!(
        c.cells_with_new_failures,
        BTreeSet::from([key(MUTANT, "subtract", "f16")])
    );
    assert_eq!(
        c.cells_with_fixes,
        BTreeSet::from([key("interpreter", "add", "f32")])
    );
}

#[test]
fn compare_counts_failures_that_are_no_longer_run() {
    let old = RunResults::parse(
        r#"{"cases": [
        {"id": "p::a::f32::s::v::b", "outcome": "failed"},
        {"id": "p::c::f32::s::v::b", "outcome": "failed"},
        {"id": "p::d::f32::s::v::b", "outcome": "skipped"}]}"#,
        "old",
    )
    .unwrap();
    let new = RunResults::parse(
        r#"{"cases": [
        {"id": "p::a::f32::s::v::b", "outcome": "skipped"},
        {"id": "p::d::f32::s::v::b", "outcome": "failed"}]}"#,
        "new",
    )
    .unwrap();
    let c = Comparison::new(&old, &new);
    assert_eq!(c.no_longer_run.len(), 2);
    assert!(c.fixed.is_empty());
    assert_eq!(
        c.new_failures,
        BTreeSet::from(["p::d::f32::s::v::b".to_string()])
    );
    // the same run against itself changes nothing
    let same = Comparison::new(&new, &new);
    assert!(same.new_failures.is_empty() && same.fixed.is_empty());
    assert_eq!(same.still_failing, 1);
}

#[test]
fn fields_fall_back_to_the_id_and_a_message_is_not_parsed() {
    let r = RunResults::parse(
        r#"{"cases": [{"id": "vs_reference::add::f16::f16[7]{0}::special::mutant:x", "outcome": "failed",
            "verdict": "mismatch: 1 element(s) differ", "rerun": "cargo test -- --exact 'n'",
            "reproducer": "dir/n",
            "message": "backend: mutant:x\nverdict: other\nrerun: other\nreproducer: other"}]}"#,
        "r",
    )
    .unwrap();
    let c = &r.cases[0];
    assert_eq!(
        (c.property(), c.op(), c.dtype(), c.backend()),
        ("vs_reference", "add", "f16", "mutant:x")
    );
    // the typed fields, never lines read back out of the message
    assert_eq!(c.verdict(), Some("mismatch: 1 element(s) differ"));
    assert_eq!(c.rerun(), Some("cargo test -- --exact 'n'"));
    assert_eq!(c.reproducer(), Some("dir/n"));
    let old = RunResults::parse(
        r#"{"cases": [{"id": "p::add::f16::s::v::b", "outcome": "failed",
            "message": "backend: b\nrerun: cargo test\nreproducer: dir/n"}]}"#,
        "r",
    )
    .unwrap();
    assert_eq!(
        (old.cases[0].rerun(), old.cases[0].reproducer()),
        (None, None)
    );
    let short = CaseResult {
        id: "oddname".into(),
        message: Some("only a line".into()),
        ..CaseResult::default()
    };
    assert_eq!((short.op(), short.backend()), ("unknown", "unknown"));
    assert_eq!(short.verdict(), Some("only a line"));
    assert_eq!(short.rerun(), None);
}

#[test]
fn bad_input_is_a_one_line_lowercase_error() {
    let bad = [
        ("{", "not a results file"),
        (
            r#"{"cases": [{"outcome": "passed"}]}"#,
            "case 0 has no `id`",
        ),
        (r#"{"cases": [{"id": "a::b::c::d"}]}"#, "has no `outcome`"),
        (
            r#"{"cases": [{"id": "a::b::c::d", "outcome": "exploded"}]}"#,
            "unknown variant",
        ),
        (r#"{"cases": 3}"#, "not a results file"),
        (r#"[1, 2]"#, "not a results file"),
        ("[]", "expected a json object"),
    ];
    for (text, want) in bad {
        let e = RunResults::parse(text, "r.json").unwrap_err().0;
        assert!(e.starts_with("r.json: "), "{e}");
        assert!(e.contains(want), "{text}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = RunResults::load(std::path::Path::new("/nonexistent/r.json"))
        .unwrap_err()
        .0;
    assert!(e.starts_with("/nonexistent/r.json: cannot read"), "{e}");
}

#[test]
fn metadata_and_isolations_parse_in_both_forms() {
    let r = run();
    let meta = r.metadata.as_ref().unwrap();
    assert_eq!(meta.seed, Some(42));
    assert_eq!(meta.backends.len(), 3);
    assert_eq!(meta.backends[2].available, Some(false));
    let map = RunResults::parse(
        r#"{"cases": [], "metadata": {"backends": {"xla-cpu": "0.4.36"}, "plugin": "jax"}}"#,
        "m",
    )
    .unwrap();
    let meta = map.metadata.unwrap();
    assert_eq!(meta.backends[0].name, "xla-cpu");
    assert_eq!(meta.backends[0].version.as_deref(), Some("0.4.36"));
    assert_eq!(meta.extra["plugin"], "jax");
    let iso = &r.isolations[0];
    assert_eq!(iso.culprit.instruction.as_deref(), Some("convert.2"));
    assert_eq!(iso.nodes[1].opcode(), Some("convert"));
    assert_eq!(iso.edges[3].ends(), ("convert.2", "sub"));
    let tool: Isolation = serde_json::from_str(ISOLATE).unwrap();
    assert_eq!(tool.local, Some(false));
    assert!(tool.nodes.is_empty());
    assert_eq!(tool.extra["signature"], "mismatch in output 0");
}

#[test]
fn page_links_every_failing_cell_to_its_failures() {
    let old = RunResults::parse(OLD, "old.json").unwrap();
    let html = render_html(&run(), Some(&old), &[], &ReportOptions::default()).unwrap();
    let m = RunModel::new(&run());
    let mut linked = 0;
    for (k, cell) in &m.cells {
        let anchor = cell_anchor(k);
        let href = format!("href=\"#{anchor}\"");
        if cell.counts.failed > 0 {
            linked += 1;
            assert_eq!(html.matches(&href).count(), 1, "{anchor}");
            assert_eq!(html.matches(&format!("id=\"{anchor}\"")).count(), 1);
        } else {
            assert!(!html.contains(&href), "{anchor}");
        }
    }
    assert_eq!(linked, 2);
    assert_eq!(html.matches("<td class=\"cell ").count(), 10);
    // new failures are marked in the heatmap and the table
    assert_eq!(html.matches("<span class=\"badge\">new</span>").count(), 3);
    assert_eq!(html.matches("class=\"cell partfail new\"").count(), 1);
    assert_eq!(html.matches(" fixed\"").count(), 1);
    assert!(html.contains("1536 (worse)"));
    assert!(html.contains("max 1536 ulp (was 0 ulp)"));
    // isolation graph with the culprit in red, drawn by plotters
    assert!(html.contains("convert.2 = convert"));
    // self-contained: nothing to fetch
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn page_escapes_what_the_results_say() {
    let r = RunResults::parse(
        r#"{"cases": [{"id": "p::<b>::f32::s::v::<script>x</script>", "outcome": "failed",
            "worst_mismatch": "a < b & \"c\""}]}"#,
        "r",
    )
    .unwrap();
    let html = render_html(&r, None, &[], &ReportOptions::default()).unwrap();
    assert!(!html.contains("<script>x</script>"));
    assert!(!html.contains("<b>"));
    assert!(html.contains("a &lt; b &amp; &quot;c&quot;"));
    // the only script is the recorder in the head
    assert_eq!(html.matches("<script>").count(), 1);
}

#[test]
fn empty_run_renders() {
    let r = RunResults::parse(r#"{"cases": []}"#, "r").unwrap();
    let html = render_html(&r, None, &[], &ReportOptions::default()).unwrap();
    assert!(html.contains("No case failed."));
    assert!(html.contains("No case in these results reported a ULP distance"));
    assert!(html.contains("0 cases on 0 backend(s)"));
}

/// What the runner writes today: parts of the id only, a map histogram,
/// `kind`, top-level `families`, and its metadata.
const RUNNER_FORM: &str = r#"{"passed": 3, "failed": 2, "skipped": 1,
  "metadata": {"backends": [
      {"name": "interpreter", "version": "built into xla-props 0.1.0", "role": "under test"},
      {"name": "mutant:exp-low-precision", "version": "interpreter with mutation exp-low-precision: built into xla-props 0.1.0", "role": "under test"},
      {"name": "reference", "version": "built into xla-props 0.1.0", "role": "reference"}],
    "seed": 7, "git_revision": "0123456789abcdef0123456789abcdef01234567", "git_dirty": true,
    "started_at": "2026-11-29T14:00:00Z", "duration_ms": 1234,
    "command": "cargo test --test conformance -- --json r.json", "host": "ci (linux x86_64)", "cores": 16,
    "xla_props": "0.1.0"},
  "families": {"exponential": "elementwise-unary", "add": "elementwise-binary"},
  "cases": [
    {"id": "exhaustive::exponential::f16::f16[65536]{0}::all::interpreter", "outcome": "passed",
     "max_ulp": 1, "budget": "exhaustive tolerance ulp(1)", "legal": {"approximate-function": 3},
     "ulp_histogram": {"0": 65000, "1": 536}, "duration_us": 9000},
    {"id": "exhaustive::exponential::f16::f16[65536]{0}::all::mutant:exp-low-precision", "outcome": "failed",
     "verdict": "backend vs reference: mismatch", "max_ulp": 9, "ulp_histogram": {"0": 60000, "5-8": 5000, "9-16": 536},
     "rerun": "cargo test --test conformance -- --exact 'exhaustive::exponential::f16::f16[65536]{0}::all::mutant:exp-low-precision'",
     "reproducer": "target/xla-props/failures/x", "duration_us": 9000},
    {"id": "vs_reference::exponential::f16::f16[7]{0}::uniform::interpreter", "outcome": "passed",
     "max_ulp": 0, "ulp_histogram": {"0": 7}, "duration_us": 10},
    {"id": "vs_reference::exponential::f16::f16[7]{0}::uniform::mutant:exp-low-precision", "outcome": "failed",
     "verdict": "backend vs reference: mismatch", "max_ulp": 4, "ulp_histogram": {"0": 5, "3-4": 2}, "duration_us": 10},
    {"id": "vs_reference::add::f32::f32[7]{0}::uniform::interpreter", "outcome": "passed",
     "max_ulp": 0, "ulp_histogram": {"0": 7}, "duration_us": 10},
    {"id": "vs_reference::add::f32::f32[]::uniform::mutant:exp-low-precision", "outcome": "skipped", "kind": "xfail",
     "verdict": "backend vs reference: mismatch", "message": "expected failure: known", "duration_us": 10}
  ]}"#;

/// The page of [`RUNNER_FORM`] with the default options.
fn runner_form_page() -> String {
    render_html(
        &RunResults::parse(RUNNER_FORM, "r.json").unwrap(),
        None,
        &[],
        &ReportOptions::default(),
    )
    .unwrap()
}

/// What follows the first `start` in `html`, up to the next `end`.
fn part_of<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let (_, after) = html
        .split_once(start)
        .unwrap_or_else(|| panic!("no {start} in the page"));
    &after[..after.find(end).unwrap()]
}

#[test]
fn the_runners_current_form_is_read_whole() {
    let r = RunResults::parse(RUNNER_FORM, "r.json").unwrap();
    let c = &r.cases[1];
    assert_eq!(
        (c.property(), c.op(), c.dtype(), c.backend()),
        (
            "exhaustive",
            "exponential",
            "f16",
            "mutant:exp-low-precision"
        )
    );
    assert_eq!(c.family.as_deref(), Some("elementwise-unary"));
    assert_eq!(c.verdict(), Some("backend vs reference: mismatch"));
    assert_eq!(c.reproducer(), Some("target/xla-props/failures/x"));
    let h = c.ulp_histogram.as_ref().unwrap();
    assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), 65536);
    assert_eq!(r.cases[5].outcome(), &Outcome::XFail(()));
    let meta = r.metadata.as_ref().unwrap();
    assert_eq!((meta.git_dirty, meta.cores), (Some(true), Some(16)));
    assert_eq!(meta.backends[2].role.as_deref(), Some("reference"));
    // unary after binary, from the families map
    assert_eq!(RunModel::new(&r).ops, ["add", "exponential"]);
}

#[test]
fn ulp_histograms_aggregate_per_backend_over_any_property() {
    let m = RunModel::new(&RunResults::parse(RUNNER_FORM, "r.json").unwrap());
    let d = &m.ulp[&("exponential".to_string(), "f16".to_string())];
    // both properties, both backends
    assert_eq!(
        d.properties,
        BTreeMap::from([
            ("exhaustive".to_string(), (2, 2 * 65536)),
            ("vs_reference".to_string(), (2, 14)),
        ])
    );
    assert_eq!((d.max_ulp, d.cases), (9, 4));
    let names: Vec<&str> = d.by_backend.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(names, ["interpreter", "mutant:exp-low-precision"]);
    let (interp, mutant) = (&d.by_backend[0].1, &d.by_backend[1].1);
    // every backend's histogram has the whole's buckets, 0 to 9-16
    let labels = |x: &UlpDistribution| x.elements.iter().map(|b| b.0.clone()).collect::<Vec<_>>();
    assert_eq!(labels(interp), labels(d));
    assert_eq!(labels(mutant), labels(d));
    assert_eq!(d.elements.len(), 6);
    assert_eq!(interp.elements[0], ("0".to_string(), 65007));
    assert_eq!(interp.elements[1], ("1".to_string(), 536));
    assert_eq!(interp.elements[5], ("9-16".to_string(), 0));
    assert_eq!(mutant.elements[3], ("3-4".to_string(), 2));
    assert_eq!(mutant.elements[4], ("5-8".to_string(), 5000));
    assert_eq!((interp.max_ulp, mutant.max_ulp), (1, 9));
    assert!(!d.is_exact());
    let add = &m.ulp[&("add".to_string(), "f32".to_string())];
    assert!(add.is_exact());
    // the page draws exponential f16 with both backends and names its sources
    let html = runner_form_page();
    let fig = part_of(&html, "id=\"ulp-exponential-f16\"", "</figure>");
    // each nonzero maximum with what accepted it, or that it failed
    assert!(
        fig.contains(
            "interpreter max 1 ulp (accepted by: exhaustive tolerance ulp(1), 1 cases; \
             approximate-function, 3 elements), mutant:exp-low-precision max 9 ulp \
             (2 failed cases, not accepted)"
        ),
        "{fig}"
    );
    assert!(
        fig.contains("exhaustive: 2 cases, 131072 elements; vs_reference: 2 cases, 14 elements")
    );
    assert!(html.contains("Exact (0 ulp) in every case: add f32."));
    // the metadata rows
    assert!(html.contains("(with uncommitted changes to tracked files)"));
    assert!(html.contains("ci (linux x86_64), 16 cores"));
    assert!(html.contains("1 failed as declared"));
    assert!(html.contains("<i>(the reference)</i>"));
}

#[test]
fn compare_works_on_the_runners_current_form() {
    let old = RunResults::parse(RUNNER_FORM, "old.json").unwrap();
    // the mutant's exhaustive case fixed; a new vs_reference failure; exp f16 interp ULP up
    let new_text = RUNNER_FORM
        .replace(
            r#""outcome": "failed",
     "verdict": "backend vs reference: mismatch", "max_ulp": 9"#,
            r#""outcome": "passed", "max_ulp": 0"#,
        )
        .replace(
            r#"{"id": "vs_reference::add::f32::f32[7]{0}::uniform::interpreter", "outcome": "passed",
     "max_ulp": 0"#,
            r#"{"id": "vs_reference::add::f32::f32[7]{0}::uniform::interpreter", "outcome": "failed",
     "max_ulp": 3"#,
        );
    let new = RunResults::parse(&new_text, "new.json").unwrap();
    let c = Comparison::new(&old, &new);
    assert_eq!(
        c.fixed,
        BTreeSet::from([
            "exhaustive::exponential::f16::f16[65536]{0}::all::mutant:exp-low-precision"
                .to_string()
        ])
    );
    assert_eq!(
        c.new_failures,
        BTreeSet::from(["vs_reference::add::f32::f32[7]{0}::uniform::interpreter".to_string()])
    );
    assert_eq!(c.still_failing, 1);
    assert_eq!(
        ulp_changes(&c),
        [
            (key("interpreter", "add", "f32"), 0, 3),
            (key("mutant:exp-low-precision", "exponential", "f16"), 9, 4),
        ]
    );
    let html = render_html(&new, Some(&old), &[], &ReportOptions::default()).unwrap();
    assert!(html.contains("<span class=\"badge\">new</span>"));
    assert!(html.contains("3 (worse)") && html.contains("4 (better)"));
}

#[test]
fn legal_differences_are_counted_per_reason_and_backend() {
    let r = RunResults::parse(
        r#"{"cases": [
            {"id": "vs_reference::tanh::f32::s::v::xla-cpu", "outcome": "passed",
             "legal": {"approximate-function": 12, "propagated-bound": 3}},
            {"id": "vs_reference::add::f32::s::v::xla-cpu", "outcome": "passed",
             "legal": {"propagated-bound": 2}},
            {"id": "vs_reference::add::f32::s::v::interpreter", "outcome": "passed"}]}"#,
        "r",
    )
    .unwrap();
    let html = render_html(&r, None, &[], &ReportOptions::default()).unwrap();
    assert!(html.contains("id=\"legal-table\""), "{html}");
    // per reason, one column per backend in the model's order
    let m = RunModel::new(&r);
    let row = |reason: &str, xla: u64| {
        let cells: String = m
            .backends
            .iter()
            .map(|b| format!("<td>{}</td>", if b == "xla-cpu" { xla } else { 0 }))
            .collect();
        format!("<tr><td><code>{reason}</code></td>{cells}</tr>")
    };
    assert!(html.contains(&row("propagated-bound", 5)), "{html}");
    assert!(html.contains(&row("approximate-function", 12)), "{html}");
    let none = RunResults::parse(r#"{"cases": []}"#, "r").unwrap();
    let html = render_html(&none, None, &[], &ReportOptions::default()).unwrap();
    assert!(html.contains("No element was accepted by a legal difference"));
}

#[test]
fn a_skipped_cell_says_why_under_its_table() {
    let html = runner_form_page();
    // the mutant's add f32 cell: all skipped (an expected failure)
    let cell = part_of(&html, "<td class=\"cell skip\"", "</td>");
    assert!(
        cell.contains("skipped (1): expected failure: known"),
        "{cell}"
    );
    assert!(
        cell.contains(
            "<sup class=\"why\"><a href=\"#skip-mutant-exp-low-precision-1\">1</a></sup>"
        ),
        "{cell}"
    );
    assert!(
        html.contains(
            "<li id=\"skip-mutant-exp-low-precision-1\">expected failure: known (1 case)</li>"
        ),
        "{html}"
    );
    // a backend without skips lists none
    assert_eq!(html.matches("<ol class=\"skip-reasons\"").count(), 1);
}
