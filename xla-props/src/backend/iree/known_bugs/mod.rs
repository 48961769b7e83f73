//! The IREE 3.13.0 bugs documented in docs/findings.md that have an exact
//! model: the case's module rewritten so that the reference computes what
//! IREE computes (`check::replace_with_model`). Each model is only as wide
//! as the measured bug (its ops, dtypes and input classes). The bugs without
//! a model (sine/cosine/tan accuracy, f8e4m3fn NaN read as a number) stay
//! failures.

mod models;
mod rules;

use crate::check::{BugModel, KnownBug};
use crate::hlo::{ElementType, Opcode};
use models::*;
use rules::*;

/// `cbrt(±inf)` is NaN.
pub const CBRT_INF: KnownBug = KnownBug {
    id: "iree-cpu/cbrt-inf-nan",
    summary: "cbrt of +inf or -inf returns NaN (f16, bf16, f32, f8e5m2) instead of the infinity",
    documented: "docs/findings.md, \"IREE bug: `cbrt` of an infinity is NaN\"",
    model: BugModel::Rust(cbrt_inf),
};

/// `is-finite` on f8e4m3fn is false for every input.
pub const F8E4M3FN_IS_FINITE: KnownBug = KnownBug {
    id: "iree-cpu/f8e4m3fn-is-finite-false",
    summary: "is-finite of an f8e4m3fn value is false for every input, 0 and 1 included",
    documented: "docs/findings.md, \"IREE bug: f8e4m3fn `is-finite` is always false\"",
    model: BugModel::Rust(f8e4m3fn_is_finite),
};

/// bf16/f32 `floor` of a negative subnormal returns it.
pub const FLOOR_BF16_SUBNORMAL: KnownBug = KnownBug {
    id: "iree-cpu/floor-bf16-negative-subnormal",
    summary: "bf16 and f32 floor of a negative subnormal returns the subnormal itself \
              (exact: -1; flushed: -0)",
    documented:
        "docs/findings.md, \"IREE bug: bf16 and f32 `floor` of a negative subnormal returns it\"",
    model: BugModel::Rust(floor_bf16_subnormal),
};

/// Integer `power` with the exponent's low 6 bits: the same lowering as
/// XLA CPU's (`xla-cpu/int-power-low-6-bits`), so the same model.
pub const INT_POWER_LOW_6_BITS: KnownBug = KnownBug {
    id: "iree-cpu/int-power-low-6-bits",
    summary: "wrapping integer power uses only the low 6 bits of the exponent \
              (s8 46^71 = 46^7 = -128, exact 0; s32 2^64 = 1, exact 0)",
    documented: "docs/findings.md, \"IREE bug: `power` is exp(y * log(x))\"",
    model: BugModel::Rust(crate::backend::xla::known_bugs::int_power_low_6_bits),
};

/// Float `power` computed as `exp(y * log(x))`.
pub const POWER_EXP_LOG: KnownBug = KnownBug {
    id: "iree-cpu/power-exp-log",
    summary: "float power is exp(y * log(x)): NaN for every negative base and wherever \
              y * log(x) is NaN (pow(1, NaN), pow(1, inf), pow(x, 0) for x = 0, inf, NaN); \
              the sign of a zero base is lost (pow(-0, 3) = +0, pow(-0, -1) = +inf)",
    documented: "docs/findings.md, \"IREE bug: `power` is exp(y * log(x))\"",
    model: BugModel::Rust(power_exp_log),
};

/// Float `power` of a negative constant base is 0.
pub const POWER_OF_NEGATIVE_CONSTANT_BASE: KnownBug = KnownBug {
    id: "iree-cpu/power-of-negative-constant-base-is-zero",
    summary: "float power whose base is computed from constants alone is 0 wherever the \
              base is negative, for every exponent (pow(-2, 2) = 0, pow(-0.5, 0) = 0; with the \
              base as a parameter it is exp(y * log(x)), NaN): a silent wrong value",
    documented: "docs/findings.md, \"IREE bug: `power` of a negative constant base is 0\"",
    model: BugModel::Rust(power_of_negative_constant_base),
};

/// `atan2` NaN where `y / x` is NaN.
pub const ATAN2_ZERO_INF: KnownBug = KnownBug {
    id: "iree-cpu/atan2-zeros-infinities-nan",
    summary: "atan2(y, x) is NaN when both operands are zeros or both are infinities \
              (IEEE: ±0, ±pi, ±pi/4, ±3pi/4)",
    documented: "docs/findings.md, \"IREE bug: `atan2` of two zeros or two infinities is NaN\"",
    model: BugModel::Rust(atan2_zero_inf),
};

