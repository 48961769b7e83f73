//! Exhaustive sweeps: every bit pattern of f16, bf16, f8e4m3fn and f8e5m2
//! through every unary float op, interpreter against the exact reference.
//! The interpreter must stay within its declared budgets (its `Numerics`,
//! with an exact `ErrorSpec`: no tolerance beyond what it declares).
//!
//! `cargo test -p xla-props --release --test numerics_sweep -- --ignored --nocapture`
//! prints the maximum ULP error per op and dtype (docs/numerics.md).

mod common;

use xla_props::backend::{Backend, Interpreter};
use xla_props::check::{ulp_stats, Judge, Policy, UlpStats, Verdict};
use xla_props::hlo::{ElementType, Module, ModuleBuilder, Opcode, Shape};
use xla_props::inputs::exhaustive_bits;
use xla_props::literal::Literal;

/// Unary ops whose operand and result are the same float type: the exact
/// ones, then the f16 oracle's.
fn unary_float_ops() -> Vec<Opcode> {
    use Opcode::*;
    let exact = [
        Abs,
        Negate,
        Sign,
        Ceil,
        Floor,
        RoundNearestAfz,
        RoundNearestEven,
    ];
    let oracle = common::F16_ORACLE_OPS.iter().map(|op| op.parse().unwrap());
    exact.into_iter().chain(oracle).collect()
}

const SWEPT: &[ElementType] = &[
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F8E4M3Fn,
    ElementType::F8E5M2,
];

fn unary_module(op: Opcode, dtype: ElementType, n: i64) -> Module {
    ModuleBuilder::new(format!("{op}_{dtype}"))
        .build("main", |b| {
            let x = b.parameter(Shape::array(dtype, vec![n]))?;
            b.unary(op, x)
        })
        .unwrap()
}

struct Sweep {
    verdict: Verdict,
    stats: UlpStats,
}

fn sweep(op: Opcode, dtype: ElementType) -> Sweep {
    let all: Literal = exhaustive_bits(dtype).expect("narrow float type");
    let m = unary_module(op, dtype, all.element_count() as i64);
    let args = [all];
    let expected = xla_props::reference::evaluate(&m, &args).expect("reference runs");
    let backend = Interpreter::default();
    let actual = backend
        .compile(&m)
        .and_then(|e| e.execute(&args))
        .expect("interpreter runs");
    // exact but for the declared numerics (strict: no default error spec)
    let numerics = backend.numerics();
    let eval = |m: &Module, a: &[Literal]| xla_props::reference::evaluate(m, a).ok();
    let verdict = Judge::new(&numerics, &[], Policy::Reference)
        .strict_rounding(true)
        .outputs(&m, &args, &expected, &actual, &eval);
    let stats = ulp_stats(&expected[0], &actual[0]).expect("same shapes");
    Sweep { verdict, stats }
}

fn assert_within_declared_budgets(dtypes: &[ElementType]) {
    for &dtype in dtypes {
        for op in unary_float_ops() {
            let s = sweep(op, dtype);
            assert!(
                matches!(s.verdict, Verdict::Agree(_)),
                "{op} {dtype}: {}",
                s.verdict
            );
        }
    }
}

#[test]
fn interpreter_within_declared_budgets_f16_bf16() {
    assert_within_declared_budgets(&SWEPT[..2]);
}

#[test]
fn interpreter_within_declared_budgets_f8() {
    assert_within_declared_budgets(&SWEPT[2..]);
}

/// Prints the table of docs/numerics.md.
#[test]
#[ignore = "prints a measurement table; run with --ignored --nocapture"]
fn measure_max_ulp() {
    println!(
        "| op | {} |",
        SWEPT
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("| --- |{}", " --- |".repeat(SWEPT.len()));
    for op in unary_float_ops() {
        let cells: Vec<String> = SWEPT
            .iter()
            .map(|&t| {
                let s = sweep(op, t).stats;
                if s.class_mismatches > 0 {
                    format!(
                        "{} ({} differ, {} class)",
                        s.max_ulp, s.differing, s.class_mismatches
                    )
                } else {
                    format!("{} ({} differ)", s.max_ulp, s.differing)
                }
            })
            .collect();
        println!("| {op} | {} |", cells.join(" | "));
    }
}
