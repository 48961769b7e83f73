//! What several examples share (each uses part of it).
#![allow(dead_code)]

use std::path::PathBuf;

use xla_props::backend::{create, Backend};
use xla_props::hlo::{CompId, Computation, InstrId, Instruction, Module, Opcode, Shape};

/// The backend registered as `name`; when there is none, says why (after
/// the example's name) and exits with code 2.
pub fn backend_or_exit(example: &str, name: &str) -> Box<dyn Backend> {
    create(name).unwrap_or_else(|e| {
        eprintln!("{example}: {e}");
        std::process::exit(2)
    })
}

/// The first argument as a path, or `default`.
pub fn first_path(args: &[String], default: &str) -> PathBuf {
    PathBuf::from(args.first().map_or(default, String::as_str))
}

/// Parameters `p0`, `p1`, ... of shape `s`, `count` of them.
pub fn parameters(s: &Shape, count: usize) -> Vec<Instruction> {
    (0..count)
        .map(|k| {
            let mut p = Instruction::new(format!("p{k}"), Opcode::Parameter, s.clone(), vec![]);
            p.attrs.parameter_number = Some(k as i64);
            p
        })
        .collect()
}

/// The module `name` of one computation, `main`, whose root is its last
/// instruction.
pub fn one_computation(name: &str, instructions: Vec<Instruction>) -> Module {
    let root = InstrId(instructions.len() as u32 - 1);
    Module {
        name: name.into(),
        attrs: vec![],
        computations: vec![Computation::new("main", instructions, root)],
        entry: CompId(0),
    }
}
