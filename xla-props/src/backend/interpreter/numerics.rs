//! What the interpreter promises: its approximate functions and their budgets.
//!
//! Budgets were measured with `tests::measure_budgets` (run it with
//! `cargo test -p xla-props --lib -- --ignored measure_budgets --nocapture`):
//! f16 exhaustively against the correctly rounded words of
//! `shared/oracle/f16`, bf16 exhaustively against f64 math rounded once, f32
//! on a sample against f64 math; see [`BUDGETS`] for the numbers.

use crate::check::{ErrorBudget, Numerics};
use crate::hlo::{ElementType, Opcode};

/// The transcendental ops the interpreter computes with libm-style functions.
pub(crate) const APPROXIMATE_OPS: &[Opcode] = &[
    Opcode::Exponential,
    Opcode::ExponentialMinusOne,
    Opcode::Log,
    Opcode::LogPlusOne,
    Opcode::Logistic,
    Opcode::Sine,
    Opcode::Cosine,
    Opcode::Tan,
    Opcode::Tanh,
    Opcode::Rsqrt,
    Opcode::Cbrt,
    Opcode::Erf,
    Opcode::Power,
    Opcode::Atan2,
];

/// Budgets per (op, dtype) in ULP of the result type.
///
/// Measured maxima (`measure_budgets`), before any margin:
/// - f16, exhaustive against the correctly rounded oracle: 1 ULP for exp,
///   expm1, log, log1p, logistic, sin, cos, tan, cbrt, erf; 0 for tanh, sqrt,
///   rsqrt (sqrt is exact through f32 and is not listed). Between 1 and 20 of
///   the 65536 words differ per op (cbrt most, from double rounding).
///   Declared: 1 for all, since computing through f32 then rounding is not
///   always correctly rounded.
/// - bf16, exhaustive against f64 math rounded once: 0 everywhere (logistic
///   within its absolute allowance). Declared: 1 (same double-rounding reason).
/// - f32, 400k samples against f64 math rounded once: 1 for exp, expm1, log,
///   log1p, sin, cos, tan, rsqrt; 2 for logistic and tanh; 0 for cbrt; 5 for
///   erf (our rational approximation, worst near 3.1). Declared: measured + 1
///   (sampled, not exhaustive); cbrt 1.
/// - f64, pow and atan2 are not measured: declared from the platform libm's
///   documented accuracy (1-2 ULP). erf (our series below 2.5, continued
///   fraction above, both with the rounding error of `x*x` compensated in
///   `exp(-x^2)`): 1 ULP from the reference over a 120001-point grid of
///   [-6, 6] (`math::tests::erf_f64_close_to_the_reference`); declared 2.
const BUDGETS: &[(Opcode, ElementType, u64)] = &[
    (Opcode::Exponential, ElementType::F32, 2),
    (Opcode::ExponentialMinusOne, ElementType::F32, 2),
    (Opcode::Log, ElementType::F32, 2),
    (Opcode::LogPlusOne, ElementType::F32, 2),
    (Opcode::Logistic, ElementType::F32, 3),
    (Opcode::Sine, ElementType::F32, 2),
    (Opcode::Cosine, ElementType::F32, 2),
    (Opcode::Tan, ElementType::F32, 2),
    (Opcode::Tanh, ElementType::F32, 3),
    (Opcode::Rsqrt, ElementType::F32, 2),
    (Opcode::Cbrt, ElementType::F32, 1),
    (Opcode::Erf, ElementType::F32, 6),
    (Opcode::Power, ElementType::F32, 2),
    (Opcode::Atan2, ElementType::F32, 2),
    (Opcode::Exponential, ElementType::F64, 1),
    (Opcode::ExponentialMinusOne, ElementType::F64, 1),
    (Opcode::Log, ElementType::F64, 1),
    (Opcode::LogPlusOne, ElementType::F64, 1),
    (Opcode::Logistic, ElementType::F64, 3),
    (Opcode::Sine, ElementType::F64, 1),
    (Opcode::Cosine, ElementType::F64, 1),
    (Opcode::Tan, ElementType::F64, 2),
    (Opcode::Tanh, ElementType::F64, 2),
    (Opcode::Rsqrt, ElementType::F64, 2),
    (Opcode::Cbrt, ElementType::F64, 1),
    (Opcode::Erf, ElementType::F64, 8),
    (Opcode::Power, ElementType::F64, 2),
    (Opcode::Atan2, ElementType::F64, 2),
];

