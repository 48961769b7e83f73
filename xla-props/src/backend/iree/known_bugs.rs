//! The IREE 3.13.0 bugs documented in docs/findings.md that have an exact
//! model: the case's module rewritten so that the reference computes what
//! IREE computes (`check::replace_with_model`). Each model is only as wide
//! as the measured bug (its ops, dtypes and input classes). The bugs without
//! a model (sine/cosine/tan accuracy, f8e4m3fn NaN read as a number) stay
//! failures.

use crate::check::{output_masks, replace_with_model, type_text, BugModel, KnownBug};
use crate::hlo::{ArrayShape, ElementType, Instruction, Module, Opcode};
use crate::literal::Literal;

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
/// range reduction's), so any value at every element of such an op.
pub const SINE_RANGE: KnownBug = KnownBug {
    id: "iree-cpu/sine-cosine-tan-inaccurate",
    summary: "f32 sine, cosine and tan are inaccurate (sin(-0.00148) off by 1,593 ulp, \
              sin(8192) by 1,378 ulp) and wrong beyond 2^13 (sin(2.35e17) = 0, ±inf, NaN); \
              f16 and bf16, computed in f32, inherit it (sin(bf16 1.6e11) = -inf): any value \
              at the elements of a sine, cosine or tan that is an output, on f16, bf16, f32",
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
    ATAN2_ZERO_INF,
    F64_EXPM1,
    F64_LOG1P,
    F8_ROUND_UP_TO_MIN_NORMAL,
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

/// `power(x, y)` as IREE computes it: `exp(y * log(x))` evaluated in the
/// op's own type, each step rounded to it (f8: `pow(3, 3)` = 32, f16:
/// `pow(0.5, 2)` = 0.2499, as measured).
fn power_exp_log(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Power, &FLOATS)?;
        let t = type_text(&a);
        // subnormal operands are flushed to the zero of their sign first
        // (bf16, f32, f64: pow(2^-149, -0) is NaN, as exp(-0 * log(0))); not
        // f16, computed in f32 where its subnormals are normal: pow(-2^-24,
        // 1) is NaN (a negative base), pow(2^-24, -0) is 1 (measured)
        let flush =
            a.dtype != ElementType::F16 && super::numerics::IREE_CPU_FLUSHED.contains(&a.dtype);
        let flush = if flush {
            let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
            let p = with_dtype(&a, ElementType::Pred);
            let mn = a.dtype.float_format()?.min_normal();
            format!(
                "mn = f64[] constant({mn:e})\n  mnt = {ts} convert(mn)\n  mnb = {t} broadcast(mnt), dimensions={{}}\n  \
                 z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  \
                 ax = {t} abs(x0)\n  sx = {p} compare(ax, mnb), direction=LT\n  zx = {t} multiply(x0, zb)\n  \
                 x = {t} select(sx, zx, x0)\n  ay = {t} abs(y0)\n  sy = {p} compare(ay, mnb), direction=LT\n  \
                 zy = {t} multiply(y0, zb)\n  y = {t} select(sy, zy, y0)\n  "
            )
        } else {
            format!("x = {t} copy(x0)\n  y = {t} copy(y0)\n  ")
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x0 = {t} parameter(0)\n  y0 = {t} parameter(1)\n  \
             {flush}l = {t} log(x)\n  e = {t} multiply(y, l)\n  ROOT r = {t} exponential(e)\n}}\n"
        ))
    })
}

/// `atan2(y, x)` as IREE computes it (`atan(y / x)` in the op's type, turned
/// by ±pi unless `x > 0`, with `x == 0` special-cased): NaN where `y / x` is
/// NaN or both operands are zero after flushing (f16, bf16, f32 subnormals
/// are zero); `+pi` for `x < 0` and `y / x` zero (IEEE: `-pi` for a negative
/// or `-0` `y`); else the exact `atan2`.
fn atan2_zero_inf(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Atan2, &FLOATS)?;
        let t = type_text(&a);
        let p = with_dtype(&a, ElementType::Pred);
        let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
        let flushed = [ElementType::F16, ElementType::Bf16, ElementType::F32].contains(&a.dtype);
        let min_normal = if !flushed {
            "0".to_string()
        } else {
            format!("{:e}", a.dtype.float_format()?.min_normal())
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  y = {t} parameter(0)\n  x = {t} parameter(1)\n  \
             q = {t} divide(y, x)\n  qnan = {p} compare(q, q), direction=NE\n  \
             z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  \
             mn = f64[] constant({min_normal})\n  mnt = {ts} convert(mn)\n  mnb = {t} broadcast(mnt), dimensions={{}}\n  \
             ay = {t} abs(y)\n  ax = {t} abs(x)\n  yz0 = {p} compare(ay, mnb), direction=LT\n  \
             yz1 = {p} compare(ay, zb), direction=EQ\n  yz = {p} or(yz0, yz1)\n  \
             xz0 = {p} compare(ax, mnb), direction=LT\n  xz1 = {p} compare(ax, zb), direction=EQ\n  \
             xz = {p} or(xz0, xz1)\n  both = {p} and(yz, xz)\n  bad = {p} or(qnan, both)\n  \
             xneg = {p} compare(x, zb), direction=LT\n  xnz = {p} not(xz)\n  xn = {p} and(xneg, xnz)\n  \
             q00 = {p} compare(q, zb), direction=EQ\n  aq = {t} abs(q)\n  \
             q01 = {p} compare(aq, mnb), direction=LT\n  q0 = {p} or(q00, q01)\n  q0y = {p} or(q0, yz)\n  flip = {p} and(xn, q0y)\n  \
             pi = f64[] constant(3.141592653589793)\n  pit = {ts} convert(pi)\n  pib = {t} broadcast(pit), dimensions={{}}\n  \
             nan = f64[] constant(nan)\n  nant = {ts} convert(nan)\n  nanb = {t} broadcast(nant), dimensions={{}}\n  \
             at = {t} atan2(y, x)\n  r0 = {t} select(flip, pib, at)\n  \
             ROOT r = {t} select(bad, nanb, r0)\n}}\n"
        ))
    })
}

