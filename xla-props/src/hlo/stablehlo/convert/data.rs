//! Constants and data movement ops: `constant` to `dynamic_update_slice`.

use super::attrs::{enum_attr, int_attr, ints_attr};
use super::converter::{Converted, Converter, OpSite};
use super::helpers::{broadcast_in_dim, one_result};
use crate::hlo::ir::{Attrs, ComparisonDirection, ComparisonType, PadDim, SliceDim};
use crate::hlo::opcode::Opcode;
use crate::hlo::stablehlo::build::{err, shape_of, Builder};
use crate::hlo::stablehlo::dense::constant_data;
use crate::hlo::stablehlo::syntax::{Attr, Type};

impl Converter<'_> {
    /// Constants and data movement: `constant` .. `dynamic_update_slice`; other names go on to [`Self::indexing_op`].
    pub(super) fn data_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "constant" => {
                let Some(Attr::Dense(d, t)) = op.attr("value") else {
                    return err(pos, "a constant needs `value = dense<...>`");
                };
                let Type::Tensor(dims, e) = t else {
                    return err(pos, "a constant must be a tensor");
                };
                a.constant = Some(constant_data(d, dims, *e, pos)?);
                let s = shape_of(t);
                Ok(vec![b.push(Opcode::Constant, s, vec![], a)])
            }
            "iota" => {
                a.iota_dimension = Some(int_attr(op, "iota_dimension")?);
                self.results(op, b, Opcode::Iota, vec![], a)
            }
            "compare" => {
                let ops = self.operands(op, b, outers)?;
                let dir = enum_attr(op, "comparison_direction")?
                    .ok_or((pos, "compare needs a direction".to_string()))?;
                a.direction = Some(
                    ComparisonDirection::from_name(&dir)
                        .ok_or((pos, format!("unknown comparison direction `{dir}`")))?,
                );
                if let Some(t) = enum_attr(op, "compare_type")? {
                    a.comparison_type = Some(
                        ComparisonType::from_name(&t)
                            .ok_or((pos, format!("unknown comparison type `{t}`")))?,
                    );
                }
                self.results(op, b, Opcode::Compare, ops, a)
            }
            "reduce_precision" => {
                let ops = self.operands(op, b, outers)?;
                if let Some(f) = op.attr("format") {
                    let Attr::Word(w) = f else {
                        return err(pos, "bad reduce_precision format");
                    };
                    let (e, m) = w
                        .strip_prefix('e')
                        .and_then(|r| r.split_once('m'))
                        .and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)))
                        .ok_or((pos, format!("bad reduce_precision format `{w}`")))?;
                    a.exponent_bits = Some(e);
                    a.mantissa_bits = Some(m);
                } else {
                    a.exponent_bits = Some(int_attr(op, "exponent_bits")?);
                    a.mantissa_bits = Some(int_attr(op, "mantissa_bits")?);
                }
                self.results(op, b, Opcode::ReducePrecision, ops, a)
            }
            "broadcast_in_dim" => {
                let ops = self.operands(op, b, outers)?;
                let dims = ints_attr(op, "broadcast_dimensions")?;
                let out = one_result(op)?;
                let [x] = ops[..] else {
                    return err(pos, "broadcast_in_dim takes one operand");
                };
                Ok(vec![broadcast_in_dim(b, x, &dims, out, pos)?])
            }
            "transpose" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "permutation")?);
                self.results(op, b, Opcode::Transpose, ops, a)
            }
            "reverse" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                self.results(op, b, Opcode::Reverse, ops, a)
            }
            "concatenate" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(vec![int_attr(op, "dimension")?]);
                self.results(op, b, Opcode::Concatenate, ops, a)
            }
            "slice" => {
                let ops = self.operands(op, b, outers)?;
                let s = ints_attr(op, "start_indices")?;
                let l = ints_attr(op, "limit_indices")?;
                let st = ints_attr(op, "strides")
                    .or_else(|_| Ok::<_, (usize, String)>(vec![1; s.len()]))?;
                if s.len() != l.len() || s.len() != st.len() {
                    return err(pos, "slice attributes differ in length");
                }
                a.slice = Some(
                    (0..s.len())
                        .map(|k| SliceDim {
                            start: s[k],
                            limit: l[k],
                            stride: st[k],
                        })
                        .collect(),
                );
                self.results(op, b, Opcode::Slice, ops, a)
            }
            "pad" => {
                let ops = self.operands(op, b, outers)?;
                let lo = ints_attr(op, "edge_padding_low")?;
                let hi = ints_attr(op, "edge_padding_high")?;
                let int = ints_attr(op, "interior_padding")?;
                if lo.len() != hi.len() || lo.len() != int.len() {
                    return err(pos, "pad attributes differ in length");
                }
                a.padding = Some(
                    (0..lo.len())
                        .map(|k| PadDim {
                            low: lo[k],
                            high: hi[k],
                            interior: int[k],
                        })
                        .collect(),
                );
                self.results(op, b, Opcode::Pad, ops, a)
            }
            "dynamic_slice" => {
                let ops = self.operands(op, b, outers)?;
                a.dynamic_slice_sizes = Some(ints_attr(op, "slice_sizes")?);
                self.results(op, b, Opcode::DynamicSlice, ops, a)
            }
            "dynamic_update_slice" => {
                let ops = self.operands(op, b, outers)?;
                self.results(op, b, Opcode::DynamicUpdateSlice, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }
}