/// f64 `exponential-minus-one` computed as `exp(x) - 1`.
pub const F64_EXPM1: KnownBug = KnownBug {
    id: "iree-cpu/f64-expm1-is-exp-minus-1",
    summary: "f64 expm1(x) is exp(x) - 1 rounded twice: 0 for |x| < 2^-53 (expm1(-0) = +0, \
              expm1(-1e-300) = 0), 8e-8 relative error at 1e-10",
    documented: "docs/findings.md, \"IREE bug: f64 `expm1` is `exp(x) - 1`\"",
    model: BugModel::Rust(f64_expm1),
};

/// f64 `log-plus-one` computed as `log(1 + x)`.
pub const F64_LOG1P: KnownBug = KnownBug {
    id: "iree-cpu/f64-log1p-is-log-of-1-plus-x",
    summary: "f64 log1p(x) is log(1 + x) rounded twice: 0 for |x| < 2^-53 (log1p(-0) = +0), \
              8e-8 relative error at 1e-10",
    documented: "docs/findings.md, \"IREE bug: f64 `expm1` is `exp(x) - 1`\"",
    model: BugModel::Rust(f64_log1p),
};

/// An f8 result that rounds up from the subnormal range to the smallest
/// normal is a signed zero.
pub const F8_ROUND_UP_TO_MIN_NORMAL: KnownBug = KnownBug {
    id: "iree-cpu/f8-round-up-to-min-normal-is-zero",
    summary: "an f8e4m3fn (f8e5m2) result in [15*2^-10, 2^-6) ([7*2^-17, 2^-14)), which rounds \
              up to the smallest normal, is ±0 instead (convert from f32/bf16; expm1, log1p, \
              tanh, sine and tan, computed in f32; add, subtract, multiply, divide and atan2, \
              computed and rounded in f32: all 65,536 operand pairs)",
    documented:
        "docs/findings.md, \"IREE bug: an f8 result rounding up to the smallest normal is zero\"",
    model: BugModel::Rust(f8_round_up_to_min_normal),
};

/// `iree-compile` rejects a valid strided `reduce-window` whose window fits
/// a dimension once without covering it.
pub const STRIDED_WINDOW_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/strided-window-rejected",
    summary: "iree-compile rejects a valid reduce-window or convolution with a strided \
              (spatial) dimension that has one output and a window of 2 or more not covering \
              the (padded, dilated) input (f32[3] size=2 stride=2: 'linalg.generic' op \
              inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2)",
    documented: "docs/findings.md, \"IREE bug: a strided `reduce-window` or `convolution` is \
                 rejected\"",
    model: BugModel::Rejects {
        modules: has_rejected_strided_window,
        error: "'linalg.generic' op inferred input/output operand",
    },
};

/// `dynamic-slice` / `dynamic-update-slice` read an s8 or s16 start index
/// as unsigned.
pub const NARROW_START_UNSIGNED: KnownBug = KnownBug {
    id: "iree-cpu/narrow-start-index-unsigned",
    summary: "dynamic-slice and dynamic-update-slice read an s8 or s16 start index as unsigned: \
              a negative start (s8 -3 = 253) clamps to the last window instead of the first",
    documented: "docs/findings.md, \"IREE bug: dynamic slices read s8 and s16 start indices as \
                 unsigned (a silent miscompilation)\"",
    model: BugModel::Rust(narrow_start_unsigned),
};

/// `dynamic-slice` / `dynamic-update-slice` read a u64 start index as s64.
pub const U64_START_SIGNED: KnownBug = KnownBug {
    id: "iree-cpu/u64-start-index-signed",
    summary: "dynamic-slice and dynamic-update-slice read a u64 start index as s64: a start of \
              2^63 or more (2^64 - 1) is negative and clamps to the first window instead of the \
              last",
    documented: "docs/findings.md, \"IREE bug: dynamic slices read u64 start indices as signed \
                 (a silent miscompilation)\"",
    model: BugModel::Rust(u64_start_signed),
};

/// A scatter into a slice of a buffer is rejected.
pub const SCATTER_INTO_SLICE_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/scatter-into-slice-rejected",
    summary: "iree-compile rejects a valid scatter whose operand is a slice of a parameter \
              (u8[4,3] = slice of u8[6,5], fused or not: 'linalg.generic' op write affecting \
              operations on global resources are restricted to workgroup distributed contexts)",
    documented: "docs/findings.md, \"IREE bug: a scatter into a slice is rejected\"",
    model: BugModel::Rejects {
        modules: has_scatter_into_slice,
        error: "write affecting operations on global resources are restricted",
    },
};

