//! Data movement: every op here computes a source index per output element,
//! then one typed gather moves the data.

use super::elem::{dispatch, err, make, next_index, slice_of, strides, Res};
use crate::hlo::{ArrayShape, Layout, PadDim, SliceDim};
use crate::literal::{ArrayData, Literal};

#[allow(unused_imports)]
use super::elem::Elem;

/// Marks an output element that takes the fill value.
const FILL: usize = usize::MAX;

/// Builds the output from source indices (`FILL` takes `fill`'s only element).
pub(crate) fn gather_flat(
    x: &Literal,
    idx: &[usize],
    out_dims: &[usize],
    fill: Option<&Literal>,
) -> Res<Literal> {
    dispatch!(x.data(), _a: T => {
        let s = slice_of::<T>(x, "data movement")?;
        let f: T = match fill {
            Some(l) => slice_of::<T>(l, "padding value")?.first().copied().unwrap_or_default(),
            None => T::default(),
        };
        let v: Vec<T> = idx.iter().map(|&i| if i == FILL { f } else { s[i] }).collect();
        make(x.dtype(), out_dims, v)
    })
}

/// Source indices of an affine view: `base + sum_k i_k * step_k`.
fn affine(out_dims: &[usize], base: i64, step: &[i64]) -> Vec<usize> {
    let n: usize = out_dims.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let rank = out_dims.len();
    if rank == 0 {
        out.push(base as usize);
        return out;
    }
    let inner = out_dims[rank - 1];
    let inner_step = step[rank - 1];
    let mut idx = vec![0usize; rank];
    loop {
        let row: i64 = base + (0..rank - 1).map(|k| idx[k] as i64 * step[k]).sum::<i64>();
        for j in 0..inner {
            out.push((row + j as i64 * inner_step) as usize);
        }
        if rank == 1 {
            break;
        }
        idx[rank - 1] = inner - 1;
        if !next_index(&mut idx, out_dims) {
            break;
        }
    }
    out
}

fn istrides(dims: &[usize]) -> Vec<i64> {
    strides(dims).into_iter().map(|s| s as i64).collect()
}

/// `broadcast` of `x` into `out_dims`; operand dim j goes to output dim `dims[j]`.
pub(crate) fn broadcast(x: &Literal, out_dims: &[usize], dims: &[i64]) -> Res<Literal> {
    let in_dims = x.dims();
    if dims.len() != in_dims.len() {
        return err(format!(
            "broadcast: dimensions={dims:?} has the wrong length for operand {}",
            x.shape()
        ));
    }
    let s = istrides(in_dims);
    let mut step = vec![0i64; out_dims.len()];
    for (j, &d) in dims.iter().enumerate() {
        let d = usize::try_from(d).ok().filter(|&d| d < out_dims.len());
        match d {
            Some(d) if out_dims[d] == in_dims[j] => step[d] = s[j],
            Some(d) if in_dims[j] == 1 => step[d] = 0,
            _ => {
                return err(format!(
                    "broadcast: dimensions={dims:?} does not fit operand {} into {out_dims:?}",
                    x.shape()
                ))
            }
        }
    }
    gather_flat(x, &affine(out_dims, 0, &step), out_dims, None)
}

/// `reshape` (row-major, data unchanged).
pub(crate) fn reshape(x: &Literal, out_dims: &[usize]) -> Res<Literal> {
    if out_dims.iter().product::<usize>() != x.element_count() {
        return err(format!(
            "reshape: {} has {} elements, {out_dims:?} needs a different count",
            x.shape(),
            x.element_count()
        ));
    }
    dispatch!(x.data(), _a: T => make(x.dtype(), out_dims, slice_of::<T>(x, "reshape")?.to_vec()))
}

/// Whether `p` names each dimension of `0..rank` exactly once.
fn is_permutation(p: &[i64], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    let each_once = p
        .iter()
        .all(|&d| match usize::try_from(d).ok().filter(|&d| d < rank) {
            Some(d) if !seen[d] => {
                seen[d] = true;
                true
            }
            _ => false,
        });
    each_once && p.len() == rank
}

/// `transpose`: output dim k is operand dim `perm[k]`.
pub(crate) fn transpose(x: &Literal, perm: &[i64]) -> Res<Literal> {
    let in_dims = x.dims();
    let rank = in_dims.len();
    if !is_permutation(perm, rank) {
        return err(format!(
            "transpose: dimensions={perm:?} is not a permutation of rank {rank}"
        ));
    }
    let s = istrides(in_dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| in_dims[p as usize]).collect();
    let step: Vec<i64> = perm.iter().map(|&p| s[p as usize]).collect();
    gather_flat(x, &affine(&out_dims, 0, &step), &out_dims, None)
}

