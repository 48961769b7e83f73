//! Every f16 bit pattern through 13 unary ops, against the correctly rounded
//! words in `../shared/oracle/f16/<opcode>.bin` (NaN compared by class).

use std::path::PathBuf;

use xla_props::hlo::{
    CompId, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape,
};
use xla_props::literal::Literal;
use xla_props::reference::evaluate;

const OPS: [&str; 13] = [
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "erf",
];

/// `../shared/oracle/f16` from the workspace root.
fn oracle_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/oracle/f16");
    dir.is_dir().then_some(dir)
}

fn unary_module(op: Opcode) -> Module {
    let s = Shape::array(ElementType::F16, vec![65536]);
    let mut p = Instruction::new("x", Opcode::Parameter, s.clone(), vec![]);
    p.attrs.parameter_number = Some(0);
    let y = Instruction::new("y", op, s, vec![InstrId(0)]);
    Module {
        name: "oracle".into(),
        attrs: vec![],
        computations: vec![Computation {
            name: "main".into(),
            instructions: vec![p, y],
            root: InstrId(1),
            other: vec![],
        }],
        entry: CompId(0),
    }
}

fn is_nan(w: u16) -> bool {
    w & 0x7c00 == 0x7c00 && w & 0x3ff != 0
}

#[test]
fn f16_unary_ops_match_the_oracle_exactly() {
    let Some(dir) = oracle_dir() else {
        if std::env::var_os("CI").is_some() {
            panic!("../shared/oracle/f16 is missing under CI");
        }
        xla_props::skip::this_test(
            "../shared/oracle/f16 not found (set CI to make this a failure)",
        );
        return;
    };
    let shape = xla_props::hlo::ArrayShape::new(ElementType::F16, vec![65536]);
    let all: Vec<u64> = (0..65536u64).collect();
    let input = Literal::from_bits(&shape, &all).unwrap();
    let mut failures = Vec::new();
    for name in OPS {
        let bytes = std::fs::read(dir.join(format!("{name}.bin")))
            .unwrap_or_else(|e| panic!("reading {name}.bin: {e}"));
        assert_eq!(bytes.len(), 2 * 65536, "{name}.bin has the wrong size");
        let op: Opcode = name.parse().unwrap();
        let out = evaluate(&unary_module(op), std::slice::from_ref(&input)).unwrap();
        let got = out[0].to_bits_vec();
        let mut bad = Vec::new();
        for i in 0..65536 {
            let want = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
            let have = got[i] as u16;
            let ok = if is_nan(want) {
                is_nan(have)
            } else {
                want == have
            };
            if !ok {
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
