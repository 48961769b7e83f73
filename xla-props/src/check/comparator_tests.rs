//! Comparator tests: each legal difference accepted only when declared.

use super::compare::compare_n;
use super::*;
use crate::hlo::{ArrayShape, ElementType, Opcode};
use crate::literal::Literal;

fn lit(dtype: ElementType, values: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(dtype, vec![values.len() as i64]), values).unwrap()
}

fn bits(dtype: ElementType, bits: &[u64]) -> Literal {
    Literal::from_bits(&ArrayShape::new(dtype, vec![bits.len() as i64]), bits).unwrap()
}

fn run_with(
    e: &Literal,
    a: &Literal,
    spec: ErrorSpec,
    n: &Numerics,
    ctx: &CompareContext,
) -> Verdict {
    compare_n(
        std::slice::from_ref(e),
        std::slice::from_ref(a),
        &spec,
        n,
        ctx,
    )
}

/// Under the exact spec.
fn run(e: &Literal, a: &Literal, n: &Numerics, ctx: &CompareContext) -> Verdict {
    run_with(e, a, ErrorSpec::exact(), n, ctx)
}

/// Under the exact spec, exact numerics, and no context.
fn exact(e: &Literal, a: &Literal) -> Verdict {
    run(e, a, &Numerics::exact(), &CompareContext::new())
}

fn agree(v: &Verdict) -> &Agreement {
    match v {
        Verdict::Agree(a) => a,
        other => panic!("expected agreement, got {other}"),
    }
}

fn mismatch(v: &Verdict) -> &MismatchReport {
    match v {
        Verdict::Mismatch(r) => r,
        other => panic!("expected a mismatch, got {other}"),
    }
}

#[test]
fn exact_agreement_counts_every_element() {
    let x = lit(ElementType::F16, &[1.0, -0.0, f64::NAN, f64::INFINITY]);
    let v = exact(&x, &x);
    let a = agree(&v);
    assert_eq!((a.elements, a.exact), (4, 4));
    assert!(a.legal.is_empty());
}

#[test]
fn signed_zero_strict_is_reported() {
    let e = lit(ElementType::F32, &[0.0, 1.0]);
    let a = lit(ElementType::F32, &[-0.0, 1.0]);
    let v = exact(&e, &a);
    let r = mismatch(&v);
    assert_eq!(r.count, 1);
    let o = &r.outputs[0];
    assert_eq!(o.first_index.flat, 0);
    assert_eq!(o.worst[0].failure, ElementFailure::SignedZero);
    assert_eq!(o.worst[0].actual.bits, "0x80000000");
    let lenient = run_with(
        &e,
        &a,
        ErrorSpec::exact().lenient_signed_zeros(),
        &Numerics::exact(),
        &CompareContext::new(),
    );
    agree(&lenient);
}

#[test]
fn nan_by_class_and_inf_exact() {
    // f16: 0x7e00 quiet NaN, 0xfd00 a negative NaN with another payload
    let e = bits(ElementType::F16, &[0x7e00, 0x7c00, 0x3c00]);
    let a = bits(ElementType::F16, &[0xfd00, 0x7bff, 0x7e00]);
    let v = run_with(
        &e,
        &a,
        ErrorSpec::exact().with_ulp(4),
        &Numerics::exact(),
        &CompareContext::new(),
    );
    let r = mismatch(&v);
    assert_eq!(r.count, 2); // inf vs max, and 1.0 vs NaN; the NaN pair agrees
    let failures: Vec<_> = r.outputs[0].worst.iter().map(|m| m.failure).collect();
    assert!(failures.contains(&ElementFailure::Infinity));
    assert!(failures.contains(&ElementFailure::NanClass));
    assert_eq!(r.outputs[0].first_index.flat, 1);
}

