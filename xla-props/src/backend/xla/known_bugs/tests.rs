//! Each model, evaluated by the reference, gives exactly what XLA CPU was
//! measured to return (docs/findings.md), and leaves other ops and dtypes alone.

use super::*;
use crate::hlo::parse_module;
use crate::literal::Literal;

/// `ROOT r = T OP(x, y)` of two parameters, or `OP(x)` of one (also used by
/// `property`'s known-bug tests).
pub(crate) fn module(op: &str, t: &str, binary: bool) -> Module {
    let text = if binary {
        format!("HloModule m\n\nENTRY main {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  ROOT r = {t} {op}(x, y)\n}}\n")
    } else {
        format!(
            "HloModule m\n\nENTRY main {{\n  x = {t} parameter(0)\n  ROOT r = {t} {op}(x)\n}}\n"
        )
    };
    parse_module(&text).unwrap()
}

/// Asserts that `bug`'s model does not apply to `m`.
fn leaves_alone(bug: &KnownBug, m: &Module) {
    assert!(bug.model.apply(m).is_none());
}

fn bits(t: ElementType, v: &[u64]) -> Literal {
    Literal::from_bits(&ArrayShape::new(t, vec![v.len() as i64]), v).unwrap()
}

fn ints(t: ElementType, v: &[i128]) -> Literal {
    Literal::from_i128s(&ArrayShape::new(t, vec![v.len() as i64]), v).unwrap()
}

fn model_of(bug: &KnownBug, m: &Module, args: &[Literal]) -> Vec<u64> {
    let v = bug.model.apply(m).expect("the model applies");
    crate::reference::evaluate(&v, args).unwrap()[0].to_bits_vec()
}

#[test]
fn integer_power_model_matches_xla_cpu() {
    use ElementType::*;
    // measured on xla-cpu 0.115 and 0.81 (base, exponent, result)
    let s8 = module("power", "s8[7]", true);
    let x = ints(S8, &[5, -1, -1, 2, 3, -3, 1]);
    let y = ints(S8, &[100, -3, -128, -1, 64, 65, -5]);
    let want = ints(S8, &[-15, -1, 1, 0, 1, -3, 1]).to_bits_vec();
    assert_eq!(model_of(&INT_POWER_LOW_6_BITS, &s8, &[x, y]), want);
    // u16: 5669^5266 = 5669^(5266 mod 64); an exponent with the top bit set is 0
    let u16m = module("power", "u16[3]", true);
    let x = ints(U16, &[5669, 48305, 3]);
    let y = ints(U16, &[5266, 46723, 10]);
    assert_eq!(
        model_of(&INT_POWER_LOW_6_BITS, &u16m, &[x.clone(), y.clone()]),
        vec![50457, 0, 59049]
    );
    // the exact reference differs (so the model is not the reference)
    let exact = crate::reference::evaluate(&u16m, &[x, y]).unwrap();
    assert_eq!(exact[0].to_bits_vec()[0], 54041);
    // u8 all-ones base with a "negative" exponent: ±1 by parity
    let u8m = module("power", "u8[3]", true);
    let x = ints(U8, &[255, 255, 254]);
    let y = ints(U8, &[253, 128, 249]);
    assert_eq!(
        model_of(&INT_POWER_LOW_6_BITS, &u8m, &[x, y]),
        vec![255, 1, 0]
    );
    // floats are not this bug's
    leaves_alone(&INT_POWER_LOW_6_BITS, &module("power", "f32[2]", true));
}

