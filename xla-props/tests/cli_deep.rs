//! `xla-props compare --deep` and `xla-props isolate` on a module whose
//! output masks a miscompiled fusion: the bug is still reported, with its
//! fusion and instruction, while the whole-module verdict stays "agree".

use std::path::Path;
use std::process::Command;

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

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

fn write(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("masked.hlo");
    std::fs::write(&p, MASKED).unwrap();
    p
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn compare_deep_reports_the_masked_fusion_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path());
    let backend = ["--backend", "mutant:elide-convert-pair"];
    // without --deep the output agrees: exit 0
    let plain = xla_props()
        .arg("compare")
        .arg(&hlo)
        .args(backend)
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain));
    let json = dir.path().join("deep.json");
    let out = xla_props()
        .arg("compare")
        .arg(&hlo)
        .args(backend)
        .arg("--deep")
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("agree"), "{t}");
    assert!(
        t.contains("local disagreement: fusion `f` (computation `feedback`): `back` (convert) of h (convert)"),
        "{t}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
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
    let hlo = write(dir.path());
    let json = dir.path().join("deep.json");
    let out = xla_props()
        .arg("compare")
        .arg(&hlo)
        .args(["--backend", "interpreter", "--deep", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("top-level instructions compared"), "{t}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["output_agrees"], true);
    assert_eq!(j["local_disagreements"], serde_json::json!([]));
}

#[test]
fn isolate_names_the_masked_fusion_and_writes_a_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path());
    let out_dir = dir.path().join("out");
    let out = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args(["--backend", "mutant:elide-convert-pair", "--quiet", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("masked downstream"), "{t}");
    assert!(
        t.contains("first diverging instruction `back` (convert)"),
        "{t}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
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
    let hlo = write(dir.path());
    let out = xla_props()
        .arg("compare")
        .arg(&hlo)
        .args(["--backend", "tpu-magic", "--deep"])
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("unknown backend `tpu-magic`"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
}
