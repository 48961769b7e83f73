//! `xla-props compare` through the built binary.

mod common;

use std::path::Path;

use common::cli::{read_json, run, write};

/// `compare FILE --backend interpreter --json OUT EXTRA...` in `dir`, which
/// must exit 0: its stdout, stderr and the JSON it wrote.
fn compare_json(dir: &Path, file: &Path, extra: &[&str]) -> (String, String, serde_json::Value) {
    let json = dir.join("out.json");
    let mut args = on_interpreter(file, &["--json", json.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    (stdout, stderr, read_json(&json))
}

/// `compare FILE --backend interpreter EXTRA...`.
fn on_interpreter<'a>(file: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "compare",
        file.to_str().unwrap(),
        "--backend",
        "interpreter",
    ];
    args.extend_from_slice(extra);
    args
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
    let (stdout, _, v) = compare_json(dir.path(), &f, &["--seed", "3"]);
    assert!(stdout.contains("agree: 64 elements"), "{stdout}");
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
    let (stdout, _, v) = compare_json(dir.path(), &f, &[]);
    assert!(stdout.contains("rejection sampling used"), "{stdout}");
    assert_eq!(v["inputs"]["rejection_sampling_used"], true);
    assert_eq!(v["reference_nonfinite_outputs"], 0);
}

#[test]
fn errors_exit_two_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "sqrt.hlo", SQRT_DIFF);
    let bad = write(
        dir.path(),
        "bad.hlo",
        "HloModule m\n\nENTRY main {\n  ROOT x = f32[ parameter(0)\n}\n",
    );
    let (f, bad) = (f.to_str().unwrap(), bad.to_str().unwrap());
    for (args, needle) in [
        (vec![f, "--backend", "nope"], "unknown backend `nope`"),
        (
            vec!["/nonexistent/x.hlo", "--backend", "interpreter"],
            "cannot read",
        ),
        (vec![bad, "--backend", "interpreter"], "bad.hlo:"),
        (
            vec![f, "--backend", "interpreter", "--distribution", "gaussian"],
            "unknown distribution",
        ),
    ] {
        let (code, _, stderr) = run(["compare"].iter().chain(&args));
        assert_eq!(code, 2);
        assert!(stderr.contains(needle), "{stderr}");
    }
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
        let (stdout, stderr, v) = compare_json(dir.path(), &f, extra);
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
    let (code, _, stderr) = run(on_interpreter(&f, &["--arg", x.to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
}