#[test]
fn ftz_output_legal_only_when_declared() {
    // f16 smallest subnormal 2^-24 flushed to +0; and -2^-24 flushed to -0
    let e = lit(ElementType::F16, &[2f64.powi(-24), -2f64.powi(-24), 1.0]);
    let a = lit(ElementType::F16, &[0.0, -0.0, 1.0]);
    let none = exact(&e, &a);
    assert_eq!(mismatch(&none).count, 2);
    let ftz = Numerics::exact().with_ftz(ElementType::F16, true, true);
    let v = run(&e, &a, &ftz, &CompareContext::new());
    let ag = agree(&v);
    assert_eq!(ag.legal.get(&LegalReason::FlushedSubnormalOutput), Some(&2));
    // flushing a subnormal to the opposite-signed zero is not a flush
    let wrong_sign = lit(ElementType::F16, &[-0.0, -0.0, 1.0]);
    let v = run(&e, &wrong_sign, &ftz, &CompareContext::new());
    assert_eq!(mismatch(&v).count, 1);
    // f32 flushing declared does not cover f16
    let f32_only = Numerics::exact().with_ftz(ElementType::F32, true, true);
    let v = run(&e, &a, &f32_only, &CompareContext::new());
    assert_eq!(mismatch(&v).count, 2);
}

#[test]
fn flushed_inputs_alternative() {
    // x * 1.0 with x subnormal: reference gives x, the flushed-input reference gives 0;
    // a backend that flushes inputs but not outputs may return either.
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  one = f32[1] constant({1})\n  ROOT r = f32[1] multiply(x, one)\n}\n",
    )
    .unwrap();
    let x = lit(ElementType::F32, &[1e-40]);
    let actual = lit(ElementType::F32, &[0.0]);
    let inputs_ftz = Numerics::exact().with_ftz(ElementType::F32, true, false);
    let judge = |n: &Numerics| {
        Judge::new(n, &[], Policy::Reference).against_reference(
            &m,
            std::slice::from_ref(&x),
            std::slice::from_ref(&actual),
        )
    };
    assert_eq!(
        agree(&judge(&inputs_ftz))
            .legal
            .get(&LegalReason::FlushedInputs),
        Some(&1)
    );
    // not admissible for a backend that does not flush
    let v = judge(&Numerics::exact());
    let r = mismatch(&v);
    // inputs at the index are reported for elementwise programs
    assert_eq!(r.outputs[0].worst[0].inputs[0].bits, "0x000116c2");
}

#[test]
fn approximate_budget() {
    // expected f32 1.0, actual 1.0 + 3 ulp
    let e = bits(ElementType::F32, &[0x3f80_0000]);
    let a = bits(ElementType::F32, &[0x3f80_0003]);
    let ctx = CompareContext::new().with_approximate_ops([Opcode::Exponential]);
    let n2 = Numerics::exact().with_approximation(
        Opcode::Exponential,
        ElementType::F32,
        ErrorBudget::ulp(2),
    );
    assert_eq!(mismatch(&run(&e, &a, &n2, &ctx)).count, 1);
    let n3 = Numerics::exact().with_approximation(
        Opcode::Exponential,
        ElementType::F32,
        ErrorBudget::ulp(3),
    );
    let v = run(&e, &a, &n3, &ctx);
    assert_eq!(
        agree(&v).legal.get(&LegalReason::ApproximateFunction),
        Some(&1)
    );
    assert_eq!(agree(&v).max_ulp, 3);
    // the budget belongs to exp: a program without exp gets none of it
    let no_exp = CompareContext::new().with_approximate_ops([Opcode::Add]);
    assert_eq!(mismatch(&run(&e, &a, &n3, &no_exp)).count, 1);
    // a relative error of 1e-3 in exp is far outside a few ULP
    let far = lit(ElementType::F32, &[1.001]);
    assert_eq!(mismatch(&run(&e, &far, &n3, &ctx)).count, 1);
}

#[test]
fn reassociation_bound() {
    // sum of [1, 2^-24, 2^-24, ...]: the bound is n * eps * sum|x|
    let x = lit(ElementType::F32, &[1e8, 1.0, -1e8, 1.0]);
    let sums = magnitude_sums_for_reduce(&x, 0.0, &[0]);
    assert_eq!(sums.terms, 4);
    assert_eq!(sums.sum_abs, vec![2e8 + 2.0]);
    // exact sum 2; a reassociated f32 sum may give 0 or 1 or 2 (1e8 absorbs 1.0)
    let e = lit(ElementType::F32, &[2.0]);
    let a = lit(ElementType::F32, &[0.0]);
    let ctx = CompareContext::new().with_magnitude_sums(0, sums);
    // without the declaration: mismatch
    assert_eq!(mismatch(&run(&e, &a, &Numerics::exact(), &ctx)).count, 1);
    let re = Numerics::exact().with_reassociation();
    let v = run(&e, &a, &re, &ctx);
    assert_eq!(agree(&v).legal.get(&LegalReason::Reassociation), Some(&1));
    // bound = 4 * 2^-23 * (2e8 + 2) ~= 95.4: an error of 100 is not legal
    let far = lit(ElementType::F32, &[102.0]);
    assert_eq!(mismatch(&run(&e, &far, &re, &ctx)).count, 1);
    let near = lit(ElementType::F32, &[96.0]);
    agree(&run(&e, &near, &re, &ctx));
}

