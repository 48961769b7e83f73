//! The pieces every walk of a module shares (the evaluator, and the
//! enclosure and first-order bounds): an entry parameter's argument, an
//! instruction's operand values, a call's computation, and the modules
//! a real-valued walk refuses.

use super::EvalError;
use crate::hlo::{ArrayShape, CompId, Instruction, Module, Opcode, Shape};
use crate::literal::{Literal, Value};

/// The argument of parameter instruction `ins`, taken from `args` (each is
/// moved into its single parameter), or why there is none.
pub(super) fn take_argument<V>(ins: &Instruction, args: &mut [Option<V>]) -> Result<V, String> {
    let n = ins.attrs.parameter_number.unwrap_or(-1);
    usize::try_from(n)
        .ok()
        .and_then(|k| args.get_mut(k))
        .and_then(Option::take)
        .ok_or_else(|| format!("parameter {n} has no argument"))
}

/// The values of `ins`'s operands among `values` (by instruction id), or
/// why one has none.
pub(super) fn operand_values<'v, V>(
    ins: &Instruction,
    values: &'v [Option<V>],
) -> Result<Vec<&'v V>, String> {
    ins.operands
        .iter()
        .map(|o| values.get(o.index()).and_then(Option::as_ref))
        .collect::<Option<_>>()
        .ok_or_else(|| "an operand has no value".to_string())
}

/// The computation a fusion (its `calls`) or a call (its `to_apply`, else
/// its `calls`) runs.
pub(super) fn callee(ins: &Instruction) -> Option<CompId> {
    if ins.opcode == Opcode::Fusion {
        ins.attrs.calls.first().copied()
    } else {
        ins.attrs
            .to_apply
            .or_else(|| ins.attrs.calls.first().copied())
    }
}

/// `Unsupported` (`no {what} of complex values`) when any instruction of
/// `module` has a complex value: a walk that bounds each element by real
/// numbers has nothing to say about them.
pub(super) fn refuse_complex(module: &Module, what: &str) -> Result<(), EvalError> {
    let complex = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| i.shape.leaves().iter().any(|a| a.dtype.is_complex()));
    if complex {
        return Err(EvalError::Unsupported {
            opcode: Opcode::Complex,
            reason: format!("no {what} of complex values"),
        });
    }
    Ok(())
}

/// A value a walk builds leaf by leaf: arrays from literals, and the
/// tuples and tokens around them.
pub(crate) trait Leaves: Sized {
    /// A tuple of `items`.
    fn tuple(items: Vec<Self>) -> Self;
    /// A token.
    fn token() -> Self;
}

impl Leaves for Value {
    fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(items)
    }
    fn token() -> Value {
        Value::Token
    }
}

/// A value of `shape` from the next literals of `next`, one per array leaf
/// in order: `leaf` makes each array leaf's from its shape and literal,
/// `missing` the error when the literals have run out.
pub(crate) fn from_leaves<'l, V: Leaves, E>(
    shape: &Shape,
    next: &mut impl Iterator<Item = &'l Literal>,
    missing: &impl Fn() -> E,
    leaf: &mut impl FnMut(&ArrayShape, &'l Literal) -> Result<V, E>,
) -> Result<V, E> {
    match shape {
        Shape::Array(a) => leaf(a, next.next().ok_or_else(missing)?),
        Shape::Tuple(items) => items
            .iter()
            .map(|s| from_leaves(s, next, missing, leaf))
            .collect::<Result<Vec<_>, _>>()
            .map(V::tuple),
        Shape::Token => Ok(V::token()),
    }
}

/// The values of `module`'s entry parameters, each built by `param` from
/// the next of `args`; an error when the arguments do not fit.
pub(super) fn entry_values<'l, V>(
    module: &Module,
    args: &'l [Literal],
    param: impl Fn(&Shape, &mut std::slice::Iter<'l, Literal>) -> Option<V>,
) -> Result<Vec<V>, EvalError> {
    let entry = module.entry_computation();
    let mut next = args.iter();
    let mut values = Vec::new();
    for p in entry.parameters() {
        values.push(param(&entry.instr(p).shape, &mut next).ok_or_else(|| {
            EvalError::BadArguments(format!(
                "{} arguments do not fit the entry parameters",
                args.len()
            ))
        })?);
    }
    Ok(values)
}
