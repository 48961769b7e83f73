//! Shape inference for reduce, reduce-window, select-and-scatter, sort, map.

use super::*;

impl<'a> Infer<'a> {
    /// A reducer takes N accumulators then N inputs (all scalars) and returns N accumulators
    /// (a scalar when N is 1, else a tuple). Inputs may differ from accumulators in float precision.
    pub(super) fn check_reducer(
        &self,
        id: CompId,
        acc: &[ElementType],
        inputs: &[ElementType],
    ) -> Result<()> {
        let op = self.op;
        let (sig, name) = callee_sig(op, self.comps, id)?;
        let n = acc.len();
        let bad = |why: String| callee_err(op, format!("reducer '{name}' {sig}: {why}"));
        if sig.params.len() != 2 * n {
            return Err(bad(format!("expected {} scalar parameters", 2 * n)));
        }
        for (k, p) in sig.params.iter().enumerate() {
            let want = if k < n { acc[k] } else { inputs[k - n] };
            let ok = p.as_array().is_some_and(|a| {
                a.rank() == 0
                    && (a.dtype == want || (k >= n && a.dtype.is_float() && want.is_float()))
            });
            if !ok {
                return Err(bad(format!("parameter {k} must be {want}[]")));
            }
        }
        let ret_ok = if n == 1 {
            sig.result.compatible(&Shape::scalar(acc[0]))
        } else {
            sig.result.compatible(&Shape::Tuple(
                acc.iter().map(|&t| Shape::scalar(t)).collect(),
            ))
        };
        if !ret_ok {
            return Err(bad(format!(
                "must return the accumulator type{}",
                if n == 1 { "" } else { "s as a tuple" }
            )));
        }
        Ok(())
    }

