//! `xla-props isolate` through the built binary: exit codes and files.

use std::path::Path;
use std::process::Command;

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
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

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn an_agreeing_module_exits_0_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let out = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args([
            "--backend",
            "interpreter",
            "--quiet",
            "--seed",
            "3",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let out = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args(["--backend", "interpreter", "--quiet", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.hlo:4:"), "{stderr}");
    assert!(stderr.contains("frobnicate"), "{stderr}");
}

#[test]
fn an_unknown_backend_exits_2_listing_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    for flag in ["--backend", "--reference"] {
        let mut cmd = xla_props();
        cmd.arg("isolate")
            .arg(&hlo)
            .arg("--quiet")
            .arg("--out")
            .arg(dir.path());
        if flag == "--reference" {
            cmd.args(["--backend", "interpreter"]);
        }
        let out = cmd.args([flag, "tpu-magic"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("unknown backend `tpu-magic`"), "{stderr}");
        assert!(stderr.contains("interpreter"), "{stderr}");
    }
}

#[test]
fn an_unsupported_op_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(
        dir.path(),
        "feed.hlo",
        "HloModule m\nENTRY main {\n  t = token[] after-all()\n  i = (f32[2], token[]) infeed(t)\n  ROOT r = f32[2] get-tuple-element(i), index=0\n}\n",
    );
    let out = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args(["--backend", "interpreter", "--quiet", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("infeed"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// On a `buggy:` wrapper (a `backend::mutant` fusion bug).
#[test]
fn a_disagreement_exits_1_and_writes_the_reproducer_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let out_dir = dir.path().join("out");
    let out = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args([
            "--backend",
            "buggy:elide-round-trip@residual",
            "--quiet",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("culprit: fusion `f` (computation `residual`), first diverging instruction `back` (convert)"), "{stdout}");
    assert!(
        stdout.contains("vanishes when the fusion is split: true"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
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
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "quant.hlo", QUANT);
    let mut child = xla_props()
        .arg("isolate")
        .arg(&hlo)
        .args(["--backend", "mutant:elide-convert-pair", "--quiet", "--out"])
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
