use super::*;
use crate::hlo::{parse_module, ArrayShape, Module};
use crate::literal::Literal;

fn eval(m: &Module, t: ElementType, bits: &[u64]) -> Vec<u64> {
    let x = Literal::from_bits(&ArrayShape::new(t, vec![bits.len() as i64]), bits).unwrap();
    crate::reference::evaluate(m, &[x]).unwrap()[0].to_bits_vec()
}

/// `bug`'s model of the unary `op` from `t` to `out` evaluated by the
/// reference on one argument of type `t` holding `values`.
fn modelled(bug: &KnownBug, (op, t, out): (&str, &str, &str), values: &[f64]) -> Literal {
    let model = applied(bug, &unary(op, t, out));
    let dtype: ElementType = t.parse().unwrap();
    let x = Literal::from_f64s(&ArrayShape::new(dtype, vec![values.len() as i64]), values).unwrap();
    crate::reference::evaluate(&model, &[x]).unwrap().remove(0)
}

/// Like [`modelled`], on an argument holding the `bits`: the output's bits.
fn modelled_bits(bug: &KnownBug, (op, t, out): (&str, &str, &str), bits: &[u64]) -> Vec<u64> {
    eval(&applied(bug, &unary(op, t, out)), t.parse().unwrap(), bits)
}

fn unary(op: &str, t: &str, out: &str) -> Module {
    parse_module(&format!(
        "HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  ROOT y = {out}[3] {op}(x)\n}}\n"
    ))
    .unwrap()
}

/// `bug`'s model applied to `m`, which it must apply to.
fn applied(bug: &KnownBug, m: &Module) -> Module {
    bug.model.apply(m).expect("the model applies")
}

/// Asserts that `bug`'s model does not apply to `m`.
fn leaves_alone(bug: &KnownBug, m: &Module) {
    assert!(bug.model.apply(m).is_none());
}