    /// Splits 2N operands into N inputs (same dims) and N scalar inits; returns (inputs, init dtypes).
    pub(super) fn inputs_and_inits(&self) -> Result<(Vec<&'a ArrayShape>, Vec<ElementType>)> {
        let op = self.op;
        let total = self.operands.len();
        if !total.is_multiple_of(2) {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!("{op}: expects N inputs and N init values (an even count), got {total}"),
            ));
        }
        let n = total / 2;
        let mut inputs = Vec::with_capacity(n);
        let mut inits = Vec::with_capacity(n);
        for k in 0..n {
            let (x, init) = (self.arr(k)?, self.arr(n + k)?);
            if x.dims != self.arr(0)?.dims {
                return Err(operand_err(
                    op,
                    format!("input {k} {x} and input 0 {} differ in dims", self.arr(0)?),
                ));
            }
            if init.rank() != 0 {
                return Err(operand_err(
                    op,
                    format!("init value {k} must be a scalar, got {init}"),
                ));
            }
            inputs.push(x);
            inits.push(init.dtype);
        }
        Ok((inputs, inits))
    }

    pub(super) fn reduce(&self) -> Result<Shape> {
        let op = self.op;
        let (inputs, inits) = self.inputs_and_inits()?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let dims = req(op, &self.attrs.dimensions, "dimensions")?;
        let rank = inputs[0].rank();
        let reduced = self.dim_set("dimensions", dims, rank, false)?;
        let in_types: Vec<ElementType> = inputs.iter().map(|x| x.dtype).collect();
        self.check_reducer(to_apply, &inits, &in_types)?;
        let kept: Vec<i64> = (0..rank)
            .filter(|k| !reduced.contains(k))
            .map(|k| inputs[0].dims[k])
            .collect();
        Ok(self.maybe_tuple(
            inits
                .iter()
                .map(|&t| Shape::array(t, kept.clone()))
                .collect(),
        ))
    }

    pub(super) fn windowed(&self, a: &ArrayShape, window: &[WindowDim]) -> Result<Vec<i64>> {
        check_per_dimension(self.op, "window", window, a)?;
        a.dims
            .iter()
            .zip(window)
            .enumerate()
            .map(|(k, (&d, w))| window_output(self.op, k, d, w))
            .collect()
    }

    pub(super) fn reduce_window(&self) -> Result<Shape> {
        let op = self.op;
        let (inputs, inits) = self.inputs_and_inits()?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let window = req(op, &self.attrs.window, "window")?;
        let dims = self.windowed(inputs[0], window)?;
        let in_types: Vec<ElementType> = inputs.iter().map(|x| x.dtype).collect();
        self.check_reducer(to_apply, &inits, &in_types)?;
        Ok(self.maybe_tuple(
            inits
                .iter()
                .map(|&t| Shape::array(t, dims.clone()))
                .collect(),
        ))
    }

    pub(super) fn select_and_scatter(&self) -> Result<Shape> {
        let op = self.op;
        let (a, src, init) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        let window = req(op, &self.attrs.window, "window")?;
        let select = *req(op, &self.attrs.select, "select")?;
        let scatter = *req(op, &self.attrs.scatter, "scatter")?;
        if init.rank() != 0 || init.dtype != src.dtype {
            return Err(operand_err(
                op,
                format!("init value {init} must be a {}[] scalar", src.dtype),
            ));
        }
        if window
            .iter()
            .any(|w| w.base_dilation != 1 || w.window_dilation != 1)
        {
            return Err(attr_err(op, "window dilation is not allowed"));
        }
        let out = self.windowed(a, window)?;
        if src.dims != out {
            return Err(operand_err(
                op,
                format!(
                    "source {src} must have the windowed dims {} of {a}",
                    dims_text(&out)
                ),
            ));
        }
        let (sel, name) = callee_sig(op, self.comps, select)?;
        let t = Shape::scalar(a.dtype);
        if sel.params.len() != 2
            || !sel.params.iter().all(|p| p.compatible(&t))
            || !sel.result.compatible(&Shape::scalar(ElementType::Pred))
        {
            return Err(callee_err(
                op,
                format!("select '{name}' {sel} must be ({t}, {t}) -> pred[]"),
            ));
        }
        let s = Shape::scalar(src.dtype);
        self.check_reducer(scatter, &[src.dtype], &[src.dtype])
            .map_err(|_| {
                callee_err(op, format!("scatter computation must be ({s}, {s}) -> {s}"))
            })?;
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    pub(super) fn sort(&self) -> Result<Shape> {
        let op = self.op;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        self.first_and_its_dimension()?;
        let mut shapes = Vec::new();
        let mut want = Vec::new();
        for a in self.arrays_like_first()? {
            shapes.push(Shape::array(a.dtype, a.dims.clone()));
            want.push(Shape::scalar(a.dtype));
            want.push(Shape::scalar(a.dtype));
        }
        let (sig, name) = callee_sig(op, self.comps, to_apply)?;
        let ok = sig.params.len() == want.len()
            && sig.params.iter().zip(&want).all(|(p, w)| p.compatible(w))
            && sig.result.compatible(&Shape::scalar(ElementType::Pred));
        if !ok {
            return Err(callee_err(
                op,
                format!(
                    "comparator '{name}' {sig} must take two scalars per operand and return pred[]"
                ),
            ));
        }
        Ok(self.maybe_tuple(shapes))
    }

    pub(super) fn map(&self) -> Result<Shape> {
        let op = self.op;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let first = self.arr(0)?;
        let want: Vec<Shape> = self
            .arrays_like_first()?
            .iter()
            .map(|a| Shape::scalar(a.dtype))
            .collect();
        if let Some(dims) = &self.attrs.dimensions {
            if !dims.iter().copied().eq(0..first.rank() as i64) {
                return Err(attr_err(
                    op,
                    format!(
                        "dimensions {} must be all dimensions in order",
                        dims_text(dims)
                    ),
                ));
            }
        }
        let (sig, name) = callee_sig(op, self.comps, to_apply)?;
        let ret = sig.result.as_array().filter(|r| r.rank() == 0);
        let ok = sig.params.len() == want.len()
            && sig.params.iter().zip(&want).all(|(p, w)| p.compatible(w));
        match ret {
            Some(r) if ok => Ok(Shape::array(r.dtype, first.dims.clone())),
            _ => Err(callee_err(op, format!("mapped computation '{name}' {sig} must take one scalar per operand and return a scalar"))),
        }
    }
}
