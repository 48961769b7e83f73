//! Lowering dot, convolution, triangular-solve and rng-bit-generator.

use super::lower::{array_shape_of, operand_shape, present, Lowerer, Lowering, Site};
use super::types::{
    array_attr, invalid, list, mlir_element_type, padding_attr, precision_attr, LowerError,
};
use crate::hlo::stablehlo::convert::stablehlo_rng_algorithm;
use crate::hlo::{Attrs, DotAlgorithm, Instruction, Opcode, OperandPrecision, WindowDim};

/// StableHLO's `#stablehlo.dot_algorithm<...>` of `alg` (as XLA writes it:
/// one component per operand, the `_xN` products as
/// `num_primitive_operations`) for operands of the MLIR element types
/// `lhs` and `rhs` (an f8 algorithm names the operands' own types).
pub(super) fn dot_algorithm_attr(
    alg: DotAlgorithm,
    lhs: &str,
    rhs: &str,
) -> Result<String, LowerError> {
    let prec = |own: &str| -> Result<String, LowerError> {
        Ok(match alg.operand_precision() {
            OperandPrecision::Type(t) => mlir_element_type(t)?.to_string(),
            OperandPrecision::Tf32 => "tf32".to_string(),
            OperandPrecision::AnyF8 => own.to_string(),
        })
    };
    Ok(format!(
        "#stablehlo.dot_algorithm<lhs_precision_type = {}, rhs_precision_type = {}, \
         accumulation_type = {}, lhs_component_count = 1, rhs_component_count = 1, \
         num_primitive_operations = {}, allow_imprecise_accumulation = {}>",
        prec(lhs)?,
        prec(rhs)?,
        mlir_element_type(alg.accumulation_type())?,
        alg.primitive_operations(),
        alg.imprecise_accumulation()
    ))
}

impl Lowerer<'_> {
    /// Dot, convolution, triangular-solve and rng-bit-generator; other
    /// opcodes go on to [`Self::control_instruction`].
    pub(super) fn contraction_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, a) = (site.instr, &site.instr.attrs);
        Ok(Some(match instr.opcode {
            Opcode::Dot => {
                let d = a.dot_dims.clone().unwrap_or_default();
                let mut fields = Vec::new();
                if !d.lhs_batch.is_empty() {
                    fields.push(format!("lhs_batching_dimensions = {}", list(&d.lhs_batch)));
                    fields.push(format!("rhs_batching_dimensions = {}", list(&d.rhs_batch)));
                }
                fields.push(format!(
                    "lhs_contracting_dimensions = {}",
                    list(&d.lhs_contracting)
                ));
                fields.push(format!(
                    "rhs_contracting_dimensions = {}",
                    list(&d.rhs_contracting)
                ));
                let mut attrs = vec![format!(
                    "dot_dimension_numbers = #stablehlo.dot<{}>",
                    fields.join(", ")
                )];
                attrs.extend(precision_attr(&a.precision)?);
                if let Some(alg) = DotAlgorithm::of(a).map_err(LowerError::Invalid)? {
                    let elem = |k: usize| -> Result<&str, LowerError> {
                        match operand_shape(site.c, instr, k)?.as_array() {
                            Some(a) => mlir_element_type(a.dtype),
                            None => invalid("a tuple dot operand"),
                        }
                    };
                    attrs.push(format!(
                        "algorithm = {}",
                        dot_algorithm_attr(alg, elem(0)?, elem(1)?)?
                    ));
                }
                self.emit(site, "stablehlo.dot_general", &[], &attrs)?
            }
            Opcode::Convolution => {
                let attrs = convolution_attrs(instr)?;
                self.emit(site, "stablehlo.convolution", &[], &attrs)?
            }
            Opcode::TriangularSolve => {
                let attrs = triangular_solve_attrs(a)?;
                self.emit(site, "stablehlo.triangular_solve", &[], &attrs)?
            }
            // two results, the state and the bits: the tuple's two leaves
            Opcode::RngBitGenerator => {
                let pair = match instr.shape.as_tuple() {
                    Some([s, o]) => s.as_array().is_some() && o.as_array().is_some(),
                    _ => false,
                };
                if !pair {
                    return invalid("rng-bit-generator's shape is (state, output)");
                }
                let attrs = rng_attrs(a)?;
                self.emit(site, "stablehlo.rng_bit_generator", &[], &attrs)?
            }
            _ => return Ok(None),
        }))
    }
}

