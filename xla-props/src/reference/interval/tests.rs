use super::*;
use crate::hlo::{parse_module, ArrayShape, ElementType, Opcode};
use crate::literal::Literal;

fn f32s(v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
}

/// Exact numerics but for one approximate function's budget.
fn one_budget(op: Opcode, t: ElementType, budget: (u64, f64)) -> Allowances {
    let mut allow = Allowances::default();
    allow.budgets.insert((op, t), budget);
    allow
}

#[test]
fn exact_ops_on_exact_inputs_enclose_the_rounded_result_only() {
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  t = f32[3] tanh(x)\n  ROOT s = f32[3] multiply(t, x)\n}\n").unwrap();
    let x = f32s(&[0.5, -4.3, 1e-3]);
    let b = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
    let point = crate::reference::evaluate(&m, &[x]).unwrap();
    assert_eq!(b[0].lo.to_bits_vec(), point[0].to_bits_vec());
    assert_eq!(b[0].hi.to_bits_vec(), point[0].to_bits_vec());
}

#[test]
fn a_budget_carries_through_a_cancellation() {
    // 1 + tanh(x) at x = -4.3 cancels: 2 ULP of tanh are many ULP of the sum
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  t = f32[1] tanh(x)\n  one = f32[1] constant({1})\n  ROOT s = f32[1] add(one, t)\n}\n").unwrap();
    let x = f32s(&[-4.3]);
    let allow = one_budget(Opcode::Tanh, ElementType::F32, (2, 0.0));
    let b = enclose(&m, std::slice::from_ref(&x), &allow).unwrap();
    let point = crate::reference::evaluate(&m, &[x]).unwrap()[0].get_f64(0);
    let (lo, hi) = (b[0].lo.get_f64(0), b[0].hi.get_f64(0));
    assert!(lo < point && point < hi, "{lo} {point} {hi}");
    // two ULP of tanh near -1 are 2 * 2^-24; the sum is ~3.7e-4
    let ulp_t = 2f64.powi(-24);
    assert!(hi - lo <= 4.0 * ulp_t + 2.0 * 2f64.powi(-35), "{lo} {hi}");
    assert!(hi - point >= 2.0 * ulp_t - 2f64.powi(-36));
    // a value outside is not enclosed
    let outside = (point as f32 + 1e-5).to_bits();
    assert!(!b[0].contains(0, u64::from(outside)));
}

#[test]
fn uncertain_predicates_take_both_branches() {
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  e = f32[1] exponential(x)\n  one = f32[1] constant({1})\n  c = pred[1] compare(e, one), direction=LT\n  a = f32[1] constant({10})\n  b = f32[1] constant({20})\n  ROOT s = f32[1] select(c, a, b)\n}\n").unwrap();
    let allow = one_budget(Opcode::Exponential, ElementType::F32, (1, 0.0));
    // exp(0) = 1 exactly; within 1 ULP it may be below 1
    let b = enclose(&m, &[f32s(&[0.0])], &allow).unwrap();
    assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (10.0, 20.0));
    // far from the threshold the predicate is certain
    let b = enclose(&m, &[f32s(&[3.0])], &allow).unwrap();
    assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (20.0, 20.0));
}

#[test]
fn a_divisor_range_holding_zero_is_unbounded() {
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  s = f32[1] sine(x)\n  one = f32[1] constant({1})\n  ROOT d = f32[1] divide(one, s)\n}\n").unwrap();
    let allow = one_budget(Opcode::Sine, ElementType::F32, (0, 1e-6));
    let b = enclose(&m, &[f32s(&[1e-7])], &allow).unwrap();
    assert!(b[0].lo.get_f64(0).is_infinite() && b[0].hi.get_f64(0).is_infinite());
    assert!(b[0].nan[0]);
}

#[test]
fn an_unbounded_range_times_an_exact_zero_is_zero_or_nan_not_only_nan() {
    // the corners of [-inf, inf] * [0, 0] are all NaN, but every finite
    // value inside times zero is zero: a NaN-only enclosure would exclude
    // the reference's own value (and make a later compare certain)
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  s = f32[1] sine(x)\n  one = f32[1] constant({1})\n  d = f32[1] divide(one, s)\n  zero = f32[1] constant({0})\n  ROOT p = f32[1] multiply(d, zero)\n}\n").unwrap();
    let allow = one_budget(Opcode::Sine, ElementType::F32, (0, 1e-6));
    let x = f32s(&[1e-7]);
    let b = enclose(&m, std::slice::from_ref(&x), &allow).unwrap();
    let point = crate::reference::evaluate(&m, &[x]).unwrap()[0].get_bits(0);
    assert!(b[0].contains(0, point), "{:?}", b[0]);
    assert!(b[0].is_bounded(0), "{:?}", b[0]);
    assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (0.0, 0.0));
    assert!(b[0].nan[0], "an infinite d times zero is NaN");
}

