//! What XLA CPU really computes, as measured (evidence: `docs/numerics.md`,
//! reproduced by the `xla_numerics` example). Declared by the XLA backends as
//! their `Numerics`.

use crate::check::{ErrorBudget, Numerics};
use crate::hlo::{ElementType, Opcode};

use ElementType::{Bf16, C128, C64, F16, F32, F64, F8E5M2};
use Opcode::*;

/// Types whose subnormal inputs and results XLA CPU flushes to zero (DAZ/FTZ
/// in f32/f64 math; bf16 is computed in f32). f16 subnormals are kept: f16
/// math runs in f32, where they are normal.
pub const XLA_CPU_FLUSHED: &[ElementType] = &[F32, F64, Bf16];

/// XLA CPU's min/max do not propagate NaN: `minimum(a, b)` is `a` unless
/// `b < a` (`maximum`: unless `b > a`), clamp is `min(max(lo, x), hi)` under
/// that rule. `--xla_cpu_enable_fast_min_max=false` restores NaN propagation
/// (both versions), so this is XLA's documented fast-min-max option, on by
/// default in both builds (docs/numerics.md, "min/max and NaN").
pub const XLA_CPU_FAST_MIN_MAX: bool = true;

/// Types whose `reduce-precision` compiled XLA CPU computes on the type's
/// own bits (f16 and f8e5m2, which share f16's exponent), where the
/// reference (like XLA's HloEvaluator) goes through f32
/// (docs/numerics.md, "reduce-precision").
pub const XLA_CPU_REDUCE_PRECISION_IN_OWN_TYPE: &[ElementType] = &[F16, F8E5M2];

/// XLA CPU multiplies a convolution's zero padding by the kernel: a padded
/// position contributes `0 * w` (docs/numerics.md, "convolution padding").
pub const XLA_CPU_CONVOLUTION_MULTIPLIES_PADDING: bool = true;

/// One measured approximation: op, result type, ulp budget, absolute allowance.
pub type MeasuredBudget = (Opcode, ElementType, u64, f64);

/// Maximum measured error of xla-cpu (PJRT 0.115) per transcendental and type
/// (f16: all inputs against the correctly rounded oracle; f32 and f64: 1M
/// inputs).
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
    // Complex functions, normwise (`check::complex`: a component may be off
    // by `ulp * eps * |z|`): the `xla_complex_numerics` example, 3 x 100k
    // points per op and type (docs/numerics.md, "Complex functions on
    // xla-cpu"), the maximum rounded up with a margin; multiply at least
    // the naive product's theorem (`sqrt(5) u`). expm1: the maximum on the
    // harness inputs; its cancelling real part (`exp(x) cos(y) - 1`) is
    // unbounded relative to |z| near x = 0, y = 2 pi k (a finding, left a
    // disagreement). Not declared: sine, cosine (sinh as an exp difference,
    // unbounded relative to |z| as y -> 0: the same finding), power and
    // logistic (ill-conditioned: no normwise budget holds).
    (Multiply, C64, 2, 0.0),
    (Multiply, C128, 2, 0.0),
    (Divide, C64, 2, 0.0),
    (Divide, C128, 3, 0.0),
    (Exponential, C64, 2, 0.0),
    (Exponential, C128, 2, 0.0),
    (ExponentialMinusOne, C64, 4, 0.0),
    (ExponentialMinusOne, C128, 5, 0.0),
    (Log, C64, 2, 0.0),
    (Log, C128, 3, 0.0),
    (LogPlusOne, C64, 4, 0.0),
    (LogPlusOne, C128, 5, 0.0),
    (Sqrt, C64, 2, 0.0),
    (Sqrt, C128, 2, 0.0),
    (Rsqrt, C64, 3, 0.0),
    (Rsqrt, C128, 3, 0.0),
    (Tan, C64, 4, 0.0),
    (Tan, C128, 4, 0.0),
    (Tanh, C64, 5, 0.0),
    (Tanh, C128, 4, 0.0),
    (Sign, C64, 2, 0.0),
    (Sign, C128, 2, 0.0),
    // abs of a complex number: a hypot in the component type, a real
    // result whose budget is keyed by the operand's type (an exact real
    // abs gets none); at most 1.39 eps |z| measured, so within 2 ulp
    (Abs, C64, 2, 0.0),
    (Abs, C128, 2, 0.0),
    // f64: 1,048,576 inputs (every (2^44 + 7)-th bit pattern) against the
    // reference's f64 functions (docs/numerics.md, "f64"); log, sine,
    // cosine, tan and sqrt matched every input
    (Exponential, F64, 1, 0.0),
    (ExponentialMinusOne, F64, 4, 0.0),
    (LogPlusOne, F64, 2, 0.0),
    (Logistic, F64, 3, 0.0),
    (Tanh, F64, 7, 0.0),
    (Rsqrt, F64, 2, 0.0),
    (Cbrt, F64, 3, 0.0),
    (Erf, F64, 1, 0.0),
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

/// What XLA CPU was measured to do (docs/numerics.md): subnormals of
/// f32/f64/bf16 flushed, transcendentals within their measured budgets,
/// reductions and dots reassociated, fusions free to keep excess precision.
/// The built-in file says the same for xla-cpu and xla-cpu-0.81 (a unit test
/// pins it).
pub(crate) fn measured_xla_cpu_numerics(budgets: &[MeasuredBudget]) -> Numerics {
    let mut n = Numerics {
        flush_inputs: XLA_CPU_FLUSHED.to_vec(),
        flush_outputs: XLA_CPU_FLUSHED.to_vec(),
        excess_precision_in_fusions: true,
        reassociates_reductions: true,
        // LLVM contracts a * b + c in XLA's fused loops (corpus 138, 149)
        contracts_multiply_add: true,
        // xla_allow_excess_precision (default on): narrow float chains
        // run in f32 with the converts between them dropped (corpus 129)
        excess_precision_anywhere: true,
        // f16/bf16/f8 add reductions round every partial sum to the
        // reducer's type (10 reduce/reduce-window cases of the full run,
        // up to 104 ulp: within n * eps(f16), not n * eps(f32))
        reductions_accumulate_in_declared_type: true,
        fast_min_max: XLA_CPU_FAST_MIN_MAX,
        reduce_precision_in_own_type: XLA_CPU_REDUCE_PRECISION_IN_OWN_TYPE.to_vec(),
        convolution_multiplies_padding: XLA_CPU_CONVOLUTION_MULTIPLIES_PADDING,
        ..Numerics::exact()
    };
    for &(op, dtype, ulp, abs) in budgets {
        n = n.with_approximation(op, dtype, ErrorBudget::ulp_or_abs(ulp, abs));
    }
    n
}
