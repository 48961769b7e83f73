//! `chlo.mulhi` and `chlo.ragged_dot` as HLO ops (their decompositions).
//!
//! - mulhi: the high half of the double-width product. Up to 32 bits the
//!   operands are widened, multiplied and shifted; 64-bit operands are split
//!   into 32-bit halves (the schoolbook product in u64, exact), and a signed
//!   high half is the unsigned one less `y` where `x < 0` and `x` where `y < 0`.
//! - ragged_dot: for each group, the dot with that group's right-hand side,
//!   kept on the rows of the ragged dimension the group covers (a `select`,
//!   so every kept element is the dot's own, exactly rounded result); rows
//!   past the last group are zero. The ragged dimension may be a
//!   non-contracting dimension (mode 1, the rhs has a group dimension) or a
//!   batch dimension (mode 3); a ragged contracting dimension (mode 2) gives
//!   one dot per group over the group's part of the contraction, stacked in
//!   a new leading dimension. Group sizes are one list (`[g]`).

use super::build::{err, Builder, R};
use super::syntax::{Attr, Op, Type};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, ComparisonDirection, ConstantData, DotDims, InstrId, SliceDim};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

fn push(b: &mut Builder, op: Opcode, t: ElementType, dims: &[i64], xs: Vec<InstrId>) -> InstrId {
    b.push(op, Shape::array(t, dims.to_vec()), xs, Attrs::default())
}

/// The scalar constant `v` of type `t`, broadcast to `dims`.
fn splat(b: &mut Builder, t: ElementType, dims: &[i64], v: i128) -> InstrId {
    let data = if t.is_float() {
        ConstantData::Float(vec![v as f64])
    } else if t.is_pred() {
        ConstantData::Pred(vec![v != 0])
    } else {
        ConstantData::Int(vec![v])
    };
    let k = b.push(
        Opcode::Constant,
        Shape::scalar(t),
        vec![],
        Attrs {
            constant: Some(data),
            ..Attrs::default()
        },
    );
    broadcast_scalar(b, k, t, dims)
}

fn broadcast_scalar(b: &mut Builder, k: InstrId, t: ElementType, dims: &[i64]) -> InstrId {
    if dims.is_empty() {
        return k;
    }
    b.push(
        Opcode::Broadcast,
        Shape::array(t, dims.to_vec()),
        vec![k],
        Attrs {
            dimensions: Some(vec![]),
            ..Attrs::default()
        },
    )
}

fn compare(
    b: &mut Builder,
    d: ComparisonDirection,
    x: InstrId,
    y: InstrId,
    dims: &[i64],
) -> InstrId {
    b.push(
        Opcode::Compare,
        Shape::array(ElementType::Pred, dims.to_vec()),
        vec![x, y],
        Attrs {
            direction: Some(d),
            ..Attrs::default()
        },
    )
}

/// The same-signedness integer type of twice the width, if there is one.
fn wider(t: ElementType) -> Option<ElementType> {
    use ElementType as E;
    Some(match t {
        E::S4 => E::S8,
        E::S8 => E::S16,
        E::S16 => E::S32,
        E::S32 => E::S64,
        E::U4 => E::U8,
        E::U8 => E::U16,
        E::U16 => E::U32,
        E::U32 => E::U64,
        _ => return None,
    })
}

