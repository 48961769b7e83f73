//! The mutant backend: names, the registry, `xla-props eval --backend mutant:...`,
//! and what a few mutations do to concrete programs.

mod common;

use common::cli::{exits, fails_with, run_on, write};
use xla_props::backend::mutant::{widen_fused_arithmetic, Mutant, Mutation};
use xla_props::backend::{create, Backend, BackendError, Interpreter};
use xla_props::hlo::{parse_module, ArrayShape, ElementType};
use xla_props::literal::Literal;

fn run(b: &dyn Backend, text: &str, args: &[Literal]) -> Vec<Literal> {
    b.compile(&parse_module(text).unwrap())
        .unwrap()
        .execute(args)
        .unwrap()
}

/// A constant 1, for the command line.
const ONE: &str = "HloModule m\nENTRY main {\n  ROOT c = f32[] constant(1)\n}\n";

/// An s8 add, which overflows on the command line's inputs.
const ADD_S8: &str = "HloModule m\nENTRY main {\n  x = s8[64] parameter(0)\n  y = s8[64] parameter(1)\n  ROOT r = s8[64] add(x, y)\n}\n";

fn lit(t: ElementType, v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, vec![v.len() as i64]), v).unwrap()
}

#[test]
fn registry_makes_mutants_by_name() {
    let m = create("mutant:sort-unstable").unwrap();
    assert_eq!(m.name(), "mutant:sort-unstable");
    let m = create("mutant:declared-ftz@interpreter").unwrap();
    // the interpreter is the default base: its mutants carry no `@base`
    assert_eq!(m.name(), "mutant:declared-ftz");
    assert!(m.numerics().flushes_outputs(ElementType::F32));
    // a bug declares its base's numerics, so the bug is undeclared
    let bug = create("mutant:undeclared-ftz").unwrap();
    assert_eq!(bug.numerics(), Interpreter::default().numerics());
    match create("mutant:no-such-bug") {
        Err(BackendError::UnknownBackend { known, .. }) => {
            assert_eq!(known.len(), Mutation::ALL.len());
            assert!(known.contains(&"mutant:elide-convert-pair".to_string()));
        }
        other => panic!(
            "expected an unknown mutation, got {:?}",
            other.map(|b| b.name().to_string())
        ),
    }
    assert!(matches!(
        create("mutant:sort-unstable@tpu"),
        Err(BackendError::UnknownBackend { .. })
    ));
}

#[test]
fn eval_with_an_unknown_mutation_exits_2_and_lists_the_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "m.hlo", ONE);
    let out = run_on("eval", &hlo, "mutant:nope", &[]);
    fails_with(&out, 2, &["mutant:nope", "mutant:scatter-drops-duplicates"]);
    exits(&run_on("eval", &hlo, "mutant:round-afz-as-even", &[]), 0);
}

#[test]
fn rewrites_and_kernels_change_exactly_what_they_model() {
    let round = "HloModule m\nENTRY main {\n  x = f32[3] parameter(0)\n  ROOT r = f32[3] round-nearest-afz(x)\n}\n";
    let x = lit(ElementType::F32, &[0.5, 2.5, -1.5]);
    let good = run(&Interpreter::default(), round, std::slice::from_ref(&x));
    assert_eq!(good[0].to_f64_vec(), vec![1.0, 3.0, -2.0]);
    let bad = run(
        &Mutant::new(Interpreter::default(), Mutation::RoundAfzAsEven),
        round,
        &[x],
    );
    assert_eq!(bad[0].to_f64_vec(), vec![0.0, 2.0, -2.0]);

    let div = "HloModule m\nENTRY main {\n  x = s32[2] parameter(0)\n  y = s32[2] parameter(1)\n  ROOT d = s32[2] divide(x, y)\n}\n";
    let args = [
        lit(ElementType::S32, &[7.0, 9.0]),
        lit(ElementType::S32, &[0.0, 2.0]),
    ];
    let good = run(&Interpreter::default(), div, &args);
    assert_eq!(good[0].to_f64_vec(), vec![-1.0, 4.0]);
    let bad = run(
        &Mutant::new(Interpreter::default(), Mutation::IntDivideByZeroZero),
        div,
        &args,
    );
    assert_eq!(bad[0].to_f64_vec(), vec![0.0, 4.0]);

    let pair = "HloModule m\nENTRY main {\n  x = f32[1] parameter(0)\n  n = f16[1] convert(x)\n  b = f32[1] convert(n)\n  ROOT r = f32[1] subtract(x, b)\n}\n";
    let x = lit(ElementType::F32, &[0.1]);
    assert_ne!(
        run(&Interpreter::default(), pair, std::slice::from_ref(&x))[0].get_f64(0),
        0.0
    );
    let elided = run(
        &Mutant::new(Interpreter::default(), Mutation::ElideConvertPair),
        pair,
        &[x],
    );
    assert_eq!(elided[0].get_f64(0), 0.0);

    let add =
        "HloModule m\nENTRY main {\n  x = s8[1] parameter(0)\n  ROOT r = s8[1] add(x, x)\n}\n";
    let x = lit(ElementType::S8, &[100.0]);
    assert_eq!(
        run(&Interpreter::default(), add, std::slice::from_ref(&x))[0].get_f64(0),
        -56.0
    );
    let sat = run(
        &Mutant::new(Interpreter::default(), Mutation::IntAddSaturates),
        add,
        &[x],
    );
    assert_eq!(sat[0].get_f64(0), 127.0);
}

