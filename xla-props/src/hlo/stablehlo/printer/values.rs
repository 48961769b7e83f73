//! Lowering parameters, constants, iota, tuples, copies and bitcasts.

use super::lower::{
    array_shape_of, arrays_of, operand_shape, present, result_types_of, Lowerer, Lowering, Site,
};
use super::types::{array_attr, invalid, tensor_type, unsupported, LowerError};
use crate::hlo::{ArrayShape, ElementType, Opcode};

impl Lowerer<'_> {
    /// Parameters, constants, iota, tuples and copies; other opcodes go on to [`Self::bitcast_instruction`].
    pub(super) fn value_instruction(&mut self, site: &mut Site) -> Lowering {
        let (c, instr, a, operands, params, indent) = (
            site.c,
            site.instr,
            &site.instr.attrs,
            site.operands,
            site.params,
            site.indent,
        );
        let op = instr.opcode;
        Ok(Some(match op {
            Opcode::Parameter => {
                let n = *present(&a.parameter_number, "parameter number")?;
                usize::try_from(n)
                    .ok()
                    .and_then(|n| params.get(n))
                    .cloned()
                    .ok_or_else(|| {
                        LowerError::Invalid(format!("parameter {n} is not bound by the caller"))
                    })?
            }
            Opcode::Constant => {
                let data = present(&a.constant, "constant data")?;
                self.constant(&instr.shape, data, site.out, indent)?
            }
            Opcode::Iota => {
                let d = *present(&a.iota_dimension, "iota_dimension")?;
                let attrs = [format!("iota_dimension = {d} : i64")];
                self.op(
                    site.out,
                    indent,
                    "stablehlo.iota",
                    &[],
                    &[],
                    &attrs,
                    &result_types_of(instr)?,
                )
            }
            Opcode::Tuple => operands.iter().flat_map(|o| o.iter().cloned()).collect(),
            Opcode::GetTupleElement => {
                let index = *present(&a.index, "index")?;
                let src = &operand_shape(c, instr, 0)?;
                let elems = src
                    .as_tuple()
                    .ok_or_else(|| LowerError::Invalid("operand is not a tuple".into()))?;
                let index = usize::try_from(index)
                    .ok()
                    .filter(|&i| i < elems.len())
                    .ok_or_else(|| LowerError::Invalid(format!("index {index} out of range")))?;
                let start: usize = elems[..index].iter().map(|e| e.leaves().len()).sum();
                let n = elems[index].leaves().len();
                operands[0]
                    .get(start..start + n)
                    .ok_or_else(|| LowerError::Invalid("tuple leaf count mismatch".into()))?
                    .to_vec()
            }
            Opcode::Copy => operands[0].to_vec(),
            _ => return Ok(None),
        }))
    }

    /// Bitcasts; other opcodes go on to [`Self::shaping_instruction`].
    pub(super) fn bitcast_instruction(&mut self, site: &mut Site) -> Lowering {
        let (c, instr, operands, indent) = (site.c, site.instr, site.operands, site.indent);
        let out = &mut *site.out;
        let op = instr.opcode;
        Ok(Some(match op {
            Opcode::Bitcast => {
                let src = operand_shape(c, instr, 0)?;
                let src = src
                    .as_array()
                    .ok_or_else(|| LowerError::Invalid("bitcast of a tuple".into()))?;
                let dst = array_shape_of(instr)?.clone();
                if src.dtype.bit_width() != dst.dtype.bit_width()
                    || src.dtype.is_complex() != dst.dtype.is_complex()
                    || src.element_count() != dst.element_count()
                {
                    return unsupported("bitcast that changes the element width or count");
                }
                // a physical reinterpretation: the operand's elements in its
                // physical order (a transpose to major-to-minor order), the
                // bits reinterpreted, then laid out in the result's physical
                // order (a reshape to its major-to-minor dims and the inverse
                // transpose)
                let major_to_minor = |s: &ArrayShape| -> Result<Vec<usize>, LowerError> {
                    let rank = s.dims.len();
                    let order: Vec<usize> = match &s.layout {
                        Some(l) if !l.minor_to_major.is_empty() => l
                            .minor_to_major
                            .iter()
                            .rev()
                            .map(|&d| usize::try_from(d).ok().filter(|&d| d < rank))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| LowerError::Invalid(format!("bad layout in {s}")))?,
                        _ => (0..rank).collect(),
                    };
                    let mut seen = order.clone();
                    seen.sort_unstable();
                    if seen != (0..rank).collect::<Vec<_>>() {
                        return invalid(format!("layout of {s} is not a permutation"));
                    }
                    Ok(order)
                };
                let (ps, pd) = (major_to_minor(src)?, major_to_minor(&dst)?);
                let identity = |p: &[usize]| p.iter().enumerate().all(|(i, &d)| i == d);
                let permuted = |s: &ArrayShape, p: &[usize], dtype: ElementType| {
                    let mut a =
                        ArrayShape::new(dtype, p.iter().map(|&d| s.dims[d]).collect::<Vec<i64>>());
                    a.layout = None;
                    a
                };
                let mut vals = arrays_of(operands)?;
                if !identity(&ps) {
                    let t = tensor_type(&permuted(src, &ps, src.dtype))?;
                    let attrs = [format!(
                        "permutation = {}",
                        array_attr(&ps.iter().map(|&d| d as i64).collect::<Vec<_>>())
                    )];
                    vals = self.op(out, indent, "stablehlo.transpose", &vals, &[], &attrs, &[t]);
                }
                let flat = permuted(&dst, &pd, dst.dtype);
                if src.dtype != dst.dtype {
                    let t = tensor_type(&permuted(src, &ps, dst.dtype))?;
                    vals = self.op(
                        out,
                        indent,
                        "stablehlo.bitcast_convert",
                        &vals,
                        &[],
                        &[],
                        &[t],
                    );
                }
                if identity(&pd) {
                    self.op(
                        out,
                        indent,
                        "stablehlo.reshape",
                        &vals,
                        &[],
                        &[],
                        &result_types_of(instr)?,
                    )
                } else {
                    let t = tensor_type(&flat)?;
                    vals = self.op(out, indent, "stablehlo.reshape", &vals, &[], &[], &[t]);
                    let mut inverse = vec![0usize; pd.len()];
                    for (j, &q) in pd.iter().enumerate() {
                        inverse[q] = j;
                    }
                    let attrs = [format!(
                        "permutation = {}",
                        array_attr(&inverse.iter().map(|&d| d as i64).collect::<Vec<_>>())
                    )];
                    self.op(
                        out,
                        indent,
                        "stablehlo.transpose",
                        &vals,
                        &[],
                        &attrs,
                        &result_types_of(instr)?,
                    )
                }
            }
            _ => return Ok(None),
        }))
    }
}