#[test]
fn the_models_compute_what_iree_computes() {
    let m = applied(&CBRT_INF, &unary("cbrt", "f32", "f32"));
    let y = eval(
        &m,
        ElementType::F32,
        &[0x7f80_0000, 0xff80_0000, 0x4100_0000],
    );
    assert!(y[0] & 0x7f_ffff != 0 && y[1] & 0x7f_ffff != 0, "{y:x?}");
    assert_eq!(y[2], 0x4000_0000);

    let m = applied(&F8E4M3FN_IS_FINITE, &unary("is-finite", "f8e4m3fn", "pred"));
    assert_eq!(
        eval(&m, ElementType::F8E4M3Fn, &[0, 0x38, 0x7f]),
        vec![0, 0, 0]
    );
    leaves_alone(&F8E4M3FN_IS_FINITE, &unary("is-finite", "f16", "pred"));

    let m = applied(&FLOOR_BF16_SUBNORMAL, &unary("floor", "bf16", "bf16"));
    assert_eq!(
        eval(&m, ElementType::Bf16, &[0x8001, 0x0001, 0xbfc0]),
        vec![0x8001, 0x0000, 0xc000]
    );
    leaves_alone(&FLOOR_BF16_SUBNORMAL, &unary("floor", "f16", "f16"));
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
    let m = applied(&POWER_EXP_LOG, &binary("power", "f32"));
    let y = eval2(
        &m,
        ElementType::F32,
        &[-2.0, 1.0, -0.0, 0.5],
        &[1.0, f64::INFINITY, 3.0, 2.0],
    );
    assert!(y[0].is_nan() && y[1].is_nan(), "{y:?}");
    assert_eq!(y[2].to_bits(), 0, "pow(-0, 3) is +0 on iree: {y:?}");
    assert_eq!(y[3], 0.25);
    let m = applied(&POWER_EXP_LOG, &binary("power", "f8e4m3fn"));
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
    leaves_alone(&POWER_EXP_LOG, &binary("power", "s32"));

    let m = applied(&INT_POWER_LOW_6_BITS, &binary("power", "s8"));
    let y = eval2(
        &m,
        ElementType::S8,
        &[46.0, 3.0, -2.0, 2.0],
        &[71.0, 5.0, 7.0, 9.0],
    );
    assert_eq!(y, vec![-128.0, -13.0, -128.0, 0.0]);

    let m = applied(&ATAN2_ZERO_INF, &binary("atan2", "f16"));
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
    // f16 subnormals are normal in f32, where IREE computes: not flushed
    // (measured: atan2(-0, -2^-24) = +pi, atan2(2^-24, 2^-24) = pi/4)
    let tiny = 2f64.powi(-24);
    let y = eval2(
        &m,
        ElementType::F16,
        &[-0.0, tiny, tiny, -0.0],
        &[-tiny, tiny, 0.0, 0.0],
    );
    assert!((y[0] - std::f64::consts::PI).abs() < 1e-2, "{y:?}");
    assert!((y[1] - std::f64::consts::FRAC_PI_4).abs() < 1e-3, "{y:?}");
    assert!((y[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-3, "{y:?}");
    assert!(y[3].is_nan(), "{y:?}");
    let y = eval2(
        &applied(&ATAN2_ZERO_INF, &binary("atan2", "f32")),
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

    // expm1 and log1p of f64: -0 is +0 on iree, and the small and the
    // moderate value as measured
    for (bug, op, small, moderate) in [
        (
            &F64_EXPM1,
            "exponential-minus-one",
            1.000000082740371e-10,
            0.6487212707001282,
        ),
        (
            &F64_LOG1P,
            "log-plus-one",
            1.000000082690371e-10,
            0.4054651081081644,
        ),
    ] {
        let y = modelled(bug, (op, "f64", "f64"), &[-0.0, 1e-10, 0.5]).to_f64_vec();
        assert_eq!(y[0].to_bits(), 0, "{op}(-0) is +0 on iree");
        assert_eq!((y[1], y[2]), (small, moderate), "{op}");
    }
    let y = modelled(
        &F8_ROUND_UP_TO_MIN_NORMAL,
        ("convert", "f32", "f8e4m3fn"),
        &[-0.0155, 7.4 / 512.0, 0.0158],
    )
    .to_bits_vec();
    assert_eq!(y, vec![0x80, 0x07, 0x08], "measured on iree-cpu");
    leaves_alone(
        &F8_ROUND_UP_TO_MIN_NORMAL,
        &unary("convert", "f16", "f8e4m3fn"),
    );
    leaves_alone(&F64_EXPM1, &unary("exponential-minus-one", "f32", "f32"));
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
    let y = modelled_bits(
        &SINE_OF_MINUS_ZERO,
        ("sine", "f32", "f32"),
        &[0x8000_0000, 0, 0x3f00_0000],
    );
    assert_eq!(y, vec![0, 0, 0x3ef5_7744]);
    leaves_alone(&SINE_OF_MINUS_ZERO, &unary("cosine", "f32", "f32"));
    // f8e4m3fn -NaN (0xff) counts as -480: exp = 0, tanh = -1, +NaN stays NaN
    let y = modelled_bits(
        &F8E4M3FN_MINUS_NAN,
        ("exponential", "f8e4m3fn", "f8e4m3fn"),
        &[0xff, 0x7f, 0x00],
    );
    assert_eq!((y[0], y[1] & 0x7f, y[2]), (0x00, 0x7f, 0x38));
    let m = applied(&F8E4M3FN_MINUS_NAN, &unary("tanh", "f8e4m3fn", "f8e4m3fn"));
    assert_eq!(
        eval(&m, ElementType::F8E4M3Fn, &[0xff, 0xff, 0x00])[0],
        0xb8
    );
    leaves_alone(&F8E4M3FN_MINUS_NAN, &unary("tanh", "f8e5m2", "f8e5m2"));
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
    // -6 (0xcc): exp(6) = 403 fits; -6.5 (0xcd): exp(6.5) = 665 does not; -NaN
    let y = modelled_bits(
        &F8E4M3FN_LOGISTIC_NAN,
        ("logistic", "f8e4m3fn", "f8e4m3fn"),
        &[0xcc, 0xcd, 0xff],
    );
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
    let m = applied(&POWER_EXP_LOG, &binary("power"));
    let args = [
        f32s(&[0x8000_0000, 0x4000_0000]),
        f32s(&[0x8000_0001, 0x4040_0000]),
    ];
    let y = crate::reference::evaluate(&m, &args).unwrap()[0].to_f64_vec();
    assert!(y[0].is_nan() && (y[1] - 8.0).abs() < 1e-5, "{y:?}");
    // atan2(-min_normal, -2.5): the quotient is flushed, so +pi
    let m = applied(&ATAN2_ZERO_INF, &binary("atan2"));
    let args = [
        f32s(&[0x8080_0000, 0x3f80_0000]),
        f32s(&[0xc020_0000, 0x3f80_0000]),
    ];
    let y = crate::reference::evaluate(&m, &args).unwrap()[0].to_bits_vec();
    assert_eq!(y[0], 0x4049_0fdb, "{y:x?}");
}

#[test]
fn f8_tan_of_the_smallest_normal_is_zero_as_its_sine() {
    // tan(+-2^-6) = +-0 (measured), tan(1) = 1.5
    let y = modelled_bits(
        &F8_ROUND_UP_TO_MIN_NORMAL,
        ("tan", "f8e4m3fn", "f8e4m3fn"),
        &[0x08, 0x88, 0x38],
    );
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
fn the_u64_start_model_reads_u64_starts_as_signed_and_the_slice_scatter_rule_is_narrow() {
    let ds = |t: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = f32[6] parameter(0)\n  \
             i = {t}[] parameter(1)\n  ROOT d = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={{2}}\n}}\n"
        ))
        .unwrap()
    };
    leaves_alone(&U64_START_SIGNED, &ds("u32"));
    leaves_alone(&U64_START_SIGNED, &ds("s64"));
    let model = applied(&U64_START_SIGNED, &ds("u64"));
    let x = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![6]),
        &[0., 1., 2., 3., 4., 5.],
    )
    .unwrap();
    let run = |m: &Module, start: u64| {
        let i = Literal::from_bits(&ArrayShape::new(ElementType::U64, vec![]), &[start]).unwrap();
        crate::reference::evaluate(m, &[x.clone(), i]).unwrap()[0].to_f64_vec()
    };
    // measured on iree-cpu: 2^64 - 1 reads as -1, clamped to the first window
    assert_eq!(run(&model, u64::MAX), [0.0, 1.0]);
    assert_eq!(run(&ds("u64"), u64::MAX), [4.0, 5.0]);
    assert_eq!(run(&model, 3), [3.0, 4.0]);
    let scatter = |operand: &str| {
        parse_module(&format!(
            "HloModule m\nadd {{\n  a = u8[] parameter(0)\n  b = u8[] parameter(1)\n  ROOT s = u8[] add(a, b)\n}}\n\
             ENTRY e {{\n  p = u8[6,5] parameter(0)\n  q = u8[4,3] parameter(1)\n  {operand}\n  \
             i = s32[2,1] parameter(2)\n  u = u8[2,3] parameter(3)\n  \
             ROOT r = u8[4,3] scatter(o, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, \
             scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}\n"
        ))
        .unwrap()
    };
    let rejects = |m: &Module| matches!(SCATTER_INTO_SLICE_REJECTED.model, BugModel::Rejects { modules, .. } if modules(m));
    assert!(rejects(&scatter(
        "o = u8[4,3] slice(p), slice={[1:5], [1:4]}"
    )));
    assert!(!rejects(&scatter("o = u8[4,3] copy(q)")));
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
    leaves_alone(&NARROW_START_UNSIGNED, &dus("s32"));
    leaves_alone(&NARROW_START_UNSIGNED, &dus("u8"));
    for (t, minus_one) in [("s8", 0xff), ("s16", 0xffff)] {
        let model = applied(&NARROW_START_UNSIGNED, &dus(t));
        let f32s = |v: &[f64]| {
            Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
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
    let model = applied(&F8_ROUND_UP_TO_MIN_NORMAL, &m);
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

/// iree-cpu keeps NaN through a `reduce-precision` without mantissa bits
/// (measured: f32 `0x7fc00000` e8m0 stays `0x7fc00000`, the reference gives
/// `0x7f800000`), f8e4m3fn also the bit patterns the rule reads as NaN.
#[test]
fn reduce_precision_without_mantissa_keeps_nan() {
    let rp = |t: &str, e: u32, m: u32| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  \
             ROOT y = {t}[3] reduce-precision(x), exponent_bits={e}, mantissa_bits={m}\n}}\n"
        ))
        .unwrap()
    };
    let bug = &REDUCE_PRECISION_NAN_WITHOUT_MANTISSA;
    leaves_alone(bug, &rp("f32", 8, 1));
    let m = applied(bug, &rp("f32", 8, 0));
    assert_eq!(
        eval(
            &m,
            ElementType::F32,
            &[0x7fc0_0000, 0x4040_0000, 0xff80_0001]
        ),
        // NaN kept, 3 (a tie) rounds to 2, a negative NaN kept
        vec![0x7fc0_0000, 0x4000_0000, 0xff80_0001]
    );
    let m = applied(bug, &rp("f8e4m3fn", 8, 0));
    let y = eval(&m, ElementType::F8E4M3Fn, &[0x7e, 0x79, 0x38]);
    assert_eq!(&y[..2], &[0x7e, 0x79], "{y:x?}");
    assert_eq!(y[2], 0x38, "1 stays 1: {y:x?}");
}