#[test]
fn dropped_last_element_is_caught() {
    // reduce over 8 values of ~1: dropping one is an error of ~1, far above 8*eps*8
    let xs: Vec<f64> = (0..8).map(|k| 1.0 + k as f64 / 8.0).collect();
    let x = lit(ElementType::F32, &xs);
    let sums = magnitude_sums_for_reduce(&x, 0.0, &[0]);
    let exact: f64 = xs.iter().sum();
    let dropped: f64 = xs[..7].iter().sum();
    let e = lit(ElementType::F32, &[exact]);
    let a = lit(ElementType::F32, &[dropped]);
    let ctx = CompareContext::new().with_magnitude_sums(0, sums);
    let re = Numerics::exact().with_reassociation();
    assert_eq!(mismatch(&run(&e, &a, &re, &ctx)).count, 1);
}

#[test]
fn excess_precision_unless_strict_rounding() {
    // r = x - f32(f16(x)) in a fusion, with x = 1 + 2^-12: f16 rounds x to 1,
    // so r = 2^-12; a backend that elides the f16 round trip returns 0.
    let m = crate::hlo::parse_module(
        "HloModule m\nfused {\n  x = f32[1] parameter(0)\n  h = f16[1] convert(x)\n  b = f32[1] convert(h)\n  ROOT r = f32[1] subtract(x, b)\n}\nENTRY e {\n  p = f32[1] parameter(0)\n  ROOT f = f32[1] fusion(p), kind=kLoop, calls=fused\n}\n",
    )
    .unwrap();
    let x = lit(ElementType::F32, &[1.0 + 2f64.powi(-12)]);
    let unrounded = lit(ElementType::F32, &[0.0]);
    let judge = |n: &Numerics, strict: bool| {
        Judge::new(n, &[], Policy::Reference)
            .strict_rounding(strict)
            .against_reference(
                &m,
                std::slice::from_ref(&x),
                std::slice::from_ref(&unrounded),
            )
    };
    let ep = Numerics::exact().with_excess_precision();
    assert_eq!(
        agree(&judge(&ep, false))
            .legal
            .get(&LegalReason::ExcessPrecision),
        Some(&1)
    );
    // strict_rounding: never accepted
    assert_eq!(mismatch(&judge(&ep, true)).count, 1);
    // not declared: not accepted
    assert_eq!(mismatch(&judge(&Numerics::exact(), false)).count, 1);
}

