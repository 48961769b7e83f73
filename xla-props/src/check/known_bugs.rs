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
use crate::hlo::ElementType;
use crate::hlo::{Computation, InstrId, Instruction, Module, Opcode};
use crate::literal::Literal;

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

/// Per output of a module run on its inputs, the elements a known bug may
/// make any value (`None`: the module has nothing the bug affects).
pub type AnyValueMasks = fn(&Module, &[Literal]) -> Option<Vec<Vec<bool>>>;

/// Per output of `module` (see [`Module::outputs`]), the mask `mask` gives
/// for it and its element count (0 for a non-array output); `None` when no
/// mask has a set element. Serves [`AnyValueMasks`] functions and "any
/// value" legal evidence alike.
pub fn output_masks(
    module: &Module,
    mut mask: impl FnMut(&Instruction, usize) -> Vec<bool>,
) -> Option<Vec<Vec<bool>>> {
    let masks: Vec<Vec<bool>> = module
        .outputs()
        .into_iter()
        .map(|o| {
            let n = o.shape.as_array().map_or(0, |a| {
                a.element_count()
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(0)
            });
            mask(o, n)
        })
        .collect();
    masks.iter().flatten().any(|&b| b).then_some(masks)
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
    /// The backend rejects valid modules: it fails to compile (or to run:
    /// a crash of its runtime) every module `modules` matches, with an
    /// error containing `error`. There is no
    /// wrong value to model: such an error is an expected failure
    /// naming the bug (`Verdict::KnownRejection`), never a pass or a skip;
    /// another error, or any result such a module computes, is judged as
    /// usual.
    Rejects {
        /// The modules the backend rejects (as measured: narrow).
        modules: fn(&Module) -> bool,
        /// A fragment of its compile (or run) error.
        error: &'static str,
    },
    /// Wrong values that are not deterministic (e.g. an out-of-bounds
    /// read): given the module and its inputs, per output, the elements the
    /// bug may make any value; `None` when the module has nothing the bug
    /// affects. Every other element must still be right.
    AnyValue(AnyValueMasks),
}

impl BugModel {
    /// The module rewritten to compute what the buggy backend computes; None
    /// when the module has nothing the bug affects.
    pub fn apply(&self, m: &Module) -> Option<Module> {
        match self {
            BugModel::Rust(f) => f(m),
            BugModel::Data(specs) => apply_model_specs(specs, m),
            BugModel::Rejects { .. } | BugModel::AnyValue(_) => None,
        }
    }

    /// True when the bug's wrong values are any value at some elements
    /// (an [`BugModel::AnyValue`], or a data model with an any-value kind).
    pub fn is_any_value(&self) -> bool {
        match self {
            BugModel::AnyValue(_) => true,
            BugModel::Data(specs) => specs
                .iter()
                .any(|s| matches!(s, ModelSpec::AnyValueWhereOperandIsOne { .. })),
            _ => false,
        }
    }

    /// Per output of `m`, the elements where the bug may give any value;
    /// None when it has nothing there.
    pub fn any_value_masks(&self, m: &Module, inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
        match self {
            BugModel::AnyValue(f) => f(m, inputs),
            BugModel::Data(specs) => any_value_spec_masks(specs, m),
            _ => None,
        }
    }
}

impl KnownBug {
    /// True when this bug is the backend rejecting `module` with the compile
    /// error `error` ([`BugModel::Rejects`]).
    pub fn rejects(&self, module: &Module, error: &str) -> bool {
        match self.model {
            BugModel::Rejects { modules, error: e } => error.contains(e) && modules(module),
            _ => false,
        }
    }

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

/// True when `id` in `comp` is all ones: a splat float constant 1, or a broadcast of one.
fn is_all_ones(comp: &Computation, id: InstrId) -> bool {
    super::known_bug_model::is_all(comp, id, 1.0)
}

/// Per output of `m`: every element when the output is (or is a fusion
/// whose root is) `op` at one of `dtypes` with operand `operand` all ones;
/// None when no output is.
pub fn operand_is_one_outputs(
    m: &Module,
    op: Opcode,
    dtypes: &[ElementType],
    operand: usize,
) -> Option<Vec<Vec<bool>>> {
    let hit = |comp: &Computation, i: &Instruction| {
        i.opcode == op
            && i.shape
                .as_array()
                .is_some_and(|a| dtypes.contains(&a.dtype))
            && i.operands
                .get(operand)
                .is_some_and(|&x| is_all_ones(comp, x))
    };
    let entry = m.entry_computation();
    output_masks(m, |o, n| {
        let affected = hit(entry, o)
            || (o.opcode == Opcode::Fusion
                && o.attrs
                    .calls
                    .first()
                    .and_then(|c| m.computations.get(c.index()))
                    .is_some_and(|c| hit(c, c.instr(c.root))));
        vec![affected; n]
    })
}

/// Per output, the elements the any-value specs among `specs` accept any
/// value at; None when none applies.
pub fn any_value_spec_masks(specs: &[ModelSpec], m: &Module) -> Option<Vec<Vec<bool>>> {
    let mut out: Option<Vec<Vec<bool>>> = None;
    for s in specs {
        let ModelSpec::AnyValueWhereOperandIsOne {
            op,
            dtypes,
            operand,
        } = s
        else {
            continue;
        };
        let Some(masks) = operand_is_one_outputs(m, *op, dtypes, *operand) else {
            continue;
        };
        match &mut out {
            None => out = Some(masks),
            Some(acc) => {
                for (a, b) in acc.iter_mut().zip(masks) {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x |= y;
                    }
                }
            }
        }
    }
    out
}
