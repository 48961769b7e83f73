//! Complex values (`c64`, `c128`) in the elementwise ops.
//!
//! Ops that only move elements (broadcast, reshape, slice, select, gather,
//! ...) are generic over the storage type and need nothing here. The ops
//! that look at values compute in `Complex<f64>` (num_complex's textbook
//! forms: the interpreter's own implementation, not the reference's) and
//! round each component once into the result's component type, the way the
//! interpreter computes f16 in f32. Ops StableHLO does not define on complex
//! values (ordered compares, max/min, remainder, rounding, ...) are
//! `Unsupported`.

use num_complex::Complex;

use super::elem::{err, make, same_shape, Res};
use crate::backend::BackendError;
use crate::hlo::{ArrayShape, ComparisonDirection, ElementType, Opcode};
use crate::literal::{complex_type, component_type, Literal};

type C = Complex<f64>;

/// Every element of a complex literal in f64 pairs.
fn values(x: &Literal) -> Vec<C> {
    x.to_complex_vec()
        .into_iter()
        .map(|(re, im)| C::new(re, im))
        .collect()
}

/// A complex literal of `dtype` from f64 pairs, each component rounded once.
fn complex_literal(dtype: ElementType, dims: &[usize], v: Vec<C>) -> Res<Literal> {
    match dtype {
        ElementType::C64 => make(
            dtype,
            dims,
            v.into_iter()
                .map(|c| Complex::new(c.re as f32, c.im as f32))
                .collect(),
        ),
        ElementType::C128 => make(dtype, dims, v),
        _ => err(format!("internal error: {dtype} is not complex")),
    }
}

/// A real literal of `dtype` (f32 or f64) from f64 values, rounded once.
fn real_literal(dtype: ElementType, dims: &[usize], v: Vec<f64>) -> Res<Literal> {
    match dtype {
        ElementType::F32 => make(dtype, dims, v.into_iter().map(|x| x as f32).collect()),
        ElementType::F64 => make(dtype, dims, v),
        _ => err(format!(
            "internal error: {dtype} is not a complex component"
        )),
    }
}

fn expm1(z: C) -> C {
    // e^z - 1 = (e^x cos y - 1) + i e^x sin y, with the real part as
    // expm1(x) cos y - 2 sin^2(y/2) so that it does not cancel near 0
    let s = (z.im / 2.0).sin();
    C::new(
        z.re.exp_m1() * z.im.cos() - 2.0 * s * s,
        z.re.exp() * z.im.sin(),
    )
}

fn log1p(z: C) -> C {
    // |1 + z|^2 - 1 = 2x + x^2 + y^2, without forming 1 + x
    let (x, y) = (z.re, z.im);
    if x.abs() < 0.5 && y.abs() < 0.5 {
        C::new(0.5 * (x * (2.0 + x) + y * y).ln_1p(), y.atan2(1.0 + x))
    } else {
        (C::new(1.0, 0.0) + z).ln()
    }
}

fn tanh(z: C) -> C {
    // num_complex's form overflows cosh(2x) for |x| > 354; past 20 the
    // real part is ±1 and the imaginary part below 2^-56
    if z.re.abs() > 20.0 {
        C::new(
            z.re.signum(),
            4.0 * (z.im * 2.0).sin() * (-2.0 * z.re.abs()).exp() / 2.0,
        )
    } else {
        z.tanh()
    }
}

fn sign(z: C) -> C {
    if z.re.is_nan() || z.im.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    let r = z.norm();
    if r == 0.0 {
        z
    } else {
        z / r
    }
}

