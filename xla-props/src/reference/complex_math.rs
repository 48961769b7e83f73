//! Complex scalar kernels, in f64 pairs `(re, im)`: each result is rounded
//! once per component into the output's component type by the caller.
//!
//! Products and quotients use error-free products (FMA), so a component
//! that cancels is still accurate to about an f64 ULP; the transcendentals
//! are the textbook real-function forms (`exp(a+bi) = e^a (cos b + i sin b)`,
//! ...) on the platform libm, written so that no step cancels where the
//! function itself does not (expm1 and log1p near 0).

use crate::hlo::Opcode;

/// A complex value as `(re, im)`.
pub(crate) type C = (f64, f64);

/// `a*b - c*d` with one rounding of error (Kahan's FMA form).
fn diff_of_products(a: f64, b: f64, c: f64, d: f64) -> f64 {
    let w = c * d;
    let e = c.mul_add(-d, w);
    let f = a.mul_add(b, -w);
    f + e
}

/// `a*b + c*d` with one rounding of error.
fn sum_of_products(a: f64, b: f64, c: f64, d: f64) -> f64 {
    diff_of_products(a, b, -c, d)
}

pub(crate) fn mul(x: C, y: C) -> C {
    let (a, b) = x;
    let (c, d) = y;
    (diff_of_products(a, c, b, d), sum_of_products(a, d, b, c))
}

pub(crate) fn div(x: C, y: C) -> C {
    let (a, b) = x;
    let (c, d) = y;
    // scale the divisor to avoid overflow in c^2 + d^2 (a power of two: exact)
    let m = c.abs().max(d.abs());
    if m == 0.0 || !m.is_finite() {
        // zero or infinite divisor: the component-wise IEEE forms
        let den = c * c + d * d;
        return ((a * c + b * d) / den, (b * c - a * d) / den);
    }
    // (a+bi)/(c+di) = s (a+bi)(cs - ds i) / (cs^2 + ds^2) with cs = c s, ds = d s
    let e = m.log2().floor() as i32;
    let s = 2f64.powi(-e);
    let (cs, ds) = (c * s, d * s);
    let den = sum_of_products(cs, cs, ds, ds);
    (
        sum_of_products(a, cs, b, ds) / den * s,
        diff_of_products(b, cs, a, ds) / den * s,
    )
}

pub(crate) fn abs(x: C) -> f64 {
    x.0.hypot(x.1)
}

fn exp(x: C) -> C {
    let e = x.0.exp();
    if x.1 == 0.0 {
        return (e, x.1);
    }
    (e * x.1.cos(), e * x.1.sin())
}

fn expm1(x: C) -> C {
    let (a, b) = x;
    // expm1(a) cos b - 2 sin^2(b/2): no cancellation near 0
    let s = (b / 2.0).sin();
    (a.exp_m1() * b.cos() - 2.0 * s * s, a.exp() * b.sin())
}

fn log(x: C) -> C {
    let (a, b) = x;
    let m = a.abs().max(b.abs());
    let re = if m > 0.5 && m < 2.0 {
        // log|z| = log1p((|z|^2 - 1)) / 2 with |z|^2 - 1 = (m-1)(m+1) + n^2
        let n = a.abs().min(b.abs());
        0.5 * ((m - 1.0) * (m + 1.0) + n * n).ln_1p()
    } else {
        abs(x).ln()
    };
    (re, b.atan2(a))
}

fn log1p(x: C) -> C {
    let (a, b) = x;
    // |1+z|^2 - 1 = 2a + a^2 + b^2
    let t = 2.0 * a + a * a + b * b;
    let re = if t.abs() < 0.5 {
        0.5 * t.ln_1p()
    } else {
        abs((1.0 + a, b)).ln()
    };
    (re, b.atan2(1.0 + a))
}

fn sqrt(x: C) -> C {
    let (a, b) = x;
    if a == 0.0 && b == 0.0 {
        return (0.0, b);
    }
    let t = ((a.abs() + abs(x)) / 2.0).sqrt();
    if a >= 0.0 {
        (t, b / (2.0 * t))
    } else {
        (b.abs() / (2.0 * t), t.copysign(b))
    }
}

