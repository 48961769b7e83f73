//! Each form's single-op module (`build_single` dispatches by family).

use super::{
    arr, comparison_type, elementwise, highest, lowest, scalar, Builder, BuiltCase, CatalogueError,
    Form, Init, OpCase, Res,
};
use crate::hlo::{
    Attrs, ComparisonDirection, ConstantData, ConvDims, DotDims, ElementType, GatherDims, InstrId,
    Opcode, PadDim, ScatterDims, SliceDim, WindowDim,
};
use crate::inputs::Role;

/// Elementwise ops, compare, converts and reduce-precision.
pub(super) fn elementwise_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, _, layout, operand, param) = c.site();
    Ok(match form {
        Form::Elementwise => elementwise(b, c.op, t, &dims, &layout)?,
        Form::Copy => {
            let x = b.param(operand.clone(), Role::Data);
            b.push(Opcode::Copy, operand, vec![x], Attrs::default())
        }
        Form::Compare => {
            let x = b.param(operand.clone(), Role::Data);
            let y = b.param(operand, Role::Data);
            let (dir, total) = match param.strip_suffix("-total") {
                Some(d) => (d, true),
                None => (param, false),
            };
            let dir = ComparisonDirection::from_name(&dir.to_uppercase())
                .ok_or_else(|| c.err("bad direction"))?;
            b.push(
                Opcode::Compare,
                arr(ElementType::Pred, dims, Some(layout)),
                vec![x, y],
                Attrs {
                    direction: Some(dir),
                    comparison_type: Some(comparison_type(t, total)),
                    ..Attrs::default()
                },
            )
        }
        Form::Convert | Form::BitcastConvert => {
            let target: ElementType = param
                .strip_prefix("to-")
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| c.err("bad conversion target"))?;
            let role = if t.is_float() && target.is_unsigned_int() {
                Role::NonNegative
            } else {
                Role::Data
            };
            let x = b.param(operand, role);
            b.push(
                c.op,
                arr(target, dims, Some(layout)),
                vec![x],
                Attrs::default(),
            )
        }
        Form::ReducePrecision => {
            let (e, m) = match param {
                "e5m10" => (5, 10),
                "e8m7" => (8, 7),
                "e5m2" => (5, 2),
                _ => (4, 3),
            };
            let x = b.param(operand.clone(), Role::Data);
            b.push(
                Opcode::ReducePrecision,
                operand,
                vec![x],
                Attrs {
                    exponent_bits: Some(e),
                    mantissa_bits: Some(m),
                    ..Attrs::default()
                },
            )
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// Iota, broadcast, reshape, transpose, slice and concatenate.
pub(super) fn layout_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, rank, layout, operand, param) = c.site();
    Ok(match form {
        Form::Iota => {
            let d = if param == "first" { 0 } else { rank as i64 - 1 };
            b.push(
                Opcode::Iota,
                operand,
                vec![],
                Attrs {
                    iota_dimension: Some(d),
                    ..Attrs::default()
                },
            )
        }
        Form::Broadcast => {
            let x = b.param(operand, Role::Data);
            let (out, map): (Vec<i64>, Vec<i64>) = if param == "prepend" {
                (
                    std::iter::once(2).chain(dims.iter().copied()).collect(),
                    (1..=rank as i64).collect(),
                )
            } else {
                (
                    dims.iter().copied().chain(std::iter::once(3)).collect(),
                    (0..rank as i64).collect(),
                )
            };
            b.push(
                Opcode::Broadcast,
                arr(t, out, None),
                vec![x],
                Attrs {
                    dimensions: Some(map),
                    ..Attrs::default()
                },
            )
        }
        Form::Reshape => {
            let x = b.param(operand, Role::Data);
            let out = if param == "flatten" {
                vec![dims.iter().product()]
            } else {
                std::iter::once(1).chain(dims.iter().copied()).collect()
            };
            b.push(
                Opcode::Reshape,
                arr(t, out, None),
                vec![x],
                Attrs::default(),
            )
        }
        Form::Transpose => {
            let x = b.param(operand, Role::Data);
            let perm: Vec<i64> = if param == "reverse" {
                (0..rank as i64).rev().collect()
            } else {
                (1..rank as i64).chain(std::iter::once(0)).collect()
            };
            let out = perm.iter().map(|&p| dims[p as usize]).collect();
            b.push(
                Opcode::Transpose,
                arr(t, out, None),
                vec![x],
                Attrs {
                    dimensions: Some(perm),
                    ..Attrs::default()
                },
            )
        }
        Form::Slice => {
            let x = b.param(operand, Role::Data);
            let sl = slice_of(&dims, param);
            let out = sl
                .iter()
                .map(|s| (s.limit - s.start + s.stride - 1).max(0) / s.stride)
                .collect();
            b.push(
                Opcode::Slice,
                arr(t, out, None),
                vec![x],
                Attrs {
                    slice: Some(sl),
                    ..Attrs::default()
                },
            )
        }
        Form::Concatenate => {
            let x = b.param(operand.clone(), Role::Data);
            let y = b.param(operand, Role::Data);
            let d = if param == "first" { 0 } else { rank - 1 };
            let mut out = dims.clone();
            out[d] *= 2;
            b.push(
                Opcode::Concatenate,
                arr(t, out, Some(layout)),
                vec![x, y],
                Attrs {
                    dimensions: Some(vec![d as i64]),
                    ..Attrs::default()
                },
            )
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// A slice form's dims: the first half (`head`), every other element
/// (`stride2`), or the second half.
fn slice_of(dims: &[i64], param: &str) -> Vec<SliceDim> {
    dims.iter()
        .map(|&d| match param {
            "head" => SliceDim {
                start: 0,
                limit: (d + 1) / 2,
                stride: 1,
            },
            "stride2" => SliceDim {
                start: 0,
                limit: d,
                stride: 2,
            },
            _ => SliceDim {
                start: d / 2,
                limit: d,
                stride: 1,
            },
        })
        .collect()
}

/// Pad, reverse and dynamic slices.
pub(super) fn indexing_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, rank, layout, operand, param) = c.site();
    Ok(match form {
        Form::Pad => {
            let x = b.param(operand, Role::Data);
            let v = b.param(scalar(t), Role::Data);
            let pads: Vec<PadDim> = dims
                .iter()
                .map(|&d| match param {
                    "edge" => PadDim {
                        low: 1,
                        high: 2,
                        interior: 0,
                    },
                    "interior" => PadDim {
                        low: 0,
                        high: 0,
                        interior: 1,
                    },
                    _ if d >= 1 => PadDim {
                        low: -1,
                        high: 1,
                        interior: 0,
                    },
                    _ => PadDim {
                        low: 0,
                        high: 1,
                        interior: 0,
                    },
                })
                .collect();
            let out = dims
                .iter()
                .zip(&pads)
                .map(|(&d, p)| d + p.low + p.high + (d - 1).max(0) * p.interior)
                .collect();
            b.push(
                Opcode::Pad,
                arr(t, out, Some(layout)),
                vec![x, v],
                Attrs {
                    padding: Some(pads),
                    ..Attrs::default()
                },
            )
        }
        Form::Reverse => {
            let x = b.param(operand.clone(), Role::Data);
            let ds = if param == "first" {
                vec![0]
            } else {
                (0..rank as i64).collect()
            };
            b.push(
                Opcode::Reverse,
                operand,
                vec![x],
                Attrs {
                    dimensions: Some(ds),
                    ..Attrs::default()
                },
            )
        }
        Form::DynamicSlice | Form::DynamicUpdateSlice => {
            let sizes: Vec<i64> = dims.iter().map(|&d| (d + 1) / 2).collect();
            let x = b.param(operand.clone(), Role::Data);
            let update = (form == Form::DynamicUpdateSlice)
                .then(|| b.param(arr(t, sizes.clone(), None), Role::Data));
            let mut operands = vec![x];
            operands.extend(update);
            for (&d, &s) in dims.iter().zip(&sizes) {
                let role = if param == "inbounds" {
                    Role::Index(0, d - s)
                } else {
                    Role::Index(-2, d + 2)
                };
                operands.push(b.param(scalar(ElementType::S32), role));
            }
            if form == Form::DynamicSlice {
                b.push(
                    Opcode::DynamicSlice,
                    arr(t, sizes.clone(), None),
                    operands,
                    Attrs {
                        dynamic_slice_sizes: Some(sizes),
                        ..Attrs::default()
                    },
                )
            } else {
                b.push(
                    Opcode::DynamicUpdateSlice,
                    operand,
                    operands,
                    Attrs::default(),
                )
            }
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// Gather and scatter.
pub(super) fn gather_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, rank, _, operand, param) = c.site();
    Ok(match form {
        Form::Gather => {
            let n = dims[0];
            let k = 3;
            let x = b.param(operand, Role::Data);
            let role = if param == "rows" {
                Role::Index(0, n - 1)
            } else {
                Role::Index(-2, n + 2)
            };
            let idx = b.param(arr(ElementType::S32, vec![k, 1], None), role);
            let out = std::iter::once(k)
                .chain(dims[1..].iter().copied())
                .collect();
            b.push(
                Opcode::Gather,
                arr(t, out, None),
                vec![x, idx],
                Attrs {
                    gather_dims: Some(GatherDims {
                        offset_dims: (1..rank as i64).collect(),
                        collapsed_slice_dims: vec![0],
                        start_index_map: vec![0],
                        index_vector_dim: 1,
                        operand_batching_dims: vec![],
                        start_indices_batching_dims: vec![],
                        slice_sizes: std::iter::once(1)
                            .chain(dims[1..].iter().copied())
                            .collect(),
                    }),
                    ..Attrs::default()
                },
            )
        }
        Form::Scatter => {
            let n = dims[0];
            let rows: Vec<i128> = if n >= 2 {
                vec![0, n as i128 - 1]
            } else {
                vec![0]
            };
            let k = rows.len() as i64;
            let op = if param == "add" {
                Opcode::Add
            } else {
                Opcode::Maximum
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand.clone(), Role::Data);
            let idx = b.constant(
                arr(ElementType::S32, vec![k, 1], None),
                ConstantData::Int(rows),
            );
            let upd_dims = std::iter::once(k)
                .chain(dims[1..].iter().copied())
                .collect();
            let u = b.param(arr(t, upd_dims, None), Role::Data);
            b.push(
                Opcode::Scatter,
                operand,
                vec![x, idx, u],
                Attrs {
                    scatter_dims: Some(ScatterDims {
                        update_window_dims: (1..rank as i64).collect(),
                        inserted_window_dims: vec![0],
                        scatter_dims_to_operand_dims: vec![0],
                        index_vector_dim: 1,
                        input_batching_dims: vec![],
                        scatter_indices_batching_dims: vec![],
                    }),
                    unique_indices: true,
                    to_apply: Some(comp),
                    ..Attrs::default()
                },
            )
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// Reductions and sort.
pub(super) fn reduction_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, rank, _, operand, param) = c.site();
    Ok(match form {
        Form::Reduce => {
            let (op, init, which) = match param {
                "add-all" => (Opcode::Add, Init::I(0), "all"),
                "add-first" => (Opcode::Add, Init::I(0), "first"),
                "max-last" => (Opcode::Maximum, lowest(t), "last"),
                "min-all" => (Opcode::Minimum, highest(t), "all"),
                _ => (Opcode::Multiply, Init::I(1), "first"),
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand, Role::Data);
            let init = b.scalar_const(t, init);
            let reduced: Vec<i64> = match which {
                "all" => (0..rank as i64).collect(),
                "first" => vec![0],
                _ => vec![rank as i64 - 1],
            };
            let out = (0..rank)
                .filter(|d| !reduced.contains(&(*d as i64)))
                .map(|d| dims[d])
                .collect();
            b.push(
                Opcode::Reduce,
                arr(t, out, None),
                vec![x, init],
                Attrs {
                    dimensions: Some(reduced),
                    to_apply: Some(comp),
                    ..Attrs::default()
                },
            )
        }
        Form::ReduceWindow => {
            let (op, init, stride, pad) = match param {
                "max-w2" => (Opcode::Maximum, lowest(t), 1, 0),
                "add-w2s2" => (Opcode::Add, Init::I(0), 2, 0),
                _ => (Opcode::Add, Init::I(0), 1, 1),
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand, Role::Data);
            let init = b.scalar_const(t, init);
            let window: Vec<WindowDim> = dims
                .iter()
                .map(|&d| WindowDim {
                    stride,
                    pad_low: pad,
                    pad_high: pad,
                    ..WindowDim::new(d.clamp(1, 2))
                })
                .collect();
            let out = dims
                .iter()
                .zip(&window)
                .map(|(&d, w)| window_out(d, w.size, w.stride, w.pad_low, w.pad_high))
                .collect();
            b.push(
                Opcode::ReduceWindow,
                arr(t, out, None),
                vec![x, init],
                Attrs {
                    window: Some(window),
                    to_apply: Some(comp),
                    ..Attrs::default()
                },
            )
        }
        Form::Sort => {
            let (dim, dir) = if param == "asc-last" {
                (rank as i64 - 1, ComparisonDirection::Lt)
            } else {
                (0, ComparisonDirection::Gt)
            };
            let comp = b.compare_comp(t, dir);
            let x = b.param(operand.clone(), Role::Data);
            b.push(
                Opcode::Sort,
                operand,
                vec![x],
                Attrs {
                    dimensions: Some(vec![dim]),
                    is_stable: true,
                    to_apply: Some(comp),
                    ..Attrs::default()
                },
            )
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// Dot and convolution.
pub(super) fn contraction_forms(b: &mut Builder, form: Form, c: &OpCase<'_>) -> Res<InstrId> {
    let (t, dims, rank, _, operand, param) = c.site();
    Ok(match form {
        Form::Dot => {
            let n = if param == "n1" { 1 } else { 3 };
            let x = b.param(operand, Role::Data);
            let (rhs, out, dd) = if rank == 2 {
                (
                    vec![dims[1], n],
                    vec![dims[0], n],
                    DotDims {
                        lhs_contracting: vec![1],
                        rhs_contracting: vec![0],
                        ..DotDims::default()
                    },
                )
            } else {
                (
                    vec![dims[0], dims[2], n],
                    vec![dims[0], dims[1], n],
                    DotDims {
                        lhs_batch: vec![0],
                        rhs_batch: vec![0],
                        lhs_contracting: vec![2],
                        rhs_contracting: vec![1],
                    },
                )
            };
            let y = b.param(arr(t, rhs, None), Role::Data);
            b.push(
                Opcode::Dot,
                arr(t, out, None),
                vec![x, y],
                Attrs {
                    dot_dims: Some(dd),
                    ..Attrs::default()
                },
            )
        }
        Form::Convolution => {
            let (k, s, p) = match param {
                "k1" => (1, 1, 0),
                "k3same" => (3, 1, 1),
                _ => (2, 2, 0),
            };
            let o = 2;
            let x = b.param(operand, Role::Data);
            let w = b.param(arr(t, vec![k, k, dims[3], o], None), Role::Data);
            let window: Vec<WindowDim> = (0..2)
                .map(|_| WindowDim {
                    stride: s,
                    pad_low: p,
                    pad_high: p,
                    ..WindowDim::new(k)
                })
                .collect();
            let out = vec![
                dims[0],
                window_out(dims[1], k, s, p, p),
                window_out(dims[2], k, s, p, p),
                o,
            ];
            b.push(
                Opcode::Convolution,
                arr(t, out, None),
                vec![x, w],
                Attrs {
                    window: Some(window),
                    conv_dims: Some(ConvDims::feature_last(2)),
                    feature_group_count: Some(1),
                    batch_group_count: Some(1),
                    ..Attrs::default()
                },
            )
        }
        _ => return Err(c.err("not a form of this family")),
    })
}

/// Builds the module of a single-op case of `form` (`Form::of(op)`; program
/// templates and structures are built elsewhere).
///
/// ```
/// use xla_props::hlo::{ElementType, Layout, Opcode};
/// use xla_props::programs::{build_single, Form, OpCase};
/// let case = OpCase {
///     name: &"add on f32[3,5]",
///     op: Opcode::Add,
///     dtype: ElementType::F32,
///     dims: &[3, 5],
///     layout: &Layout::row_major(2),
///     param: None,
/// };
/// let built = build_single(&case, Form::Elementwise).unwrap();
/// assert_eq!(built.module.parameter_shapes().len(), 2);
/// assert_eq!(built.module.result_shape().to_string(), "f32[3,5]{1,0}");
/// ```
pub fn build_single(c: &OpCase<'_>, form: Form) -> Result<BuiltCase, CatalogueError> {
    let mut b = Builder::default();
    let root = match form {
        Form::Program => return Err(c.err("program templates are built by `crate::programs`")),
        Form::Structure => return Err(c.err("built only as attribute classes")),
        Form::Elementwise
        | Form::Copy
        | Form::Compare
        | Form::Convert
        | Form::BitcastConvert
        | Form::ReducePrecision => elementwise_forms(&mut b, form, c)?,
        Form::Iota
        | Form::Broadcast
        | Form::Reshape
        | Form::Transpose
        | Form::Slice
        | Form::Concatenate => layout_forms(&mut b, form, c)?,
        Form::Pad | Form::Reverse | Form::DynamicSlice | Form::DynamicUpdateSlice => {
            indexing_forms(&mut b, form, c)?
        }
        Form::Gather | Form::Scatter => gather_forms(&mut b, form, c)?,
        Form::Reduce | Form::ReduceWindow | Form::Sort => reduction_forms(&mut b, form, c)?,
        Form::Dot | Form::Convolution => contraction_forms(&mut b, form, c)?,
    };
    Ok(b.finish(root))
}

fn window_out(d: i64, size: i64, stride: i64, lo: i64, hi: i64) -> i64 {
    let padded = d + lo + hi;
    if padded < size {
        0
    } else {
        (padded - size) / stride + 1
    }
}
