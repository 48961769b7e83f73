//! The XLA CPU bugs documented in docs/findings.md, declared per plugin
//! version with a model of each: the case's module rewritten (every affected
//! instruction replaced by a call of a small model computation) so that the
//! reference computes what the buggy compiler computes. Each model is only
//! as wide as the measured bug: the versions, dtypes and input classes the
//! findings show.

use crate::check::{
    int_power_low_bits, replace_with_model, type_text, with_dtype, BugModel, KnownBug,
};
use crate::hlo::{ArrayShape, ElementType, Instruction, Module, Opcode};

/// The smallest positive normal f32, 2^-126 (exact in f32 and f64).
const F32_MIN_NORMAL: &str = "1.1754943508222875e-38";

/// Integer `power` with the exponent's low 6 bits (both versions).
pub const INT_POWER_LOW_6_BITS: KnownBug = KnownBug {
    id: "xla-cpu/int-power-low-6-bits",
    summary: "wrapping integer power uses only the low 6 bits of the exponent; an unsigned \
              exponent with its top bit set counts as negative (0 unless the base is 1 or all ones)",
    documented: "docs/findings.md, \"XLA bug: wrapping integer `power` uses only the low 6 bits of the exponent\"",
    model: BugModel::Rust(int_power_low_6_bits),
};

/// Unsigned integer `power` whose exponent has its top bit set takes the
/// exponent's low 6 bits, as for any other exponent, in some operand forms
/// (0.115 only; found by the `operand_forms` property).
pub const UNSIGNED_POWER_TOP_BIT: KnownBug = KnownBug {
    id: "xla-cpu/unsigned-power-top-bit",
    summary: "unsigned integer power whose exponent has its top bit set gives x^(y & 63) wrapped \
              (not the 0 of int-power-low-6-bits' negative rule) in some operand forms: a \
              broadcast base, sliced or reshaped operands, fused or not (u16[8,8] = \
              broadcast(55558) ^ y is 55558^5 = 61024 for y = 59717); two parameters of the \
              same shape keep the negative rule; signed types keep it in every form",
    documented: "docs/findings.md, \"XLA bug: unsigned `power` with the exponent's top bit set \
                 ignores it in some operand forms\"",
    model: BugModel::Rust(unsigned_power_top_bit),
};

fn unsigned_power_top_bit(m: &Module) -> Option<Module> {
    crate::check::apply_model_specs(
        &[crate::check::ModelSpec::UnsignedPowerLowBits { bits: 6 }],
        m,
    )
}

/// f16/f32/f64 `divide` by a constant or a broadcast scalar is a multiply
/// by the rounded reciprocal (0.115; XLA's algebraic simplifier).
pub const DIVIDE_AS_RECIPROCAL: KnownBug = KnownBug {
    id: "xla-cpu/divide-as-reciprocal",
    summary: "f16, f32 and f64 divide(x, y) whose divisor y is a constant array or a broadcast of \
              a scalar (a constant or a parameter) is computed as x * (1/y), two roundings: up to \
              an ulp off the correctly rounded quotient (XLA's algebraic simplifier, `algsimp`); \
              bf16 divides exactly",
    documented: "docs/findings.md, \"XLA bug: divide by a constant or a broadcast scalar is a \
                 multiply by its rounded reciprocal\"",
    model: BugModel::Rust(divide_as_reciprocal),
};

/// The same on 0.81, whose divide by a broadcast parameter is exact.
pub const DIVIDE_AS_RECIPROCAL_0_81: KnownBug = KnownBug {
    id: "xla-cpu-0.81/divide-by-constant-as-reciprocal",
    summary: "f16, f32 and f64 divide(x, y) whose divisor y is a constant array or a broadcast of \
              a scalar constant is computed as x * (1/y), two roundings (a broadcast parameter \
              divides exactly); bf16 divides exactly",
    documented: "docs/findings.md, \"XLA bug: divide by a constant or a broadcast scalar is a \
                 multiply by its rounded reciprocal\"",
    model: BugModel::Rust(divide_by_constant_as_reciprocal),
};

