//! Reading op attributes: integer lists, enums, structs (`#stablehlo.gather<...>`),
//! padding, windows, precision, convolution dimension labels, rng algorithms.

use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{ConvDims, RngAlgorithm, WindowDim};
use crate::hlo::stablehlo::build::{err, R};
use crate::hlo::stablehlo::dense::constant_data;
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

pub(super) fn attr_ints(a: &Attr) -> Option<Vec<i64>> {
    match a {
        Attr::Array(v) => Some(v.clone()),
        Attr::List(items) => items
            .iter()
            .map(|i| match i {
                Attr::Int(v) => i64::try_from(*v).ok(),
                Attr::Bool(b) => Some(*b as i64),
                _ => None,
            })
            .collect(),
        Attr::Dense(d, Type::Tensor(dims, _)) => {
            let data = constant_data(d, dims, ElementType::S64, 0).ok()?;
            match data {
                crate::hlo::ConstantData::Int(v) => {
                    v.iter().map(|&x| i64::try_from(x).ok()).collect()
                }
                _ => None,
            }
        }
        Attr::Int(v) => Some(vec![i64::try_from(*v).ok()?]),
        _ => None,
    }
}

pub(super) fn opt_ints_attr(op: &Op, name: &str) -> R<Option<Vec<i64>>> {
    match op.attr(name) {
        None => Ok(None),
        Some(a) => attr_ints(a).map(Some).ok_or((
            op.pos,
            format!(
                "attribute `{name}` of `{}` must be a list of integers",
                op.name
            ),
        )),
    }
}

pub(super) fn ints_attr(op: &Op, name: &str) -> R<Vec<i64>> {
    opt_ints_attr(op, name)?.ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

pub(super) fn opt_int_attr(op: &Op, name: &str) -> R<Option<i64>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Int(v)) => i64::try_from(*v)
            .map(Some)
            .map_err(|_| (op.pos, format!("attribute `{name}` out of range"))),
        Some(_) => err(
            op.pos,
            format!("attribute `{name}` of `{}` must be an integer", op.name),
        ),
    }
}

pub(super) fn int_attr(op: &Op, name: &str) -> R<i64> {
    opt_int_attr(op, name)?.ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

pub(super) fn bool_attr(op: &Op, name: &str) -> R<bool> {
    match op.attr(name) {
        None => Ok(false),
        Some(Attr::Bool(b)) => Ok(*b),
        Some(Attr::Unit) => Ok(true),
        Some(_) => err(op.pos, format!("attribute `{name}` must be a boolean")),
    }
}

pub(super) fn enum_attr(op: &Op, name: &str) -> R<Option<String>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Enum(_, v)) | Some(Attr::Word(v)) => Ok(Some(v.clone())),
        Some(_) => err(op.pos, format!("attribute `{name}` must be an enum")),
    }
}

/// An enum attribute of one kind: the pretty form's bare word, or
/// `#stablehlo<KIND VALUE>`; another kind, or another attribute, is an error.
pub(super) fn kind_enum_attr(op: &Op, name: &str, kind: &str) -> R<Option<String>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Word(v)) => Ok(Some(v.clone())),
        Some(Attr::Enum(k, v)) if k == kind => Ok(Some(v.clone())),
        Some(_) => err(
            op.pos,
            format!(
                "attribute `{name}` of `{}` must be `#stablehlo<{kind} ...>`",
                op.name
            ),
        ),
    }
}

/// A required enum attribute ([`kind_enum_attr`]); its absence is an error.
pub(super) fn needed_kind_enum(op: &Op, name: &str, kind: &str) -> R<String> {
    kind_enum_attr(op, name, kind)?
        .ok_or_else(|| (op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

/// StableHLO's rng algorithm (`THREE_FRY`) as HLO's.
pub(crate) fn rng_algorithm(s: &str) -> Option<RngAlgorithm> {
    RngAlgorithm::ALL
        .into_iter()
        .find(|r| stablehlo_rng_algorithm(*r) == s)
}

/// HLO's rng algorithm as StableHLO spells it (`rng_three_fry` is `THREE_FRY`).
pub(crate) fn stablehlo_rng_algorithm(r: RngAlgorithm) -> &'static str {
    match r {
        RngAlgorithm::Default => "DEFAULT",
        RngAlgorithm::ThreeFry => "THREE_FRY",
        RngAlgorithm::Philox => "PHILOX",
    }
}

pub(super) fn struct_attr_opt(op: &Op, name: &str, kind: &str) -> R<Option<Vec<(String, Attr)>>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Struct(k, f)) if k == kind => Ok(Some(f.clone())),
        Some(_) => err(
            op.pos,
            format!("attribute `{name}` must be a #stablehlo.{kind}"),
        ),
    }
}

