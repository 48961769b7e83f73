//! Known-bug models written as data (`xla-props.toml`'s `known_bugs`): a few
//! named kinds of wrong result, each with its parameters, from which the
//! model module the reference evaluates is built. They cover the measured
//! XLA CPU bugs (docs/findings.md); a bug of another shape needs a new kind
//! here, or a Rust model (`BugModel::Rust`).

use serde::{Deserialize, Serialize};

use super::numerics::opcode_by_name;
use crate::hlo::{
    parse_module, ArrayShape, CompId, Computation, ElementType, InstrId, Instruction, Module,
    Opcode,
};

mod rewrites;

use rewrites::{
    add_zero_is_identity, constant_integer_convolution_saturates, divide_as_reciprocal,
    division_rewrite, dot_sums_in_declared_type, unsigned_power_in_forms,
};
pub(crate) use rewrites::{is_all, is_folded_constant};

/// Which subnormal inputs a model applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubnormalSign {
    /// Positive subnormals only.
    Positive,
    /// Any non-zero subnormal.
    Nonzero,
}

/// A division XLA's algebraic simplifier rewrites into another formula
/// (each op of the formula rounded to the type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivisionRewrite {
    /// `(a / b) / c` computed as `a / (b * c)`.
    DivideOfDivide,
    /// `a / (b / c)` computed as `(a * c) / b`.
    DivideByDivide,
    /// `a / sqrt(b)` computed as `a * rsqrt(b)` (the backend's own rsqrt,
    /// within its declared budget: the model is judged by its enclosure).
    DivideBySqrt,
    /// `a / power(b, c)` computed as `a * power(b, -c)`.
    DivideByPower,
}

