//! Multiply-add contraction: a backend that compiles `a * b + c` into one
//! fused multiply-add (LLVM's `contract`, as XLA CPU does inside its fused
//! elementwise loops) rounds the product not at all and the sum once. The
//! variant module here computes exactly that, for the reference to evaluate
//! as an alternative legal result.

use crate::hlo::{ArrayShape, ElementType, InstrId, Instruction, Module, Opcode, Shape};

/// Float types whose multiply-adds the variant contracts: products of two
/// of their values are exact in f64, so f64 arithmetic rounded once more to
/// the type models a fused multiply-add (up to a double rounding in the rare
/// halfway case). f64 itself cannot be modelled this way and is left alone.
fn contractible(t: ElementType) -> bool {
    t.is_float() && t.bit_width() <= 32
}

fn wide(a: &ArrayShape) -> Shape {
    Shape::Array(ArrayShape {
        dtype: ElementType::F64,
        dims: a.dims.clone(),
        layout: a.layout.clone(),
    })
}

/// The module with every `add`/`subtract` of an f32-or-narrower float whose
/// operand is a `multiply` of the same shape computed as a fused
/// multiply-add: `a * b ± c` (or `c ± a * b`) evaluated in f64 from the
/// multiply's operands and rounded once to the declared type. Every
/// computation is rewritten (called computations and the entry, with the
/// entry's fusions inlined first: a compiler fuses a multiply into the
/// fusion that consumes it).
/// None when the module has no such pair.
///
/// ```
/// use xla_props::check::fma_contraction_variant;
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  x = f32[2] parameter(1)\n  y = f32[2] parameter(2)\n  p = f32[2] multiply(a, x)\n  ROOT s = f32[2] add(p, y)\n}\n").unwrap();
/// let v = fma_contraction_variant(&m).unwrap();
/// let e = v.entry_computation();
/// assert_eq!(e.instr(e.root).opcode, Opcode::Convert);
/// let plain = parse_module("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT s = f32[2] add(a, a)\n}\n").unwrap();
/// assert!(fma_contraction_variant(&plain).is_none());
/// ```
pub fn fma_contraction_variant(module: &Module) -> Option<Module> {
    // a multiply feeding a fusion is fused into it by the compiler: inline
    // the entry's fusions first, so the pair is seen across the boundary
    let mut m = module.clone();
    for _ in 0..module.entry_computation().instructions.len() {
        let entry = m.entry_computation();
        let Some(k) = entry
            .instructions
            .iter()
            .position(|i| i.opcode == Opcode::Fusion)
        else {
            break;
        };
        match crate::hlo::rewrite::inline_fusion(&m, InstrId(k as u32)) {
            Some(inlined) => m = inlined,
            None => break,
        }
    }
    let mut any = false;
    for comp in &mut m.computations {
        let n = comp.instructions.len();
        for k in 0..n {
            let instr = comp.instructions[k].clone();
            if !matches!(instr.opcode, Opcode::Add | Opcode::Subtract) || instr.operands.len() != 2
            {
                continue;
            }
            let Some(shape) = instr.shape.as_array().cloned() else {
                continue;
            };
            if !contractible(shape.dtype) {
                continue;
            }
            let is_product = |id: InstrId| {
                comp.instructions.get(id.index()).is_some_and(|p| {
                    p.opcode == Opcode::Multiply
                        && p.operands.len() == 2
                        && p.shape.as_array().is_some_and(|a| *a == shape)
                })
            };
            let (lhs, rhs) = (instr.operands[0], instr.operands[1]);
            let (product, product_first) = if is_product(lhs) {
                (lhs, true)
            } else if is_product(rhs) {
                (rhs, false)
            } else {
                continue;
            };
            let other = if product_first { rhs } else { lhs };
            let factors = comp.instructions[product.index()].operands.clone();
            let w = wide(&shape);
            let name = &instr.name;
            // the two factors and the addend, converted up to f64
            let [a, b, c] = [(factors[0], "a"), (factors[1], "b"), (other, "c")].map(|(v, tag)| {
                comp.push(Instruction::new(
                    format!("{name}.fma.{tag}"),
                    Opcode::Convert,
                    w.clone(),
                    vec![v],
                ))
            });
            let p = comp.push(Instruction::new(
                format!("{name}.fma.mul"),
                Opcode::Multiply,
                w.clone(),
                vec![a, b],
            ));
            let operands = if product_first {
                vec![p, c]
            } else {
                vec![c, p]
            };
            let s = comp.push(Instruction::new(
                format!("{name}.fma"),
                instr.opcode,
                w,
                operands,
            ));
            // the original instruction becomes the single rounding
            comp.instructions[k].become_op(Opcode::Convert, vec![s]);
            any = true;
        }
    }
    any.then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    fn eval(m: &Module, args: &[Literal]) -> Vec<Literal> {
        crate::reference::evaluate(m, args).unwrap()
    }

    /// Two f32 arguments of `a.len()` elements.
    fn f32_pair(a: &[f64], b: &[f64]) -> [Literal; 2] {
        let s = ArrayShape::new(ElementType::F32, vec![a.len() as i64]);
        [a, b].map(|v| Literal::from_f64s(&s, v).unwrap())
    }

    /// a*a - p with a = 1 + 2^-12, p = round(a*a): the separately rounded
    /// result is 0, the fused one is the product's rounding error 2^-24;
    /// the multiply and the subtract in one computation, and the multiply
    /// feeding a fusion that subtracts (contracted with its add too)
    #[test]
    fn the_variant_rounds_a_multiply_add_once() {
        let plain =
            "HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  p = f32[1] parameter(1)\n  \
                    m = f32[1] multiply(a, a)\n  ROOT s = f32[1] subtract(m, p)\n}\n";
        let fused = "HloModule m\nf {\n  p0 = f32[1] parameter(0)\n  p1 = f32[1] parameter(1)\n  \
                    ROOT s = f32[1] subtract(p0, p1)\n}\nENTRY e {\n  a = f32[1] parameter(0)\n  \
                    p = f32[1] parameter(1)\n  m = f32[1] multiply(a, a)\n  \
                    ROOT r = f32[1] fusion(m, p), kind=kLoop, calls=f\n}\n";
        let a = 1.0 + 2f64.powi(-12);
        let args = f32_pair(&[a], &[(a * a) as f32 as f64]);
        for text in [plain, fused] {
            let m = parse_module(text).unwrap();
            assert_eq!(eval(&m, &args)[0].get_f64(0), 0.0, "{text}");
            let v = fma_contraction_variant(&m).unwrap();
            assert_eq!(eval(&v, &args)[0].get_f64(0), 2f64.powi(-24), "{text}");
        }
    }

    #[test]
    fn the_product_may_be_either_operand_and_f64_is_left_alone() {
        let text =
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  c = f32[2] parameter(1)\n  \
                    m = f32[2] multiply(a, a)\n  ROOT s = f32[2] subtract(c, m)\n}\n";
        let v = fma_contraction_variant(&parse_module(text).unwrap()).unwrap();
        let args = f32_pair(&[3.0, -1.5], &[1.0, 2.0]);
        // exact values agree with the plain module
        assert_eq!(eval(&v, &args)[0].to_f64_vec(), vec![-8.0, -0.25]);
        let f64_text = text.replace("f32", "f64");
        assert!(fma_contraction_variant(&parse_module(&f64_text).unwrap()).is_none());
    }
}

