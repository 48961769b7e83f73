//! Lowering compare, reduce-precision, broadcast, transpose, slices,
//! concatenation, padding, reversal and dynamic slices.

use super::lower::{
    arrays_of, need, operand_shape, present, result_types_of, Lowerer, Lowering, Site,
};
use super::types::{array_attr, invalid, LowerError};
use crate::hlo::{ComparisonType, Opcode};

impl Lowerer<'_> {
    /// Compare, reduce-precision, broadcast and transpose; other opcodes go on to [`Self::slicing_instruction`].
    pub(super) fn shaping_instruction(&mut self, site: &mut Site) -> Lowering {
        let (c, instr, a) = (site.c, site.instr, &site.instr.attrs);
        Ok(Some(match instr.opcode {
            Opcode::Compare => {
                let dir = *present(&a.direction, "direction")?;
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
        let (instr, a, operands, indent) =
            (site.instr, &site.instr.attrs, site.operands, site.indent);
        let op = instr.opcode;
        Ok(Some(match op {
            Opcode::Slice => {
                let names = ["start_indices", "limit_indices", "strides"];
                let s = present(&a.slice, "slice")?;
                let attrs = per_field_attrs(s, names, |d| [d.start, d.limit, d.stride]);
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
            Opcode::Pad => {
                let names = ["edge_padding_low", "edge_padding_high", "interior_padding"];
                let p = present(&a.padding, "padding")?;
                let attrs = per_field_attrs(p, names, |d| [d.low, d.high, d.interior]);
                self.emit(site, "stablehlo.pad", &[], &attrs)?
            }
            _ => return Ok(None),
        }))
    }
}

/// One `name = array<i64: ...>` attribute per field of `items` (a slice's
/// starts, limits and strides; a padding's lows, highs and interiors).
fn per_field_attrs<T>(
    items: &[T],
    names: [&str; 3],
    fields: impl Fn(&T) -> [i64; 3],
) -> [String; 3] {
    let column = |k: usize| items.iter().map(|d| fields(d)[k]).collect::<Vec<i64>>();
    [0, 1, 2].map(|k| format!("{} = {}", names[k], array_attr(&column(k))))
}
