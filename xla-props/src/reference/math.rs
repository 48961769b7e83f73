//! Scalar float functions in f64. Results are rounded once into the output
//! dtype by the caller. `+ - * / sqrt` of f64 values are IEEE correctly
//! rounded; transcendentals come from the platform libm (or the careful
//! implementations below), accurate to about one f64 ulp, which is what
//! makes the single rounding to f32 and narrower exact except in the rare
//! hard cases (for f16 every input is checked against the oracle in tests).

use crate::hlo::Opcode;

const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// The f64 value of a float unary op, or None when the op is not a float op.
pub(crate) fn unary(op: Opcode, x: f64) -> Option<f64> {
    Some(match op {
        Opcode::Abs => x.abs(),
        Opcode::Negate => -x,
        Opcode::Sign => sign(x),
        Opcode::Ceil => x.ceil(),
        Opcode::Floor => x.floor(),
        Opcode::RoundNearestAfz => x.round(),
        Opcode::RoundNearestEven => x.round_ties_even(),
        Opcode::Exponential => x.exp(),
        Opcode::ExponentialMinusOne => x.exp_m1(),
        Opcode::Log => x.ln(),
        Opcode::LogPlusOne => x.ln_1p(),
        Opcode::Logistic => logistic(x),
        Opcode::Sine => x.sin(),
        Opcode::Cosine => x.cos(),
        Opcode::Tan => x.tan(),
        Opcode::Tanh => x.tanh(),
        Opcode::Sqrt => x.sqrt(),
        Opcode::Rsqrt => rsqrt(x),
        Opcode::Cbrt => x.cbrt(),
        Opcode::Erf => erf(x),
        _ => return None,
    })
}

/// sign: -1, +1, and ±0 and NaN unchanged.
fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        1f64.copysign(x)
    }
}

/// 1/sqrt(x): rsqrt(±0) = ±inf, negative gives NaN.
fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// 1 / (1 + exp(-x)), with the small side computed as exp(x) / (1 + exp(x))
/// so that no cancellation happens for negative x.
fn logistic(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n x (2x^2)^n / (1*3*...*(2n+1)) below
/// |x| = 2.5 (every term positive, so no cancellation), and 1 - erfc(x) by its
/// continued fraction above; within a few f64 ulps for every x.
pub(crate) fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a >= 6.0 {
        return 1f64.copysign(x);
    }
    if a < 1e-150 {
        return TWO_OVER_SQRT_PI * x;
    }
    let x2 = a * a;
    let x2_err = a.mul_add(a, -x2);
    // exp(-(x2 + x2_err)) = exp(-x2) * (1 - x2_err) to first order
    let e = (-x2).exp() * (1.0 - x2_err);
    if a >= 2.5 {
        // erf = 1 - erfc, erfc < 4.1e-4 by Laplace's continued fraction
        // erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))),
        // evaluated from the tail (fixed depth, converged to f64 for a >= 2.5).
        // The series below would sum ~2a^2 growing terms and lose up to ~50
        // ulp near a = 6; here erfc's relative error is damped by erfc/erf.
        let mut t = a;
        for k in (1..=120).rev() {
            t = a + (k as f64 / 2.0) / t;
        }
        let erfc = e / (t * std::f64::consts::PI.sqrt());
        return (1.0 - erfc).copysign(x);
    }
    let r = 2.0 * x2;
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    loop {
        term *= r / (2.0 * n + 3.0);
        sum += term;
        n += 1.0;
        if term < sum * 1e-18 {
            break;
        }
    }
    (TWO_OVER_SQRT_PI * e * sum).copysign(x)
}

/// The f64 value of a float binary op, or None when the op is not a float op.
pub(crate) fn binary(op: Opcode) -> Option<fn(f64, f64) -> f64> {
    Some(match op {
        Opcode::Add => |a, b| a + b,
        Opcode::Subtract => |a, b| a - b,
        Opcode::Multiply => |a, b| a * b,
        Opcode::Divide => |a, b| a / b,
        Opcode::Remainder => |a, b| a % b,
        Opcode::Power => f64::powf,
        Opcode::Maximum => max,
        Opcode::Minimum => min,
        Opcode::Atan2 => f64::atan2,
        _ => return None,
    })
}

/// XLA maximum: NaN propagates, and -0 < +0.
pub(crate) fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        a
    } else {
        b
    }
}

/// XLA minimum: NaN propagates, and -0 < +0.
pub(crate) fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}
