use super::*;
use crate::backend::run_module;
use crate::backend::{Backend, BackendError, Executable, Interpreter};
use crate::check::Produced;
use crate::fuzz::differential;
use crate::hlo::Opcode;
use crate::programs::{find_template, TEMPLATES, TEMPLATE_SHAPES};

/// A lowering bug: inside fusions, `convert(convert(x, narrow), wide)` becomes `x`.
struct ElideConvertPair(Interpreter);

impl Backend for ElideConvertPair {
    fn name(&self) -> &str {
        "elide-convert-pair"
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let mut m = module.clone();
        let fused: Vec<usize> = m
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .filter(|i| i.opcode == Opcode::Fusion)
            .flat_map(|i| i.attrs.calls.iter().map(|c| c.index()))
            .collect();
        for c in fused {
            let comp = &mut m.computations[c];
            for k in 0..comp.instructions.len() {
                let ins = &comp.instructions[k];
                if ins.opcode != Opcode::Convert {
                    continue;
                }
                let inner = &comp.instructions[ins.operands[0].index()];
                if inner.opcode != Opcode::Convert {
                    continue;
                }
                let x = inner.operands[0];
                if comp.instructions[x.index()].shape == ins.shape {
                    comp.instructions[k].opcode = Opcode::Copy;
                    comp.instructions[k].operands = vec![x];
                }
            }
        }
        self.0.compile(&m)
    }
}

fn quantize_outputs(
    backend: &dyn Backend,
    dtype: ElementType,
    config: &str,
) -> (Literal, Vec<Literal>, Vec<Literal>) {
    let t = find_template("quantize").unwrap();
    let m = t.build(dtype, &[4, 16], config).unwrap();
    let args = generate_inputs(&m, Distribution::Uniform, 11).unwrap().args;
    let expected = crate::reference::evaluate(&m, &args).unwrap();
    let actual = match Produced::from(run_module(backend, &m, &args)) {
        Produced::Ok(v) => v,
        other => panic!("{other:?}"),
    };
    (args[0].clone(), expected, actual)
}

#[test]
fn quantization_residual_catches_a_convert_pair_elided_inside_a_fusion() {
    let buggy = ElideConvertPair(Interpreter::default());
    for dtype in [
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F8E4M3Fn,
        ElementType::F8E5M2,
    ] {
        let (x, e, a) = quantize_outputs(&buggy, dtype, "all-in-one");
        match check_residuals(&x, &e, &a) {
            Outcome::Fail(f) => assert!(f.summary.contains("residuals"), "{}", f.summary),
            other => panic!("{dtype}: the elided pair went unnoticed: {other:?}"),
        }
        // unfused, or with the pair split over two fusions, the bug has nothing
        // to act on; the correct interpreter passes everywhere
        for config in ["unfused", "q.dq-residual"] {
            let (x, e, a) = quantize_outputs(&buggy, dtype, config);
            assert!(
                matches!(check_residuals(&x, &e, &a), Outcome::Pass),
                "{dtype} {config}"
            );
        }
        for c in find_template("quantize").unwrap().configurations {
            let (x, e, a) = quantize_outputs(&Interpreter::default(), dtype, c.name);
            assert!(
                matches!(check_residuals(&x, &e, &a), Outcome::Pass),
                "{dtype} {}",
                c.name
            );
        }
    }
}

#[test]
fn template_vs_reference_judgement_catches_the_elided_pair_too() {
    let buggy = ElideConvertPair(Interpreter::default());
    let t = find_template("quantize").unwrap();
    let m = t.build(ElementType::F16, &[4, 16], "all-in-one").unwrap();
    let args = generate_inputs(&m, Distribution::Uniform, 2).unwrap().args;
    assert!(differential(&buggy, &m, &args, false)
        .verdict
        .is_disagreement());
    assert!(differential(&Interpreter::default(), &m, &args, false)
        .verdict
        .is_agreement());
}

#[test]
fn interpreter_agrees_with_the_reference_on_every_template_and_configuration() {
    let interp = Interpreter::default();
    let mut judged = 0;
    for t in TEMPLATES {
        for &dtype in t.dtypes {
            for dims in TEMPLATE_SHAPES {
                for c in t.configurations {
                    let m = t.build(dtype, dims, c.name).unwrap();
                    let args = generate_inputs(&m, Distribution::Uniform, 9).unwrap().args;
                    let d = differential(&interp, &m, &args, false);
                    assert!(
                        d.verdict.is_agreement(),
                        "{} {} {dtype} {dims:?}: {}",
                        t.name,
                        c.name,
                        d.verdict
                    );
                    judged += 1;
                }
            }
        }
    }
    assert!(judged > 300, "{judged}");
}

#[test]
fn topk_recall_accepts_tie_orders_and_rejects_wrong_values() {
    let shape = crate::hlo::ArrayShape::new(ElementType::F32, vec![1, 6]);
    let x = Literal::from_f64s(&shape, &[1.0, 5.0, 5.0, 3.0, 5.0, 0.0]).unwrap();
    let k4 = crate::hlo::ArrayShape::new(ElementType::F32, vec![1, 4]);
    let i4 = crate::hlo::ArrayShape::new(ElementType::S32, vec![1, 4]);
    let vals = Literal::from_f64s(&k4, &[5.0, 5.0, 5.0, 3.0]).unwrap();
    let expected = [
        vals.clone(),
        Literal::from_f64s(&i4, &[1.0, 2.0, 4.0, 3.0]).unwrap(),
    ];
    // the same values with the ties in another order
    let ties = [
        vals.clone(),
        Literal::from_f64s(&i4, &[4.0, 1.0, 2.0, 3.0]).unwrap(),
    ];
    assert!(matches!(
        check_topk(&x, 1, 6, &expected, &ties),
        Outcome::Pass
    ));
    // a value from outside the top 4
    let wrong = [
        Literal::from_f64s(&k4, &[5.0, 5.0, 5.0, 1.0]).unwrap(),
        Literal::from_f64s(&i4, &[1.0, 2.0, 4.0, 0.0]).unwrap(),
    ];
    assert!(matches!(
        check_topk(&x, 1, 6, &expected, &wrong),
        Outcome::Fail(_)
    ));
    // a value that is not at the index it claims
    let lying = [
        vals,
        Literal::from_f64s(&i4, &[1.0, 2.0, 0.0, 3.0]).unwrap(),
    ];
    assert!(matches!(
        check_topk(&x, 1, 6, &expected, &lying),
        Outcome::Fail(_)
    ));
}

#[test]
fn softmax_bound_grows_with_row_length_and_narrow_types() {
    assert!(softmax_row_bound(128, ElementType::F32) > softmax_row_bound(8, ElementType::F32));
    assert!(softmax_row_bound(8, ElementType::Bf16) > softmax_row_bound(8, ElementType::F16));
    assert!(softmax_row_bound(8, ElementType::F32) < 1e-5);
}
