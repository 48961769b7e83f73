//! Models of XLA CPU's grouped convolutions (measured on xla-cpu 0.115,
//! docs/findings.md; XLA's own HLO after optimization shows how each is
//! computed). Depthwise convolutions (feature groups of one input feature) in
//! f64 become one dense convolution whose kernel is zero outside each group,
//! so an infinite or NaN input of one group meets the other groups' zero
//! weights (`0 * inf = NaN`). Batch-grouped convolutions with more than one
//! output feature per group, in the other float types, become a convolution
//! over the groups as a base-dilated spatial dimension, so the dilation holes
//! (zeros) meet the other groups' weights and an infinite or NaN weight makes
//! its counterpart feature of every other group NaN everywhere. The
//! reference computes each group on its own inputs and weights only.

use crate::hlo::{
    ArrayShape, Attrs, ConstantData, ConvDims, ElementType, InstrId, Instruction, Module, Opcode,
    Shape,
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

/// A constant of `shape` holding `data`.
fn constant(
    instrs: &mut Vec<Instruction>,
    name: String,
    shape: Shape,
    data: ConstantData,
) -> InstrId {
    let attrs = Attrs {
        constant: Some(data),
        ..Attrs::default()
    };
    push(instrs, name, Opcode::Constant, shape, vec![], attrs)
}

/// `x` broadcast to `shape`, its dimensions becoming `dims` of the result.
fn broadcast(
    instrs: &mut Vec<Instruction>,
    name: String,
    shape: Shape,
    x: InstrId,
    dims: Vec<i64>,
) -> InstrId {
    let attrs = Attrs {
        dimensions: Some(dims),
        ..Attrs::default()
    };
    push(instrs, name, Opcode::Broadcast, shape, vec![x], attrs)
}

/// The pred `x` or-reduced (`or_comp`) over `dims` from `init`.
fn any_over(
    instrs: &mut Vec<Instruction>,
    name: String,
    shape: Shape,
    (x, init): (InstrId, InstrId),
    dims: Vec<i64>,
    or_comp: crate::hlo::CompId,
) -> InstrId {
    let attrs = Attrs {
        dimensions: Some(dims),
        to_apply: Some(or_comp),
        ..Attrs::default()
    };
    push(instrs, name, Opcode::Reduce, shape, vec![x, init], attrs)
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
    let m = constant(
        instrs,
        format!("{name}.dense.mask"),
        pred,
        ConstantData::Pred(mask),
    );
    let zero_data = if k.dtype.is_float() {
        ConstantData::Float(vec![0.0])
    } else {
        ConstantData::Int(vec![0])
    };
    let z = constant(
        instrs,
        format!("{name}.dense.zero"),
        Shape::Array(ArrayShape::new(k.dtype, vec![])),
        zero_data,
    );
    let zb = broadcast(
        instrs,
        format!("{name}.dense.zeros"),
        Shape::Array(wide.clone()),
        z,
        vec![],
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

/// Per output feature of a batch-grouped convolution, whether XLA CPU gives
/// NaN there: output feature `j * p + o'` (batch group `j`, `p` output
/// features per group) when a weight of output feature `g * p + o'` of any
/// other group `g != j` is infinite or NaN. XLA CPU rewrites the convolution
/// into one with the batch groups as an extra spatial dimension, base-dilated
/// by the group count, whose window meets group `j`'s inputs with group `j`'s
/// weights and the dilation holes (zeros) with the other groups' weights
/// (`0 * inf = NaN`). Returns the pred[cout] instruction; `or_comp` is a pred
/// `or` reducer.
fn other_groups_weight_not_finite(
    instrs: &mut Vec<Instruction>,
    name: &str,
    kernel: InstrId,
    kof: usize,
    groups: i64,
    or_comp: crate::hlo::CompId,
) -> Option<InstrId> {
    let k = instrs.get(kernel.index())?.shape.as_array()?.clone();
    let kd = k.dims.clone();
    let cout = kd[kof];
    if groups < 2 || cout % groups != 0 {
        return None;
    }
    let p = cout / groups;
    let arr = |t: ElementType, dims: Vec<i64>| Shape::Array(ArrayShape::new(t, dims));
    let pred = ElementType::Pred;
    let (per_o, no) = non_finite_per_feature(instrs, name, kernel, &k, kof, or_comp);
    // [g, o'] -> [j, g, o'], kept where g != j, any over g
    let split = push(
        instrs,
        format!("{name}.w.split"),
        Opcode::Reshape,
        arr(pred, vec![groups, p]),
        vec![per_o],
        Attrs::default(),
    );
    let wide = broadcast(
        instrs,
        format!("{name}.w.per_group"),
        arr(pred, vec![groups, groups, p]),
        split,
        vec![1, 2],
    );
    let mut off = Vec::with_capacity((groups * groups * p) as usize);
    for j in 0..groups {
        for g in 0..groups {
            off.resize(off.len() + p as usize, j != g);
        }
    }
    let off = constant(
        instrs,
        format!("{name}.w.other_group"),
        arr(pred, vec![groups, groups, p]),
        ConstantData::Pred(off),
    );
    let both = push(
        instrs,
        format!("{name}.w.other_bad"),
        Opcode::And,
        arr(pred, vec![groups, groups, p]),
        vec![wide, off],
        Attrs::default(),
    );
    let any = any_over(
        instrs,
        format!("{name}.w.any_other"),
        arr(pred, vec![groups, p]),
        (both, no),
        vec![1],
        or_comp,
    );
    Some(push(
        instrs,
        format!("{name}.w.leaks"),
        Opcode::Reshape,
        arr(pred, vec![cout]),
        vec![any],
        Attrs::default(),
    ))
}

/// Per output feature of kernel `k` (feature dimension `kof`), whether any
/// of its weights is infinite or NaN (pred[cout]); and the `false` constant
/// the reductions start from.
fn non_finite_per_feature(
    instrs: &mut Vec<Instruction>,
    name: &str,
    kernel: InstrId,
    k: &ArrayShape,
    kof: usize,
    or_comp: crate::hlo::CompId,
) -> (InstrId, InstrId) {
    let kd = k.dims.clone();
    let cout = kd[kof];
    let arr = |t: ElementType, dims: Vec<i64>| Shape::Array(ArrayShape::new(t, dims));
    let pred = ElementType::Pred;
    let diff = push(
        instrs,
        format!("{name}.w.diff"),
        Opcode::Subtract,
        arr(k.dtype, kd.clone()),
        vec![kernel, kernel],
        Attrs::default(),
    );
    let ne = Attrs {
        direction: Some(crate::hlo::ComparisonDirection::Ne),
        ..Attrs::default()
    };
    // w - w is NaN exactly where w is infinite or NaN
    let bad = push(
        instrs,
        format!("{name}.w.bad"),
        Opcode::Compare,
        arr(pred, kd.clone()),
        vec![diff, diff],
        ne,
    );
    let no = constant(
        instrs,
        format!("{name}.w.false"),
        arr(pred, vec![]),
        ConstantData::Pred(vec![false]),
    );
    let others: Vec<i64> = (0..kd.len() as i64).filter(|&i| i != kof as i64).collect();
    let per_o = any_over(
        instrs,
        format!("{name}.w.any"),
        arr(pred, vec![cout]),
        (bad, no),
        others,
        or_comp,
    );
    (per_o, no)
}

/// Replaces convolution `k` by `select(mask, NaN, conv)` with `per_feature`
/// (pred[cout]) broadcast along the output feature dimension; the
/// convolution itself moves to a new slot.
fn nan_at_features(instrs: &mut Vec<Instruction>, k: usize, per_feature: InstrId) -> Option<()> {
    let c = instrs[k].clone();
    let d = c.attrs.conv_dims.clone()?;
    let out = c.shape.as_array()?.clone();
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
    let mask = broadcast(
        instrs,
        format!("{name}.w.mask"),
        arr(ElementType::Pred, out.dims.clone()),
        per_feature,
        vec![d.output_feature],
    );
    let n = constant(
        instrs,
        format!("{name}.nan"),
        arr(out.dtype, vec![]),
        ConstantData::Float(vec![f64::NAN]),
    );
    let nans = broadcast(
        instrs,
        format!("{name}.nans"),
        arr(out.dtype, out.dims.clone()),
        n,
        vec![],
    );
    instrs[k] = Instruction::new(
        name,
        Opcode::Select,
        c.shape.clone(),
        vec![mask, nans, conv],
    );
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

/// The float type of convolution `c` when its operands and result share it.
fn same_float_type(instrs: &[Instruction], c: &Instruction) -> Option<ElementType> {
    let t = c.shape.as_array()?.dtype;
    let same = c.operands.iter().all(|o| {
        instrs
            .get(o.index())
            .and_then(|i| i.shape.as_array())
            .is_some_and(|a| a.dtype == t)
    });
    (t.is_float() && same).then_some(t)
}

/// Every depthwise convolution of `m` (feature groups of one input feature
/// each) at one of `dtypes` computed as XLA CPU computes it there: one dense
/// convolution with a block-diagonal kernel, so that an infinite or NaN
/// input of one group meets the other groups' zero weights (`0 * inf =
/// NaN`). None when `m` has none.
pub fn dense_depthwise_convolutions(m: &Module, dtypes: &[ElementType]) -> Option<Module> {
    let mut m = m.clone();
    let any = rewrite_convolutions(&mut m, dtypes, |instrs, k, c, d| {
        let fgc = c.attrs.feature_group_count.unwrap_or(1);
        let (kif, kof) = (
            d.kernel_input_feature as usize,
            d.kernel_output_feature as usize,
        );
        let one_input_feature = instrs
            .get(c.operands[1].index())
            .and_then(|w| w.shape.as_array())
            .is_some_and(|w| w.dims.get(kif) == Some(&1));
        if fgc < 2 || !one_input_feature {
            return false;
        }
        let Some(w) = dense_kernel(instrs, &c.name, c.operands[1], kif, kof, fgc) else {
            return false;
        };
        let conv = &mut instrs[k];
        conv.operands[1] = w;
        conv.attrs.feature_group_count = Some(1);
        true
    });
    any.then_some(m)
}

/// Calls `rewrite(instructions, k, convolution k, its dims)` for every
/// convolution of `m` whose operands and result share a float type among
/// `dtypes`; true when a call rewrote one (returned true).
fn rewrite_convolutions(
    m: &mut Module,
    dtypes: &[ElementType],
    mut rewrite: impl FnMut(&mut Vec<Instruction>, usize, &Instruction, &ConvDims) -> bool,
) -> bool {
    let mut any = false;
    for comp in &mut m.computations {
        for k in 0..comp.instructions.len() {
            let c = comp.instructions[k].clone();
            let (Some(d), true) = (c.attrs.conv_dims.clone(), c.opcode == Opcode::Convolution)
            else {
                continue;
            };
            if same_float_type(&comp.instructions, &c).is_some_and(|t| dtypes.contains(&t)) {
                any |= rewrite(&mut comp.instructions, k, &c, &d);
            }
        }
    }
    any
}

/// Every batch-grouped convolution of `m` with more than one output feature
/// per group, at one of `dtypes`, computed as XLA CPU computes it there:
/// the exact result, but NaN at every position of an output feature whose
/// counterpart in another batch group has an infinite or NaN weight
/// (`other_groups_weight_not_finite`). None when `m` has none.
pub fn batch_group_dilation_holes(m: &Module, dtypes: &[ElementType]) -> Option<Module> {
    let mut m = m.clone();
    let or_comp = crate::hlo::CompId(m.computations.len() as u32);
    let any = rewrite_convolutions(&mut m, dtypes, |instrs, k, c, d| {
        let bgc = c.attrs.batch_group_count.unwrap_or(1);
        let kof = d.kernel_output_feature as usize;
        let cout = instrs
            .get(c.operands[1].index())
            .and_then(|w| w.shape.as_array())
            .and_then(|w| w.dims.get(kof).copied())
            .unwrap_or(0);
        // one output feature per group: XLA CPU selects per group instead (no leak)
        if bgc < 2 || cout <= bgc {
            return false;
        }
        let Some(leaks) =
            other_groups_weight_not_finite(instrs, &c.name, c.operands[1], kof, bgc, or_comp)
        else {
            return false;
        };
        nan_at_features(instrs, k, leaks).is_some()
    });
    if any {
        m.computations.push(or_computation());
    }
    any.then_some(m)
}
