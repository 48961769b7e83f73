//! The tolerance model catches undeclared miscompilations: test-only wrappers
//! around the interpreter, each with one bug, disagree with the reference;
//! the same differences declared in `Numerics` are accepted.

use xla_props::backend::{Backend, BackendError, Executable, Interpreter};
use xla_props::check::{excess_precision_variant, Judge, LegalReason, Numerics, Policy, Verdict};
use xla_props::hlo::{
    CompId, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape,
};
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::literal::Literal;

/// What a wrapper does to the interpreter's results.
#[derive(Clone, Copy)]
enum Bug {
    /// Runs the module with fusions computed without their narrow roundings.
    ElideRoundTripInFusion,
    /// Flushes subnormal results to zero without declaring it.
    FlushSubnormals,
    /// exp (and everything) off by a relative 1e-3.
    RelativeError,
    /// Subtracts the last element of parameter 0 from the (sum) result.
    DropLastElement,
}

struct Mutant {
    bug: Bug,
    inner: Interpreter,
}

struct MutantExe {
    bug: Bug,
    exe: Box<dyn Executable>,
}

impl Backend for Mutant {
    fn name(&self) -> &str {
        "mutant"
    }
    fn numerics(&self) -> Numerics {
        self.inner.numerics()
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let module = match self.bug {
            Bug::ElideRoundTripInFusion => {
                excess_precision_variant(module).unwrap_or_else(|| module.clone())
            }
            _ => module.clone(),
        };
        Ok(Box::new(MutantExe {
            bug: self.bug,
            exe: self.inner.compile(&module)?,
        }))
    }
}

impl Executable for MutantExe {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let mut out = self.exe.execute(args)?;
        for lit in &mut out {
            let fmt = lit.dtype().float_format();
            for i in 0..lit.element_count() {
                let v = lit.get_f64(i);
                match self.bug {
                    Bug::FlushSubnormals => {
                        if let Some(fmt) = fmt {
                            if v != 0.0 && v.abs() < fmt.min_normal() {
                                lit.set_f64(i, 0.0f64.copysign(v));
                            }
                        }
                    }
                    Bug::RelativeError => lit.set_f64(i, v * (1.0 + 1e-3)),
                    Bug::DropLastElement => {
                        let x = &args[0];
                        lit.set_f64(i, v - x.get_f64(x.element_count() - 1));
                    }
                    Bug::ElideRoundTripInFusion => {}
                }
            }
        }
        Ok(out)
    }
}

fn param(name: &str, k: i64, shape: Shape) -> Instruction {
    let mut p = Instruction::new(name, Opcode::Parameter, shape, vec![]);
    p.attrs.parameter_number = Some(k);
    p
}

fn single(op: Opcode, shapes: &[Shape], out: Shape) -> Module {
    let mut instrs: Vec<Instruction> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| param(&format!("p{k}"), k as i64, s.clone()))
        .collect();
    let operands = (0..shapes.len()).map(|k| InstrId(k as u32)).collect();
    instrs.push(Instruction::new("r", op, out, operands));
    let root = InstrId(instrs.len() as u32 - 1);
    Module {
        name: "m".into(),
        attrs: vec![],
        computations: vec![Computation {
            name: "main".into(),
            instructions: instrs,
            root,
            other: vec![],
        }],
        entry: CompId(0),
    }
}

/// Runs reference and backend on `args` and judges with the default specs.
fn verdict(module: &Module, args: &[Literal], backend: &dyn Backend, strict: bool) -> Verdict {
    let expected = xla_props::reference::evaluate(module, args).expect("reference runs");
    let actual = backend
        .compile(module)
        .and_then(|e| e.execute(args))
        .expect("backend runs");
    let numerics = backend.numerics();
    let eval = |m: &Module, a: &[Literal]| xla_props::reference::evaluate(m, a).ok();
    Judge::new(&numerics, &[], Policy::Reference)
        .strict_rounding(strict)
        .outputs(module, args, &expected, &actual, &eval)
}

fn mutant(bug: Bug) -> Mutant {
    Mutant {
        bug,
        inner: Interpreter::default(),
    }
}

/// r = x - f32(f16(x)), inside a fusion.
fn residual_module() -> Module {
    let f32s = Shape::array(ElementType::F32, vec![256]);
    let f16s = Shape::array(ElementType::F16, vec![256]);
    let fused = Computation {
        name: "fused".into(),
        instructions: vec![
            param("x", 0, f32s.clone()),
            Instruction::new("h", Opcode::Convert, f16s, vec![InstrId(0)]),
            Instruction::new("b", Opcode::Convert, f32s.clone(), vec![InstrId(1)]),
            Instruction::new(
                "r",
                Opcode::Subtract,
                f32s.clone(),
                vec![InstrId(0), InstrId(2)],
            ),
        ],
        root: InstrId(3),
        other: vec![],
    };
    let mut f = Instruction::new("f", Opcode::Fusion, f32s.clone(), vec![InstrId(0)]);
    f.attrs.calls = vec![CompId(0)];
    Module {
        name: "residual".into(),
        attrs: vec![],
        computations: vec![
            fused,
            Computation {
                name: "main".into(),
                instructions: vec![param("x", 0, f32s), f],
                root: InstrId(1),
                other: vec![],
            },
        ],
        entry: CompId(1),
    }
}