#[test]
fn a_pred_dot_is_modelled_as_a_sum_modulo_2() {
    let m = parse_module(
        "HloModule m\nENTRY e {\n  a = pred[2,2] parameter(0)\n  b = pred[2,1] parameter(1)\n  \
         ROOT d = pred[2,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let model = PRED_DOT_XOR.model.apply(&m).expect("applies to a pred dot");
    let a = Literal::from_bits(
        &ArrayShape::new(ElementType::Pred, vec![2, 2]),
        &[1, 1, 1, 0],
    )
    .unwrap();
    let b = Literal::from_bits(&ArrayShape::new(ElementType::Pred, vec![2, 1]), &[1, 1]).unwrap();
    let y = crate::reference::evaluate(&model, &[a.clone(), b.clone()]).unwrap();
    // two true products: false (the reference: true); one: true
    assert_eq!(y[0].to_bits_vec(), vec![0, 1]);
    let exact = crate::reference::evaluate(&m, &[a, b]).unwrap();
    assert_eq!(exact[0].to_bits_vec(), vec![1, 1]);
    leaves_alone(&PRED_DOT_XOR, &binary("add", "f32"));
}

#[test]
fn the_constant_reducer_and_unit_window_scatter_rules_are_narrow() {
    let reduce = |body: &str| {
        parse_module(&format!(
            "HloModule m\nr {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  {body}\n}}\n\
             ENTRY e {{\n  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n  \
             ROOT y = f32[2] reduce(x, z), dimensions={{1}}, to_apply=r\n}}\n"
        ))
        .unwrap()
    };
    let err = "type of return operand 0 ('tensor<f32>') doesn't match";
    assert!(CONSTANT_REDUCER_REJECTED.rejects(&reduce("ROOT c = f32[] constant(1)"), err));
    assert!(!CONSTANT_REDUCER_REJECTED.rejects(&reduce("ROOT c = f32[] add(a, b)"), err));
    let scatter = |dims: &str| {
        parse_module(&format!(
            "HloModule m\nu {{\n  l = s32[] parameter(0)\n  ROOT r = s32[] parameter(1)\n}}\n\
             ENTRY e {{\n  o = s32[3,4] parameter(0)\n  {dims}\n}}\n"
        ))
        .unwrap()
    };
    let unit = scatter(
        "i = s32[12,2] parameter(1)\n  p = s32[12,1,1] parameter(2)\n  \
         ROOT s = s32[3,4] scatter(o, i, p), to_apply=u, update_window_dims={1,2}, \
         inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1",
    );
    let rows = scatter(
        "i = s32[2,1] parameter(1)\n  p = s32[2,1,4] parameter(2)\n  \
         ROOT s = s32[3,4] scatter(o, i, p), to_apply=u, update_window_dims={1,2}, \
         inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1",
    );
    let err =
        "'iree_linalg_ext.scatter' op expected indices to be equal to batch rank or batch rank + 1";
    assert!(UNIT_WINDOW_SCATTER_REJECTED.rejects(&unit, err));
    assert!(
        !UNIT_WINDOW_SCATTER_REJECTED.rejects(&rows, err),
        "compiles on iree-cpu"
    );
}

#[test]
fn a_sort_of_a_slice_of_rank_2_and_a_crashing_gather_are_declared_rejections() {
    let sort = |pre: &str, operand: &str| {
        parse_module(&format!(
            "HloModule m\nc {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT lt = pred[] compare(a, b), direction=LT\n}}\n\
             ENTRY e {{\n  {pre}\n  ROOT r = {operand} sort(s), dimensions={{0}}, to_apply=c\n}}\n"
        ))
        .unwrap()
    };
    let error = "iree-compile: module.mlir:4:10: error: 'linalg.generic' op write affecting \
                 operations on global resources are restricted to workgroup distributed contexts";
    let rejected = |m: &Module, e: &str| SORT_OF_SLICE_REJECTED.rejects(m, e);
    let sliced = sort(
        "p = f32[6,5] parameter(0)\n  s = f32[4,3] slice(p), slice={[1:5], [1:4]}",
        "f32[4,3]",
    );
    assert!(rejected(&sliced, error));
    // another error of the same module is judged as usual
    assert!(!rejected(&sliced, "iree-compile: something else"));
    // rank 1 compiles (measured), as does a sort of anything but a slice
    let rank1 = sort(
        "p = f32[6] parameter(0)\n  s = f32[4] slice(p), slice={[1:5]}",
        "f32[4]",
    );
    assert!(!rejected(&rank1, error));
    let negated = sort(
        "p = f32[4,3] parameter(0)\n  s = f32[4,3] negate(p)",
        "f32[4,3]",
    );
    assert!(!rejected(&negated, error));
    let constant = |t: &str| {
        let values = if t == "pred" {
            "{{true, false}, {false, true}}"
        } else {
            "{{1, 2}, {3, 4}}"
        };
        let c = format!("s = {t}[2,2] constant({values})");
        parse_module(&format!(
            "HloModule m\nc {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n  \
             ROOT lt = pred[] compare(a, b), direction=LT\n}}\n\
             ENTRY e {{\n  {c}\n  ROOT r = {t}[2,2] sort(s), dimensions={{0}}, to_apply=c\n}}\n"
        ))
        .unwrap()
    };
    for t in ["f8e5m2", "f8e4m3fn", "pred"] {
        assert!(rejected(&constant(t), error), "{t}");
    }
    for t in ["f32", "f16", "s8", "u8"] {
        assert!(!rejected(&constant(t), error), "{t}");
    }

    let gather = |starts: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = s16[5] parameter(0)\n  {starts}\n  \
             ROOT g = s16[3] gather(x, i), offset_dims={{}}, collapsed_slice_dims={{0}}, \
             start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1}}\n}}\n"
        ))
        .unwrap()
    };
    let crash = "iree-run-module crashed: signal: 11 (SIGSEGV); stderr: ";
    let crashes = |m: &Module, e: &str| GATHER_FAR_START_CRASH.rejects(m, e);
    let of_parameter = gather("i = u32[3,1] parameter(1)");
    assert!(crashes(&of_parameter, crash));
    assert!(!crashes(
        &of_parameter,
        "iree-run-module failed: out of memory"
    ));
    // constant starts, and a crash of a module without a root gather
    assert!(!crashes(
        &gather("i = u32[3,1] constant({{0}, {1}, {2}})"),
        crash
    ));
    assert!(!crashes(&sliced, crash));
}