#[test]
fn unsigned_power_top_bit_model_matches_xla_cpu() {
    use ElementType::*;
    // measured on xla-cpu 0.115: u16[8,8] broadcast(55558) ^ y (docs/findings.md)
    let u16m = parse_module("HloModule m\nENTRY e {\n  s = u16[] parameter(0)\n  x = u16[4] broadcast(s), dimensions={}\n  y = u16[4] parameter(1)\n  ROOT r = u16[4] power(x, y)\n}\n").unwrap();
    let s = Literal::from_i128s(&ArrayShape::new(U16, vec![]), &[55558]).unwrap();
    let y = ints(U16, &[59717, 14529, 13320, 10]);
    let got = model_of(&UNSIGNED_POWER_TOP_BIT, &u16m, &[s, y.clone()]);
    assert_eq!(got, vec![61024, 55558, 41216, 41984]);
    // two parameters keep the negative rule (the other model): not this bug's
    let plain = module("power", "u16[4]", true);
    assert!(UNSIGNED_POWER_TOP_BIT.model.apply(&plain).is_none());
    let x = ints(U16, &[55558, 55558, 55558, 3]);
    // where the other model gives 0 for the top bit
    assert_eq!(model_of(&INT_POWER_LOW_6_BITS, &plain, &[x, y])[0], 0);
    // u64: (2^64 - 2)^(2^64 - 1) takes 63: -2^63
    let u64m = parse_module("HloModule m\nENTRY e {\n  x = u64[2] parameter(0)\n  y = u64[2] parameter(1)\n  s = u64[1] slice(y), slice={[1:2]}\n  z = u64[1] slice(x), slice={[0:1]}\n  ROOT r = u64[1] power(z, s)\n}\n").unwrap();
    let x = ints(U64, &[(1 << 64) - 2, 0]);
    let y = ints(U64, &[0, (1 << 64) - 1]);
    assert_eq!(
        model_of(&UNSIGNED_POWER_TOP_BIT, &u64m, &[x, y]),
        vec![1 << 63]
    );
    // signed types keep the negative rule in every form: not this bug's
    for t in ["s16", "f32"] {
        let m = parse_module(&format!("HloModule m\nENTRY e {{\n  s = {t}[] parameter(0)\n  x = {t}[2] broadcast(s), dimensions={{}}\n  y = {t}[2] parameter(1)\n  ROOT r = {t}[2] power(x, y)\n}}\n")).unwrap();
        assert!(UNSIGNED_POWER_TOP_BIT.model.apply(&m).is_none());
    }
}

#[test]
fn divide_model_multiplies_by_the_rounded_reciprocal_of_constants_and_broadcasts() {
    use ElementType::*;
    let text = |t: &str, y: &str| {
        format!("HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  {y}\n  ROOT r = {t}[3] divide(x, y)\n}}\n")
    };
    // 1/3 rounds in f32, so 3 * (1/3) is not 1 and 10 * (1/3) not 10/3
    let by_const = parse_module(&text(
        "f32",
        "c = f32[] constant(3)\n  y = f32[3] broadcast(c), dimensions={}",
    ))
    .unwrap();
    let x = Literal::from_f64s(&ArrayShape::new(F32, vec![3]), &[3.0, 10.0, 6.0]).unwrap();
    let got = model_of(&DIVIDE_AS_RECIPROCAL, &by_const, std::slice::from_ref(&x));
    let third = 1.0f32 / 3.0;
    let want: Vec<u64> = [3.0f32 * third, 10.0 * third, 6.0 * third]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect();
    assert_eq!(got, want);
    assert_ne!(got[1], (10.0f32 / 3.0).to_bits() as u64);
    // 0.81 too, for a constant divisor; not for a broadcast parameter
    assert_eq!(model_of(&DIVIDE_AS_RECIPROCAL_0_81, &by_const, &[x]), want);
    let by_param = parse_module(&text(
        "f64",
        "s = f64[] parameter(1)\n  y = f64[3] broadcast(s), dimensions={}",
    ))
    .unwrap();
    assert!(DIVIDE_AS_RECIPROCAL.model.apply(&by_param).is_some());
    assert!(DIVIDE_AS_RECIPROCAL_0_81.model.apply(&by_param).is_none());
    // a divisor that is an array parameter, and bf16, divide exactly
    leaves_alone(&DIVIDE_AS_RECIPROCAL, &module("divide", "f32[3]", true));
    let bf16 = parse_module(&text(
        "bf16",
        "c = bf16[] constant(3)\n  y = bf16[3] broadcast(c), dimensions={}",
    ))
    .unwrap();
    assert!(DIVIDE_AS_RECIPROCAL.model.apply(&bf16).is_none());
}