#[test]
fn reassociated_sums_widen_and_exact_ones_do_not() {
    let m = parse_module("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n").unwrap();
    let x = f32s(&[1.0, 1e8, -1e8, 1.0]);
    let exact = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
    assert_eq!((exact[0].lo.get_f64(0), exact[0].hi.get_f64(0)), (2.0, 2.0));
    let allow = Allowances {
        reassociates: true,
        ..Allowances::default()
    };
    let any_order = enclose(&m, &[x], &allow).unwrap();
    // any order: (1 + 1e8) - 1e8 + 1 = 1 in f32, or 0
    assert!(any_order[0].contains(0, 0f32.to_bits() as u64));
    assert!(any_order[0].contains(0, 1f32.to_bits() as u64));
    assert!(!any_order[0].contains(0, 1e3f32.to_bits() as u64));
}

#[test]
fn a_flushed_subnormal_is_zero_not_a_range_down_to_zero() {
    // cbrt of a subnormal on a backend that flushes inputs: cbrt(x) or
    // cbrt(0) = 0, never a value between (the cbrt-of-subnormals bug)
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT c = f32[1] cbrt(x)\n}\n",
    )
    .unwrap();
    let x = f32s(&[1e-40]);
    let flushing = Allowances {
        flush_inputs: vec![ElementType::F32],
        ..Allowances::default()
    };
    let b = enclose(&m, std::slice::from_ref(&x), &flushing).unwrap();
    assert_eq!(b[0].lo.to_bits_vec(), vec![0]);
    assert_eq!(b[0].hi.to_bits_vec(), vec![0]);
    let kept = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
    let exact = crate::reference::evaluate(&m, &[x]).unwrap();
    assert_eq!(kept[0].lo.to_bits_vec(), exact[0].to_bits_vec());
    let half = (exact[0].get_f64(0) / 2.0) as f32;
    for e in [&b[0], &kept[0]] {
        assert!(!e.contains(0, u64::from(half.to_bits())));
    }
}

#[test]
fn flushed_outputs_include_zero() {
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT h = f32[1] multiply(x, x)\n}\n",
    )
    .unwrap();
    let allow = Allowances {
        flush_outputs: vec![ElementType::F32],
        ..Allowances::default()
    };
    let b = enclose(&m, &[f32s(&[1e-20])], &allow).unwrap();
    assert!(b[0].contains(0, 0));
    let none = enclose(&m, &[f32s(&[1e-20])], &Allowances::default()).unwrap();
    assert!(!none[0].contains(0, 0));
}

#[test]
fn data_movement_moves_ranges() {
    let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  t = f32[2,3] exponential(x)\n  ROOT r = f32[3,2] transpose(t), dimensions={1,0}\n}\n").unwrap();
    let x = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2, 3]),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    )
    .unwrap();
    let allow = one_budget(Opcode::Exponential, ElementType::F32, (1, 0.0));
    let b = enclose(&m, std::slice::from_ref(&x), &allow).unwrap();
    let point = crate::reference::evaluate(&m, &[x]).unwrap();
    for i in 0..6 {
        assert!(b[0].contains(i, point[0].get_bits(i)));
        assert!(b[0].lo.get_f64(i) < point[0].get_f64(i));
    }
}

#[test]
fn dots_enclose_their_inputs_ranges() {
    let m = parse_module("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n  l = f32[2,3] logistic(a)\n  ROOT d = f32[2,2] dot(l, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n").unwrap();
    let a = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2, 3]),
        &[0.1, -0.7, 2.0, 3.0, -1.5, 0.25],
    )
    .unwrap();
    let b = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![3, 2]),
        &[1.0, -2.0, 0.5, 4.0, -3.0, 1.25],
    )
    .unwrap();
    let exact = enclose(&m, &[a.clone(), b.clone()], &Allowances::default()).unwrap();
    let point = crate::reference::evaluate(&m, &[a.clone(), b.clone()]).unwrap();
    for i in 0..4 {
        assert!(exact[0].contains(i, point[0].get_bits(i)));
        // tight: a few ULP at most
        let w = exact[0].hi.get_f64(i) - exact[0].lo.get_f64(i);
        assert!(w <= 4.0 * f64::from(f32::EPSILON) * 8.0, "{w}");
    }
    let mut allow = Allowances {
        reassociates: true,
        ..Allowances::default()
    };
    allow
        .budgets
        .insert((Opcode::Logistic, ElementType::F32), (4, 0.0));
    let loose = enclose(&m, &[a, b], &allow).unwrap();
    for i in 0..4 {
        assert!(loose[0].lo.get_f64(i) <= exact[0].lo.get_f64(i));
        assert!(loose[0].hi.get_f64(i) > exact[0].hi.get_f64(i));
    }
}

mod integer_tests {
    use super::*;
    use crate::hlo::parse_module;