/// f8 results of `convert` (from f32 or bf16), `exponential-minus-one`,
/// `log-plus-one`, `tanh`, `sine`, `tan` (the exact value, in f64) and of
/// the binary arithmetic [`F8_BINARY`] (computed and rounded in f32): that
/// value rounded once, except that one in `[lo, min_normal)` is a signed
/// zero.
fn f8_round_up_to_min_normal(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F8E4M3Fn, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = array_of(i, i.opcode, &[F8E4M3Fn, F8E5M2])?;
        if matches!(i.opcode, Opcode::Dot | Opcode::Convolution) {
            return f8_contraction_band(m, i, &a);
        }
        let (lo, min_normal) = match a.dtype {
            F8E4M3Fn => ("0.0146484375", "0.015625"),
            _ => ("5.340576171875e-05", "6.103515625e-05"),
        };
        let src = operand_dtype(m, i)?;
        let op = match i.opcode {
            Opcode::Convert if [F32, Bf16].contains(&src) => None,
            Opcode::ExponentialMinusOne
            | Opcode::LogPlusOne
            | Opcode::Tanh
            | Opcode::Sine
            | Opcode::Tan
                if src == a.dtype =>
            {
                Some(i.opcode)
            }
            op if F8_BINARY.contains(&op) && src == a.dtype => Some(op),
            _ => return None,
        };
        let (t, x) = (type_text(&a), with_dtype(&a, src));
        let d = with_dtype(&a, ElementType::F64);
        let p = with_dtype(&a, ElementType::Pred);
        let binary = i.operands.len() == 2;
        let w = match op {
            // computed in f32 and rounded there first, as IREE does (an
            // f8e5m2 atan2 of 3.5 * 2^-16 - tiny is 3.5 * 2^-16 in f32, a tie
            // that then rounds up to the smallest normal: 0)
            Some(op) if binary => {
                let f = with_dtype(&a, F32);
                format!(
                    "y = {x} parameter(1)\n  xf = {f} convert(x)\n  yf = {f} convert(y)\n  \
                     wf = {f} {}(xf, yf)\n  w = {d} convert(wf)",
                    op.name()
                )
            }
            Some(op) => format!("w = {d} {}(xd)", op.name()),
            None => format!("w = {d} copy(xd)"),
        };
        // tan is sin / cos in the op's type: the band is the sine's
        // (tan(2^-6) = 0 in f8e4m3fn, whose exact value is above 2^-6)
        let band_of = if op == Some(Opcode::Tan) {
            format!("bw = {d} sine(xd)")
        } else {
            format!("bw = {d} copy(w)")
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {x} parameter(0)\n  xd = {d} convert(x)\n  {w}\n  \
             {band_of}\n  aw = {d} abs(bw)\n  lo = f64[] constant({lo})\n  lob = {d} broadcast(lo), dimensions={{}}\n  \
             mn = f64[] constant({min_normal})\n  mnb = {d} broadcast(mn), dimensions={{}}\n  \
             ge = {p} compare(aw, lob), direction=GE\n  lt = {p} compare(aw, mnb), direction=LT\n  \
             band = {p} and(ge, lt)\n  z = f64[] constant(0)\n  zb = {d} broadcast(z), dimensions={{}}\n  \
             neg = {p} compare(w, zb), direction=LT\n  nz = f64[] constant(-0)\n  nzb = {d} broadcast(nz), dimensions={{}}\n  \
             sz = {d} select(neg, nzb, zb)\n  zt = {t} convert(sz)\n  r0 = {t} convert(w)\n  \
             ROOT r = {t} select(band, zt, r0)\n}}\n"
        ))
    })
}

/// The model of an f8 `dot` or `convolution` (`i`, of result `a`, in `m`)
/// under the round-up bug: the op on the operands in f64 (exact), rounded
/// once, except that a result in the band below the smallest normal is a
/// signed zero (IREE sums in f32 and truncates: measured on the suite's
/// `k1` convolutions, `0.0156` for an exact `2^-6`). Built with the module
/// builder, as the op's attributes come along.
fn f8_contraction_band(m: &Module, i: &Instruction, a: &ArrayShape) -> Option<String> {
    use crate::hlo::{ComparisonDirection as Dir, ComparisonType, ModuleBuilder, Shape};
    let (lo, min_normal) = match a.dtype {
        ElementType::F8E4M3Fn => (0.0146484375, 0.015625),
        _ => (5.340576171875e-05, 6.103515625e-05),
    };
    let shapes = operand_shapes(m, i)?;
    if shapes.len() != 2 || shapes.iter().any(|s| s.dtype != a.dtype) {
        return None;
    }
    let model = ModuleBuilder::new("model").build("model", |b| {
        let x = b.parameter(Shape::array(a.dtype, shapes[0].dims.clone()))?;
        let y = b.parameter(Shape::array(a.dtype, shapes[1].dims.clone()))?;
        let (xd, yd) = (
            b.convert(x, ElementType::F64)?,
            b.convert(y, ElementType::F64)?,
        );
        let w = b.add(i.opcode, &[xd, yd], i.attrs.clone(), None)?;
        let mut splat = |v: f64| {
            let c = b.constant_f64(ElementType::F64, &[], &[v])?;
            b.broadcast(c, &a.dims, &[])
        };
        let (lob, mnb, zb, nzb) = (splat(lo)?, splat(min_normal)?, splat(0.0)?, splat(-0.0)?);
        let cmp = |b: &mut crate::hlo::ComputationBuilder<'_>, d, p, q| {
            b.compare(d, ComparisonType::Float, p, q)
        };
        let aw = b.unary(Opcode::Abs, w)?;
        let ge = cmp(b, Dir::Ge, aw, lob)?;
        let lt = cmp(b, Dir::Lt, aw, mnb)?;
        let band = b.binary(Opcode::And, ge, lt)?;
        let neg = cmp(b, Dir::Lt, w, zb)?;
        let signed_zero = b.select(neg, nzb, zb)?;
        let v = b.select(band, signed_zero, w)?;
        b.convert(v, a.dtype)
    });
    Some(crate::hlo::print_module(&model.ok()?))
}

/// f64 `log-plus-one(x)` as IREE computes it: `log(1 + x)`.
fn f64_log1p(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::LogPlusOne, &[ElementType::F64])?;
        let t = type_text(&a);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  \
             one = f64[] constant(1)\n  oneb = {t} broadcast(one), dimensions={{}}\n  \
             s = {t} add(x, oneb)\n  ROOT r = {t} log(s)\n}}\n"
        ))
    })
}

/// f64 `exponential-minus-one(x)` as IREE computes it: `exp(x) - 1`.
fn f64_expm1(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::ExponentialMinusOne, &[ElementType::F64])?;
        let t = type_text(&a);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  e = {t} exponential(x)\n  \
             one = f64[] constant(1)\n  oneb = {t} broadcast(one), dimensions={{}}\n  \
             ROOT r = {t} subtract(e, oneb)\n}}\n"
        ))
    })
}

