//! Excess precision anywhere in a module: a compiler that may keep narrow
//! float values (f16, bf16, f8) in f32 wherever it likes — XLA's
//! `xla_allow_excess_precision`, on by default: its float normalization runs
//! narrow arithmetic in f32 and its simplifier then drops the
//! convert-to-narrow/convert-back pairs between ops, fused or not — computes
//! the whole program in f32 and rounds only what it returns. The variant
//! module here computes exactly that, for the reference to evaluate as an
//! alternative legal result. (`excess_precision_variant` is the narrower
//! promise: only inside fusions.)

use super::alternatives::widen;
use crate::hlo::{InstrId, Instruction, Module, Opcode, Shape};

/// Rounds `value` (of the widened shape) back to `declared`, appending the
/// instructions to computation `comp`; returns the rounded value.
fn round_back(comp: &mut crate::hlo::Computation, value: InstrId, declared: &Shape) -> InstrId {
    match declared {
        Shape::Tuple(parts) => {
            let mut elems = Vec::new();
            for (k, part) in parts.iter().enumerate() {
                let mut g = Instruction::new(
                    format!("excess.out.{k}"),
                    Opcode::GetTupleElement,
                    widen(part),
                    vec![value],
                );
                g.attrs.index = Some(k as i64);
                let g = comp.push(g);
                elems.push(if widen(part) == *part {
                    g
                } else {
                    round_back(comp, g, part)
                });
            }
            comp.push(Instruction::new(
                "excess.out",
                Opcode::Tuple,
                declared.clone(),
                elems,
            ))
        }
        _ => comp.push(Instruction::new(
            "excess.round",
            Opcode::Convert,
            declared.clone(),
            vec![value],
        )),
    }
}

