//! Alternative legal expected results: how to make them from the module and
//! the arguments (the reference then evaluates them).

use super::numerics::Numerics;
use super::ulp::{classify, FloatClass};
use crate::hlo::{ArrayShape, CompId, ElementType, Instruction, Module, Opcode, Shape};
use crate::literal::Literal;

/// The arguments with every subnormal of a type the backend flushes on input
/// replaced by the zero of the same sign; None when nothing changes.
///
/// ```
/// use xla_props::check::{flush_subnormal_inputs, Numerics};
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2]), &[-1e-40, 1.0]).unwrap();
/// let n = Numerics::exact().with_ftz(ElementType::F32, true, false);
/// let flushed = flush_subnormal_inputs(&[x.clone()], &n).unwrap();
/// assert_eq!(flushed[0].get_bits(0), 0x8000_0000); // -0
/// assert!(flush_subnormal_inputs(&[x], &Numerics::exact()).is_none());
/// ```
pub fn flush_subnormal_inputs(args: &[Literal], numerics: &Numerics) -> Option<Vec<Literal>> {
    let mut changed = false;
    let out = args
        .iter()
        .map(|a| {
            let dtype = a.dtype();
            let mut a = a.clone();
            if let (true, Some(fmt)) = (numerics.flushes_inputs(dtype), dtype.float_format()) {
                let sign = 1u64 << (fmt.bit_width() - 1);
                for i in 0..a.element_count() {
                    let b = a.get_bits(i);
                    if classify(b, &fmt) == FloatClass::Subnormal {
                        a.set_bits(i, b & sign);
                        changed = true;
                    }
                }
            }
            a
        })
        .collect();
    changed.then_some(out)
}

/// The module with the subnormal float constants of flushed input types
/// made zeros of their sign (a constant is read like an argument: an
/// operand form, or XLA folding it), or None when it has none.
pub fn flush_subnormal_constants(
    module: &crate::hlo::Module,
    numerics: &Numerics,
) -> Option<crate::hlo::Module> {
    let mut m = module.clone();
    let mut changed = false;
    for comp in &mut m.computations {
        for i in &mut comp.instructions {
            let Some(dtype) = i.shape.as_array().map(|a| a.dtype) else {
                continue;
            };
            let (true, Some(fmt)) = (numerics.flushes_inputs(dtype), dtype.float_format()) else {
                continue;
            };
            if let Some(crate::hlo::ConstantData::Float(v)) = &mut i.attrs.constant {
                for x in v.iter_mut() {
                    if *x != 0.0 && x.is_finite() && x.abs() < fmt.min_normal() {
                        *x = if *x < 0.0 { -0.0 } else { 0.0 };
                        changed = true;
                    }
                }
            }
        }
    }
    changed.then_some(m)
}

pub(crate) fn is_narrow_float(t: ElementType) -> bool {
    t.is_float() && t.bit_width() < 32
}

/// `shape` with every narrow float array (f16, bf16, f8) made f32.
pub(crate) fn widen(shape: &Shape) -> Shape {
    match shape {
        Shape::Array(a) if is_narrow_float(a.dtype) => Shape::Array(ArrayShape {
            dtype: ElementType::F32,
            dims: a.dims.clone(),
            layout: a.layout.clone(),
        }),
        Shape::Tuple(t) => Shape::Tuple(t.iter().map(widen).collect()),
        other => other.clone(),
    }
}

