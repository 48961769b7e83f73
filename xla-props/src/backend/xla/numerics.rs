//! What XLA CPU really computes, as measured (evidence: `docs/numerics.md`,
//! reproduced by the `xla_numerics` example). Declared by the XLA backends as
//! their `Numerics`.

use crate::hlo::{ElementType, Opcode};

use ElementType::{Bf16, F16, F32, F64};
use Opcode::*;

/// Types whose subnormal inputs and results XLA CPU flushes to zero (DAZ/FTZ
/// in f32/f64 math; bf16 is computed in f32). f16 subnormals are kept: f16
/// math runs in f32, where they are normal.
pub const XLA_CPU_FLUSHED: &[ElementType] = &[F32, F64, Bf16];

/// One measured approximation: op, result type, ulp budget, absolute allowance.
pub type MeasuredBudget = (Opcode, ElementType, u64, f64);

/// Maximum measured error of xla-cpu (PJRT 0.115) per transcendental and type
/// (f16: all inputs against the correctly rounded oracle; f32: 1M inputs).
pub const XLA_CPU_BUDGETS: &[MeasuredBudget] = &[
    (Exponential, F16, 1, 0.0),
    (ExponentialMinusOne, F16, 2, 0.0),
    (Log, F16, 1, 0.0),
    (LogPlusOne, F16, 1, 0.0),
    // 0 instead of an f16 subnormal below x = -11.09: abs error < 2^-14.
    (Logistic, F16, 2, 6.103515625e-05),
    (Sine, F16, 1, 0.0),
    (Cosine, F16, 1, 0.0),
    (Tan, F16, 1, 0.0),
    (Cbrt, F16, 1, 0.0),
    (Erf, F16, 1, 0.0),
    (Exponential, F32, 1, 0.0),
    (ExponentialMinusOne, F32, 5, 0.0),
    (Log, F32, 1, 0.0),
    (LogPlusOne, F32, 2, 0.0),
    (Logistic, F32, 2, 0.0),
    (Sine, F32, 1, 0.0),
    (Cosine, F32, 1, 0.0),
    (Tan, F32, 1, 0.0),
    (Tanh, F32, 4, 0.0),
    (Rsqrt, F32, 1, 0.0),
    (Cbrt, F32, 1, 0.0),
    (Erf, F32, 5, 0.0),
];

/// The same for xla-cpu-0.81 (PJRT 0.81), where it differs.
pub const XLA_CPU_0_81_BUDGETS: &[MeasuredBudget] = &[
    (Exponential, F16, 1, 0.0),
    (ExponentialMinusOne, F16, 2, 0.0),
    (Log, F16, 1, 0.0),
    (LogPlusOne, F16, 2, 0.0),
    (Logistic, F16, 2, 6.103515625e-05),
    (Sine, F16, 1, 0.0),
    (Cosine, F16, 1, 0.0),
    (Tan, F16, 1, 0.0),
    (Rsqrt, F16, 1, 0.0),
    (Cbrt, F16, 2, 0.0),
    (Erf, F16, 1, 0.0),
    (Exponential, F32, 5, 0.0),
    (ExponentialMinusOne, F32, 5, 0.0),
    (Log, F32, 1, 0.0),
    (LogPlusOne, F32, 2, 0.0),
    (Logistic, F32, 2, 0.0),
    (Sine, F32, 1, 0.0),
    (Cosine, F32, 1, 0.0),
    (Tan, F32, 1, 0.0),
    (Tanh, F32, 4, 0.0),
    (Rsqrt, F32, 1, 0.0),
    (Cbrt, F32, 15, 0.0),
    (Erf, F32, 5, 0.0),
];