/// `chlo.mulhi(x, y)`: the high half of the double-width product.
pub(super) fn mulhi(op: &Op, b: &mut Builder, ops: &[InstrId]) -> R<Vec<InstrId>> {
    let pos = op.pos;
    let [x, y] = ops[..] else {
        return err(pos, "mulhi takes two operands");
    };
    let (dims, t) = b.array(x, pos)?;
    if b.array(y, pos)? != (dims.clone(), t) || !t.is_integer() {
        return err(pos, "mulhi takes two integer operands of one type");
    }
    let bits = i128::from(t.bit_width());
    if let Some(w) = wider(t) {
        let xw = push(b, Opcode::Convert, w, &dims, vec![x]);
        let yw = push(b, Opcode::Convert, w, &dims, vec![y]);
        let p = push(b, Opcode::Multiply, w, &dims, vec![xw, yw]);
        let n = splat(b, w, &dims, bits);
        let shift = if t.is_signed_int() {
            Opcode::ShiftRightArithmetic
        } else {
            Opcode::ShiftRightLogical
        };
        let hi = push(b, shift, w, &dims, vec![p, n]);
        return Ok(vec![push(b, Opcode::Convert, t, &dims, vec![hi])]);
    }
    if bits != 64 {
        return err(pos, format!("mulhi of {t} is not read"));
    }
    let u = ElementType::U64;
    let (a, c) = if t.is_signed_int() {
        (
            push(b, Opcode::BitcastConvert, u, &dims, vec![x]),
            push(b, Opcode::BitcastConvert, u, &dims, vec![y]),
        )
    } else {
        (x, y)
    };
    let mask = splat(b, u, &dims, 0xFFFF_FFFF);
    let n32 = splat(b, u, &dims, 32);
    let d = &dims[..];
    let lo = |b: &mut Builder, v| push(b, Opcode::And, u, d, vec![v, mask]);
    let hi = |b: &mut Builder, v| push(b, Opcode::ShiftRightLogical, u, d, vec![v, n32]);
    let mul = |b: &mut Builder, p, q| push(b, Opcode::Multiply, u, d, vec![p, q]);
    let add = |b: &mut Builder, p, q| push(b, Opcode::Add, u, d, vec![p, q]);
    let (al, ah, cl, ch) = (lo(b, a), hi(b, a), lo(b, c), hi(b, c));
    let (ll, lh) = (mul(b, al, cl), mul(b, al, ch));
    let (hl, hh) = (mul(b, ah, cl), mul(b, ah, ch));
    // the middle column: at most 3 (2^32 - 1), no overflow
    let (ll_hi, lh_lo, hl_lo) = (hi(b, ll), lo(b, lh), lo(b, hl));
    let mid0 = add(b, ll_hi, lh_lo);
    let mid = add(b, mid0, hl_lo);
    let carry = hi(b, mid);
    let (lh_hi, hl_hi) = (hi(b, lh), hi(b, hl));
    let h0 = add(b, hh, lh_hi);
    let h1 = add(b, h0, hl_hi);
    let high = add(b, h1, carry);
    if !t.is_signed_int() {
        return Ok(vec![high]);
    }
    let zero_s = splat(b, t, d, 0);
    let zero_u = splat(b, u, d, 0);
    let fix = |b: &mut Builder, h: InstrId, sign_of: InstrId, other: InstrId| {
        let neg = compare(b, ComparisonDirection::Lt, sign_of, zero_s, d);
        let sub = push(b, Opcode::Select, u, d, vec![neg, other, zero_u]);
        push(b, Opcode::Subtract, u, d, vec![h, sub])
    };
    let h = fix(b, high, x, c);
    let hi = fix(b, h, y, a);
    Ok(vec![push(b, Opcode::BitcastConvert, t, &dims, vec![hi])])
}

/// The integer list field `name` of a `#chlo.ragged_dot<...>` attribute.
fn field(fields: &[(String, Attr)], name: &str, pos: usize) -> R<Vec<i64>> {
    let bad = || {
        (
            pos,
            format!("ragged_dot: `{name}` must be a list of integers"),
        )
    };
    match fields.iter().find(|(k, _)| k == name).map(|(_, v)| v) {
        None => Ok(Vec::new()),
        Some(Attr::Array(v)) => Ok(v.clone()),
        Some(Attr::List(items)) => items
            .iter()
            .map(|a| match a {
                Attr::Int(v) => i64::try_from(*v).map_err(|_| bad()),
                _ => Err(bad()),
            })
            .collect(),
        Some(_) => Err(bad()),
    }
}