/// The sine family's masks' arguments: `x` as given, `y = [2, 3, -4]`.
fn x_and_y(t: ElementType, x: [f64; 3]) -> [Literal; 2] {
    let s = ArrayShape::new(t, vec![3]);
    [
        Literal::from_f64s(&s, &x).unwrap(),
        Literal::from_f64s(&s, &[2.0, 3.0, -4.0]).unwrap(),
    ]
}

#[test]
fn a_cosine_seen_through_a_follower_is_excused_at_its_elements() {
    let BugModel::AnyValue(mask) = SINE_RANGE.model else {
        panic!("an any-value model");
    };
    let chain = |t: &str, root: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  y = {t}[3] parameter(1)\n  \
             c = {t}[3] cosine(x)\n  ROOT r = {t}[3] {root}\n}}\n"
        ))
        .unwrap()
    };
    // near a zero of the cosine (1.496) and far from every zero (0.3, 3)
    let args = |t: ElementType| x_and_y(t, [1.496, 0.3, 3.0]);
    let every = Some(vec![vec![true; 3]]);
    for root in [
        "divide(y, c)",
        "divide(c, y)",
        "multiply(y, c)",
        "add(y, c)",
        "exponential(c)",
    ] {
        assert_eq!(
            mask(&chain("f32", root), &args(ElementType::F32)),
            every,
            "{root}"
        );
    }
    // an f64 cosine is not the bug's; a follower of the other operand only
    // is not a follower of the cosine
    assert_eq!(
        mask(&chain("f64", "divide(y, c)"), &args(ElementType::F64)),
        None
    );
    assert_eq!(
        mask(&chain("f32", "negate(y)"), &args(ElementType::F32)),
        None
    );
}