/// Divisions XLA's algebraic simplifier computes by another formula (both
/// versions): `(a / b) / c`, `a / (b / c)`, `a / sqrt(b)`, `a / pow(b, c)`.
pub const DIVISION_REWRITES: KnownBug = KnownBug {
    id: "xla-cpu/division-rewrites",
    summary: "a divide whose operand is another op's result is computed by another formula \
              (XLA's algebraic simplifier): (a / b) / c as a / (b * c), a / (b / c) as \
              (a * c) / b, a / sqrt(b) as a * rsqrt(b), a / pow(b, c) as a * pow(b, -c); \
              one more rounding (and XLA's approximate rsqrt): up to 2 ulp off, and an \
              overflow or underflow of the new product where the quotient is finite",
    documented: "docs/findings.md, \"XLA bug: divisions computed by another formula\"",
    model: BugModel::Rust(division_rewrites),
};

fn division_rewrites(m: &Module) -> Option<Module> {
    use crate::check::{DivisionRewrite as R, ModelSpec};
    let specs: Vec<ModelSpec> = [
        (R::DivideOfDivide, DIVISION_REWRITE_DTYPES),
        (R::DivideByDivide, DIVISION_REWRITE_DTYPES),
        (R::DivideBySqrt, DIVISION_REWRITE_DTYPES),
        (R::DivideByPower, DIVISION_REWRITE_DTYPES),
    ]
    .into_iter()
    .map(|(rewrite, dtypes)| ModelSpec::DivisionRewrite {
        rewrite,
        dtypes: dtypes.to_vec(),
    })
    .collect();
    crate::check::apply_model_specs(&specs, m)
}

const DIVISION_REWRITE_DTYPES: &[ElementType] = &[
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F32,
    ElementType::F64,
];

/// `x + 0` is `x` in f16, bf16, f32 and f64, so -0 + 0 is -0 (both versions;
/// XLA's algebraic simplifier).
pub const ADD_ZERO_IS_IDENTITY: KnownBug = KnownBug {
    id: "xla-cpu/add-zero-keeps-negative-zero",
    summary: "add(x, zeros) and add(zeros, x), where zeros is a constant of zeros or a broadcast \
              of one, is x in f16, bf16, f32 and f64 (XLA's algebraic simplifier, A + 0 => A): -0 + 0 \
              is -0 where IEEE 754 gives +0",
    documented: "docs/findings.md, \"XLA bug: -0 + 0 is -0 when the zero is a constant\"",
    model: BugModel::Rust(add_zero_is_identity),
};

fn add_zero_is_identity(m: &Module) -> Option<Module> {
    use ElementType as T;
    let spec = crate::check::ModelSpec::AddZeroIsIdentity {
        dtypes: vec![T::F16, T::Bf16, T::F32, T::F64],
    };
    crate::check::apply_model_specs(&[spec], m)
}

/// A signed integer convolution of two constants is folded with
/// saturation (both versions; XLA's constant folding).
pub const CONSTANT_INTEGER_CONVOLUTION_SATURATES: KnownBug = KnownBug {
    id: "xla-cpu/constant-integer-convolution-saturates",
    summary: "an s8, s16 or s32 convolution whose operands are both constants (folded at compile \
              time) saturates to the type's range where the same convolution of parameters \
              wraps: the exact sum clamped (s16 32120 + 65536k is -32768 or 32767)",
    documented: "docs/findings.md, \"XLA bug: a constant-folded integer convolution saturates\"",
    model: BugModel::Rust(constant_integer_convolution_saturates),
};

fn constant_integer_convolution_saturates(m: &Module) -> Option<Module> {
    use ElementType as T;
    let spec = crate::check::ModelSpec::ConstantIntegerConvolutionSaturates {
        dtypes: vec![T::S8, T::S16, T::S32],
    };
    crate::check::apply_model_specs(&[spec], m)
}

const RECIPROCAL_DTYPES: [ElementType; 3] = [ElementType::F16, ElementType::F32, ElementType::F64];

fn divide_as_reciprocal(m: &Module) -> Option<Module> {
    let spec = crate::check::ModelSpec::DivideAsReciprocal {
        dtypes: RECIPROCAL_DTYPES.to_vec(),
        broadcast_parameters: true,
    };
    crate::check::apply_model_specs(&[spec], m)
}

fn divide_by_constant_as_reciprocal(m: &Module) -> Option<Module> {
    let spec = crate::check::ModelSpec::DivideAsReciprocal {
        dtypes: RECIPROCAL_DTYPES.to_vec(),
        broadcast_parameters: false,
    };
    crate::check::apply_model_specs(&[spec], m)
}

/// f32 `log` of a positive subnormal is ln(2^-150) (0.115 only).
pub const F32_LOG_SUBNORMAL: KnownBug = KnownBug {
    id: "xla-cpu/f32-log-subnormal",
    summary: "f32 log of a positive subnormal returns ln(2^-150) = -103.97208 in some shapes \
              (f32[7], f32[3,5]; others give the flushed -inf)",
    documented: "docs/findings.md, \"XLA bug: f32 `log` of a subnormal\"",
    model: BugModel::Rust(f32_log_subnormal),
};