/// One kind of wrong result, with its parameters.
///
/// ```
/// use xla_props::check::ModelSpec;
/// let spec: ModelSpec = serde_json::from_str(r#"{"kind": "integer-power-low-bits", "bits": 6}"#).unwrap();
/// assert_eq!(spec, ModelSpec::IntegerPowerLowBits { bits: 6 });
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ModelSpec {
    /// Integer `power` uses only the low `bits` bits of the exponent (a
    /// non-negative exponent read as signed); a negative exponent, read as
    /// the signed type of the same width, gives what the reference gives for
    /// it (1 for base 1, ±1 by parity for base -1, else 0).
    IntegerPowerLowBits {
        /// How many low exponent bits count (1 to 63).
        bits: u32,
    },
    /// Unsigned integer `power` with an operand that is neither a parameter
    /// nor a constant (a broadcast, slice, reshape, ...) uses only the low
    /// `bits` bits of the exponent, whatever its top bit: no exponent counts
    /// as negative (what xla-cpu 0.115 computes in those operand forms).
    UnsignedPowerLowBits {
        /// How many low exponent bits count (1 to 63).
        bits: u32,
    },
    /// `op` at one of `dtypes` whose operands are all subnormal (as `inputs`
    /// says) gives the constant `value` (times the sign of operand
    /// `times_sign_of` when given). Computed in f32 (f64 for f64) and
    /// rounded to the result type; other elements give `op` computed so.
    SubnormalInputsGive {
        /// The opcode, by its HLO name.
        #[serde(with = "opcode_by_name")]
        op: Opcode,
        /// The result types it applies to.
        dtypes: Vec<ElementType>,
        /// Which subnormals.
        inputs: SubnormalSign,
        /// The wrong result (`nan` and `inf` allowed).
        value: f64,
        /// The operand whose sign the result takes.
        #[serde(default)]
        times_sign_of: Option<usize>,
    },
    /// Operand `operand` of `op` at one of `dtypes`, when subnormal (as
    /// `inputs` says, tested in f32; f64 for f64), counts as `value`; the op
    /// is computed in f64 and rounded once to the result type.
    SubnormalOperandIs {
        /// The opcode, by its HLO name.
        #[serde(with = "opcode_by_name")]
        op: Opcode,
        /// The result types it applies to.
        dtypes: Vec<ElementType>,
        /// Which operand.
        operand: usize,
        /// Which subnormals.
        inputs: SubnormalSign,
        /// What the operand counts as.
        value: f64,
    },
    /// `reduce-precision` with `mantissa_bits=0` at one of `dtypes` keeps a
    /// NaN input NaN (the reference, like XLA's HloEvaluator, gives +inf:
    /// no mantissa bit is left to mark a NaN); other elements as the reference.
    ReducePrecisionKeepsNan {
        /// The operand types it applies to.
        dtypes: Vec<ElementType>,
    },
    /// `divide(x, y)` at one of `dtypes` whose divisor is a constant array
    /// or a broadcast of a scalar constant (with `broadcast_parameters`, of
    /// any scalar) is `x * (1 / y)`, each rounded to the type.
    DivideAsReciprocal {
        /// The types it applies to.
        dtypes: Vec<ElementType>,
        /// Whether a broadcast of a scalar that is not a constant counts.
        #[serde(default)]
        broadcast_parameters: bool,
    },
    /// `add(x, zeros)` or `add(zeros, x)` at one of `dtypes`, where `zeros`
    /// is a constant of zeros or a broadcast of one, is `x` (so -0 + 0 is
    /// -0, where IEEE gives +0).
    AddZeroIsIdentity {
        /// The types it applies to.
        dtypes: Vec<ElementType>,
    },
    /// `rewrite` at one of `dtypes`: a division whose operand is another op's
    /// result computed by another formula (XLA's algebraic simplifier).
    DivisionRewrite {
        /// Which division.
        rewrite: DivisionRewrite,
        /// The types it applies to.
        dtypes: Vec<ElementType>,
    },
    /// An integer `convolution` at one of `dtypes` whose operands are both
    /// constants (constants, iotas, or broadcasts or reshapes of them) is
    /// folded at compile time: the exact sum, saturated to the type's range
    /// (where the run-time convolution wraps).
    ConstantIntegerConvolutionSaturates {
        /// The types it applies to.
        dtypes: Vec<ElementType>,
    },
    /// A depthwise convolution (feature groups of one input feature each)
    /// at one of `dtypes` computed as one dense convolution with a
    /// block-diagonal kernel (`check::dense_depthwise_convolutions`).
    DenseGroupedConvolution {
        /// The types it applies to (operands and result alike).
        dtypes: Vec<ElementType>,
    },
    /// A dot at one of `dtypes` (operands and result) with batch
    /// dimensions and one contracting dimension each side, whose lhs
    /// contracting dimension is not the lhs's last and whose rhs batch
    /// dimensions are not its leading ones in order: every product rounded
    /// to the type and summed in it from 0, in contraction order
    /// (`xla-cpu/bf16-dot-sums-in-bf16`).
    DotSumsInDeclaredType {
        /// The types it applies to.
        dtypes: Vec<ElementType>,
    },
    /// A batch-grouped convolution with more than one output feature per
    /// group at one of `dtypes`: NaN at every position of an output feature
    /// whose counterpart in another group has an infinite or NaN weight
    /// (`check::batch_group_dilation_holes`).
    BatchGroupDilationHoles {
        /// The types it applies to (operands and result alike).
        dtypes: Vec<ElementType>,
    },
    /// `op` at one of `dtypes` whose operand `operand` is all ones (a splat
    /// constant 1 or a broadcast of one) may give any value at every element
    /// of an output it is (or the root of an output fusion): wrong values
    /// that depend on the shape in ways no model was measured for
    /// (`xla-cpu/atan2-of-broadcast-one`). Not a rewrite: the judge accepts
    /// any value there (`BugModel::any_value_masks`).
    AnyValueWhereOperandIsOne {
        /// The opcode, by its HLO name.
        #[serde(with = "opcode_by_name")]
        op: Opcode,
        /// The result types it applies to.
        dtypes: Vec<ElementType>,
        /// Which operand is all ones.
        operand: usize,
    },
}