/// The module computed in f32 wherever it declares a narrower float type:
/// every instruction of every computation (entry, fusions, reducers,
/// comparators, loop bodies) is widened to f32; the entry's narrow
/// parameters and every narrow constant are converted up where they are
/// used; the entry's result is rounded once to its declared types. A
/// `convert` between narrow float types becomes an f32 no-op, so an explicit
/// round trip through a narrow type is elided as well: properties that
/// forbid that say `strict_rounding`. None when nothing is narrow, or the
/// module reinterprets narrow bits (`bitcast-convert`) or calls out
/// (`custom-call`).
///
/// ```
/// use xla_props::check::whole_module_excess_precision_variant;
/// use xla_props::hlo::parse_module;
/// let m = parse_module("HloModule m\nENTRY e {\n  x = bf16[2] parameter(0)\n  y = bf16[2] multiply(x, x)\n  ROOT z = bf16[2] add(y, x)\n}\n").unwrap();
/// let v = whole_module_excess_precision_variant(&m).unwrap();
/// assert_eq!(v.result_shape(), m.result_shape());
/// let f = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT z = f32[2] add(x, x)\n}\n").unwrap();
/// assert!(whole_module_excess_precision_variant(&f).is_none());
/// ```
pub fn whole_module_excess_precision_variant(module: &Module) -> Option<Module> {
    let all = || module.computations.iter().flat_map(|c| &c.instructions);
    if all().any(|i| matches!(i.opcode, Opcode::BitcastConvert | Opcode::CustomCall)) {
        return None;
    }
    if !all().any(|i| widen(&i.shape) != i.shape) {
        return None;
    }
    let mut m = module.clone();
    let entry = m.entry;
    for (ci, comp) in m.computations.iter_mut().enumerate() {
        let is_entry = ci == entry.index();
        let n = comp.instructions.len();
        // values whose declared narrow type stays (entry parameters,
        // constants): converted up once, and every use reads the conversion
        let mut redirect: Vec<Option<InstrId>> = vec![None; n];
        for (k, slot) in redirect.iter_mut().enumerate() {
            let i = &comp.instructions[k];
            let w = widen(&i.shape);
            if w == i.shape {
                continue;
            }
            let keeps_type =
                i.opcode == Opcode::Constant || (is_entry && i.opcode == Opcode::Parameter);
            if keeps_type {
                if i.shape.is_tuple() {
                    return None;
                }
                let up = Instruction::new(
                    format!("{}.excess.up", i.name),
                    Opcode::Convert,
                    w,
                    vec![InstrId(k as u32)],
                );
                *slot = Some(comp.push(up));
            } else {
                comp.instructions[k].shape = w;
            }
        }
        for k in 0..n {
            for o in &mut comp.instructions[k].operands {
                if let Some(r) = redirect.get(o.index()).copied().flatten() {
                    *o = r;
                }
            }
        }
        let declared = module.computations[ci]
            .instr(module.computations[ci].root)
            .shape
            .clone();
        if let Some(r) = redirect.get(comp.root.index()).copied().flatten() {
            if !is_entry {
                comp.root = r;
            }
        }
        if is_entry && widen(&declared) != declared {
            let root = comp.root;
            if comp.instr(root).shape != declared {
                comp.root = round_back(comp, root, &declared);
            }
        }
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{parse_module, ArrayShape, ElementType};
    use crate::literal::Literal;

    fn eval(m: &Module, args: &[Literal]) -> Vec<Literal> {
        crate::reference::evaluate(m, args).unwrap()
    }

    #[test]
    fn a_narrow_chain_rounds_once_at_the_end() {
        // (x + 2^-9) - x in bf16: the sum rounds back to x, so 0; in f32 it
        // is 2^-9, rounded once to bf16 at the end
        let text = "HloModule m\nENTRY e {\n  x = bf16[1] parameter(0)\n  \
                    c = bf16[1] parameter(1)\n  s = bf16[1] add(x, c)\n  ROOT d = bf16[1] subtract(s, x)\n}\n";
        let m = parse_module(text).unwrap();
        let t = ArrayShape::new(ElementType::Bf16, vec![1]);
        let args = [
            Literal::from_f64s(&t, &[1.0]).unwrap(),
            Literal::from_f64s(&t, &[2f64.powi(-9)]).unwrap(),
        ];
        assert_eq!(eval(&m, &args)[0].get_f64(0), 0.0);
        let v = whole_module_excess_precision_variant(&m).unwrap();
        let out = eval(&v, &args);
        assert_eq!(out[0].dtype(), ElementType::Bf16);
        assert_eq!(out[0].get_f64(0), 2f64.powi(-9));
    }

    #[test]
    fn tuples_reducers_and_constants_are_widened_consistently() {
        let text = "HloModule m\nadd {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  \
                    ROOT s = f16[] add(a, b)\n}\nENTRY e {\n  x = f16[4] parameter(0)\n  \
                    z = f16[] constant(0)\n  r = f16[] reduce(x, z), dimensions={0}, to_apply=add\n  \
                    n = f16[4] negate(x)\n  ROOT t = (f16[], f16[4]) tuple(r, n)\n}\n";
        let m = parse_module(text).unwrap();
        let v = whole_module_excess_precision_variant(&m).unwrap();
        assert_eq!(v.result_shape(), m.result_shape());
        let t = ArrayShape::new(ElementType::F16, vec![4]);
        // 2048 + 1 + 1 + 1: f16 rounds every partial sum back to 2048; f32 keeps 2051 -> 2052
        let args = [Literal::from_f64s(&t, &[2048.0, 1.0, 1.0, 1.0]).unwrap()];
        let exact = eval(&m, &args);
        let wide = eval(&v, &args);
        assert_eq!(wide[1].to_f64_vec(), exact[1].to_f64_vec());
        assert_eq!(wide[0].get_f64(0), 2052.0);
        // bit reinterpretation cannot be widened
        let b = "HloModule m\nENTRY e {\n  x = f16[2] parameter(0)\n  ROOT y = s16[2] bitcast-convert(x)\n}\n";
        assert!(whole_module_excess_precision_variant(&parse_module(b).unwrap()).is_none());
    }
}