/// One element of `v` along its only dimension, as a scalar.
fn element(b: &mut Builder, v: InstrId, k: i64, t: ElementType) -> InstrId {
    let s = b.push(
        Opcode::Slice,
        Shape::array(t, vec![1]),
        vec![v],
        Attrs {
            slice: Some(vec![SliceDim {
                start: k,
                limit: k + 1,
                stride: 1,
            }]),
            ..Attrs::default()
        },
    );
    push(b, Opcode::Reshape, t, &[], vec![s])
}

/// Where each group starts and ends along the ragged dimension (scalars of
/// the group sizes' type): running sums of the sizes.
fn group_bounds(b: &mut Builder, sizes: InstrId, pos: usize) -> R<Vec<(InstrId, InstrId)>> {
    let (gd, gt) = b.array(sizes, pos)?;
    let [g] = gd[..] else {
        return err(pos, "ragged_dot: group sizes must be one list `[g]`");
    };
    let mut start = splat(b, gt, &[], 0);
    let mut out = Vec::new();
    for k in 0..g {
        let n = element(b, sizes, k, gt);
        let end = push(b, Opcode::Add, gt, &[], vec![start, n]);
        out.push((start, end));
        start = end;
    }
    Ok(out)
}

/// Whether the index along dimension `d` of `dims` lies in `[start, end)`.
fn in_group(
    b: &mut Builder,
    dims: &[i64],
    d: usize,
    (start, end): (InstrId, InstrId),
    gt: ElementType,
) -> InstrId {
    let iota = b.push(
        Opcode::Iota,
        Shape::array(gt, dims.to_vec()),
        vec![],
        Attrs {
            iota_dimension: Some(d as i64),
            ..Attrs::default()
        },
    );
    let s = broadcast_scalar(b, start, gt, dims);
    let e = broadcast_scalar(b, end, gt, dims);
    let ge = compare(b, ComparisonDirection::Ge, iota, s, dims);
    let lt = compare(b, ComparisonDirection::Lt, iota, e, dims);
    push(b, Opcode::And, ElementType::Pred, dims, vec![ge, lt])
}