#[test]
fn the_honest_interpreter_agrees() {
    let m = residual_module();
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    let v = verdict(&m, &g.args, &Interpreter::default(), true);
    assert!(matches!(v, Verdict::Agree(_)), "{v}");
}

#[test]
fn elided_round_trip_in_a_fusion_is_caught() {
    let m = residual_module();
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    let v = verdict(&m, &g.args, &mutant(Bug::ElideRoundTripInFusion), true);
    let Verdict::Mismatch(r) = &v else {
        panic!("expected a mismatch, got {v}")
    };
    // the residual is nonzero for almost every f32 input
    assert!(r.count > 200, "{v}");
}

/// The same elision by a backend that declares excess precision is legal,
/// unless the property is strict_rounding.
#[test]
fn declared_excess_precision_is_legal_unless_strict_rounding() {
    struct Declared(Mutant);
    impl Backend for Declared {
        fn name(&self) -> &str {
            "declared"
        }
        fn numerics(&self) -> Numerics {
            Numerics {
                excess_precision_in_fusions: true,
                ..self.0.numerics()
            }
        }
        fn compile(&self, m: &Module) -> Result<Box<dyn Executable>, BackendError> {
            self.0.compile(m)
        }
    }
    let m = residual_module();
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    let b = Declared(mutant(Bug::ElideRoundTripInFusion));
    match verdict(&m, &g.args, &b, false) {
        Verdict::Agree(a) => assert!(a.legal.contains_key(&LegalReason::ExcessPrecision)),
        v => panic!("expected agreement, got {v}"),
    }
    assert!(matches!(
        verdict(&m, &g.args, &b, true),
        Verdict::Mismatch(_)
    ));
}

#[test]
fn undeclared_subnormal_flush_is_caught() {
    let s = Shape::array(ElementType::F32, vec![4]);
    let m = single(Opcode::Multiply, &[s.clone(), s.clone()], s.clone());
    let a = s.as_array().unwrap();
    // products 2^-130, 2^-140 and 2^-149 are f32 subnormals
    let x = Literal::from_f64s(a, &[2f64.powi(-65), 2f64.powi(-70), 2f64.powi(-75), 3.0]).unwrap();
    let y = Literal::from_f64s(a, &[2f64.powi(-65), 2f64.powi(-70), 2f64.powi(-74), 2.0]).unwrap();
    let v = verdict(&m, &[x, y], &mutant(Bug::FlushSubnormals), false);
    let Verdict::Mismatch(r) = &v else {
        panic!("expected a mismatch, got {v}")
    };
    assert_eq!(r.count, 3, "{v}");
}

/// A relative error of 1e-3 is about 8000 ULP in f32 and far outside its
/// budget; in f16 (eps ~ 9.8e-4) it is one ULP, inside XLA's default f16
/// tolerance of 5 eps, so only f32 and f64 can tell.
#[test]
fn exp_with_relative_error_is_caught() {
    for dtype in [ElementType::F32, ElementType::F64] {
        let s = Shape::array(dtype, vec![1024]);
        let m = single(Opcode::Exponential, std::slice::from_ref(&s), s.clone());
        let g = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
        let v = verdict(&m, &g.args, &mutant(Bug::RelativeError), false);
        assert!(matches!(v, Verdict::Mismatch(_)), "{dtype}: {v}");
        // and the honest interpreter is within its budgets
        let v = verdict(&m, &g.args, &Interpreter::default(), false);
        assert!(matches!(v, Verdict::Agree(_)), "{dtype}: {v}");
    }
}

#[test]
fn reduce_dropping_its_last_element_is_caught() {
    let f32s = Shape::scalar(ElementType::F32);
    let add = Computation {
        name: "add".into(),
        instructions: vec![
            param("a", 0, f32s.clone()),
            param("b", 1, f32s.clone()),
            Instruction::new("s", Opcode::Add, f32s.clone(), vec![InstrId(0), InstrId(1)]),
        ],
        root: InstrId(2),
        other: vec![],
    };
    let mut zero = Instruction::new("z", Opcode::Constant, f32s.clone(), vec![]);
    zero.attrs.constant = Some(xla_props::hlo::ConstantData::Float(vec![0.0]));
    let mut r = Instruction::new("r", Opcode::Reduce, f32s, vec![InstrId(0), InstrId(1)]);
    r.attrs.dimensions = Some(vec![0]);
    r.attrs.to_apply = Some(CompId(0));
    let m = Module {
        name: "sum".into(),
        attrs: vec![],
        computations: vec![
            add,
            Computation {
                name: "main".into(),
                instructions: vec![
                    param("x", 0, Shape::array(ElementType::F32, vec![64])),
                    zero,
                    r,
                ],
                root: InstrId(2),
                other: vec![],
            },
        ],
        entry: CompId(1),
    };
    for seed in 0..5 {
        let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
        let honest = verdict(&m, &g.args, &Interpreter::default(), false);
        assert!(matches!(honest, Verdict::Agree(_)), "{honest}");
        let v = verdict(&m, &g.args, &mutant(Bug::DropLastElement), false);
        assert!(matches!(v, Verdict::Mismatch(_)), "seed {seed}: {v}");
    }
}