/// A unary function on complex values, or None where StableHLO defines none.
fn unary_fn(op: Opcode) -> Option<fn(C) -> C> {
    Some(match op {
        Opcode::Negate => |z: C| -z,
        Opcode::Sign => sign,
        Opcode::Exponential => |z: C| z.exp(),
        Opcode::ExponentialMinusOne => expm1,
        Opcode::Log => |z: C| z.ln(),
        Opcode::LogPlusOne => log1p,
        Opcode::Sqrt => |z: C| z.sqrt(),
        Opcode::Rsqrt => |z: C| C::new(1.0, 0.0) / z.sqrt(),
        Opcode::Sine => |z: C| z.sin(),
        Opcode::Cosine => |z: C| z.cos(),
        Opcode::Tan => |z: C| z.tan(),
        Opcode::Tanh => tanh,
        Opcode::Logistic => |z: C| C::new(1.0, 0.0) / (C::new(1.0, 0.0) + (-z).exp()),
        _ => return None,
    })
}

/// An elementwise op of one complex operand; `out` is the result type.
pub(crate) fn unary(op: Opcode, x: &Literal, out: ElementType) -> Res<Literal> {
    let dims = x.dims().to_vec();
    let dt = x.dtype();
    let Some(comp) = component_type(dt) else {
        // real(x) = x and imag(x) = 0 on a real operand
        return match (op, dt) {
            (Opcode::Real, ElementType::F32 | ElementType::F64) => Ok(x.clone()),
            (Opcode::Imag, ElementType::F32 | ElementType::F64) => {
                real_literal(dt, &dims, vec![0.0; x.element_count()])
            }
            _ => Err(BackendError::unsupported(format!("{op} on {dt}"))),
        };
    };
    let v = values(x);
    let want = |t: ElementType| -> Res<()> {
        if out == t {
            Ok(())
        } else {
            err(format!(
                "{op}: result type {out} for a {dt} operand, want {t}"
            ))
        }
    };
    match op {
        Opcode::Real => {
            want(comp)?;
            real_literal(comp, &dims, v.iter().map(|z| z.re).collect())
        }
        Opcode::Imag => {
            want(comp)?;
            real_literal(comp, &dims, v.iter().map(|z| z.im).collect())
        }
        Opcode::Abs => {
            want(comp)?;
            real_literal(comp, &dims, v.iter().map(|z| z.re.hypot(z.im)).collect())
        }
        _ => {
            let f =
                unary_fn(op).ok_or_else(|| BackendError::unsupported(format!("{op} on {dt}")))?;
            want(dt)?;
            complex_literal(dt, &dims, v.into_iter().map(f).collect())
        }
    }
}

/// An elementwise op of two complex operands of one type.
pub(crate) fn binary(op: Opcode, x: &Literal, y: &Literal) -> Res<Literal> {
    let dt = x.dtype();
    same_shape(&op.to_string(), x, y)?;
    let f: fn(C, C) -> C = match op {
        Opcode::Add => |a, b| a + b,
        Opcode::Subtract => |a, b| a - b,
        Opcode::Multiply => |a, b| a * b,
        Opcode::Divide => |a, b| a / b,
        Opcode::Power => |a, b| a.powc(b),
        _ => return Err(BackendError::unsupported(format!("{op} on {dt}"))),
    };
    let (a, b) = (values(x), values(y));
    let v = a.into_iter().zip(b).map(|(a, b)| f(a, b)).collect();
    complex_literal(dt, x.dims(), v)
}

/// `complex(re, im)`: two real operands of one type make a complex value.
pub(crate) fn make_complex(re: &Literal, im: &Literal) -> Res<Literal> {
    let dt = re.dtype();
    same_shape("complex", re, im)?;
    // f32 and f64 parts are exact in f64: one path for both
    let Some(ct) = complex_type(dt) else {
        return Err(BackendError::unsupported(format!("complex of {dt} parts")));
    };
    let v = (0..re.element_count())
        .map(|i| C::new(re.get_f64(i), im.get_f64(i)))
        .collect();
    complex_literal(ct, re.dims(), v)
}

