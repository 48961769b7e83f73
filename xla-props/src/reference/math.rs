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

/// erf(x): below |x| = 1 its Maclaurin series
/// 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)) in double-double
/// arithmetic (the terms alternate but shrink by x^2 < 1, so at most a bit
/// cancels, and the double-double sum has ~100 bits to lose it from); from
/// |x| = 1 up, 1 - erfc(x) with erfc by Laplace's continued fraction
/// (erfc <= 0.16 there, so erfc's relative error reaches erf damped). Within
/// an f64 ULP of the exact value (the series alone, summed in f64 with
/// exp(-x^2) from libm, was up to 6 ULP off near |x| = 1.3).
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
    if a >= 1.0 {
        let x2 = a * a;
        let x2_err = a.mul_add(a, -x2);
        // exp(-(x2 + x2_err)) = exp(-x2) * (1 - x2_err) to first order
        let e = (-x2).exp() * (1.0 - x2_err);
        // erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))),
        // evaluated from the tail (fixed depth, converged to f64 from a = 1)
        let mut t = a;
        for k in (1..=ERF_CF_TERMS).rev() {
            t = a + (k as f64 / 2.0) / t;
        }
        let erfc = e / (t * std::f64::consts::PI.sqrt());
        return (1.0 - erfc).copysign(x);
    }
    (dd::erf_series(a).to_f64()).copysign(x)
}

/// Terms of the erfc continued fraction in [`erf`] (converged from |x| = 1).
const ERF_CF_TERMS: usize = 250;

/// Double-double arithmetic (a value as an unevaluated sum hi + lo), just
/// enough for erf's series: error-free sums and products (FMA).
mod dd {
    #[derive(Clone, Copy, Debug)]
    pub(super) struct Dd(f64, f64);

    /// 2/sqrt(pi) as a double-double.
    const TWO_OVER_SQRT_PI: Dd = Dd(std::f64::consts::FRAC_2_SQRT_PI, 1.533545961316588e-17);

    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd(s, (a - (s - bb)) + (b - bb))
    }

    fn quick(a: f64, b: f64) -> Dd {
        let s = a + b;
        Dd(s, b - (s - a))
    }

    impl Dd {
        pub(super) fn to_f64(self) -> f64 {
            self.0 + self.1
        }
        fn add(self, y: Dd) -> Dd {
            let s = two_sum(self.0, y.0);
            let t = two_sum(self.1, y.1);
            let s = quick(s.0, s.1 + t.0);
            quick(s.0, s.1 + t.1)
        }
        fn mul(self, y: Dd) -> Dd {
            let p = self.0 * y.0;
            let e = self.0.mul_add(y.0, -p) + (self.0 * y.1 + self.1 * y.0);
            quick(p, e)
        }
        fn div_f(self, d: f64) -> Dd {
            let q1 = self.0 / d;
            // remainder self - q1*d, exactly for the high part
            let p = q1 * d;
            let pe = q1.mul_add(d, -p);
            let r = (self.0 - p - pe + self.1) / d;
            quick(q1, r)
        }
    }

    /// erf(a) for 0 <= a < 1 by its Maclaurin series, in double-double.
    pub(super) fn erf_series(a: f64) -> Dd {
        let x = Dd(a, 0.0);
        let x2 = x.mul(x);
        let neg_x2 = Dd(-x2.0, -x2.1);
        // p = (-1)^n x^(2n+1) / n!, term = p / (2n+1)
        let mut p = x;
        let mut sum = x;
        for n in 1..200 {
            p = p.mul(neg_x2).div_f(n as f64);
            let term = p.div_f((2 * n + 1) as f64);
            sum = sum.add(term);
            if term.0.abs() < sum.0.abs() * 1e-34 {
                break;
            }
        }
        sum.mul(TWO_OVER_SQRT_PI)
    }
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

#[cfg(test)]
mod erf_tests {
    /// erf at f64 points, the exact values from mpmath at 300 bits, rounded once.
    const EXACT: &[(f64, f64)] = &[
        (-1.7290058260566445, -0.9855221536448615),
        (-1.3187, -0.9378078615140238),
        (-0.8751771688918721, -0.7841680151463309),
        (0.5, 0.5204998778130465),
        (0.999, 0.8422852702064969),
        (1e-05, 1.1283791670579e-05),
        (0.125, 0.1403162048013338),
        (-2.25, -0.9985372834133188),
        (3.5, 0.9999992569016276),
        (5.9, 0.9999999999999999),
        (0.7, 0.6778011938374184),
        (1.0, 0.8427007929497149),
    ];

    #[test]
    fn erf_is_within_an_ulp_of_the_exact_value() {
        for &(x, want) in EXACT {
            let got = super::erf(x);
            let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulps <= 1, "erf({x}) = {got:e}, exact {want:e} ({ulps} ULP)");
        }
    }
}