pub(super) fn struct_attr(op: &Op, name: &str, kind: &str) -> R<Vec<(String, Attr)>> {
    struct_attr_opt(op, name, kind)?
        .ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

pub(super) const KNOWN_FIELDS: &[&str] = &[
    "offset_dims",
    "collapsed_slice_dims",
    "start_index_map",
    "index_vector_dim",
    "operand_batching_dims",
    "start_indices_batching_dims",
    "update_window_dims",
    "inserted_window_dims",
    "scatter_dims_to_operand_dims",
    "input_batching_dims",
    "scatter_indices_batching_dims",
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
];

pub(super) fn check_fields(f: &[(String, Attr)], pos: usize) -> R<()> {
    for (k, _) in f {
        if !KNOWN_FIELDS.contains(&k.as_str()) {
            return err(pos, format!("unknown dimension-number field `{k}`"));
        }
    }
    Ok(())
}

pub(super) fn field_ints(f: &[(String, Attr)], name: &str, pos: usize) -> R<Vec<i64>> {
    check_fields(f, pos)?;
    match f.iter().find(|(k, _)| k == name) {
        None => Ok(Vec::new()),
        Some((_, a)) => {
            attr_ints(a).ok_or((pos, format!("field `{name}` must be a list of integers")))
        }
    }
}

pub(super) fn field_int(f: &[(String, Attr)], name: &str, pos: usize) -> R<Option<i64>> {
    match f.iter().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, Attr::Int(v))) => Ok(i64::try_from(*v).ok()),
        Some(_) => err(pos, format!("field `{name}` must be an integer")),
    }
}

pub(super) fn opt_padding(op: &Op, name: &str) -> R<Option<Vec<(i64, i64)>>> {
    let bad = || {
        (
            op.pos,
            format!("attribute `{name}` must be pairs of integers"),
        )
    };
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::List(rows)) => rows
            .iter()
            .map(|r| match attr_ints(r).as_deref() {
                Some([lo, hi]) => Ok((*lo, *hi)),
                _ => Err(bad()),
            })
            .collect::<R<Vec<_>>>()
            .map(Some),
        Some(a) => {
            let v = attr_ints(a).ok_or_else(bad)?;
            if v.len() % 2 != 0 {
                return Err(bad());
            }
            Ok(Some(v.chunks(2).map(|c| (c[0], c[1])).collect()))
        }
    }
}

pub(super) fn window(op: &Op, dilations: bool) -> R<Vec<WindowDim>> {
    let sizes = ints_attr(op, "window_dimensions")?;
    let n = sizes.len();
    let strides = opt_ints_attr(op, "window_strides")?.unwrap_or_else(|| vec![1; n]);
    let pads = opt_padding(op, "padding")?.unwrap_or_else(|| vec![(0, 0); n]);
    let (base, win) = if dilations {
        (
            opt_ints_attr(op, "base_dilations")?.unwrap_or_else(|| vec![1; n]),
            opt_ints_attr(op, "window_dilations")?.unwrap_or_else(|| vec![1; n]),
        )
    } else {
        (vec![1; n], vec![1; n])
    };
    if [strides.len(), pads.len(), base.len(), win.len()]
        .iter()
        .any(|&k| k != n)
    {
        return err(op.pos, "window attributes differ in length");
    }
    Ok((0..n)
        .map(|k| WindowDim {
            size: sizes[k],
            stride: strides[k],
            pad_low: pads[k].0,
            pad_high: pads[k].1,
            base_dilation: base[k],
            window_dilation: win[k],
            reversal: false,
        })
        .collect())
}

pub(super) fn precision(op: &Op) -> R<Option<Vec<String>>> {
    match op.attr("precision_config") {
        None => Ok(None),
        Some(Attr::List(items)) => items
            .iter()
            .map(|i| match i {
                Attr::Enum(_, v) | Attr::Word(v) => match v.as_str() {
                    "DEFAULT" | "HIGH" | "HIGHEST" => Ok(v.to_ascii_lowercase()),
                    _ => err(op.pos, format!("unknown precision `{v}`")),
                },
                _ => err(op.pos, "precision_config must list precisions"),
            })
            .collect::<R<Vec<_>>>()
            .map(Some),
        Some(_) => err(op.pos, "precision_config must be a list"),
    }
}

pub(super) fn conv_dims(l: &[Vec<String>], pos: usize) -> R<ConvDims> {
    let find = |list: &[String], label: &str| -> R<i64> {
        list.iter()
            .position(|s| s == label)
            .map(|k| k as i64)
            .ok_or((pos, format!("convolution dimension numbers lack `{label}`")))
    };
    let spatial = |list: &[String]| -> R<Vec<i64>> {
        let n = list.len().saturating_sub(2);
        (0..n).map(|k| find(list, &k.to_string())).collect()
    };
    if l.len() != 3 || l[0].len() != l[1].len() || l[0].len() != l[2].len() {
        return err(pos, "convolution dimension numbers differ in rank");
    }
    Ok(ConvDims {
        input_batch: find(&l[0], "b")?,
        input_feature: find(&l[0], "f")?,
        input_spatial: spatial(&l[0])?,
        kernel_input_feature: find(&l[1], "i")?,
        kernel_output_feature: find(&l[1], "o")?,
        kernel_spatial: spatial(&l[1])?,
        output_batch: find(&l[2], "b")?,
        output_feature: find(&l[2], "f")?,
        output_spatial: spatial(&l[2])?,
    })
}
