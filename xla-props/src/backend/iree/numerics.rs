//! What IREE's llvm-cpu target (3.13.0, generic x86-64) really computes, as
//! measured (evidence: docs/numerics.md, "iree-cpu"), and what it does not
//! support. Declared by the `iree-cpu` backend as its `Numerics`.

use crate::check::{ErrorBudget, Numerics};
use crate::hlo::{ElementType, Module, Opcode};

use ElementType::{Bf16, F8E4M3Fn, F16, F32, F64, F8E5M2};
use Opcode::*;

/// Types whose subnormal inputs and results iree-cpu flushes to zero: all
/// four (measured: `x * 1` and `min_normal * 0.5` give 0 in f16, bf16, f32
/// and f64; IREE's CPU runtime runs its workers with denormals flushed, and
/// f16/bf16 math runs in f32).
pub const IREE_CPU_FLUSHED: &[ElementType] = &[F16, Bf16, F32, F64];

/// Types whose `reduce-precision` iree-cpu computes on the operand's own bit
/// pattern (XLA's round-and-mask rule, as xla-cpu): measured identical to
/// xla-cpu's table (f16 `e5m10` keeps `0x0001`, `e8m7` flushes it and rounds
/// `0x03ff` up to `0x0400`; f8e5m2 `e5m10` keeps `0x01`). bf16 agrees with the
/// reference. f8e4m3fn: the rule on its own bits, where an all-ones exponent
/// (0x79..0x7e, finite in this type) reads as NaN and passes through
/// unrounded: all 256 inputs under 9 configurations (`tests/iree_backend.rs`).
pub const IREE_CPU_REDUCE_PRECISION_IN_OWN_TYPE: &[ElementType] = &[F16, F8E5M2, F8E4M3Fn];

/// One measured approximation: the type xla-cpu's budgets use.
pub use crate::backend::xla::numerics::MeasuredBudget;

/// Maximum measured error per transcendental and type (f16: all inputs
/// against the correctly rounded oracle; bf16: all inputs; f32: 1M inputs;
/// docs/numerics.md, "iree-cpu"). sine, cosine and tan in f32, and beyond
/// small arguments in f16/bf16, are an IREE bug (docs/findings.md), not a
/// budget: no budget is declared that would hide it.
pub const IREE_CPU_BUDGETS: &[MeasuredBudget] = &[
    (Exponential, F16, 1, 0.0),
    (ExponentialMinusOne, F16, 1, 0.0),
    (Log, F16, 1, 0.0),
    (LogPlusOne, F16, 1, 0.0),
    // 0 instead of an f16 subnormal below x = -11.09 (as xla-cpu): abs error < 2^-14
    (Logistic, F16, 2, 6.103515625e-05),
    (Sine, F16, 1, 0.0),
    (Cosine, F16, 1, 0.0),
    (Tan, F16, 1, 0.0),
    (Rsqrt, F16, 1, 0.0),
    (Erf, F16, 1, 0.0),
    // erf(x) is 0 for |x| < 7.3e-37 (f32 math): abs error < 8.3e-37 < 2^-119
    (Erf, Bf16, 0, 1.504632769052528e-36),
    (Exponential, F32, 5, 0.0),
    (ExponentialMinusOne, F32, 5, 0.0),
    (Log, F32, 1, 0.0),
    (LogPlusOne, F32, 2, 0.0),
    (Logistic, F32, 2, 0.0),
    (Tanh, F32, 4, 0.0),
    (Rsqrt, F32, 1, 0.0),
    (Cbrt, F32, 12, 0.0),
    (Erf, F32, 6, 1.504632769052528e-36),
    // MLIR's polynomial atan (math dialect PolynomialApproximation, which
    // IREE's llvm-cpu uses) on the rounded quotient y / x: 41 ulp at most,
    // just below 0.66 where its rational approximation ends (every f32 in
    // [0.5, 0.7) over 1, every 61st in [2^-30, 2^30] over ±1, 2^20 random
    // pairs; docs/numerics.md). Only its accuracy: the zeros, infinities and
    // sign flips it gets wrong are a known bug (iree-cpu/atan2-zeros-infinities-nan).
    (Atan2, F32, 41, 0.0),
];

/// An op IREE's llvm-cpu target rejects ("failed to legalize operation"),
/// by its result type and, where it matters, its first operand's type.
/// Declared so that the suite does not spend a compile finding out: the
/// same diagnostic from `iree-compile` is a skip anyway (`tools::cannot_legalize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The HLO op.
    pub op: Opcode,
    /// Its result's element type.
    pub result: ElementType,
    /// Its first operand's element type (`None`: any).
    pub operand: Option<ElementType>,
    /// What iree-compile says.
    pub reason: &'static str,
}

