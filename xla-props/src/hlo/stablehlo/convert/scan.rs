//! `chlo.scan`: the body applied along the scan dimension, one step after
//! another, unrolled (the dimension's size is static).
//!
//! The body takes one slice of every input (the scan dimension removed) and
//! the carries, and returns the output slices then the new carries. Step `t`
//! reads slice `t` (slice `n-1-t` with `is_reverse`) and writes output slice
//! at the same position; the results are the stacked outputs, then the last
//! carries.

use super::attrs::{attr_ints, bool_attr, int_attr};
use super::converter::{Converter, OpSite};
use crate::hlo::ir::{Attrs, InstrId};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{err, shape_of, Builder, R};
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

/// The most steps a scan is unrolled to.
const MAX_SCAN_STEPS: i64 = 1 << 16;

/// How many of the op's operands are inputs (the rest are inits).
fn input_count(op: &Op) -> R<usize> {
    let n = match op.attr("num_inputs") {
        Some(Attr::Int(n)) => usize::try_from(*n).ok(),
        _ => op
            .attr("operandSegmentSizes")
            .or_else(|| op.attr("operand_segment_sizes"))
            .and_then(attr_ints)
            .and_then(|v| v.first().and_then(|&n| usize::try_from(n).ok())),
    };
    n.filter(|&n| n <= op.operands.len()).ok_or((
        op.pos,
        "chlo.scan: cannot tell its inputs from its inits".into(),
    ))
}

impl Converter<'_> {
    pub(super) fn scan(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers) = (site.op, site.outers);
        let pos = op.pos;
        let n_in = input_count(op)?;
        let ops = self.operands(op, b, outers)?;
        let (inputs, inits) = ops.split_at(n_in);
        let n_out = op
            .result_types
            .len()
            .checked_sub(inits.len())
            .ok_or((pos, "chlo.scan: fewer results than carries".to_string()))?;
        let d = int_attr(op, "dimension")?;
        let reverse = bool_attr(op, "is_reverse")?;
        let Some(&first) = inputs.first() else {
            return err(pos, "chlo.scan needs an input");
        };
        let (in_dims, _) = b.array(first, pos)?;
        let du = usize::try_from(d)
            .ok()
            .filter(|&k| k < in_dims.len())
            .ok_or((pos, format!("chlo.scan: dimension {d} out of range")))?;
        let n = in_dims[du];
        if n == 0 || n > MAX_SCAN_STEPS {
            return err(
                pos,
                format!("chlo.scan over {n} steps: only 1 to {MAX_SCAN_STEPS} are unrolled"),
            );
        }
        let body = self.region_comp(op, 0, outers, b, "scan_body")?;
        let mut carries: Vec<InstrId> = inits.to_vec();
        let mut outs: Vec<Vec<InstrId>> = vec![Vec::new(); n_out];
        for step in 0..n {
            let t = if reverse { n - 1 - step } else { step };
            let mut args = Vec::new();
            for &x in inputs {
                args.push(take_slice(b, x, du, t, pos)?);
            }
            args.extend(carries.iter().copied());
            let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
            let mut slice_shapes = Vec::new();
            for s in &shapes[..n_out] {
                let Shape::Array(a) = s else {
                    return err(pos, "chlo.scan outputs are tensors");
                };
                let mut dims = a.dims.clone();
                if du >= dims.len() {
                    return err(pos, "chlo.scan: an output lacks the scan dimension");
                }
                dims.remove(du);
                slice_shapes.push(Shape::array(a.dtype, dims));
            }
            slice_shapes.extend(shapes[n_out..].iter().cloned());
            let a = Attrs {
                to_apply: Some(body),
                ..Attrs::default()
            };
            let results = if slice_shapes.len() == 1 {
                vec![b.push(Opcode::Call, slice_shapes[0].clone(), args, a)]
            } else {
                let call = b.push(Opcode::Call, Shape::Tuple(slice_shapes.clone()), args, a);
                (0..slice_shapes.len()).map(|k| b.gte(call, k)).collect()
            };
            for (k, &r) in results[..n_out].iter().enumerate() {
                let Shape::Array(a) = b.shape(r).clone() else {
                    return err(pos, "chlo.scan outputs are tensors");
                };
                let mut dims = a.dims.clone();
                dims.insert(du, 1);
                let one = b.push(
                    Opcode::Reshape,
                    Shape::array(a.dtype, dims),
                    vec![r],
                    Attrs::default(),
                );
                outs[k].push(one);
            }
            carries = results[n_out..].to_vec();
        }
        let mut results = Vec::new();
        for (k, mut parts) in outs.into_iter().enumerate() {
            if reverse {
                parts.reverse();
            }
            let t = &op.result_types[k];
            if !matches!(t, Type::Tensor(..)) {
                return err(pos, "chlo.scan outputs are tensors");
            }
            let a = Attrs {
                dimensions: Some(vec![d]),
                ..Attrs::default()
            };
            results.push(b.push(Opcode::Concatenate, shape_of(t), parts, a));
        }
        results.extend(carries);
        Ok(results)
    }
}

/// Slice `t` of `x` along dimension `d`, with that dimension removed.
fn take_slice(b: &mut Builder, x: InstrId, d: usize, t: i64, pos: usize) -> R<InstrId> {
    let (dims, _) = b.array(x, pos)?;
    if d >= dims.len() || t >= dims[d] {
        return err(pos, "chlo.scan: inputs differ in the scan dimension");
    }
    b.take_index(x, d, t, pos)
}