/// f32/bf16 `power` with a positive subnormal base computes (2^-150)^y (both versions).
pub const POWER_SUBNORMAL_BASE: KnownBug = KnownBug {
    id: "xla-cpu/power-subnormal-base",
    summary: "f32/bf16 power with a positive subnormal base computes (2^-150)^y, \
              the log-of-subnormal bug inside pow",
    documented: "docs/findings.md, \"XLA bug: f32/bf16 `power` with a subnormal base\"",
    model: BugModel::Rust(power_subnormal_base),
};

/// f32/bf16 `cbrt` of a subnormal is -5.595e-16 (0.115 only).
pub const CBRT_SUBNORMAL: KnownBug = KnownBug {
    id: "xla-cpu/cbrt-subnormal",
    summary: "f32/bf16 cbrt of any subnormal returns the negative constant -5.595e-16 (0xa6214518)",
    documented:
        "docs/findings.md, \"XLA bug: f32 `cbrt` of a subnormal input returns a negative number\"",
    model: BugModel::Rust(cbrt_subnormal),
};

/// f32/bf16 `cbrt` of a subnormal is ±8.88e-16 (0.81 only).
pub const CBRT_SUBNORMAL_0_81: KnownBug = KnownBug {
    id: "xla-cpu-0.81/cbrt-subnormal",
    summary: "f32/bf16 cbrt of any subnormal returns ±8.88e-16 (0x267fffef, about 2^-50) \
              with the input's sign",
    documented:
        "docs/findings.md, \"XLA bug: f32 `cbrt` of a subnormal input returns a negative number\"",
    model: BugModel::Rust(cbrt_subnormal_0_81),
};

/// `atan2` of two subnormals: NaN in f32/bf16, ±pi/2 in f64 (both versions).
pub const ATAN2_SUBNORMALS: KnownBug = KnownBug {
    id: "xla-cpu/atan2-subnormals",
    summary: "atan2(y, x) with both y and x subnormal returns NaN in f32/bf16 and \
              copysign(pi/2, y) in f64 (exact: ±pi/4 or ±3pi/4; flushed: ±0 or ±pi)",
    documented:
        "docs/findings.md, \"XLA bug: `atan2` of two subnormals is NaN (f32, bf16) or ±pi/2 (f64)\"",
    model: BugModel::Rust(atan2_subnormals),
};

/// `reduce-precision` with `mantissa_bits=0` keeps NaN (0.115; found by the
/// `configurations` property's `e1m0`/`e8m0` classes).
pub const REDUCE_PRECISION_NAN_WITHOUT_MANTISSA: KnownBug = KnownBug {
    id: "xla-cpu/reduce-precision-nan-without-mantissa",
    summary: "reduce-precision with mantissa_bits=0 keeps a NaN input NaN (f16, bf16, f32, f64), \
              where XLA's own HloEvaluator gives +inf",
    documented: "docs/findings.md, \"XLA bug: `reduce-precision` with no mantissa bits keeps NaN\"",
    model: BugModel::Rust(reduce_precision_nan_without_mantissa),
};

/// f64 depthwise convolutions computed densely with a block-diagonal kernel
/// (0.115; found by the `configurations` property's `depthwise` class).
pub const DENSE_GROUPED_CONVOLUTION: KnownBug = KnownBug {
    id: "xla-cpu/dense-grouped-convolution",
    summary: "an f64 depthwise convolution (feature groups of one input feature) multiplies the \
              other groups' inputs by zero weights: an infinite or NaN input of one group makes \
              NaN in every group's features at the windows that hold it",
    documented:
        "docs/findings.md, \"XLA bug: grouped convolutions leak other groups' infinities as NaN\"",
    model: BugModel::Rust(dense_depthwise_f64),
};

/// Batch-grouped convolutions multiply the base-dilation holes by the other
/// groups' weights (0.115; found by the `configurations` property's
/// `batch-groups-2` class).
pub const BATCH_GROUP_DILATION_HOLES: KnownBug = KnownBug {
    id: "xla-cpu/batch-group-dilation-holes",
    summary: "a batch-grouped convolution with more than one output feature per group (f32, f16, \
              bf16, f8) multiplies zeros by the other groups' weights: an infinite or NaN weight \
              of output feature g*p+o makes feature j*p+o of every other group j NaN everywhere",
    documented:
        "docs/findings.md, \"XLA bug: grouped convolutions leak other groups' infinities as NaN\"",
    model: BugModel::Rust(batch_group_dilation_holes),
};

