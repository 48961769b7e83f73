//! Known bugs of a backend: what a backend declares it gets wrong, each with
//! a model of the wrong result, so that a run can keep a known bug visible
//! (as an expected failure) while a new bug in the same op still fails.
//!
//! A model is a variant of the case's module that the reference evaluates:
//! it computes what the buggy compiler computes (for example `power(x, y &
//! 63)` for a compiler that uses only the low 6 bits of an integer
//! exponent). The judge accepts a mismatch as the known bug only when every
//! differing element is explained by the exact result, a legal alternative or
//! a known bug's model.

use super::known_bug_model::{apply_model_specs, ModelSpec};
use crate::hlo::{parse_module, ArrayShape, CompId, Instruction, Module, Opcode};

/// A bug a backend is known to have, with a model of its wrong results.
#[derive(Clone, Copy, Debug)]
pub struct KnownBug {
    /// A stable id, e.g. `xla-cpu/int-power-low-6-bits`.
    pub id: &'static str,
    /// One line saying what goes wrong.
    pub summary: &'static str,
    /// Where its minimal reproducer is documented (a docs/findings.md section).
    pub documented: &'static str,
    /// The module rewritten to compute what the buggy backend computes.
    pub model: BugModel,
}

/// How a known bug's model is given: a Rust function, or data
/// (`xla-props.toml`'s `known_bugs`, see [`ModelSpec`]).
#[derive(Clone, Copy, Debug)]
pub enum BugModel {
    /// The module rewritten to compute what the buggy backend computes; None
    /// when the module has nothing the bug affects.
    Rust(fn(&Module) -> Option<Module>),
    /// Model kinds with their parameters; the first that applies to an
    /// instruction models it.
    Data(&'static [ModelSpec]),
}

impl BugModel {
    /// The module rewritten to compute what the buggy backend computes; None
    /// when the module has nothing the bug affects.
    pub fn apply(&self, m: &Module) -> Option<Module> {
        match self {
            BugModel::Rust(f) => f(m),
            BugModel::Data(specs) => apply_model_specs(specs, m),
        }
    }
}

impl KnownBug {
    /// What a report says about the bug.
    pub fn note(&self) -> KnownBugNote {
        KnownBugNote {
            id: self.id.to_string(),
            summary: self.summary.to_string(),
            documented: self.documented.to_string(),
        }
    }
}

/// A known bug as a verdict reports it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KnownBugNote {
    /// The bug's stable id.
    pub id: String,
    /// What goes wrong.
    pub summary: String,
    /// Where it is documented.
    pub documented: String,
}

impl std::fmt::Display for KnownBugNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.id, self.summary, self.documented)
    }
}

/// The text of an array type without layout: `f32[3,5]`, `s8[]`.
pub fn type_text(a: &ArrayShape) -> String {
    let dims: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype, dims.join(","))
}

/// The module with every instruction `select` picks replaced by a call of a
/// model computation: `template` gets the instruction and returns the text of an HLO module whose
/// entry computation has one parameter per operand and the instruction's
/// result type, or None to leave the instruction alone. None when nothing
/// was replaced or a template does not parse.
///
/// ```
/// use xla_props::check::replace_with_model;
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n").unwrap();
/// let v = replace_with_model(&m, &|i| {
///     (i.opcode == Opcode::Negate).then(|| "HloModule t\nENTRY t {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] abs(x)\n}\n".to_string())
/// }).unwrap();
/// assert_eq!(v.computations.len(), 2);
/// ```
pub fn replace_with_model(
    module: &Module,
    template: &dyn Fn(&Instruction) -> Option<String>,
) -> Option<Module> {
    let mut m = module.clone();
    let mut any = false;
    for ci in 0..module.computations.len() {
        for k in 0..module.computations[ci].instructions.len() {
            let instr = &module.computations[ci].instructions[k];
            let Some(text) = template(instr) else {
                continue;
            };
            let t = parse_module(&text).ok()?;
            if t.computations.len() != 1 {
                return None;
            }
            let mut comp = t.computations.into_iter().next()?;
            comp.name = format!("{}.known_bug_model", instr.name);
            m.computations.push(comp);
            let id = CompId(m.computations.len() as u32 - 1);
            let call = &mut m.computations[ci].instructions[k];
            call.opcode = Opcode::Call;
            call.attrs = Default::default();
            call.attrs.to_apply = Some(id);
            any = true;
        }
    }
    any.then_some(m)
}