/// The array type of an instruction whose opcode is `op` and dtype one of `dtypes`.
/// A `reduce-window` as measured rejected (docs/repro/iree-reduce-window-stride):
/// some dimension has a stride above 1, one output, and a window of size 2
/// or more (dilated) shorter than its (dilated, padded) input: f32[3] or
/// f32[4,3] -> [2,1] with size 2 and stride 2 are rejected; f32[4], f32[5],
/// f32[4,2] -> [2,1], size 1, and a stride-1 dimension are not.
/// True when `m` has a reduce-window or convolution that iree-compile
/// rejects: a window dimension with a stride above 1, one output, and a
/// window of 2 or more whose (dilated) span does not cover the padded,
/// base-dilated input (measured on 25 reduce-windows and 17 one-dimensional
/// convolutions, docs/findings.md).
fn has_rejected_strided_window(m: &Module) -> bool {
    any_instruction(m, |i, input| {
        let (Some(window), Some(out)) =
            (i.attrs.window.as_ref(), i.shape.leaves().first().copied())
        else {
            return false;
        };
        // per window dimension: the input and output dimensions it spans
        let dims: Vec<(i64, i64)> = match (i.opcode, &i.attrs.conv_dims) {
            (Opcode::ReduceWindow, _) => (0..window.len() as i64).map(|d| (d, d)).collect(),
            (Opcode::Convolution, Some(cd)) => cd
                .input_spatial
                .iter()
                .copied()
                .zip(cd.output_spatial.iter().copied())
                .collect(),
            _ => return false,
        };
        window.iter().zip(dims).any(|(w, (di, do_))| {
            let size = |s: &ArrayShape, d: i64| {
                usize::try_from(d).ok().and_then(|d| s.dims.get(d).copied())
            };
            let (Some(n), Some(o)) = (size(input, di), size(out, do_)) else {
                return false;
            };
            let span = (w.size - 1) * w.window_dilation + 1;
            let padded = (n - 1).max(0) * w.base_dilation + 1 + w.pad_low + w.pad_high;
            w.stride > 1 && w.size > 1 && o == 1 && span < padded
        })
    })
}

/// True when `rule` holds for some instruction of `m` whose first operand
/// is an array (given with the instruction).
fn any_instruction(m: &Module, rule: impl Fn(&Instruction, &ArrayShape) -> bool) -> bool {
    m.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            i.operands
                .first()
                .and_then(|o| c.instructions.get(o.index()))
                .and_then(|o| o.shape.as_array())
                .is_some_and(|x| rule(i, x))
        })
    })
}

/// For a root `gather` of one start index per output row (indices `[k, 1]`
/// or `[k]` from an entry parameter, output dimension 0 the batch, the
/// others the slice): the output rows whose start index is out of range
/// (as measured, docs/repro/iree-gather-clamp; in-range rows are right).
fn gather_out_of_range_rows(m: &Module, inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    let g = root.attrs.gather_dims.as_ref()?;
    let out = root.shape.as_array()?;
    let (operand, indices) = match root.operands.as_slice() {
        [o, i] if root.opcode == Opcode::Gather => (entry.instr(*o), entry.instr(*i)),
        _ => return None,
    };
    let dims = &operand.shape.as_array()?.dims;
    let index_shape = indices.shape.as_array()?;
    let one_index = match index_shape.dims.as_slice() {
        [_, 1] | [_] => g.index_vector_dim == 1,
        _ => false,
    };
    let offsets: Vec<i64> = (1..out.dims.len() as i64).collect();
    if !one_index
        || g.start_index_map.len() != 1
        || g.offset_dims != offsets
        || !g.operand_batching_dims.is_empty()
        || indices.opcode != Opcode::Parameter
    {
        return None;
    }
    let d = usize::try_from(g.start_index_map[0]).ok()?;
    let hi = i128::from(dims.get(d)? - g.slice_sizes.get(d)?);
    let starts = inputs.get(usize::try_from(indices.attrs.parameter_number?).ok()?)?;
    let rows = usize::try_from(*out.dims.first()?).ok()?;
    let per_row = usize::try_from(out.dims[1..].iter().product::<i64>()).ok()?;
    if starts.element_count() != rows {
        return None;
    }
    let bad: Vec<bool> = (0..rows)
        .map(|r| !(0..=hi).contains(&starts.get_i128(r)))
        .collect();
    bad.contains(&true).then(|| {
        vec![bad
            .iter()
            .flat_map(|&b| std::iter::repeat_n(b, per_row))
            .collect()]
    })
}

/// Every element of each output that is a `sine`, `cosine` or `tan` of f16,
/// bf16 or f32 (the root, or an element of a root tuple).
fn sine_family_outputs(m: &Module, _: &[Literal]) -> Option<Vec<Vec<bool>>> {
    use ElementType::{Bf16, F16, F32};
    output_masks(m, |o, n| {
        let hit = [Opcode::Sine, Opcode::Cosine, Opcode::Tan]
            .iter()
            .any(|&op| array_of(o, op, &[F16, Bf16, F32]).is_some());
        vec![hit; n]
    })
}

/// `sine` and `tan`: a zero input gives +0.
fn sine_of_minus_zero(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F8E4M3Fn, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = [Opcode::Sine, Opcode::Tan]
            .iter()
            .find_map(|&op| array_of(i, op, &[F8E4M3Fn, F8E5M2, Bf16, F32]))?;
        let (t, p) = (type_text(&a), with_dtype(&a, ElementType::Pred));
        let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  \
             z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  \
             zero = {p} compare(x, zb), direction=EQ\n  y = {t} {}(x)\n  \
             ROOT r = {t} select(zero, zb, y)\n}}\n",
            i.opcode.name()
        ))
    })
}

/// f8e4m3fn `logistic`: NaN where `exp(-x)` rounded to f8e4m3fn is NaN
/// (`0xff`, -NaN, counts as -480), else the exact result.
fn f8e4m3fn_logistic_nan(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Logistic, &[ElementType::F8E4M3Fn])?;
        Some(minus_nan_as_480(&a, 1, |t, d, p| {
            format!(
                "  nv = {d} negate(v0)\n  e = {d} exponential(nv)\n  \
                 e8 = {t} convert(e)\n  over = {p} compare(e8, e8), direction=NE\n  \
                 nan = f64[] constant(nan)\n  nanb = {d} broadcast(nan), dimensions={{}}\n  \
                 l = {d} logistic(v0)\n  w = {d} select(over, nanb, l)\n  ROOT r = {t} convert(w)\n"
            )
        }))
    })
}

/// f8e4m3fn transcendentals and binary arithmetic ([`F8_BINARY`]): `0xff`
/// (-NaN) counts as -480; the function is computed in f64 and rounded once
/// (other elements: the exact result).
fn f8e4m3fn_minus_nan(m: &Module) -> Option<Module> {
    use Opcode::*;
    replace_with_model(m, &|i| {
        let a = [
            Exponential,
            ExponentialMinusOne,
            Sine,
            Cosine,
            Tan,
            Tanh,
            Cbrt,
        ]
        .iter()
        .chain(&F8_BINARY)
        .find_map(|&op| array_of(i, op, &[ElementType::F8E4M3Fn]))?;
        let arity = i.operands.len();
        let args: Vec<String> = (0..arity).map(|k| format!("v{k}")).collect();
        let op = i.opcode.name();
        Some(minus_nan_as_480(&a, arity, |t, d, _| {
            format!(
                "  w = {d} {op}({})\n  ROOT r = {t} convert(w)\n",
                args.join(", ")
            )
        }))
    })
}