/// `compare` EQ/NE of complex values: both components equal (NaN != NaN).
pub(crate) fn compare(x: &Literal, y: &Literal, d: ComparisonDirection) -> Res<Literal> {
    let eq = match d {
        ComparisonDirection::Eq => true,
        ComparisonDirection::Ne => false,
        _ => {
            return Err(BackendError::unsupported(format!(
                "compare {d:?} on {} (complex values are not ordered)",
                x.dtype()
            )))
        }
    };
    if x.dtype() != y.dtype() || x.dims() != y.dims() {
        return err(format!(
            "compare: operand shapes differ: {} vs {}",
            x.shape(),
            y.shape()
        ));
    }
    let v = values(x)
        .into_iter()
        .zip(values(y))
        .map(|(a, b)| (a.re == b.re && a.im == b.im) == eq)
        .collect();
    make(ElementType::Pred, x.dims(), v)
}

/// `convert` to or from a complex type: real -> complex (a zero imaginary
/// part), complex -> complex (each part rounded once). complex -> real is
/// not defined by XLA: `Unsupported`.
pub(crate) fn convert(x: &Literal, out: ElementType) -> Res<Literal> {
    let dims = x.dims().to_vec();
    let Some(comp) = component_type(out) else {
        return Err(BackendError::unsupported(format!(
            "convert {} to {out}: complex to real is not defined",
            x.dtype()
        )));
    };
    if x.dtype().is_complex() {
        return complex_literal(out, &dims, values(x));
    }
    // the real part rounded once to the component type (Rust's integer
    // and f64 casts round to nearest even)
    let single = comp == ElementType::F32;
    let part = |i: usize| -> f64 {
        if x.dtype().is_float() {
            let f = x.get_f64(i);
            if single {
                f as f32 as f64
            } else {
                f
            }
        } else {
            let k = x.get_i128(i);
            if single {
                k as f32 as f64
            } else {
                k as f64
            }
        }
    };
    let v = (0..x.element_count())
        .map(|i| C::new(part(i), 0.0))
        .collect();
    complex_literal(complex_type(comp).unwrap_or(out), &dims, v)
}

/// The f64 planes of a complex literal (a real one has a zero imaginary plane).
fn f64_planes(x: &Literal) -> Res<(Literal, Literal)> {
    let dims = x.dims().to_vec();
    let v = values(x);
    Ok((
        real_literal(ElementType::F64, &dims, v.iter().map(|z| z.re).collect())?,
        real_literal(ElementType::F64, &dims, v.iter().map(|z| z.im).collect())?,
    ))
}

/// A complex contraction (dot or convolution) as four real ones on f64
/// planes (`re = ar·br - ai·bi`, `im = ar·bi + ai·br`), each accumulated in
/// f64, combined in f64 and rounded once per component.
pub(crate) fn contraction(
    lhs: &Literal,
    rhs: &Literal,
    out: &ArrayShape,
    real: impl Fn(&Literal, &Literal, &ArrayShape) -> Res<Literal>,
) -> Res<Literal> {
    if !(lhs.dtype().is_complex() && rhs.dtype().is_complex() && out.dtype.is_complex()) {
        return Err(BackendError::unsupported(format!(
            "a contraction of {} and {} into {}",
            lhs.dtype(),
            rhs.dtype(),
            out.dtype
        )));
    }
    let ((ar, ai), (br, bi)) = (f64_planes(lhs)?, f64_planes(rhs)?);
    let mut plane = out.clone();
    plane.dtype = ElementType::F64;
    plane.layout = None;
    let (rr, ii) = (real(&ar, &br, &plane)?, real(&ai, &bi, &plane)?);
    let (ri, ir) = (real(&ar, &bi, &plane)?, real(&ai, &br, &plane)?);
    let dims: Vec<usize> = rr.dims().to_vec();
    let v = (0..rr.element_count())
        .map(|i| C::new(rr.get_f64(i) - ii.get_f64(i), ri.get_f64(i) + ir.get_f64(i)))
        .collect();
    complex_literal(out.dtype, &dims, v)
}
