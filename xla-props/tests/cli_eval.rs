//! `xla-props eval` through the built binary, on HLO text.

use std::path::Path;
use std::process::Command;

use xla_props::hlo::{ArrayShape, ElementType};
use xla_props::literal::Literal;

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

const ADD: &str = "HloModule add\n\nENTRY main {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n  ROOT s = f32[3] add(x, y)\n}\n";

/// A fusion whose f16 intermediate must be rounded: (a + b) - a.
const FUSED: &str = "HloModule fused\n\nfused_computation {\n  a = f16[2] parameter(0)\n  b = f16[2] parameter(1)\n  c = f16[2] add(a, b)\n  ROOT d = f16[2] subtract(c, a)\n}\n\nENTRY main {\n  x = f16[2] parameter(0)\n  y = f16[2] parameter(1)\n  ROOT f = f16[2] fusion(x, y), kind=kLoop, calls=fused_computation\n}\n";

fn f32s(v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn eval_summarizes_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "add.hlo", ADD);
    let a = dir.path().join("a.bin");
    std::fs::write(&a, f32s(&[1.0, 2.0, 3.0]).to_le_bytes()).unwrap();
    let b = dir.path().join("b.npy");
    f32s(&[10.0, 20.0, 30.0]).write_npy_file(&b).unwrap();
    let out = xla_props()
        .arg("eval")
        .arg(&hlo)
        .args(["--backend", "interpreter", "--arg"])
        .arg(&a)
        .arg("--arg")
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("output 0: f32[3]"), "{text}");
    assert!(text.contains("values: [11, 22, 33]"), "{text}");
}

#[test]
fn eval_writes_outputs_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "fused.hlo", FUSED);
    let h = |v: &[f64]| Literal::from_f64s(&ArrayShape::new(ElementType::F16, vec![2]), v).unwrap();
    let x = dir.path().join("x.npy");
    h(&[1.0, 1.0]).write_npy_file(&x).unwrap();
    let y = dir.path().join("y.bin");
    std::fs::write(&y, h(&[2f64.powi(-11), 3.0 * 2f64.powi(-11)]).to_le_bytes()).unwrap();
    for name in ["o.npy", "o.bin"] {
        let o = dir.path().join(name);
        let out = xla_props()
            .arg("eval")
            .arg(&hlo)
            .args(["--backend", "interpreter", "--arg"])
            .arg(&x)
            .arg("--arg")
            .arg(&y)
            .arg("--out")
            .arg(&o)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let back = Literal::read_arg_file(&o, &ArrayShape::new(ElementType::F16, vec![2])).unwrap();
        // f16 rounds after every op inside the fusion: 1 + 2^-11 ties to 1
        assert_eq!(back.to_f64_vec(), vec![0.0, 2f64.powi(-9)], "{name}");
    }
}

#[test]
fn eval_without_arg_runs_on_generated_legal_inputs_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // sqrt(x - y): legal only where x >= y, which the generator must respect
    let hlo = write(
        dir.path(),
        "sqrt.hlo",
        "HloModule m\n\nENTRY main {\n  x = f32[64] parameter(0)\n  y = f32[64] parameter(1)\n  \
         d = f32[64] subtract(x, y)\n  ROOT r = f32[64] sqrt(d)\n}\n",
    );
    let run = |seed: &str| {
        xla_props()
            .arg("eval")
            .arg(&hlo)
            .args(["--backend", "interpreter", "--seed", seed])
            .output()
            .unwrap()
    };
    let out = run("3");
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no --arg given"), "{err}");
    assert!(
        err.contains("generated legal inputs (uniform, seed 3)"),
        "{err}"
    );
    assert!(text.contains("output 0: f32[64]"), "{text}");
    // legal inputs: no NaN from a negative square root
    assert!(text.contains("nonfinite=0x00000000"), "{text}");
    assert!(!text.contains("NaN"), "{text}");
    // deterministic per seed, and another seed draws other inputs
    assert_eq!(run("3").stdout, out.stdout);
    assert_ne!(run("4").stdout, out.stdout);
}

#[test]
fn eval_argument_errors_exit_2_and_name_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "add.hlo", ADD);
    let a = dir.path().join("a.bin");
    std::fs::write(&a, f32s(&[1.0, 2.0, 3.0]).to_le_bytes()).unwrap();
    let short = dir.path().join("short.bin");
    std::fs::write(&short, [0u8; 6]).unwrap();
    let run = |args: &[&Path]| {
        let mut c = xla_props();
        c.arg("eval").arg(&hlo).args(["--backend", "interpreter"]);
        for p in args {
            c.arg("--arg").arg(p);
        }
        c.output().unwrap()
    };
    let out = run(&[&a]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("takes 2 arguments"), "{err}");
    let out = run(&[&a, &short]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("parameter 1 (`y`)") && err.contains("12"),
        "{err}"
    );
}

#[test]
fn eval_of_a_malformed_module_exits_2_with_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(
        dir.path(),
        "bad.hlo",
        "HloModule m\n\nENTRY main {\n  ROOT x = f32[2] frobnicate()\n}\n",
    );
    let out = xla_props()
        .arg("eval")
        .arg(&hlo)
        .args(["--backend", "interpreter"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.hlo:4:"), "{err}");
}

/// A reproducer with pinned inputs (`inputs=inline`) replays on them with no
/// `--arg`, whatever the generator draws (eval, compare and bisect-passes
/// alike); `--arg` still wins; a generated-inputs reproducer is generated.
#[test]
fn a_reproducer_runs_on_its_own_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let body =
        "HloModule m\n\nENTRY main {\n  x = f32[3] parameter(0)\n  ROOT n = f32[3] negate(x)\n}\n";
    let inline = write(
        dir.path(),
        "inline.hlotest",
        &format!("// run: backends=interpreter inputs=inline\n// expect: agree\n// arg: f32[3] 1.5 -2 7\n{body}"),
    );
    let run = |args: &[&str], file: &Path| {
        let out = xla_props()
            .arg(args[0])
            .arg(file)
            .args(&args[1..])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let (code, text) = run(&["eval", "--backend", "interpreter"], &inline);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("values: [-1.5, 2, -7]"), "{text}");
    assert!(text.contains("the reproducer's own inputs"), "{text}");
    let (code, text) = run(&["compare", "--backend", "interpreter"], &inline);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("inputs: 1 arguments the reproducer brings"),
        "{text}"
    );
    let a = dir.path().join("a.npy");
    f32s(&[4.0, 5.0, 6.0]).write_npy_file(&a).unwrap();
    let (code, text) = run(
        &[
            "eval",
            "--backend",
            "interpreter",
            "--arg",
            a.to_str().unwrap(),
        ],
        &inline,
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("values: [-4, -5, -6]"), "{text}");
    let seeded = write(
        dir.path(),
        "seeded.hlotest",
        &format!("// run: backends=interpreter inputs=seed:0\n// expect: agree\n{body}"),
    );
    let (code, text) = run(&["eval", "--backend", "interpreter"], &seeded);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("generated legal inputs"), "{text}");
    // a malformed reproducer is a located error, not a silent draw
    let bad = write(
        dir.path(),
        "bad.hlotest",
        &format!("// run: backends=interpreter inputs=inline\n// expect: agree\n// arg: f32[3] 1 2\n{body}"),
    );
    let (code, text) = run(&["eval", "--backend", "interpreter"], &bad);
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("bad.hlotest"), "{text}");
}
