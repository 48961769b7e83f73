//! Custom calls with a known meaning, expanded into plain HLO so that the
//! evaluators (the reference, the interpreter) can run what XLA's optimized
//! dumps contain. The module given to a backend under test is never changed.
//!
//! - `custom-call(x), custom_call_target="TopK", called_computations={cmp}`
//!   (XLA's TopK rewriter: `(values, s32 indices)` of the first `k` along the
//!   last dimension in the comparator's order): a stable `sort` of `x` and an
//!   `iota` of indices with that comparator, sliced to `k`.
//! - `custom-call(a, b), custom_call_target="lapack_?trsm_ffi"` (jaxlib's
//!   LAPACK triangular solve on CPU, `?` one of `s d c z`): the
//!   `triangular-solve` its `backend_config` names (see [`super::lapack`]).

use super::{ArrayShape, ElementType, InstrId, Instruction, Module, Opcode, Shape, SliceDim};

/// The module with every known custom call expanded, or None when it has none.
///
/// ```
/// use xla_props::hlo::{expand_known_custom_calls, parse_module, Opcode};
/// let m = parse_module("HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  ROOT gt = pred[] compare(a, b), direction=GT\n}\nENTRY e {\n  x = f32[2,5] parameter(0)\n  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target=\"TopK\", called_computations={cmp}\n}\n").unwrap();
/// let e = expand_known_custom_calls(&m).unwrap();
/// assert!(e.entry_computation().instructions.iter().any(|i| i.opcode == Opcode::Sort));
/// ```
pub fn expand_known_custom_calls(module: &Module) -> Option<Module> {
    // the common case, nothing to expand, costs one scan and no copy
    let known = |i: &Instruction| {
        i.opcode == Opcode::CustomCall
            && i.attrs
                .custom_call_target
                .as_deref()
                .is_some_and(|t| t == "TopK" || super::lapack::is_trsm_target(t))
    };
    if !module
        .computations
        .iter()
        .any(|c| c.instructions.iter().any(known))
    {
        return None;
    }
    let mut m = module.clone();
    let mut changed = false;
    for ci in 0..m.computations.len() {
        let n = m.computations[ci].instructions.len();
        for k in 0..n {
            let ins = m.computations[ci].instructions[k].clone();
            if !known(&ins) {
                continue;
            }
            let instrs = &mut m.computations[ci].instructions;
            let expanded = if ins.attrs.custom_call_target.as_deref() == Some("TopK") {
                topk(instrs, &ins)
            } else {
                super::lapack::trsm(instrs, &ins)
            };
            let Some(expanded) = expanded else {
                continue;
            };
            m.computations[ci].instructions[k] = expanded;
            changed = true;
        }
    }
    changed.then_some(m)
}

/// Appends the sort and slices of a TopK custom call; returns the tuple
/// that replaces it (None when its shapes are not a TopK's).
fn topk(instrs: &mut Vec<Instruction>, ins: &Instruction) -> Option<Instruction> {
    let (&x, &cmp) = (ins.operands.first()?, ins.attrs.calls.first()?);
    let x_shape = instrs.get(x.index())?.shape.as_array()?.clone();
    let Shape::Tuple(outs) = &ins.shape else {
        return None;
    };
    let (values, indices) = (outs.first()?.as_array()?, outs.get(1)?.as_array()?);
    let rank = x_shape.dims.len();
    if rank == 0 || values.dims.len() != rank || indices.dtype != ElementType::S32 {
        return None;
    }
    let last = rank - 1;
    let mut push = |i: Instruction| {
        instrs.push(i);
        InstrId(instrs.len() as u32 - 1)
    };
    let index_shape = ArrayShape::new(ElementType::S32, x_shape.dims.clone());
    let mut iota = Instruction::new(
        format!("{}.iota", ins.name),
        Opcode::Iota,
        Shape::Array(index_shape.clone()),
        vec![],
    );
    iota.attrs.iota_dimension = Some(last as i64);
    let iota = push(iota);
    let mut sort = Instruction::new(
        format!("{}.sort", ins.name),
        Opcode::Sort,
        Shape::Tuple(vec![
            Shape::Array(ArrayShape::new(x_shape.dtype, x_shape.dims.clone())),
            Shape::Array(index_shape),
        ]),
        vec![x, iota],
    );
    sort.attrs.dimensions = Some(vec![last as i64]);
    sort.attrs.is_stable = true;
    sort.attrs.to_apply = Some(cmp);
    let sort = push(sort);
    let mut parts = Vec::new();
    for (j, out) in [values, indices].into_iter().enumerate() {
        let full = ArrayShape::new(out.dtype, x_shape.dims.clone());
        let mut g = Instruction::new(
            format!("{}.sorted{j}", ins.name),
            Opcode::GetTupleElement,
            Shape::Array(full),
            vec![sort],
        );
        g.attrs.index = Some(j as i64);
        let g = push(g);
        let mut s = Instruction::new(
            format!("{}.top{j}", ins.name),
            Opcode::Slice,
            Shape::Array(ArrayShape::new(out.dtype, out.dims.clone())),
            vec![g],
        );
        s.attrs.slice = Some(
            out.dims
                .iter()
                .map(|&d| SliceDim {
                    start: 0,
                    limit: d,
                    stride: 1,
                })
                .collect(),
        );
        parts.push(push(s));
    }
    let mut tuple = Instruction::new(ins.name.clone(), Opcode::Tuple, ins.shape.clone(), parts);
    tuple.attrs = Default::default();
    Some(tuple)
}

#[cfg(test)]
mod tests {
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    #[test]
    fn a_topk_custom_call_evaluates_as_topk() {
        let cc = parse_module("HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  ROOT gt = pred[] compare(a, b), direction=GT\n}\nENTRY e {\n  x = f32[2,5] parameter(0)\n  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target=\"TopK\", called_computations={cmp}\n}\n").unwrap();
        let op = parse_module("HloModule m\nENTRY e {\n  x = f32[2,5] parameter(0)\n  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true\n}\n").unwrap();
        let x = Literal::from_f64s(
            &crate::hlo::ArrayShape::new(crate::hlo::ElementType::F32, vec![2, 5]),
            &[3.0, 1.0, 4.0, 1.0, 5.0, -2.0, 7.0, 7.0, 0.5, -9.0],
        )
        .unwrap();
        let a = crate::reference::evaluate(&cc, std::slice::from_ref(&x)).unwrap();
        let b = crate::reference::evaluate(&op, &[x]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[1].to_i128_vec(), vec![4, 2, 0, 1, 2, 3]);
    }
}