#[test]
fn excess_precision_keeps_fused_intermediates_but_honours_explicit_converts() {
    // (a + b) - a in f16: rounding the sum matters; 1 + 2^-12 is not an f16
    let fused = "HloModule m\nfused {\n  a = f16[1] parameter(0)\n  b = f16[1] parameter(1)\n  c = f16[1] add(a, b)\n  ROOT d = f16[1] subtract(c, a)\n}\nENTRY main {\n  x = f16[1] parameter(0)\n  y = f16[1] parameter(1)\n  ROOT f = f16[1] fusion(x, y), kind=kLoop, calls=fused\n}\n";
    let args = [
        lit(ElementType::F16, &[1.0]),
        lit(ElementType::F16, &[1.0 / 4096.0]),
    ];
    assert_eq!(
        run(&Interpreter::default(), fused, &args)[0].get_f64(0),
        0.0
    );
    let wide = Mutant::new(Interpreter::default(), Mutation::ExcessPrecisionInFusion);
    assert!(wide.numerics().excess_precision_in_fusions);
    assert_eq!(run(&wide, fused, &args)[0].get_f64(0), 1.0 / 4096.0);
    // an explicit convert to f16 inside the fusion still rounds
    let explicit = fused.replace(
        "c = f16[1] add(a, b)\n  ROOT d = f16[1] subtract(c, a)",
        "w = f32[1] convert(a)\n  v = f32[1] convert(b)\n  s = f32[1] add(w, v)\n  c = f16[1] convert(s)\n  ROOT d = f16[1] subtract(c, a)",
    );
    assert_eq!(run(&wide, &explicit, &args)[0].get_f64(0), 0.0);
    assert!(widen_fused_arithmetic(&parse_module(&explicit).unwrap()).is_some());
}

#[test]
fn ftz_flushes_subnormals_at_the_boundary() {
    let neg =
        "HloModule m\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] negate(x)\n}\n";
    let x = lit(ElementType::F32, &[1e-40, 1.0]);
    let out = run(
        &Mutant::new(Interpreter::default(), Mutation::UndeclaredFtz),
        neg,
        std::slice::from_ref(&x),
    );
    assert_eq!(out[0].get_bits(0), 0x8000_0000);
    assert_eq!(out[0].get_f64(1), -1.0);
    let plain = run(&Interpreter::default(), neg, &[x]);
    assert_ne!(plain[0].get_f64(0), 0.0);
}

#[test]
fn compare_flags_a_mutant_and_passes_its_base() {
    let dir = tempfile::tempdir().unwrap();
    let hlo = write(dir.path(), "sat.hlo", ADD_S8);
    let code = |backend: &str| run_on("compare", &hlo, backend, &[]).status.code();
    assert_eq!(code("interpreter"), Some(0));
    assert_eq!(code("mutant:int-add-saturates"), Some(1));
    assert_eq!(code("mutant:int-add-saturates@interpreter"), Some(1));
    assert_eq!(code("mutant:int-add-saturated"), Some(2));
}

#[test]
fn a_mutant_carries_several_mutations_at_once() {
    let m = create("mutant:int-add-saturates+sort-unstable").unwrap();
    assert_eq!(m.name(), "mutant:int-add-saturates+sort-unstable");
    // each mutation acts on its own op: the add saturates, a float add is left alone
    let add = "HloModule m\nENTRY main { x = s8[2] parameter(0)\n y = s8[2] parameter(1)\n ROOT z = s8[2] add(x, y) }";
    let s8 = |v: &[f64]| lit(ElementType::S8, v);
    let out = run(m.as_ref(), add, &[s8(&[100.0, 1.0]), s8(&[100.0, 2.0])]);
    assert_eq!(out[0].to_f64_vec(), vec![127.0, 3.0]);
    let neg = "HloModule m\nENTRY main { x = f32[2] parameter(0)\n ROOT z = f32[2] negate(x) }";
    let out = run(m.as_ref(), neg, &[lit(ElementType::F32, &[1.0, -2.0])]);
    assert_eq!(out[0].to_f64_vec(), vec![-1.0, 2.0]);
    for bad in ["mutant:int-add-saturates+nope", "mutant:int-add-saturates+"] {
        assert!(
            matches!(create(bad), Err(BackendError::UnknownBackend { .. })),
            "{bad}"
        );
    }
    match create("mutant:sort-unstable+sort-unstable") {
        Err(e) => assert!(e.to_string().contains("named twice"), "{e}"),
        Ok(b) => panic!("{} was made", b.name()),
    }
}