#[test]
fn report_worst_histogram_and_fingerprints() {
    // expected all 1.0 (0x3c00); actual off by 0, 1, 5, 300 ulp
    let e = bits(ElementType::F16, &[0x3c00; 4]);
    let a = bits(ElementType::F16, &[0x3c00, 0x3c01, 0x3c05, 0x3c00 + 300]);
    let ctx = CompareContext {
        worst: 2,
        ..CompareContext::new()
    };
    let v = run_with(
        &e,
        &a,
        ErrorSpec::exact().with_ulp(1),
        &Numerics::exact(),
        &ctx,
    );
    let r = mismatch(&v);
    assert_eq!(r.count, 2);
    let o = &r.outputs[0];
    assert_eq!(o.first_index.flat, 2);
    assert_eq!(o.worst.len(), 2);
    assert_eq!(o.worst[0].ulp, Some(300));
    assert_eq!(o.worst[0].index.flat, 3);
    assert_eq!(o.worst[1].ulp, Some(5));
    let hist: Vec<(&str, u64)> = o
        .histogram
        .iter()
        .map(|b| (b.ulp.as_str(), b.count))
        .collect();
    assert_eq!(hist, vec![("0", 1), ("1", 1), ("5-8", 1), ("257-512", 1)]);
    assert_ne!(o.expected_fingerprint, o.actual_fingerprint);
    assert_eq!(o.expected_fingerprint, e.fingerprint());
    let text = v.to_string();
    assert!(text.contains("2 of 4 elements differ"), "{text}");
    // the lanes that differ, each side at digits that tell them apart
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("fingerprint:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!line.contains("min expected"), "min agrees: {line}");
    assert!(line.contains("max expected 1 actual 1.29"), "{line}");
    for (lane, e, a) in o.expected_fingerprint.differences(&o.actual_fingerprint) {
        assert_ne!(e, a, "{lane}");
        assert!(
            line.contains(&format!("{lane} expected {e} actual {a}")),
            "{line}"
        );
    }
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["verdict"], "mismatch");
    assert_eq!(json["count"], 2);
    assert_eq!(json["outputs"][0]["worst"][0]["ulp"], 300);
    assert_eq!(
        json["outputs"][0]["expected_fingerprint"]["hex"]
            .as_str()
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn equal_fingerprints_are_not_printed() {
    // the same values in another order: the summary cannot tell them apart
    let e = lit(ElementType::F32, &[1.0, 2.0]);
    let a = lit(ElementType::F32, &[2.0, 1.0]);
    let v = exact(&e, &a);
    let r = mismatch(&v);
    assert_eq!(
        r.outputs[0].expected_fingerprint,
        r.outputs[0].actual_fingerprint
    );
    let text = v.to_string();
    assert!(text.contains("2 of 2 elements differ"), "{text}");
    assert!(!text.contains("fingerprint"), "{text}");
}

#[test]
fn shape_mismatch_and_failures() {
    let a = lit(ElementType::F32, &[1.0]);
    let b = lit(ElementType::F32, &[1.0, 2.0]);
    let v = exact(&a, &b);
    assert!(matches!(v, Verdict::ShapeMismatch { .. }));
    let one = vec![a.clone()];
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] negate(x)\n}\n",
    )
    .unwrap();
    let n = Numerics::exact();
    let judge = Judge::new(&n, &[], Policy::Reference);
    let eval = |m: &crate::hlo::Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
    let judged =
        |expected: Produced, actual: Produced| judge.judge(&m, &one, &expected, &actual, &eval);
    let both = judged(
        Produced::Failed("division by zero".into()),
        Produced::Failed("division by zero".into()),
    );
    assert!(matches!(both, Verdict::BothFailedAlike { .. }));
    let skipped = judged(
        Produced::Ok(one.clone()),
        Produced::Unsupported("no f8 support".into()),
    );
    assert!(matches!(skipped, Verdict::Skipped { .. }));
    let only = judged(Produced::Failed("bad".into()), Produced::Ok(one.clone()));
    assert!(only.is_disagreement());
}

#[test]
fn dot_magnitude_sums_with_batch() {
    // batch 2 of [1x2]·[2x1]
    let a = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2, 1, 2]),
        &[1.0, 2.0, -3.0, 4.0],
    )
    .unwrap();
    let b = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2, 2, 1]),
        &[5.0, 6.0, 7.0, -8.0],
    )
    .unwrap();
    let dims = crate::hlo::DotDims {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contracting: vec![2],
        rhs_contracting: vec![1],
    };
    let s = magnitude_sums_for_dot(&a, &b, &dims).unwrap();
    // batch 0: |1*5| + |2*6| = 17; batch 1: |-3*7| + |4*-8| = 53
    assert_eq!(s.sum_abs, vec![17.0, 53.0]);
    assert_eq!(s.terms, 2);
}

#[test]
fn per_output_specs() {
    // two outputs off by one ULP: only the second is allowed one ULP
    let e = bits(ElementType::F16, &[0x3c00]);
    let a = bits(ElementType::F16, &[0x3c01]);
    let ctx = CompareContext::new().with_output_spec(1, ErrorSpec::exact().with_ulp(1));
    let v = compare_n(
        &[e.clone(), e],
        &[a.clone(), a],
        &ErrorSpec::exact(),
        &Numerics::exact(),
        &ctx,
    );
    let r = mismatch(&v);
    assert_eq!(r.count, 1);
    assert_eq!(r.outputs[0].output, 0);
}

