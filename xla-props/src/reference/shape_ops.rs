//! Structure and shape ops: constant, iota, tuples, copy, bitcast,
//! broadcast, reshape, transpose, slice, concatenate, pad, reverse.
//!
//! Results are built in logical order; layouts are metadata, except for
//! `bitcast`, which reinterprets the physical order.

use super::data::{
    bits, dims_of, from_bits, from_bools, from_f64s, from_i128s, indices_below, strides, take,
};
use super::error::bad;
use super::OpError;
use crate::hlo::{ArrayShape, ConstantData, Instruction, PadDim, Shape, SliceDim};
use crate::literal::{Literal, Value};

/// A dims attribute as usizes below `bound`.
fn dim_list(dims: Option<&[i64]>, bound: usize, what: &str) -> Result<Vec<usize>, OpError> {
    let dims = dims.ok_or_else(|| bad(format!("missing {what}")))?;
    indices_below(dims, bound, |d| {
        bad(format!("{what} {d} out of range for rank {bound}"))
    })
}

/// constant: the literal (or tuple) of the instruction's shape.
pub(crate) fn constant(ins: &Instruction) -> Result<Value, OpError> {
    let data = ins
        .attrs
        .constant
        .as_ref()
        .ok_or_else(|| bad("constant without a value"))?;
    constant_value(data, &ins.shape)
}

fn constant_value(data: &ConstantData, shape: &Shape) -> Result<Value, OpError> {
    match (data, shape) {
        (ConstantData::Tuple(items), Shape::Tuple(shapes)) if items.len() == shapes.len() => items
            .iter()
            .zip(shapes)
            .map(|(d, s)| constant_value(d, s))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Tuple),
        (_, Shape::Array(s)) => constant_array(data, s).map(Value::Array),
        (_, Shape::Token) => Ok(Value::Token),
        _ => Err(bad(format!("constant does not match shape {shape}"))),
    }
}

fn constant_array(data: &ConstantData, s: &ArrayShape) -> Result<Literal, OpError> {
    let n = crate::literal::check_size(s)?;
    // A single value fills the whole shape (as some printers abbreviate splats).
    let splat = |len: usize| len == 1 && n != 1;
    match data {
        ConstantData::Pred(v) => from_bools(
            s,
            if splat(v.len()) {
                vec![v[0]; n]
            } else {
                v.clone()
            },
        ),
        ConstantData::Int(v) => from_i128s(
            s,
            &if splat(v.len()) {
                vec![v[0]; n]
            } else {
                v.clone()
            },
        ),
        ConstantData::Float(v) => from_f64s(
            s,
            &if splat(v.len()) {
                vec![v[0]; n]
            } else {
                v.clone()
            },
        ),
        ConstantData::Complex(v) if s.dtype.is_complex() => Ok(Literal::from_complex(
            s,
            &if splat(v.len()) {
                vec![v[0]; n]
            } else {
                v.clone()
            },
        )?),
        ConstantData::Complex(_) => Err(bad(format!("complex constant for {s}"))),
        ConstantData::Tuple(_) => Err(bad(format!("tuple constant for array shape {s}"))),
    }
}

/// iota: the index along `iota_dimension`.
pub(crate) fn iota(out: &ArrayShape, dim: Option<i64>) -> Result<Literal, OpError> {
    let dims = dims_of(out)?;
    let d = dim_list(
        dim.as_ref().map(std::slice::from_ref),
        dims.len(),
        "iota_dimension",
    )?[0];
    let n = crate::literal::check_size(out)?;
    let st = strides(&dims);
    let v: Vec<i128> = (0..n).map(|i| ((i / st[d]) % dims[d]) as i128).collect();
    from_i128s(out, &v)
}

/// get-tuple-element.
pub(crate) fn get_tuple_element(v: &Value, index: Option<i64>) -> Result<Value, OpError> {
    let t = v
        .as_tuple()
        .ok_or_else(|| bad("get-tuple-element of a non-tuple"))?;
    index
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| t.get(i))
        .cloned()
        .ok_or_else(|| {
            bad(format!(
                "tuple index {index:?} out of range for {} elements",
                t.len()
            ))
        })
}

