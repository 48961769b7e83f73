//! The pieces every walk of a module shares (the evaluator, and the
//! enclosure and first-order bounds): an entry parameter's argument, an
//! instruction's operand values, a call's computation, and the modules
//! a real-valued walk refuses.

use super::EvalError;
use crate::hlo::{CompId, Instruction, Module, Opcode, Shape};
use crate::literal::Literal;

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