impl ModelSpec {
    /// Why the spec cannot be used, or None.
    pub fn validate(&self) -> Option<String> {
        match self {
            ModelSpec::IntegerPowerLowBits { bits } | ModelSpec::UnsignedPowerLowBits { bits } => {
                (!(1..=63).contains(bits)).then(|| format!("bits must be 1 to 63, not {bits}"))
            }
            ModelSpec::SubnormalInputsGive {
                op,
                dtypes,
                times_sign_of,
                ..
            } => float_op_problem(*op, dtypes, times_sign_of.unwrap_or(0)),
            ModelSpec::SubnormalOperandIs {
                op,
                dtypes,
                operand,
                ..
            } => float_op_problem(*op, dtypes, *operand),
            ModelSpec::AnyValueWhereOperandIsOne {
                op,
                dtypes,
                operand,
            } => match operand_count(*op) {
                Some(n) if *operand < n => dtypes
                    .iter()
                    .find(|t| !t.is_float())
                    .map(|t| format!("dtype {t} is not a float type"))
                    .or_else(|| dtypes.is_empty().then(|| "dtypes is empty".to_string())),
                _ => Some(format!("`{}` has no operand {operand}", op.name())),
            },
            ModelSpec::ConstantIntegerConvolutionSaturates { dtypes } => dtypes
                .iter()
                .find(|t| !t.is_signed_int() || t.bit_width() > 32)
                .map(|t| format!("dtype {t} is not s8, s16 or s32"))
                .or_else(|| dtypes.is_empty().then(|| "dtypes is empty".to_string())),
            ModelSpec::ReducePrecisionKeepsNan { dtypes }
            | ModelSpec::DenseGroupedConvolution { dtypes }
            | ModelSpec::DotSumsInDeclaredType { dtypes }
            | ModelSpec::DivideAsReciprocal { dtypes, .. }
            | ModelSpec::DivisionRewrite { dtypes, .. }
            | ModelSpec::AddZeroIsIdentity { dtypes }
            | ModelSpec::BatchGroupDilationHoles { dtypes } => dtypes
                .iter()
                .find(|t| !t.is_float())
                .map(|t| format!("dtype {t} is not a float type"))
                .or_else(|| dtypes.is_empty().then(|| "dtypes is empty".to_string())),
        }
    }

    /// The HLO text of the model computation for `i`, or None when the spec
    /// does not apply to it.
    fn template(&self, i: &Instruction) -> Option<String> {
        let a = i.shape.as_array()?;
        if i.operands.len() != operand_count(i.opcode)? {
            return None;
        }
        match self {
            ModelSpec::IntegerPowerLowBits { bits } => (i.opcode == Opcode::Power
                && a.dtype.is_integer())
            .then(|| int_power_low_bits(a, *bits))?,
            ModelSpec::SubnormalInputsGive {
                op,
                dtypes,
                inputs,
                value,
                times_sign_of,
            } => (i.opcode == *op && dtypes.contains(&a.dtype))
                .then(|| subnormal_inputs_give(*op, a, *inputs, *value, *times_sign_of))?,
            ModelSpec::SubnormalOperandIs {
                op,
                dtypes,
                operand,
                inputs,
                value,
            } => (i.opcode == *op && dtypes.contains(&a.dtype))
                .then(|| subnormal_operand_is(*op, a, *operand, *inputs, *value))?,
            ModelSpec::ReducePrecisionKeepsNan { dtypes } => (i.opcode == Opcode::ReducePrecision
                && i.attrs.mantissa_bits == Some(0)
                && dtypes.contains(&a.dtype))
            .then(|| reduce_precision_keeps_nan(a, i.attrs.exponent_bits.unwrap_or(1)))
            .flatten(),
            // IR rewrites, applied by `apply_model_specs`; any value: masks
            ModelSpec::DenseGroupedConvolution { .. }
            | ModelSpec::DotSumsInDeclaredType { .. }
            | ModelSpec::BatchGroupDilationHoles { .. }
            | ModelSpec::DivideAsReciprocal { .. }
            | ModelSpec::DivisionRewrite { .. }
            | ModelSpec::AddZeroIsIdentity { .. }
            | ModelSpec::UnsignedPowerLowBits { .. }
            | ModelSpec::ConstantIntegerConvolutionSaturates { .. }
            | ModelSpec::AnyValueWhereOperandIsOne { .. } => None,
        }
    }
}

/// The module with every instruction some spec applies to replaced by its
/// model (the first spec that applies wins); None when none applies.
pub fn apply_model_specs(specs: &[ModelSpec], m: &Module) -> Option<Module> {
    // the module-wide rewrites first, each on the previous one's result
    let mut rewritten: Option<Module> = None;
    for s in specs {
        let base = rewritten.as_ref().unwrap_or(m);
        let next = match s {
            ModelSpec::DenseGroupedConvolution { dtypes } => {
                super::dense_depthwise_convolutions(base, dtypes)
            }
            ModelSpec::BatchGroupDilationHoles { dtypes } => {
                super::batch_group_dilation_holes(base, dtypes)
            }
            ModelSpec::DivideAsReciprocal {
                dtypes,
                broadcast_parameters,
            } => divide_as_reciprocal(base, dtypes, *broadcast_parameters),
            ModelSpec::AddZeroIsIdentity { dtypes } => add_zero_is_identity(base, dtypes),
            ModelSpec::DotSumsInDeclaredType { dtypes } => dot_sums_in_declared_type(base, dtypes),
            ModelSpec::DivisionRewrite { rewrite, dtypes } => {
                division_rewrite(base, *rewrite, dtypes)
            }
            ModelSpec::UnsignedPowerLowBits { bits } => unsigned_power_in_forms(base, *bits),
            ModelSpec::ConstantIntegerConvolutionSaturates { dtypes } => {
                constant_integer_convolution_saturates(base, dtypes)
            }
            _ => None,
        };
        if next.is_some() {
            rewritten = next;
        }
    }
    let base = rewritten.as_ref().unwrap_or(m);
    replace_with_model(base, &|i| specs.iter().find_map(|s| s.template(i))).or(rewritten)
}