/// copy: the same logical values (the result takes the instruction's layout).
pub(crate) fn copy(v: &Value, shape: &Shape) -> Result<Value, OpError> {
    if !v.shape().compatible(shape) {
        return Err(bad(format!("copy of {} to {shape}", v.shape())));
    }
    Ok(v.clone())
}

/// bitcast: reads the operand's elements in its physical order and lays them
/// out in the result's physical order (same element type and count).
pub(crate) fn bitcast(x: &Literal, out: &ArrayShape) -> Result<Literal, OpError> {
    Ok(x.bitcast(out)?)
}

/// broadcast: operand dim i becomes output dim `dimensions[i]`.
pub(crate) fn broadcast(
    x: &Literal,
    dims: Option<&[i64]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let odims = dims_of(out)?;
    // a scalar broadcast may omit `dimensions={}`
    let map = dim_list(
        Some(dims.unwrap_or_default()),
        odims.len(),
        "broadcast dimension",
    )?;
    let xd = x.dims().to_vec();
    if map.len() != xd.len() || map.iter().zip(&xd).any(|(&o, &s)| s != odims[o] && s != 1) {
        return Err(bad(format!(
            "cannot broadcast {} to {out} with dimensions {map:?}",
            x.shape()
        )));
    }
    take_strided(x, out, |i, idx| if xd[i] == 1 { 0 } else { idx[map[i]] })
}

/// reshape: the same row-major element sequence.
pub(crate) fn reshape(x: &Literal, out: &ArrayShape) -> Result<Literal, OpError> {
    if x.dtype() != out.dtype {
        return Err(bad(format!("reshape of {} cannot give {out}", x.shape())));
    }
    from_bits(out, &bits(x))
}

/// transpose: output dim i is operand dim `dimensions[i]`.
pub(crate) fn transpose(
    x: &Literal,
    dims: Option<&[i64]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let xd = x.dims().to_vec();
    let perm = dim_list(dims, xd.len(), "transpose dimension")?;
    let odims = dims_of(out)?;
    let mut seen = vec![false; xd.len()];
    if perm.len() != xd.len()
        || odims.len() != xd.len()
        || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true))
    {
        return Err(bad(format!("bad transpose permutation {perm:?}")));
    }
    if perm.iter().enumerate().any(|(i, &p)| odims[i] != xd[p]) {
        return Err(bad(format!(
            "transpose of {} does not give {out}",
            x.shape()
        )));
    }
    let st = strides(&xd);
    take(x, out, 0, |idx| {
        Some(perm.iter().enumerate().map(|(i, &p)| idx[i] * st[p]).sum())
    })
}

/// slice with strides.
pub(crate) fn slice(
    x: &Literal,
    spec: Option<&[SliceDim]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let spec = spec.ok_or_else(|| bad("slice without a slice attribute"))?;
    let xd = x.dims().to_vec();
    let odims = dims_of(out)?;
    if spec.len() != xd.len() || odims.len() != xd.len() {
        return Err(bad("slice rank mismatch"));
    }
    for (d, s) in spec.iter().enumerate() {
        let ok = s.stride > 0
            && s.start >= 0
            && s.start <= s.limit
            && s.limit <= xd[d] as i64
            && odims[d] as i64 == (s.limit - s.start + s.stride - 1) / s.stride;
        if !ok {
            return Err(bad(format!(
                "slice {s:?} does not fit dimension {d} of {}",
                x.shape()
            )));
        }
    }
    take_strided(x, out, |d, idx| {
        spec[d].start as usize + idx[d] * spec[d].stride as usize
    })
}

/// The elements of `x` at, per index `idx` of `out`, the operand index
/// whose dimension `d` is `at(d, idx)`.
fn take_strided(
    x: &Literal,
    out: &ArrayShape,
    at: impl Fn(usize, &[usize]) -> usize,
) -> Result<Literal, OpError> {
    let st = strides(x.dims());
    take(x, out, 0, |idx| {
        Some((0..st.len()).map(|d| at(d, idx) * st[d]).sum())
    })
}