/// `atan2(y, x)` with `x` all ones (`jnp.arctan`'s lowering) is wrong in
/// some shapes (0.115 only; found by the `operand_forms` property).
pub const ATAN2_OF_ONES: KnownBug = KnownBug {
    id: "xla-cpu/atan2-of-broadcast-one",
    summary: "atan2(y, x) whose x is all ones (broadcast(constant(1)) or a splat constant 1: \
              what jnp.arctan lowers to), f16, bf16, f32, f64 and f8, is wrong in some shapes: \
              elements out of place, zeros and garbage (f64[64] of y = 1..64 gives \
              atan(5), atan(6), 0, 0, ...; f64[49], [7,9], [5,10], [2,32] are right, [50], \
              [64], [400], [8,8], [4,16], [32,2], [25,2] wrong); any value at every element \
              of such an atan2 that is an output",
    documented: "docs/findings.md, \"XLA bug: `atan2(y, broadcast(1))` (jnp.arctan) is wrong \
                 in some shapes\"",
    model: BugModel::AnyValue(atan2_of_ones_outputs),
};

/// Per output: every element when it is (or is a fusion whose root is) an
/// f16, bf16, f32, f64 or f8 atan2 whose second operand is all ones.
fn atan2_of_ones_outputs(m: &Module, _: &[crate::literal::Literal]) -> Option<Vec<Vec<bool>>> {
    use ElementType as T;
    let measured = [T::F16, T::Bf16, T::F32, T::F64, T::F8E4M3Fn, T::F8E5M2];
    crate::check::operand_is_one_outputs(m, Opcode::Atan2, &measured, 1)
}

fn dense_depthwise_f64(m: &Module) -> Option<Module> {
    crate::check::dense_depthwise_convolutions(m, &[ElementType::F64])
}

fn batch_group_dilation_holes(m: &Module) -> Option<Module> {
    use ElementType as T;
    let measured = [T::F32, T::F16, T::Bf16, T::F8E4M3Fn, T::F8E5M2];
    crate::check::batch_group_dilation_holes(m, &measured)
}

/// A bf16 dot whose lhs contracts a dimension that is not its last and
/// whose rhs batch dimensions are not its leading ones rounds every product
/// to bf16 and sums them in bf16, in contraction order (0.115 only).
pub const BF16_DOT_SUMS_IN_BF16: KnownBug = KnownBug {
    id: "xla-cpu/bf16-dot-sums-in-bf16",
    summary: "a bf16 dot (bf16 operands and result, one contracting dimension each side, \
              batch dimensions) whose lhs contracting dimension is not the lhs's last and \
              whose rhs batch dimensions are not its leading ones in order rounds each product \
              to bf16 and accumulates them in bf16 from 0, in contraction order: an attention \
              `bf16[2,2,8,8] dot`, rhs_batch_dims={0,2}, gives that bit for bit (256 of 256) \
              where 158 differ from the correctly rounded sum; f16, leading rhs batch \
              dimensions, a last lhs contracting dimension and no batch dimensions sum right",
    documented: "docs/findings.md, \"Finding, xla-cpu: a bf16 dot summed in bf16\"",
    model: BugModel::Rust(bf16_dot_sums_in_bf16),
};

fn bf16_dot_sums_in_bf16(m: &Module) -> Option<Module> {
    let spec = crate::check::ModelSpec::DotSumsInDeclaredType {
        dtypes: vec![ElementType::Bf16],
    };
    crate::check::apply_model_specs(&[spec], m)
}

/// The known bugs of `xla-cpu` (PJRT C API 0.115).
pub const XLA_CPU_KNOWN_BUGS: &[KnownBug] = &[
    INT_POWER_LOW_6_BITS,
    F32_LOG_SUBNORMAL,
    POWER_SUBNORMAL_BASE,
    CBRT_SUBNORMAL,
    ATAN2_SUBNORMALS,
    REDUCE_PRECISION_NAN_WITHOUT_MANTISSA,
    DENSE_GROUPED_CONVOLUTION,
    BATCH_GROUP_DILATION_HOLES,
    ATAN2_OF_ONES,
    UNSIGNED_POWER_TOP_BIT,
    DIVIDE_AS_RECIPROCAL,
    ADD_ZERO_IS_IDENTITY,
    CONSTANT_INTEGER_CONVOLUTION_SATURATES,
    DIVISION_REWRITES,
    BF16_DOT_SUMS_IN_BF16,
];