/// A model module over `arity` f8e4m3fn arrays of shape `a`: `v0`, `v1`,
/// .. are the inputs in f64 with `0xff` (-NaN) read as -480; `body` (given
/// the input, f64 and pred type texts) computes the root from them.
fn minus_nan_as_480(
    a: &ArrayShape,
    arity: usize,
    body: impl FnOnce(&str, &str, &str) -> String,
) -> String {
    let t = type_text(a);
    let (d, u, p) = (
        with_dtype(a, ElementType::F64),
        with_dtype(a, ElementType::U8),
        with_dtype(a, ElementType::Pred),
    );
    let mut text = format!(
        "HloModule model\n\nENTRY model {{\n  ff = u8[] constant(255)\n  \
         ffb = {u} broadcast(ff), dimensions={{}}\n  c = f64[] constant(-480)\n  \
         cb = {d} broadcast(c), dimensions={{}}\n"
    );
    for k in 0..arity {
        text += &format!(
            "  x{k} = {t} parameter({k})\n  b{k} = {u} bitcast-convert(x{k})\n  \
             neg{k} = {p} compare(b{k}, ffb), direction=EQ\n  xd{k} = {d} convert(x{k})\n  \
             v{k} = {d} select(neg{k}, cb, xd{k})\n"
        );
    }
    text + &body(&t, &d, &p) + "}\n"
}

fn array_of(i: &Instruction, op: Opcode, dtypes: &[ElementType]) -> Option<ArrayShape> {
    let a = i.shape.as_array()?;
    (i.opcode == op && dtypes.contains(&a.dtype)).then(|| a.clone())
}

fn with_dtype(a: &ArrayShape, t: ElementType) -> String {
    type_text(&ArrayShape::new(t, a.dims.clone()))
}

/// `cbrt`: an infinite input gives NaN, others `cbrt`.
fn cbrt_inf(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F16, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Cbrt, &[F16, Bf16, F32, F8E5M2])?;
        let t = type_text(&a);
        let f = with_dtype(&a, F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             ax = {f} abs(xf)\n  inf = f32[] constant(inf)\n  infb = {f} broadcast(inf), dimensions={{}}\n  \
             isinf = {p} compare(ax, infb), direction=EQ\n  c = {t} cbrt(x)\n  \
             nan = f32[] constant(nan)\n  nanb = {f} broadcast(nan), dimensions={{}}\n  \
             nant = {t} convert(nanb)\n  ROOT r = {t} select(isinf, nant, c)\n}}\n"
        ))
    })
}

/// f8e4m3fn `is-finite`: false everywhere.
fn f8e4m3fn_is_finite(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::IsFinite, &[ElementType::Pred])?;
        (operand_dtype(m, i)? == ElementType::F8E4M3Fn).then(|| {
            format!(
                "HloModule model\n\nENTRY model {{\n  x = {} parameter(0)\n  f = pred[] constant(false)\n  \
                 ROOT r = {} broadcast(f), dimensions={{}}\n}}\n",
                with_dtype(&a, ElementType::F8E4M3Fn),
                type_text(&a)
            )
        })
    })
}

/// The element type of `i`'s first operand (`i` an instruction of `m`).
fn operand_dtype(m: &Module, i: &Instruction) -> Option<ElementType> {
    operand_shapes(m, i)?.first().map(|a| a.dtype)
}

/// The array shapes of `i`'s operands (`i` an instruction of `m`); None
/// when one is not an array.
fn operand_shapes(m: &Module, i: &Instruction) -> Option<Vec<ArrayShape>> {
    let c = m
        .computations
        .iter()
        .find(|c| c.instructions.iter().any(|x| std::ptr::eq(x, i)))?;
    i.operands
        .iter()
        .map(|o| c.instructions.get(o.index())?.shape.as_array().cloned())
        .collect()
}

/// `dynamic-slice` and `dynamic-update-slice` with s8 or s16 start
/// indices: each start is read as unsigned (a negative start becomes
/// large and clamps to the last window instead of the first).
fn narrow_start_unsigned(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let first_index = match i.opcode {
            Opcode::DynamicSlice => 1,
            Opcode::DynamicUpdateSlice => 2,
            _ => return None,
        };
        let shapes = operand_shapes(m, i)?;
        let narrow = |t: ElementType| matches!(t, ElementType::S8 | ElementType::S16);
        if !shapes[first_index..].iter().any(|a| narrow(a.dtype)) {
            return None;
        }
        let mut body = String::new();
        let mut args = Vec::new();
        for (k, a) in shapes.iter().enumerate() {
            body += &format!("  p{k} = {} parameter({k})\n", type_text(a));
            if k < first_index || !narrow(a.dtype) {
                args.push(format!("p{k}"));
                continue;
            }
            let u = if a.dtype == ElementType::S8 {
                "u8"
            } else {
                "u16"
            };
            body +=
                &format!("  u{k} = {u}[] bitcast-convert(p{k})\n  w{k} = s32[] convert(u{k})\n");
            args.push(format!("w{k}"));
        }
        let sizes = match &i.attrs.dynamic_slice_sizes {
            Some(v) if i.opcode == Opcode::DynamicSlice => format!(
                ", dynamic_slice_sizes={{{}}}",
                v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            ),
            _ => String::new(),
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n{body}  ROOT r = {} {}({}){sizes}\n}}\n",
            type_text(i.shape.as_array()?),
            i.opcode.name(),
            args.join(", ")
        ))
    })
}

/// True when `m` has an f8 reduce whose trailing reduced dimensions (the
/// longest run of reduced dimensions at the end of the operand's) hold
/// more than 16 elements, not a multiple of 16 (measured on 22 one-op
/// reduces, docs/findings.md: `f8e4m3fn[17]` .. `[23]`, `[24]`, `[33]`,
/// `[40]`, `[3,8]` all, `[3,20]` over 1 rejected; `[16]`, `[32]`, `[48]`,
/// `[64]`, `[24,2]` over 0, `[20,3]` over 1 accepted).
fn has_rejected_f8_reduce(m: &Module) -> bool {
    any_instruction(m, |i, x| {
        if !matches!(x.dtype, ElementType::F8E4M3Fn | ElementType::F8E5M2) {
            return false;
        }
        // per operand dimension: whether the op reduces all of it
        let reduced: Vec<bool> = match (i.opcode, &i.attrs.dimensions, &i.attrs.window) {
            (Opcode::Reduce, Some(dims), _) => (0..x.dims.len())
                .map(|d| dims.contains(&(d as i64)))
                .collect(),
            // a reduce-window whose windows cover whole dimensions (and are
            // 1 elsewhere) is that reduce (measured: `[3,20]` window `1x20`
            // is rejected, `[6,5]` window `4x5` is not)
            (Opcode::ReduceWindow, _, Some(window)) if window.len() == x.dims.len() => {
                let plain = |w: &crate::hlo::WindowDim| {
                    w.pad_low == 0
                        && w.pad_high == 0
                        && w.base_dilation == 1
                        && w.window_dilation == 1
                };
                if !window
                    .iter()
                    .zip(&x.dims)
                    .all(|(w, &n)| plain(w) && (w.size == n || (w.size == 1 && w.stride == 1)))
                {
                    return false;
                }
                window
                    .iter()
                    .zip(&x.dims)
                    .map(|(w, &n)| w.size == n)
                    .collect()
            }
            _ => return false,
        };
        // the trailing run of reduced dimensions (unit dimensions skipped)
        let tail: i64 = (0..x.dims.len())
            .rev()
            .filter(|&d| x.dims[d] != 1)
            .take_while(|&d| reduced[d])
            .map(|d| x.dims[d])
            .product();
        tail > 16 && tail % 16 != 0
    })
}