/// The module with every f64 `dot` and `convolution` computed from
/// products that do not overflow: the left operand scaled by 2^-512 and
/// the result by 2^512. A backend that accumulates products with fused
/// multiply-adds (Eigen's matrix kernels, under XLA CPU's f64 dots and
/// convolutions) never rounds a product, so a product that overflows f64 on
/// its own does not make the sum infinite or NaN: `-2.5 * -inf + -2.5 *
/// f64::MAX` is `inf` there, NaN with every product rounded. Where scaling
/// loses a product's low bits (a left operand below 2^-510) the variant
/// differs from both, so it legalizes only what it computes. None when the
/// module has no f64 dot or convolution.
///
/// ```
/// use xla_props::check::unrounded_products_variant;
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  a = f64[2] parameter(0)\n  b = f64[2] parameter(1)\n  ROOT d = f64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n").unwrap();
/// let v = unrounded_products_variant(&m).unwrap();
/// let e = v.entry_computation();
/// // the dot, scaled back: a copy of the product by 2^512
/// assert_eq!(e.instr(e.root).opcode, Opcode::Copy);
/// ```
pub fn unrounded_products_variant(module: &Module) -> Option<Module> {
    let mut m = module.clone();
    let mut any = false;
    for comp in &mut m.computations {
        for k in 0..comp.instructions.len() {
            let instr = comp.instructions[k].clone();
            let Some(out) = instr.shape.as_array().cloned() else {
                continue;
            };
            if !matches!(instr.opcode, Opcode::Dot | Opcode::Convolution)
                || out.dtype != ElementType::F64
                || instr.operands.len() != 2
            {
                continue;
            }
            let Some(lhs) = comp.instructions[instr.operands[0].index()]
                .shape
                .as_array()
                .cloned()
            else {
                continue;
            };
            let name = instr.name.clone();
            let scale = |comp: &mut crate::hlo::Computation,
                         x: InstrId,
                         like: &ArrayShape,
                         e: i32,
                         tag: &str| {
                let c = comp.push(constant_f64(
                    format!("{name}.products.{tag}c"),
                    2f64.powi(e),
                ));
                let mut b = Instruction::new(
                    format!("{name}.products.{tag}b"),
                    Opcode::Broadcast,
                    Shape::Array(like.clone()),
                    vec![c],
                );
                b.attrs.dimensions = Some(Vec::new());
                let b = comp.push(b);
                comp.push(Instruction::new(
                    format!("{name}.products.{tag}m"),
                    Opcode::Multiply,
                    Shape::Array(like.clone()),
                    vec![x, b],
                ))
            };
            let scaled = scale(comp, instr.operands[0], &lhs, -512, "l");
            let mut inner = instr.clone();
            inner.name = format!("{name}.products");
            inner.operands[0] = scaled;
            let inner = comp.push(inner);
            let up = scale(comp, inner, &out, 512, "r");
            comp.instructions[k].become_op(Opcode::Copy, vec![up]);
            any = true;
        }
    }
    any.then_some(m)
}

