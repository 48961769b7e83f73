//! The model of XLA CPU's grouped convolutions. Feature groups: one dense
//! convolution whose kernel is zero outside each group, so an infinite or
//! NaN input of another group meets a zero weight (`0 * inf = NaN`). Batch
//! groups: the same over the batch groups moved into the features, and the
//! other groups' zeroed inputs meet the whole kernel, so an infinite or NaN
//! weight also makes its output feature NaN everywhere.
//! The reference computes each group on its own inputs only.

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

/// A batch-grouped convolution's result with NaN at every output feature
/// whose kernel slice holds an infinite or NaN weight: XLA CPU zeroes the
/// other batch groups' inputs and multiplies them by the whole kernel
/// (`0 * inf = NaN`). `or_comp` is a pred `or` reducer. The convolution
/// itself moves to a new slot; slot `k` becomes the select.
fn nan_where_kernel_not_finite(
    instrs: &mut Vec<Instruction>,
    k: usize,
    or_comp: crate::hlo::CompId,
) -> Option<()> {
    let c = instrs[k].clone();
    let d = c.attrs.conv_dims.clone()?;
    let out = c.shape.as_array()?.clone();
    let kernel = instrs.get(c.operands[1].index())?.shape.as_array()?.clone();
    let kd = kernel.dims.clone();
    let kof = d.kernel_output_feature as usize;
    let name = c.name.clone();
    let arr = |t: ElementType, dims: Vec<i64>| Shape::Array(ArrayShape::new(t, dims));
    let conv = push(
        instrs,
        format!("{name}.grouped"),
        Opcode::Convolution,
        c.shape.clone(),
        c.operands.clone(),
        c.attrs.clone(),
    );
    let w = c.operands[1];
    let diff = push(
        instrs,
        format!("{name}.w.diff"),
        Opcode::Subtract,
        arr(kernel.dtype, kd.clone()),
        vec![w, w],
        Attrs::default(),
    );
    let ne = Attrs {
        direction: Some(crate::hlo::ComparisonDirection::Ne),
        ..Attrs::default()
    };
    let bad = push(
        instrs,
        format!("{name}.w.bad"),
        Opcode::Compare,
        arr(ElementType::Pred, kd.clone()),
        vec![diff, diff],
        ne,
    );
    let f = Attrs {
        constant: Some(ConstantData::Pred(vec![false])),
        ..Attrs::default()
    };
    let no = push(
        instrs,
        format!("{name}.w.false"),
        Opcode::Constant,
        arr(ElementType::Pred, vec![]),
        vec![],
        f,
    );
    let others: Vec<i64> = (0..kd.len() as i64).filter(|&i| i != kof as i64).collect();
    let red = Attrs {
        dimensions: Some(others),
        to_apply: Some(or_comp),
        ..Attrs::default()
    };
    let per_o = push(
        instrs,
        format!("{name}.w.any"),
        Opcode::Reduce,
        arr(ElementType::Pred, vec![kd[kof]]),
        vec![bad, no],
        red,
    );
    let b = Attrs {
        dimensions: Some(vec![d.output_feature]),
        ..Attrs::default()
    };
    let mask = push(
        instrs,
        format!("{name}.w.mask"),
        Opcode::Broadcast,
        arr(ElementType::Pred, out.dims.clone()),
        vec![per_o],
        b,
    );
    let nan = Attrs {
        constant: Some(ConstantData::Float(vec![f64::NAN])),
        ..Attrs::default()
    };
    let n = push(
        instrs,
        format!("{name}.nan"),
        Opcode::Constant,
        arr(out.dtype, vec![]),
        vec![],
        nan,
    );
    let nb = Attrs {
        dimensions: Some(vec![]),
        ..Attrs::default()
    };
    let nans = push(
        instrs,
        format!("{name}.nans"),
        Opcode::Broadcast,
        arr(out.dtype, out.dims.clone()),
        vec![n],
        nb,
    );
    let mut sel = Instruction::new(
        name,
        Opcode::Select,
        c.shape.clone(),
        vec![mask, nans, conv],
    );
    sel.attrs = Attrs::default();
    instrs[k] = sel;
    Some(())
}

/// `(a, b) -> or(a, b)` on pred scalars.
fn or_computation() -> crate::hlo::Computation {
    let s = Shape::Array(ArrayShape::new(ElementType::Pred, vec![]));
    let mut a = Instruction::new("dense.or.a", Opcode::Parameter, s.clone(), vec![]);
    a.attrs.parameter_number = Some(0);
    let mut b = Instruction::new("dense.or.b", Opcode::Parameter, s.clone(), vec![]);
    b.attrs.parameter_number = Some(1);
    let r = Instruction::new("dense.or.r", Opcode::Or, s, vec![InstrId(0), InstrId(1)]);
    crate::hlo::Computation {
        name: "dense.or".to_string(),
        instructions: vec![a, b, r],
        root: InstrId(2),
        other: vec![],
    }
}

/// Every grouped convolution of `m` computed as XLA CPU does; None when there is none.
pub fn dense_grouped_convolutions(m: &Module) -> Option<Module> {
    let mut m = m.clone();
    let or_comp = crate::hlo::CompId(m.computations.len() as u32);
    let mut any = false;
    let mut needs_or = false;
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
            if fgc > 1 {
                let w = dense_kernel(
                    &mut comp.instructions,
                    &c.name,
                    c.operands[1],
                    kif,
                    kof,
                    fgc,
                );
                let Some(w) = w else { continue };
                let conv = &mut comp.instructions[k];
                conv.operands[1] = w;
                conv.attrs.feature_group_count = Some(1);
                any = true;
            } else if bgc > 1
                && d.input_batch == 0
                && d.input_feature as usize == d.input_spatial.len() + 1
                && c.shape.as_array().is_some_and(|a| a.dtype.is_float())
            {
                // dense over the batch groups moved into the features (other
                // groups' inputs meet zero weights), and NaN where a weight of
                // the output feature is not finite (it meets zeroed inputs)
                let instrs = &mut comp.instructions;
                let Some(x) = batch_into_features(instrs, &c.name, c.operands[0], bgc) else {
                    continue;
                };
                let Some(w) = dense_kernel(instrs, &c.name, c.operands[1], kif, kof, bgc) else {
                    continue;
                };
                instrs[k].operands = vec![x, w];
                instrs[k].attrs.batch_group_count = Some(1);
                if nan_where_kernel_not_finite(instrs, k, or_comp).is_some() {
                    any = true;
                    needs_or = true;
                }
            }
        }
    }
    if needs_or {
        m.computations.push(or_computation());
    }
    any.then_some(m)
}
