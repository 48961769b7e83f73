//! Operand-form bugs: miscompilations that depend on how an operand is made
//! or on its value class rather than on the op's attributes (an operand
//! broadcast from a constant, start indices that are all constants,
//! unsigned indices with the high bit set, a square contraction operand).
//! The kinds real compilers get wrong when a pattern match or a fast path
//! fires on the shape of the graph: XLA CPU's `atan2(x, broadcast(c))`
//! (docs/findings.md) is one.

use super::ctx::{Ctx, Res};
use super::mutation::Mutation;
use crate::hlo::{Category, Computation, Instruction, Opcode};
use crate::literal::{Literal, Value};

/// The producer of operand `k` of `instr` in `comp`.
fn producer<'c>(comp: &'c Computation, instr: &Instruction, k: usize) -> Option<&'c Instruction> {
    instr
        .operands
        .get(k)
        .and_then(|o| comp.instructions.get(o.index()))
}

/// True when operand `k` is a broadcast of a constant.
fn is_broadcast_constant(comp: &Computation, instr: &Instruction, k: usize) -> bool {
    producer(comp, instr, k).is_some_and(|b| {
        b.opcode == Opcode::Broadcast
            && b.operands
                .first()
                .and_then(|o| comp.instructions.get(o.index()))
                .is_some_and(|c| c.opcode == Opcode::Constant)
    })
}

/// The first operand of a dynamic-slice or dynamic-update-slice that is a start index.
fn first_start_index(op: Opcode) -> Option<usize> {
    match op {
        Opcode::DynamicSlice => Some(1),
        Opcode::DynamicUpdateSlice => Some(2),
        _ => None,
    }
}

/// The dims of operand `k`.
fn operand_dims(comp: &Computation, instr: &Instruction, k: usize) -> Option<Vec<i64>> {
    producer(comp, instr, k).and_then(|p| p.shape.as_array().map(|a| a.dims.clone()))
}

/// True when an operand-form bug replaces how `instr` (in `comp`) is computed.
pub(crate) fn targets(mutation: Mutation, comp: &Computation, instr: &Instruction) -> bool {
    use Mutation as M;
    match mutation {
        M::BroadcastConstantMisreadsOther => {
            instr.opcode.category() == Category::ElementwiseBinary
                && instr.operands.len() == 2
                && (is_broadcast_constant(comp, instr, 0) != is_broadcast_constant(comp, instr, 1))
        }
        M::DynamicSliceConstantStartOffByOne => {
            instr.opcode == Opcode::DynamicSlice
                && instr.operands.len() > 1
                && (1..instr.operands.len())
                    .all(|k| producer(comp, instr, k).is_some_and(|p| p.opcode == Opcode::Constant))
        }
        M::UnsignedStartIndexAsSigned => first_start_index(instr.opcode).is_some_and(|first| {
            (first..instr.operands.len()).any(|k| {
                producer(comp, instr, k)
                    .and_then(|p| p.shape.as_array())
                    .is_some_and(|a| a.dtype.is_unsigned_int())
            })
        }),
        M::DotSquareRhsContractingAsZero => {
            instr.opcode == Opcode::Dot
                && instr.attrs.dot_dims.as_ref().is_some_and(|d| {
                    d.rhs_batch.is_empty()
                        && d.rhs_contracting == [1]
                        && operand_dims(comp, instr, 1)
                            .is_some_and(|r| r.len() == 2 && r[0] == r[1])
                })
        }
        M::DivideOfQuotientReassociated => {
            instr.opcode == Opcode::Divide
                && instr.shape.as_array().is_some_and(|a| a.dtype.is_float())
                && producer(comp, instr, 0).is_some_and(|p| {
                    p.opcode == Opcode::Divide && p.shape == instr.shape && p.operands.len() == 2
                })
        }
        _ => false,
    }
}

/// `l` with its elements in reverse (row-major) order.
fn reversed(l: &Literal) -> Literal {
    let mut out = l.clone();
    let n = l.element_count();
    for i in 0..n {
        out.set_bits(i, l.get_bits(n - 1 - i));
    }
    out
}

/// A square rank-2 `l`, transposed.
fn transposed(l: &Literal) -> Literal {
    let mut out = l.clone();
    let n = l.dims().first().copied().unwrap_or(0);
    for i in 0..n {
        for j in 0..n {
            out.set_bits(i * n + j, l.get_bits(j * n + i));
        }
    }
    out
}

/// The kernel of an operand-form bug.
pub(crate) fn apply(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    let mut ops: Vec<Literal> = c.operands.to_vec();
    match mutation {
        M::BroadcastConstantMisreadsOther => {
            // the operand beside the broadcast constant is read back to front
            let other = usize::from(is_broadcast_constant(c.comp, c.instr, 0));
            if let Some(o) = ops.get_mut(other) {
                *o = reversed(o);
            }
        }
        M::DynamicSliceConstantStartOffByOne => {
            for o in ops.iter_mut().skip(1) {
                let max = o.dtype().int_range().map_or(i128::MAX, |r| r.1);
                for i in 0..o.element_count() {
                    let v = o.get_i128(i);
                    o.set_i128(i, if v < max { v + 1 } else { v });
                }
            }
        }
        M::UnsignedStartIndexAsSigned => {
            // read as signed, a start at or above 2^(w-1) is negative: it clamps to 0
            let first = first_start_index(c.instr.opcode).unwrap_or(ops.len());
            for o in ops.iter_mut().skip(first) {
                let t = o.dtype();
                if !t.is_unsigned_int() {
                    continue;
                }
                let half = 1i128 << (t.bit_width() - 1);
                for i in 0..o.element_count() {
                    if o.get_i128(i) >= half {
                        o.set_i128(i, 0);
                    }
                }
            }
        }
        M::DotSquareRhsContractingAsZero => {
            // contracting dim 1 read as dim 0: the square rhs used transposed
            if let Some(r) = ops.get_mut(1) {
                *r = transposed(r);
            }
        }
        M::DivideOfQuotientReassociated => return divide_of_quotient(c),
        _ => return c.base(),
    }
    c.base_on(c.instr, ops)
}

/// `(a / b) / c` as `a / (b * c)`, each op rounded to the type.
fn divide_of_quotient(c: &Ctx<'_>) -> Res<Value> {
    let quotient = producer(c.comp, c.instr, 0);
    let value = |id: Option<&crate::hlo::InstrId>| match id.and_then(|i| c.values.get(i)) {
        Some(Value::Array(l)) => Some(l.clone()),
        _ => None,
    };
    let (Some(a), Some(b)) = (
        value(quotient.and_then(|q| q.operands.first())),
        value(quotient.and_then(|q| q.operands.get(1))),
    ) else {
        return c.base();
    };
    let divisor = c.op(1)?.clone();
    let mut multiply = c.instr.clone();
    multiply.opcode = Opcode::Multiply;
    let product = super::ctx::array(c.base_on(&multiply, vec![b, divisor])?)?;
    c.base_on(c.instr, vec![a, product])
}
