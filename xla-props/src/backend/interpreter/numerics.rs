//! What the interpreter promises: its approximate functions and their budgets.
//!
//! Budgets were measured (see `tests::measure_f16_budgets`, run with
//! `cargo test -p xla-props --lib -- --ignored measure --nocapture`):
//! f16 exhaustively against the correctly rounded words of
//! `shared/oracle/f16`, bf16 exhaustively against f64 math rounded once, f32
//! on a sample against f64 math. Each declared budget is the measured maximum
//! (at least 1 ULP where computing through f32 is not always correctly rounded).

use crate::check::{ErrorBudget, Numerics};
use crate::hlo::{ElementType, Opcode};

/// The transcendental ops the interpreter computes with libm-style functions.
#[cfg(test)]
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

/// Budgets per (op, dtype) in ULP of the result type, with a reason each.
const BUDGETS: &[(Opcode, ElementType, u64)] = &[
    // f16: through f32 then rounded; double rounding costs at most 1 ULP.
    (Opcode::Exponential, ElementType::F16, 1),
    (Opcode::ExponentialMinusOne, ElementType::F16, 1),
    (Opcode::Log, ElementType::F16, 1),
    (Opcode::LogPlusOne, ElementType::F16, 1),
    (Opcode::Logistic, ElementType::F16, 1),
    (Opcode::Sine, ElementType::F16, 1),
    (Opcode::Cosine, ElementType::F16, 1),
    (Opcode::Tan, ElementType::F16, 1),
    (Opcode::Tanh, ElementType::F16, 1),
    (Opcode::Rsqrt, ElementType::F16, 1),
    (Opcode::Cbrt, ElementType::F16, 1),
    (Opcode::Erf, ElementType::F16, 1),
    (Opcode::Power, ElementType::F16, 1),
    (Opcode::Atan2, ElementType::F16, 1),
    // bf16: same, 8-bit mantissa.
    (Opcode::Exponential, ElementType::Bf16, 1),
    (Opcode::ExponentialMinusOne, ElementType::Bf16, 1),
    (Opcode::Log, ElementType::Bf16, 1),
    (Opcode::LogPlusOne, ElementType::Bf16, 1),
    (Opcode::Logistic, ElementType::Bf16, 1),
    (Opcode::Sine, ElementType::Bf16, 1),
    (Opcode::Cosine, ElementType::Bf16, 1),
    (Opcode::Tan, ElementType::Bf16, 1),
    (Opcode::Tanh, ElementType::Bf16, 1),
    (Opcode::Rsqrt, ElementType::Bf16, 1),
    (Opcode::Cbrt, ElementType::Bf16, 1),
    (Opcode::Erf, ElementType::Bf16, 1),
    (Opcode::Power, ElementType::Bf16, 1),
    (Opcode::Atan2, ElementType::Bf16, 1),
    // f32: Rust's libm functions, 1/(1+exp(-x)) for logistic, 1/sqrt for rsqrt,
    // our rational erf.
    (Opcode::Exponential, ElementType::F32, 1),
    (Opcode::ExponentialMinusOne, ElementType::F32, 1),
    (Opcode::Log, ElementType::F32, 1),
    (Opcode::LogPlusOne, ElementType::F32, 1),
    (Opcode::Logistic, ElementType::F32, 3),
    (Opcode::Sine, ElementType::F32, 1),
    (Opcode::Cosine, ElementType::F32, 1),
    (Opcode::Tan, ElementType::F32, 2),
    (Opcode::Tanh, ElementType::F32, 2),
    (Opcode::Rsqrt, ElementType::F32, 2),
    (Opcode::Cbrt, ElementType::F32, 1),
    (Opcode::Erf, ElementType::F32, 4),
    (Opcode::Power, ElementType::F32, 2),
    (Opcode::Atan2, ElementType::F32, 2),
    // f64: the platform's f64 libm; erf is our series/continued fraction.
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
    for &(op, dt, ulp) in BUDGETS {
        n = n.with_approximation(op, dt, ErrorBudget::ulp(ulp));
    }
    n
}
