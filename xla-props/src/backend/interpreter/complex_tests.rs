//! Tests of the interpreter on complex values, with hand-worked results.

use super::*;
use crate::backend::{Backend, BackendError};
use crate::hlo::{parse_module, ArrayShape, ElementType};
use crate::literal::Literal;

fn run(hlo: &str, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
    let m = parse_module(hlo).expect("test module parses");
    Interpreter::default().compile(&m)?.execute(args)
}

fn c(dt: ElementType, dims: &[usize], v: &[(f64, f64)]) -> Literal {
    let p = crate::literal::plane_shape(&ArrayShape::new(
        dt,
        dims.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
    ));
    let re: Vec<f64> = v.iter().map(|z| z.0).collect();
    let im: Vec<f64> = v.iter().map(|z| z.1).collect();
    Literal::from_planes(
        &Literal::from_f64s(&p, &re).unwrap(),
        &Literal::from_f64s(&p, &im).unwrap(),
    )
    .unwrap()
}

fn unary(op: &str, ty: &str, out: &str, x: Literal) -> Result<Literal, BackendError> {
    let hlo = format!(
        "HloModule m\nENTRY e {{\n  x = {ty}[2] parameter(0)\n  ROOT y = {out}[2] {op}(x)\n}}\n"
    );
    run(&hlo, &[x]).map(|mut v| v.remove(0))
}

fn binary(op: &str, ty: &str, x: Literal, y: Literal) -> Result<Literal, BackendError> {
    let hlo = format!(
        "HloModule m\nENTRY e {{\n  x = {ty}[2] parameter(0)\n  y = {ty}[2] parameter(1)\n  ROOT z = {ty}[2] {op}(x, y)\n}}\n"
    );
    run(&hlo, &[x, y]).map(|mut v| v.remove(0))
}

/// Asserts that the interpreter refused the op as unsupported.
fn assert_unsupported<T>(r: Result<T, BackendError>) {
    assert!(matches!(r, Err(BackendError::Unsupported { .. })));
}

#[test]
fn complex_arithmetic_is_exact_on_small_integers() {
    for (dt, ty) in [(ElementType::C64, "c64"), (ElementType::C128, "c128")] {
        let x = c(dt, &[2], &[(1.0, 2.0), (-3.0, 0.5)]);
        let y = c(dt, &[2], &[(3.0, 4.0), (2.0, -1.0)]);
        let mul = binary("multiply", ty, x.clone(), y.clone()).unwrap();
        assert_eq!(
            mul.to_complex_vec(),
            vec![(-5.0, 10.0), (-5.5, 4.0)],
            "{ty}"
        );
        let add = binary("add", ty, x.clone(), y.clone()).unwrap();
        assert_eq!(add.to_complex_vec(), vec![(4.0, 6.0), (-1.0, -0.5)], "{ty}");
        // (-5 + 10i) / (3 + 4i) = 1 + 2i
        let q = binary("divide", ty, mul, y).unwrap();
        assert_eq!(q.to_complex_vec()[0], (1.0, 2.0), "{ty}");
    }
}

#[test]
fn real_imag_abs_and_complex_split_and_join() {
    let x = c(ElementType::C64, &[2], &[(3.0, -4.0), (-0.0, 2.5)]);
    let re = unary("real", "c64", "f32", x.clone()).unwrap();
    let im = unary("imag", "c64", "f32", x.clone()).unwrap();
    assert_eq!(re.dtype(), ElementType::F32);
    assert_eq!(re.get_f64(0), 3.0);
    assert!(re.get_f64(1) == 0.0 && re.get_f64(1).is_sign_negative());
    assert_eq!(im.get_f64(0), -4.0);
    let abs = unary("abs", "c64", "f32", x.clone()).unwrap();
    assert_eq!(abs.get_f64(0), 5.0);
    let hlo = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT z = c64[2] complex(a, b)\n}\n";
    let joined = run(hlo, &[re, im]).unwrap().remove(0);
    assert_eq!(joined, x);
}

