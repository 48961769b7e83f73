//! Scale-aware magnitudes: parameters chosen from the graph so that the
//! activations of deep programs stay O(1) instead of growing (or collapsing
//! through saturating activations) layer after layer.
//!
//! A weight, the right operand of a dot or the kernel of a convolution, is
//! drawn in `[-sqrt(3 / fan_in), sqrt(3 / fan_in)]`: its variance is then
//! `1 / fan_in`, and each output of the contraction has the variance of one
//! input element (the Glorot/He argument, with a uniform distribution).

use super::graph::{Graph, NodeId};
use crate::hlo::{Module, Opcode};

/// Ops that pass a parameter's values through unchanged in magnitude.
const PASS_THROUGH: &[Opcode] = &[
    Opcode::Broadcast,
    Opcode::Reshape,
    Opcode::Copy,
    Opcode::Transpose,
    Opcode::Bitcast,
    Opcode::Convert,
    Opcode::Slice,
    Opcode::Reverse,
];

/// The entry parameter a node's values come from, through pass-through ops.
fn source_param(g: &Graph, mut n: NodeId) -> Option<usize> {
    for _ in 0..64 {
        let node = g.nodes.get(n)?;
        if let Some(p) = node.param {
            return node.dtype.is_some_and(|t| t.is_float()).then_some(p);
        }
        if !PASS_THROUGH.contains(&node.opcode) {
            return None;
        }
        n = *node.operands.first()?;
    }
    None
}

/// Products each output element of a contraction sums.
fn fan_in(module: &Module, g: &Graph, n: NodeId) -> Option<f64> {
    let node = &g.nodes[n];
    let instr = module.comp(node.comp).instr(node.instr);
    let rhs = &g.nodes[*node.operands.get(1)?];
    let fan: i64 = match node.opcode {
        Opcode::Dot => {
            let d = instr.attrs.dot_dims.as_ref()?;
            d.rhs_contracting
                .iter()
                .map(|&c| {
                    usize::try_from(c)
                        .ok()
                        .and_then(|c| rhs.dims.get(c))
                        .copied()
                })
                .product::<Option<i64>>()?
        }
        Opcode::Convolution => {
            let d = instr.attrs.conv_dims.as_ref()?;
            let out = usize::try_from(d.kernel_output_feature).ok()?;
            let total: i64 = rhs.dims.iter().product();
            total / rhs.dims.get(out).copied().filter(|&o| o > 0)?
        }
        _ => return None,
    };
    (fan > 1).then_some(fan as f64)
}

/// Per entry parameter, the magnitude bound of a weight (None: not a weight).
/// A parameter that is the weight of several contractions takes the
/// smallest bound.
pub(crate) fn weight_bounds(module: &Module, g: &Graph) -> Vec<Option<f64>> {
    let mut bounds: Vec<Option<f64>> = vec![None; g.params.len()];
    for (id, n) in g.nodes.iter().enumerate() {
        if !matches!(n.opcode, Opcode::Dot | Opcode::Convolution) || n.operands.len() != 2 {
            continue;
        }
        let (Some(p), Some(fan)) = (source_param(g, n.operands[1]), fan_in(module, g, id)) else {
            continue;
        };
        // the left operand being the same parameter is a Gram matrix, not a weight
        if source_param(g, n.operands[0]) == Some(p) {
            continue;
        }
        let b = (3.0 / fan).sqrt();
        if let Some(slot) = bounds.get_mut(p) {
            *slot = Some(slot.map_or(b, |o: f64| o.min(b)));
        }
    }
    bounds
}
