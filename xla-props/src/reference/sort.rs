//! sort: stable, along one dimension, with a comparator computation; and
//! the merge sort on an index permutation that the interpreter shares.

use super::data::{bits, next_index, strides};
use super::error::bad;
use super::reduction::{assemble, out_shapes};
use super::scalar::ScalarFn;
use super::{Calls, OpError};
use crate::hlo::{ElementType, Instruction};
use crate::literal::{Literal, Value};

/// sort along `dimensions[0]`, several operands, with a comparator
/// computation. The sort is always stable (a merge sort), which is a valid
/// result for `is_stable=false` too.
pub(crate) fn sort(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Value, OpError> {
    sort_with(run, ins, ops, None)
}

/// sort, with `less` (when given) in place of the comparator's own function
/// (boxed c128 elements call it on their values).
pub(crate) fn sort_with(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
    less: Option<ScalarFn>,
) -> Result<Value, OpError> {
    let cmp = ins
        .attrs
        .to_apply
        .ok_or_else(|| bad("sort without a comparator"))?;
    let first = ops.first().ok_or_else(|| bad("sort of nothing"))?;
    let xd = first.dims().to_vec();
    if ops.iter().any(|o| o.dims() != xd.as_slice()) {
        return Err(bad("sort operands differ in shape"));
    }
    let d = ins
        .attrs
        .dimensions
        .as_deref()
        .and_then(|d| d.first())
        .and_then(|&d| usize::try_from(d).ok())
        .filter(|&d| d < xd.len())
        .ok_or_else(|| bad("sort dimension missing or out of range"))?;
    let shapes = out_shapes(ins, ops.len())?;
    let types: Vec<ElementType> = ops.iter().map(|o| o.dtype()).collect();
    let cols: Vec<Vec<u64>> = ops.iter().map(|o| bits(o)).collect();
    let mut outc = cols.clone();
    let st = strides(&xd);
    let len = xd[d];
    let mut outer_dims = xd.clone();
    outer_dims[d] = 1;
    let n_outer: usize = outer_dims.iter().product();
    let less_fn = less.unwrap_or_else(|| ScalarFn::new(run.module(), cmp));
    let mut regs = Vec::new();
    let mut args: Vec<(ElementType, u64)> = Vec::with_capacity(2 * types.len());
    let mut o = vec![0usize; xd.len()];
    for _ in 0..n_outer {
        let base: usize = o.iter().zip(&st).map(|(&i, &s)| i * s).sum();
        let pos: Vec<usize> = (0..len).map(|j| base + j * st[d]).collect();
        let mut less = |a: usize, b: usize| -> Result<bool, OpError> {
            args.clear();
            args.extend(
                types
                    .iter()
                    .zip(&cols)
                    .flat_map(|(&t, c)| [(t, c[a]), (t, c[b])]),
            );
            Ok(less_fn.apply(run, &args, &[ElementType::Pred], &mut regs)?[0] & 1 == 1)
        };
        let sorted = merge_sort(pos.clone(), &mut less)?;
        for (c, oc) in cols.iter().zip(outc.iter_mut()) {
            for (&dst, &src) in pos.iter().zip(&sorted) {
                oc[dst] = c[src];
            }
        }
        next_index(&mut o, &outer_dims);
    }
    assemble(ins, &shapes, &types, outc)
}

/// A stable merge sort with a fallible `less`; never panics on an
/// inconsistent comparator (it just produces some permutation).
pub(crate) fn merge_sort<E>(
    mut v: Vec<usize>,
    less: &mut dyn FnMut(usize, usize) -> Result<bool, E>,
) -> Result<Vec<usize>, E> {
    let n = v.len();
    let mut buf = vec![0usize; n];
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                // take from the right only when it is strictly less: stable
                if less(v[j], v[i])? {
                    buf[k] = v[j];
                    j += 1;
                } else {
                    buf[k] = v[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&v[i..mid]);
            k += mid - i;
            buf[k..k + (hi - j)].copy_from_slice(&v[j..hi]);
            lo = hi;
        }
        std::mem::swap(&mut v, &mut buf);
        width *= 2;
    }
    Ok(v)
}
