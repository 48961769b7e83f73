//! Shape inference for structure ops and shape ops.

use super::*;

impl<'a> Infer<'a> {
    pub(super) fn constant(&self) -> Result<Shape> {
        let op = self.op;
        let data = req(op, &self.attrs.constant, "constant")?;
        let d = self.declared()?;
        check_constant(data, d).map_err(|m| attr_err(op, m))?;
        Ok(d.without_layouts())
    }

    pub(super) fn iota(&self) -> Result<Shape> {
        let op = self.op;
        let dim = *req(op, &self.attrs.iota_dimension, "iota_dimension")?;
        let d = self.declared_array()?;
        self.dim_index("iota_dimension", dim, d.rank())?;
        if d.dtype.is_pred() {
            return Err(operand_err(op, "iota of pred"));
        }
        Ok(Shape::array(d.dtype, d.dims.clone()))
    }

    pub(super) fn broadcast(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        // like XLA's parser, `dimensions` may be omitted when broadcasting a scalar
        let dims: &[i64] = match &self.attrs.dimensions {
            Some(d) => d,
            None if a.rank() == 0 => &[],
            None => return Err(missing(op, "dimensions")),
        };
        if dims.len() != a.rank() {
            return Err(attr_err(
                op,
                format!(
                    "dimensions {} must have one entry per operand dimension of {a}",
                    dims_text(dims)
                ),
            ));
        }
        let idx = self.dim_set("dimensions", dims, d.rank(), false)?;
        for (k, &i) in idx.iter().enumerate() {
            if d.dims[i] != a.dims[k] {
                return Err(operand_err(
                    op,
                    format!(
                        "operand dimension {k} of {a} (size {}) maps to result dimension {i} of size {}",
                        a.dims[k], d.dims[i]
                    ),
                ));
            }
        }
        Ok(Shape::array(a.dtype, d.dims.clone()))
    }

    pub(super) fn reshape(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        if a.element_count().is_none() || a.element_count() != d.element_count() {
            return Err(operand_err(
                self.op,
                format!(
                    "cannot reshape {a} to dims {} (element counts differ)",
                    dims_text(&d.dims)
                ),
            ));
        }
        Ok(Shape::array(a.dtype, d.dims.clone()))
    }

    pub(super) fn transpose(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let perm = req(self.op, &self.attrs.dimensions, "dimensions")?;
        if perm.len() != a.rank() {
            return Err(attr_err(
                self.op,
                format!(
                    "dimensions {} is not a permutation of the dims of {a}",
                    dims_text(perm)
                ),
            ));
        }
        let idx = self.dim_set("dimensions", perm, a.rank(), false)?;
        Ok(Shape::array(
            a.dtype,
            idx.iter().map(|&i| a.dims[i]).collect::<Vec<_>>(),
        ))
    }

    pub(super) fn slice(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let s = self.per_dimension(&self.attrs.slice, "slice", a)?;
        let mut dims = Vec::with_capacity(s.len());
        for (k, sd) in s.iter().enumerate() {
            if sd.start < 0 || sd.start > sd.limit || sd.limit > a.dims[k] || sd.stride < 1 {
                return Err(attr_err(
                    op,
                    format!(
                        "slice [{}:{}:{}] is invalid for dimension {k} of {a}",
                        sd.start, sd.limit, sd.stride
                    ),
                ));
            }
            let len =
                (sd.limit as i128 - sd.start as i128 + sd.stride as i128 - 1) / sd.stride as i128;
            dims.push(to_i64(op, len)?);
        }
        Ok(Shape::array(a.dtype, dims))
    }

    pub(super) fn concatenate(&self) -> Result<Shape> {
        let op = self.op;
        let (first, d) = self.first_and_its_dimension()?;
        let mut total: i128 = 0;
        for k in 0..self.operands.len() {
            let a = self.arr(k)?;
            let same = a.dtype == first.dtype
                && a.rank() == first.rank()
                && a.dims
                    .iter()
                    .zip(&first.dims)
                    .enumerate()
                    .all(|(i, (x, y))| i == d || x == y);
            if !same {
                return Err(operand_err(
                    op,
                    format!("operand {k} {a} does not match {first} outside dimension {d}"),
                ));
            }
            total += a.dims[d] as i128;
        }
        let mut out = first.dims.clone();
        out[d] = to_i64(op, total)?;
        Ok(Shape::array(first.dtype, out))
    }

    pub(super) fn pad(&self) -> Result<Shape> {
        let op = self.op;
        let (a, v) = (self.arr(0)?, self.arr(1)?);
        if v.rank() != 0 || v.dtype != a.dtype {
            return Err(operand_err(
                op,
                format!("padding value {v} must be a {}[] scalar", a.dtype),
            ));
        }
        let p: &[PadDim] = self.per_dimension(&self.attrs.padding, "padding", a)?;
        let mut dims = Vec::with_capacity(p.len());
        for (k, pd) in p.iter().enumerate() {
            if pd.interior < 0 {
                return Err(attr_err(
                    op,
                    format!("negative interior padding {} in dimension {k}", pd.interior),
                ));
            }
            let n = a.dims[k] as i128;
            let size = pd.low as i128 + pd.high as i128 + n + (n - 1).max(0) * pd.interior as i128;
            if size < 0 {
                return Err(attr_err(
                    op,
                    format!("padding makes dimension {k} of {a} negative ({size})"),
                ));
            }
            dims.push(to_i64(op, size)?);
        }
        Ok(Shape::array(a.dtype, dims))
    }
}
