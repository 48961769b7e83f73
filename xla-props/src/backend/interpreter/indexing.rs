//! gather and scatter index arithmetic (XLA semantics, including batching dims).

use super::elem::{err, int_values, next_index, strides, Res};
use crate::hlo::{GatherDims, ScatterDims};
use crate::literal::Literal;

fn to_usizes(v: &[i64], bound: usize, what: &str) -> Res<Vec<usize>> {
    v.iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d < bound))
        .collect::<Option<Vec<_>>>()
        .map_or_else(
            || {
                err(format!(
                    "{what}: dimension list {v:?} out of range (rank {bound})"
                ))
            },
            Ok,
        )
}

/// Reads start index vectors: `indices` with the index vector along `ivd`
/// (implicit trailing dimension of size 1 when `ivd == rank`).
struct StartIndices {
    vals: Vec<i64>,
    strides: Vec<usize>,
    ivd: usize,
    rank: usize,
    /// The batch dims (all dims but ivd).
    batch_dims: Vec<usize>,
}

impl StartIndices {
    fn new(indices: &Literal, ivd: i64, what: &str) -> Res<StartIndices> {
        let dims = indices.dims().to_vec();
        let rank = dims.len();
        let ivd = usize::try_from(ivd)
            .ok()
            .filter(|&d| d <= rank)
            .map_or_else(
                || err(format!("{what}: index_vector_dim {ivd} out of range")),
                Ok,
            )?;
        let batch_dims = (0..rank).filter(|&d| d != ivd).map(|d| dims[d]).collect();
        Ok(StartIndices {
            vals: int_values(indices, what)?,
            strides: strides(&dims),
            ivd,
            rank,
            batch_dims,
        })
    }
    fn vector_len(&self, dims: &[usize]) -> usize {
        if self.ivd == self.rank {
            1
        } else {
            dims[self.ivd]
        }
    }
    /// Element `k` of the index vector at batch coordinates `g`.
    fn get(&self, g: &[usize], k: usize) -> i64 {
        let mut flat = 0;
        let mut gi = 0;
        for d in 0..self.rank {
            let c = if d == self.ivd {
                k
            } else {
                gi += 1;
                g[gi - 1]
            };
            flat += c * self.strides[d];
        }
        self.vals[flat]
    }
    /// Batch coordinate position of indices dim `d`.
    fn batch_pos(&self, d: usize) -> usize {
        if d < self.ivd {
            d
        } else {
            d - 1
        }
    }
}

/// The dimension numbers gather and scatter share, in gather's terms
/// (scatter's in brackets).
struct Roles {
    /// Result [update] dims that index within the slice [window].
    offset: Vec<usize>,
    /// Operand dims of size one the slice leaves out [inserted window dims].
    collapsed: Vec<usize>,
    /// Operand batching dims [input batching dims].
    op_batching: Vec<usize>,
    /// Their partners among the indices' dims.
    idx_batching: Vec<usize>,
    /// The operand dim each element of an index vector starts
    /// [scatter dims to operand dims].
    start_map: Vec<usize>,
}

impl Roles {
    /// The operand dims the slice spans and the result dims that run over
    /// the indices' batch, checked against the result's `dims` and the
    /// indices; errors name `op`, the `result` it makes and, where the
    /// batch does not match, say `batch_mismatch`.
    fn spans(
        &self,
        rank: usize,
        dims: &[usize],
        si: &StartIndices,
        indices: &Literal,
        (op, result, batch_mismatch): (&str, &str, &str),
    ) -> Res<(Vec<usize>, Vec<usize>)> {
        let operand: Vec<usize> = (0..rank)
            .filter(|d| !self.collapsed.contains(d) && !self.op_batching.contains(d))
            .collect();
        let batch: Vec<usize> = (0..dims.len())
            .filter(|d| !self.offset.contains(d))
            .collect();
        if operand.len() != self.offset.len()
            || batch.len() != si.batch_dims.len()
            || self.start_map.len() != si.vector_len(indices.dims())
            || self.op_batching.len() != self.idx_batching.len()
        {
            return err(format!("{op}: dimension numbers are inconsistent with the operand, indices and {result} shapes"));
        }
        if batch
            .iter()
            .zip(&si.batch_dims)
            .any(|(&d, &n)| dims[d] != n)
            || self.idx_batching.contains(&si.ivd)
        {
            return err(format!("{op}: {batch_mismatch}"));
        }
        Ok((operand, batch))
    }

    /// Calls `f` with every position of the result's `dims`, in row-major
    /// order, and where its slice starts in the operand of rank `rank`: its
    /// index vector along `start_map`, its batch coordinates (those of the
    /// `batch` dims) along the batching dims, 0 elsewhere.
    fn each_start(
        &self,
        si: &StartIndices,
        batch: &[usize],
        rank: usize,
        dims: &[usize],
        mut f: impl FnMut(&[usize], &[i64]) -> Res<()>,
    ) -> Res<()> {
        let n: usize = dims.iter().product();
        let mut at = vec![0usize; dims.len()];
        let mut gvec = vec![0usize; batch.len()];
        let mut start = vec![0i64; rank];
        for _ in 0..n {
            for (j, &d) in batch.iter().enumerate() {
                gvec[j] = at[d];
            }
            start.iter_mut().for_each(|s| *s = 0);
            for (k, &d) in self.start_map.iter().enumerate() {
                start[d] = si.get(&gvec, k);
            }
            for (&od, &idd) in self.op_batching.iter().zip(&self.idx_batching) {
                start[od] = gvec[si.batch_pos(idd)] as i64;
            }
            f(&at, &start)?;
            next_index(&mut at, dims);
        }
        Ok(())
    }
}

