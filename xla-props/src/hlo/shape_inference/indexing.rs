//! Shape inference for dynamic slices, gather, scatter.

use super::*;

impl<'a> Infer<'a> {
    pub(super) fn scalar_indices(&self, from: usize, count: usize) -> Result<()> {
        let op = self.op;
        if self.operands.len() != from + count {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!(
                    "{op}: expects {count} start indices (one per dimension), got {}",
                    self.operands.len().saturating_sub(from)
                ),
            ));
        }
        let mut dtype = None;
        for k in from..from + count {
            let i = self.arr(k)?;
            if i.rank() != 0 || !i.dtype.is_integer() {
                return Err(operand_err(
                    op,
                    format!(
                        "start index {} must be an integer scalar, got {i}",
                        k - from
                    ),
                ));
            }
            if *dtype.get_or_insert(i.dtype) != i.dtype {
                return Err(operand_err(
                    op,
                    "start indices must all have the same element type",
                ));
            }
        }
        Ok(())
    }

    pub(super) fn dynamic_slice(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        self.scalar_indices(1, a.rank())?;
        let sizes = req(op, &self.attrs.dynamic_slice_sizes, "dynamic_slice_sizes")?;
        if sizes.len() != a.rank() {
            return Err(attr_err(
                op,
                format!("dynamic_slice_sizes {} do not match {a}", dims_text(sizes)),
            ));
        }
        for (k, (&s, &d)) in sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || s > d {
                return Err(attr_err(
                    op,
                    format!("slice size {s} of dimension {k} is outside 0..={d}"),
                ));
            }
        }
        Ok(Shape::array(a.dtype, sizes.clone()))
    }

    pub(super) fn dynamic_update_slice(&self) -> Result<Shape> {
        let op = self.op;
        let (a, u) = (self.arr(0)?, self.arr(1)?);
        if u.dtype != a.dtype
            || u.rank() != a.rank()
            || u.dims.iter().zip(&a.dims).any(|(x, y)| x > y)
        {
            return Err(operand_err(op, format!("update {u} does not fit into {a}")));
        }
        self.scalar_indices(2, a.rank())?;
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    pub(super) fn gather(&self) -> Result<Shape> {
        let op = self.op;
        let (a, ind) = (self.arr(0)?, self.arr(1)?);
        let g: &GatherDims = req(op, &self.attrs.gather_dims, "gather dimension numbers")?;
        if !ind.dtype.is_integer() {
            return Err(operand_err(
                op,
                format!("start indices must be integers, got {ind}"),
            ));
        }
        let (orank, irank) = (a.rank(), ind.rank());
        let (ivd, index_len, batch) = index_vector(op, ind, g.index_vector_dim)?;
        let out_rank = g.offset_dims.len() + batch.len();
        self.dim_set("offset_dims", &g.offset_dims, out_rank, true)?;
        let dims = self.index_dims(
            GATHER_BATCHING,
            (orank, irank),
            [
                &g.collapsed_slice_dims,
                &g.operand_batching_dims,
                &g.start_indices_batching_dims,
                &g.start_index_map,
            ],
        )?;
        if dims.map.len() as i64 != index_len {
            return Err(attr_err(
                op,
                format!("start_index_map {} must have {index_len} entries (the index vector size of {ind})", dims_text(&g.start_index_map)),
            ));
        }
        dims.check_batching(op, ivd)?;
        let IndexDims {
            windowless: collapsed,
            obatch,
            sbatch,
            ..
        } = dims;
        if g.offset_dims.len() + collapsed.len() + obatch.len() != orank {
            return Err(attr_err(
                op,
                format!("offset_dims, collapsed_slice_dims and operand_batching_dims must cover the {orank} operand dimensions"),
            ));
        }
        if g.slice_sizes.len() != orank {
            return Err(attr_err(
                op,
                format!("slice_sizes {} do not match {a}", dims_text(&g.slice_sizes)),
            ));
        }
        for (k, (&s, &d)) in g.slice_sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || s > d {
                return Err(attr_err(
                    op,
                    format!("slice size {s} of dimension {k} is outside 0..={d}"),
                ));
            }
            if (collapsed.contains(&k) || obatch.contains(&k)) && s > 1 {
                return Err(attr_err(op, format!("collapsed or batching dimension {k} must have slice size at most 1, got {s}")));
            }
        }
        check_batch_sizes(op, "operand", (a, ind), &obatch, &sbatch)?;
        let offsets: Vec<i64> = (0..orank)
            .filter(|k| !collapsed.contains(k) && !obatch.contains(k))
            .map(|k| g.slice_sizes[k])
            .collect();
        let (mut oi, mut bi) = (offsets.iter(), batch.iter());
        let mut dims = Vec::with_capacity(out_rank);
        for i in 0..out_rank {
            let next = if g.offset_dims.contains(&(i as i64)) {
                oi.next()
            } else {
                bi.next()
            };
            dims.push(*next.ok_or_else(|| attr_err(op, "inconsistent gather dimension numbers"))?);
        }
        Ok(Shape::array(a.dtype, dims))
    }

    pub(super) fn scatter(&self) -> Result<Shape> {
        let op = self.op;
        let n_ops = self.operands.len();
        if n_ops.is_multiple_of(2) {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!(
                    "{op}: expects N inputs, indices and N updates (an odd count), got {n_ops}"
                ),
            ));
        }
        let n = (n_ops - 1) / 2;
        let sd: &ScatterDims = req(op, &self.attrs.scatter_dims, "scatter dimension numbers")?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let a = self.arr(0)?;
        let ind = self.arr(n)?;
        let u0 = self.arr(n + 1)?;
        for k in 0..n {
            let (x, u) = (self.arr(k)?, self.arr(n + 1 + k)?);
            if x.dims != a.dims || u.dims != u0.dims || u.dtype != x.dtype {
                return Err(operand_err(op, format!("input {k} {x} and update {u} do not agree with input 0 {a} and update 0 {u0}")));
            }
        }
        if !ind.dtype.is_integer() {
            return Err(operand_err(
                op,
                format!("scatter indices must be integers, got {ind}"),
            ));
        }
        let (orank, irank, urank) = (a.rank(), ind.rank(), u0.rank());
        let (ivd, index_len, scatter_dims) = index_vector(op, ind, sd.index_vector_dim)?;
        let uwd = self.dim_set("update_window_dims", &sd.update_window_dims, urank, true)?;
        let dims = self.index_dims(
            SCATTER_BATCHING,
            (orank, irank),
            [
                &sd.inserted_window_dims,
                &sd.input_batching_dims,
                &sd.scatter_indices_batching_dims,
                &sd.scatter_dims_to_operand_dims,
            ],
        )?;
        if dims.map.len() as i64 != index_len {
            return Err(attr_err(op, format!("scatter_dims_to_operand_dims must have {index_len} entries (the index vector size of {ind})")));
        }
        dims.check_batching(op, ivd)?;
        let IndexDims {
            windowless: inserted,
            obatch: ibatch,
            sbatch,
            ..
        } = dims;
        if uwd.len() + inserted.len() + ibatch.len() != orank {
            return Err(attr_err(op, format!("update_window_dims, inserted_window_dims and input_batching_dims must cover the {orank} input dimensions")));
        }
        if urank != uwd.len() + scatter_dims.len() {
            return Err(operand_err(
                op,
                format!(
                    "updates {u0} must have rank {}",
                    uwd.len() + scatter_dims.len()
                ),
            ));
        }
        check_update_dims(op, (a, ind, u0), &uwd, &inserted, &ibatch, &scatter_dims)?;
        check_batch_sizes(op, "input", (a, ind), &ibatch, &sbatch)?;
        let dtypes: Vec<ElementType> = (0..n)
            .map(|k| self.arr(k).map(|x| x.dtype))
            .collect::<Result<_>>()?;
        self.check_reducer(to_apply, &dtypes, &dtypes)?;
        Ok(self.maybe_tuple(
            (0..n)
                .map(|k| self.arr(k).map(|x| Shape::array(x.dtype, x.dims.clone())))
                .collect::<Result<_>>()?,
        ))
    }

    /// Gather's or scatter's dimension sets other than the window's: the
    /// operand dims without a window, the operand's and the indices'
    /// batching dims and the index-to-operand map, in that order.
    fn index_dims(
        &self,
        names: BatchingNames,
        (orank, irank): (usize, usize),
        [windowless, obatch, sbatch, map]: [&[i64]; 4],
    ) -> Result<IndexDims> {
        Ok(IndexDims {
            windowless: self.dim_set(names.windowless, windowless, orank, true)?,
            obatch: self.dim_set(names.operand, obatch, orank, true)?,
            sbatch: self.dim_set(names.indices, sbatch, irank, false)?,
            map: self.dim_set(names.map, map, orank, false)?,
            names,
        })
    }

    pub(super) fn maybe_tuple(&self, mut shapes: Vec<Shape>) -> Shape {
        if shapes.len() == 1 {
            shapes.pop().unwrap_or(Shape::Tuple(Vec::new()))
        } else {
            Shape::Tuple(shapes)
        }
    }
}

