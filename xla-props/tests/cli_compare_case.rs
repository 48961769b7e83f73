//! `xla-props compare --case NAME` replays suite cases exactly: for a unary
//! op, a reduction and an operand-forms case, on the interpreter and on a
//! mutant that computes exp imprecisely and drops a reduce's init, the inputs `compare --case` reports are
//! the suite's (the digests of `CaseContext::inputs`, which the runner
//! uses), and its outcome is the one the suite's harness reports for the
//! same case.

mod common;

use std::sync::Arc;

use common::cli::{fails_with, read_json, xla_props};
use xla_props::backend::create;
use xla_props::hlo::{ElementType, Opcode};
use xla_props::inputs::Distribution;
use xla_props::literal::Literal;
use xla_props::property::{
    find_property, BackendId, CaseContext, CaseId, CaseSpace, Fnv, ReferenceCache, SpaceFilter,
};
use xla_props::runner::Harness;

/// `compare --json`'s digest of one argument.
fn digest(lit: &Literal) -> String {
    let mut h = Fnv::new();
    h.write(lit.shape().to_string().as_bytes());
    for i in 0..lit.element_count() {
        h.write(&lit.get_bits(i).to_le_bytes());
    }
    format!("{:016x}", h.finish())
}

/// The first `special` f32 case of `property` whose op satisfies `op` and
/// that has parameters.
fn case_of(property: &str, backend: &str, op: impl Fn(Opcode) -> bool) -> CaseId {
    let (index, spec) = find_property(property).unwrap();
    let space = CaseSpace::new(index, spec, &SpaceFilter::default()).unwrap();
    let backend = BackendId::intern(backend);
    let found = space
        .iter()
        .filter(|k| op(k.op) && k.dist == Distribution::Special)
        .filter(|k| k.dtype == ElementType::F32)
        .map(|key| CaseId { key, backend })
        .find(|&case| !suite_digests(case).is_empty())
        .unwrap_or_else(|| panic!("no special case with parameters in {property}"));
    found
}

/// The suite's inputs of a case (as the runner draws them), as digests.
fn suite_digests(case: CaseId) -> Vec<String> {
    let b = create("interpreter").unwrap();
    let cache = ReferenceCache::new();
    let mut ctx = CaseContext::new(case, b.as_ref(), b.as_ref(), &cache, 1, 0);
    ctx.inputs().unwrap().iter().map(digest).collect()
}

/// The suite harness's outcome of exactly `case`: pass, fail or skip.
fn suite_outcome(case: &str, backend: &str, dir: &std::path::Path) -> &'static str {
    let log = dir.join("libtest.log");
    let args: Vec<String> = ["suite", "--exact", case, "-q", "--logfile"]
        .iter()
        .map(|s| s.to_string())
        .chain([log.display().to_string()])
        .collect();
    let report = Harness::from_iter(args, |_| None)
        .with_builtins()
        .backend_arc(Arc::from(create(backend).unwrap()))
        .failures_dir(dir.join("failures"))
        .run_to_report()
        .unwrap();
    let t = report.totals;
    assert_eq!(t.passed + t.failed + t.skipped, 1, "{case}: {t:?}");
    match (t.passed, t.failed) {
        (1, _) => "pass",
        (_, 1) => "fail",
        _ => "skip",
    }
}

#[test]
fn compare_case_replays_the_suites_inputs_and_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = 0;
    for backend in [
        "interpreter",
        "mutant:exp-low-precision+reduce-ignores-init",
    ] {
        let cases = [
            case_of("vs_reference", backend, |op| op == Opcode::Exponential),
            case_of("vs_reference", backend, |op| op == Opcode::Reduce),
            case_of("operand_forms", backend, |op| op == Opcode::Multiply),
        ];
        for case in cases {
            let name = case.to_string();
            let json = dir.path().join("c.json");
            let out = xla_props()
                .args(["compare", "--case", &name, "--json"])
                .arg(&json)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let v = read_json(&json);
            let got: Vec<String> = v["input_digests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap().to_string())
                .collect();
            assert!(!got.is_empty(), "{name}: no inputs\n{stderr}");
            assert_eq!(got, suite_digests(case), "{name}: inputs differ");
            let suite = suite_outcome(&name, backend, dir.path());
            assert_eq!(v["outcome"], suite, "{name}: verdict differs\n{stderr}");
            let code = match suite {
                "pass" => 0,
                "skip" => 2,
                _ => {
                    failures += 1;
                    assert!(v["verdict"].is_object(), "{name}: {v}");
                    1
                }
            };
            assert_eq!(out.status.code(), Some(code), "{name}\n{stderr}");
        }
    }
    // the mutant is caught somewhere: the verdicts compared are not all passes
    assert!(failures > 0, "no case failed on the mutant");
}

#[test]
fn compare_case_rejects_a_bad_name_with_a_located_error() {
    let out = xla_props()
        .args([
            "compare",
            "--case",
            "vs_reference::nope::f32::f32[7]{0}::uniform::interpreter",
        ])
        .output()
        .unwrap();
    let stderr = fails_with(&out, 2, &["--case vs_reference::nope"]);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
