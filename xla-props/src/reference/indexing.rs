//! dynamic-slice, dynamic-update-slice, gather, scatter.
//!
//! Out-of-range starts are clamped into range (dynamic slices, gather);
//! scatter drops every update whose whole window would not fit.

use super::data::{bits, dims_of, from_bits, i128s, indices_below, next_index, strides, take};
use super::error::{bad, out, to_apply};
use super::reduction::Combiner;
use super::scalar::ScalarFn;
use super::{Calls, OpError};
use crate::hlo::{ArrayShape, ElementType, GatherDims, Instruction, Shape};
use crate::literal::{Literal, Value};

/// Start indices given as scalars (or, in the old form, one rank-1 array).
fn starts(idx: &[&Literal], rank: usize) -> Result<Vec<i128>, OpError> {
    let v: Vec<i128> = if idx.len() == 1 && idx[0].dims().len() == 1 {
        i128s(idx[0])
    } else {
        if idx.iter().any(|l| l.element_count() != 1) {
            return Err(bad("start indices must be scalars"));
        }
        idx.iter().map(|l| i128s(l)[0]).collect()
    };
    if v.len() != rank || idx.iter().any(|l| !(l.dtype().is_integer())) {
        return Err(bad(format!("expected {rank} integer start indices")));
    }
    Ok(v)
}

fn clamp_start(s: i128, dim: usize, size: usize) -> usize {
    s.clamp(0, (dim - size) as i128) as usize
}

/// dynamic-slice: starts clamped so the slice fits.
pub(crate) fn dynamic_slice(
    x: &Literal,
    idx: &[&Literal],
    o: &ArrayShape,
) -> Result<Literal, OpError> {
    let xd = x.dims().to_vec();
    let sizes = dims_of(o)?;
    if sizes.len() != xd.len() || sizes.iter().zip(&xd).any(|(s, d)| s > d) {
        return Err(bad(format!("slice sizes {o} do not fit {}", x.shape())));
    }
    let s = starts(idx, xd.len())?;
    let st = strides(&xd);
    let begin: Vec<usize> = (0..xd.len())
        .map(|d| clamp_start(s[d], xd[d], sizes[d]))
        .collect();
    take(x, o, 0, |i| {
        Some((0..xd.len()).map(|d| (begin[d] + i[d]) * st[d]).sum())
    })
}

/// dynamic-update-slice: starts clamped so the update fits.
pub(crate) fn dynamic_update_slice(
    x: &Literal,
    upd: &Literal,
    idx: &[&Literal],
    o: &ArrayShape,
) -> Result<Literal, OpError> {
    let xd = x.dims().to_vec();
    let ud = upd.dims().to_vec();
    if ud.len() != xd.len()
        || ud.iter().zip(&xd).any(|(u, d)| u > d)
        || upd.dtype() != x.dtype()
        || o.dtype != x.dtype()
    {
        return Err(bad(format!(
            "update {} does not fit {}",
            upd.shape(),
            x.shape()
        )));
    }
    let s = starts(idx, xd.len())?;
    let begin: Vec<usize> = (0..xd.len())
        .map(|d| clamp_start(s[d], xd[d], ud[d]))
        .collect();
    let st = strides(&xd);
    let mut res = bits(x);
    let ub = bits(upd);
    if !ub.is_empty() {
        let mut u = vec![0usize; ud.len()];
        for &v in &ub {
            let flat: usize = (0..xd.len()).map(|d| (begin[d] + u[d]) * st[d]).sum();
            res[flat] = v;
            next_index(&mut u, &ud);
        }
    }
    from_bits(o, &res)
}

/// Checks a list of dims against a bound.
fn dims_below(v: &[i64], bound: usize, what: &str) -> Result<Vec<usize>, OpError> {
    indices_below(v, bound, |d| bad(format!("{what} {d} out of range")))
}

/// The shared index arithmetic of gather and scatter.
struct IndexMap {
    /// Dims of the start indices other than the index vector dim.
    idx_batch_dims: Vec<usize>,
    /// Start-index-map / scatter-dims-to-operand-dims.
    to_operand: Vec<usize>,
    /// Index vector dim (== rank of the indices when implicit).
    ivd: usize,
    /// (operand batching dim, position in idx_batch_dims).
    batching: Vec<(usize, usize)>,
    /// Operand dims that take window offsets, in order.
    window_dims: Vec<usize>,
    idx: Vec<i128>,
    ist: Vec<usize>,
}