/// Source flat index of every output element of a gather.
pub(crate) fn gather_indices(
    x: &Literal,
    indices: &Literal,
    g: &GatherDims,
    out_dims: &[usize],
) -> Res<Vec<usize>> {
    let op_dims = x.dims().to_vec();
    let rank = op_dims.len();
    let si = StartIndices::new(indices, g.index_vector_dim, "gather")?;
    let out_rank = out_dims.len();
    let roles = Roles {
        offset: to_usizes(&g.offset_dims, out_rank, "gather offset_dims")?,
        collapsed: to_usizes(&g.collapsed_slice_dims, rank, "gather collapsed_slice_dims")?,
        op_batching: to_usizes(
            &g.operand_batching_dims,
            rank,
            "gather operand_batching_dims",
        )?,
        idx_batching: to_usizes(
            &g.start_indices_batching_dims,
            si.rank,
            "gather start_indices_batching_dims",
        )?,
        start_map: to_usizes(&g.start_index_map, rank, "gather start_index_map")?,
    };
    let sizes: Vec<usize> = g
        .slice_sizes
        .iter()
        .zip(&op_dims)
        .map(|(&z, &d)| usize::try_from(z).ok().filter(|&z| z <= d))
        .collect::<Option<_>>()
        .filter(|v: &Vec<usize>| v.len() == rank)
        .map_or_else(
            || {
                err(format!(
                    "gather: slice_sizes {:?} do not fit {}",
                    g.slice_sizes,
                    x.shape()
                ))
            },
            Ok,
        )?;
    let (offset_operand, batch_out) = roles.spans(
        rank,
        out_dims,
        &si,
        indices,
        (
            "gather",
            "result",
            "result batch dimensions do not match the start indices",
        ),
    )?;
    let op_strides = strides(&op_dims);
    let mut out = Vec::with_capacity(out_dims.iter().product());
    roles.each_start(&si, &batch_out, rank, out_dims, |o, start| {
        let mut flat = 0usize;
        for d in 0..rank {
            let s = start[d].clamp(0, (op_dims[d] - sizes[d]) as i64) as usize;
            flat += s * op_strides[d];
        }
        for (j, &od) in offset_operand.iter().enumerate() {
            let off = o[roles.offset[j]];
            if off >= sizes[od] {
                return err("gather: result shape exceeds the slice sizes");
            }
            flat += off * op_strides[od];
        }
        if flat >= x.element_count() {
            return err("gather: index out of range");
        }
        out.push(flat);
        Ok(())
    })?;
    Ok(out)
}

/// For a scatter: (operand flat index, update flat index) pairs in update
/// order; updates whose window would leave the operand are dropped.
pub(crate) fn scatter_pairs(
    op_dims: &[usize],
    indices: &Literal,
    up_dims: &[usize],
    s: &ScatterDims,
) -> Res<Vec<(usize, usize)>> {
    let rank = op_dims.len();
    let si = StartIndices::new(indices, s.index_vector_dim, "scatter")?;
    let up_rank = up_dims.len();
    let roles = Roles {
        offset: to_usizes(&s.update_window_dims, up_rank, "scatter update_window_dims")?,
        collapsed: to_usizes(
            &s.inserted_window_dims,
            rank,
            "scatter inserted_window_dims",
        )?,
        op_batching: to_usizes(&s.input_batching_dims, rank, "scatter input_batching_dims")?,
        idx_batching: to_usizes(
            &s.scatter_indices_batching_dims,
            si.rank,
            "scatter scatter_indices_batching_dims",
        )?,
        start_map: to_usizes(
            &s.scatter_dims_to_operand_dims,
            rank,
            "scatter scatter_dims_to_operand_dims",
        )?,
    };
    let (window_operand, scatter_up) = roles.spans(
        rank,
        up_dims,
        &si,
        indices,
        (
            "scatter",
            "updates",
            "update scatter dimensions do not match the indices",
        ),
    )?;
    let window_dims = &roles.offset;
    // window size per operand dim
    let mut wsize = vec![1usize; rank];
    for (j, &od) in window_operand.iter().enumerate() {
        wsize[od] = up_dims[window_dims[j]];
    }
    let op_strides = strides(op_dims);
    let mut pairs = Vec::with_capacity(up_dims.iter().product());
    let mut flat_u = 0usize;
    roles.each_start(&si, &scatter_up, rank, up_dims, |u, start| {
        let in_bounds = (0..rank)
            .all(|d| start[d] >= 0 && start[d] as u64 + wsize[d] as u64 <= op_dims[d] as u64);
        if in_bounds {
            let mut flat = 0usize;
            for d in 0..rank {
                flat += start[d] as usize * op_strides[d];
            }
            for (j, &od) in window_operand.iter().enumerate() {
                flat += u[window_dims[j]] * op_strides[od];
            }
            pairs.push((flat, flat_u));
        }
        flat_u += 1;
        Ok(())
    })?;
    Ok(pairs)
}