#[test]
fn add_zero_model_keeps_a_negative_zero_and_the_saturating_convolution_clamps() {
    use ElementType::*;
    // measured on both versions: -0 + broadcast(0) is -0 (IEEE: +0)
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  c = f32[] constant(0)\n  z = f32[2] broadcast(c), dimensions={}\n  ROOT r = f32[2] add(z, x)\n}\n").unwrap();
    let x = bits(F32, &[0x8000_0000, 0x3fc0_0000]);
    assert_eq!(
        model_of(&ADD_ZERO_IS_IDENTITY, &m, std::slice::from_ref(&x)),
        vec![0x8000_0000, 0x3fc0_0000]
    );
    assert_eq!(
        crate::reference::evaluate(&m, &[x]).unwrap()[0].to_bits_vec()[0],
        0
    );
    leaves_alone(&ADD_ZERO_IS_IDENTITY, &module("add", "f32[2]", true));
    // measured: s16 1x1 convolution of two constants, 32767*32767 + 1*32767 saturates
    let conv = parse_module("HloModule m\nENTRY e {\n  x = s16[1,2,1,2] constant({{{{32767, 1}}, {{100, -3}}}})\n  w = s16[1,1,2,1] constant({{{{32767}, {32767}}}})\n  ROOT r = s16[1,2,1,1] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n").unwrap();
    let got = model_of(&CONSTANT_INTEGER_CONVOLUTION_SATURATES, &conv, &[]);
    // 32767*32767 + 32767 and 100*32767 - 3*32767 both clamp to 32767
    assert_eq!(got, ints(S16, &[32767, 32767]).to_bits_vec());
    let exact = crate::reference::evaluate(&conv, &[]).unwrap()[0].to_bits_vec();
    assert_ne!(exact, got);
    // a parameter operand is the run-time convolution, which wraps
    let p = parse_module("HloModule m\nENTRY e {\n  x = s16[1,2,1,2] parameter(0)\n  w = s16[1,1,2,1] constant({{{{32767}, {32767}}}})\n  ROOT r = s16[1,2,1,1] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n").unwrap();
    leaves_alone(&CONSTANT_INTEGER_CONVOLUTION_SATURATES, &p);
}

#[test]
fn log_model_gives_ln_2_pow_minus_150_for_positive_subnormals() {
    let m = module("log", "f32[5]", false);
    let x = bits(
        ElementType::F32,
        &[0x1, 0x7f_ffff, 0x8000_0001, 0x80_0000, 0x3f80_0000],
    );
    let got = model_of(&F32_LOG_SUBNORMAL, &m, &[x]);
    assert_eq!(&got[..2], &[0xc2cf_f1b4, 0xc2cf_f1b4]);
    assert!(f32::from_bits(got[2] as u32).is_nan());
    // normals keep the exact log: ln(2^-126), ln(1)
    assert_eq!(&got[3..], &[0xc2ae_ac50, 0]);
    leaves_alone(&F32_LOG_SUBNORMAL, &module("log", "f64[2]", false));
}

#[test]
fn power_model_takes_a_subnormal_base_as_2_pow_minus_150() {
    let m = module("power", "f32[3]", true);
    let x = bits(ElementType::F32, &[0x1, 0x1, 0x4000_0000]);
    let y = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![3]),
        &[0.5, -0.5, 2.0],
    )
    .unwrap();
    // xla-cpu: pow(2^-149, 0.5) = 2^-75 (0x1a000000), pow(2^-149, -0.5) = 2^75
    assert_eq!(
        model_of(&POWER_SUBNORMAL_BASE, &m, &[x, y]),
        vec![0x1a00_0000, 0x6500_0000, 0x4080_0000]
    );
    // bf16: pow(2^-133, 0.5) = 2^-75 (0x1a00)
    let m = module("power", "bf16[1]", true);
    let x = bits(ElementType::Bf16, &[0x0001]);
    let y = bits(ElementType::Bf16, &[0x3f00]);
    assert_eq!(model_of(&POWER_SUBNORMAL_BASE, &m, &[x, y]), vec![0x1a00]);
}

#[test]
fn cbrt_model_gives_the_negative_constant_for_every_subnormal() {
    let m = module("cbrt", "f32[4]", false);
    let x = bits(
        ElementType::F32,
        &[0x1, 0x8040_0000, 0x80_0000, 0x4100_0000],
    );
    assert_eq!(
        model_of(&CBRT_SUBNORMAL, &m, &[x]),
        vec![0xa621_4518, 0xa621_4518, 0x2a80_0000, 0x4000_0000]
    );
    let m = module("cbrt", "bf16[1]", false);
    let x = bits(ElementType::Bf16, &[0x007e]);
    assert_eq!(model_of(&CBRT_SUBNORMAL, &m, &[x]), vec![0xa621]);
}