/// `slice` with start/limit/stride per dim.
pub(crate) fn slice(x: &Literal, sl: &[SliceDim]) -> Res<Literal> {
    let in_dims = x.dims();
    if sl.len() != in_dims.len() {
        return err(format!(
            "slice: {} dims given for operand {}",
            sl.len(),
            x.shape()
        ));
    }
    let s = istrides(in_dims);
    let mut out_dims = Vec::new();
    let mut step = Vec::new();
    let mut base = 0i64;
    for (k, d) in sl.iter().enumerate() {
        if d.stride <= 0 || d.start < 0 || d.start > d.limit || d.limit > in_dims[k] as i64 {
            return err(format!(
                "slice: [{}:{}:{}] is out of range for dimension {k} of {}",
                d.start,
                d.limit,
                d.stride,
                x.shape()
            ));
        }
        out_dims.push(((d.limit - d.start + d.stride - 1) / d.stride) as usize);
        step.push(s[k] * d.stride);
        base += d.start * s[k];
    }
    gather_flat(x, &affine(&out_dims, base, &step), &out_dims, None)
}

/// `reverse` along `dims`.
pub(crate) fn reverse(x: &Literal, dims: &[i64]) -> Res<Literal> {
    let in_dims = x.dims().to_vec();
    let mut step = istrides(&in_dims);
    let mut base = 0i64;
    for &d in dims {
        let Some(d) = usize::try_from(d).ok().filter(|&d| d < in_dims.len()) else {
            return err(format!(
                "reverse: dimension {d} out of range for {}",
                x.shape()
            ));
        };
        if in_dims[d] > 0 {
            base += (in_dims[d] as i64 - 1) * step[d];
        }
        step[d] = -step[d];
    }
    gather_flat(x, &affine(&in_dims, base, &step), &in_dims, None)
}

/// `concatenate` along `dim`.
pub(crate) fn concatenate(xs: &[&Literal], dim: usize) -> Res<Literal> {
    let Some(first) = xs.first() else {
        return err("concatenate: no operands");
    };
    let rank = first.dims().len();
    if dim >= rank {
        return err(format!(
            "concatenate: dimension {dim} out of range for {}",
            first.shape()
        ));
    }
    let mut out_dims = first.dims().to_vec();
    out_dims[dim] = 0;
    for x in xs {
        let ok = x.dtype() == first.dtype()
            && x.dims().len() == rank
            && (0..rank).all(|k| k == dim || x.dims()[k] == first.dims()[k]);
        if !ok {
            return err(format!(
                "concatenate: operand {} does not match {}",
                x.shape(),
                first.shape()
            ));
        }
        out_dims[dim] += x.dims()[dim];
    }
    let outer: usize = out_dims[..dim].iter().product();
    dispatch!(first.data(), _a: T => {
        let srcs: Vec<&[T]> = xs.iter().map(|x| slice_of::<T>(x, "concatenate")).collect::<Res<_>>()?;
        let mut v: Vec<T> = Vec::with_capacity(out_dims.iter().product());
        let chunk: Vec<usize> = xs.iter().map(|x| x.dims()[dim..].iter().product()).collect();
        for o in 0..outer {
            for (s, &c) in srcs.iter().zip(&chunk) {
                v.extend_from_slice(&s[o * c..(o + 1) * c]);
            }
        }
        make(first.dtype(), &out_dims, v)
    })
}

/// `pad` with low/high (possibly negative) and interior padding.
pub(crate) fn pad(x: &Literal, value: &Literal, cfg: &[PadDim]) -> Res<Literal> {
    let in_dims = x.dims().to_vec();
    if cfg.len() != in_dims.len() || value.element_count() != 1 || value.dtype() != x.dtype() {
        return err(format!(
            "pad: padding config or value does not match {}",
            x.shape()
        ));
    }
    let mut out_dims = Vec::new();
    for (k, p) in cfg.iter().enumerate() {
        if p.interior < 0 {
            return err("pad: negative interior padding");
        }
        let d = in_dims[k] as i64;
        let core = if d == 0 { 0 } else { d + (d - 1) * p.interior };
        let o = p.low + p.high + core;
        if o < 0 {
            return err(format!("pad: dimension {k} would have negative size {o}"));
        }
        out_dims.push(o as usize);
    }
    let n: usize = out_dims.iter().product();
    let s = strides(&in_dims);
    let mut idx = Vec::with_capacity(n);
    let mut o = vec![0usize; out_dims.len()];
    for _ in 0..n {
        let mut src = 0usize;
        for (k, p) in cfg.iter().enumerate() {
            let q = o[k] as i64 - p.low;
            let g = p.interior + 1;
            if q < 0 || q % g != 0 || q / g >= in_dims[k] as i64 {
                src = FILL;
                break;
            }
            src += (q / g) as usize * s[k];
        }
        idx.push(src);
        next_index(&mut o, &out_dims);
    }
    gather_flat(x, &idx, &out_dims, Some(value))
}