/// `reduce-precision(x)` with no mantissa bits, NaN kept: `select(x != x, x, rp(x))`.
fn reduce_precision_keeps_nan(a: &ArrayShape, exponent_bits: i64) -> Option<String> {
    // NaN as the round-and-mask rule reads the bits (an all-ones exponent
    // and a nonzero mantissa): for IEEE types exactly `x != x`; f8e4m3fn's
    // finite 0x79..0x7e too (iree-cpu keeps them, docs/findings.md)
    let fmt = a.dtype.float_format()?;
    let (seb, smb) = (fmt.exponent_bits, fmt.mantissa_bits);
    let ut = ElementType::unsigned_of_width(1 + seb + smb)?;
    let magnitude = u64::MAX >> (64 - seb - smb);
    let exp_mask = ((1u64 << seb) - 1) << smb;
    let (t, u, p) = (
        type_text(a),
        with_dtype(a, ut),
        with_dtype(a, ElementType::Pred),
    );
    Some(format!(
        "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  \
         r = {t} reduce-precision(x), exponent_bits={exponent_bits}, mantissa_bits=0\n  \
         b = {u} bitcast-convert(x)\n  am = {ut}[] constant({magnitude})\n  \
         amb = {u} broadcast(am), dimensions={{}}\n  mag = {u} and(b, amb)\n  \
         em = {ut}[] constant({exp_mask})\n  emb = {u} broadcast(em), dimensions={{}}\n  \
         nan = {p} compare(mag, emb), direction=GT\n  ROOT o = {t} select(nan, x, r)\n}}\n"
    ))
}

/// Elementwise ops of fixed arity (the only ones the float kinds model).
fn operand_count(op: Opcode) -> Option<usize> {
    match op.arity() {
        crate::hlo::Arity::Fixed(n) => Some(n),
        crate::hlo::Arity::AtLeast(_) => None,
    }
}

fn float_op_problem(op: Opcode, dtypes: &[ElementType], operand: usize) -> Option<String> {
    let Some(n) = operand_count(op).filter(|n| (1..=2).contains(n)) else {
        return Some(format!("`{}` is not a unary or binary op", op.name()));
    };
    if operand >= n {
        return Some(format!("`{}` has no operand {operand}", op.name()));
    }
    if let Some(t) = dtypes
        .iter()
        .find(|t| !matches!(t, ElementType::F32 | ElementType::Bf16 | ElementType::F64))
    {
        return Some(format!(
            "dtype {t} is not bf16, f32 or f64 (subnormals are tested in f32 or f64)"
        ));
    }
    dtypes.is_empty().then(|| "dtypes is empty".to_string())
}

/// The same dims with another dtype.
pub(crate) fn with_dtype(a: &ArrayShape, t: ElementType) -> String {
    type_text(&ArrayShape::new(t, a.dims.clone()))
}

/// The type a float model computes in: f64 for f64, else f32.
fn compute_type(t: ElementType) -> ElementType {
    if t == ElementType::F64 {
        ElementType::F64
    } else {
        ElementType::F32
    }
}

/// An HLO scalar constant of type `t` named `name` (NaN and infinities by division).
fn constant(name: &str, t: ElementType, v: f64) -> String {
    if v.is_finite() {
        return format!("  {name} = {t}[] constant({v:?})\n");
    }
    let num = if v.is_nan() { 0.0 } else { v.signum() };
    format!(
        "  {name}.n = {t}[] constant({num:?})\n  {name}.d = {t}[] constant(0)\n  \
         {name} = {t}[] divide({name}.n, {name}.d)\n"
    )
}