/// Normwise budgets of the complex functions (`check::complex`: a component
/// may be off by `ulp` epsilons of the component type times `|z|`).
///
/// c64 computes in `Complex<f64>` and rounds each part once: at most one
/// rounding of a component, so 1 everywhere. c128 (num_complex's forms in
/// f64), measured by `complex_tests::measure_complex_budgets` (200k points,
/// each part uniform in [-64, 64], against the reference's kernels):
/// multiply 1.0, divide 2.7, exp/expm1/sin/cos 0, log 7.3, log1p 1.4,
/// sqrt 1.8, rsqrt 2.7, tan 292, tanh 152, power 362. Power is
/// `exp(y log x)`: the error of `log x` is multiplied by `|y log x|` (up to
/// about 64 · 4.8 here), the function's own conditioning; tan and tanh are
/// `sinh(2x)/(cosh 2x + cos 2y)`-style quotients whose denominator cancels
/// near the poles. Declared: the measured maximum rounded up (multiply 2,
/// the `sqrt(5)·u` theorem for the naive product).
const COMPLEX_BUDGETS: &[(Opcode, u64)] = &[
    (Opcode::Multiply, 2),
    (Opcode::Divide, 3),
    (Opcode::Exponential, 1),
    (Opcode::ExponentialMinusOne, 1),
    (Opcode::Sine, 1),
    (Opcode::Cosine, 1),
    (Opcode::Log, 8),
    (Opcode::LogPlusOne, 2),
    (Opcode::Sqrt, 2),
    (Opcode::Rsqrt, 3),
    (Opcode::Tan, 300),
    (Opcode::Tanh, 160),
    (Opcode::Power, 370),
    (Opcode::Logistic, 3),
];

/// Types computed through f32 and rounded after each op: 1 ULP for every approximate op.
const THROUGH_F32: &[ElementType] = &[
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F8E4M3Fn,
    ElementType::F8E5M2,
];

/// The interpreter's numerics: approximate transcendentals with the budgets
/// above; no flushing; no excess precision inside fusions (every intermediate
/// is rounded to its declared type); reductions and dots accumulate in f32
/// for f16/bf16/f32 (f64 for f64), which differs from the exactly rounded
/// sum like a reassociation does.
///
/// ```
/// use xla_props::backend::interpreter::interpreter_numerics;
/// use xla_props::hlo::{ElementType, Opcode};
/// let n = interpreter_numerics();
/// assert!(n.budget(Opcode::Exponential, ElementType::F16).is_some());
/// assert!(n.budget(Opcode::Add, ElementType::F16).is_none());
/// assert!(n.reassociates_reductions);
/// ```
pub fn interpreter_numerics() -> Numerics {
    let mut n = Numerics {
        reassociates_reductions: true,
        ..Numerics::exact()
    };
    let narrow = THROUGH_F32
        .iter()
        .flat_map(|&dt| APPROXIMATE_OPS.iter().map(move |&op| (op, dt, 1)));
    for (op, dt, ulp) in BUDGETS.iter().copied().chain(narrow) {
        // 1/(1+exp(-x)) overflows exp for x below about -88 and returns 0 where the
        // true result is an f32/bf16 subnormal: allow that absolute error.
        let budget = if op == Opcode::Logistic && dt != ElementType::F64 {
            ErrorBudget::ulp_or_abs(ulp, f32::MIN_POSITIVE as f64)
        } else {
            ErrorBudget::ulp(ulp)
        };
        n = n.with_approximation(op, dt, budget);
    }
    for &(op, ulp) in COMPLEX_BUDGETS {
        n = n.with_approximation(op, ElementType::C64, ErrorBudget::ulp(1));
        n = n.with_approximation(op, ElementType::C128, ErrorBudget::ulp(ulp));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_approximate_op_has_a_budget_for_every_float_type() {
        let n = interpreter_numerics();
        for &op in APPROXIMATE_OPS {
            for &dt in ElementType::FLOATS {
                let b = n.budget(op, dt);
                assert!(b.is_some_and(|b| b.ulp >= 1), "{op} {dt}");
            }
        }
        assert_eq!(n.budget(Opcode::Sqrt, ElementType::F16), None);
        assert!(n.budget(Opcode::Logistic, ElementType::F32).unwrap().abs > 0.0);
        assert!(!n.excess_precision_in_fusions);
        assert!(n.flush_inputs.is_empty() && n.flush_outputs.is_empty());
    }
}