impl IndexMap {
    #[allow(clippy::too_many_arguments)]
    fn new(
        indices: &Literal,
        ivd: i64,
        to_operand: &[i64],
        operand_batching: &[i64],
        index_batching: &[i64],
        collapsed: &[i64],
        rank: usize,
    ) -> Result<IndexMap, OpError> {
        if !indices.dtype().is_integer() {
            return Err(bad("indices must be integers"));
        }
        let id = indices.dims().to_vec();
        let ivd = usize::try_from(ivd)
            .ok()
            .filter(|&d| d <= id.len())
            .ok_or_else(|| bad("index_vector_dim out of range"))?;
        let vec_len = if ivd < id.len() { id[ivd] } else { 1 };
        let to_operand = dims_below(to_operand, rank, "index map dimension")?;
        if to_operand.len() != vec_len {
            return Err(bad(format!(
                "index vectors have {vec_len} elements but the map has {}",
                to_operand.len()
            )));
        }
        let idx_batch_dims: Vec<usize> = (0..id.len()).filter(|&d| d != ivd).collect();
        let ob = dims_below(operand_batching, rank, "operand batching dimension")?;
        let ib = dims_below(index_batching, id.len(), "indices batching dimension")?;
        if ob.len() != ib.len() {
            return Err(bad("batching dimensions do not pair up"));
        }
        let batching = ob
            .iter()
            .zip(&ib)
            .map(|(&o, &i)| {
                idx_batch_dims
                    .iter()
                    .position(|&d| d == i)
                    .map(|p| (o, p))
                    .ok_or_else(|| bad("batching dimension is the index vector dimension"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let collapsed = dims_below(collapsed, rank, "collapsed/inserted dimension")?;
        let window_dims = (0..rank)
            .filter(|d| !collapsed.contains(d) && !ob.contains(d))
            .collect();
        Ok(IndexMap {
            idx_batch_dims,
            to_operand,
            ivd,
            batching,
            window_dims,
            idx: i128s(indices),
            ist: strides(&id),
        })
    }

    /// The operand start for batch position `g` (indices dims without the vector dim).
    fn start(&self, g: &[usize], start: &mut [i128]) {
        start.iter_mut().for_each(|s| *s = 0);
        let base: usize = g
            .iter()
            .zip(&self.idx_batch_dims)
            .map(|(&i, &d)| i * self.ist[d])
            .sum();
        let step = if self.ivd < self.ist.len() {
            self.ist[self.ivd]
        } else {
            0
        };
        for (k, &od) in self.to_operand.iter().enumerate() {
            start[od] = self.idx.get(base + k * step).copied().unwrap_or(0);
        }
        for &(od, p) in &self.batching {
            start[od] = g[p] as i128;
        }
    }
}

/// gather per XLA's dimension numbers, batching dims included; starts are
/// clamped so each slice fits.
pub(crate) fn gather(
    x: &Literal,
    indices: &Literal,
    dims: Option<&GatherDims>,
    o: &ArrayShape,
) -> Result<Literal, OpError> {
    let g = dims.ok_or_else(|| bad("gather without dimension numbers"))?;
    let xd = x.dims().to_vec();
    let od = dims_of(o)?;
    let map = IndexMap::new(
        indices,
        g.index_vector_dim,
        &g.start_index_map,
        &g.operand_batching_dims,
        &g.start_indices_batching_dims,
        &g.collapsed_slice_dims,
        xd.len(),
    )?;
    let sizes = dims_below(&g.slice_sizes, usize::MAX, "slice size")?;
    let offset_dims = dims_below(&g.offset_dims, od.len(), "offset dimension")?;
    let batch_out: Vec<usize> = (0..od.len()).filter(|d| !offset_dims.contains(d)).collect();
    let id = indices.dims();
    if sizes.len() != xd.len()
        || sizes.iter().zip(&xd).any(|(s, d)| s > d)
        || map.window_dims.len() != offset_dims.len()
        || batch_out.len() != map.idx_batch_dims.len()
        || batch_out
            .iter()
            .zip(&map.idx_batch_dims)
            .any(|(&b, &i)| od[b] != id[i])
        || offset_dims
            .iter()
            .zip(&map.window_dims)
            .any(|(&o, &w)| od[o] != sizes[w])
    {
        return Err(bad(format!(
            "gather of {} with {g:?} does not give {o}",
            x.shape()
        )));
    }
    let st = strides(&xd);
    let mut start = vec![0i128; xd.len()];
    let mut gi = vec![0usize; batch_out.len()];
    take(x, o, 0, |out_idx| {
        for (k, &b) in batch_out.iter().enumerate() {
            gi[k] = out_idx[b];
        }
        map.start(&gi, &mut start);
        let mut flat = 0;
        for d in 0..xd.len() {
            flat += clamp_start(start[d], xd[d], sizes[d]) * st[d];
        }
        for (&w, &od) in map.window_dims.iter().zip(&offset_dims) {
            flat += out_idx[od] * st[w];
        }
        Some(flat)
    })
}

/// Where each element of a scatter's updates lands: the operand's flat
/// index, in row-major order of the updates, or `None` for an update whose
/// window would not fit in the operand (XLA drops it).
pub(crate) fn scatter_targets(
    ins: &Instruction,
    operand_dims: &[usize],
    indices: &Literal,
    update_dims: &[usize],
) -> Result<Vec<Option<usize>>, OpError> {
    let s = ins
        .attrs
        .scatter_dims
        .as_ref()
        .ok_or_else(|| bad("scatter without dimension numbers"))?;
    let (xd, ud) = (operand_dims, update_dims);
    let map = IndexMap::new(
        indices,
        s.index_vector_dim,
        &s.scatter_dims_to_operand_dims,
        &s.input_batching_dims,
        &s.scatter_indices_batching_dims,
        &s.inserted_window_dims,
        xd.len(),
    )?;
    let uwd = dims_below(&s.update_window_dims, ud.len(), "update window dimension")?;
    let scatter_dims: Vec<usize> = (0..ud.len()).filter(|d| !uwd.contains(d)).collect();
    let id = indices.dims();
    if uwd.len() != map.window_dims.len()
        || scatter_dims.len() != map.idx_batch_dims.len()
        || scatter_dims
            .iter()
            .zip(&map.idx_batch_dims)
            .any(|(&u, &i)| ud[u] != id[i])
    {
        return Err(bad(format!(
            "scatter of updates {ud:?} into {xd:?} does not match {s:?}"
        )));
    }
    let mut wsize = vec![1usize; xd.len()];
    for (&w, &u) in map.window_dims.iter().zip(&uwd) {
        wsize[w] = ud[u];
    }
    let st = strides(xd);
    let mut start = vec![0i128; xd.len()];
    let mut gi = vec![0usize; scatter_dims.len()];
    let mut u = vec![0usize; ud.len()];
    let count: usize = ud.iter().product();
    let mut targets = Vec::with_capacity(count);
    for _ in 0..count {
        for (j, &d) in scatter_dims.iter().enumerate() {
            gi[j] = u[d];
        }
        map.start(&gi, &mut start);
        let fits =
            (0..xd.len()).all(|d| start[d] >= 0 && start[d] + wsize[d] as i128 <= xd[d] as i128);
        targets.push(fits.then(|| {
            let mut flat = 0;
            for d in 0..xd.len() {
                flat += start[d] as usize * st[d];
            }
            for (&w, &ud_) in map.window_dims.iter().zip(&uwd) {
                flat += u[ud_] * st[w];
            }
            flat
        }));
        next_index(&mut u, ud);
    }
    Ok(targets)
}

/// scatter per XLA's dimension numbers, variadic, batching dims included.
/// Updates are applied in row-major order of the updates, one at a time, with
/// the combiner computation (so duplicate indices combine sequentially); an
/// update whose window would not fit in the operand is dropped. Which order
/// XLA applies colliding updates in is implementation-defined: the interval
/// enclosure (`reference::interval`) widens such elements.
pub(crate) fn scatter(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Value, OpError> {
    let comp = to_apply(ins)?;
    if ops.len() < 3 || ops.len() & 1 == 0 {
        return Err(bad("scatter takes N operands, indices and N updates"));
    }
    let n = (ops.len() - 1) / 2;
    let (xs, indices, ups) = (&ops[..n], ops[n], &ops[n + 1..]);
    let xd = xs[0].dims().to_vec();
    let ud = ups[0].dims().to_vec();
    if xs.iter().any(|x| x.dims() != xd.as_slice()) || ups.iter().any(|u| u.dims() != ud.as_slice())
    {
        return Err(bad("scatter operands (or updates) differ in shape"));
    }
    let types: Vec<ElementType> = xs.iter().map(|x| x.dtype()).collect();
    if ups.iter().zip(&types).any(|(u, &t)| u.dtype() != t) {
        return Err(bad("scatter updates differ in type from the operands"));
    }
    let targets = scatter_targets(ins, &xd, indices, &ud)?;
    let comb = if n == 1 {
        Combiner::of(run.module(), comp, types[0])
    } else {
        Combiner::Computation(ScalarFn::new(run.module(), comp))
    };
    let mut res: Vec<Vec<u64>> = xs.iter().map(|x| bits(x)).collect();
    let ub: Vec<Vec<u64>> = ups.iter().map(|u| bits(u)).collect();
    let mut acc = vec![0u64; n];
    let mut x = vec![0u64; n];
    for (k, target) in targets.iter().enumerate() {
        let Some(flat) = *target else { continue };
        for ((a, xj), (r, u)) in acc.iter_mut().zip(x.iter_mut()).zip(res.iter().zip(&ub)) {
            *a = r[flat];
            *xj = u[k];
        }
        let combined = comb.apply(run, &acc, &x, &types)?;
        for (r, v) in res.iter_mut().zip(combined) {
            r[flat] = v;
        }
    }
    let shapes: Vec<&ArrayShape> = match &ins.shape {
        Shape::Tuple(t) => t.iter().filter_map(Shape::as_array).collect(),
        Shape::Array(_) => vec![out(ins)?],
        Shape::Token => vec![],
    };
    if shapes.len() != n || shapes.iter().zip(&types).any(|(s, &t)| s.dtype != t) {
        return Err(bad(
            "scatter result needs one array per operand, of its type",
        ));
    }
    let lits = shapes
        .iter()
        .zip(&res)
        .map(|(s, r)| from_bits(s, r).map(Value::Array))
        .collect::<Result<Vec<_>, _>>()?;
    if ins.shape.is_tuple() {
        Ok(Value::Tuple(lits))
    } else {
        lits.into_iter()
            .next()
            .ok_or_else(|| bad("empty scatter result"))
    }
}