/// For a root `sort` with `is_stable=true`: per output, the positions of
/// the sorted result that belong to a run of elements the comparator ties
/// (neither `cmp(a, b)` nor `cmp(b, a)` on neighbours of the reference's
/// sorted result). An unstable sort can only permute within such a run.
fn stable_sort_ties(m: &Module, inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    if root.opcode != Opcode::Sort || !root.attrs.is_stable {
        return None;
    }
    let dim = usize::try_from(*root.attrs.dimensions.as_ref()?.first()?).ok()?;
    let mut comparator = m.clone();
    comparator.entry = root.attrs.to_apply?;
    let sorted = crate::reference::evaluate(m, inputs).ok()?;
    let dims = sorted.first()?.dims().to_vec();
    let (len, total) = (*dims.get(dim)?, sorted[0].element_count());
    let stride: usize = dims[dim + 1..].iter().product();
    let bits: Vec<Vec<u64>> = sorted.iter().map(Literal::to_bits_vec).collect();
    let scalar = |k: usize, at: usize| {
        Literal::from_bits(&ArrayShape::new(sorted[k].dtype(), vec![]), &[bits[k][at]]).ok()
    };
    let less = |a: usize, b: usize| -> Option<bool> {
        let args = (0..sorted.len())
            .flat_map(|k| [scalar(k, a), scalar(k, b)])
            .collect::<Option<Vec<_>>>()?;
        let out = crate::reference::evaluate(&comparator, &args).ok()?;
        Some(out.first()?.get_bits(0) != 0)
    };
    let mut tied = vec![false; total];
    for base in (0..total).filter(|f| (f / stride.max(1)).is_multiple_of(len.max(1))) {
        for j in 0..len.saturating_sub(1) {
            let (a, b) = (base + j * stride, base + (j + 1) * stride);
            if !less(a, b)? && !less(b, a)? {
                tied[a] = true;
                tied[b] = true;
            }
        }
    }
    tied.contains(&true).then(|| vec![tied; sorted.len()])
}

/// True when `m` has a dot whose contracting dimensions hold no element and
/// whose result is not empty: iree-compile dies of SIGFPE on it (measured
/// on f32, f16, s32, s8 dots, docs/findings.md).
fn has_empty_contraction_dot(m: &Module) -> bool {
    any_instruction(m, |i, lhs| {
        let (Opcode::Dot, Some(d), Some(out)) =
            (i.opcode, i.attrs.dot_dims.as_ref(), i.shape.as_array())
        else {
            return false;
        };
        let contracted: Option<i64> = d
            .lhs_contracting
            .iter()
            .map(|&k| {
                usize::try_from(k)
                    .ok()
                    .and_then(|k| lhs.dims.get(k).copied())
            })
            .product();
        contracted == Some(0) && out.element_count() != Some(0)
    })
}