fn sin(x: C) -> C {
    let (a, b) = x;
    (a.sin() * b.cosh(), a.cos() * b.sinh())
}

fn cos(x: C) -> C {
    let (a, b) = x;
    (a.cos() * b.cosh(), -(a.sin() * b.sinh()))
}

fn tanh(x: C) -> C {
    let (a, b) = x;
    if a.abs() > 20.0 {
        // cosh 2a dwarfs everything: tanh -> sign(a) + i 4 sin b cos b e^{-2|a|}
        let e = (-2.0 * a.abs()).exp();
        return (1f64.copysign(a), 4.0 * b.sin() * b.cos() * e);
    }
    // (sinh 2a + i sin 2b) / (cosh 2a + cos 2b), with cosh 2a + cos 2b = 2 (sinh^2 a + cos^2 b)
    let (sa, cb) = (a.sinh(), b.cos());
    let den = 2.0 * (sa * sa + cb * cb);
    ((2.0 * a).sinh() / den, (2.0 * b).sin() / den)
}

fn tan(x: C) -> C {
    // tan z = -i tanh(i z)
    let (re, im) = tanh((-x.1, x.0));
    (im, -re)
}

fn sign(x: C) -> C {
    let m = abs(x);
    if m == 0.0 || m.is_nan() {
        return if m.is_nan() {
            (f64::NAN, f64::NAN)
        } else {
            (0.0, 0.0)
        };
    }
    (x.0 / m, x.1 / m)
}

fn pow(x: C, y: C) -> C {
    if x == (0.0, 0.0) {
        // 0^0 = 1 (XLA's and numpy's convention), 0^y = 0 otherwise
        return if y == (0.0, 0.0) {
            (1.0, 0.0)
        } else {
            (0.0, 0.0)
        };
    }
    exp(mul(y, log(x)))
}

/// The principal cube root: `cbrt|z| (cos(arg z / 3) + i sin(arg z / 3))`.
fn cbrt(x: C) -> C {
    let r = abs(x).cbrt();
    let t = x.1.atan2(x.0) / 3.0;
    if r == 0.0 {
        return (0.0, x.1);
    }
    (r * t.cos(), r * t.sin())
}

/// `1 / (1 + exp(-z))`.
fn logistic(x: C) -> C {
    let e = exp((-x.0, -x.1));
    div((1.0, 0.0), (1.0 + e.0, e.1))
}

/// `atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2))`, the spec
/// interpreter's definition for complex operands.
fn atan2(y: C, x: C) -> C {
    let iy = (-y.1, y.0);
    let num = (x.0 + iy.0, x.1 + iy.1);
    let (xx, yy) = (mul(x, x), mul(y, y));
    let l = log(div(num, sqrt((xx.0 + yy.0, xx.1 + yy.1))));
    // -i (a + bi) = b - ai
    (l.1, -l.0)
}

/// The lexicographic order on `(re, im)` of the spec's maximum and minimum
/// on complex values: whether `x` is greater than `y` (false when a
/// compared component is NaN, which then selects `y`).
fn greater(x: C, y: C) -> bool {
    if x.0 == y.0 {
        x.1 > y.1
    } else {
        x.0 > y.0
    }
}

fn max(x: C, y: C) -> C {
    if greater(x, y) {
        x
    } else {
        y
    }
}

fn min(x: C, y: C) -> C {
    if greater(y, x) {
        x
    } else {
        y
    }
}

/// The complex unary op `op` (complex result), or None when it is not one.
pub(crate) fn unary(op: Opcode) -> Option<fn(C) -> C> {
    Some(match op {
        Opcode::Negate => |x: C| (-x.0, -x.1),
        Opcode::Sign => sign,
        Opcode::Exponential => exp,
        Opcode::ExponentialMinusOne => expm1,
        Opcode::Log => log,
        Opcode::LogPlusOne => log1p,
        Opcode::Sqrt => sqrt,
        Opcode::Rsqrt => |x: C| div((1.0, 0.0), sqrt(x)),
        Opcode::Sine => sin,
        Opcode::Cosine => cos,
        Opcode::Tan => tan,
        Opcode::Tanh => tanh,
        Opcode::Cbrt => cbrt,
        Opcode::Logistic => logistic,
        _ => return None,
    })
}