    #[test]
    fn integer_negate_and_abs_of_an_uncertain_range_are_unbounded_not_wrapped() {
        // an s8 index from an uncertain float: negate and abs would wrap at -128
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  e = f32[1] exponential(x)\n  i = s8[1] convert(e)\n  n = s8[1] negate(i)\n  a = s8[1] abs(i)\n  ROOT t = (s8[1], s8[1]) tuple(n, a)\n}\n").unwrap();
        let allow = one_budget(Opcode::Exponential, ElementType::F32, (1, 0.0));
        let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1]), &[0.0]).unwrap();
        let b = enclose(&m, &[x], &allow).unwrap();
        // exp(0) = 1 within one ULP: the convert is 0 or 1, not certain
        for out in &b {
            assert_eq!((out.lo.get_i128(0), out.hi.get_i128(0)), (-128, 127));
        }
    }
}

#[test]
fn colliding_overwrites_enclose_every_update_that_lands() {
    // updates 0..3 at indices {1, 1, 2, 1}: element 1 is any of 0, 1 or 3
    // (XLA's order of colliding updates is implementation-defined)
    let text = |comb: &str| {
        format!(
            "HloModule m\n{comb}\nENTRY e {{\n  x = s32[4] constant({{9, 9, 9, 9}})\n  i = s32[4,1] constant({{{{1}}, {{1}}, {{2}}, {{1}}}})\n  u = s32[4] iota(), iota_dimension=0\n  ROOT s = s32[4] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=c\n}}\n"
        )
    };
    let over = parse_module(&text(
        "c {\n  a = s32[] parameter(0)\n  ROOT b = s32[] parameter(1)\n}",
    ))
    .unwrap();
    let b = enclose(&over, &[], &Allowances::default()).unwrap();
    let range = |i| (b[0].lo.get_i128(i), b[0].hi.get_i128(i));
    assert_eq!(
        [range(0), range(1), range(2), range(3)],
        [(9, 9), (0, 3), (2, 2), (9, 9)]
    );
    // an order-free combiner keeps the point value
    let add = parse_module(&text(
        "c {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}",
    ))
    .unwrap();
    let b = enclose(&add, &[], &Allowances::default()).unwrap();
    assert_eq!(b[0].lo.to_bits_vec(), b[0].hi.to_bits_vec());
    assert_eq!(b[0].lo.get_i128(1), 9 + 4);
    // any other combiner over a collision bounds nothing there
    let sub = parse_module(&text(
        "c {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] subtract(a, b)\n}",
    ))
    .unwrap();
    let b = enclose(&sub, &[], &Allowances::default()).unwrap();
    assert_eq!(b[0].lo.get_i128(1), i128::from(i32::MIN));
    assert_eq!(b[0].lo.get_i128(2), b[0].hi.get_i128(2));
}

#[test]
fn a_triangular_solve_is_bounded_first_order_and_rng_bits_are_exact() {
    // exact inputs: a point for the rng bits and the new state (exact
    // integer arithmetic); for the solve, which no backend rounds
    // correctly, nothing in the interval evaluator and the substitution's
    // backward-error bound in the first-order one
    let m = parse_module("HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,1] parameter(1)\n  s = u64[2] parameter(2)\n  x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n  r = (u64[2], u32[3]) rng-bit-generator(s), algorithm=rng_philox\n  st = u64[2] get-tuple-element(r), index=0\n  bits = u32[3] get-tuple-element(r), index=1\n  ROOT t = (f32[2,1], u64[2], u32[3]) tuple(x, st, bits)\n}\n").unwrap();
    let f = |d: &[i64], v: &[f64]| {
        Literal::from_f64s(&ArrayShape::new(ElementType::F32, d.to_vec()), v).unwrap()
    };
    let s = Literal::from_bits(&ArrayShape::new(ElementType::U64, vec![2]), &[5, 6]).unwrap();
    let args = [
        f(&[2, 2], &[2.0, 0.0, 1.0, 4.0]),
        f(&[2, 1], &[2.0, 5.0]),
        s,
    ];
    let point = crate::reference::evaluate(&m, &args).unwrap();
    assert_eq!(point[0].to_f64_vec(), [1.0, 1.0]);
    let iv = enclose(&m, &args, &Allowances::default()).unwrap();
    assert!(!iv[0].is_bounded(0) && !iv[0].is_bounded(1));
    let fo = crate::reference::first_order_bounds(&m, &args, &Allowances::default()).unwrap();
    // x0 = 2/2 and x1 = (5 - 1*x0)/4: a few f32 ulps around 1, no more
    for i in 0..2 {
        assert!(fo[0].is_bounded(i));
        let (lo, hi) = (fo[0].lo.get_f64(i), fo[0].hi.get_f64(i));
        assert!(lo <= 1.0 && hi >= 1.0, "[{lo}, {hi}]");
        assert!(hi - lo < 1e-5, "[{lo}, {hi}]");
    }
    for b in [iv, fo] {
        for k in 1..3 {
            assert_eq!(b[k].lo.to_bits_vec(), point[k].to_bits_vec());
            assert_eq!(b[k].hi.to_bits_vec(), point[k].to_bits_vec());
        }
    }
}
