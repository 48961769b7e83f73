//! Configuration bugs: miscompilations of one attribute class of an op (a
//! strided slice with an offset, a pad with interior and negative edges, a
//! total-order compare, ...), the kind an emitter gets wrong while handling
//! the common configuration right. Module rewrites where the bug keeps the
//! shapes, kernels otherwise.

use super::ctx::{Ctx, Res};
use super::mutation::Mutation;
use crate::hlo::{ComparisonType, ElementType, Instruction, Module, Opcode};
use crate::literal::{Literal, Value};

/// The operand type's own exponent width.
fn exponent_bits(t: ElementType) -> Option<i64> {
    t.float_format().map(|f| i64::from(f.exponent_bits))
}

/// Rewrites one instruction for a configuration bug (`all`: the computation's
/// instructions before the rewrite, for operand types).
pub(crate) fn rewrite_instruction(
    mutation: Mutation,
    instr: &mut Instruction,
    all: &[Instruction],
) {
    use Mutation as M;
    match (mutation, instr.opcode) {
        (M::ReverseFirstDimOnly, Opcode::Reverse) => {
            if let Some(d) = &mut instr.attrs.dimensions {
                d.truncate(1);
            }
        }
        (M::SliceStrideDropsStart, Opcode::Slice) => {
            for s in instr.attrs.slice.iter_mut().flatten() {
                if s.stride > 1 {
                    s.limit -= s.start;
                    s.start = 0;
                }
            }
        }
        (M::PadInteriorNegativeEdge, Opcode::Pad) => {
            for p in instr.attrs.padding.iter_mut().flatten() {
                if p.interior > 0 && p.low < 0 {
                    p.high += p.low;
                    p.low = 0;
                }
            }
        }
        (M::ReduceWindowPaddingSwapped, Opcode::ReduceWindow) => {
            for w in instr.attrs.window.iter_mut().flatten() {
                std::mem::swap(&mut w.pad_low, &mut w.pad_high);
            }
        }
        (M::CompareTotalOrderAsFloat, Opcode::Compare)
            if instr.attrs.comparison_type == Some(ComparisonType::TotalOrder) =>
        {
            instr.attrs.comparison_type = Some(ComparisonType::Float);
        }
        (M::ReducePrecisionKeepsExponent, Opcode::ReducePrecision) => {
            let own = instr
                .operands
                .first()
                .and_then(|o| all.get(o.index()))
                .and_then(|o| o.shape.as_array())
                .and_then(|a| exponent_bits(a.dtype));
            if let (Some(own), Some(e)) = (own, instr.attrs.exponent_bits) {
                instr.attrs.exponent_bits = Some(e.max(own));
            }
        }
        (M::ConvIgnoresWindowReversal, Opcode::Convolution) => {
            for w in instr.attrs.window.iter_mut().flatten() {
                w.reversal = false;
            }
        }
        _ => {}
    }
}

/// Module-wide rewrites: a scatter's minimum combiner run as maximum.
pub(crate) fn rewrite_module(mutation: Mutation, m: &mut Module) {
    if mutation != Mutation::ScatterMinimumAsMaximum {
        return;
    }
    let combiners: Vec<usize> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| i.opcode == Opcode::Scatter)
        .filter_map(|i| i.attrs.to_apply.map(|c| c.index()))
        .collect();
    for c in combiners {
        if let Some(comp) = m.computations.get_mut(c) {
            let root = comp.root.index();
            if comp.instructions[root].opcode == Opcode::Minimum {
                comp.instructions[root].opcode = Opcode::Maximum;
            }
        }
    }
}

/// True when a configuration kernel replaces how `instr` is computed.
pub(crate) fn targets(mutation: Mutation, instr: &Instruction, operand_dims: &[Vec<i64>]) -> bool {
    use Mutation as M;
    match (mutation, instr.opcode) {
        (M::SortCarriesValuesUnsorted, Opcode::Sort) => instr.operands.len() >= 2,
        (M::SortUnstableWhenAllowed, Opcode::Sort) => !instr.attrs.is_stable,
        (M::DotMajorContractingAsMinor, Opcode::Dot) => {
            instr.attrs.dot_dims.as_ref().is_some_and(|d| {
                operand_dims.first().is_some_and(|l| l.len() == 2)
                    && d.lhs_batch.is_empty()
                    && d.lhs_contracting == [0]
            })
        }
        _ => false,
    }
}

/// The kernel of a configuration bug.
pub(crate) fn apply(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    match mutation {
        Mutation::SortCarriesValuesUnsorted => {
            let v = c.base()?;
            let Value::Tuple(mut outs) = v else {
                return Ok(v);
            };
            // only the keys are permuted; the carried operands come out as they went in
            for (k, o) in outs.iter_mut().enumerate().skip(1) {
                *o = Value::Array(c.op(k)?.clone());
            }
            Ok(Value::Tuple(outs))
        }
        Mutation::DotMajorContractingAsMinor => {
            // the [k, m] lhs read as if it were stored [m, k] row-major
            let (lhs, rhs) = (c.op(0)?, c.op(1)?);
            let d = lhs.dims().to_vec();
            let (k, m) = (d[0], d[1]);
            let mut scrambled: Literal = lhs.clone();
            for i in 0..k {
                for j in 0..m {
                    let flat = j * k + i;
                    let (si, sj) = (flat / m, flat % m);
                    scrambled.set_bits(i * m + j, lhs.get_bits(si * m + sj));
                }
            }
            c.base_on(c.instr, vec![scrambled, rhs.clone()])
        }
        _ => c.base(),
    }
}
