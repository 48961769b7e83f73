//! The certificate of local agreement checked against the whole: a
//! departure no unit shows is a composition mismatch (compare, isolate and
//! its report say so, and the reproducer is the smallest departing region),
//! and a departure the units' measured errors explain is amplified (legal).

mod common;

use common::cli::{exits, read_json, run_on, write};
use xla_props::backend::{Backend, Interpreter};
use xla_props::hlo::parse_module;
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::isolate::{certify, Basis, Certificate, Oracle, Tested};
use xla_props::literal::Literal;
use xla_props::reference::evaluate;

/// A normalization, then the quantization residual: before optimization
/// there is no fusion, and each instruction alone agrees under a backend
/// that elides the f16 round trip only across instructions.
const RESIDUAL: &str = include_str!("data/residual.hlo");

#[test]
fn an_elided_round_trip_across_instructions_is_a_composition_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "residual.hlo", RESIDUAL);
    let elide = "mutant:elide-convert-pair";
    let stdout = exits(&run_on("compare", &file, elide, &["--seed", "3"]), 1);
    assert!(
        stdout.contains("composition: every one of 10 units agrees"),
        "{stdout}"
    );
    assert!(!stdout.contains("amplified"), "{stdout}");

    let iso = dir.path().join("iso");
    let extra = ["--seed", "3", "--quiet", "--out", iso.to_str().unwrap()];
    exits(&run_on("isolate", &file, elide, &extra), 1);
    let report = read_json(&iso.join("report.json"));
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
    let file = write(dir.path(), "residual.hlo", RESIDUAL);
    let iso = dir.path().join("iso");
    let extra = ["--quiet", "--out", iso.to_str().unwrap()];
    exits(&run_on("isolate", &file, "interpreter", &extra), 0);
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
    let tested = Tested::new(&interp);
    let certificate_of = |actual: &[Literal]| {
        certify(&m, &args, &expected, actual, &reference, &tested, None).unwrap()
    };
    let c = certificate_of(&actual);
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
    let c = certificate_of(&moved);
    assert!(matches!(c, Certificate::Composition(_)), "{c}");
    assert_eq!((c.explanation().beyond, c.explanation().element), (1, 5));
    // the judge's verdict decides what is the certificate's to explain:
    // it rejects the moved element, and only that one
    let numerics = interp.numerics();
    let judged = xla_props::isolate::judge_outputs(&m, &args, &expected, &moved, &numerics);
    assert!(judged.rejects(0, 5) && !judged.rejects(0, 4), "{judged}");
    let with = |v| certify(&m, &args, &expected, &moved, &reference, &tested, Some(v)).unwrap();
    assert_eq!(with(&judged).explanation().beyond, 1);
    // an element the judge accepted (here: a verdict that accepts all) is
    // legal already, and no composition is certified from it
    let accepted = xla_props::check::Verdict::Agree(Default::default());
    assert!(matches!(with(&accepted), Certificate::Amplified(_)));
}

/// JAX's f64 incomplete gamma on xla-cpu: a continued fraction in a `while`
/// loop carries no finite bound, and judged whole the loop departs. Judged
/// one iteration at a time on the state xla-cpu computed, every step is
/// legal and the last state is the loop's result: the output is amplified.
/// Where the culprit upstream is a known bug (lgamma's divide by a
/// constant, before XLA's passes), the own run explains the output by that
/// bug and legal steps: an expected failure naming it, not a bare mismatch.
#[test]
fn a_loop_judged_one_iteration_at_a_time_explains_jax_igamma_f64_on_xla_cpu() {
    if common::xla_cpu().is_none() {
        return;
    }
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/harnesses/");
    let file = |f: &str| std::path::PathBuf::from(format!("{data}{f}"));
    let igamma = file("igamma_dtypes_lhs_float64_20_20_rhs_float64_20_20.after.hlo");
    let out = exits(&run_on("compare", &igamma, "xla-cpu", &["--seed", "0"]), 0);
    assert!(out.contains("amplified: in the backend's own run"), "{out}");
    assert!(out.contains("judged one iteration at a time"), "{out}");

    let igammac = file("igammac_dtypes_lhs_float64_20_20_rhs_float64_20_20.before.hlo");
    let out = exits(&run_on("compare", &igammac, "xla-cpu", &["--seed", "2"]), 1);
    assert!(
        out.contains("known bug xla-cpu/divide-as-reciprocal:"),
        "the verdict names the known bug: {out}"
    );
}