#[test]
fn overflow_only_nan_is_excused_but_a_nan_term_is_not() {
    // f64 dot of [max, max] . [2, -2]: the rounded products are +inf and
    // -inf (reference NaN); a fused multiply-add gives -inf or a finite value
    let sums = |overflow_nan: Vec<bool>| MagnitudeSums {
        terms: 2,
        sum_abs: vec![f64::INFINITY],
        unbounded: vec![true],
        product: false,
        overflow_nan,
    };
    let e = lit(ElementType::F64, &[f64::NAN]);
    let a = lit(ElementType::F64, &[f64::NEG_INFINITY]);
    let re = Numerics::exact().with_reassociation();
    // NaN from overflow only: any order's result is legal
    let ctx = CompareContext::new().with_magnitude_sums(0, sums(vec![true]));
    let v = run(&e, &a, &re, &ctx);
    assert_eq!(agree(&v).legal.get(&LegalReason::Reassociation), Some(&1));
    // a NaN term (or opposite infinite inputs): NaN in every order
    let ctx = CompareContext::new().with_magnitude_sums(0, sums(Vec::new()));
    assert_eq!(mismatch(&run(&e, &a, &re, &ctx)).count, 1);
    // nor without the reassociation declaration
    let ctx = CompareContext::new().with_magnitude_sums(0, sums(vec![true]));
    assert_eq!(mismatch(&run(&e, &a, &Numerics::exact(), &ctx)).count, 1);
}

#[test]
fn zero_sum_sign_against_an_alternative_only_for_reassociated_sums() {
    // dot of max * -2^-149: flushed input gives a -0 term; the reference's
    // accumulator starts at +0 and returns +0, XLA returns -0
    let e = bits(ElementType::F32, &[0xb4ff_ffff]);
    let alt = [bits(ElementType::F32, &[0])];
    let a = bits(ElementType::F32, &[0x8000_0000]);
    let sums = MagnitudeSums {
        terms: 1,
        sum_abs: vec![4.8e-7],
        unbounded: vec![false],
        product: false,
        overflow_nan: Vec::new(),
    };
    let n = Numerics::exact()
        .with_reassociation()
        .with_ftz(ElementType::F32, true, true);
    let ctx = CompareContext::new()
        .with_inputs(&[], false)
        .with_magnitude_sums(0, sums.clone())
        .with_alternative(LegalReason::FlushedInputs, &alt);
    agree(&run(&e, &a, &n, &ctx));
    // a product's zero keeps its sign
    let product = MagnitudeSums {
        product: true,
        ..sums
    };
    let ctx = CompareContext::new()
        .with_magnitude_sums(0, product)
        .with_alternative(LegalReason::FlushedInputs, &alt);
    assert_eq!(mismatch(&run(&e, &a, &n, &ctx)).count, 1);
}

/// A mismatching element shows what the enclosures together legalize: an
/// unbounded one legalizes nothing, a bounded one beside it does, so the
/// report gives the bounded one's range (not "unbounded").
#[test]
fn a_mismatch_shows_the_bounded_enclosure_beside_an_unbounded_one() {
    use crate::reference::Bounds;
    let t = ElementType::F32;
    let e = lit(t, &[1.0, 1.0]);
    let a = lit(t, &[1.5, 1.0]);
    let inf = f64::INFINITY;
    let unbounded = Bounds {
        lo: lit(t, &[-inf, 1.0]),
        hi: lit(t, &[inf, 1.0]),
        nan: vec![true, false],
    };
    let bounded = Bounds {
        lo: lit(t, &[0.75, 1.0]),
        hi: lit(t, &[1.25, 1.0]),
        nan: vec![false, false],
    };
    let mut ctx = CompareContext {
        enclosures: vec![vec![unbounded.clone(), bounded]],
        ..Default::default()
    };
    let v = run(&e, &a, &Numerics::exact(), &ctx);
    let el = &mismatch(&v).outputs[0].worst[0];
    let b = el.bound.as_ref().expect("a bound");
    assert!(b.bounded);
    assert_eq!(
        (b.lo.value.as_str(), b.hi.value.as_str()),
        ("7.5e-1", "1.25e0")
    );
    assert!(!b.to_string().contains("unbounded"), "{b}");
    // with only the unbounded one, it says so
    ctx.enclosures = vec![vec![unbounded]];
    let v = run(&e, &a, &Numerics::exact(), &ctx);
    let b = mismatch(&v).outputs[0].worst[0].bound.clone().unwrap();
    assert!(!b.bounded && b.to_string().contains("unbounded"), "{b}");
}

