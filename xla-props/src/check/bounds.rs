//! How far a reassociating backend may legally be from the reference, through
//! a whole program: a forward error analysis over the reference's own values.
//!
//! Each instruction gets one absolute bound for all its elements. A reduction
//! or contraction introduces `n * eps * max sum|terms|` (the reassociation
//! bound) plus its inputs' bounds times the number of terms; elementwise ops
//! pass bounds on with their sensitivity (`E(x + y) = E(x) + E(y)`,
//! `E(x * y) = E(x) max|y| + E(y) max|x| + E(x)E(y)`, ...), plus one rounding
//! of the result where a bound is already nonzero (a perturbed value may round
//! to the neighbouring value). A bound of 0 stays 0: programs without
//! reductions stay exact. Where a perturbation could change a discrete choice
//! (a compare feeding a select, an integer op) or an op is not modelled, the
//! bound is unknown and nothing is excused.

use super::compare::{magnitude_sums_for_dot, magnitude_sums_for_reduce};
use crate::hlo::{CompId, Computation, ElementType, Module, Opcode};
use crate::literal::{Literal, Value};

/// Per flattened output of `module` on `args`: the absolute error a backend
/// that reassociates reductions may legally show, or None where the analysis
/// cannot bound it.
///
/// ```
/// use xla_props::check::reassociation_error_bounds;
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let text = "HloModule m
/// add {
///   a = f32[] parameter(0)
///   b = f32[] parameter(1)
///   ROOT s = f32[] add(a, b)
/// }
/// ENTRY e {
///   x = f32[4] parameter(0)
///   z = f32[] constant(0)
///   ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
/// }
/// ";
/// let m = parse_module(text).unwrap();
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![4]), &[1.0, -2.0, 3.0, -4.0]).unwrap();
/// // 4 terms, sum |x| = 10: 4 * eps * 10
/// assert_eq!(reassociation_error_bounds(&m, &[x]), vec![Some(40.0 * f32::EPSILON as f64)]);
/// ```
pub fn reassociation_error_bounds(module: &Module, args: &[Literal]) -> Vec<Option<f64>> {
    let errs: Vec<Option<f64>> = args.iter().map(|_| Some(0.0)).collect();
    let n_out = module.result_shape().leaves().len();
    match comp_bounds(module, module.entry, args, &errs, 0) {
        Some(mut v) if v.len() == n_out => {
            v.truncate(n_out);
            v
        }
        _ => vec![None; n_out],
    }
}

/// Largest |x| over the finite elements (None when empty or non-finite values appear).
fn max_abs(l: &Literal) -> Option<f64> {
    let mut m = 0.0f64;
    for i in 0..l.element_count() {
        let v = l.get_f64(i);
        if !v.is_finite() {
            return None;
        }
        m = m.max(v.abs());
    }
    Some(m)
}

fn min_abs(l: &Literal) -> Option<f64> {
    let mut m = f64::INFINITY;
    for i in 0..l.element_count() {
        let v = l.get_f64(i);
        if !v.is_finite() {
            return None;
        }
        m = m.min(v.abs());
    }
    Some(m)
}

/// Half an ULP at the largest magnitude of `z`: one rounding of a perturbed result.
fn rounding(z: &Literal) -> Option<f64> {
    let fmt = z.dtype().float_format()?;
    Some(max_abs(z)? * fmt.epsilon())
}

fn eps(t: ElementType) -> f64 {
    t.float_format().map_or(0.0, |f| f.epsilon())
}