/// concatenate along `dimensions[0]`.
pub(crate) fn concatenate(
    xs: &[&Literal],
    dims: Option<&[i64]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let first = xs.first().ok_or_else(|| bad("concatenate of nothing"))?;
    let rank = first.dims().len();
    let d = dim_list(dims, rank, "concatenate dimension")?
        .first()
        .copied()
        .ok_or_else(|| bad("concatenate without a dimension"))?;
    let odims = dims_of(out)?;
    let mut offsets = Vec::with_capacity(xs.len());
    let mut total = 0;
    for x in xs {
        let xd = x.dims();
        if xd.len() != rank
            || x.dtype() != out.dtype
            || (0..rank).any(|k| k != d && xd[k] != odims.get(k).copied().unwrap_or(usize::MAX))
        {
            return Err(bad(format!("cannot concatenate {} into {out}", x.shape())));
        }
        offsets.push(total);
        total += xd[d];
    }
    if odims.len() != rank || odims[d] != total {
        return Err(bad(format!(
            "concatenation gives {total} along dimension {d}, not {out}"
        )));
    }
    let all: Vec<Vec<u64>> = xs.iter().map(|x| bits(x)).collect();
    let st: Vec<Vec<usize>> = xs.iter().map(|x| strides(x.dims())).collect();
    let n = crate::literal::check_size(out)?;
    let mut z = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank];
    if n > 0 {
        loop {
            let k = offsets.partition_point(|&o| o <= idx[d]) - 1;
            let flat: usize = (0..rank)
                .map(|j| {
                    if j == d {
                        (idx[j] - offsets[k]) * st[k][j]
                    } else {
                        idx[j] * st[k][j]
                    }
                })
                .sum();
            z.push(all[k][flat]);
            if !super::data::next_index(&mut idx, &odims) {
                break;
            }
        }
    }
    from_bits(out, &z)
}

/// pad with low/high (possibly negative) and interior padding.
pub(crate) fn pad(
    x: &Literal,
    value: &Literal,
    spec: Option<&[PadDim]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let spec = spec.ok_or_else(|| bad("pad without padding"))?;
    let xd = x.dims().to_vec();
    let odims = dims_of(out)?;
    if spec.len() != xd.len()
        || odims.len() != xd.len()
        || value.element_count() != 1
        || value.dtype() != x.dtype()
    {
        return Err(bad("pad operands do not match the padding"));
    }
    for (d, p) in spec.iter().enumerate() {
        let n = xd[d] as i64;
        let want = p.low + p.high + n + (n - 1).max(0) * p.interior;
        if p.interior < 0 || want != odims[d] as i64 {
            return Err(bad(format!(
                "padding {p:?} of dimension {d} does not give {out}"
            )));
        }
    }
    let fill = bits(value)[0];
    let st = strides(&xd);
    take(x, out, fill, |idx| {
        let mut flat = 0;
        for (d, p) in spec.iter().enumerate() {
            let q = idx[d] as i64 - p.low;
            let step = p.interior + 1;
            if q < 0 || q % step != 0 || q / step >= xd[d] as i64 {
                return None;
            }
            flat += (q / step) as usize * st[d];
        }
        Some(flat)
    })
}

/// reverse along `dimensions`.
pub(crate) fn reverse(
    x: &Literal,
    dims: Option<&[i64]>,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let xd = x.dims().to_vec();
    let rev = dim_list(dims, xd.len(), "reverse dimension")?;
    if dims_of(out)? != xd {
        return Err(bad(format!("reverse of {} does not give {out}", x.shape())));
    }
    let mut flip = vec![false; xd.len()];
    rev.iter().for_each(|&d| flip[d] = true);
    let st = strides(&xd);
    take(x, out, 0, |idx| {
        Some(
            (0..xd.len())
                .map(|d| if flip[d] { xd[d] - 1 - idx[d] } else { idx[d] } * st[d])
                .sum(),
        )
    })
}