/// What iree-cpu rejects, as measured on the default suite (docs/findings.md).
pub const UNSUPPORTED: &[Unsupported] = &[
    Unsupported {
        op: Abs,
        result: F8E4M3Fn,
        operand: None,
        reason: "iree-compile cannot legalize `math.absf` on f8E4M3FN",
    },
    Unsupported {
        op: Abs,
        result: F8E5M2,
        operand: None,
        reason: "iree-compile cannot legalize `math.absf` on f8E5M2",
    },
    Unsupported {
        op: Convert,
        result: F8E5M2,
        operand: Some(F16),
        reason: "iree-compile cannot legalize `arith.truncf` from f16 to f8E5M2",
    },
    Unsupported {
        op: Cbrt,
        result: F64,
        operand: None,
        reason: "iree-compile cannot legalize `math.cbrt` on f64",
    },
];

/// iree-cpu's `Numerics`.
pub fn iree_cpu_numerics() -> Numerics {
    let mut n = Numerics {
        flush_inputs: IREE_CPU_FLUSHED.to_vec(),
        flush_outputs: IREE_CPU_FLUSHED.to_vec(),
        // IREE splits and vectorizes reductions (--iree-llvmcpu-reassociate-fp-reductions
        // is on at its default -O2)
        reassociates_reductions: true,
        // dispatch regions fuse elementwise chains; f16/bf16 math runs in f32
        excess_precision_in_fusions: true,
        // ... and IREE forms those dispatch regions itself, from unfused HLO:
        // bf16 `(1 + 2^-8) - 2^-8` is 1 (the intermediate kept in f32), where
        // each op rounded gives 0.99609375 (f16 alike is rounded per op);
        // XLA's `xla_allow_excess_precision` permission (docs/numerics.md)
        excess_precision_anywhere: true,
        reduce_precision_in_own_type: IREE_CPU_REDUCE_PRECISION_IN_OWN_TYPE.to_vec(),
        // an f16 add reduce accumulates in f16, as its reducer says: the sum
        // of 61,440 ones is 2048, where f32 accumulation gives 61440
        // (docs/numerics.md, "iree-cpu")
        reductions_accumulate_in_declared_type: true,
        // f16 dots and convolutions round each product and each partial sum
        // to f16 ((1+2^-10)^2 - (1+2^-10) = 2^-10, exact 2^-10 + 2^-20;
        // 1 + 2^-11 + 2^-11 = 1, exact 1 + 2^-10); f8 ones round each product
        // to f8 (1.125 * 1.125 - 1.125 = 0.125, exact 0.140625) and sum in
        // f32; bf16 ones are exact products summed in f32 (docs/numerics.md)
        contractions_accumulate_in_declared_type: true,
        // padding is materialized and multiplied by the kernel: NaN at the 5
        // outputs of a 3x3 `pad=1_1x1_1` convolution whose inf weight is over
        // the padding, as xla-cpu (docs/numerics.md, "iree-cpu")
        convolution_multiplies_padding: true,
        // ... and so are the holes of an input (lhs) dilation: `[1, 1]`
        // dilated by 2 under the kernel `[inf, 1]` gives `[inf, NaN]`, the
        // reference (holes skipped) and xla-cpu `[inf, 1]`
        convolution_multiplies_dilation_holes: true,
        // inf, NaN and out-of-range floats convert to INT_MIN, 0, wrapped or
        // clamped values: left open by StableHLO ("the behavior is TBD",
        // openxla/stablehlo#180); only those elements (docs/numerics.md, "iree-cpu")
        out_of_range_float_to_int_unspecified: true,
        ..Numerics::exact()
    };
    for &(op, dtype, ulp, abs) in IREE_CPU_BUDGETS {
        n = n.with_approximation(op, dtype, ErrorBudget::ulp_or_abs(ulp, abs));
    }
    n
}

/// The first declared unsupported op `module` uses, as a skip reason.
pub fn unsupported_in(module: &Module) -> Option<String> {
    for c in &module.computations {
        for i in &c.instructions {
            let Some(result) = i.shape.as_array().map(|a| a.dtype) else {
                continue;
            };
            let operand = i
                .operands
                .first()
                .and_then(|o| c.instructions.get(o.index()))
                .and_then(|o| o.shape.as_array())
                .map(|a| a.dtype);
            let hit = UNSUPPORTED.iter().find(|u| {
                u.op == i.opcode
                    && u.result == result
                    && u.operand.is_none_or(|t| Some(t) == operand)
            });
            if let Some(u) = hit {
                return Some(format!("iree-cpu: {} to {result}: {}", u.op, u.reason));
            }
        }
    }
    None
}
