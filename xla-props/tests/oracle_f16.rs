//! Every f16 bit pattern through 13 unary ops, against the correctly rounded
//! words in `../shared/oracle/f16/<opcode>.bin` (NaN compared by class).

mod common;

use xla_props::hlo::{ElementType, Module, ModuleBuilder, Opcode, Shape};
use xla_props::literal::Literal;
use xla_props::reference::evaluate;

fn unary_module(op: Opcode) -> Module {
    let s = Shape::array(ElementType::F16, vec![65536]);
    ModuleBuilder::new("oracle")
        .build("main", |b| {
            let x = b.parameter(s)?;
            b.unary(op, x)
        })
        .unwrap()
}

#[test]
fn f16_unary_ops_match_the_oracle_exactly() {
    let Some(dir) = common::f16_oracle_dir() else {
        return;
    };
    let shape = xla_props::hlo::ArrayShape::new(ElementType::F16, vec![65536]);
    let all: Vec<u64> = (0..65536u64).collect();
    let input = Literal::from_bits(&shape, &all).unwrap();
    let mut failures = Vec::new();
    for name in common::F16_ORACLE_OPS {
        let bytes = std::fs::read(dir.join(format!("{name}.bin")))
            .unwrap_or_else(|e| panic!("reading {name}.bin: {e}"));
        assert_eq!(bytes.len(), 2 * 65536, "{name}.bin has the wrong size");
        let op: Opcode = name.parse().unwrap();
        let out = evaluate(&unary_module(op), std::slice::from_ref(&input)).unwrap();
        let got = out[0].to_bits_vec();
        let mut bad = Vec::new();
        for (i, want) in common::f16_words(&bytes).into_iter().enumerate() {
            let have = got[i] as u16;
            if !common::f16_matches(want, have) {
                bad.push((i, want, have));
            }
        }
        eprintln!("{name}: {} mismatches", bad.len());
        if !bad.is_empty() {
            failures.push(format!(
                "{name}: {} words differ, first {:x?}",
                bad.len(),
                &bad[..bad.len().min(5)]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
