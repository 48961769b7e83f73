//! The StableHLO lowering the XLA backend compiles from. It lives in
//! `hlo::stablehlo` (the StableHLO printer); this module re-exports it.

pub use crate::hlo::stablehlo::{
    lower_annotated, lower_module, lowers, mlir_element_type, tensor_type, LowerError, Lowered,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{Attrs, ComparisonDirection};
    use crate::hlo::{
        CompId, Computation, ConstantData, ElementType, InstrId, Instruction, Module, Opcode, Shape,
    };

    fn instr(op: Opcode, shape: Shape, operands: &[u32], attrs: Attrs) -> Instruction {
        let mut i = Instruction::new(
            "i",
            op,
            shape,
            operands.iter().map(|&k| InstrId(k)).collect(),
        );
        i.attrs = attrs;
        i
    }

    fn param(n: i64, shape: Shape) -> Instruction {
        instr(
            Opcode::Parameter,
            shape,
            &[],
            Attrs {
                parameter_number: Some(n),
                ..Attrs::default()
            },
        )
    }

    fn comp(instructions: Vec<Instruction>) -> Computation {
        let root = InstrId(instructions.len() as u32 - 1);
        Computation {
            name: "c".into(),
            instructions,
            root,
            other: vec![],
        }
    }

    fn module(computations: Vec<Computation>) -> Module {
        Module {
            name: "m".into(),
            attrs: vec![],
            entry: CompId(computations.len() as u32 - 1),
            computations,
        }
    }

    fn f32s(dims: &[i64]) -> Shape {
        Shape::array(ElementType::F32, dims.to_vec())
    }

    fn add_fn() -> Computation {
        comp(vec![
            param(0, f32s(&[])),
            param(1, f32s(&[])),
            instr(Opcode::Add, f32s(&[]), &[0, 1], Attrs::default()),
        ])
    }

    #[test]
    fn binary_op() {
        let m = module(vec![comp(vec![
            param(0, f32s(&[2, 3])),
            param(1, f32s(&[2, 3])),
            instr(Opcode::Multiply, f32s(&[2, 3]), &[0, 1], Attrs::default()),
        ])]);
        insta::assert_snapshot!(lower_module(&m).unwrap().mlir);
    }

    #[test]
    fn reduce_with_region() {
        let zero = Attrs {
            constant: Some(ConstantData::Float(vec![0.0])),
            ..Attrs::default()
        };
        let m = module(vec![
            add_fn(),
            comp(vec![
                param(0, f32s(&[2, 3])),
                instr(Opcode::Constant, f32s(&[]), &[], zero),
                instr(
                    Opcode::Reduce,
                    f32s(&[2]),
                    &[0, 1],
                    Attrs {
                        dimensions: Some(vec![1]),
                        to_apply: Some(CompId(0)),
                        ..Attrs::default()
                    },
                ),
            ]),
        ]);
        insta::assert_snapshot!(lower_module(&m).unwrap().mlir);
    }

    #[test]
    fn compare_defaults_its_type_and_constants_are_hex() {
        let c = Attrs {
            constant: Some(ConstantData::Float(vec![-0.0, 1.0, f64::INFINITY])),
            ..Attrs::default()
        };
        let m = module(vec![comp(vec![
            param(0, Shape::array(ElementType::F16, vec![3])),
            instr(
                Opcode::Constant,
                Shape::array(ElementType::F16, vec![3]),
                &[],
                c,
            ),
            instr(
                Opcode::Compare,
                Shape::array(ElementType::Pred, vec![3]),
                &[0, 1],
                Attrs {
                    direction: Some(ComparisonDirection::Ge),
                    ..Attrs::default()
                },
            ),
        ])]);
        insta::assert_snapshot!(lower_module(&m).unwrap().mlir);
    }

    #[test]
    fn tuples_flatten_into_arguments_and_results() {
        let pair = Shape::Tuple(vec![f32s(&[1]), Shape::array(ElementType::S32, vec![])]);
        let m = module(vec![comp(vec![
            param(0, pair.clone()),
            instr(
                Opcode::GetTupleElement,
                f32s(&[1]),
                &[0],
                Attrs {
                    index: Some(0),
                    ..Attrs::default()
                },
            ),
            instr(Opcode::Negate, f32s(&[1]), &[1], Attrs::default()),
            instr(
                Opcode::Tuple,
                Shape::Tuple(vec![f32s(&[1]), pair]),
                &[2, 0],
                Attrs::default(),
            ),
        ])]);
        let l = lower_module(&m).unwrap();
        assert_eq!(l.params.len(), 2);
        assert_eq!(l.results.len(), 3);
        insta::assert_snapshot!(l.mlir);
    }

    #[test]
    fn unsupported_ops_and_types_are_reported() {
        let m = module(vec![comp(vec![
            param(0, f32s(&[2])),
            instr(Opcode::CustomCall, f32s(&[2]), &[0], Attrs::default()),
        ])]);
        let e = lower_module(&m).unwrap_err();
        assert!(matches!(e, LowerError::Unsupported(_)), "{e}");
        assert!(e.to_string().contains("custom-call"), "{e}");

        let m = module(vec![comp(vec![param(
            0,
            Shape::array(ElementType::S4, vec![2]),
        )])]);
        let e = lower_module(&m).unwrap_err();
        assert!(matches!(e, LowerError::Unsupported(_)), "{e}");
        // the skip reason says exactly why: no 4-bit packing for PJRT
        assert!(
            e.to_string().contains("s4 parameters and results")
                && e.to_string()
                    .contains("does not pack 4-bit arrays into PJRT host buffers"),
            "{e}"
        );

        let m = module(vec![comp(vec![param(0, Shape::Token)])]);
        assert!(matches!(lower_module(&m), Err(LowerError::Unsupported(_))));

        // A missing required attribute is a malformed module, not a skip.
        let m = module(vec![comp(vec![
            param(0, f32s(&[2])),
            instr(Opcode::Transpose, f32s(&[2]), &[0], Attrs::default()),
        ])]);
        assert!(matches!(lower_module(&m), Err(LowerError::Invalid(_))));
    }

    #[test]
    fn self_recursive_calls_do_not_overflow() {
        let call = Attrs {
            to_apply: Some(CompId(0)),
            ..Attrs::default()
        };
        let m = module(vec![comp(vec![
            param(0, f32s(&[1])),
            instr(Opcode::Call, f32s(&[1]), &[0], call),
        ])]);
        assert!(matches!(lower_module(&m), Err(LowerError::Unsupported(_))));
    }

    #[test]
    fn every_lowerable_op_is_one_the_reference_evaluates() {
        for &op in Opcode::ALL {
            if lowers(op) {
                assert!(crate::reference::evaluates(op), "{op}");
            }
        }
        assert!(lowers(Opcode::TriangularSolve) && lowers(Opcode::RngBitGenerator));
        assert!(lowers(Opcode::Gather) && !lowers(Opcode::CustomCall));
    }
}