/// A dot over an empty contraction crashes iree-compile.
pub const EMPTY_CONTRACTION_CRASH: KnownBug = KnownBug {
    id: "iree-cpu/empty-contraction-dot-crash",
    summary: "iree-compile dies of SIGFPE on a dot whose contracting dimensions hold no element \
              and whose result is not empty (f32[2,0] . f32[0,1]; the result is all zeros)",
    documented: "docs/findings.md, \"IREE bug: a dot over an empty contraction crashes \
                 iree-compile\"",
    model: BugModel::Rejects {
        modules: has_empty_contraction_dot,
        error: "iree-compile crashed: signal: 8 (SIGFPE)",
    },
};

/// An f8 reduction whose innermost reduced run is not a multiple of 16
/// elements (and more than 16) is rejected by iree-compile.
pub const F8_REDUCE_MASKED_TAIL_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/f8-reduce-masked-tail-rejected",
    summary: "iree-compile rejects a valid f8e4m3fn or f8e5m2 reduce (or a reduce-window whose \
              windows cover whole dimensions) whose trailing reduced dimensions hold more than 16 \
              elements, not a multiple of 16 (f8e4m3fn[24] -> f8e4m3fn[]: 'vector.mask' op \
              expects only one operation to mask)",
    documented: "docs/findings.md, \"IREE bug: an f8 reduce with a masked tail is rejected\"",
    model: BugModel::Rejects {
        modules: has_rejected_f8_reduce,
        error: "'vector.mask' op expects only one operation to mask",
    },
};

/// A sort with `is_stable=true` reorders elements the comparator ties.
pub const SORT_UNSTABLE: KnownBug = KnownBug {
    id: "iree-cpu/stable-sort-unstable",
    summary: "a sort with is_stable=true is not stable: elements the comparator orders neither \
              way come out in another order (k = [0, 0, -1, 0], v = [1, 2, 3, 4] gives v = \
              [3, 2, 4, 1], stable: [3, 1, 2, 4]); any value at exactly the tied positions, \
              every other position must be right",
    documented: "docs/findings.md, \"IREE bug: a sort with `is_stable=true` is not stable\"",
    model: BugModel::AnyValue(stable_sort_ties),
};

/// `gather` reads outside its operand for an out-of-range start index
/// instead of clamping it.
pub const GATHER_OUT_OF_RANGE_START: KnownBug = KnownBug {
    id: "iree-cpu/gather-out-of-range-start-unclamped",
    summary: "gather does not clamp an out-of-range start index: the slice is read from \
              outside the operand (0 or garbage that changes from run to run) instead of \
              from the clamped start",
    documented: "docs/findings.md, \"IREE bug: gather does not clamp out-of-range start \
                 indices (a silent miscompilation)\"",
    model: BugModel::AnyValue(gather_out_of_range_rows),
};

/// f16, bf16 and f32 `sine`, `cosine` and `tan` are inaccurate everywhere
/// and wrong (±inf, NaN, 0) beyond 2^13: no model (the values are IREE's
/// range reduction's), so any value at every element of such an op and of
/// what is computed from it element by element.
pub const SINE_RANGE: KnownBug = KnownBug {
    id: "iree-cpu/sine-cosine-tan-inaccurate",
    summary: "f32 sine, cosine and tan are inaccurate (sin(-0.00148) off by 1,593 ulp, \
              sin(8192) by 1,378 ulp) and wrong beyond 2^13 (sin(2.35e17) = 0, ±inf, NaN); \
              f16 and bf16, computed in f32, inherit it (sin(bf16 1.6e11) = -inf): any value \
              at the elements of an output computed element by element from a sine, cosine or \
              tan of f16, bf16 or f32: the op itself, or its followers (negate, multiply, \
              divide, add, ...: y / cos(1.496) off by 14 ulp, sin(3.49) / 0.28 by 3)",
    documented: "docs/findings.md, \"IREE bug: f32 `sine`, `cosine` and `tan` are inaccurate, \
                 and wrong beyond 2^13\"",
    model: BugModel::AnyValue(sine_family_outputs),
};

/// `sine` and `tan` of -0 are +0 (f8, bf16, f32).
pub const SINE_OF_MINUS_ZERO: KnownBug = KnownBug {
    id: "iree-cpu/sine-tan-of-minus-zero-is-plus-zero",
    summary: "sine(-0) and tan(-0) are +0 instead of -0 (f8e4m3fn, f8e5m2, bf16, f32)",
    documented: "docs/findings.md, \"IREE bug: `sine` and `tan` of -0 are +0\"",
    model: BugModel::Rust(sine_of_minus_zero),
};