#[test]
fn cbrt_model_of_0_81_keeps_the_sign() {
    let m = module("cbrt", "f32[3]", false);
    let x = bits(ElementType::F32, &[0x1, 0x8040_0000, 0x4100_0000]);
    assert_eq!(
        model_of(&CBRT_SUBNORMAL_0_81, &m, &[x]),
        vec![0x267f_ffef, 0xa67f_ffef, 0x4000_0000]
    );
    let m = module("cbrt", "bf16[2]", false);
    let x = bits(ElementType::Bf16, &[0x0001, 0x8001]);
    assert_eq!(
        model_of(&CBRT_SUBNORMAL_0_81, &m, &[x]),
        vec![0x2680, 0xa680]
    );
}

#[test]
fn atan2_model_is_nan_only_when_both_operands_are_subnormal() {
    let m = module("atan2", "f32[4]", true);
    let y = bits(ElementType::F32, &[0x1, 0x8000_0001, 0x1, 0x0]);
    let x = bits(ElementType::F32, &[0x1, 0x8000_0001, 0x0, 0x1]);
    let got = model_of(&ATAN2_SUBNORMALS, &m, &[y, x]);
    assert!(f32::from_bits(got[0] as u32).is_nan());
    assert!(f32::from_bits(got[1] as u32).is_nan());
    // atan2(2^-149, 0) = pi/2, atan2(0, 2^-149) = 0: not the bug
    assert_eq!(&got[2..], &[0x3fc9_0fdb, 0]);
    // f64: copysign(pi/2, y) for two subnormals (measured on both versions)
    let m = module("atan2", "f64[3]", true);
    let s = 1u64 << 63;
    let y = bits(ElementType::F64, &[1, s | 1, 1]);
    let x = bits(ElementType::F64, &[s | 1, 1, 0x0010_0000_0000_0000]);
    let got = model_of(&ATAN2_SUBNORMALS, &m, &[y, x]);
    assert_eq!(&got[..2], &[0x3ff9_21fb_5444_2d18, 0xbff9_21fb_5444_2d18]);
    // a normal x: the exact atan2(2^-1074, 2^-1022) = 2^-52
    assert_eq!(got[2], 0x3cb0_0000_0000_0000);
}

#[test]
fn versions_declare_what_was_measured() {
    let ids = |b: &[KnownBug]| b.iter().map(|b| b.id).collect::<Vec<_>>();
    assert_eq!(XLA_CPU_KNOWN_BUGS.len(), 15);
    // the division rewrites were measured on both builds
    assert!(ids(XLA_CPU_KNOWN_BUGS).contains(&DIVISION_REWRITES.id));
    assert!(ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&DIVISION_REWRITES.id));
    assert!(!ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&DIVIDE_AS_RECIPROCAL.id));
    assert!(!ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&UNSIGNED_POWER_TOP_BIT.id));
    assert!(!ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&ATAN2_OF_ONES.id));
    assert!(!ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&F32_LOG_SUBNORMAL.id));
    assert!(!ids(XLA_CPU_0_81_KNOWN_BUGS).contains(&CBRT_SUBNORMAL.id));
    assert!(!ids(XLA_CPU_KNOWN_BUGS).contains(&CBRT_SUBNORMAL_0_81.id));
}

fn conv_case(
    text: &str,
    x: (&[i64], &[f64]),
    w: (&[i64], &[f64]),
    t: ElementType,
) -> (Module, Vec<Literal>) {
    let m = crate::hlo::parse_module(text).unwrap();
    let lit = |(dims, v): (&[i64], &[f64])| {
        Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), v).unwrap()
    };
    (m, vec![lit(x), lit(w)])
}

fn exact_and_modelled(bug: &KnownBug, m: &Module, args: &[Literal]) -> (Vec<f64>, Vec<f64>) {
    let exact = crate::reference::evaluate(m, args).unwrap()[0].to_f64_vec();
    let modelled = bug.model.apply(m).expect("the model applies");
    crate::hlo::verify(&modelled).unwrap();
    let got = crate::reference::evaluate(&modelled, args).unwrap()[0].to_f64_vec();
    (exact, got)
}

