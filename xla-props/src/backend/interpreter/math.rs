//! The compute types (f32 and f64) and their math functions: Rust's libm-backed
//! functions, plus our own `erf` (Rust has none).

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

/// Arithmetic and math functions of a compute type.
pub(crate) trait Compute:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs(self) -> Self;
    fn ceil(self) -> Self;
    fn floor(self) -> Self;
    fn round_afz(self) -> Self;
    fn round_even(self) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn cbrt(self) -> Self;
    fn erf(self) -> Self;
    fn powf(self, y: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
}

macro_rules! compute {
    ($t:ident, $erf:ident) => {
        impl Compute for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            fn abs(self) -> Self {
                $t::abs(self)
            }
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            fn floor(self) -> Self {
                $t::floor(self)
            }
            fn round_afz(self) -> Self {
                $t::round(self)
            }
            fn round_even(self) -> Self {
                $t::round_ties_even(self)
            }
            fn exp(self) -> Self {
                $t::exp(self)
            }
            fn exp_m1(self) -> Self {
                $t::exp_m1(self)
            }
            fn ln(self) -> Self {
                $t::ln(self)
            }
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn cos(self) -> Self {
                $t::cos(self)
            }
            fn tan(self) -> Self {
                $t::tan(self)
            }
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn cbrt(self) -> Self {
                $t::cbrt(self)
            }
            fn erf(self) -> Self {
                $erf(self)
            }
            fn powf(self, y: Self) -> Self {
                $t::powf(self, y)
            }
            fn atan2(self, x: Self) -> Self {
                $t::atan2(self, x)
            }
        }
    };
}

compute!(f32, erf_f32);
compute!(f64, erf_f64);

/// erf in f32: the rational approximation used by Eigen and XLA's CPU
/// backend (odd degree-13 numerator over even degree-8 denominator, input
/// clamped to [-4, 4] where erf is ±1 in f32).
pub(crate) fn erf_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < 1e-4 {
        // erf(x) = 2/sqrt(pi) * x * (1 - x^2/3 + ...), and x^2/3 < 2^-26 here;
        // the rational form would lose subnormal bits in `x * p`.
        return x * std::f32::consts::FRAC_2_SQRT_PI;
    }
    if a >= 3.9 {
        // erfc(3.9) < 2^-25: erf rounds to +-1 in f32 (the rational form gives 1 - 2^-23 at 4).
        return 1f32.copysign(x);
    }
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_473_9e-2,
    ];
    let x2 = x * x;
    let mut p = ALPHA[0];
    for &a in &ALPHA[1..] {
        p = p * x2 + a;
    }
    let p = x * p;
    let mut q = BETA[0];
    for &b in &BETA[1..] {
        q = q * x2 + b;
    }
    p / q
}

/// erf in f64: a positive-term series for |x| < 1 (no cancellation), a
/// continued fraction for erfc beyond, and ±1 past 6 (erfc(6) < 2^-55).
/// The series up to 2.5 was 13 ULP from the exact value near 2.1; now
/// within 7 ULP of the exact reference (measured over [-6, 6], at -1.005).
pub(crate) fn erf_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 1.0 {
        // erf(a) = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (1*3*...*(2n+1))
        let a2 = a * a;
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * a2 / (2.0 * n + 1.0);
            sum += term;
        }
        // exp(-(a2 + e)) = exp(-a2) * (1 - e) to first order, with e the
        // rounding error of a*a (without it, up to a^2 * eps = 6 ulp is lost)
        let a2_err = a.mul_add(a, -a2);
        std::f64::consts::FRAC_2_SQRT_PI * ((-a2).exp() * (1.0 - a2_err)) * sum
    } else if a < 6.0 {
        // erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...)))), by Lentz.
        let tiny = 1e-300;
        let mut f = a;
        let mut c = a;
        let mut d = 0.0;
        for k in 1..400 {
            let ak = k as f64 / 2.0;
            d = a + ak * d;
            d = if d == 0.0 { tiny } else { d };
            c = a + ak / c;
            c = if c == 0.0 { tiny } else { c };
            d = 1.0 / d;
            let delta = c * d;
            f *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        let a2 = a * a;
        let a2_err = a.mul_add(a, -a2);
        let erfc = (-a2).exp() * (1.0 - a2_err) / (f * std::f64::consts::PI.sqrt());
        1.0 - erfc
    } else {
        1.0
    };
    if x.is_sign_negative() {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f64 erf against the reference (within an ULP of the exact value) over
    /// [-6, 6] (a grid of 120001 points): within the 8 ULP the interpreter
    /// declares (measured: 7 ULP at -1.005, where the fraction takes over).
    #[test]
    fn erf_f64_close_to_the_reference() {
        let mut worst = (0u64, 0.0);
        for k in -60_000..=60_000 {
            let x = k as f64 * 1e-4 + 3.3e-6;
            let (a, e) = (erf_f64(x), crate::reference::math::erf(x));
            let d = (a.to_bits() as i64 - e.to_bits() as i64).unsigned_abs();
            if d > worst.0 {
                worst = (d, x);
            }
        }
        println!("erf f64: worst {} ulp at {}", worst.0, worst.1);
        assert!(worst.0 <= 8, "{worst:?}");
    }

    #[test]
    fn erf_values() {
        // erf(0.5) = 0.5204998778130465, erf(1) = 0.8427007929497149, erf(2) = 0.9953222650189527,
        // erf(3) = 0.9999779095030014
        let cases = [
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.0, 0.999_977_909_503_001_4),
        ];
        for (x, want) in cases {
            let got = erf_f64(x);
            assert!(
                (got - want).abs() <= 4.0 * f64::EPSILON * want,
                "erf_f64({x}) = {got}"
            );
            assert_eq!(erf_f64(-x), -got);
            let got32 = erf_f32(x as f32);
            assert!(
                (got32 as f64 - want).abs() <= 3e-7 * want,
                "erf_f32({x}) = {got32}"
            );
        }
        assert_eq!(erf_f64(0.0), 0.0);
        assert!(erf_f64(-0.0).is_sign_negative());
        assert_eq!(erf_f64(10.0), 1.0);
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert!(erf_f32(f32::NAN).is_nan());
    }
}