/// f8e4m3fn -NaN (`0xff`) read as -480 by the transcendentals.
pub const F8E4M3FN_MINUS_NAN: KnownBug = KnownBug {
    id: "iree-cpu/f8e4m3fn-minus-nan-read-as-number",
    summary: "an f8e4m3fn transcendental reads -NaN (0xff) as -480 (the magnitude the bits \
              would have without the format's NaN encoding): exp(-NaN) = 0, tanh(-NaN) = -1, \
              cosine(-NaN) = -0.8125, cbrt(-NaN) = -8 (logistic: its own bug); so do add, \
              subtract, multiply, divide and atan2 (16 + -NaN = -448)",
    documented: "docs/findings.md, \"IREE bug: f8e4m3fn -NaN is read as a number\"",
    model: BugModel::Rust(f8e4m3fn_minus_nan),
};

/// f8e4m3fn `logistic` is NaN where `exp(-x)` overflows the type.
pub const F8E4M3FN_LOGISTIC_NAN: KnownBug = KnownBug {
    id: "iree-cpu/f8e4m3fn-logistic-overflow-nan",
    summary: "f8e4m3fn logistic(x) is NaN for x <= -6.5 (and -NaN), where the exact result is \
              0 or the smallest subnormal: exp(-x) is rounded to f8e4m3fn, which has no \
              infinity, so it overflows to NaN",
    documented: "docs/findings.md, \"IREE bug: f8e4m3fn `logistic` of x <= -6.5 is NaN\"",
    model: BugModel::Rust(f8e4m3fn_logistic_nan),
};

/// A bf16 round trip is elided (any shape when f16 is an end, else one
/// element).
pub const BF16_ROUND_TRIP_ELIDED: KnownBug = KnownBug {
    id: "iree-cpu/bf16-round-trip-elided",
    summary: "a convert to bf16 and back (from and to f16, f32 or f64) drops the bf16 rounding \
              when f16 is the source or the destination (any shape), and for a one-element \
              value otherwise (rank 0, [1], [1,1]; reduce bodies included): f32(bf16(x)) = x \
              for x = -0.31364793 (exact: -0.31445313); f64 sources keep their rounding to \
              f32; f32/f64 values of two or more elements round right",
    documented: "docs/findings.md, \"IREE bug: a bf16 round trip is elided (a silent \
                 miscompilation)\"",
    model: BugModel::Rust(bf16_round_trip_elided),
};

/// `reduce-precision` with `mantissa_bits=0` keeps NaN, as xla-cpu's
/// (`xla-cpu/reduce-precision-nan-without-mantissa`).
pub const REDUCE_PRECISION_NAN_WITHOUT_MANTISSA: KnownBug = KnownBug {
    id: "iree-cpu/reduce-precision-nan-without-mantissa",
    summary: "reduce-precision with mantissa_bits=0 keeps a NaN input NaN (f16, bf16, f32, f64, \
              f8e5m2; f8e4m3fn also 0x79..0x7e, NaN to the round-and-mask rule on its bits), \
              where the StableHLO interpreter and XLA's evaluator give +inf",
    documented: "docs/findings.md, \"IREE bug: `reduce-precision` with no mantissa bits keeps \
                 NaN\"",
    model: BugModel::Rust(reduce_precision_nan_without_mantissa),
};

/// A `pred` dot sums its products modulo 2.
pub const PRED_DOT_XOR: KnownBug = KnownBug {
    id: "iree-cpu/pred-dot-xor",
    summary: "a dot of pred operands is the sum of the products modulo 2 (true for an odd count \
              of true products): [1, 1] . [1, 1] is false, XLA's pred dot is true for any true \
              product (a silent miscompilation)",
    documented: "docs/findings.md, \"IREE bug: a `pred` dot is a sum modulo 2\"",
    model: BugModel::Rust(pred_dot_xor),
};

/// A reduce whose reducer returns a constant is rejected.
pub const CONSTANT_REDUCER_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/constant-reducer-rejected",
    summary: "iree-compile rejects a valid reduce whose reducer returns a constant: it folds the \
              reduce to the scalar and fails its own verifier (type of return operand 0 \
              ('tensor<i1>') doesn't match function result type ('tensor<24x1x1xi1>'))",
    documented: "docs/findings.md, \"IREE bug: a reduce with a constant reducer is rejected\"",
    model: BugModel::Rejects {
        modules: has_constant_reducer,
        error: "type of return operand 0",
    },
};

