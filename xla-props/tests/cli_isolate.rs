//! `xla-props isolate` through the built binary: exit codes and files.

mod common;

use std::path::Path;
use std::process::Command;

use common::cli::{closed_stdout_is_not_a_panic, exits, fails_with, read_json, write, xla_props};

/// An infeed, which no backend here runs.
const INFEED: &str = "HloModule m\nENTRY main {\n  t = token[] after-all()\n  i = (f32[2], token[]) infeed(t)\n  ROOT r = f32[2] get-tuple-element(i), index=0\n}\n";

/// `isolate HLO --backend BACKEND --quiet EXTRA... --out OUT`, not run yet.
fn isolate(hlo: &Path, backend: &str, extra: &[&str], out: &Path) -> Command {
    let mut cmd = xla_props();
    cmd.arg("isolate")
        .arg(hlo)
        .args(["--backend", backend, "--quiet"])
        .args(extra)
        .arg("--out")
        .arg(out);
    cmd
}

/// `p + (x - f32(f16(x)))`, the quantization residual in its own fusion.
const QUANT: &str = "HloModule quant

residual {
  x = f32[32] parameter(0)
  h = f16[32] convert(x)
  back = f32[32] convert(h)
  ROOT r = f32[32] subtract(x, back)
}

ENTRY main {
  a = f32[32] parameter(0)
  p = f32[32] parameter(1)
  n = f32[32] negate(a)
  f = f32[32] fusion(n), kind=kLoop, calls=residual
  ROOT y = f32[32] add(p, f)
}
";

#[test]
fn an_agreeing_module_exits_0_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let out_dir = dir.path().join("out");
    let out = isolate(&hlo, "interpreter", &["--seed", "3"], &out_dir)
        .output()
        .unwrap();
    let stdout = exits(&out, 0);
    assert!(stdout.contains("agrees with `reference`"), "{stdout}");
    assert!(stdout.contains("nothing to isolate"), "{stdout}");
    // an isolation always leaves its report, also with nothing to isolate
    let report = std::fs::read_to_string(dir.path().join("out").join("report.json")).unwrap();
    assert!(report.contains("nothing to isolate"), "{report}");
    assert!(!dir.path().join("out").join("reproducer.hlotest").exists());
}

#[test]
fn a_malformed_file_exits_2_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "bad.hlo", "HloModule m\nENTRY main {\n  x = f32[3] parameter(0)\n  ROOT y = f32[3] frobnicate(x)\n}\n");
    let out = isolate(&hlo, "interpreter", &[], &dir.path().join("out"))
        .output()
        .unwrap();
    fails_with(&out, 2, &["bad.hlo:4:", "frobnicate"]);
}

#[test]
fn an_unknown_backend_exits_2_listing_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    // an unknown `--backend`, and an unknown `--reference` beside a known one
    for (backend, extra) in [
        ("tpu-magic", &[][..]),
        ("interpreter", &["--reference", "tpu-magic"][..]),
    ] {
        let out = isolate(&hlo, backend, extra, dir.path()).output().unwrap();
        fails_with(&out, 2, &["unknown backend `tpu-magic`", "interpreter"]);
    }
}

#[test]
fn an_unsupported_op_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "feed.hlo", INFEED);
    let out = isolate(&hlo, "interpreter", &[], &dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = fails_with(&out, 2, &["infeed"]);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// On a `buggy:` wrapper (a `backend::mutant` fusion bug).
#[test]
fn a_disagreement_exits_1_and_writes_the_reproducer_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let out_dir = dir.path().join("out");
    let backend = "buggy:elide-round-trip@residual";
    let stdout = exits(&isolate(&hlo, backend, &[], &out_dir).output().unwrap(), 1);
    assert!(stdout.contains("culprit: fusion `f` (computation `residual`), first diverging instruction `back` (convert)"), "{stdout}");
    assert!(
        stdout.contains("vanishes when the fusion is split: true"),
        "{stdout}"
    );
    let json = read_json(&out_dir.join("report.json"));
    assert_eq!(json["culprit"]["fusion"], "f");
    assert_eq!(json["culprit"]["instruction"], "back");
    assert_eq!(json["local"], true);
    assert_eq!(json["vanishes_when_split"], true);
    assert!(json["backend_runs"].as_u64().unwrap() > 0);
    let repro = std::fs::read_to_string(out_dir.join("reproducer.hlotest")).unwrap();
    assert!(repro.contains("// expect: mismatch values"), "{repro}");
    assert!(
        repro.contains("// run: backends=buggy:elide-round-trip@residual"),
        "{repro}"
    );
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let out = dir.path().join("out");
    closed_stdout_is_not_a_panic(
        &mut isolate(&hlo, "mutant:elide-convert-pair", &[], &out),
        1,
    );
}