#[test]
fn compare_is_componentwise_equality_and_refuses_orders() {
    let x = c(ElementType::C128, &[2], &[(1.0, 2.0), (f64::NAN, 0.0)]);
    let y = c(ElementType::C128, &[2], &[(1.0, 2.0), (f64::NAN, 0.0)]);
    let hlo = |d: &str| {
        format!("HloModule m\nENTRY e {{\n  x = c128[2] parameter(0)\n  y = c128[2] parameter(1)\n  ROOT z = pred[2] compare(x, y), direction={d}\n}}\n")
    };
    let eq = run(&hlo("EQ"), &[x.clone(), y.clone()]).unwrap().remove(0);
    assert_eq!((eq.get_bits(0), eq.get_bits(1)), (1, 0));
    let ne = run(&hlo("NE"), &[x.clone(), y.clone()]).unwrap().remove(0);
    assert_eq!((ne.get_bits(0), ne.get_bits(1)), (0, 1));
    assert_unsupported(run(&hlo("LT"), &[x, y]));
}

#[test]
fn convert_widens_narrows_and_refuses_complex_to_real() {
    let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2]), &[1.5, -2.0]).unwrap();
    let up = unary("convert", "f32", "c128", x).unwrap();
    assert_eq!(up.to_complex_vec(), vec![(1.5, 0.0), (-2.0, 0.0)]);
    // 1 + 2^-30 is not an f32: c128 -> c64 rounds each part once
    let w = c(
        ElementType::C128,
        &[2],
        &[(1.0 + 2f64.powi(-30), 3.0), (0.0, 1.0)],
    );
    let down = unary("convert", "c128", "c64", w.clone()).unwrap();
    assert_eq!(down.to_complex_vec()[0], (1.0, 3.0));
    assert_unsupported(unary("convert", "c128", "f64", w));
}

#[test]
fn transcendentals_and_constants() {
    // exp(i pi) = -1 (+ a tiny imaginary part), log(-1) = i pi
    let hlo = "HloModule m\nENTRY e {\n  k = c128[] constant((0, 3.141592653589793))\n  ROOT y = c128[] exponential(k)\n}\n";
    let v = run(hlo, &[]).unwrap().remove(0).to_complex_vec()[0];
    assert_eq!(v.0, -1.0);
    assert!(v.1.abs() < 1e-15);
    let x = c(ElementType::C64, &[2], &[(-1.0, 0.0), (0.0, 0.0)]);
    let l = unary("log", "c64", "c64", x).unwrap().to_complex_vec();
    assert_eq!(l[0], (0.0, std::f32::consts::PI as f64));
    assert_eq!(l[1].0, f64::NEG_INFINITY);
    // ordered ops are not defined on complex values
    let y = c(ElementType::C64, &[2], &[(1.0, 0.0), (2.0, 0.0)]);
    assert_unsupported(binary("maximum", "c64", y.clone(), y.clone()));
    assert_unsupported(unary("floor", "c64", "c64", y));
}

#[test]
fn complex_dot_is_four_real_dots() {
    let hlo = "HloModule m\nENTRY e {\n  x = c64[1,2] parameter(0)\n  y = c64[2,1] parameter(1)\n  ROOT z = c64[1,1] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let x = c(ElementType::C64, &[1, 2], &[(1.0, 2.0), (0.0, 1.0)]);
    let y = c(ElementType::C64, &[2, 1], &[(3.0, 4.0), (0.0, 1.0)]);
    // (1+2i)(3+4i) + i*i = -5+10i - 1
    let z = run(hlo, &[x, y]).unwrap().remove(0);
    assert_eq!(z.to_complex_vec(), vec![(-6.0, 10.0)]);
}