/// Lines defining `{name} = pred[..]`: `x` (of the compute type `c`) is a subnormal as `sign` says.
fn subnormal_test(
    name: &str,
    x: &str,
    a: &ArrayShape,
    c: ElementType,
    sign: SubnormalSign,
) -> String {
    let f = with_dtype(a, c);
    let p = with_dtype(a, ElementType::Pred);
    let min_normal = if c == ElementType::F64 {
        f64::MIN_POSITIVE
    } else {
        f32::MIN_POSITIVE as f64
    };
    let (pre, src) = match sign {
        SubnormalSign::Positive => (String::new(), x.to_string()),
        SubnormalSign::Nonzero => (
            format!("  {name}.abs = {f} abs({x})\n"),
            format!("{name}.abs"),
        ),
    };
    format!(
        "{pre}  {name}.mn = {c}[] constant({min_normal:?})\n  {name}.mnb = {f} broadcast({name}.mn), dimensions={{}}\n  \
         {name}.z = {c}[] constant(0)\n  {name}.zb = {f} broadcast({name}.z), dimensions={{}}\n  \
         {name}.lo = {p} compare({src}, {name}.zb), direction=GT\n  \
         {name}.hi = {p} compare({src}, {name}.mnb), direction=LT\n  \
         {name} = {p} and({name}.lo, {name}.hi)\n"
    )
}

fn parameters(a: &ArrayShape, n: usize, c: ElementType) -> String {
    let t = type_text(a);
    let f = with_dtype(a, c);
    (0..n)
        .map(|k| format!("  p{k} = {t} parameter({k})\n  c{k} = {f} convert(p{k})\n"))
        .collect()
}

fn subnormal_inputs_give(
    op: Opcode,
    a: &ArrayShape,
    sign: SubnormalSign,
    value: f64,
    times_sign_of: Option<usize>,
) -> Option<String> {
    let n = operand_count(op)?;
    let c = compute_type(a.dtype);
    let (t, f, p) = (
        type_text(a),
        with_dtype(a, c),
        with_dtype(a, ElementType::Pred),
    );
    let mut body = parameters(a, n, c);
    for k in 0..n {
        body.push_str(&subnormal_test(
            &format!("s{k}"),
            &format!("c{k}"),
            a,
            c,
            sign,
        ));
    }
    body.push_str("  all0 = ");
    body.push_str(&format!("{p} and(s0, s0)\n"));
    for k in 1..n {
        body.push_str(&format!("  all{k} = {p} and(all{}, s{k})\n", k - 1));
    }
    let args: Vec<String> = (0..n).map(|k| format!("c{k}")).collect();
    body.push_str(&format!("  v = {f} {}({})\n", op.name(), args.join(", ")));
    body.push_str(&constant("k", c, value));
    body.push_str(&format!("  kb = {f} broadcast(k), dimensions={{}}\n"));
    match times_sign_of {
        Some(j) => body.push_str(&format!(
            "  sg = {f} sign(c{j})\n  ks = {f} multiply(sg, kb)\n"
        )),
        None => body.push_str(&format!("  ks = {f} copy(kb)\n")),
    }
    Some(format!(
        "HloModule model\n\nENTRY model {{\n{body}  rc = {f} select(all{}, ks, v)\n  ROOT r = {t} convert(rc)\n}}\n",
        n - 1
    ))
}

fn subnormal_operand_is(
    op: Opcode,
    a: &ArrayShape,
    operand: usize,
    sign: SubnormalSign,
    value: f64,
) -> Option<String> {
    let n = operand_count(op)?;
    let c = compute_type(a.dtype);
    let t = type_text(a);
    let d = with_dtype(a, ElementType::F64);
    let mut body = parameters(a, n, c);
    body.push_str(&subnormal_test("sub", &format!("c{operand}"), a, c, sign));
    for k in 0..n {
        body.push_str(&format!("  d{k} = {d} convert(p{k})\n"));
    }
    body.push_str(&constant("k", ElementType::F64, value));
    body.push_str(&format!(
        "  kb = {d} broadcast(k), dimensions={{}}\n  m{operand} = {d} select(sub, kb, d{operand})\n"
    ));
    let args: Vec<String> = (0..n)
        .map(|k| {
            if k == operand {
                format!("m{k}")
            } else {
                format!("d{k}")
            }
        })
        .collect();
    Some(format!(
        "HloModule model\n\nENTRY model {{\n{body}  v = {d} {}({})\n  ROOT r = {t} convert(v)\n}}\n",
        op.name(),
        args.join(", ")
    ))
}

/// The signed integer type of the same width.
fn signed_of(t: ElementType) -> Option<ElementType> {
    Some(match t.bit_width() {
        8 => ElementType::S8,
        16 => ElementType::S16,
        32 => ElementType::S32,
        64 => ElementType::S64,
        _ => return None,
    })
}