#[test]
fn a_sine_seen_through_a_fusion_or_a_sign_op_is_an_output_sine() {
    let BugModel::AnyValue(mask) = SINE_RANGE.model else {
        panic!("an any-value model");
    };
    let args = |t: ElementType| x_and_y(t, [3.38, 0.3, -2.9]);
    let module = |t: &str, body: &str| {
        parse_module(&format!(
            "HloModule m\nfused {{\n  a = {t}[3] parameter(0)\n  s = {t}[3] sine(a)\n  \
             ROOT n = {t}[3] negate(s)\n}}\n\
             ENTRY e {{\n  x = {t}[3] parameter(0)\n  y = {t}[3] parameter(1)\n  {body}\n}}\n"
        ))
        .unwrap()
    };
    let every = Some(vec![vec![true; 3]]);
    for body in [
        "ROOT f = f32[3] fusion(x), kind=kLoop, calls=fused",
        "s = f32[3] sine(x)\n  ROOT r = f32[3] negate(s)",
        "c = f32[3] cosine(x)\n  a = f32[3] abs(c)\n  ROOT r = f32[3] copy(a)",
        "t = f32[3] tan(x)\n  ROOT r = f32[3] reshape(t)",
    ] {
        assert_eq!(
            mask(&module("f32", body), &args(ElementType::F32)),
            every,
            "{body}"
        );
    }
    // a follower that rounds or combines, inside a fusion or outside it,
    // reads the sine's elements: as wrong as they are
    for body in [
        "s = f32[3] sine(x)\n  ROOT r = f32[3] add(s, y)",
        "s = f32[3] sine(x)\n  a = f32[3] add(s, y)\n  ROOT r = f32[3] negate(a)",
        "f = f32[3] fusion(x), kind=kLoop, calls=fused\n  ROOT r = f32[3] multiply(f, y)",
    ] {
        assert_eq!(
            mask(&module("f32", body), &args(ElementType::F32)),
            every,
            "{body}"
        );
    }
    // what reduces or contracts over a sine mixes many of its elements and is
    // judged, as is an f64 sine
    let dot = "s = f32[3] sine(x)\n  \
               ROOT r = f32[] dot(s, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}";
    assert_eq!(mask(&module("f32", dot), &args(ElementType::F32)), None);
    assert_eq!(
        mask(
            &module("f64", "ROOT f = f64[3] fusion(x), kind=kLoop, calls=fused"),
            &args(ElementType::F64)
        ),
        None
    );
}