/// The interpreter's normwise error on c128 against the reference's
/// kernels, over the harness distribution (each part uniform in [-64, 64]):
/// max over components of `|Δ| / (eps · |z|)`. The budgets in `numerics.rs`
/// are these maxima rounded up.
#[test]
#[ignore]
fn measure_complex_budgets() {
    use crate::hlo::Opcode;
    use crate::reference::complex_math as cm;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut draw = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 128.0 - 64.0
    };
    let n = 200_000;
    let xs: Vec<(f64, f64)> = (0..n).map(|_| (draw(), draw())).collect();
    let ys: Vec<(f64, f64)> = (0..n).map(|_| (draw(), draw())).collect();
    let dt = ElementType::C128;
    let x = c(dt, &[n], &xs);
    let y = c(dt, &[n], &ys);
    let worst = |got: &Literal, want: &[(f64, f64)]| {
        got.to_complex_vec()
            .iter()
            .zip(want)
            .map(|(g, w)| {
                let m = w.0.hypot(w.1);
                ((g.0 - w.0).abs().max((g.1 - w.1).abs())) / (f64::EPSILON * m)
            })
            .filter(|r| r.is_finite())
            .fold(0.0f64, f64::max)
    };
    for op in [Opcode::Multiply, Opcode::Divide, Opcode::Power] {
        let f = cm::binary(op).unwrap();
        let want: Vec<_> = xs.iter().zip(&ys).map(|(&a, &b)| f(a, b)).collect();
        let got = super::complex::binary(op, &x, &y).unwrap();
        println!("{op} c128: {:.3}", worst(&got, &want));
    }
    for op in [
        Opcode::Exponential,
        Opcode::ExponentialMinusOne,
        Opcode::Log,
        Opcode::LogPlusOne,
        Opcode::Sqrt,
        Opcode::Rsqrt,
        Opcode::Sine,
        Opcode::Cosine,
        Opcode::Tan,
        Opcode::Tanh,
    ] {
        let f = cm::unary(op).unwrap();
        let want: Vec<_> = xs.iter().map(|&a| f(a)).collect();
        let got = super::complex::unary(op, &x, dt).unwrap();
        println!("{op} c128: {:.3}", worst(&got, &want));
    }
}

#[test]
fn complex_reductions_keep_both_parts_in_c64_and_c128() {
    // the generic reducer path once copied elements by their bits, which
    // hold only the real part of a c128 (the imaginary plane came out 0)
    for (dt, ty) in [(ElementType::C64, "c64"), (ElementType::C128, "c128")] {
        let x = c(dt, &[3], &[(1.0, 2.0), (3.0, -1.0), (0.5, 0.25)]);
        let cumsum = format!(
            "HloModule m\nadd {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT s = {ty}[] add(a, b)\n}}\nENTRY e {{\n  x = {ty}[3] parameter(0)\n  z = {ty}[] constant((0, 0))\n  ROOT r = {ty}[3] reduce-window(x, z), window={{size=3 pad=2_0}}, to_apply=add\n}}\n"
        );
        let got = run(&cumsum, std::slice::from_ref(&x)).unwrap().remove(0);
        assert_eq!(
            got.to_complex_vec(),
            vec![(1.0, 2.0), (4.0, 1.0), (4.5, 1.25)],
            "{ty}"
        );
        // (1 + 2i)(3 - i) = 5 + 5i; (5 + 5i)(0.5 + 0.25i) = 1.25 + 3.75i
        let prod = format!(
            "HloModule m\nmul {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT s = {ty}[] multiply(a, b)\n}}\nENTRY e {{\n  x = {ty}[3] parameter(0)\n  o = {ty}[] constant((1, 0))\n  ROOT r = {ty}[] reduce(x, o), dimensions={{0}}, to_apply=mul\n}}\n"
        );
        let got = run(&prod, &[x]).unwrap().remove(0);
        assert_eq!(got.to_complex_vec(), vec![(1.25, 3.75)], "{ty}");
    }
}