/// bf16/f32 `floor`: a negative subnormal input is returned as it is.
fn floor_bf16_subnormal(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Floor, &[ElementType::Bf16, ElementType::F32])?;
        let t = type_text(&a);
        let f = with_dtype(&a, ElementType::F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             z = f32[] constant(0)\n  zb = {f} broadcast(z), dimensions={{}}\n  \
             mn = f32[] constant(-1.1754943508222875e-38)\n  mnb = {f} broadcast(mn), dimensions={{}}\n  \
             lo = {p} compare(xf, mnb), direction=GT\n  hi = {p} compare(xf, zb), direction=LT\n  \
             sub = {p} and(lo, hi)\n  fl = {t} floor(x)\n  ROOT r = {t} select(sub, x, fl)\n}}\n"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    fn eval(m: &Module, t: ElementType, bits: &[u64]) -> Vec<u64> {
        let x = Literal::from_bits(&ArrayShape::new(t, vec![bits.len() as i64]), bits).unwrap();
        crate::reference::evaluate(m, &[x]).unwrap()[0].to_bits_vec()
    }

    fn unary(op: &str, t: &str, out: &str) -> Module {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  ROOT y = {out}[3] {op}(x)\n}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn the_models_compute_what_iree_computes() {
        let m = CBRT_INF.model.apply(&unary("cbrt", "f32", "f32")).unwrap();
        let y = eval(
            &m,
            ElementType::F32,
            &[0x7f80_0000, 0xff80_0000, 0x4100_0000],
        );
        assert!(y[0] & 0x7f_ffff != 0 && y[1] & 0x7f_ffff != 0, "{y:x?}");
        assert_eq!(y[2], 0x4000_0000);

        let m = F8E4M3FN_IS_FINITE
            .model
            .apply(&unary("is-finite", "f8e4m3fn", "pred"))
            .unwrap();
        assert_eq!(
            eval(&m, ElementType::F8E4M3Fn, &[0, 0x38, 0x7f]),
            vec![0, 0, 0]
        );
        assert!(F8E4M3FN_IS_FINITE
            .model
            .apply(&unary("is-finite", "f16", "pred"))
            .is_none());

        let m = FLOOR_BF16_SUBNORMAL
            .model
            .apply(&unary("floor", "bf16", "bf16"))
            .unwrap();
        assert_eq!(
            eval(&m, ElementType::Bf16, &[0x8001, 0x0001, 0xbfc0]),
            vec![0x8001, 0x0000, 0xc000]
        );
        assert!(FLOOR_BF16_SUBNORMAL
            .model
            .apply(&unary("floor", "f16", "f16"))
            .is_none());
    }

    fn binary(op: &str, t: &str) -> Module {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {t}[4] parameter(0)\n  y = {t}[4] parameter(1)\n  \
             ROOT z = {t}[4] {op}(x, y)\n}}\n"
        ))
        .unwrap()
    }

    fn eval2(m: &Module, t: ElementType, x: &[f64], y: &[f64]) -> Vec<f64> {
        let s = ArrayShape::new(t, vec![x.len() as i64]);
        let x = Literal::from_f64s(&s, x).unwrap();
        let y = Literal::from_f64s(&s, y).unwrap();
        crate::reference::evaluate(m, &[x, y]).unwrap_or_else(|e| panic!("{e}"))[0].to_f64_vec()
    }

    /// The values measured on iree-cpu (docs/findings.md).
    #[test]
    fn the_power_atan2_and_expm1_models_compute_what_iree_computes() {
        let m = POWER_EXP_LOG.model.apply(&binary("power", "f32")).unwrap();
        let y = eval2(
            &m,
            ElementType::F32,
            &[-2.0, 1.0, -0.0, 0.5],
            &[1.0, f64::INFINITY, 3.0, 2.0],
        );
        assert!(y[0].is_nan() && y[1].is_nan(), "{y:?}");
        assert_eq!(y[2].to_bits(), 0, "pow(-0, 3) is +0 on iree: {y:?}");
        assert_eq!(y[3], 0.25);
        let m = POWER_EXP_LOG
            .model
            .apply(&binary("power", "f8e4m3fn"))
            .unwrap();
        let y = eval2(
            &m,
            ElementType::F8E4M3Fn,
            &[3.0, 2.0, -1.0, 0.5],
            &[3.0, 0.0, 2.0, 2.0],
        );
        assert!(y[2].is_nan(), "{y:?}");
        assert_eq!(
            (y[0], y[1], y[3]),
            (32.0, 1.0, 0.25),
            "pow(3, 3) is 32 in f8e4m3fn on iree"
        );
        assert!(POWER_EXP_LOG.model.apply(&binary("power", "s32")).is_none());

        let m = INT_POWER_LOW_6_BITS
            .model
            .apply(&binary("power", "s8"))
            .unwrap();
        let y = eval2(
            &m,
            ElementType::S8,
            &[46.0, 3.0, -2.0, 2.0],
            &[71.0, 5.0, 7.0, 9.0],
        );
        assert_eq!(y, vec![-128.0, -13.0, -128.0, 0.0]);

        let m = ATAN2_ZERO_INF.model.apply(&binary("atan2", "f16")).unwrap();
        let inf = f64::INFINITY;
        let y = eval2(
            &m,
            ElementType::F16,
            &[0.0, inf, 1.0, -0.0],
            &[-0.0, -inf, -0.0, -1.0],
        );
        assert!(y[0].is_nan() && y[1].is_nan(), "{y:?}");
        assert!((y[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-3, "{y:?}");
        // atan2(-0, -1): +pi on iree, -pi in IEEE
        assert!((y[3] - std::f64::consts::PI).abs() < 1e-2, "{y:?}");
        let y = eval2(
            &ATAN2_ZERO_INF.model.apply(&binary("atan2", "f32")).unwrap(),
            ElementType::F32,
            &[-1e-45, -2.5, 3.0, -1.0],
            &[0.0, -inf, 4.0, -1.0],
        );
        assert!(y[0].is_nan(), "a flushed subnormal and 0: {y:?}");
        assert!((y[1] - std::f64::consts::PI).abs() < 1e-6, "{y:?}");
        assert!((y[2] - 0.6435011087932844).abs() < 1e-6, "{y:?}");
        assert!(
            (y[3] + 3.0 * std::f64::consts::FRAC_PI_4).abs() < 1e-6,
            "{y:?}"
        );

        let m = F64_EXPM1
            .model
            .apply(&unary("exponential-minus-one", "f64", "f64"))
            .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F64, vec![3]),
            &[-0.0, 1e-10, 0.5],
        )
        .unwrap();
        let y = crate::reference::evaluate(&m, &[x]).unwrap()[0].to_f64_vec();
        assert_eq!(y[0].to_bits(), 0, "expm1(-0) is +0 on iree");
        assert_eq!(y[1], 1.000000082740371e-10);
        assert_eq!(y[2], 0.6487212707001282);
        let m = F8_ROUND_UP_TO_MIN_NORMAL
            .model
            .apply(&unary("convert", "f32", "f8e4m3fn"))
            .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![3]),
            &[-0.0155, 7.4 / 512.0, 0.0158],
        )
        .unwrap();
        let y = crate::reference::evaluate(&m, &[x]).unwrap()[0].to_bits_vec();
        assert_eq!(y, vec![0x80, 0x07, 0x08], "measured on iree-cpu");
        assert!(F8_ROUND_UP_TO_MIN_NORMAL
            .model
            .apply(&unary("convert", "f16", "f8e4m3fn"))
            .is_none());
        let m = F64_LOG1P
            .model
            .apply(&unary("log-plus-one", "f64", "f64"))
            .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F64, vec![3]),
            &[-0.0, 1e-10, 0.5],
        )
        .unwrap();
        let y = crate::reference::evaluate(&m, &[x]).unwrap()[0].to_f64_vec();
        assert_eq!(y[0].to_bits(), 0, "log1p(-0) is +0 on iree");
        assert_eq!(y[1], 1.000000082690371e-10);
        assert_eq!(y[2], 0.4054651081081644);
        assert!(F64_EXPM1
            .model
            .apply(&unary("exponential-minus-one", "f32", "f32"))
            .is_none());
    }

    #[test]
    fn an_out_of_range_gather_row_may_be_anything_and_an_in_range_row_must_be_right() {
        use crate::check::{judge_against_reference, Numerics, Verdict};
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = f32[4,3] parameter(0)\n  i = s32[4,1] parameter(1)\n  \
             ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
             start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n}\n",
        )
        .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![4, 3]),
            &(1..=12).map(f64::from).collect::<Vec<_>>(),
        )
        .unwrap();
        let i = Literal::from_f64s(
            &ArrayShape::new(ElementType::S32, vec![4, 1]),
            &[-2.0, 0.0, 3.0, 4.0],
        )
        .unwrap();
        let args = [x, i];
        let BugModel::AnyValue(rows) = GATHER_OUT_OF_RANGE_START.model else {
            panic!("an any-value model");
        };
        let rep = |v: bool| std::iter::repeat_n(v, 3);
        let want: Vec<bool> = rep(true)
            .chain(rep(false))
            .chain(rep(false))
            .chain(rep(true))
            .collect();
        assert_eq!(rows(&m, &args), Some(vec![want]));
        let expected = crate::reference::evaluate(&m, &args).unwrap();
        let s = ArrayShape::new(ElementType::F32, vec![4, 3]);
        // as measured: garbage in the out-of-range rows, the in-range rows right
        let iree = Literal::from_f64s(
            &s,
            &[
                0.0, 3.9e-21, 0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 0.0, 0.0, 0.0,
            ],
        )
        .unwrap();
        let n = Numerics::exact();
        let bugs = [GATHER_OUT_OF_RANGE_START];
        let v = judge_against_reference(&m, &args, &expected, &[iree], &n, &bugs, false);
        assert!(matches!(v, Verdict::KnownBug { .. }), "{v}");
        // a wrong value in an in-range row is not the bug
        let wrong = Literal::from_f64s(
            &s,
            &[
                0.0, 0.0, 0.0, 1.0, 2.0, 3.5, 10.0, 11.0, 12.0, 0.0, 0.0, 0.0,
            ],
        )
        .unwrap();
        let v = judge_against_reference(&m, &args, &expected, &[wrong], &n, &bugs, false);
        assert!(matches!(v, Verdict::Mismatch(_)), "{v}");
        // in-range starts only: nothing to excuse
        let j = Literal::from_f64s(
            &ArrayShape::new(ElementType::S32, vec![4, 1]),
            &[0.0, 1.0, 2.0, 3.0],
        )
        .unwrap();
        assert_eq!(rows(&m, &[args[0].clone(), j]), None);
    }

    #[test]
    fn the_sine_and_f8_nan_models_compute_what_iree_computes() {
        // sine(-0) = +0, other inputs the exact sine
        let m = SINE_OF_MINUS_ZERO
            .model
            .apply(&unary("sine", "f32", "f32"))
            .unwrap();
        let y = eval(&m, ElementType::F32, &[0x8000_0000, 0, 0x3f00_0000]);
        assert_eq!(y, vec![0, 0, 0x3ef5_7744]);
        assert!(SINE_OF_MINUS_ZERO
            .model
            .apply(&unary("cosine", "f32", "f32"))
            .is_none());
        // f8e4m3fn -NaN (0xff) counts as -480: exp = 0, tanh = -1, +NaN stays NaN
        let m = F8E4M3FN_MINUS_NAN
            .model
            .apply(&unary("exponential", "f8e4m3fn", "f8e4m3fn"))
            .unwrap();
        let y = eval(&m, ElementType::F8E4M3Fn, &[0xff, 0x7f, 0x00]);
        assert_eq!((y[0], y[1] & 0x7f, y[2]), (0x00, 0x7f, 0x38));
        let m = F8E4M3FN_MINUS_NAN
            .model
            .apply(&unary("tanh", "f8e4m3fn", "f8e4m3fn"))
            .unwrap();
        assert_eq!(
            eval(&m, ElementType::F8E4M3Fn, &[0xff, 0xff, 0x00])[0],
            0xb8
        );
        assert!(F8E4M3FN_MINUS_NAN
            .model
            .apply(&unary("tanh", "f8e5m2", "f8e5m2"))
            .is_none());
        // the range bug: every element of an f16/bf16/f32 sine output, nothing else
        let BugModel::AnyValue(masks) = SINE_RANGE.model else {
            panic!("an any-value model");
        };
        assert_eq!(
            masks(&unary("tan", "bf16", "bf16"), &[]),
            Some(vec![vec![true; 3]])
        );
        assert_eq!(masks(&unary("sine", "f64", "f64"), &[]), None);
        assert_eq!(masks(&unary("sine", "f8e4m3fn", "f8e4m3fn"), &[]), None);
        assert_eq!(masks(&unary("exponential", "f32", "f32"), &[]), None);
    }

    #[test]
    fn the_f8e4m3fn_logistic_model_is_nan_where_exp_overflows() {
        let m = F8E4M3FN_LOGISTIC_NAN
            .model
            .apply(&unary("logistic", "f8e4m3fn", "f8e4m3fn"))
            .unwrap();
        // -6 (0xcc): exp(6) = 403 fits; -6.5 (0xcd): exp(6.5) = 665 does not; -NaN
        let y = eval(&m, ElementType::F8E4M3Fn, &[0xcc, 0xcd, 0xff]);
        assert_eq!(y[0], 0x01, "{y:x?}");
        assert_eq!((y[1] & 0x7f, y[2] & 0x7f), (0x7f, 0x7f), "{y:x?}");
    }

    #[test]
    fn the_power_and_atan2_models_flush_subnormals_first() {
        let binary = |op: &str| {
            parse_module(&format!(
                "HloModule m\nENTRY e {{\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n  \
                 ROOT r = f32[2] {op}(x, y)\n}}\n"
            ))
            .unwrap()
        };
        let f32s =
            |b: &[u64]| Literal::from_bits(&ArrayShape::new(ElementType::F32, vec![2]), b).unwrap();
        // pow(-0, -2^-149): exp(-0 * log(-0)) = NaN; pow(2, 3) = exp(3 log 2)
        let m = POWER_EXP_LOG.model.apply(&binary("power")).unwrap();
        let args = [
            f32s(&[0x8000_0000, 0x4000_0000]),
            f32s(&[0x8000_0001, 0x4040_0000]),
        ];
        let y = crate::reference::evaluate(&m, &args).unwrap()[0].to_f64_vec();
        assert!(y[0].is_nan() && (y[1] - 8.0).abs() < 1e-5, "{y:?}");
        // atan2(-min_normal, -2.5): the quotient is flushed, so +pi
        let m = ATAN2_ZERO_INF.model.apply(&binary("atan2")).unwrap();
        let args = [
            f32s(&[0x8080_0000, 0x3f80_0000]),
            f32s(&[0xc020_0000, 0x3f80_0000]),
        ];
        let y = crate::reference::evaluate(&m, &args).unwrap()[0].to_bits_vec();
        assert_eq!(y[0], 0x4049_0fdb, "{y:x?}");
    }

    #[test]
    fn f8_tan_of_the_smallest_normal_is_zero_as_its_sine() {
        let m = F8_ROUND_UP_TO_MIN_NORMAL
            .model
            .apply(&unary("tan", "f8e4m3fn", "f8e4m3fn"))
            .unwrap();
        // tan(+-2^-6) = +-0 (measured), tan(1) = 1.5
        let y = eval(&m, ElementType::F8E4M3Fn, &[0x08, 0x88, 0x38]);
        assert_eq!(y, vec![0x00, 0x80, 0x3c]);
    }

    #[test]
    fn the_rejection_rules_match_what_was_measured() {
        let m = |text: &str| parse_module(text).unwrap();
        let dot = |a: &str, b: &str, o: &str| {
            m(&format!(
                "HloModule m\nENTRY e {{\n  a = f32[{a}] parameter(0)\n  b = f32[{b}] parameter(1)\n  \
                 ROOT d = f32[{o}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n"
            ))
        };
        assert!(has_empty_contraction_dot(&dot("2,0", "0,1", "2,1")));
        assert!(!has_empty_contraction_dot(&dot("0,2", "2,3", "0,3")));
        assert!(!has_empty_contraction_dot(&dot("0,0", "0,3", "0,3")));
        let reduce = |t: &str, dims: &str, over: &str, out: &str| {
            m(&format!(
                "HloModule m\nr {{\n  a = {t}[] parameter(0)\n  c = {t}[] parameter(1)\n  \
                 ROOT s = {t}[] add(a, c)\n}}\nENTRY e {{\n  x = {t}[{dims}] parameter(0)\n  \
                 z = {t}[] constant(0)\n  ROOT y = {t}[{out}] reduce(x, z), dimensions={{{over}}}, to_apply=r\n}}\n"
            ))
        };
        assert!(has_rejected_f8_reduce(&reduce("f8e4m3fn", "24", "0", "")));
        assert!(has_rejected_f8_reduce(&reduce("f8e5m2", "3,20", "1", "3")));
        assert!(has_rejected_f8_reduce(&reduce(
            "f8e4m3fn", "2,3,4", "0,1,2", ""
        )));
        assert!(!has_rejected_f8_reduce(&reduce("f8e4m3fn", "32", "0", "")));
        assert!(!has_rejected_f8_reduce(&reduce(
            "f8e4m3fn", "24,2", "0", "2"
        )));
        assert!(!has_rejected_f8_reduce(&reduce(
            "f8e4m3fn", "20,3", "1", "20"
        )));
        assert!(!has_rejected_f8_reduce(&reduce("f16", "24", "0", "")));
        let window = |dims: &str, win: &str, out: &str| {
            m(&format!(
                "HloModule m\nr {{\n  a = f8e5m2[] parameter(0)\n  c = f8e5m2[] parameter(1)\n  \
                 ROOT s = f8e5m2[] add(a, c)\n}}\nENTRY e {{\n  x = f8e5m2[{dims}] parameter(0)\n  \
                 z = f8e5m2[] constant(0)\n  ROOT y = f8e5m2[{out}] reduce-window(x, z), window={{size={win}}}, to_apply=r\n}}\n"
            ))
        };
        assert!(has_rejected_f8_reduce(&window("4,5", "4x5", "1,1")));
        assert!(has_rejected_f8_reduce(&window("3,20", "1x20", "3,1")));
        assert!(!has_rejected_f8_reduce(&window("4,4", "4x4", "1,1")));
        assert!(!has_rejected_f8_reduce(&window("6,5", "4x5", "3,1")));
        assert!(!has_rejected_f8_reduce(&window("20,3", "20x1", "1,3")));
    }

    #[test]
    fn the_narrow_start_model_reads_s8_and_s16_starts_as_unsigned() {
        let dus = |t: &str| {
            parse_module(&format!(
                "HloModule m\nENTRY e {{\n  x = f32[6] parameter(0)\n  u = f32[2] parameter(1)\n  \
                 i = {t}[] parameter(2)\n  ROOT d = f32[6] dynamic-update-slice(x, u, i)\n}}\n"
            ))
            .unwrap()
        };
        assert!(NARROW_START_UNSIGNED.model.apply(&dus("s32")).is_none());
        assert!(NARROW_START_UNSIGNED.model.apply(&dus("u8")).is_none());
        for (t, minus_one) in [("s8", 0xff), ("s16", 0xffff)] {
            let model = NARROW_START_UNSIGNED.model.apply(&dus(t)).unwrap();
            let f32s = |v: &[f64]| {
                Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v)
                    .unwrap()
            };
            let idx = |bits: u64| {
                let dtype = if t == "s8" {
                    ElementType::S8
                } else {
                    ElementType::S16
                };
                Literal::from_bits(&ArrayShape::new(dtype, vec![]), &[bits]).unwrap()
            };
            let x = f32s(&[0.0; 6]);
            let u = f32s(&[1.0, 2.0]);
            let run = |start: u64| {
                crate::reference::evaluate(&model, &[x.clone(), u.clone(), idx(start)]).unwrap()[0]
                    .to_f64_vec()
            };
            // -1 is read as 255 (65535): the update lands at the end
            assert_eq!(run(minus_one), [0.0, 0.0, 0.0, 0.0, 1.0, 2.0]);
            // a non-negative start is unchanged
            assert_eq!(run(1), [0.0, 1.0, 2.0, 0.0, 0.0, 0.0]);
        }
    }

    #[test]
    fn an_unstable_sort_may_permute_tied_keys_only() {
        use crate::check::{judge_against_reference, Numerics, Verdict};
        let m = parse_module(
            "HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  \
             ROOT lt = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  k = f32[4] parameter(0)\n  \
             v = s32[4] parameter(1)\n  ROOT s = (f32[4], s32[4]) sort(k, v), dimensions={0}, \
             is_stable=true, to_apply=cmp\n}\n",
        )
        .unwrap();
        let f32s = |v: &[f64]| Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![4]), v);
        let s32s = |v: &[f64]| Literal::from_f64s(&ArrayShape::new(ElementType::S32, vec![4]), v);
        let args = [
            f32s(&[0.0, 0.0, -1.0, 0.0]).unwrap(),
            s32s(&[1.0, 2.0, 3.0, 4.0]).unwrap(),
        ];
        let BugModel::AnyValue(ties) = SORT_UNSTABLE.model else {
            panic!("an any-value model");
        };
        let tied = vec![false, true, true, true];
        assert_eq!(ties(&m, &args), Some(vec![tied.clone(), tied]));
        let expected = crate::reference::evaluate(&m, &args).unwrap();
        let keys = f32s(&[-1.0, 0.0, 0.0, 0.0]).unwrap();
        let n = Numerics::exact();
        let bugs = [SORT_UNSTABLE];
        let judge = |values: &[f64]| {
            let out = [keys.clone(), s32s(values).unwrap()];
            judge_against_reference(&m, &args, &expected, &out, &n, &bugs, false)
        };
        // as measured: the tied values in another order
        assert!(matches!(
            judge(&[3.0, 2.0, 4.0, 1.0]),
            Verdict::KnownBug { .. }
        ));
        // the untied position must be right
        assert!(matches!(judge(&[2.0, 3.0, 4.0, 1.0]), Verdict::Mismatch(_)));
        // distinct keys: nothing to excuse
        let distinct = [f32s(&[2.0, 0.0, -1.0, 1.0]).unwrap(), args[1].clone()];
        assert_eq!(ties(&m, &distinct), None);
    }

    #[test]
    fn the_round_up_model_covers_f8_contractions() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = f8e4m3fn[1,1] parameter(0)\n  y = f8e4m3fn[1,2] parameter(1)\n  \
             ROOT d = f8e4m3fn[1,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        )
        .unwrap();
        let model = F8_ROUND_UP_TO_MIN_NORMAL.model.apply(&m).unwrap();
        let f8 = |dims: Vec<i64>, bits: &[u64]| {
            Literal::from_bits(&ArrayShape::new(ElementType::F8E4M3Fn, dims), bits).unwrap()
        };
        // 0.125 * [15/128, 1]: 15 * 2^-10 rounds up to 2^-6 (0x08, the
        // reference); iree-cpu gives 0 (measured), as the model does
        let args = [f8(vec![1, 1], &[0x20]), f8(vec![1, 2], &[0x1f, 0x38])];
        let exact = crate::reference::evaluate(&m, &args).unwrap()[0].to_bits_vec();
        assert_eq!(exact, [0x08, 0x20]);
        let y = crate::reference::evaluate(&model, &args).unwrap()[0].to_bits_vec();
        assert_eq!(y, [0x00, 0x20]);
    }
}
