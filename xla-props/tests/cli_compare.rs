//! `xla-props compare` through the built binary.

use std::path::Path;
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SQRT_DIFF: &str = "HloModule sqrt_diff

ENTRY main {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  d = f32[64] subtract(x, y)
  ROOT r = f32[64] sqrt(d)
}
";

const LOG_SQUARE_MINUS_ONE: &str = "HloModule log_square_minus_one

ENTRY main {
  x = f16[128] parameter(0)
  s = f16[128] multiply(x, x)
  one = f16[] constant(1)
  b = f16[128] broadcast(one), dimensions={}
  d = f16[128] subtract(s, b)
  ROOT r = f16[128] log(d)
}
";

#[test]
fn agreement_exits_zero_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "sqrt.hlo", SQRT_DIFF);
    let json = dir.path().join("out.json");
    let (code, stdout, stderr) = run(&[
        "compare",
        f.to_str().unwrap(),
        "--backend",
        "interpreter",
        "--seed",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("agree: 64 elements"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["verdict"]["verdict"], "agree");
    assert_eq!(v["inputs"]["rejection_sampling_used"], false);
    assert_eq!(v["reference_nonfinite_outputs"], 0);
    // x - y >= 0 for every point: x's interval starts where y's ends
    let lo_x = v["inputs"]["intervals"][0]["lo"].as_f64().unwrap();
    let hi_y = v["inputs"]["intervals"][1]["hi"].as_f64().unwrap();
    assert!(lo_x >= hi_y, "{v}");
}

#[test]
fn rejection_sampling_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "sq.hlo", LOG_SQUARE_MINUS_ONE);
    let json = dir.path().join("out.json");
    let (code, stdout, stderr) = run(&[
        "compare",
        f.to_str().unwrap(),
        "--backend",
        "interpreter",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("rejection sampling used"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["inputs"]["rejection_sampling_used"], true);
    assert_eq!(v["reference_nonfinite_outputs"], 0);
}

#[test]
fn errors_exit_two_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "sqrt.hlo", SQRT_DIFF);
    let (code, _, stderr) = run(&["compare", f.to_str().unwrap(), "--backend", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown backend `nope`"), "{stderr}");
    let (code, _, stderr) = run(&["compare", "/nonexistent/x.hlo", "--backend", "interpreter"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read"), "{stderr}");
    let bad = write(
        dir.path(),
        "bad.hlo",
        "HloModule m\n\nENTRY main {\n  ROOT x = f32[ parameter(0)\n}\n",
    );
    let (code, _, stderr) = run(&["compare", bad.to_str().unwrap(), "--backend", "interpreter"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.hlo:"), "{stderr}");
    let (code, _, stderr) = run(&[
        "compare",
        f.to_str().unwrap(),
        "--backend",
        "interpreter",
        "--distribution",
        "gaussian",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown distribution"), "{stderr}");
}

/// `--arg` reads the inputs: the values given are the ones compared (a
/// negative difference under sqrt is NaN on both sides: they agree), and
/// `--json` reports their digests, which differ from the generated ones.
#[test]
fn arg_files_are_the_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "sqrt.hlo", SQRT_DIFF);
    let bytes = |v: f32| -> Vec<u8> { (0..64).flat_map(|_| v.to_le_bytes()).collect() };
    let (x, y) = (dir.path().join("x.bin"), dir.path().join("y.bin"));
    std::fs::write(&x, bytes(1.0)).unwrap();
    std::fs::write(&y, bytes(5.0)).unwrap();
    let digests = |extra: &[&str]| {
        let json = dir.path().join("out.json");
        let mut args = vec![
            "compare",
            f.to_str().unwrap(),
            "--backend",
            "interpreter",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (v["input_digests"].clone(), stderr + &stdout)
    };
    let (given, text) = digests(&["--arg", x.to_str().unwrap(), "--arg", y.to_str().unwrap()]);
    assert!(text.contains("inputs: 2 argument files"), "{text}");
    let (again, _) = digests(&["--arg", x.to_str().unwrap(), "--arg", y.to_str().unwrap()]);
    let (generated, _) = digests(&[]);
    assert_eq!(given, again);
    assert_eq!(given.as_array().map(Vec::len), Some(2));
    assert_ne!(given, generated);
    // one file for two parameters is a located error
    let (code, _, stderr) = run(&[
        "compare",
        f.to_str().unwrap(),
        "--backend",
        "interpreter",
        "--arg",
        x.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
}
