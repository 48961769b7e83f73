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
        let ivd = g.index_vector_dim;
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
        let batch: Vec<i64> = expanded
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != ivd)
            .map(|(_, &d)| d)
            .collect();
        let out_rank = g.offset_dims.len() + batch.len();
        self.dim_set("offset_dims", &g.offset_dims, out_rank, true)?;
        let collapsed =
            self.dim_set("collapsed_slice_dims", &g.collapsed_slice_dims, orank, true)?;
        let obatch = self.dim_set(
            "operand_batching_dims",
            &g.operand_batching_dims,
            orank,
            true,
        )?;
        let sbatch = self.dim_set(
            "start_indices_batching_dims",
            &g.start_indices_batching_dims,
            irank,
            false,
        )?;
        let sim = self.dim_set("start_index_map", &g.start_index_map, orank, false)?;
        if sim.len() as i64 != index_len {
            return Err(attr_err(
                op,
                format!("start_index_map {} must have {index_len} entries (the index vector size of {ind})", dims_text(&g.start_index_map)),
            ));
        }
        if sbatch.contains(&ivd) {
            return Err(attr_err(
                op,
                "start_indices_batching_dims contains index_vector_dim",
            ));
        }
        if obatch.len() != sbatch.len() {
            return Err(attr_err(
                op,
                "operand_batching_dims and start_indices_batching_dims differ in length",
            ));
        }
        if collapsed.iter().any(|d| obatch.contains(d)) || sim.iter().any(|d| obatch.contains(d)) {
            return Err(attr_err(
                op,
                "operand_batching_dims overlap collapsed_slice_dims or start_index_map",
            ));
        }
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
        for (&o, &s) in obatch.iter().zip(&sbatch) {
            if a.dims[o] != ind.dims[s] {
                return Err(operand_err(op, format!("operand batching dimension {o} and indices batching dimension {s} differ in size")));
            }
        }
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
        let ivd = sd.index_vector_dim;
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
        let scatter_dims: Vec<i64> = expanded
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != ivd)
            .map(|(_, &d)| d)
            .collect();
        let uwd = self.dim_set("update_window_dims", &sd.update_window_dims, urank, true)?;
        let inserted = self.dim_set(
            "inserted_window_dims",
            &sd.inserted_window_dims,
            orank,
            true,
        )?;
        let ibatch = self.dim_set("input_batching_dims", &sd.input_batching_dims, orank, true)?;
        let sbatch = self.dim_set(
            "scatter_indices_batching_dims",
            &sd.scatter_indices_batching_dims,
            irank,
            false,
        )?;
        let map = self.dim_set(
            "scatter_dims_to_operand_dims",
            &sd.scatter_dims_to_operand_dims,
            orank,
            false,
        )?;
        if map.len() as i64 != index_len {
            return Err(attr_err(op, format!("scatter_dims_to_operand_dims must have {index_len} entries (the index vector size of {ind})")));
        }
        check_scatter_batching(op, ivd, &inserted, &map, &ibatch, &sbatch)?;
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
        for (&o, &s) in ibatch.iter().zip(&sbatch) {
            if a.dims[o] != ind.dims[s] {
                return Err(operand_err(op, format!("input batching dimension {o} and indices batching dimension {s} differ in size")));
            }
        }
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

    pub(super) fn maybe_tuple(&self, mut shapes: Vec<Shape>) -> Shape {
        if shapes.len() == 1 {
            shapes.pop().unwrap_or(Shape::Tuple(Vec::new()))
        } else {
            Shape::Tuple(shapes)
        }
    }
}

/// Scatter's batching dimensions: disjoint from the index vector, the
/// inserted window dims and the scattered-to dims, one per input batching dim.
fn check_scatter_batching(
    op: Opcode,
    ivd: usize,
    inserted: &[usize],
    map: &[usize],
    ibatch: &[usize],
    sbatch: &[usize],
) -> Result<()> {
    if sbatch.contains(&ivd) {
        return Err(attr_err(
            op,
            "scatter_indices_batching_dims contains index_vector_dim",
        ));
    }
    if ibatch.len() != sbatch.len() {
        return Err(attr_err(
            op,
            "input_batching_dims and scatter_indices_batching_dims differ in length",
        ));
    }
    if inserted.iter().any(|d| ibatch.contains(d)) || map.iter().any(|d| ibatch.contains(d)) {
        return Err(attr_err(
            op,
            "input_batching_dims overlap inserted_window_dims or scatter_dims_to_operand_dims",
        ));
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