fn reduce_precision_nan_without_mantissa(m: &Module) -> Option<Module> {
    let spec = crate::check::ModelSpec::ReducePrecisionKeepsNan {
        dtypes: vec![
            ElementType::F16,
            ElementType::Bf16,
            ElementType::F32,
            ElementType::F64,
        ],
    };
    crate::check::apply_model_specs(&[spec], m)
}

/// The known bugs of `xla-cpu-0.81` (measured: the integer power, the
/// subnormal-base power and the atan2 bugs, and its own wrong cbrt of
/// subnormals; its log of subnormals is the flushed -inf).
pub const XLA_CPU_0_81_KNOWN_BUGS: &[KnownBug] = &[
    INT_POWER_LOW_6_BITS,
    POWER_SUBNORMAL_BASE,
    CBRT_SUBNORMAL_0_81,
    ATAN2_SUBNORMALS,
    DIVIDE_AS_RECIPROCAL_0_81,
    ADD_ZERO_IS_IDENTITY,
    CONSTANT_INTEGER_CONVOLUTION_SATURATES,
    DIVISION_REWRITES,
];

/// The array type of an instruction whose opcode is `op` and dtype one of `dtypes`.
fn array_of(i: &Instruction, op: Opcode, dtypes: &[ElementType]) -> Option<ArrayShape> {
    let a = i.shape.as_array()?;
    (i.opcode == op && dtypes.contains(&a.dtype)).then(|| a.clone())
}

/// `power(x, y)` on integers as XLA CPU computes it (its EmitIntegerPow):
/// a non-negative exponent (read as signed) gives `x^(y & 63)` wrapped; a
/// negative one gives what the reference gives for a negative exponent of
/// the signed type (1 for base 1, ±1 by parity for base -1, else 0).
pub(crate) fn int_power_low_6_bits(m: &Module) -> Option<Module> {
    const INTS: [ElementType; 8] = [
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
    ];
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Power, &INTS)?;
        int_power_low_bits(&a, 6)
    })
}

/// HLO lines defining `{name} = pred[..]`: `x` (an f32 value named `x`) is a
/// positive subnormal, or (with `either_sign`) any non-zero subnormal.
fn subnormal_test(name: &str, x: &str, a: &ArrayShape, either_sign: bool) -> String {
    let f = with_dtype(a, ElementType::F32);
    let p = with_dtype(a, ElementType::Pred);
    let v = if either_sign {
        format!("  {name}.abs = {f} abs({x})\n")
    } else {
        String::new()
    };
    let src = if either_sign {
        format!("{name}.abs")
    } else {
        x.to_string()
    };
    format!(
        "{v}  {name}.mn = f32[] constant({F32_MIN_NORMAL})\n  {name}.mnb = {f} broadcast({name}.mn), dimensions={{}}\n  \
         {name}.z = f32[] constant(0)\n  {name}.zb = {f} broadcast({name}.z), dimensions={{}}\n  \
         {name}.lo = {p} compare({src}, {name}.zb), direction=GT\n  \
         {name}.hi = {p} compare({src}, {name}.mnb), direction=LT\n  \
         {name} = {p} and({name}.lo, {name}.hi)\n"
    )
}

/// f32 `log`: a positive subnormal gives ln(2^-150) = -103.97208 (0xc2cff1b4).
fn f32_log_subnormal(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Log, &[ElementType::F32])?;
        let t = type_text(&a);
        let test = subnormal_test("sub", "x", &a, false);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  l = {t} log(x)\n{test}  \
             k = f32[] constant(-103.97207641601562)\n  kb = {t} broadcast(k), dimensions={{}}\n  \
             ROOT r = {t} select(sub, kb, l)\n}}\n"
        ))
    })
}

/// f32/bf16 `power`: a positive subnormal base counts as 2^-150 (computed in
/// f64, rounded once to the result type).
fn power_subnormal_base(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Power, &[ElementType::F32, ElementType::Bf16])?;
        let t = type_text(&a);
        let f = with_dtype(&a, ElementType::F32);
        let d = with_dtype(&a, ElementType::F64);
        let test = subnormal_test("sub", "xf", &a, false);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
             xf = {f} convert(x)\n{test}  xd = {d} convert(x)\n  yd = {d} convert(y)\n  \
             k = f64[] constant(7.006492321624085e-46)\n  kb = {d} broadcast(k), dimensions={{}}\n  \
             xm = {d} select(sub, kb, xd)\n  pd = {d} power(xm, yd)\n  ROOT r = {t} convert(pd)\n}}\n"
        ))
    })
}