/// `stablehlo.convolution`'s attributes: the window, the dimension
/// numbers from `dim_labels`, the group counts and the precision.
fn convolution_attrs(instr: &Instruction) -> Result<Vec<String>, LowerError> {
    let a = &instr.attrs;
    let dn = present(&a.conv_dims, "dim_labels")?;
    let rank = array_shape_of(instr)?.rank();
    let labels = |batch: i64, feature: i64, spatial: &[i64], b: &str, f: &str| {
        let mut v = vec![String::from("?"); rank];
        let mut set = |i: i64, s: String| {
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
                *slot = s;
            }
        };
        set(batch, b.into());
        set(feature, f.into());
        for (k, &d) in spatial.iter().enumerate() {
            set(d, k.to_string());
        }
        format!("[{}]", v.join(", "))
    };
    let input = labels(
        dn.input_batch,
        dn.input_feature,
        &dn.input_spatial,
        "b",
        "f",
    );
    let kernel = labels(
        dn.kernel_input_feature,
        dn.kernel_output_feature,
        &dn.kernel_spatial,
        "i",
        "o",
    );
    let output = labels(
        dn.output_batch,
        dn.output_feature,
        &dn.output_spatial,
        "b",
        "f",
    );
    if [&input, &kernel, &output].iter().any(|s| s.contains('?')) {
        return invalid("dim_labels do not cover every dimension");
    }
    let spatial = dn.input_spatial.len();
    let w: Vec<WindowDim> = match &a.window {
        Some(w) => w.clone(),
        None => vec![WindowDim::new(1); spatial],
    };
    if w.len() != spatial {
        return invalid("window rank differs from the spatial rank");
    }
    let mut attrs = Vec::new();
    if spatial > 0 {
        let strides: Vec<i64> = w.iter().map(|d| d.stride).collect();
        let padding: Vec<(i64, i64)> = w.iter().map(|d| (d.pad_low, d.pad_high)).collect();
        let lhs: Vec<i64> = w.iter().map(|d| d.base_dilation).collect();
        let rhs: Vec<i64> = w.iter().map(|d| d.window_dilation).collect();
        let rev: Vec<String> = w.iter().map(|d| d.reversal.to_string()).collect();
        attrs.push(format!("window_strides = {}", array_attr(&strides)));
        attrs.push(format!("padding = {}", padding_attr(&padding)));
        attrs.push(format!("lhs_dilation = {}", array_attr(&lhs)));
        attrs.push(format!("rhs_dilation = {}", array_attr(&rhs)));
        attrs.push(format!("window_reversal = array<i1: {}>", rev.join(", ")));
    }
    attrs.push(format!(
        "dimension_numbers = #stablehlo.conv<{input}x{kernel}->{output}>"
    ));
    attrs.push(format!(
        "feature_group_count = {} : i64",
        a.feature_group_count.unwrap_or(1)
    ));
    attrs.push(format!(
        "batch_group_count = {} : i64",
        a.batch_group_count.unwrap_or(1)
    ));
    attrs.extend(precision_attr(&a.precision)?);
    Ok(attrs)
}

/// `stablehlo.triangular_solve`'s attributes.
pub(super) fn triangular_solve_attrs(a: &Attrs) -> Result<Vec<String>, LowerError> {
    let t = present(&a.triangular_solve, "triangular-solve options")?;
    let x = t
        .transpose_a
        .ok_or_else(|| LowerError::Invalid("missing transpose_a".into()))?;
    Ok(vec![
        format!("left_side = {}", t.left_side),
        format!("lower = {}", t.lower),
        format!("transpose_a = #stablehlo<transpose {}>", x.name()),
        format!("unit_diagonal = {}", t.unit_diagonal),
    ])
}

/// `stablehlo.rng_bit_generator`'s attribute.
pub(super) fn rng_attrs(a: &Attrs) -> Result<Vec<String>, LowerError> {
    let r = present(&a.rng_algorithm, "algorithm")?;
    Ok(vec![format!(
        "rng_algorithm = #stablehlo<rng_algorithm {}>",
        stablehlo_rng_algorithm(*r)
    )])
}
