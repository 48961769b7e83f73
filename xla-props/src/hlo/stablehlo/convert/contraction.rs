//! `dot_general`/`dot` and `convolution`.

use super::attrs::{
    conv_dims, field_ints, opt_int_attr, opt_ints_attr, opt_padding, precision, struct_attr_opt,
};
use super::converter::{Converted, Converter, OpSite};
use crate::hlo::ir::{Attrs, DotDims, WindowDim};
use crate::hlo::opcode::Opcode;
use crate::hlo::stablehlo::build::{err, Builder};
use crate::hlo::stablehlo::syntax::Attr;

impl Converter<'_> {
    /// `dot_general`/`dot` and `convolution`; other names go on to [`Self::control_op`].
    pub(super) fn contraction_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "dot_general" | "dot" => {
                let ops = self.operands(op, b, outers)?;
                let d = if short == "dot" {
                    let [l, _] = ops[..] else {
                        return err(pos, "dot takes two operands");
                    };
                    let lr = b.array(l, pos)?.0.len() as i64;
                    DotDims {
                        lhs_contracting: vec![lr - 1],
                        rhs_contracting: vec![0],
                        ..DotDims::default()
                    }
                } else if let Some(f) = struct_attr_opt(op, "dot_dimension_numbers", "dot")? {
                    DotDims {
                        lhs_batch: field_ints(&f, "lhs_batching_dimensions", pos)?,
                        rhs_batch: field_ints(&f, "rhs_batching_dimensions", pos)?,
                        lhs_contracting: field_ints(&f, "lhs_contracting_dimensions", pos)?,
                        rhs_contracting: field_ints(&f, "rhs_contracting_dimensions", pos)?,
                    }
                } else {
                    DotDims {
                        lhs_batch: opt_ints_attr(op, "lhs_batching_dimensions")?
                            .unwrap_or_default(),
                        rhs_batch: opt_ints_attr(op, "rhs_batching_dimensions")?
                            .unwrap_or_default(),
                        lhs_contracting: opt_ints_attr(op, "lhs_contracting_dimensions")?
                            .unwrap_or_default(),
                        rhs_contracting: opt_ints_attr(op, "rhs_contracting_dimensions")?
                            .unwrap_or_default(),
                    }
                };
                a.dot_dims = Some(d);
                a.precision = precision(op)?;
                if op.attr("algorithm").is_some() {
                    return err(pos, "dot algorithms are not supported");
                }
                self.results(op, b, Opcode::Dot, ops, a)
            }
            "convolution" => {
                let ops = self.operands(op, b, outers)?;
                let Some(Attr::ConvLabels(l)) = op.attr("dimension_numbers") else {
                    return err(
                        pos,
                        "convolution needs dimension numbers `[b, 0, f]x[0, i, o]->[b, 0, f]`",
                    );
                };
                a.conv_dims = Some(conv_dims(l, pos)?);
                let spatial = l[0].len().saturating_sub(2);
                let strides =
                    opt_ints_attr(op, "window_strides")?.unwrap_or_else(|| vec![1; spatial]);
                let pads = opt_padding(op, "padding")?.unwrap_or_else(|| vec![(0, 0); spatial]);
                let lhs = opt_ints_attr(op, "lhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rhs = opt_ints_attr(op, "rhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rev = opt_ints_attr(op, "window_reversal")?.unwrap_or_else(|| vec![0; spatial]);
                let Some(&kernel) = ops.get(1) else {
                    return err(pos, "convolution takes two operands");
                };
                let kdims = b.array(kernel, pos)?.0;
                let cd = a
                    .conv_dims
                    .as_ref()
                    .map(|c| c.kernel_spatial.clone())
                    .unwrap_or_default();
                if [strides.len(), pads.len(), lhs.len(), rhs.len(), rev.len()]
                    .iter()
                    .any(|&n| n != spatial)
                {
                    return err(
                        pos,
                        "convolution window attributes differ from the spatial rank",
                    );
                }
                let mut w = Vec::new();
                for k in 0..spatial {
                    let size = usize::try_from(cd[k])
                        .ok()
                        .and_then(|d| kdims.get(d))
                        .copied()
                        .unwrap_or(1);
                    w.push(WindowDim {
                        size,
                        stride: strides[k],
                        pad_low: pads[k].0,
                        pad_high: pads[k].1,
                        base_dilation: lhs[k],
                        window_dilation: rhs[k],
                        reversal: rev[k] != 0,
                    });
                }
                a.window = (spatial > 0).then_some(w);
                // a count of 1 is the default HLO leaves out
                a.feature_group_count =
                    opt_int_attr(op, "feature_group_count")?.filter(|&n| n != 1);
                a.batch_group_count = opt_int_attr(op, "batch_group_count")?.filter(|&n| n != 1);
                a.precision = precision(op)?;
                self.results(op, b, Opcode::Convolution, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }
}
