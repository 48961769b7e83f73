//! The StableHLO operations with their own attributes: constants and data
//! movement (`constant` to `dynamic_update_slice`), gather, scatter,
//! reductions, `sort` and `map`, `dot_general`/`dot` and `convolution`.

use super::attrs::{
    bool_attr, conv_dims, enum_attr, field_int, field_ints, int_attr, ints_attr, opt_int_attr,
    opt_ints_attr, opt_padding, precision, struct_attr, struct_attr_opt, window,
};
use super::converter::{Converted, Converter, OpSite};
use super::helpers::{broadcast_in_dim, one_result};
use crate::hlo::ir::{
    Attrs, ComparisonDirection, ComparisonType, DotDims, GatherDims, PadDim, ScatterDims, SliceDim,
    WindowDim,
};
use crate::hlo::opcode::Opcode;
use crate::hlo::stablehlo::build::{err, shape_of, Builder, R};
use crate::hlo::stablehlo::dense::constant_data;
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

impl Converter<'_> {
    /// Constants, iota, compare and reduce-precision; other names go on to [`Self::shape_op`].
    pub(super) fn data_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "constant" => {
                let Some(Attr::Dense(d, t)) = op.attr("value") else {
                    return err(pos, "a constant needs `value = dense<...>`");
                };
                let Type::Tensor(dims, e) = t else {
                    return err(pos, "a constant must be a tensor");
                };
                a.constant = Some(constant_data(d, dims, *e, pos)?);
                let s = shape_of(t);
                Ok(vec![b.push(Opcode::Constant, s, vec![], a)])
            }
            "iota" => {
                a.iota_dimension = Some(int_attr(op, "iota_dimension")?);
                self.results(op, b, Opcode::Iota, vec![], a)
            }
            "compare" => {
                let ops = self.operands(op, b, outers)?;
                let dir = enum_attr(op, "comparison_direction")?
                    .ok_or((pos, "compare needs a direction".to_string()))?;
                a.direction = Some(
                    ComparisonDirection::from_name(&dir)
                        .ok_or((pos, format!("unknown comparison direction `{dir}`")))?,
                );
                if let Some(t) = enum_attr(op, "compare_type")? {
                    a.comparison_type = Some(
                        ComparisonType::from_name(&t)
                            .ok_or((pos, format!("unknown comparison type `{t}`")))?,
                    );
                }
                self.results(op, b, Opcode::Compare, ops, a)
            }
            "reduce_precision" => {
                let ops = self.operands(op, b, outers)?;
                if let Some(f) = op.attr("format") {
                    let Attr::Word(w) = f else {
                        return err(pos, "bad reduce_precision format");
                    };
                    let (e, m) = w
                        .strip_prefix('e')
                        .and_then(|r| r.split_once('m'))
                        .and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)))
                        .ok_or((pos, format!("bad reduce_precision format `{w}`")))?;
                    a.exponent_bits = Some(e);
                    a.mantissa_bits = Some(m);
                } else {
                    a.exponent_bits = Some(int_attr(op, "exponent_bits")?);
                    a.mantissa_bits = Some(int_attr(op, "mantissa_bits")?);
                }
                self.results(op, b, Opcode::ReducePrecision, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }

    /// Data movement: `broadcast_in_dim` .. `dynamic_update_slice`; other names go on to [`Self::indexing_op`].
    pub(super) fn shape_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "broadcast_in_dim" => {
                let ops = self.operands(op, b, outers)?;
                let dims = ints_attr(op, "broadcast_dimensions")?;
                let out = one_result(op)?;
                let [x] = ops[..] else {
                    return err(pos, "broadcast_in_dim takes one operand");
                };
                Ok(vec![broadcast_in_dim(b, x, &dims, out, pos)?])
            }
            "transpose" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "permutation")?);
                self.results(op, b, Opcode::Transpose, ops, a)
            }
            "reverse" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                self.results(op, b, Opcode::Reverse, ops, a)
            }
            "concatenate" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(vec![int_attr(op, "dimension")?]);
                self.results(op, b, Opcode::Concatenate, ops, a)
            }
            "slice" => {
                let ops = self.operands(op, b, outers)?;
                let strides = opt_ints_attr(op, "strides")?;
                let fields = ["start_indices", "limit_indices"];
                a.slice = Some(per_field_ints(
                    op,
                    fields,
                    strides,
                    |[start, limit, stride]| SliceDim {
                        start,
                        limit,
                        stride,
                    },
                )?);
                self.results(op, b, Opcode::Slice, ops, a)
            }
            "pad" => {
                let ops = self.operands(op, b, outers)?;
                let interior = ints_attr(op, "interior_padding")?;
                let fields = ["edge_padding_low", "edge_padding_high"];
                a.padding = Some(per_field_ints(
                    op,
                    fields,
                    Some(interior),
                    |[low, high, interior]| PadDim {
                        low,
                        high,
                        interior,
                    },
                )?);
                self.results(op, b, Opcode::Pad, ops, a)
            }
            "dynamic_slice" => {
                let ops = self.operands(op, b, outers)?;
                a.dynamic_slice_sizes = Some(ints_attr(op, "slice_sizes")?);
                self.results(op, b, Opcode::DynamicSlice, ops, a)
            }
            "dynamic_update_slice" => {
                let ops = self.operands(op, b, outers)?;
                self.results(op, b, Opcode::DynamicUpdateSlice, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }

    /// Gather, scatter, reductions, `sort` and `map`; other names go on to [`Self::contraction_op`].
    pub(super) fn indexing_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "gather" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "dimension_numbers", "gather")?;
                a.gather_dims = Some(GatherDims {
                    offset_dims: field_ints(&f, "offset_dims", pos)?,
                    collapsed_slice_dims: field_ints(&f, "collapsed_slice_dims", pos)?,
                    start_index_map: field_ints(&f, "start_index_map", pos)?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    operand_batching_dims: field_ints(&f, "operand_batching_dims", pos)?,
                    start_indices_batching_dims: field_ints(
                        &f,
                        "start_indices_batching_dims",
                        pos,
                    )?,
                    slice_sizes: ints_attr(op, "slice_sizes")?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                self.results(op, b, Opcode::Gather, ops, a)
            }
            "scatter" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "scatter_dimension_numbers", "scatter")?;
                a.scatter_dims = Some(ScatterDims {
                    update_window_dims: field_ints(&f, "update_window_dims", pos)?,
                    inserted_window_dims: field_ints(&f, "inserted_window_dims", pos)?,
                    scatter_dims_to_operand_dims: field_ints(
                        &f,
                        "scatter_dims_to_operand_dims",
                        pos,
                    )?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    input_batching_dims: field_ints(&f, "input_batching_dims", pos)?,
                    scatter_indices_batching_dims: field_ints(
                        &f,
                        "scatter_indices_batching_dims",
                        pos,
                    )?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                a.unique_indices = bool_attr(op, "unique_indices")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::Scatter, ops, a)
            }
            "reduce" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(match op.attr("applies") {
                    Some(Attr::Word(w)) => self.applies_comp(op, w, b, &ops)?,
                    _ => self.region_comp(op, 0, outers, b, "reducer")?,
                });
                self.results(op, b, Opcode::Reduce, ops, a)
            }
            "reduce_window" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, true)?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "window_fn")?);
                self.results(op, b, Opcode::ReduceWindow, ops, a)
            }
            "select_and_scatter" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, false)?);
                a.select = Some(self.region_comp(op, 0, outers, b, "select_fn")?);
                a.scatter = Some(self.region_comp(op, 1, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::SelectAndScatter, ops, a)
            }
            "sort" => {
                let ops = self.operands(op, b, outers)?;
                let rank = match ops.first() {
                    Some(&x) => b.array(x, pos)?.0.len() as i64,
                    None => return err(pos, "sort needs an operand"),
                };
                let d = opt_int_attr(op, "dimension")?.unwrap_or(-1);
                a.dimensions = Some(vec![if d < 0 { d + rank } else { d }]);
                a.is_stable = bool_attr(op, "is_stable")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "comparator")?);
                self.results(op, b, Opcode::Sort, ops, a)
            }
            "map" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "map_fn")?);
                self.results(op, b, Opcode::Map, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }

    /// `dot_general`/`dot` and `convolution`; other names go on to [`Self::control_op`].
    pub(super) fn contraction_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "dot_general" | "dot" => {
                let ops = self.operands(op, b, outers)?;
                let d = if short == "dot" {
                    let [l, _] = ops[..] else {
                        return err(pos, "dot takes two operands");
                    };
                    let lr = b.array(l, pos)?.0.len() as i64;
                    DotDims {
                        lhs_contracting: vec![lr - 1],
                        rhs_contracting: vec![0],
                        ..DotDims::default()
                    }
                } else if let Some(f) = struct_attr_opt(op, "dot_dimension_numbers", "dot")? {
                    DotDims {
                        lhs_batch: field_ints(&f, "lhs_batching_dimensions", pos)?,
                        rhs_batch: field_ints(&f, "rhs_batching_dimensions", pos)?,
                        lhs_contracting: field_ints(&f, "lhs_contracting_dimensions", pos)?,
                        rhs_contracting: field_ints(&f, "rhs_contracting_dimensions", pos)?,
                    }
                } else {
                    DotDims {
                        lhs_batch: opt_ints_attr(op, "lhs_batching_dimensions")?
                            .unwrap_or_default(),
                        rhs_batch: opt_ints_attr(op, "rhs_batching_dimensions")?
                            .unwrap_or_default(),
                        lhs_contracting: opt_ints_attr(op, "lhs_contracting_dimensions")?
                            .unwrap_or_default(),
                        rhs_contracting: opt_ints_attr(op, "rhs_contracting_dimensions")?
                            .unwrap_or_default(),
                    }
                };
                a.dot_dims = Some(d);
                a.precision = precision(op)?;
                if let Some(alg) = op.attr("algorithm") {
                    let Some(alg) = dot_algorithm(alg) else {
                        return err(pos, "a dot algorithm that is not one of XLA's");
                    };
                    a.other.push(("algorithm".into(), alg.name().into()));
                }
                self.results(op, b, Opcode::Dot, ops, a)
            }
            "convolution" => {
                let ops = self.operands(op, b, outers)?;
                let Some(Attr::ConvLabels(l)) = op.attr("dimension_numbers") else {
                    return err(
                        pos,
                        "convolution needs dimension numbers `[b, 0, f]x[0, i, o]->[b, 0, f]`",
                    );
                };
                a.conv_dims = Some(conv_dims(l, pos)?);
                let spatial = l[0].len().saturating_sub(2);
                let strides =
                    opt_ints_attr(op, "window_strides")?.unwrap_or_else(|| vec![1; spatial]);
                let pads = opt_padding(op, "padding")?.unwrap_or_else(|| vec![(0, 0); spatial]);
                let lhs = opt_ints_attr(op, "lhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rhs = opt_ints_attr(op, "rhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rev = opt_ints_attr(op, "window_reversal")?.unwrap_or_else(|| vec![0; spatial]);
                let Some(&kernel) = ops.get(1) else {
                    return err(pos, "convolution takes two operands");
                };
                let kdims = b.array(kernel, pos)?.0;
                let cd = a
                    .conv_dims
                    .as_ref()
                    .map(|c| c.kernel_spatial.clone())
                    .unwrap_or_default();
                if [strides.len(), pads.len(), lhs.len(), rhs.len(), rev.len()]
                    .iter()
                    .any(|&n| n != spatial)
                {
                    return err(
                        pos,
                        "convolution window attributes differ from the spatial rank",
                    );
                }
                let mut w = Vec::new();
                for k in 0..spatial {
                    let size = usize::try_from(cd[k])
                        .ok()
                        .and_then(|d| kdims.get(d))
                        .copied()
                        .unwrap_or(1);
                    w.push(WindowDim {
                        size,
                        stride: strides[k],
                        pad_low: pads[k].0,
                        pad_high: pads[k].1,
                        base_dilation: lhs[k],
                        window_dilation: rhs[k],
                        reversal: rev[k] != 0,
                    });
                }
                a.window = (spatial > 0).then_some(w);
                // a count of 1 is the default HLO leaves out
                a.feature_group_count =
                    opt_int_attr(op, "feature_group_count")?.filter(|&n| n != 1);
                a.batch_group_count = opt_int_attr(op, "batch_group_count")?.filter(|&n| n != 1);
                a.precision = precision(op)?;
                self.results(op, b, Opcode::Convolution, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }
}

/// A per-dimension attribute given as three parallel integer lists (the
/// mirror of the printer's `per_field_attrs`): the two `names` are required
/// attributes, the third list is `third` (all ones when the op omits it). An
/// error when the lists differ in length.
fn per_field_ints<T>(
    op: &Op,
    names: [&str; 2],
    third: Option<Vec<i64>>,
    make: impl Fn([i64; 3]) -> T,
) -> R<Vec<T>> {
    let first = ints_attr(op, names[0])?;
    let second = ints_attr(op, names[1])?;
    let third = third.unwrap_or_else(|| vec![1; first.len()]);
    if first.len() != second.len() || first.len() != third.len() {
        return err(op.pos, format!("`{}` attributes differ in length", op.name));
    }
    Ok((0..first.len())
        .map(|k| make([first[k], second[k], third[k]]))
        .collect())
}

/// The XLA dot algorithm a `#stablehlo.dot_algorithm<...>` names (its
/// precision and accumulation types, products and accumulation flag).
fn dot_algorithm(attr: &Attr) -> Option<crate::hlo::DotAlgorithm> {
    use crate::hlo::{DotAlgorithm, OperandPrecision};
    let Attr::Struct(_, fields) = attr else {
        return None;
    };
    let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let word = |name: &str| match field(name)? {
        Attr::Word(w) => Some(w.to_ascii_lowercase()),
        Attr::Type(Type::Tensor(d, t)) if d.is_empty() => Some(t.name().to_string()),
        _ => None,
    };
    let int = |name: &str| match field(name) {
        Some(Attr::Int(i)) => Some(*i),
        None => Some(1),
        _ => None,
    };
    let lhs = word("lhs_precision_type")?;
    let acc = word("accumulation_type")?;
    let ops = int("num_primitive_operations")?;
    let imprecise = matches!(
        field("allow_imprecise_accumulation"),
        Some(Attr::Bool(true))
    );
    // HLO type names are MLIR's in lower case (`bf16`, `f8e5m2`)
    let name = |t: crate::hlo::ElementType| Some(t.name().to_ascii_lowercase());
    DotAlgorithm::ALL.iter().copied().find(|a| {
        let prec = match a.operand_precision() {
            OperandPrecision::Type(t) => name(t).is_some_and(|n| n == lhs),
            OperandPrecision::Tf32 => lhs == "tf32",
            OperandPrecision::AnyF8 => lhs.starts_with("f8"),
        };
        prec && name(a.accumulation_type()).is_some_and(|n| n == acc)
            && a.primitive_operations() as i128 == ops
            && a.imprecise_accumulation() == imprecise
    })
}
