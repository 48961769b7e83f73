use super::*;
use crate::hlo::Opcode;
use crate::inputs::{generate_inputs, Distribution};
use crate::programs::{find_template, split_case};
use crate::reference::evaluate;

#[test]
fn every_template_configuration_verifies_and_evaluates_on_the_reference() {
    let mut built = 0;
    for t in TEMPLATES {
        for &dtype in t.dtypes {
            for dims in [&[2i64, 8][..], &[3, 5]] {
                let unfused = t.build(dtype, dims, "unfused").unwrap();
                let args = generate_inputs(&unfused, Distribution::Uniform, 1)
                    .unwrap_or_else(|e| panic!("{} {dtype}: {e}", t.name))
                    .args;
                let expected =
                    evaluate(&unfused, &args).unwrap_or_else(|e| panic!("{} {dtype}: {e}", t.name));
                for c in t.configurations {
                    let m = t
                        .build(dtype, dims, c.name)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let fusions = m
                        .entry_computation()
                        .instructions
                        .iter()
                        .filter(|i| i.opcode == Opcode::Fusion)
                        .count();
                    assert_eq!(fusions, c.groups.len(), "{} {}", t.name, c.name);
                    // the reference rounds each instruction once, so outlining
                    // cannot change a single bit of its result
                    let got = evaluate(&m, &args)
                        .unwrap_or_else(|e| panic!("{} {} {dtype}: {e}", t.name, c.name));
                    assert_eq!(got, expected, "{} {} {dtype}", t.name, c.name);
                    built += 1;
                }
            }
        }
    }
    assert!(built > 100, "{built}");
}

#[test]
fn softmax_rows_sum_to_one_on_the_reference() {
    let t = find_template("softmax").unwrap();
    let m = t.build(F32, &[4, 16], "max-exp.sum-div").unwrap();
    let args = generate_inputs(&m, Distribution::Uniform, 3).unwrap().args;
    let out = evaluate(&m, &args).unwrap();
    for r in 0..4 {
        let s: f64 = (0..16).map(|c| out[0].get_f64(r * 16 + c)).sum();
        assert!((s - 1.0).abs() < 1e-5, "row {r} sums to {s}");
    }
}

#[test]
fn quantize_residual_is_nonzero_on_the_reference() {
    let t = find_template("quantize").unwrap();
    for dtype in [F16, Bf16, F8E4M3Fn] {
        let m = t.build(dtype, &[4, 16], "all-in-one").unwrap();
        let args = generate_inputs(&m, Distribution::Uniform, 3).unwrap().args;
        let out = evaluate(&m, &args).unwrap();
        let nonzero = (0..64).filter(|&i| out[1].get_f64(i) != 0.0).count();
        assert!(nonzero > 32, "{dtype}: {nonzero}");
    }
}

#[test]
fn unknown_names_and_dtypes_are_errors() {
    let t = find_template("softmax").unwrap();
    assert!(matches!(
        t.build(F32, &[2, 8], "nope"),
        Err(TemplateError::Configuration { .. })
    ));
    assert!(matches!(
        t.build(F8E5M2, &[2, 8], "unfused"),
        Err(TemplateError::Dtype { .. })
    ));
    assert!(matches!(
        t.build(F32, &[0, 8], "unfused"),
        Err(TemplateError::Shape(_))
    ));
    assert!(split_case("softmax.max-exp.sum-div").is_some());
    assert!(split_case("softmax.none").is_none());
    assert!(template_cases(F8E4M3Fn)
        .iter()
        .all(|c| c.starts_with("quantize.")));
}
