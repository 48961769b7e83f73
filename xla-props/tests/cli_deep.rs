//! `xla-props compare --deep` and `xla-props isolate` on a module whose
//! output masks a miscompiled fusion: the bug is still reported, with its
//! fusion and instruction, while the whole-module verdict stays "agree".

mod common;

use std::path::Path;

use common::cli::{read_json, text, write, xla_props};

/// `(p + 1000) + 2^-30 * (x - f32(f16(x)))`: the feedback term is below half
/// an ULP of the sum, so eliding the round trip inside fusion `f` (which
/// makes the term 0) leaves the output bit for bit unchanged.
const MASKED: &str = "HloModule masked

feedback {
  x = f32[32] parameter(0)
  h = f16[32] convert(x)
  back = f32[32] convert(h)
  r = f32[32] subtract(x, back)
  g = f32[] constant(9.313225746154785e-10)
  gb = f32[32] broadcast(g), dimensions={}
  ROOT t = f32[32] multiply(r, gb)
}

ENTRY main {
  a = f32[32] parameter(0)
  p = f32[32] parameter(1)
  k = f32[] constant(1000)
  kb = f32[32] broadcast(k), dimensions={}
  q = f32[32] add(p, kb)
  f = f32[32] fusion(a), kind=kLoop, calls=feedback
  ROOT y = f32[32] add(q, f)
}
";

/// `SUBCOMMAND DIR/masked.hlo ARGS...` (writing [`MASKED`] there), which
/// must exit with `code`: its stdout and stderr together.
fn run(dir: &Path, subcommand: &str, args: &[&str], code: i32) -> String {
    let hlo = write(dir, "masked.hlo", MASKED);
    let out = xla_props()
        .arg(subcommand)
        .arg(&hlo)
        .args(args)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(code), "{t}");
    t
}

#[test]
fn compare_deep_reports_the_masked_fusion_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let backend = ["--backend", "mutant:elide-convert-pair"];
    // without --deep the output agrees: exit 0
    run(dir.path(), "compare", &backend, 0);
    let json = dir.path().join("deep.json");
    let deep = [&backend[..], &["--deep", "--json", json.to_str().unwrap()]].concat();
    let t = run(dir.path(), "compare", &deep, 1);
    assert!(t.contains("agree"), "{t}");
    assert!(
        t.contains("local disagreement: fusion `f` (computation `feedback`): `back` (convert) of h (convert)"),
        "{t}"
    );
    let j = read_json(&json);
    assert_eq!(j["output_agrees"], true, "{j}");
    let local = j["local_disagreements"].as_array().unwrap();
    assert_eq!(local.len(), 1, "{j}");
    assert_eq!(local[0]["top_level"], "f");
    assert_eq!(local[0]["location"]["fusion"], "f");
    assert_eq!(local[0]["location"]["instruction"], "back");
    assert_eq!(local[0]["mismatch"], "values");
}

#[test]
fn compare_deep_on_a_correct_backend_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("deep.json");
    let t = run(
        dir.path(),
        "compare",
        &[
            "--backend",
            "interpreter",
            "--deep",
            "--json",
            json.to_str().unwrap(),
        ],
        0,
    );
    assert!(t.contains("top-level instructions compared"), "{t}");
    let j = read_json(&json);
    assert_eq!(j["output_agrees"], true);
    assert_eq!(j["local_disagreements"], serde_json::json!([]));
}

#[test]
fn isolate_names_the_masked_fusion_and_writes_a_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let args = [
        "--backend",
        "mutant:elide-convert-pair",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let t = run(dir.path(), "isolate", &args, 1);
    assert!(t.contains("masked downstream"), "{t}");
    assert!(
        t.contains("first diverging instruction `back` (convert)"),
        "{t}"
    );
    let j = read_json(&out_dir.join("report.json"));
    assert_eq!(j["output_agrees"], true);
    assert_eq!(j["culprit"]["fusion"], "f");
    assert_eq!(j["culprit"]["instruction"], "back");
    assert_eq!(j["local_disagreements"].as_array().unwrap().len(), 1);
    assert!(j["reproducer_instructions"].as_u64().unwrap() <= 10, "{j}");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("the output agrees"), "{md}");
    assert!(md.contains("## local disagreements (1)"), "{md}");
}

#[test]
fn compare_deep_with_an_unknown_backend_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = ["--backend", "tpu-magic", "--deep"];
    let t = run(dir.path(), "compare", &unknown, 2);
    assert!(t.contains("unknown backend `tpu-magic`"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
}
