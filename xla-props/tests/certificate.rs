//! The certificate of local agreement checked against the whole: a
//! departure no unit shows is a composition mismatch (compare, isolate and
//! its report say so, and the reproducer is the smallest departing region),
//! and a departure the units' measured errors explain is amplified (legal).

use std::process::Command;

use xla_props::backend::{Backend, Interpreter};
use xla_props::hlo::parse_module;
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::isolate::{certify, Basis, Certificate, Oracle, Tested};
use xla_props::reference::evaluate;

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

/// A normalization, then the quantization residual: before optimization
/// there is no fusion, and each instruction alone agrees under a backend
/// that elides the f16 round trip only across instructions.
const RESIDUAL: &str = include_str!("data/residual.hlo");

#[test]
fn an_elided_round_trip_across_instructions_is_a_composition_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("residual.hlo");
    std::fs::write(&file, RESIDUAL).unwrap();
    let out = xla_props()
        .args([
            "compare",
            file.to_str().unwrap(),
            "--backend",
            "mutant:elide-convert-pair",
            "--seed",
            "3",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("composition: every one of 10 units agrees"),
        "{stdout}"
    );
    assert!(!stdout.contains("amplified"), "{stdout}");

    let iso = dir.path().join("iso");
    let out = xla_props()
        .args([
            "isolate",
            file.to_str().unwrap(),
            "--backend",
            "mutant:elide-convert-pair",
            "--seed",
            "3",
            "--quiet",
            "--out",
        ])
        .arg(&iso)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(iso.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["mismatch"], "composition");
    assert_eq!(report["certificate"]["kind"], "composition");
    // the smallest region that departs whole: the residual and what feeds it,
    // not the dot and the reduction upstream
    let repro = std::fs::read_to_string(iso.join("reproducer.hlotest")).unwrap();
    assert!(
        repro.contains("convert(t)") && repro.contains("tanh("),
        "{repro}"
    );
    assert!(
        !repro.contains(" dot(") && !repro.contains(" reduce("),
        "{repro}"
    );
    assert!(repro.contains("// expect: mismatch composition"), "{repro}");
}

#[test]
fn an_agreeing_module_leaves_a_report_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("residual.hlo");
    std::fs::write(&file, RESIDUAL).unwrap();
    let iso = dir.path().join("iso");
    let out = xla_props()
        .args([
            "isolate",
            file.to_str().unwrap(),
            "--backend",
            "interpreter",
            "--quiet",
            "--out",
        ])
        .arg(&iso)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(iso.join("report.md")).unwrap();
    assert!(md.contains("nothing to isolate"), "{md}");
}

#[test]
fn units_that_agree_and_explain_the_output_certify_an_amplified_departure() {
    // bf16 arithmetic the interpreter computes in f32 and rounds per op:
    // every unit agrees with the reference, the whole differs a little
    let m = parse_module(
        "HloModule m
ENTRY e {
  x = bf16[64] parameter(0)
  y = bf16[64] parameter(1)
  a = bf16[64] multiply(x, y)
  b = bf16[64] add(a, x)
  c = bf16[64] tanh(b)
  ROOT d = bf16[64] multiply(c, y)
}",
    )
    .unwrap();
    let args = generate_inputs(&m, Distribution::Uniform, 1).unwrap().args;
    let interp = Interpreter::default();
    let actual = interp.compile(&m).unwrap().execute(&args).unwrap();
    let expected = evaluate(&m, &args).unwrap();
    let reference = Oracle::Exact.all_values(&m, &args).unwrap();
    let c = certify(
        &m,
        &args,
        &expected,
        &actual,
        &reference,
        &Tested::new(&interp),
    )
    .unwrap();
    // the backend's own run: every unit legal on the operands it got there
    assert!(matches!(c, Certificate::Amplified(_)), "{c}");
    assert_eq!(c.explanation().units, 4);
    assert_eq!(c.explanation().basis, Basis::OwnRun);
    assert!(
        c.to_string()
            .starts_with("amplified: in the backend's own run (every value exposed, the same outputs) each of 4 units"),
        "{c}"
    );
    // the same outputs with one element moved far: a composition
    let mut moved = actual.clone();
    let v = moved[0].get_f64(5);
    moved[0].set_f64(5, v * 1.5 + 1.0);
    let c = certify(
        &m,
        &args,
        &expected,
        &moved,
        &reference,
        &Tested::new(&interp),
    )
    .unwrap();
    assert!(matches!(c, Certificate::Composition(_)), "{c}");
    assert_eq!((c.explanation().beyond, c.explanation().element), (1, 5));
}