/// The physical position of each logical (row-major) element under `layout`.
fn physical_positions(dims: &[usize], layout: &Layout) -> Res<Vec<usize>> {
    let rank = dims.len();
    let m2m = &layout.minor_to_major;
    if !is_permutation(m2m, rank) {
        return err(format!(
            "layout {layout} is not a permutation of rank {rank}"
        ));
    }
    // physical stride of each logical dim
    let mut pstride = vec![0usize; rank];
    let mut acc = 1usize;
    for &d in m2m {
        pstride[d as usize] = acc;
        acc *= dims[d as usize];
    }
    Ok(affine(
        dims,
        0,
        &pstride.iter().map(|&s| s as i64).collect::<Vec<_>>(),
    ))
}

/// `bitcast`: the bytes stay where they are; their logical meaning follows the
/// operand's and the result's layouts (row-major when absent).
pub(crate) fn bitcast(
    x: &Literal,
    from: &ArrayShape,
    to: &ArrayShape,
    out_dims: &[usize],
) -> Res<Literal> {
    let n = x.element_count();
    if out_dims.iter().product::<usize>() != n {
        return err(format!(
            "bitcast: {} and {} have different element counts",
            from, to
        ));
    }
    let x = if to.dtype != x.dtype() {
        if to.dtype.bit_width() != x.dtype().bit_width() {
            return Err(crate::backend::BackendError::unsupported(format!(
                "bitcast from {from} to {to} changes the element width"
            )));
        }
        super::elementwise::bitcast_convert(x, to.dtype, x.dims())?
    } else {
        x.clone()
    };
    let in_phys = physical_positions(x.dims(), &from.layout_or_default())?;
    let out_phys = physical_positions(out_dims, &to.layout_or_default())?;
    // logical input index at each physical position
    let mut at_phys = vec![0usize; n];
    for (logical, &p) in in_phys.iter().enumerate() {
        at_phys[p] = logical;
    }
    let idx: Vec<usize> = out_phys.iter().map(|&p| at_phys[p]).collect();
    gather_flat(&x, &idx, out_dims, None)
}

/// Clamps dynamic start indices so the slice of `sizes` fits in `dims`.
pub(crate) fn clamp_starts(starts: &[i64], dims: &[usize], sizes: &[usize]) -> Vec<usize> {
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .map(|(&s, (&d, &z))| s.clamp(0, d.saturating_sub(z) as i64) as usize)
        .collect()
}

/// `dynamic-slice` at `starts` (clamped) of `sizes`.
pub(crate) fn dynamic_slice(x: &Literal, starts: &[i64], sizes: &[i64]) -> Res<Literal> {
    let in_dims = x.dims().to_vec();
    if starts.len() != in_dims.len() || sizes.len() != in_dims.len() {
        return err(format!(
            "dynamic-slice: index count or sizes do not match {}",
            x.shape()
        ));
    }
    let sizes: Vec<usize> = sizes
        .iter()
        .zip(&in_dims)
        .map(|(&z, &d)| usize::try_from(z).ok().filter(|&z| z <= d))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            crate::backend::BackendError::Execute(format!(
                "dynamic-slice: sizes {sizes:?} do not fit {}",
                x.shape()
            ))
        })?;
    let st = clamp_starts(starts, &in_dims, &sizes);
    let s = istrides(&in_dims);
    let base: i64 = st.iter().zip(&s).map(|(&a, &b)| a as i64 * b).sum();
    gather_flat(x, &affine(&sizes, base, &s), &sizes, None)
}

/// `dynamic-update-slice` of `update` into `x` at `starts` (clamped).
pub(crate) fn dynamic_update_slice(x: &Literal, update: &Literal, starts: &[i64]) -> Res<Literal> {
    let in_dims = x.dims().to_vec();
    let up_dims = update.dims().to_vec();
    if starts.len() != in_dims.len()
        || up_dims.len() != in_dims.len()
        || up_dims.iter().zip(&in_dims).any(|(u, d)| u > d)
        || update.dtype() != x.dtype()
    {
        return err(format!(
            "dynamic-update-slice: update {} does not fit {}",
            update.shape(),
            x.shape()
        ));
    }
    let st = clamp_starts(starts, &in_dims, &up_dims);
    let s = istrides(&in_dims);
    let base: i64 = st.iter().zip(&s).map(|(&a, &b)| a as i64 * b).sum();
    let targets = affine(&up_dims, base, &s);
    dispatch!(x.data(), _a: T => {
        let mut v = slice_of::<T>(x, "dynamic-update-slice")?.to_vec();
        let u = slice_of::<T>(update, "dynamic-update-slice")?;
        for (&t, &e) in targets.iter().zip(u) {
            v[t] = e;
        }
        make(x.dtype(), &in_dims, v)
    })
}

/// A copy of `x` (layouts are metadata; values are logical).
pub(crate) fn copy(x: &Literal) -> Literal {
    x.clone()
}