/// A scatter of unit windows addressed by every operand dimension is
/// rejected.
pub const UNIT_WINDOW_SCATTER_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/unit-window-scatter-rejected",
    summary: "iree-compile rejects a valid scatter whose indices address every operand dimension \
              with no inserted window dimension (s32[3,4] from indices s32[3,4,2], updates \
              s32[3,4,1,1]: 'iree_linalg_ext.scatter' op expected indices to be equal to batch \
              rank or batch rank + 1)",
    documented: "docs/findings.md, \"IREE bug: a scatter of unit windows over every dimension is \
                 rejected\"",
    model: BugModel::Rejects {
        modules: has_rejected_unit_window_scatter,
        error: "expected indices to be equal to batch rank or batch rank + 1",
    },
};

/// A sort of a sliced operand of rank 2 or more is rejected.
pub const SORT_OF_SLICE_REJECTED: KnownBug = KnownBug {
    id: "iree-cpu/sort-of-slice-rejected",
    summary: "iree-compile rejects a valid sort one of whose operands is a slice of rank 2 or \
              more (f32[4,3] = slice of f32[6,5], sorted along either dimension; key-value sorts \
              and rank 3 too; a rank-1 slice compiles), or an f8e5m2, f8e4m3fn or pred \
              constant ([3,5]; f16, bf16, f32, f64 and integer ones compile): \
              'linalg.generic' op write affecting \
              operations on global resources are restricted to workgroup distributed contexts)",
    documented: "docs/findings.md, \"IREE bug: a sort of a slice is rejected\"",
    model: BugModel::Rejects {
        modules: has_sort_of_slice,
        error: "write affecting operations on global resources are restricted",
    },
};

/// A gather with a far out-of-range start index crashes the runtime.
pub const GATHER_FAR_START_CRASH: KnownBug = KnownBug {
    id: "iree-cpu/gather-far-out-of-range-start-crash",
    summary: "iree-run-module dies of SIGSEGV on a gather whose start index is far out of range \
              (s16[5] gather at u32 2^31 or 2^31 - 1, s32 -2^31, u32 100000; \
              iree-cpu/gather-out-of-range-start-unclamped read so far outside the operand that \
              the read faults): no result, where the start clamps into the operand",
    documented: "docs/findings.md, \"IREE bug: a gather at a far out-of-range start crashes \
                 iree-run-module\"",
    model: BugModel::Rejects {
        modules: has_root_gather_of_parameter_starts,
        error: "iree-run-module crashed: signal: 11 (SIGSEGV)",
    },
};

/// The known bugs of `iree-cpu` (IREE 3.13.0).
pub const IREE_CPU_KNOWN_BUGS: &[KnownBug] = &[
    F8E4M3FN_LOGISTIC_NAN,
    SINE_RANGE,
    SINE_OF_MINUS_ZERO,
    F8E4M3FN_MINUS_NAN,
    STRIDED_WINDOW_REJECTED,
    NARROW_START_UNSIGNED,
    EMPTY_CONTRACTION_CRASH,
    F8_REDUCE_MASKED_TAIL_REJECTED,
    SORT_UNSTABLE,
    GATHER_OUT_OF_RANGE_START,
    CBRT_INF,
    F8E4M3FN_IS_FINITE,
    FLOOR_BF16_SUBNORMAL,
    INT_POWER_LOW_6_BITS,
    POWER_EXP_LOG,
    POWER_OF_NEGATIVE_CONSTANT_BASE,
    ATAN2_ZERO_INF,
    F64_EXPM1,
    F64_LOG1P,
    F8_ROUND_UP_TO_MIN_NORMAL,
    BF16_ROUND_TRIP_ELIDED,
    REDUCE_PRECISION_NAN_WITHOUT_MANTISSA,
    PRED_DOT_XOR,
    CONSTANT_REDUCER_REJECTED,
    UNIT_WINDOW_SCATTER_REJECTED,
    U64_START_SIGNED,
    SCATTER_INTO_SLICE_REJECTED,
    SORT_OF_SLICE_REJECTED,
    GATHER_FAR_START_CRASH,
];

/// The binary f8 arithmetic IREE computes in f32 and truncates (so that
/// the f8 bugs of its truncation and of its -NaN reading show there too).
const F8_BINARY: [Opcode; 5] = [
    Opcode::Add,
    Opcode::Subtract,
    Opcode::Multiply,
    Opcode::Divide,
    Opcode::Atan2,
];

/// The float types power and atan2 models cover (f64 atan2 does not link).
const FLOATS: [ElementType; 6] = [
    ElementType::F8E4M3Fn,
    ElementType::F8E5M2,
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F32,
    ElementType::F64,
];

#[cfg(test)]
mod tests;