fn depthwise(t: &str) -> String {
    format!(
        "HloModule m\nENTRY e {{\n  x = {t}[1,2,2] parameter(0)\n  w = {t}[2,1,2] parameter(1)\n  \
         ROOT c = {t}[1,1,2] convolution(x, w), window={{size=2}}, dim_labels=b0f_0io->b0f, feature_group_count=2\n}}\n"
    )
}

#[test]
fn dense_depthwise_model_leaks_an_f64_infinity_into_the_other_group() {
    // feature 0 sees an inf, feature 1 does not
    let (m, args) = conv_case(
        &depthwise("f64"),
        (&[1, 2, 2], &[f64::INFINITY, 1.0, 2.0, 3.0]),
        (&[2, 1, 2], &[1.0; 4]),
        ElementType::F64,
    );
    let (exact, got) = exact_and_modelled(&DENSE_GROUPED_CONVOLUTION, &m, &args);
    assert_eq!(exact, vec![f64::INFINITY, 4.0]);
    assert_eq!(got[0], f64::INFINITY);
    assert!(got[1].is_nan(), "{got:?}");
}

#[test]
fn dense_depthwise_model_is_only_as_wide_as_measured() {
    // f32 depthwise convolutions are exact on xla-cpu (measured), and so are
    // feature groups of two input features in f64
    let f32_depthwise = crate::hlo::parse_module(&depthwise("f32")).unwrap();
    leaves_alone(&DENSE_GROUPED_CONVOLUTION, &f32_depthwise);
    let two_per_group = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f64[1,2,4] parameter(0)\n  w = f64[2,2,2] parameter(1)\n  \
         ROOT c = f64[1,1,2] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2\n}\n",
    )
    .unwrap();
    leaves_alone(&DENSE_GROUPED_CONVOLUTION, &two_per_group);
}

/// Two batch groups of one image each, two output features per group.
fn batch_groups(t: &str, cout: i64) -> String {
    format!(
        "HloModule m\nENTRY e {{\n  x = {t}[2,2,1] parameter(0)\n  w = {t}[2,1,{cout}] parameter(1)\n  \
         ROOT c = {t}[1,1,{cout}] convolution(x, w), window={{size=2}}, dim_labels=b0f_0io->b0f, batch_group_count=2\n}}\n"
    )
}

#[test]
fn batch_group_model_leaks_a_weight_into_the_same_feature_of_the_other_group() {
    // w[k, 0, o]: feature o = g * 2 + o' of group g; an inf weight of
    // feature 0 (group 0) makes feature 2 (group 1, same o') NaN
    let mut w = [1.0; 8];
    w[0] = f64::INFINITY;
    let (m, args) = conv_case(
        &batch_groups("f32", 4),
        (&[2, 2, 1], &[1.0, 2.0, 5.0, 3.0]),
        (&[2, 1, 4], &w),
        ElementType::F32,
    );
    let (exact, got) = exact_and_modelled(&BATCH_GROUP_DILATION_HOLES, &m, &args);
    assert_eq!(exact, vec![f64::INFINITY, 3.0, 8.0, 8.0]);
    assert_eq!(got[0], f64::INFINITY);
    assert_eq!(got[1], 3.0);
    assert!(got[2].is_nan(), "{got:?}");
    assert_eq!(got[3], 8.0);
}

#[test]
fn batch_group_model_does_not_leak_inputs() {
    // an infinite input of group 0 stays in group 0 (measured)
    let (m, args) = conv_case(
        &batch_groups("f32", 4),
        (&[2, 2, 1], &[f64::INFINITY, 2.0, 5.0, 3.0]),
        (&[2, 1, 4], &[1.0; 8]),
        ElementType::F32,
    );
    let (exact, got) = exact_and_modelled(&BATCH_GROUP_DILATION_HOLES, &m, &args);
    assert_eq!(exact, vec![f64::INFINITY, f64::INFINITY, 8.0, 8.0]);
    assert_eq!(got, exact);
}