/// The module with every fusion computed in f32 where it declares a narrower
/// float type: the intermediates of fused computations are not rounded to
/// their declared f16/bf16/f8 types (a convert between narrow float types
/// inside a fusion becomes a no-op), and the fusion's result is rounded once
/// to its declared type. This is what a backend keeping excess precision
/// inside fusions may legally compute. None when no fusion has a narrow float
/// value, or a fusion returns a tuple.
pub fn excess_precision_variant(module: &Module) -> Option<Module> {
    let mut m = module.clone();
    let mut fused: Vec<CompId> = Vec::new();
    for comp in &module.computations {
        for i in &comp.instructions {
            if i.opcode == Opcode::Fusion {
                fused.extend(i.attrs.calls.first().copied());
            }
        }
    }
    fused.sort();
    fused.dedup();
    let mut any = false;
    for &c in &fused {
        let comp = m.computations.get_mut(c.index())?;
        for i in &mut comp.instructions {
            let w = widen(&i.shape);
            if w != i.shape {
                any = true;
                i.shape = w;
            }
        }
    }
    if !any {
        return None;
    }
    // callers: convert narrow operands up, run the widened fusion, convert the result back
    for ci in 0..m.computations.len() {
        if fused.contains(&CompId(ci as u32)) {
            continue;
        }
        let n = m.computations[ci].instructions.len();
        for k in 0..n {
            let instr = m.computations[ci].instructions[k].clone();
            if instr.opcode != Opcode::Fusion {
                continue;
            }
            let original = instr.shape.as_array()?.clone();
            if instr.shape.is_tuple() {
                return None;
            }
            let comp = &mut m.computations[ci];
            let mut operands = Vec::new();
            for (j, &o) in instr.operands.iter().enumerate() {
                let os = comp.instructions.get(o.index())?.shape.clone();
                let ws = widen(&os);
                if ws == os {
                    operands.push(o);
                } else {
                    let id = comp.push(Instruction::new(
                        format!("{}.excess.arg{j}", instr.name),
                        Opcode::Convert,
                        ws,
                        vec![o],
                    ));
                    operands.push(id);
                }
            }
            let mut wide = instr.clone();
            wide.name = format!("{}.excess", instr.name);
            wide.shape = widen(&instr.shape);
            wide.operands = operands;
            let wide_id = comp.push(wide);
            // the original instruction becomes the rounding back to its declared type
            let back = &mut comp.instructions[k];
            back.become_op(Opcode::Convert, vec![wide_id]);
            back.shape = Shape::Array(original);
        }
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{Computation, InstrId};

    #[test]
    fn fusion_is_widened_and_rounded_once() {
        // fused: convert(convert(p0 -> f16) -> f32) - p0, in f32 with an f16 round trip
        let f32s = Shape::array(ElementType::F32, vec![4]);
        let f16s = Shape::array(ElementType::F16, vec![4]);
        let mut p = Instruction::new("p", Opcode::Parameter, f32s.clone(), vec![]);
        p.attrs.parameter_number = Some(0);
        let q = Instruction::new("q", Opcode::Convert, f16s.clone(), vec![InstrId(0)]);
        let back = Instruction::new("b", Opcode::Convert, f32s.clone(), vec![InstrId(1)]);
        let r = Instruction::new(
            "r",
            Opcode::Subtract,
            f32s.clone(),
            vec![InstrId(0), InstrId(2)],
        );
        let fused = Computation {
            name: "fused".into(),
            instructions: vec![p.clone(), q, back, r],
            root: InstrId(3),
            other: vec![],
        };
        let mut f = Instruction::new("f", Opcode::Fusion, f32s.clone(), vec![InstrId(0)]);
        f.attrs.calls = vec![CompId(0)];
        let main = Computation {
            name: "main".into(),
            instructions: vec![p, f],
            root: InstrId(1),
            other: vec![],
        };
        let m = Module {
            name: "m".into(),
            attrs: vec![],
            computations: vec![fused, main],
            entry: CompId(1),
        };
        let v = excess_precision_variant(&m).unwrap();
        // the f16 convert inside is now an f32 -> f32 no-op
        assert_eq!(v.computations[0].instructions[1].shape, f32s);
        // f32 results need no rounding back: the caller still converts (identity)
        let main = &v.computations[1];
        assert_eq!(main.instructions[1].opcode, Opcode::Convert);
        assert_eq!(
            main.instr(main.instructions[1].operands[0]).opcode,
            Opcode::Fusion
        );
        // nothing narrow anywhere: no variant
        let mut plain = m.clone();
        plain.computations[0].instructions[1].shape = f32s;
        assert!(excess_precision_variant(&plain).is_none());
    }
}