#[test]
fn one_classifier_decides_a_failed_side_for_suite_and_user_programs_alike() {
    use crate::check::{BugModel, KnownBug};
    const REJECTS: KnownBug = KnownBug {
        id: "test/rejects-negate",
        summary: "rejects every negate",
        documented: "nowhere",
        model: BugModel::Rejects {
            modules: |_| true,
            error: "negate is not lowered",
        },
    };
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] negate(x)\n}\n",
    )
    .unwrap();
    let one =
        vec![Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1]), &[1.0]).unwrap()];
    let n = Numerics::exact();
    let eval = |m: &crate::hlo::Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
    let bugs = [REJECTS];
    let user = Judge::new(&n, &bugs, Policy::Reference);
    let suite = user.clone().reference_failure_skips(true);
    let ok = Produced::Ok(one.clone());
    let failed_ref = Produced::Failed("bad".into());
    // a failing reference: a finding for a user's program, a skip in the suite
    assert!(matches!(
        user.judge(&m, &one, &failed_ref, &ok, &eval),
        Verdict::OnlyOneFailed {
            failed: Side::Reference,
            ..
        }
    ));
    assert!(matches!(
        suite.judge(&m, &one, &failed_ref, &ok, &eval),
        Verdict::Skipped { .. }
    ));
    assert!(matches!(
        suite.reference_alone(&failed_ref),
        Some(Verdict::Skipped { .. })
    ));
    assert!(user.reference_alone(&failed_ref).is_none());
    // a panic fails on either side, under either rule, whatever the other did
    let panicked = Produced::Panicked("index out of bounds".into());
    for judge in [&user, &suite] {
        let v = judge.judge(&m, &one, &panicked, &ok, &eval);
        assert!(
            matches!(&v, Verdict::OnlyOneFailed { failed: Side::Reference, error } if error.contains("panicked: index")),
            "{v}"
        );
        // the backend's panic outweighs the reference's failure, unless that
        // failure already made the case a skip
        let v = judge.judge(&m, &one, &failed_ref, &panicked, &eval);
        if judge.reference_alone(&failed_ref).is_none() {
            assert!(
                matches!(
                    v,
                    Verdict::OnlyOneFailed {
                        failed: Side::Backend,
                        ..
                    }
                ),
                "{v}"
            );
        }
        let v = judge.judge(&m, &one, &ok, &panicked, &eval);
        assert!(
            matches!(
                v,
                Verdict::OnlyOneFailed {
                    failed: Side::Backend,
                    ..
                }
            ),
            "{v}"
        );
    }
    // a compile error a known bug declares is its rejection; another error,
    // or the same text outside a compile or run error, is a finding
    let declared = Produced::Errored {
        message: "negate is not lowered".into(),
        error: "compile error: negate is not lowered".into(),
    };
    assert!(matches!(
        suite.judge(&m, &one, &ok, &declared, &eval),
        Verdict::KnownRejection { .. }
    ));
    assert!(matches!(
        suite.backend_alone(&m, &declared),
        Some(Verdict::KnownRejection { .. })
    ));
    let other = Produced::Errored {
        message: "out of memory".into(),
        error: "execution error: out of memory".into(),
    };
    assert!(matches!(
        user.judge(&m, &one, &ok, &other, &eval),
        Verdict::OnlyOneFailed {
            failed: Side::Backend,
            ..
        }
    ));
    let not_compile = Produced::Failed("bad arguments: negate is not lowered".into());
    assert!(matches!(
        user.judge(&m, &one, &ok, &not_compile, &eval),
        Verdict::OnlyOneFailed {
            failed: Side::Backend,
            ..
        }
    ));
    assert!(user.backend_alone(&m, &ok).is_none());
    let unsupported = Produced::Unsupported("no f8".into());
    assert!(matches!(
        user.backend_alone(&m, &unsupported),
        Some(Verdict::Skipped { .. })
    ));
}