/// Measured on iree-cpu (docs/findings.md, "IREE bug: `power` of a
/// negative constant base is 0").
#[test]
fn a_power_of_a_negative_constant_base_is_zero() {
    let module = |base: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  c = f32[] constant({base})\n  \
             b = f32[4] broadcast(c), dimensions={{}}\n  y = f32[4] parameter(0)\n  \
             ROOT z = f32[4] power(b, y)\n}}\n"
        ))
        .unwrap()
    };
    let run = |m: &Module| {
        let s = ArrayShape::new(ElementType::F32, vec![4]);
        let y = Literal::from_f64s(&s, &[2.0, 3.0, 0.0, 0.5]).unwrap();
        crate::reference::evaluate(m, &[y]).unwrap()[0].to_f64_vec()
    };
    let bug = &POWER_OF_NEGATIVE_CONSTANT_BASE;
    assert_eq!(run(&applied(bug, &module("-2"))), vec![0.0; 4]);
    // a non-negative constant base is power itself
    assert_eq!(
        run(&applied(bug, &module("2"))),
        vec![4.0, 8.0, 1.0, 2f64.sqrt() as f32 as f64]
    );
    // a base given as a parameter is another bug's (power-exp-log)
    leaves_alone(bug, &binary("power", "f32"));
    leaves_alone(bug, &binary("power", "s32"));
}

