//! The model of XLA CPU's grouped convolutions: a convolution with feature
//! groups (or batch groups, batch-major `b..f` inputs) computed as one dense
//! convolution whose kernel is zero outside each group, so an infinite or
//! NaN input of another group meets a zero weight (`0 * inf = NaN`). The
//! reference computes each group on its own inputs only.

use crate::hlo::{
    ArrayShape, Attrs, ConstantData, ElementType, InstrId, Instruction, Module, Opcode, Shape,
};

fn push(
    instrs: &mut Vec<Instruction>,
    name: String,
    op: Opcode,
    shape: Shape,
    ops: Vec<InstrId>,
    attrs: Attrs,
) -> InstrId {
    let mut i = Instruction::new(name, op, shape, ops);
    i.attrs = attrs;
    instrs.push(i);
    InstrId(instrs.len() as u32 - 1)
}

/// `kernel` repeated `groups` times along its input-feature dim and zeroed
/// outside the block diagonal: output feature `o` keeps input features of
/// group `o / (cout / groups)`.
fn dense_kernel(
    instrs: &mut Vec<Instruction>,
    name: &str,
    kernel: InstrId,
    kif: usize,
    kof: usize,
    groups: i64,
) -> Option<InstrId> {
    let k = instrs.get(kernel.index())?.shape.as_array()?.clone();
    let (cin_g, cout) = (k.dims[kif], k.dims[kof]);
    if cout % groups != 0 {
        return None;
    }
    let mut dims = k.dims.clone();
    dims[kif] = cin_g * groups;
    let wide = ArrayShape::new(k.dtype, dims.clone());
    let attrs = Attrs {
        dimensions: Some(vec![kif as i64]),
        ..Attrs::default()
    };
    let ops = vec![kernel; groups as usize];
    let cat = push(
        instrs,
        format!("{name}.dense.cat"),
        Opcode::Concatenate,
        Shape::Array(wide.clone()),
        ops,
        attrs,
    );
    let n: i64 = dims.iter().product();
    let mut mask = Vec::with_capacity(n as usize);
    for flat in 0..n {
        let (mut r, mut idx) = (flat, vec![0i64; dims.len()]);
        for d in (0..dims.len()).rev() {
            idx[d] = r % dims[d];
            r /= dims[d];
        }
        mask.push(idx[kif] / cin_g == idx[kof] / (cout / groups));
    }
    let pred = Shape::Array(ArrayShape::new(ElementType::Pred, dims.clone()));
    let attrs = Attrs {
        constant: Some(ConstantData::Pred(mask)),
        ..Attrs::default()
    };
    let m = push(
        instrs,
        format!("{name}.dense.mask"),
        Opcode::Constant,
        pred,
        vec![],
        attrs,
    );
    let zero_data = if k.dtype.is_float() {
        ConstantData::Float(vec![0.0])
    } else {
        ConstantData::Int(vec![0])
    };
    let attrs = Attrs {
        constant: Some(zero_data),
        ..Attrs::default()
    };
    let z = push(
        instrs,
        format!("{name}.dense.zero"),
        Opcode::Constant,
        Shape::Array(ArrayShape::new(k.dtype, vec![])),
        vec![],
        attrs,
    );
    let attrs = Attrs {
        dimensions: Some(vec![]),
        ..Attrs::default()
    };
    let zb = push(
        instrs,
        format!("{name}.dense.zeros"),
        Opcode::Broadcast,
        Shape::Array(wide.clone()),
        vec![z],
        attrs,
    );
    Some(push(
        instrs,
        format!("{name}.dense.kernel"),
        Opcode::Select,
        Shape::Array(wide),
        vec![m, cat, zb],
        Attrs::default(),
    ))
}

/// The input of a batch-grouped convolution with its `groups` batch groups
/// moved into the feature dimension (feature `g * cin + f`); only for
/// inputs whose batch is dim 0 and feature the last dim.
fn batch_into_features(
    instrs: &mut Vec<Instruction>,
    name: &str,
    input: InstrId,
    groups: i64,
) -> Option<InstrId> {
    let x = instrs.get(input.index())?.shape.as_array()?.clone();
    let r = x.dims.len();
    let (n, cin) = (x.dims[0], x.dims[r - 1]);
    if n % groups != 0 {
        return None;
    }
    let mut split = vec![groups, n / groups];
    split.extend_from_slice(&x.dims[1..]);
    let s = push(
        instrs,
        format!("{name}.dense.split"),
        Opcode::Reshape,
        Shape::Array(ArrayShape::new(x.dtype, split.clone())),
        vec![input],
        Attrs::default(),
    );
    // [g, n', spatial.., f] -> [n', spatial.., g, f]
    let mut perm: Vec<i64> = (1..r as i64).collect();
    perm.push(0);
    perm.push(r as i64);
    let tdims: Vec<i64> = perm.iter().map(|&p| split[p as usize]).collect();
    let attrs = Attrs {
        dimensions: Some(perm),
        ..Attrs::default()
    };
    let t = push(
        instrs,
        format!("{name}.dense.move"),
        Opcode::Transpose,
        Shape::Array(ArrayShape::new(x.dtype, tdims.clone())),
        vec![s],
        attrs,
    );
    let mut out = tdims[..r - 1].to_vec();
    out.push(groups * cin);
    Some(push(
        instrs,
        format!("{name}.dense.input"),
        Opcode::Reshape,
        Shape::Array(ArrayShape::new(x.dtype, out)),
        vec![t],
        Attrs::default(),
    ))
}

/// Every grouped convolution of `m` computed densely; None when there is none.
pub fn dense_grouped_convolutions(m: &Module) -> Option<Module> {
    let mut m = m.clone();
    let mut any = false;
    for comp in &mut m.computations {
        for k in 0..comp.instructions.len() {
            let c = comp.instructions[k].clone();
            let (Some(d), true) = (c.attrs.conv_dims.clone(), c.opcode == Opcode::Convolution)
            else {
                continue;
            };
            let fgc = c.attrs.feature_group_count.unwrap_or(1);
            let bgc = c.attrs.batch_group_count.unwrap_or(1);
            let (kif, kof) = (
                d.kernel_input_feature as usize,
                d.kernel_output_feature as usize,
            );
            let rank = d.input_spatial.len() + 2;
            let (input, groups) = if fgc > 1 {
                (c.operands[0], fgc)
            } else if bgc > 1 && d.input_batch == 0 && d.input_feature as usize == rank - 1 {
                let x = batch_into_features(&mut comp.instructions, &c.name, c.operands[0], bgc);
                let Some(x) = x else { continue };
                (x, bgc)
            } else {
                continue;
            };
            let Some(w) = dense_kernel(
                &mut comp.instructions,
                &c.name,
                c.operands[1],
                kif,
                kof,
                groups,
            ) else {
                continue;
            };
            let conv = &mut comp.instructions[k];
            conv.operands = vec![input, w];
            conv.attrs.feature_group_count = Some(1);
            conv.attrs.batch_group_count = Some(1);
            any = true;
        }
    }
    any.then_some(m)
}