/// Output bounds of computation `comp` run on `frame` with input bounds `frame_errs`.
fn comp_bounds(
    module: &Module,
    comp_id: CompId,
    frame: &[Literal],
    frame_errs: &[Option<f64>],
    depth: usize,
) -> Option<Vec<Option<f64>>> {
    if depth > 16 {
        return None;
    }
    let comp: &Computation = module.computations.get(comp_id.index())?;
    let mut m = module.clone();
    m.entry = comp_id;
    let values = crate::reference::Evaluator::new()
        .evaluate_all(&m, frame)
        .ok()?;
    let order = comp.post_order()?;
    let mut errs: Vec<Option<f64>> = vec![None; comp.instructions.len()];
    for id in order {
        let instr = comp.instr(id);
        let val = |k: usize| -> Option<&Literal> {
            values
                .get(instr.operands.get(k)?.index())?
                .as_ref()?
                .as_array()
        };
        let err = |k: usize| -> Option<f64> { *errs.get(instr.operands.get(k)?.index())? };
        let out = values.get(id.index()).and_then(|v| v.as_ref());
        let z = out.and_then(Value::as_array);
        let all_zero = (0..instr.operands.len()).all(|k| err(k) == Some(0.0));
        let e: Option<f64> = (|| {
            if instr.opcode == Opcode::Parameter {
                let k = usize::try_from(instr.attrs.parameter_number.unwrap_or(-1)).ok();
                k.and_then(|k| frame_errs.get(k).copied().flatten())
            } else if matches!(
                instr.opcode,
                Opcode::Constant | Opcode::Iota | Opcode::Parameter
            ) {
                Some(0.0)
            } else if instr.opcode == Opcode::GetTupleElement {
                // through a tuple built in this computation
                let t = comp.instr(*instr.operands.first()?);
                if t.opcode != Opcode::Tuple {
                    return None;
                }
                let k = usize::try_from(instr.attrs.index?).ok()?;
                *errs.get(t.operands.get(k)?.index())?
            } else if instr.opcode == Opcode::Conditional {
                // the branch the reference took, on its argument
                if err(0) != Some(0.0) {
                    return None;
                }
                let p = val(0)?;
                let n = instr.attrs.branch_computations.len();
                let b = if p.dtype() == ElementType::Pred {
                    if p.get_i128(0) != 0 {
                        0
                    } else {
                        1
                    }
                } else {
                    usize::try_from(p.get_i128(0))
                        .ok()
                        .filter(|&b| b < n)
                        .unwrap_or(n.checked_sub(1)?)
                };
                let branch = *instr.attrs.branch_computations.get(b)?;
                let arg = val(1 + b)?.clone();
                let r = comp_bounds(module, branch, &[arg], &[err(1 + b)], depth + 1)?;
                (r.len() == 1).then(|| r[0]).flatten()
            } else if matches!(instr.opcode, Opcode::Fusion | Opcode::Call | Opcode::Map) {
                let callee = match instr.opcode {
                    Opcode::Fusion => instr.attrs.calls.first().copied(),
                    _ => instr.attrs.to_apply,
                };
                let operand_values: Option<Vec<Literal>> =
                    (0..instr.operands.len()).map(|k| val(k).cloned()).collect();
                let operand_errs: Vec<Option<f64>> = (0..instr.operands.len()).map(err).collect();
                match (callee, operand_values, instr.opcode) {
                    (Some(c), Some(ov), Opcode::Fusion | Opcode::Call) => {
                        comp_bounds(module, c, &ov, &operand_errs, depth + 1)
                            .and_then(|v| (v.len() == 1).then(|| v[0]).flatten())
                    }
                    // a map applies a scalar computation elementwise: all inputs zero-error or unknown
                    (_, _, Opcode::Map) if all_zero => Some(0.0),
                    _ => None,
                }
            } else if all_zero
                && !matches!(
                    instr.opcode,
                    Opcode::Reduce | Opcode::Dot | Opcode::Convolution | Opcode::ReduceWindow
                )
            {
                // exact inputs into a non-reducing op: exactly the reference's rounding
                Some(0.0)
            } else if z.is_some_and(|z| !z.dtype().is_float()) {
                // a perturbed float input to an integer/pred result (compare, convert to int) may flip it
                None
            } else {
                let z = z?;
                match instr.opcode {
                    Opcode::Broadcast
                    | Opcode::Reshape
                    | Opcode::Copy
                    | Opcode::Transpose
                    | Opcode::Slice
                    | Opcode::Reverse
                    | Opcode::Negate
                    | Opcode::Abs
                    | Opcode::Bitcast
                    | Opcode::DynamicSlice
                    | Opcode::Gather => err(0),
                    Opcode::Convert | Opcode::ReducePrecision => Some(err(0)? + rounding(z)?),
                    Opcode::Concatenate | Opcode::Pad | Opcode::Maximum | Opcode::Minimum => {
                        let mut m = 0.0f64;
                        for k in 0..instr.operands.len() {
                            m = m.max(err(k)?);
                        }
                        Some(m)
                    }
                    Opcode::Clamp => Some(err(0)?.max(err(1)?).max(err(2)?)),
                    Opcode::Select => {
                        if err(0) == Some(0.0) {
                            Some(err(1)?.max(err(2)?))
                        } else {
                            None
                        }
                    }
                    Opcode::Add | Opcode::Subtract => Some(err(0)? + err(1)? + rounding(z)?),
                    Opcode::Multiply => {
                        let (ex, ey) = (err(0)?, err(1)?);
                        let (mx, my) = (max_abs(val(0)?)?, max_abs(val(1)?)?);
                        Some(ex * my + ey * mx + ex * ey + rounding(z)?)
                    }
                    Opcode::Divide => {
                        let (ex, ey) = (err(0)?, err(1)?);
                        let den = min_abs(val(1)?)? - ey;
                        if den <= 0.0 {
                            None
                        } else {
                            Some((ex + max_abs(z)? * ey) / den + rounding(z)?)
                        }
                    }
                    // Lipschitz constant at most 1
                    Opcode::Tanh | Opcode::Logistic | Opcode::Sine | Opcode::Cosine => {
                        Some(err(0)? + rounding(z)?)
                    }
                    // |exp'| = exp: bounded by the largest result (and its neighbour)
                    Opcode::Exponential | Opcode::ExponentialMinusOne => {
                        let ex = err(0)?;
                        Some(ex * (max_abs(z)? + 1.0) * ex.exp() + rounding(z)?)
                    }
                    Opcode::Log | Opcode::Sqrt | Opcode::Rsqrt => {
                        let ex = err(0)?;
                        let lo = min_abs(val(0)?)? - ex;
                        if lo <= 0.0 {
                            None
                        } else {
                            let slope = match instr.opcode {
                                Opcode::Log => 1.0 / lo,
                                Opcode::Sqrt => 0.5 / lo.sqrt(),
                                _ => 0.5 / (lo * lo.sqrt()),
                            };
                            Some(ex * slope + rounding(z)?)
                        }
                    }
                    Opcode::Reduce if instr.operands.len() == 2 => {
                        let reducer = module.computations.get(instr.attrs.to_apply?.index())?;
                        let x = val(0)?;
                        let terms = (x.element_count() / z.element_count().max(1)) as f64;
                        match reducer.instr(reducer.root).opcode {
                            Opcode::Add => {
                                let init = val(1)?;
                                if init.element_count() != 1 {
                                    None
                                } else {
                                    let dims = instr.attrs.dimensions.as_ref()?;
                                    let sums = magnitude_sums_for_reduce(x, init.get_f64(0), dims);
                                    let max_sum = sums.sum_abs.iter().copied().fold(0.0, f64::max);
                                    Some(
                                        terms * eps(z.dtype()) * max_sum
                                            + terms * err(0)?
                                            + err(1)?,
                                    )
                                }
                            }
                            Opcode::Maximum | Opcode::Minimum => Some(err(0)?.max(err(1)?)),
                            _ => None,
                        }
                    }
                    Opcode::Dot => {
                        let (a, b) = (val(0)?, val(1)?);
                        let sums =
                            magnitude_sums_for_dot(a, b, instr.attrs.dot_dims.as_ref()?).ok()?;
                        let max_sum = sums.sum_abs.iter().copied().fold(0.0, f64::max);
                        let t = sums.terms as f64;
                        let (ea, eb) = (err(0)?, err(1)?);
                        let (ma, mb) = (max_abs(a)?, max_abs(b)?);
                        Some(t * eps(z.dtype()) * max_sum + t * (ea * mb + eb * ma + ea * eb))
                    }
                    Opcode::Convolution | Opcode::ReduceWindow => {
                        // terms per output element, bounded by the operand sizes
                        let x = val(0)?;
                        let t = match instr.opcode {
                            Opcode::Convolution => {
                                let w = val(1)?;
                                let out_features = instr
                                    .attrs
                                    .conv_dims
                                    .as_ref()
                                    .and_then(|d| usize::try_from(d.kernel_output_feature).ok())
                                    .and_then(|d| w.dims().get(d).copied())
                                    .unwrap_or(1)
                                    .max(1);
                                (w.element_count() / out_features) as f64
                            }
                            _ => instr
                                .attrs
                                .window
                                .as_ref()?
                                .iter()
                                .map(|w| w.size as f64)
                                .product(),
                        };
                        let mx = max_abs(x)?;
                        let (scale, ew) = match instr.opcode {
                            Opcode::Convolution => (max_abs(val(1)?)?, err(1)?),
                            _ => (1.0, 0.0),
                        };
                        if instr.opcode == Opcode::ReduceWindow {
                            let reducer = module.computations.get(instr.attrs.to_apply?.index())?;
                            if reducer.instr(reducer.root).opcode != Opcode::Add {
                                return None;
                            }
                        }
                        Some(t * eps(z.dtype()) * t * mx * scale + t * (err(0)? * scale + ew * mx))
                    }
                    _ => None,
                }
            }
        })();
        errs[id.index()] = e;
    }
    let root = comp.instr(comp.root);
    if root.opcode == Opcode::Tuple {
        Some(
            root.operands
                .iter()
                .map(|o| errs.get(o.index()).copied().flatten())
                .collect(),
        )
    } else {
        Some(vec![errs.get(comp.root.index()).copied().flatten()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{parse_module, ArrayShape};

    fn lit(t: ElementType, dims: &[i64], v: &[f64]) -> Literal {
        Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), v).unwrap()
    }

    const ADD: &str = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

    #[test]
    fn reduce_then_elementwise_by_hand() {
        // r = reduce_add(x) over 4 terms, then r * 2 through a tuple
        let text = format!(
            "HloModule m\n{ADD}ENTRY e {{\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  r = f32[] reduce(x, z), dimensions={{0}}, to_apply=add\n  two = f32[] constant(2)\n  m = f32[] multiply(r, two)\n  t = (f32[]) tuple(m)\n  ROOT g = f32[] get-tuple-element(t), index=0\n}}\n"
        );
        let m = parse_module(&text).unwrap();
        let x = lit(ElementType::F32, &[4], &[1.0, -2.0, 3.0, -4.0]);
        let b = reassociation_error_bounds(&m, &[x])[0].unwrap();
        // reduce: 4 * eps * (1+2+3+4) = 40 eps; times 2 (max|two|) plus one
        // rounding of |m| = 4: 80 eps + 4 eps
        let eps = f32::EPSILON as f64;
        assert_eq!(b, 80.0 * eps + 4.0 * eps);
    }

    #[test]
    fn a_compare_on_a_perturbed_value_is_unbounded() {
        let text = format!(
            "HloModule m\n{ADD}ENTRY e {{\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  r = f32[] reduce(x, z), dimensions={{0}}, to_apply=add\n  c = pred[] compare(r, z), direction=GT\n  one = f32[] constant(1)\n  ROOT s = f32[] select(c, one, z)\n}}\n"
        );
        let m = parse_module(&text).unwrap();
        let x = lit(ElementType::F32, &[4], &[1.0, -2.0, 3.0, -4.0]);
        assert_eq!(reassociation_error_bounds(&m, &[x]), vec![None]);
    }

    #[test]
    fn conditional_takes_the_branch_the_reference_took() {
        let text = "HloModule m\nt {\n  p = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\nf {\n  p = f32[2,2] parameter(0)\n  ROOT n = f32[2,2] negate(p)\n}\nENTRY e {\n  c = pred[] parameter(0)\n  x = f32[2,2] parameter(1)\n  ROOT r = f32[2,2] conditional(c, x, x), true_computation=t, false_computation=f\n}\n";
        let m = parse_module(text).unwrap();
        let x = lit(ElementType::F32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let yes = lit(ElementType::Pred, &[], &[1.0]);
        let no = lit(ElementType::Pred, &[], &[0.0]);
        // dot: 2 terms, max sum |a b| = |3*2| + |4*4| = 22
        let eps = f32::EPSILON as f64;
        assert_eq!(
            reassociation_error_bounds(&m, &[yes, x.clone()]),
            vec![Some(2.0 * eps * 22.0)]
        );
        assert_eq!(reassociation_error_bounds(&m, &[no, x]), vec![Some(0.0)]);
    }
}