/// `power(x, y)` on integers with the exponent's low `bits` bits when it is
/// non-negative (read as signed), the signed type's power when negative.
pub(crate) fn int_power_low_bits(a: &ArrayShape, bits: u32) -> Option<String> {
    let t = type_text(a);
    let ss = signed_of(a.dtype)?;
    let s = with_dtype(a, ss);
    let p = with_dtype(a, ElementType::Pred);
    let ts = a.dtype;
    let mask = (1u64 << bits.min(63)) - 1;
    Some(format!(
        "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
         c = {ts}[] constant({mask})\n  cb = {t} broadcast(c), dimensions={{}}\n  \
         low = {t} and(y, cb)\n  pos = {t} power(x, low)\n  \
         xs = {s} bitcast-convert(x)\n  ys = {s} bitcast-convert(y)\n  \
         negs = {s} power(xs, ys)\n  neg = {t} bitcast-convert(negs)\n  \
         z = {ss}[] constant(0)\n  zb = {s} broadcast(z), dimensions={{}}\n  \
         isneg = {p} compare(ys, zb), direction=LT\n  \
         ROOT r = {t} select(isneg, neg, pos)\n}}\n"
    ))
}

/// The text of an array type without layout: `f32[3,5]`, `s8[]`.
pub fn type_text(a: &ArrayShape) -> String {
    let dims: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype, dims.join(","))
}

/// The module with every instruction `select` picks replaced by a call of a
/// model computation: `template` gets the instruction and returns the text of an HLO module whose
/// entry computation has one parameter per operand and the instruction's
/// result type, or None to leave the instruction alone. None when nothing
/// was replaced or a template does not parse.
///
/// ```
/// use xla_props::check::replace_with_model;
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n").unwrap();
/// let v = replace_with_model(&m, &|i| {
///     (i.opcode == Opcode::Negate).then(|| "HloModule t\nENTRY t {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] abs(x)\n}\n".to_string())
/// }).unwrap();
/// assert_eq!(v.computations.len(), 2);
/// ```
pub fn replace_with_model(
    module: &Module,
    template: &dyn Fn(&Instruction) -> Option<String>,
) -> Option<Module> {
    replace_with_model_of(module, &|_, i| template(i).map(|t| (t, i.operands.clone())))
}

/// A model's text and the call's operands for an instruction of a
/// computation, or None to leave it alone ([`replace_with_model_of`]).
pub type ModelTemplate<'a> =
    dyn Fn(&Computation, &Instruction) -> Option<(String, Vec<InstrId>)> + 'a;

/// [`replace_with_model`] for a model that reads other values than the
/// instruction's operands: `template` gets the instruction's computation
/// too and returns the model's text and the call's operands (one per
/// parameter of the model), e.g. an operand's operand to model a backend
/// that skips a step.
///
/// ```
/// use xla_props::check::replace_with_model_of;
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[2] negate(x)\n  ROOT y = f32[2] abs(n)\n}\n").unwrap();
/// // abs(negate(x)) modelled as abs skipping the negate: a call of copy on x
/// let v = replace_with_model_of(&m, &|c, i| {
///     let n = c.instructions.get(i.operands.first()?.index())?;
///     (i.opcode == Opcode::Abs && n.opcode == Opcode::Negate).then(|| {
///         ("HloModule t\nENTRY t {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] copy(x)\n}\n".to_string(), n.operands.clone())
///     })
/// }).unwrap();
/// let y = &v.computations[0].instructions[2];
/// assert_eq!((y.opcode, y.operands[0].index()), (Opcode::Call, 0));
/// ```
pub fn replace_with_model_of(module: &Module, template: &ModelTemplate<'_>) -> Option<Module> {
    let mut m = module.clone();
    let mut any = false;
    for (ci, c) in module.computations.iter().enumerate() {
        for (k, instr) in c.instructions.iter().enumerate() {
            let Some((text, operands)) = template(c, instr) else {
                continue;
            };
            let t = parse_module(&text).ok()?;
            if t.computations.len() != 1 {
                return None;
            }
            let mut comp = t.computations.into_iter().next()?;
            comp.name = format!("{}.known_bug_model", instr.name);
            m.computations.push(comp);
            let id = CompId(m.computations.len() as u32 - 1);
            let call = &mut m.computations[ci].instructions[k];
            call.become_op(Opcode::Call, operands);
            call.attrs.to_apply = Some(id);
            any = true;
        }
    }
    any.then_some(m)
}