/// The complex binary op `op`, or None when it is not one.
pub(crate) fn binary(op: Opcode) -> Option<fn(C, C) -> C> {
    Some(match op {
        Opcode::Add => |x: C, y: C| (x.0 + y.0, x.1 + y.1),
        Opcode::Subtract => |x: C, y: C| (x.0 - y.0, x.1 - y.1),
        Opcode::Multiply => mul,
        Opcode::Divide => div,
        Opcode::Power => pow,
        Opcode::Atan2 => atan2,
        Opcode::Maximum => max,
        Opcode::Minimum => min,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_and_quotients_do_not_cancel() {
        // (1+e)(1-e) - 1*1 = -e^2 in the real part: a naive f64 form gives 0
        let e = 2f64.powi(-30);
        let (re, im) = mul((1.0 + e, 1.0), (1.0 - e, 1.0));
        assert_eq!(re, -(e * e));
        assert_eq!(im, 2.0);
        let q = div((3.0, 4.0), (1.0, 2.0));
        assert_eq!(q, (2.2, -0.4));
        assert_eq!(div((1.0, 0.0), (0.0, 1.0)), (0.0, -1.0));
    }

    #[test]
    fn transcendentals_match_their_identities() {
        let z = (0.3, -1.2);
        let e = exp(z);
        let l = log(e);
        assert!((l.0 - z.0).abs() < 1e-15 && (l.1 - z.1).abs() < 1e-15);
        let s = sqrt((-4.0, 0.0));
        assert_eq!(s, (0.0, 2.0));
        let s = sqrt((-4.0, -0.0));
        assert_eq!(s, (0.0, -2.0));
        let m = expm1((1e-20, 1e-20));
        assert_eq!(m, (1e-20, 1e-20));
        let t = tanh((0.0, 0.5));
        assert!((t.1 - 0.5f64.tan()).abs() < 1e-15 && t.0 == 0.0);
        let t = tan((0.5, 0.0));
        assert!((t.0 - 0.5f64.tan()).abs() < 1e-15);
        assert_eq!(pow((0.0, 0.0), (0.0, 0.0)), (1.0, 0.0));
        assert_eq!(sign((3.0, -4.0)), (0.6, -0.8));
    }

    fn close(got: C, want: C) -> bool {
        (got.0 - want.0).abs() < 1e-15 && (got.1 - want.1).abs() < 1e-15
    }

    #[test]
    fn the_spec_examples_of_atan2_cbrt_and_logistic() {
        let h = std::f64::consts::FRAC_PI_2;
        assert!(close(atan2((1.0, 0.0), (0.0, 0.0)), (h, 0.0)));
        assert!(close(atan2((-1.0, 0.0), (0.0, 0.0)), (-h, 0.0)));
        // atan2(y, x) of real y, x > 0 is the real atan2
        assert!(close(atan2((1.0, 0.0), (1.0, 0.0)), (h / 2.0, 0.0)));
        assert!(close(
            cbrt((3.0, 4.0)),
            (1.628_937_145_922_176, 0.520_174_502_304_545_8)
        ));
        assert_eq!(cbrt((0.0, 0.0)), (0.0, 0.0));
        assert!(close(
            logistic((1.0, 2.0)),
            (1.0214153641721805, 0.4034387060815425)
        ));
    }

    #[test]
    fn maximum_and_minimum_order_by_real_then_imaginary_part() {
        let max = binary(Opcode::Maximum).unwrap();
        let min = binary(Opcode::Minimum).unwrap();
        assert_eq!(max((1.5, 2.5), (7.5, 1.5)), (7.5, 1.5));
        assert_eq!(max((1.5, 7.5), (1.5, 2.5)), (1.5, 7.5));
        // -0 and 0 are equal real parts: the imaginary part decides
        assert_eq!(max((0.0, 1.5), (-0.0, 2.5)), (-0.0, 2.5));
        assert_eq!(min((0.0, 1.5), (-0.0, 2.5)), (0.0, 1.5));
        assert_eq!(min((1.5, 2.5), (7.5, 1.5)), (1.5, 2.5));
    }
}