/// f32/bf16 `cbrt`: any non-zero subnormal gives -5.595e-16 (0xa6214518 in
/// f32, rounded to the result type).
fn cbrt_subnormal(m: &Module) -> Option<Module> {
    cbrt_of_subnormals_is(m, -5.595173541877215e-16, false)
}

/// f32/bf16 `cbrt` on xla-cpu-0.81: any non-zero subnormal gives
/// `sign(x) * 8.881775e-16` (0x267fffef in f32, rounded to the result type).
fn cbrt_subnormal_0_81(m: &Module) -> Option<Module> {
    cbrt_of_subnormals_is(m, 8.881775197276188e-16, true)
}

/// f32/bf16 `cbrt` whose non-zero subnormal inputs give the constant `k`
/// (times `sign(x)` when `signed`), computed in f32 and rounded to the
/// result type; other inputs give `cbrt`.
fn cbrt_of_subnormals_is(m: &Module, k: f64, signed: bool) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Cbrt, &[ElementType::F32, ElementType::Bf16])?;
        let t = type_text(&a);
        let f = with_dtype(&a, ElementType::F32);
        let test = subnormal_test("sub", "xf", &a, true);
        let value = if signed {
            format!("  sg = {f} sign(xf)\n  ks = {f} multiply(sg, kb)\n")
        } else {
            format!("  ks = {f} copy(kb)\n")
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n{test}  \
             c = {f} cbrt(xf)\n  k = f32[] constant({k:?})\n  \
             kb = {f} broadcast(k), dimensions={{}}\n{value}  \
             rf = {f} select(sub, ks, c)\n  ROOT r = {t} convert(rf)\n}}\n"
        ))
    })
}

/// `atan2(y, x)` with both operands non-zero subnormals: NaN in f32/bf16,
/// `copysign(pi/2, y)` in f64.
fn atan2_subnormals(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(
            i,
            Opcode::Atan2,
            &[ElementType::F32, ElementType::Bf16, ElementType::F64],
        )?;
        let t = type_text(&a);
        let p = with_dtype(&a, ElementType::Pred);
        if a.dtype == ElementType::F64 {
            let test = |n: &str, v: &str| {
                format!(
                    "  {n}.a = {t} abs({v})\n  {n}.z = f64[] constant(0)\n  \
                     {n}.zb = {t} broadcast({n}.z), dimensions={{}}\n  \
                     {n}.mn = f64[] constant(2.2250738585072014e-308)\n  \
                     {n}.mnb = {t} broadcast({n}.mn), dimensions={{}}\n  \
                     {n}.lo = {p} compare({n}.a, {n}.zb), direction=GT\n  \
                     {n}.hi = {p} compare({n}.a, {n}.mnb), direction=LT\n  \
                     {n} = {p} and({n}.lo, {n}.hi)\n"
                )
            };
            let (ty, tx) = (test("suby", "y"), test("subx", "x"));
            return Some(format!(
                "HloModule model\n\nENTRY model {{\n  y = {t} parameter(0)\n  x = {t} parameter(1)\n\
                 {ty}{tx}  both = {p} and(suby, subx)\n  at = {t} atan2(y, x)\n  \
                 h = f64[] constant(1.5707963267948966)\n  hb = {t} broadcast(h), dimensions={{}}\n  \
                 sg = {t} sign(y)\n  hs = {t} multiply(sg, hb)\n  \
                 ROOT r = {t} select(both, hs, at)\n}}\n"
            ));
        }
        let f = with_dtype(&a, ElementType::F32);
        let ty = subnormal_test("suby", "yf", &a, true);
        let tx = subnormal_test("subx", "xf", &a, true);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  y = {t} parameter(0)\n  x = {t} parameter(1)\n  \
             yf = {f} convert(y)\n  xf = {f} convert(x)\n{ty}{tx}  both = {p} and(suby, subx)\n  \
             at = {f} atan2(yf, xf)\n  z = f32[] constant(0)\n  nan = f32[] divide(z, z)\n  \
             nanb = {f} broadcast(nan), dimensions={{}}\n  rf = {f} select(both, nanb, at)\n  \
             ROOT r = {t} convert(rf)\n}}\n"
        ))
    })
}

#[cfg(test)]
pub(crate) mod tests;
