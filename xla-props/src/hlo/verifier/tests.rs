//! One test per structural error class, plus shape mismatches.

use super::*;
use crate::hlo::{
    Attrs, ComparisonDirection, ComparisonType, ElementType, InstrId, Instruction, ModuleBuilder,
};
use ElementType::{Pred, F32, S32};

fn a(t: ElementType, d: &[i64]) -> Shape {
    Shape::array(t, d.to_vec())
}

/// entry `main(p: f32[3]) = add(p, p)`, with a callee `add_f32` (computation 0).
fn base() -> Module {
    let mut m = ModuleBuilder::new("m");
    m.scalar_reducer(Opcode::Add, F32).unwrap();
    m.build("main", |b| {
        let x = b.parameter(a(F32, &[3]))?;
        b.binary(Opcode::Add, x, x)
    })
    .unwrap()
}

fn main_mut(m: &mut Module) -> &mut Computation {
    let e = m.entry.index();
    &mut m.computations[e]
}

fn msg(m: &Module) -> String {
    let e = verify(m).unwrap_err().to_string();
    assert!(!e.starts_with(char::is_uppercase), "{e}");
    e
}

#[test]
fn a_built_module_verifies() {
    verify(&base()).unwrap();
}

#[test]
fn declared_shape_mismatch_names_both_shapes() {
    let mut m = base();
    let c = main_mut(&mut m);
    let add = c.root;
    c.instructions[add.index()].shape = a(F32, &[2]);
    let name = c.instructions[add.index()].name.clone();
    let err = verify(&m).unwrap_err();
    assert!(matches!(err, VerifyError::ShapeMismatch { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("computation 'main', instruction '{name}': declared shape f32[2] but add of f32[3], f32[3] gives f32[3]")
    );
    // a different dtype is a mismatch too, a different layout is not
    let c = main_mut(&mut m);
    c.instructions[add.index()].shape = a(ElementType::F16, &[3]);
    assert!(matches!(verify(&m), Err(VerifyError::ShapeMismatch { .. })));
    let c = main_mut(&mut m);
    let mut s = crate::hlo::ArrayShape::new(F32, vec![3]);
    s.layout = Some(crate::hlo::Layout::row_major(1));
    c.instructions[add.index()].shape = Shape::Array(s);
    verify(&m).unwrap();
}

#[test]
fn instruction_cycle() {
    let mut m = base();
    let c = main_mut(&mut m);
    // neg = negate(add); add = add(p, neg)
    let neg = Instruction::new("neg", Opcode::Negate, a(F32, &[3]), vec![c.root]);
    c.instructions.push(neg);
    let add = c.root.index();
    c.instructions[add].operands[1] = InstrId(2);
    assert_eq!(msg(&m), "computation 'main': its instructions form a cycle");
    // a self loop
    let mut m = base();
    let c = main_mut(&mut m);
    let add = c.root;
    c.instructions[add.index()].operands[0] = add;
    assert!(matches!(verify(&m), Err(VerifyError::Cycle { .. })));
}

#[test]
fn duplicate_names() {
    let mut m = base();
    let first = m.computations[0].instructions[0].name.clone();
    main_mut(&mut m).instructions[0].name = first.clone();
    assert_eq!(
        msg(&m),
        format!("duplicate instruction name '{first}' in computations 'add_f32' and 'main'")
    );
    // renaming fixes it, and keeps the first use
    let mut fixed = m.clone();
    assert_eq!(uniquify_names(&mut fixed), 1);
    assert_eq!(fixed.computations[0].instructions[0].name, first);
    assert_eq!(
        main_mut(&mut fixed).instructions[0].name,
        format!("{first}.1")
    );
    verify(&fixed).unwrap();
    // two instructions of one computation
    let mut m = base();
    let c = main_mut(&mut m);
    c.instructions[1].name = c.instructions[0].name.clone();
    assert!(
        matches!(verify(&m), Err(VerifyError::DuplicateInstruction { first, second, .. }) if first == second)
    );

    let mut m = base();
    m.computations[0].name = "main".into();
    assert!(matches!(verify(&m), Err(VerifyError::DuplicateComputation(n)) if n == "main"));
}

#[test]
fn undefined_operands_and_computations() {
    let mut m = base();
    let c = main_mut(&mut m);
    let add = c.root.index();
    c.instructions[add].operands[1] = InstrId(7);
    let e = msg(&m);
    assert!(
        e.contains("operand 1 refers to undefined instruction #7"),
        "{e}"
    );

    let mut m = base();
    let c = main_mut(&mut m);
    let mut call = Instruction::new("call", Opcode::Call, a(F32, &[3]), vec![InstrId(0)]);
    call.attrs.to_apply = Some(CompId(42));
    c.instructions.push(call);
    assert!(matches!(
        verify(&m),
        Err(VerifyError::UndefinedComputation { id: 42, .. })
    ));

    let mut m = base();
    main_mut(&mut m).root = InstrId(5);
    assert!(matches!(
        verify(&m),
        Err(VerifyError::RootOutOfRange { root: 5, .. })
    ));
    let mut m = base();
    m.entry = CompId(9);
    assert_eq!(msg(&m), "entry computation #9 does not exist");
}

#[test]
fn parameter_numbering() {
    let param = |name: &str, n: Option<i64>| {
        let mut p = Instruction::new(name, Opcode::Parameter, a(F32, &[3]), vec![]);
        p.attrs.parameter_number = n;
        p
    };
    // a gap: 0 and 2
    let mut m = base();
    main_mut(&mut m).instructions.push(param("p2", Some(2)));
    let e = msg(&m);
    assert!(e.contains("'p2' has number 2 but 1 is missing"), "{e}");
    // a duplicate
    let mut m = base();
    main_mut(&mut m).instructions.push(param("p0b", Some(0)));
    assert!(msg(&m).contains("repeats parameter number 0"));
    // no number at all
    let mut m = base();
    main_mut(&mut m).instructions.push(param("px", None));
    assert!(matches!(
        verify(&m),
        Err(VerifyError::ParameterNumbering { .. })
    ));
}

#[test]
fn entry_must_not_be_called() {
    let mut m = base();
    let entry = m.entry;
    // the reducer computation calls main
    let callee = &mut m.computations[0];
    let mut call = Instruction::new("calls_main", Opcode::Call, a(F32, &[3]), vec![]);
    call.attrs.to_apply = Some(entry);
    callee.instructions.push(call);
    assert_eq!(
        msg(&m),
        "computation 'add_f32', instruction 'calls_main': calls the entry computation 'main'"
    );
}

/// A module where `f` and `g` call each other (or `f` calls itself when `mutual` is false).
fn recursive(mutual: bool) -> Module {
    let s = Shape::scalar(F32);
    let body = |name: &str, callee: u32| {
        let mut p = Instruction::new(format!("{name}.p"), Opcode::Parameter, s.clone(), vec![]);
        p.attrs.parameter_number = Some(0);
        let mut call = Instruction::new(
            format!("{name}.call"),
            Opcode::Call,
            s.clone(),
            vec![InstrId(0)],
        );
        call.attrs.to_apply = Some(CompId(callee));
        Computation {
            name: name.into(),
            instructions: vec![p, call],
            root: InstrId(1),
            other: vec![],
        }
    };
    let f = body("f", if mutual { 1 } else { 0 });
    let g = body("g", 0);
    let main = body("main", 0);
    Module {
        name: "rec".into(),
        attrs: vec![],
        computations: vec![f, g, main],
        entry: CompId(2),
    }
}

#[test]
fn recursion_in_the_call_graph() {
    let e = msg(&recursive(true));
    assert_eq!(
        e,
        "computation 'f' calls itself (recursion through 'f' -> 'g' -> 'f')"
    );
    let e = msg(&recursive(false));
    assert_eq!(
        e,
        "computation 'f' calls itself (recursion through 'f' -> 'f')"
    );
}

#[test]
fn arity_from_the_opcode_table() {
    let mut m = base();
    let c = main_mut(&mut m);
    let add = c.root.index();
    c.instructions[add].operands.pop();
    let name = c.instructions[add].name.clone();
    assert_eq!(
        msg(&m),
        format!("computation 'main', instruction '{name}': add takes 2 operands, got 1")
    );
}

#[test]
fn missing_required_attributes() {
    let mut m = base();
    let c = main_mut(&mut m);
    c.instructions.push(Instruction::new(
        "t",
        Opcode::Transpose,
        a(F32, &[3]),
        vec![InstrId(0)],
    ));
    let e = verify(&m).unwrap_err();
    assert!(matches!(e, VerifyError::MissingAttribute { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("instruction 't': transpose: missing required attribute `dimensions`"),
        "{e}"
    );
}

#[test]
fn called_computation_signatures() {
    // reduce over f32 with a reducer on s32
    let mut m = ModuleBuilder::new("m");
    let add_s32 = m.scalar_reducer(Opcode::Add, S32).unwrap();
    let add_f32 = m.scalar_reducer(Opcode::Add, F32).unwrap();
    let mut module = m
        .build("main", |b| {
            let x = b.parameter(a(F32, &[4, 8]))?;
            let z = b.constant_f64(F32, &[], &[0.0])?;
            b.reduce(&[x], &[z], &[1], add_f32)
        })
        .unwrap();
    let c = main_mut(&mut module);
    let root = c.root.index();
    c.instructions[root].attrs.to_apply = Some(add_s32);
    let e = verify(&module).unwrap_err();
    assert!(matches!(e, VerifyError::CalleeSignature { .. }), "{e:?}");
    assert!(e.to_string().contains("reducer 'add_s32'"), "{e}");

    // a while condition that returns s32[]
    let mut m = ModuleBuilder::new("w");
    let body = m
        .computation("body", |b| {
            let x = b.parameter(Shape::scalar(S32))?;
            b.unary(Opcode::Negate, x)
        })
        .unwrap();
    let cond = m
        .computation("cond", |b| {
            let x = b.parameter(Shape::scalar(S32))?;
            let z = b.constant_i128(S32, &[], &[0])?;
            b.compare(ComparisonDirection::Gt, ComparisonType::Signed, x, z)
        })
        .unwrap();
    let mut module = m
        .build("main", |b| {
            let x = b.parameter(Shape::scalar(S32))?;
            b.while_loop(cond, body, x)
        })
        .unwrap();
    let c = main_mut(&mut module);
    let root = c.root.index();
    c.instructions[root].attrs.condition = Some(body);
    let e = msg(&module);
    assert!(
        e.contains("condition 'body' (s32[]) -> s32[] must be (s32[]) -> pred[]"),
        "{e}"
    );
}

#[test]
fn bad_shapes_and_layouts() {
    let mut m = base();
    let c = main_mut(&mut m);
    let mut s = crate::hlo::ArrayShape::new(F32, vec![3]);
    s.layout = Some(crate::hlo::Layout {
        minor_to_major: vec![1],
        extra: None,
    });
    c.instructions[0].shape = Shape::Array(s);
    assert!(matches!(verify(&m), Err(VerifyError::BadShape { .. })));
    let mut m = base();
    main_mut(&mut m).instructions[0].shape = a(F32, &[-3]);
    assert!(msg(&m).contains("negative dimension -3"));
}

#[test]
fn invalid_operands_are_reported() {
    let mut m = base();
    let c = main_mut(&mut m);
    c.instructions[0].shape = a(Pred, &[3]);
    // subtract of pred is invalid; add of pred is fine, so switch the opcode
    let root = c.root.index();
    c.instructions[root].opcode = Opcode::Subtract;
    c.instructions[root].shape = a(Pred, &[3]);
    assert!(matches!(verify(&m), Err(VerifyError::Invalid { .. })));
}

#[test]
fn parse_only_ops_are_accepted_as_declared() {
    let mut m = base();
    let c = main_mut(&mut m);
    let mut cc = Instruction::new(
        "cc",
        Opcode::CustomCall,
        Shape::Tuple(vec![a(S32, &[7]), Shape::Token]),
        vec![InstrId(0)],
    );
    cc.attrs = Attrs {
        custom_call_target: Some("foo".into()),
        ..Attrs::default()
    };
    c.instructions.push(cc);
    verify(&m).unwrap();
}