/// `index_vector_dim` checked against the indices `ind`: the index vector's
/// dimension, its length (1 when the dimension is implicit, one past the
/// last) and the extents of the other (batch or scatter) dimensions.
fn index_vector(op: Opcode, ind: &ArrayShape, ivd: i64) -> Result<(usize, i64, Vec<i64>)> {
    let irank = ind.rank();
    if ivd < 0 || ivd as u64 > irank as u64 {
        return Err(attr_err(
            op,
            format!("index_vector_dim {ivd} out of range for indices {ind}"),
        ));
    }
    let ivd = ivd as usize;
    let mut expanded = ind.dims.clone();
    if ivd == irank {
        expanded.push(1);
    }
    let index_len = expanded[ivd];
    let rest = expanded
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != ivd)
        .map(|(_, &d)| d)
        .collect();
    Ok((ivd, index_len, rest))
}

/// The attribute names [`check_batching`] speaks of: the operand's and the
/// indices' batching dims, the operand dims the index does not cover, and
/// the index-to-operand map.
#[derive(Clone, Copy)]
struct BatchingNames {
    operand: &'static str,
    indices: &'static str,
    windowless: &'static str,
    map: &'static str,
}

const GATHER_BATCHING: BatchingNames = BatchingNames {
    operand: "operand_batching_dims",
    indices: "start_indices_batching_dims",
    windowless: "collapsed_slice_dims",
    map: "start_index_map",
};

