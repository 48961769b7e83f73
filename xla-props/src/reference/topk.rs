//! topk: the `k` largest (or, with `largest=false`, smallest) elements of
//! each row along the last dimension, with their indices, as XLA defines it
//! (`xla::TopK`): values sorted largest first, ties broken by the lower
//! index; floats ordered by the total order (`-NaN < -inf < ... < -0 < +0 <
//! ... < inf < +NaN`, the comparator XLA's TopK expander sorts with).

use super::data::{bits, from_bits};
use super::elementwise::total_order_key;
use super::error::bad;
use super::OpError;
use crate::hlo::{ElementType, Instruction, Shape};
use crate::literal::{Literal, Value};

/// `k=` and `largest=` of a topk instruction (largest defaults to true).
pub(crate) fn topk_attrs(ins: &Instruction) -> Result<(usize, bool), OpError> {
    let raw = |name: &str| {
        ins.attrs
            .other
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.trim())
    };
    let k = raw("k")
        .ok_or_else(|| bad("topk without k="))?
        .parse::<usize>()
        .map_err(|_| bad("topk: k= must be a non-negative integer"))?;
    let largest = match raw("largest") {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => return Err(bad(format!("topk: largest={v} is not true or false"))),
    };
    Ok((k, largest))
}

/// The sort key of a bit pattern of type `t` (larger key: larger value).
fn key(b: u64, t: ElementType) -> i128 {
    let w = t.bit_width();
    if t.is_float() {
        total_order_key(b, w)
    } else if t.is_signed_int() {
        // sign-extend
        let shift = 128 - w;
        ((b as i128) << shift) >> shift
    } else {
        b as i128
    }
}

/// The order of one row's positions: largest (or smallest) first, ties by
/// the lower index.
pub(crate) fn row_order(keys: &[i128], largest: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        let o = keys[a].cmp(&keys[b]);
        let o = if largest { o.reverse() } else { o };
        o.then(a.cmp(&b))
    });
    order
}

/// topk of `x` along its last dimension, as the tuple (values, s32 indices).
pub(crate) fn topk(ins: &Instruction, x: &Literal) -> Result<Value, OpError> {
    let (k, largest) = topk_attrs(ins)?;
    let Shape::Tuple(outs) = &ins.shape else {
        return Err(bad("topk must have a tuple shape (values, indices)"));
    };
    let (Some(vs), Some(is)) = (
        outs.first().and_then(Shape::as_array),
        outs.get(1).and_then(Shape::as_array),
    ) else {
        return Err(bad("topk must have a tuple shape (values, indices)"));
    };
    if x.dtype().is_complex() {
        return Err(OpError::Unsupported("topk of complex values".into()));
    }
    let dims = x.dims();
    let n = *dims.last().ok_or_else(|| bad("topk of a scalar"))?;
    if k > n {
        return Err(bad(format!("topk: k={k} exceeds the last dimension ({n})")));
    }
    let rows = x.element_count().checked_div(n).unwrap_or(0);
    let t = x.dtype();
    let b = bits(x);
    let mut values = Vec::with_capacity(rows * k);
    let mut indices = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let row = &b[r * n..(r + 1) * n];
        let keys: Vec<i128> = row.iter().map(|&v| key(v, t)).collect();
        for &j in row_order(&keys, largest).iter().take(k) {
            values.push(row[j]);
            indices.push(j as u64);
        }
    }
    Ok(Value::Tuple(vec![
        Value::Array(from_bits(vs, &values)?),
        Value::Array(from_bits(is, &indices)?),
    ]))
}