#[test]
fn batch_group_model_is_only_as_wide_as_measured() {
    // f64, and one output feature per group, are exact on xla-cpu (measured)
    let f64_groups = crate::hlo::parse_module(&batch_groups("f64", 4)).unwrap();
    leaves_alone(&BATCH_GROUP_DILATION_HOLES, &f64_groups);
    let one_per_group = crate::hlo::parse_module(&batch_groups("f32", 2)).unwrap();
    leaves_alone(&BATCH_GROUP_DILATION_HOLES, &one_per_group);
}

#[test]
fn reduce_precision_model_keeps_nan_without_mantissa_bits() {
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  \
         ROOT r = f32[2] reduce-precision(x), exponent_bits=8, mantissa_bits=0\n}\n",
    )
    .unwrap();
    let x = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2]),
        &[f64::NAN, 3.0],
    )
    .unwrap();
    let exact = crate::reference::evaluate(&m, std::slice::from_ref(&x)).unwrap()[0].to_f64_vec();
    assert_eq!(exact[0], f64::INFINITY);
    let modelled = REDUCE_PRECISION_NAN_WITHOUT_MANTISSA
        .model
        .apply(&m)
        .unwrap();
    let got = crate::reference::evaluate(&modelled, &[x]).unwrap()[0].to_f64_vec();
    assert!(got[0].is_nan());
    assert_eq!(got[1], exact[1]);
}

#[test]
fn atan2_of_ones_accepts_any_value_only_where_x_is_all_ones() {
    let text = |c: &str, x: &str| {
        format!(
            "HloModule m\nENTRY e {{\n  y = f64[64] parameter(0)\n  c = f64[] constant({c})\n  \
             b = f64[64] broadcast(c), dimensions={{}}\n  ROOT r = f64[64] atan2({x})\n}}\n"
        )
    };
    let masks = |t: &str| {
        let m = parse_module(t).unwrap();
        ATAN2_OF_ONES.model.any_value_masks(&m, &[])
    };
    let ones = masks(&text("1", "y, b")).expect("x all ones is the bug");
    assert_eq!(ones, vec![vec![true; 64]]);
    assert!(masks(&text("2.5", "y, b")).is_none(), "x = 2.5 is right");
    assert!(masks(&text("1", "b, y")).is_none(), "y all ones is right");
    let data = crate::backend::xla::config::builtin_backend("xla-cpu")
        .unwrap()
        .known_bugs
        .iter()
        .find(|b| b.id == ATAN2_OF_ONES.id)
        .unwrap();
    let m = parse_module(&text("1", "y, b")).unwrap();
    assert_eq!(data.model.any_value_masks(&m, &[]), Some(ones));
    assert!(data.model.is_any_value() && ATAN2_OF_ONES.model.is_any_value());
}

#[test]
fn division_rewrite_models_compute_the_rewritten_formulas() {
    use ElementType::*;
    let chain = |inner: &str, outer: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  \
             c = f32[2] parameter(2)\n  {inner}\n  ROOT r = f32[2] {outer}\n}}\n"
        ))
        .unwrap()
    };
    let f = |v: &[f64]| Literal::from_f64s(&ArrayShape::new(F32, vec![v.len() as i64]), v).unwrap();
    // values where the formulas round differently: (1/7)/10 is not
    // 1/(7*10), 7/(10/3) is not (7*3)/10
    let (a, b, c) = (f(&[1.0, 7.0]), f(&[7.0, 10.0]), f(&[10.0, 3.0]));
    let args = [a, b, c];
    let bits32 = |v: &[f32]| v.iter().map(|x| x.to_bits() as u64).collect::<Vec<u64>>();
    // (a / b) / c = a / (b * c)
    let of_div = chain("q = f32[2] divide(a, b)", "divide(q, c)");
    let want = bits32(&[1.0 / (7.0 * 10.0), 7.0 / (10.0 * 3.0)]);
    assert_eq!(model_of(&DIVISION_REWRITES, &of_div, &args), want);
    assert_ne!(want[0], ((1.0f32 / 7.0) / 10.0).to_bits() as u64);
    // a / (b / c) = (a * c) / b
    let by_div = chain("q = f32[2] divide(b, c)", "divide(a, q)");
    let want = bits32(&[(1.0 * 10.0) / 7.0, (7.0 * 3.0) / 10.0]);
    assert_eq!(model_of(&DIVISION_REWRITES, &by_div, &args), want);
    assert_ne!(want[1], (7.0f32 / (10.0 / 3.0)).to_bits() as u64);
    // a / pow(b, c) = a * pow(b, -c)
    // (powers of two, so every step is exact and the model's form shows:
    // pow(2, -7) = 2^-7, pow(4, -3) = 2^-6, times a)
    let by_pow = chain("q = f32[2] power(b, c)", "divide(a, q)");
    let pow_args = [f(&[3.0, 5.0]), f(&[2.0, 4.0]), f(&[7.0, 3.0])];
    let want = bits32(&[3.0 / 128.0, 5.0 / 64.0]);
    assert_eq!(model_of(&DIVISION_REWRITES, &by_pow, &pow_args), want);
    // a / sqrt(b) = a * rsqrt(b): the model holds an rsqrt
    let by_sqrt = chain("q = f32[2] sqrt(b)", "divide(a, q)");
    let m = DIVISION_REWRITES.model.apply(&by_sqrt).unwrap();
    assert!(m
        .computations
        .iter()
        .any(|k| k.instructions.iter().any(|i| i.opcode == Opcode::Rsqrt)));
    // a divide of parameters, or by an op that is not rewritten, is left alone
    leaves_alone(&DIVISION_REWRITES, &module("divide", "f32[3]", true));
    let by_exp = chain("q = f32[2] exponential(b)", "divide(a, q)");
    assert!(DIVISION_REWRITES.model.apply(&by_exp).is_none());
}