fn constant_f64(name: String, v: f64) -> Instruction {
    let mut c = Instruction::new(
        name,
        Opcode::Constant,
        Shape::Array(ArrayShape::new(ElementType::F64, Vec::new())),
        Vec::new(),
    );
    c.attrs.constant = Some(crate::hlo::ConstantData::Float(vec![v]));
    c
}

#[cfg(test)]
mod products_tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    #[test]
    fn unrounded_products_keep_an_overflowing_product_finite() {
        // measured on xla-cpu (both versions): a 1x1 f64 convolution of
        // (-inf, f64::MAX) with a kernel of -2.5 is inf (NaN rounded)
        let m = parse_module("HloModule m\nENTRY e {\n  x = f64[1,1,1,2] parameter(0)\n  c = f64[] constant(-2.5)\n  w = f64[1,1,2,1] broadcast(c), dimensions={}\n  ROOT r = f64[1,1,1,1] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n").unwrap();
        let shape = ArrayShape::new(ElementType::F64, vec![1, 1, 1, 2]);
        let x = Literal::from_f64s(&shape, &[f64::NEG_INFINITY, f64::MAX]).unwrap();
        let exact = crate::reference::evaluate(&m, std::slice::from_ref(&x)).unwrap();
        assert!(exact[0].get_f64(0).is_nan());
        let v = unrounded_products_variant(&m).unwrap();
        let alt = crate::reference::evaluate(&v, std::slice::from_ref(&x)).unwrap();
        assert_eq!(alt[0].get_f64(0), f64::INFINITY);
        // finite products are unchanged: 3 * 2.5 + 4 * 2.5
        let y = Literal::from_f64s(&shape, &[3.0, 4.0]).unwrap();
        let alt = crate::reference::evaluate(&v, &[y]).unwrap();
        assert_eq!(alt[0].get_f64(0), -17.5);
        // f32 is left alone
        let f32m = parse_module("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT d = f32[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n").unwrap();
        assert!(unrounded_products_variant(&f32m).is_none());
    }
}
