//! The structured steps of a random program: indexing (gather, scatter,
//! dynamic slices), reductions (reduce, reduce-window, select-and-scatter,
//! sort) and contractions (dot, convolution), each built around an
//! existing value with fresh operands of the shapes it needs.

use super::{dims_of, dtype_of, random_dims, GrowFrom, Grower, Res};
use crate::hlo::{
    ComputationBuilder, ConvDims, DotDims, ElementType, GatherDims, ScatterDims, WindowDim,
};

impl Grower<'_> {
    pub(super) fn indexing(&mut self, b: &mut ComputationBuilder<'_>, from: GrowFrom<'_>) -> Res {
        let GrowFrom { x, t, dims } = from;
        let (x, dims) = if dims.is_empty() {
            let f = self.fresh(b, 2)?;
            (f, dims_of(b, f))
        } else {
            (x, dims.to_vec())
        };
        let t = dtype_of(b, x).unwrap_or(t);
        let rank = dims.len();
        match self.rng.below(4) {
            0 => {
                let sizes: Vec<i64> = dims.iter().map(|&d| self.rng.range(1, d)).collect();
                let starts = (0..rank)
                    .map(|_| self.index(b, &[]))
                    .collect::<Result<Vec<_>, _>>()?;
                b.dynamic_slice(x, &starts, &sizes)
            }
            1 => {
                let sizes: Vec<i64> = dims.iter().map(|&d| self.rng.range(1, d)).collect();
                let u = self.value_of(b, t, &sizes)?;
                let starts = (0..rank)
                    .map(|_| self.index(b, &[]))
                    .collect::<Result<Vec<_>, _>>()?;
                b.dynamic_update_slice(x, u, &starts)
            }
            2 => {
                let g = self.rng.below(rank) as i64;
                let k = self.rng.range(1, 4);
                let idx = self.index(b, &[k, 1])?;
                let mut slice_sizes = dims.clone();
                slice_sizes[g as usize] = 1;
                let gd = GatherDims {
                    offset_dims: (1..rank as i64).collect(),
                    collapsed_slice_dims: vec![g],
                    start_index_map: vec![g],
                    index_vector_dim: 1,
                    operand_batching_dims: vec![],
                    start_indices_batching_dims: vec![],
                    slice_sizes,
                };
                b.gather(x, idx, gd, false)
            }
            _ => {
                // scatter into the main type; more updates than rows makes duplicates
                let (x, dims) = if t == self.dtype {
                    (x, dims.clone())
                } else {
                    let f = self.fresh(b, rank.clamp(1, 2))?;
                    (f, dims_of(b, f))
                };
                let rank = dims.len();
                let g = self.rng.below(rank);
                let k = self.rng.range(1, dims[g] + 2);
                let idx = self.index(b, &[k, 1])?;
                let ud: Vec<i64> = std::iter::once(k)
                    .chain(
                        dims.iter()
                            .enumerate()
                            .filter(|(d, _)| *d != g)
                            .map(|(_, &n)| n),
                    )
                    .collect();
                let mt = self.dtype;
                let u = self.value_of(b, mt, &ud)?;
                let combiner = if self.rng.chance(3, 4) {
                    self.called.add
                } else {
                    self.called.max
                };
                let sd = ScatterDims {
                    update_window_dims: (1..rank as i64).collect(),
                    inserted_window_dims: vec![g as i64],
                    scatter_dims_to_operand_dims: vec![g as i64],
                    index_vector_dim: 1,
                    input_batching_dims: vec![],
                    scatter_indices_batching_dims: vec![],
                };
                b.scatter(&[x], idx, &[u], sd, combiner)
            }
        }
    }

    pub(super) fn reduction(&mut self, b: &mut ComputationBuilder<'_>) -> Res {
        let x = match self.operand(b, true) {
            Some(v) if !dims_of(b, v).is_empty() => v,
            _ => {
                let r = self.rng.range(1, 3) as usize;
                self.fresh(b, r)?
            }
        };
        let dims = dims_of(b, x);
        let rank = dims.len();
        let t = self.dtype;
        let (lowest, highest) = match t.int_range() {
            Some((lo, hi)) => (lo as f64, hi as f64),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        };
        match self.rng.below(3) {
            0 => {
                let (reducer, identity) = match (self.rng.below(4), self.called.mul) {
                    (0, _) => (self.called.max, lowest),
                    (1, _) => (self.called.min, highest),
                    (2, Some(mul)) => (mul, 1.0),
                    _ => (self.called.add, 0.0),
                };
                let init = self.scalar_init(b, identity)?;
                let reduced: Vec<i64> = if self.rng.chance(1, 3) {
                    (0..rank as i64).collect()
                } else {
                    vec![self.rng.below(rank) as i64]
                };
                let r = b.reduce(&[x], &[init], &reduced, reducer)?;
                if self.rng.chance(1, 2) {
                    let kept: Vec<i64> =
                        (0..rank as i64).filter(|d| !reduced.contains(d)).collect();
                    b.broadcast(r, &dims, &kept)
                } else {
                    Ok(r)
                }
            }
            1 => {
                // integer add windows see padding; float windows take max/min
                let (reducer, identity) = if t.is_integer() && self.rng.chance(2, 3) {
                    (self.called.add, 0.0)
                } else if self.rng.chance(1, 2) {
                    (self.called.max, lowest)
                } else {
                    (self.called.min, highest)
                };
                let init = self.scalar_init(b, identity)?;
                let window: Vec<WindowDim> = dims
                    .iter()
                    .map(|&d| {
                        let pad_low = self.rng.range(0, 1);
                        let pad_high = self.rng.range(0, 1);
                        let size = self.rng.range(1, (d + pad_low + pad_high).min(3));
                        WindowDim {
                            stride: self.rng.range(1, 2),
                            pad_low,
                            pad_high,
                            ..WindowDim::new(size)
                        }
                    })
                    .collect();
                b.reduce_window(&[x], &[init], &window, reducer)
            }
            _ => {
                let d = self.rng.below(rank) as i64;
                if self.rng.chance(2, 3) {
                    // key-value: ties among keys show whether the sort is stable
                    let (kt, comp) = self
                        .rng
                        .pick(&self.called.key_value)
                        .unwrap_or((t, self.called.sort_lt));
                    let keys = self.param(b, kt, &dims)?;
                    let s = b.sort(&[keys, x], d, true, comp)?;
                    let k = b.get_tuple_element(s, 0)?;
                    self.values.push(k);
                    b.get_tuple_element(s, 1)
                } else {
                    let comp = if self.rng.chance(1, 2) {
                        self.called.sort_lt
                    } else {
                        self.called.sort_gt
                    };
                    b.sort(&[x], d, true, comp)
                }
            }
        }
    }

    pub(super) fn contraction(&mut self, b: &mut ComputationBuilder<'_>) -> Res {
        let t = self.dtype;
        match self.rng.below(3) {
            0 => {
                // [m,k] x [k,n], the lhs an existing rank-2 value when there is one
                let lhs = match self.operand(b, true) {
                    Some(v) if dims_of(b, v).len() == 2 => v,
                    _ => self.fresh(b, 2)?,
                };
                let ld = dims_of(b, lhs);
                let n = self.rng.range(1, 4);
                let rhs = self.value_of(b, t, &[ld[1], n])?;
                let dd = DotDims {
                    lhs_contracting: vec![1],
                    rhs_contracting: vec![0],
                    ..DotDims::default()
                };
                let wide =
                    (t == ElementType::Bf16 && self.rng.chance(1, 2)).then_some(ElementType::F32);
                b.dot(lhs, rhs, dd, wide)
            }
            1 => {
                // batched: [b,m,k] x [b,k,n] with a batch of 2 or more
                let lhs = match self.operand(b, true) {
                    Some(v) if dims_of(b, v).len() == 3 && dims_of(b, v)[0] >= 2 => v,
                    _ => {
                        let mut d = random_dims(self.rng, 3);
                        d[0] = self.rng.range(2, 3);
                        self.param(b, t, &d)?
                    }
                };
                let ld = dims_of(b, lhs);
                let n = self.rng.range(1, 3);
                let rhs = self.value_of(b, t, &[ld[0], ld[2], n])?;
                let dd = DotDims {
                    lhs_batch: vec![0],
                    rhs_batch: vec![0],
                    lhs_contracting: vec![2],
                    rhs_contracting: vec![1],
                };
                b.dot(lhs, rhs, dd, None)
            }
            _ => {
                // 1-D convolution [n, w, c] * [kw, c/g, o], feature groups g
                let g = self.rng.range(1, 3);
                let ci = self.rng.range(1, 2);
                let o = g * self.rng.range(1, 2);
                let n = self.rng.range(1, 2);
                let w = self.rng.range(2, 5);
                let kw = self.rng.range(1, w.min(3));
                let input = self.value_of(b, t, &[n, w, g * ci])?;
                let kernel = self.value_of(b, t, &[kw, ci, o])?;
                let pad = self.rng.range(0, 1);
                let window = [WindowDim {
                    stride: self.rng.range(1, 2),
                    pad_low: pad,
                    pad_high: pad,
                    ..WindowDim::new(kw)
                }];
                let cd = ConvDims::feature_last(1);
                b.convolution(input, kernel, cd, &window, g, 1, None)
            }
        }
    }
}