#[test]
fn bf16_dot_model_rounds_each_product_and_each_partial_sum_to_bf16() {
    // lhs [1,1,3,1] contracting its dimension 2 (not its last), rhs
    // [1,1,1,3] with batch dimensions {0,2} (not leading): the dot the
    // bug takes. x . y = 1 + 2^-8 + 2^-8, in bf16 from 0 in order: 1, then
    // 1 + 2^-8 rounds (a tie) to 1, and again: 1; the exact sum rounds to
    // 1 + 2^-7.
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = bf16[1,1,3,1] parameter(0)\n  y = bf16[1,1,1,3] parameter(1)\n  \
         ROOT d = bf16[1,1,1,1] dot(x, y), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, \
         rhs_batch_dims={0,2}, rhs_contracting_dims={3}\n}\n",
    )
    .unwrap();
    let t = |dims: Vec<i64>, v: &[f64]| {
        Literal::from_f64s(&ArrayShape::new(ElementType::Bf16, dims), v).unwrap()
    };
    let e = 2f64.powi(-8);
    let args = [
        t(vec![1, 1, 3, 1], &[1.0, e, e]),
        t(vec![1, 1, 1, 3], &[1.0, 1.0, 1.0]),
    ];
    let exact = crate::reference::evaluate(&m, &args).unwrap()[0].get_f64(0);
    assert_eq!(exact, 1.0 + 2f64.powi(-7));
    let v = BF16_DOT_SUMS_IN_BF16
        .model
        .apply(&m)
        .expect("the model applies");
    assert_eq!(
        crate::reference::evaluate(&v, &args).unwrap()[0].get_f64(0),
        1.0
    );
    // the dots XLA sums right: leading rhs batch dimensions, a last lhs
    // contracting dimension, f16, no batch dimensions
    for text in [
        "x = bf16[1,1,3,1] parameter(0)\n  y = bf16[1,1,1,3] parameter(1)\n  ROOT d = bf16[1,1,1,1] dot(x, y), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}",
        "x = bf16[1,1,1,3] parameter(0)\n  y = bf16[1,1,1,3] parameter(1)\n  ROOT d = bf16[1,1,1,1] dot(x, y), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}",
        "x = f16[1,1,3,1] parameter(0)\n  y = f16[1,1,1,3] parameter(1)\n  ROOT d = f16[1,1,1,1] dot(x, y), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}",
        "x = bf16[3,2] parameter(0)\n  y = bf16[3,2] parameter(1)\n  ROOT d = bf16[2,2] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    ] {
        let m = parse_module(&format!("HloModule m\nENTRY e {{\n  {text}\n}}\n")).unwrap();
        leaves_alone(&BF16_DOT_SUMS_IN_BF16, &m);
    }
}
