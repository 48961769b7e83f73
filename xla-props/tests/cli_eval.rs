//! `xla-props eval` through the built binary, on HLO text.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{exits, fails_with, text, write, xla_props};
use xla_props::hlo::{ArrayShape, ElementType};
use xla_props::literal::Literal;

const ADD: &str = "HloModule add\n\nENTRY main {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n  ROOT s = f32[3] add(x, y)\n}\n";

/// A fusion whose f16 intermediate must be rounded: (a + b) - a.
const FUSED: &str = "HloModule fused\n\nfused_computation {\n  a = f16[2] parameter(0)\n  b = f16[2] parameter(1)\n  c = f16[2] add(a, b)\n  ROOT d = f16[2] subtract(c, a)\n}\n\nENTRY main {\n  x = f16[2] parameter(0)\n  y = f16[2] parameter(1)\n  ROOT f = f16[2] fusion(x, y), kind=kLoop, calls=fused_computation\n}\n";

/// `sqrt(x - y)`: legal only where x >= y.
const SQRT_DIFF: &str =
    "HloModule m\n\nENTRY main {\n  x = f32[64] parameter(0)\n  y = f32[64] parameter(1)\n  \
         d = f32[64] subtract(x, y)\n  ROOT r = f32[64] sqrt(d)\n}\n";

/// An unknown opcode on line 4.
const FROBNICATE: &str = "HloModule m\n\nENTRY main {\n  ROOT x = f32[2] frobnicate()\n}\n";

fn f32s(v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
}

/// `eval HLO --backend interpreter --arg ARG... EXTRA...`, run.
fn eval(hlo: &Path, args: &[&Path], extra: &[&str]) -> Output {
    let mut c = xla_props();
    c.arg("eval").arg(hlo).args(["--backend", "interpreter"]);
    for p in args {
        c.arg("--arg").arg(p);
    }
    c.args(extra).output().unwrap()
}

/// Writes `lit` to `dir/name` as a `.npy` file or raw little-endian bytes,
/// by the name's extension; returns the path.
fn arg_file(dir: &Path, name: &str, lit: Literal) -> PathBuf {
    let p = dir.join(name);
    if name.ends_with(".npy") {
        lit.write_npy_file(&p).unwrap();
    } else {
        std::fs::write(&p, lit.to_le_bytes()).unwrap();
    }
    p
}

#[test]
fn eval_summarizes_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "add.hlo", ADD);
    let a = arg_file(dir.path(), "a.bin", f32s(&[1.0, 2.0, 3.0]));
    let b = arg_file(dir.path(), "b.npy", f32s(&[10.0, 20.0, 30.0]));
    let text = exits(&eval(&hlo, &[&a, &b], &[]), 0);
    assert!(text.contains("output 0: f32[3]"), "{text}");
    assert!(text.contains("values: [11, 22, 33]"), "{text}");
}

#[test]
fn eval_writes_outputs_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "fused.hlo", FUSED);
    let h = |v: &[f64]| Literal::from_f64s(&ArrayShape::new(ElementType::F16, vec![2]), v).unwrap();
    let x = arg_file(dir.path(), "x.npy", h(&[1.0, 1.0]));
    let y = arg_file(
        dir.path(),
        "y.bin",
        h(&[2f64.powi(-11), 3.0 * 2f64.powi(-11)]),
    );
    for name in ["o.npy", "o.bin"] {
        let o = dir.path().join(name);
        exits(&eval(&hlo, &[&x, &y], &["--out", o.to_str().unwrap()]), 0);
        let back = Literal::read_arg_file(&o, &ArrayShape::new(ElementType::F16, vec![2])).unwrap();
        // f16 rounds after every op inside the fusion: 1 + 2^-11 ties to 1
        assert_eq!(back.to_f64_vec(), vec![0.0, 2f64.powi(-9)], "{name}");
    }
}

#[test]
fn eval_without_arg_runs_on_generated_legal_inputs_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // sqrt(x - y): legal only where x >= y, which the generator must respect
    let hlo = write(dir.path(), "sqrt.hlo", SQRT_DIFF);
    let run = |seed: &str| eval(&hlo, &[], &["--seed", seed]);
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
    let a = arg_file(dir.path(), "a.bin", f32s(&[1.0, 2.0, 3.0]));
    let short = dir.path().join("short.bin");
    std::fs::write(&short, [0u8; 6]).unwrap();
    fails_with(&eval(&hlo, &[&a], &[]), 2, &["takes 2 arguments"]);
    fails_with(
        &eval(&hlo, &[&a, &short], &[]),
        2,
        &["parameter 1 (`y`)", "12"],
    );
}

#[test]
fn eval_of_a_malformed_module_exits_2_with_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "bad.hlo", FROBNICATE);
    fails_with(&eval(&hlo, &[], &[]), 2, &["bad.hlo:4:"]);
}

/// A replay: the reproducer, the subcommand, more arguments, whether it
/// exits 0, and what it says.
type Replay<'a> = (&'a Path, &'a str, &'a [&'a str], bool, &'a [&'a str]);

/// A reproducer with pinned inputs (`inputs=inline`) replays on them with no
/// `--arg`, whatever the generator draws (eval, compare and bisect-passes
/// alike); `--arg` still wins; a generated-inputs reproducer is generated.
#[test]
fn a_reproducer_runs_on_its_own_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let body =
        "HloModule m\n\nENTRY main {\n  x = f32[3] parameter(0)\n  ROOT n = f32[3] negate(x)\n}\n";
    let [inline, seeded, bad] = [
        (
            "inline",
            "inline\n// expect: agree\n// arg: f32[3] 1.5 -2 7",
        ),
        ("seeded", "seed:0\n// expect: agree"),
        ("bad", "inline\n// expect: agree\n// arg: f32[3] 1 2"),
    ]
    .map(|(name, header)| {
        let text = format!("// run: backends=interpreter inputs={header}\n{body}");
        write(dir.path(), &format!("{name}.hlotest"), &text)
    });
    let a = arg_file(dir.path(), "a.npy", f32s(&[4.0, 5.0, 6.0]));
    let cases: [Replay; 5] = [
        (
            &inline,
            "eval",
            &[],
            true,
            &["values: [-1.5, 2, -7]", "the reproducer's own inputs"],
        ),
        (
            &inline,
            "compare",
            &[],
            true,
            &["inputs: 1 arguments the reproducer brings"],
        ),
        (
            &inline,
            "eval",
            &["--arg", a.to_str().unwrap()],
            true,
            &["values: [-4, -5, -6]"],
        ),
        (&seeded, "eval", &[], true, &["generated legal inputs"]),
        // a malformed reproducer is a located error, not a silent draw
        (&bad, "eval", &[], false, &["bad.hlotest"]),
    ];
    for (file, subcommand, more, succeeds, says) in cases {
        let out = xla_props()
            .arg(subcommand)
            .arg(file)
            .args(["--backend", "interpreter"])
            .args(more)
            .output()
            .unwrap();
        let text = text(&out);
        if succeeds {
            assert_eq!(out.status.code(), Some(0), "{text}");
        } else {
            assert_ne!(out.status.code(), Some(0), "{text}");
        }
        for needle in says {
            assert!(text.contains(needle), "{text}");
        }
    }
}