const SCATTER_BATCHING: BatchingNames = BatchingNames {
    operand: "input_batching_dims",
    indices: "scatter_indices_batching_dims",
    windowless: "inserted_window_dims",
    map: "scatter_dims_to_operand_dims",
};

/// The dimension sets [`Infer::index_dims`] checked, as operand (or
/// indices) dimension indices, with the names they go by.
struct IndexDims {
    names: BatchingNames,
    windowless: Vec<usize>,
    obatch: Vec<usize>,
    sbatch: Vec<usize>,
    map: Vec<usize>,
}

impl IndexDims {
    /// The batching dimensions: disjoint from the index vector, the
    /// collapsed (inserted) window dims and the mapped-to dims, one indices
    /// batching dim per operand batching dim.
    fn check_batching(&self, op: Opcode, ivd: usize) -> Result<()> {
        let BatchingNames {
            operand,
            indices,
            windowless,
            map,
        } = self.names;
        let (obatch, sbatch) = (&self.obatch, &self.sbatch);
        if sbatch.contains(&ivd) {
            return Err(attr_err(op, format!("{indices} contains index_vector_dim")));
        }
        if obatch.len() != sbatch.len() {
            return Err(attr_err(
                op,
                format!("{operand} and {indices} differ in length"),
            ));
        }
        let overlaps = |ds: &[usize]| ds.iter().any(|d| obatch.contains(d));
        if overlaps(&self.windowless) || overlaps(&self.map) {
            return Err(attr_err(
                op,
                format!("{operand} overlap {windowless} or {map}"),
            ));
        }
        Ok(())
    }
}

/// Each operand batching dimension of the same size as its indices batching
/// dimension (`side`: what the operand is called, "operand" or "input").
fn check_batch_sizes(
    op: Opcode,
    side: &str,
    (a, ind): (&ArrayShape, &ArrayShape),
    obatch: &[usize],
    sbatch: &[usize],
) -> Result<()> {
    for (&o, &s) in obatch.iter().zip(sbatch) {
        if a.dims[o] != ind.dims[s] {
            return Err(operand_err(op, format!("{side} batching dimension {o} and indices batching dimension {s} differ in size")));
        }
    }
    Ok(())
}

/// Every update dimension: a window dim within the input's bound, or a
/// scatter dim of the indices' size.
fn check_update_dims(
    op: Opcode,
    (a, ind, u0): (&ArrayShape, &ArrayShape, &ArrayShape),
    uwd: &[usize],
    inserted: &[usize],
    ibatch: &[usize],
    scatter_dims: &[i64],
) -> Result<()> {
    let orank = a.rank();
    let window_bounds: Vec<i64> = (0..orank)
        .filter(|k| !inserted.contains(k) && !ibatch.contains(k))
        .map(|k| a.dims[k])
        .collect();
    let (mut wi, mut si) = (window_bounds.iter(), scatter_dims.iter());
    for (k, &ud) in u0.dims.iter().enumerate() {
        if uwd.contains(&k) {
            let bound = *wi
                .next()
                .ok_or_else(|| attr_err(op, "inconsistent scatter dimension numbers"))?;
            if ud > bound {
                return Err(operand_err(
                    op,
                    format!("update window dimension {k} of {u0} exceeds input bound {bound}"),
                ));
            }
        } else {
            let want = *si
                .next()
                .ok_or_else(|| attr_err(op, "inconsistent scatter dimension numbers"))?;
            if ud != want {
                return Err(operand_err(
                    op,
                    format!(
                        "update scatter dimension {k} of {u0} must be {want} (from indices {ind})"
                    ),
                ));
            }
        }
    }
    Ok(())
}