/// Measured on iree-cpu (docs/findings.md, "IREE bug: `power` is exp(y *
/// log(x))"): a subnormal exponent given as a broadcast scalar constant is
/// not flushed, one given as a constant array (or a parameter) is.
#[test]
fn a_splat_constant_exponent_of_power_is_not_flushed() {
    let module = |exponent: &str| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = f32[6] parameter(0)\n  {exponent}\n  \
             ROOT p = f32[6] power(x, b)\n}}\n"
        ))
        .unwrap()
    };
    let x = [1e-45, -1e-45, 2.0, f64::NEG_INFINITY, 0.0, 4.0];
    let run = |m: &Module| {
        let s = ArrayShape::new(ElementType::F32, vec![6]);
        let l = Literal::from_f64s(&s, &x).unwrap();
        crate::reference::evaluate(&applied(&POWER_EXP_LOG, m), &[l]).unwrap()[0].to_f64_vec()
    };
    let splat = run(&module(
        "e = f32[] constant(1e-45)\n  b = f32[6] broadcast(e), dimensions={}",
    ));
    assert_eq!(splat[..3], [0.0, 0.0, 1.0]);
    assert!(splat[3].is_nan());
    assert_eq!(splat[4..], [0.0, 1.0]);
    let array = run(&module(
        "b = f32[6] constant({1e-45, 1e-45, 1e-45, 1e-45, 1e-45, -1e-45})",
    ));
    let nan = [true, true, false, true, true, false];
    for (k, v) in array.iter().enumerate() {
        assert_eq!(v.is_nan(), nan[k], "{k}: {v}");
    }
    assert_eq!((array[2], array[5]), (1.0, 1.0));
}