/// `chlo.ragged_dot(lhs, rhs, group_sizes)`.
pub(super) fn ragged_dot(op: &Op, b: &mut Builder, ops: &[InstrId]) -> R<Vec<InstrId>> {
    let pos = op.pos;
    let [lhs, rhs, sizes] = ops[..] else {
        return err(pos, "ragged_dot takes lhs, rhs and group sizes");
    };
    let Some(Attr::Struct(_, f)) = op.attr("ragged_dot_dimension_numbers") else {
        return err(pos, "ragged_dot needs `ragged_dot_dimension_numbers`");
    };
    let [Type::Tensor(out_dims, out_t)] = op.result_types.as_slice() else {
        return err(pos, "ragged_dot has one tensor result");
    };
    let dd = DotDims {
        lhs_batch: field(f, "lhs_batching_dimensions", pos)?,
        rhs_batch: field(f, "rhs_batching_dimensions", pos)?,
        lhs_contracting: field(f, "lhs_contracting_dimensions", pos)?,
        rhs_contracting: field(f, "rhs_contracting_dimensions", pos)?,
    };
    let ragged = field(f, "lhs_ragged_dimensions", pos)?;
    let group = field(f, "rhs_group_dimensions", pos)?;
    let [r] = ragged[..] else {
        return err(pos, "ragged_dot needs one lhs ragged dimension");
    };
    let (lhs_dims, _) = b.array(lhs, pos)?;
    let gt = b.array(sizes, pos)?.1;
    let bounds = group_bounds(b, sizes, pos)?;
    if let Some(k) = dd.lhs_contracting.iter().position(|&c| c == r) {
        if !group.is_empty() {
            return err(
                pos,
                "ragged_dot: a ragged contracting dimension with an rhs group dimension",
            );
        }
        return ragged_contracting(
            b,
            (lhs, rhs),
            &dd,
            k,
            (&bounds, gt),
            (out_dims, *out_t),
            pos,
        );
    }
    // the ragged dimension's place in the dot's output
    let out_pos = if let Some(k) = dd.lhs_batch.iter().position(|&c| c == r) {
        k
    } else {
        let free = (0..lhs_dims.len() as i64)
            .filter(|d| !dd.lhs_batch.contains(d) && !dd.lhs_contracting.contains(d));
        let k = free.into_iter().position(|d| d == r).ok_or((
            pos,
            format!("ragged_dot: ragged dimension {r} out of range"),
        ))?;
        dd.lhs_batch.len() + k
    };
    let mut acc = splat(b, *out_t, out_dims, 0);
    for (k, &gb) in bounds.iter().enumerate() {
        let (rhs_k, dd_k) = match group[..] {
            [] => (rhs, dd.clone()),
            [g] => {
                let gu =
                    usize::try_from(g).map_err(|_| (pos, "bad group dimension".to_string()))?;
                let less = |v: &[i64]| v.iter().map(|&d| if d > g { d - 1 } else { d }).collect();
                let dd_k = DotDims {
                    rhs_batch: less(&dd.rhs_batch),
                    rhs_contracting: less(&dd.rhs_contracting),
                    ..dd.clone()
                };
                (b.take_index(rhs, gu, k as i64, pos)?, dd_k)
            }
            _ => return err(pos, "ragged_dot: at most one rhs group dimension"),
        };
        let dot = b.push(
            Opcode::Dot,
            Shape::array(*out_t, out_dims.clone()),
            vec![lhs, rhs_k],
            Attrs {
                dot_dims: Some(dd_k),
                ..Attrs::default()
            },
        );
        let keep = in_group(b, out_dims, out_pos, gb, gt);
        acc = push(b, Opcode::Select, *out_t, out_dims, vec![keep, dot, acc]);
    }
    Ok(vec![acc])
}

/// Mode 2: the ragged dimension is the `k`-th contracting one; the output
/// stacks one dot per group (the lhs zero outside the group's part).
fn ragged_contracting(
    b: &mut Builder,
    (lhs, rhs): (InstrId, InstrId),
    dd: &DotDims,
    k: usize,
    (bounds, gt): (&[(InstrId, InstrId)], ElementType),
    (out_dims, out_t): (&[i64], ElementType),
    pos: usize,
) -> R<Vec<InstrId>> {
    let (lhs_dims, lt) = b.array(lhs, pos)?;
    if bounds.is_empty() || out_dims.first() != Some(&(bounds.len() as i64)) {
        return err(
            pos,
            "ragged_dot: the result's first dimension must be the group count",
        );
    }
    let one: Vec<i64> = out_dims[1..].to_vec();
    let r = dd.lhs_contracting[k] as usize;
    let zero = splat(b, lt, &lhs_dims, 0);
    let mut parts = Vec::new();
    for &gb in bounds {
        let keep = in_group(b, &lhs_dims, r, gb, gt);
        let masked = push(b, Opcode::Select, lt, &lhs_dims, vec![keep, lhs, zero]);
        let dot = b.push(
            Opcode::Dot,
            Shape::array(out_t, one.clone()),
            vec![masked, rhs],
            Attrs {
                dot_dims: Some(dd.clone()),
                ..Attrs::default()
            },
        );
        let mut d1 = vec![1];
        d1.extend(one.iter().copied());
        parts.push(push(b, Opcode::Reshape, out_t, &d1, vec![dot]));
    }
    Ok(vec![b.push(
        Opcode::Concatenate,
        Shape::array(out_t, out_dims.to_vec()),
        parts,
        Attrs {
            dimensions: Some(vec![0]),
            ..Attrs::default()
        },
    )])
}
