//! fusion, call, while, conditional.

use super::error::bad;
use super::{Calls, OpError};
use crate::hlo::{ElementType, Instruction};
use crate::literal::Value;

fn args(ops: &[&Value]) -> Vec<Value> {
    ops.iter().map(|v| (*v).clone()).collect()
}

/// fusion: evaluates the fused computation as a call (its values go to the hook).
pub(crate) fn fusion(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, OpError> {
    let comp = *ins
        .attrs
        .calls
        .first()
        .ok_or_else(|| bad("fusion without calls"))?;
    Ok(run.call_fusion(comp, args(ops), &ins.name)?)
}

/// call: evaluates `to_apply` on the operands.
pub(crate) fn call(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, OpError> {
    let comp = ins
        .attrs
        .to_apply
        .or_else(|| ins.attrs.calls.first().copied())
        .ok_or_else(|| bad("call without to_apply"))?;
    Ok(run.call(comp, args(ops))?)
}

/// The value of a scalar pred result.
fn truth(v: &Value) -> Result<bool, OpError> {
    match v {
        Value::Array(l) if l.element_count() == 1 && l.dtype() == ElementType::Pred => {
            Ok(l.get_bits(0) & 1 == 1)
        }
        _ => Err(bad(format!("expected a pred scalar, got {}", v.shape()))),
    }
}

/// while: runs `body` while `condition` holds; each iteration burns one unit
/// of the evaluation's fuel, so a loop that never ends fails with
/// `FuelExhausted` instead of hanging.
pub(crate) fn while_loop(
    run: &mut dyn Calls,
    ins: &Instruction,
    init: &Value,
) -> Result<Value, OpError> {
    let cond = ins
        .attrs
        .condition
        .ok_or_else(|| bad("while without condition"))?;
    let body = ins.attrs.body.ok_or_else(|| bad("while without body"))?;
    let mut state = init.clone();
    loop {
        if !truth(&run.call(cond, vec![state.clone()])?)? {
            return Ok(state);
        }
        run.burn_fuel(ins)?;
        state = run.call(body, vec![state])?;
    }
}

/// conditional: a pred selector picks branch 0 (true) or 1 (false); an
/// integer selector picks that branch, and out of range picks the last one.
pub(crate) fn conditional(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, OpError> {
    let branches = &ins.attrs.branch_computations;
    let sel = ops
        .first()
        .and_then(|v| v.as_array())
        .filter(|l| l.element_count() == 1)
        .ok_or_else(|| bad("conditional selector must be a scalar"))?;
    if branches.is_empty() {
        return Err(bad("conditional without branches"));
    }
    let k = if sel.dtype() == ElementType::Pred {
        if branches.len() != 2 {
            return Err(bad("a pred conditional needs two branches"));
        }
        branch_index(true, i128::from(sel.get_bits(0) & 1 == 1), branches.len())
    } else if sel.dtype().is_integer() {
        branch_index(false, sel.get_i128(0), branches.len())
    } else {
        return Err(bad("conditional selector must be pred or an integer"));
    };
    if ops.len() != branches.len() + 1 {
        return Err(bad(format!(
            "conditional has {} branches but {} branch operands",
            branches.len(),
            ops.len() - 1
        )));
    }
    Ok(run.call(branches[k], vec![ops[k + 1].clone()])?)
}

/// The branch a conditional's selector `k` runs, of `n`: a pred picks branch
/// 0 when true (1) and branch 1 when false; an index out of range runs the
/// last branch.
pub(crate) fn branch_index(pred: bool, k: i128, n: usize) -> usize {
    if pred {
        usize::from(k != 1)
    } else if k < 0 || k >= n as i128 {
        n.saturating_sub(1)
    } else {
        k as usize
    }
}
