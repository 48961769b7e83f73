//! Shape inference for dot and convolution.

use super::*;

impl<'a> Infer<'a> {
    /// The result dtype of dot/convolution: the declared one when given, else the wider operand type.
    pub(super) fn contraction_dtype(&self, a: &ArrayShape, b: &ArrayShape) -> Result<ElementType> {
        if a.dtype != b.dtype && !(a.dtype.is_float() && b.dtype.is_float()) {
            return Err(operand_err(
                self.op,
                format!("operand element types differ: {a} and {b}"),
            ));
        }
        if let Some(d) = self.declared.and_then(Shape::as_array) {
            return Ok(d.dtype);
        }
        Ok(if a.dtype.bit_width() >= b.dtype.bit_width() {
            a.dtype
        } else {
            b.dtype
        })
    }

    pub(super) fn dot(&self) -> Result<Shape> {
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        let default = DotDims::default();
        let d = self.attrs.dot_dims.as_ref().unwrap_or(&default);
        if d.lhs_batch.len() != d.rhs_batch.len()
            || d.lhs_contracting.len() != d.rhs_contracting.len()
        {
            return Err(attr_err(
                op,
                "lhs and rhs must have as many batch and contracting dimensions",
            ));
        }
        let lhs_all = [d.lhs_batch.as_slice(), &d.lhs_contracting].concat();
        let rhs_all = [d.rhs_batch.as_slice(), &d.rhs_contracting].concat();
        let l = self.dim_set(
            "lhs batch and contracting dimensions",
            &lhs_all,
            a.rank(),
            false,
        )?;
        let r = self.dim_set(
            "rhs batch and contracting dimensions",
            &rhs_all,
            b.rank(),
            false,
        )?;
        for (&i, &j) in l.iter().zip(&r) {
            if a.dims[i] != b.dims[j] {
                return Err(operand_err(
                    op,
                    format!("lhs dimension {i} of {a} and rhs dimension {j} of {b} differ in size"),
                ));
            }
        }
        let dtype = self.contraction_dtype(a, b)?;
        let mut dims: Vec<i64> = l[..d.lhs_batch.len()].iter().map(|&i| a.dims[i]).collect();
        dims.extend((0..a.rank()).filter(|k| !l.contains(k)).map(|k| a.dims[k]));
        dims.extend((0..b.rank()).filter(|k| !r.contains(k)).map(|k| b.dims[k]));
        Ok(Shape::array(dtype, dims))
    }

    pub(super) fn labels(
        &self,
        what: &str,
        batch: i64,
        feature: i64,
        spatial: &[i64],
        rank: usize,
    ) -> Result<Vec<usize>> {
        let all: Vec<i64> = [batch, feature]
            .into_iter()
            .chain(spatial.iter().copied())
            .collect();
        if all.len() != rank {
            return Err(attr_err(
                self.op,
                format!(
                    "dim_labels give {} {what} dimensions but it has rank {rank}",
                    all.len()
                ),
            ));
        }
        self.dim_set(&format!("{what} dim_labels"), &all, rank, false)
    }

    pub(super) fn convolution(&self) -> Result<Shape> {
        let op = self.op;
        let (x, k) = (self.arr(0)?, self.arr(1)?);
        let c: &ConvDims = req(op, &self.attrs.conv_dims, "dim_labels")?;
        let window: &[WindowDim] = self.attrs.window.as_deref().unwrap_or(&[]);
        let n = c.input_spatial.len();
        if c.kernel_spatial.len() != n || c.output_spatial.len() != n || window.len() != n {
            return Err(attr_err(
                op,
                format!("dim_labels and window disagree on the spatial dimension count ({n})"),
            ));
        }
        let xi = self.labels(
            "input",
            c.input_batch,
            c.input_feature,
            &c.input_spatial,
            x.rank(),
        )?;
        let ki = self.labels(
            "kernel",
            c.kernel_input_feature,
            c.kernel_output_feature,
            &c.kernel_spatial,
            k.rank(),
        )?;
        let oi = self.labels(
            "output",
            c.output_batch,
            c.output_feature,
            &c.output_spatial,
            n + 2,
        )?;
        let fgc = self.attrs.feature_group_count.unwrap_or(1);
        let bgc = self.attrs.batch_group_count.unwrap_or(1);
        if fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1) {
            return Err(attr_err(op, format!("feature_group_count={fgc} and batch_group_count={bgc} must be positive and not both above 1")));
        }
        let (batch, in_feat) = (x.dims[xi[0]], x.dims[xi[1]]);
        let (k_in, k_out) = (k.dims[ki[0]], k.dims[ki[1]]);
        if in_feat % fgc != 0 || in_feat / fgc != k_in {
            return Err(operand_err(op, format!("input features {in_feat} must equal kernel input features {k_in} times feature_group_count {fgc}")));
        }
        if k_out % fgc != 0 || k_out % bgc != 0 {
            return Err(operand_err(
                op,
                format!("kernel output features {k_out} must be divisible by the group counts"),
            ));
        }
        if batch % bgc != 0 {
            return Err(operand_err(
                op,
                format!("input batch {batch} must be divisible by batch_group_count {bgc}"),
            ));
        }
        let dtype = self.contraction_dtype(x, k)?;
        let mut dims = vec![0i64; n + 2];
        dims[oi[0]] = batch / bgc;
        dims[oi[1]] = k_out;
        for s in 0..n {
            let ks = k.dims[ki[2 + s]];
            if window[s].size != ks {
                return Err(attr_err(
                    op,
                    format!(
                        "window size {} of spatial dimension {s} differs from kernel size {ks}",
                        window[s].size
                    ),
                ));
            }
            dims[oi[2 + s]] = window_output(op, s, x.dims[xi[2 + s]], &window[s])?;
        }
        Ok(Shape::array(dtype, dims))
    }
}
