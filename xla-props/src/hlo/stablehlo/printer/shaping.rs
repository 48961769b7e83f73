//! Lowering compare, reduce-precision, broadcast, transpose, slices,
//! concatenation, padding, reversal and dynamic slices.

use super::lower::{arrays_of, need, operand_shape, result_types_of, Lowerer, Lowering, Site};
use super::types::{array_attr, invalid, LowerError};
use crate::hlo::{ComparisonType, Opcode};

impl Lowerer<'_> {
    /// Compare, reduce-precision, broadcast and transpose; other opcodes go on to [`Self::slicing_instruction`].
    pub(super) fn shaping_instruction(&mut self, site: &mut Site) -> Lowering {
        let (c, instr) = (site.c, site.instr);
        let a = &instr.attrs;
        Ok(Some(match instr.opcode {
            Opcode::Compare => {
                let dir = a
                    .direction
                    .ok_or_else(|| LowerError::Invalid("missing direction".into()))?;
                let src = operand_shape(c, instr, 0)?;
                let dtype = src
                    .as_array()
                    .ok_or_else(|| LowerError::Invalid("compare of a tuple".into()))?
                    .dtype;
                let ty = a.comparison_type.unwrap_or(if dtype.is_float() {
                    ComparisonType::Float
                } else if dtype.is_signed_int() {
                    ComparisonType::Signed
                } else {
                    ComparisonType::Unsigned
                });
                let mut attrs = vec![format!(
                    "comparison_direction = #stablehlo<comparison_direction {}>",
                    dir.name()
                )];
                // the faithful form leaves an absent type absent (its default)
                if !self.faithful || a.comparison_type.is_some() {
                    attrs.push(format!(
                        "compare_type = #stablehlo<comparison_type {}>",
                        ty.name()
                    ));
                }
                self.emit(site, "stablehlo.compare", &[], &attrs)?
            }
            Opcode::ReducePrecision => {
                let (Some(e), Some(m)) = (a.exponent_bits, a.mantissa_bits) else {
                    return invalid("missing exponent_bits or mantissa_bits");
                };
                let attrs = [
                    format!("exponent_bits = {e} : i32"),
                    format!("mantissa_bits = {m} : i32"),
                ];
                self.emit(site, "stablehlo.reduce_precision", &[], &attrs)?
            }
            Opcode::Broadcast => {
                // `dimensions={}` may be left out for a scalar operand.
                let scalar_operand = operand_shape(c, instr, 0)?
                    .as_array()
                    .is_some_and(|s| s.rank() == 0);
                let dims = match &a.dimensions {
                    None if scalar_operand => Vec::new(),
                    d => need(d, "dimensions")?,
                };
                let attrs = [format!("broadcast_dimensions = {}", array_attr(&dims))];
                self.emit(site, "stablehlo.broadcast_in_dim", &[], &attrs)?
            }
            Opcode::Transpose => {
                let dims = need(&a.dimensions, "dimensions")?;
                let attrs = [format!("permutation = {}", array_attr(&dims))];
                self.emit(site, "stablehlo.transpose", &[], &attrs)?
            }
            _ => return Ok(None),
        }))
    }

    /// Slices, concatenation, padding, reversal and dynamic slices; other opcodes go on to [`Self::indexing_instruction`].
    pub(super) fn slicing_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, operands, indent) = (site.instr, site.operands, site.indent);
        let a = &instr.attrs;
        let op = instr.opcode;
        Ok(Some(match op {
            Opcode::Slice => {
                let s = a
                    .slice
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing slice".into()))?;
                let starts: Vec<i64> = s.iter().map(|d| d.start).collect();
                let limits: Vec<i64> = s.iter().map(|d| d.limit).collect();
                let strides: Vec<i64> = s.iter().map(|d| d.stride).collect();
                let attrs = [
                    format!("start_indices = {}", array_attr(&starts)),
                    format!("limit_indices = {}", array_attr(&limits)),
                    format!("strides = {}", array_attr(&strides)),
                ];
                self.emit(site, "stablehlo.slice", &[], &attrs)?
            }
            Opcode::Concatenate => {
                let dims = need(&a.dimensions, "dimensions")?;
                let [d] = dims[..] else {
                    return invalid("concatenate needs exactly one dimension");
                };
                let attrs = [format!("dimension = {d} : i64")];
                self.emit(site, "stablehlo.concatenate", &[], &attrs)?
            }
            Opcode::Pad => {
                let p = a
                    .padding
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing padding".into()))?;
                let lo: Vec<i64> = p.iter().map(|d| d.low).collect();
                let hi: Vec<i64> = p.iter().map(|d| d.high).collect();
                let interior: Vec<i64> = p.iter().map(|d| d.interior).collect();
                let attrs = [
                    format!("edge_padding_low = {}", array_attr(&lo)),
                    format!("edge_padding_high = {}", array_attr(&hi)),
                    format!("interior_padding = {}", array_attr(&interior)),
                ];
                self.emit(site, "stablehlo.pad", &[], &attrs)?
            }
            Opcode::Reverse => {
                let dims = need(&a.dimensions, "dimensions")?;
                let attrs = [format!("dimensions = {}", array_attr(&dims))];
                self.emit(site, "stablehlo.reverse", &[], &attrs)?
            }
            Opcode::DynamicSlice => {
                let sizes = need(&a.dynamic_slice_sizes, "dynamic_slice_sizes")?;
                let ops = arrays_of(operands)?;
                let ops = self.scalar_indices(ops, 1, site.out, indent)?;
                let attrs = [format!("slice_sizes = {}", array_attr(&sizes))];
                self.op(
                    site.out,
                    indent,
                    "stablehlo.dynamic_slice",
                    &ops,
                    &[],
                    &attrs,
                    &result_types_of(instr)?,
                )
            }
            Opcode::DynamicUpdateSlice => {
                let ops = arrays_of(operands)?;
                let ops = self.scalar_indices(ops, 2, site.out, indent)?;
                self.op(
                    site.out,
                    indent,
                    "stablehlo.dynamic_update_slice",
                    &ops,
                    &[],
                    &[],
                    &result_types_of(instr)?,
                )
            }
            _ => return Ok(None),
        }))
    }
}
