//! The first-order bound (`reference::first_order_bounds`) is sound and
//! tight: every value a backend within its declared numerics computes lies
//! inside it (random well-typed programs on the interpreter), loops and
//! deep chains keep it finite, and an elided rounding stays outside it.

mod common;

use xla_props::backend::{Backend, Interpreter};
use xla_props::hlo::{parse_module, ArrayShape, ElementType, Module};
use xla_props::inputs::{generate_inputs, Distribution, SplitMix};
use xla_props::literal::Literal;
use xla_props::reference::{evaluate, first_order_bounds, Allowances, Bounds};

fn run(b: &dyn Backend, m: &Module, args: &[Literal]) -> Option<Vec<Literal>> {
    b.compile(m).ok()?.execute(args).ok()
}

/// Elements of `actual` outside `bounds` where the reference is finite and
/// the bound says something.
fn outside(bounds: &[Bounds], expected: &[Literal], actual: &[Literal]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (k, (b, (e, a))) in bounds.iter().zip(expected.iter().zip(actual)).enumerate() {
        for i in 0..b.len() {
            if !e.get_f64(i).is_finite() || !b.is_bounded(i) {
                continue;
            }
            if !b.contains(i, a.get_bits(i)) {
                out.push((k, i));
            }
        }
    }
    out
}

#[test]
fn interpreter_results_lie_inside_the_first_order_bound_of_random_programs() {
    let interp = Interpreter::default();
    let allow = interp.numerics().allowances(false);
    let (mut checked, mut bounded, mut programs) = (0usize, 0usize, 0usize);
    let mut violations = Vec::new();
    for (seed, m, args) in common::random_programs_with_inputs(0..300) {
        let (Ok(expected), Some(actual)) = (evaluate(&m, &args), run(&interp, &m, &args)) else {
            continue;
        };
        let Ok(bounds) = first_order_bounds(&m, &args, &allow) else {
            continue;
        };
        programs += 1;
        for (b, e) in bounds.iter().zip(&expected) {
            for i in 0..b.len() {
                if e.get_f64(i).is_finite() {
                    checked += 1;
                    bounded += usize::from(b.is_bounded(i));
                }
            }
        }
        for (k, i) in outside(&bounds, &expected, &actual) {
            violations.push(format!(
                "seed {seed}: output {k} element {i}: {} not in [{}, {}]",
                actual[k].get_f64(i),
                bounds[k].lo.get_f64(i),
                bounds[k].hi.get_f64(i)
            ));
        }
    }
    assert!(programs > 150, "only {programs} programs ran");
    common::assert_none(&violations, "elements outside the bound");
    // tight enough to say something almost everywhere
    assert!(
        bounded * 10 >= checked * 9,
        "only {bounded} of {checked} elements bounded"
    );
}

const LOOP: &str = "HloModule loop
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = f32[] constant(0.9)
  kb = f32[8] broadcast(k), dimensions={}
  m = f32[8] multiply(v, kb)
  sv = f32[8] sine(v)
  v1 = f32[8] add(m, sv)
  ROOT t = (s32[], f32[8]) tuple(i1, v1)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[8]) tuple(z, x)
  w = (s32[], f32[8]) while(t0), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
";

#[test]
fn a_while_loop_carries_its_budgets_through_every_iteration() {
    let m = parse_module(LOOP).unwrap();
    let s = ArrayShape::new(ElementType::F32, vec![8]);
    let x = Literal::from_f64s(&s, &[0.1, 0.5, 1.0, 2.0, -1.0, -3.0, 4.0, 0.7]).unwrap();
    let mut allow = Allowances::default();
    allow
        .budgets
        .insert((xla_props::hlo::Opcode::Sine, ElementType::F32), (4, 0.0));
    let b = &first_order_bounds(&m, &[x], &allow).unwrap()[0];
    for i in 0..8 {
        assert!(b.is_bounded(i), "element {i} unbounded");
        let (lo, hi) = (b.lo.get_f64(i), b.hi.get_f64(i));
        let ulps = (hi - lo) / (f64::from(f32::EPSILON) * lo.abs().max(hi.abs()));
        // ten iterations of a 4-ulp sine: wider than a point, far below a bf16 step
        assert!(
            (4.0..4096.0).contains(&ulps),
            "element {i}: [{lo}, {hi}] is {ulps} ulp wide"
        );
    }
}

#[test]
fn an_elided_round_trip_stays_outside_the_bound_even_deep_in_a_graph() {
    // a layer-norm-like chain, then the quantization residual
    let text = include_str!("data/residual.hlo");
    let m = parse_module(text).unwrap();
    // model-scale inputs (|x| < 1, weights ~ 1/sqrt(16)): tanh does not saturate
    let args: Vec<Literal> = generate_inputs(&m, Distribution::Uniform, 3)
        .unwrap()
        .args
        .iter()
        .map(|a| {
            let v: Vec<f64> = a.to_f64_vec().iter().map(|x| x / 256.0).collect();
            Literal::from_f64s(&a.shape(), &v).unwrap()
        })
        .collect();
    let expected = evaluate(&m, &args).unwrap();
    let b = &first_order_bounds(&m, &args, &Allowances::default()).unwrap()[0];
    // the residual with the round trip elided is zero
    let (mut caught, mut nonzero) = (0, 0);
    for i in 0..b.len() {
        assert!(b.is_bounded(i));
        if expected[0].get_f64(i) != 0.0 {
            nonzero += 1;
            caught += usize::from(!b.contains(i, 0));
        }
    }
    assert!(nonzero * 2 > b.len(), "only {nonzero} non-zero residuals");
    // only an element whose interval holds an f16 rounding boundary may round either way
    assert!(
        caught * 10 >= nonzero * 9,
        "only {caught} of {nonzero} elided residuals outside the bound"
    );
}

#[test]
fn an_unbounded_operand_times_an_exact_zero_contributes_nothing_and_never_vanishes() {
    // `a` is made unbounded (a measured local error of inf); the mask's
    // first column is all zeros, its second is not: output column 0 stays
    // exact, column 1 is unbounded (inf * 0 in the radius's sum used to be
    // NaN, which `max` then read as no error at all)
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  a = f32[2,3] negate(x)\n  w = f32[3,2] constant({{0, 1}, {0, 2}, {0, 0}})\n  ROOT d = f32[2,2] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let x = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2, 3]),
        &[0.5, -1.25, 2.0, 3.0, 0.75, -0.5],
    )
    .unwrap();
    let unbounded =
        |name: &str, l: &Literal| (name == "a").then(|| vec![f64::INFINITY; l.element_count()]);
    let fo =
        xla_props::reference::FirstOrder::with_local(&m, &[x], &Allowances::default(), &unbounded)
            .unwrap();
    let r = &fo.radii[0];
    // column 0: no carried error, only the rounding of an exact zero
    assert!(r[0] < 1e-40 && r[2] < 1e-40, "{r:?}");
    assert!(r[1].is_infinite() && r[3].is_infinite(), "{r:?}");
}

const GE_ADD: &str = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n\
    add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

fn f32s(dims: Vec<i64>, v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(ElementType::F32, dims), v).unwrap()
}

/// Allowances of a backend whose `exponential` is within 2 ULP.
fn exp_budget() -> Allowances {
    let mut allow = Allowances::default();
    allow.budgets.insert(
        (xla_props::hlo::Opcode::Exponential, ElementType::F32),
        (2, 0.0),
    );
    allow
}

#[test]
fn a_maximum_whose_operands_stay_apart_moves_with_its_winner_only() {
    // relu(-exp(x)): exp moves by its budget, the result is exactly 0
    // whatever it returns; relu(exp(x)) moves with it
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  p = f32[2] exponential(x)\n  \
         s = f32[2] constant({-1, 1})\n  n = f32[2] multiply(p, s)\n  z = f32[2] constant({0, 0})\n  \
         ROOT r = f32[2] maximum(n, z)\n}\n",
    )
    .unwrap();
    let b = first_order_bounds(&m, &[f32s(vec![2], &[0.1, 0.1])], &exp_budget()).unwrap();
    assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (0.0, 0.0));
    assert!(b[0].is_bounded(1) && b[0].hi.get_f64(1) > b[0].lo.get_f64(1));
}

#[test]
fn a_select_and_scatter_is_bounded_and_may_flip_only_where_its_operands_are_close() {
    // two windows of a max-pool gradient: [exp(0.5), exp(0.5)] (a backend
    // within its budget may return them in either order) and [exp(3),
    // exp(2)] (apart); exact operands choose as the reference does, ties too
    let text = format!(
        "HloModule m\n{GE_ADD}ENTRY e {{\n  x = f32[1,4] parameter(0)\n  s = f32[1,2] parameter(1)\n  \
         p = f32[1,4] exponential(x)\n  z = f32[] constant(0)\n  \
         q = f32[1,4] select-and-scatter(p, s, z), window={{size=1x2 stride=1x2}}, select=ge, scatter=add\n  \
         e = f32[1,4] select-and-scatter(x, s, z), window={{size=1x2 stride=1x2}}, select=ge, scatter=add\n  \
         ROOT t = (f32[1,4], f32[1,4]) tuple(q, e)\n}}\n"
    );
    let m = parse_module(&text).unwrap();
    let x = f32s(vec![1, 4], &[0.5, 0.5, 3.0, 2.0]);
    let s = f32s(vec![1, 2], &[5.0, 7.0]);
    let b = first_order_bounds(&m, &[x.clone(), s.clone()], &exp_budget()).unwrap();
    let range = |b: &[Bounds], k: usize, i: usize| (b[k].lo.get_f64(i), b[k].hi.get_f64(i));
    // the close window: either element may get the 5
    for i in 0..2 {
        assert!(b[0].is_bounded(i));
        let (lo, hi) = range(&b, 0, i);
        assert!(lo <= 0.0 && hi >= 5.0, "element {i}: [{lo}, {hi}]");
    }
    // the window that stays apart: 7 at exp(3) (within the sum's
    // rounding), exactly 0 at exp(2)
    let near = |(lo, hi): (f64, f64), v: f64| lo <= v && v <= hi && hi - lo < 1e-5;
    assert!(near(range(&b, 0, 2), 7.0), "{:?}", range(&b, 0, 2));
    let (lo, hi) = range(&b, 0, 3);
    assert!(lo <= 0.0 && hi >= 0.0 && hi - lo < 1e-30, "[{lo}, {hi}]");
    // exact operands: the reference's choice
    let exact = evaluate(&m, &[x, s]).unwrap();
    for i in 0..4 {
        assert!(near(range(&b, 1, i), exact[1].get_f64(i)) || range(&b, 1, i) == (0.0, 0.0));
    }
    // and a tie of exact values keeps the first maximum
    let tie = f32s(vec![1, 4], &[0.0, 0.0, 0.0, 0.0]);
    let b = first_order_bounds(&m, &[tie, f32s(vec![1, 2], &[5.0, 7.0])], &exp_budget()).unwrap();
    assert!(near(range(&b, 1, 0), 5.0) && near(range(&b, 1, 2), 7.0));
    for i in [1, 3] {
        let (lo, hi) = range(&b, 1, i);
        assert!(lo <= 0.0 && hi >= 0.0 && hi - lo < 1e-30, "[{lo}, {hi}]");
    }
}

/// The argmax reducer XLA writes for a max-pool's gradient (ties to the left).
const ARGMAX: &str = "argmax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  \
     b = f32[] parameter(2)\n  j = s32[] parameter(3)\n  ge = pred[] compare(a, b), direction=GE\n  \
     va = f32[] select(ge, a, b)\n  vi = s32[] select(ge, i, j)\n  ROOT t = (f32[], s32[]) tuple(va, vi)\n}\n\
     add {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n";

#[test]
fn an_argmax_window_and_the_scatter_of_its_indices_stay_bounded() {
    // max-pool gradient as XLA rewrites it: a value-and-index reduce-window
    // over exp(x) (inexact), then a scatter-add of the gradient at the
    // indices. Window [exp(0.5), exp(0.5)] may pick either element; window
    // [exp(3), exp(2)] stays apart.
    let text = format!(
        "HloModule m\n{ARGMAX}ENTRY e {{\n  x = f32[4] parameter(0)\n  g = f32[2] parameter(1)\n  \
         p = f32[4] exponential(x)\n  k = s32[4] iota(), iota_dimension=0\n  \
         ninf = f32[] constant(-inf)\n  none = s32[] constant(-1)\n  \
         w = (f32[2], s32[2]) reduce-window(p, k, ninf, none), window={{size=2 stride=2}}, to_apply=argmax\n  \
         wi = s32[2] get-tuple-element(w), index=1\n  idx = s32[2,1] reshape(wi)\n  \
         z = f32[] constant(0)\n  zs = f32[4] broadcast(z), dimensions={{}}\n  \
         sc = f32[4] scatter(zs, idx, g), update_window_dims={{}}, inserted_window_dims={{0}}, \
         scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n  \
         ROOT t = (s32[2], f32[4]) tuple(wi, sc)\n}}\n"
    );
    let m = parse_module(&text).unwrap();
    let x = f32s(vec![4], &[0.5, 0.5, 3.0, 2.0]);
    let g = f32s(vec![2], &[5.0, 7.0]);
    let b = first_order_bounds(&m, &[x, g], &exp_budget()).unwrap();
    let range = |k: usize, i: usize| (b[k].lo.get_f64(i), b[k].hi.get_f64(i));
    // the close window's index is 0 or 1 (a radius of 1 around 0); the
    // other one is 2 exactly
    let (lo, hi) = range(0, 0);
    assert!(lo <= 0.0 && hi >= 1.0 && hi - lo <= 2.0, "[{lo}, {hi}]");
    assert_eq!(range(0, 1), (2.0, 2.0));
    // either element of the close window may get the 5
    for i in 0..2 {
        assert!(b[1].is_bounded(i));
        let (lo, hi) = range(1, i);
        assert!(
            lo <= 0.0 && (5.0..11.0).contains(&hi),
            "element {i}: [{lo}, {hi}]"
        );
    }
    // the window that stays apart: 7 at exp(3), exactly 0 at exp(2)
    let (lo, hi) = range(1, 2);
    assert!(lo <= 7.0 && 7.0 <= hi && hi - lo < 1e-5, "[{lo}, {hi}]");
    let (lo, hi) = range(1, 3);
    assert!(lo <= 0.0 && hi >= 0.0 && hi - lo < 1e-30, "[{lo}, {hi}]");
}

#[test]
fn a_value_compared_with_its_own_maximum_is_decided_where_the_maximum_cannot_flip() {
    // JAX's derivative of maximum: select(s == max(s, 0), 1, 0), on an
    // inexact s well away from 0 (it would be undecided on radii alone)
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  p = f32[2] exponential(x)\n  \
         c = f32[2] constant({1.2, 1.2})\n  s = f32[2] subtract(p, c)\n  z = f32[2] constant({0, 0})\n  \
         mx = f32[2] maximum(s, z)\n  q = pred[2] compare(s, mx), direction=EQ\n  \
         one = f32[2] constant({1, 1})\n  ROOT r = f32[2] select(q, one, z)\n}\n",
    )
    .unwrap();
    let b = first_order_bounds(&m, &[f32s(vec![2], &[0.1, 1.0])], &exp_budget()).unwrap();
    assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (0.0, 0.0));
    assert_eq!((b[0].lo.get_f64(1), b[0].hi.get_f64(1)), (1.0, 1.0));
}

/// Halves `exp(x)` until it drops below 1, counting the halvings.
const HALVINGS: &str = "
HloModule halvings
cond {
  s = (s32[], f32[]) parameter(0)
  v = f32[] get-tuple-element(s), index=1
  one = f32[] constant(1)
  ROOT c = pred[] compare(v, one), direction=GE
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[] get-tuple-element(s), index=1
  k = s32[] constant(1)
  i1 = s32[] add(i, k)
  h = f32[] constant(0.5)
  v1 = f32[] multiply(v, h)
  ROOT t = (s32[], f32[]) tuple(i1, v1)
}
ENTRY e {
  x = f32[] parameter(0)
  e = f32[] exponential(x)
  z = s32[] constant(0)
  t0 = (s32[], f32[]) tuple(z, e)
  w = (s32[], f32[]) while(t0), condition=cond, body=body
  n = s32[] get-tuple-element(w), index=0
  v = f32[] get-tuple-element(w), index=1
  ROOT r = (s32[], f32[]) tuple(n, v)
}
";

#[test]
fn a_loop_whose_exit_may_move_covers_every_iteration_it_may_stop_at() {
    let m = parse_module(HALVINGS).unwrap();
    let scalar = |v: f64| Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![]), &[v]);
    // exp(ln 4) is 4 within 2 ulp: 4 halvings to 0.5, or 3 to just below 1
    let near = first_order_bounds(&m, &[scalar(4f64.ln()).unwrap()], &exp_budget()).unwrap();
    let (n, v) = (&near[0], &near[1]);
    assert!(
        n.is_bounded(0) && v.is_bounded(0),
        "a loop that may stop one early is unbounded"
    );
    for (count, value) in [(2.0, 0.999_999_94), (3.0, 0.5)] {
        assert!(
            n.lo.get_f64(0) <= count && count <= n.hi.get_f64(0),
            "count {count}: {n:?}"
        );
        assert!(
            v.lo.get_f64(0) <= value && value <= v.hi.get_f64(0),
            "value {value}: {v:?}"
        );
    }
    // exp(ln 3) stays far from a power of two: one trip count, a tight bound
    let far = first_order_bounds(&m, &[scalar(3f64.ln()).unwrap()], &exp_budget()).unwrap();
    assert_eq!((far[0].lo.get_f64(0), far[0].hi.get_f64(0)), (2.0, 2.0));
    let w = far[1].hi.get_f64(0) - far[1].lo.get_f64(0);
    assert!(w > 0.0 && w < 1e-6, "value bound {w} wide");
}

/// Per element: halves `v` and triples `x` while `v >= 1`, JAX's masked
/// form (a flag array anded each step, every array selected by it).
const MASKED: &str = "
HloModule masked
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
cond {
  s = (pred[2], f32[2], f32[2]) parameter(0)
  f = pred[2] get-tuple-element(s), index=0
  no = pred[] constant(false)
  ROOT any = pred[] reduce(f, no), dimensions={0}, to_apply=or
}
body {
  s = (pred[2], f32[2], f32[2]) parameter(0)
  f = pred[2] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  x = f32[2] get-tuple-element(s), index=2
  h = f32[] constant(0.5)
  hb = f32[2] broadcast(h), dimensions={}
  t = f32[] constant(3)
  tb = f32[2] broadcast(t), dimensions={}
  one = f32[] constant(1)
  ob = f32[2] broadcast(one), dimensions={}
  v1 = f32[2] multiply(v, hb)
  x1 = f32[2] multiply(x, tb)
  go = pred[2] compare(v1, ob), direction=GE
  f1 = pred[2] and(f, go)
  v2 = f32[2] select(f, v1, v)
  x2 = f32[2] select(f, x1, x)
  ROOT r = (pred[2], f32[2], f32[2]) tuple(f1, v2, x2)
}
ENTRY e {
  p = f32[2] parameter(0)
  v0 = f32[2] exponential(p)
  one = f32[] constant(1)
  ob = f32[2] broadcast(one), dimensions={}
  f0 = pred[2] compare(v0, ob), direction=GE
  t0 = (pred[2], f32[2], f32[2]) tuple(f0, v0, ob)
  w = (pred[2], f32[2], f32[2]) while(t0), condition=cond, body=body
  ROOT x = f32[2] get-tuple-element(w), index=2
}
";

#[test]
fn a_masked_loop_widens_only_the_element_whose_flag_may_fall() {
    let m = parse_module(MASKED).unwrap();
    // exp(ln 4) is 4 within 2 ulp: 2 or 3 halvings (x = 9 or 27); exp(ln 300)
    // takes 9 halvings whatever exp returns (x = 3^9)
    let p = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![2]),
        &[4f64.ln(), 300f64.ln()],
    )
    .unwrap();
    let b = &first_order_bounds(&m, &[p], &exp_budget()).unwrap()[0];
    let (lo, hi) = (b.lo.get_f64(0), b.hi.get_f64(0));
    assert!(lo <= 9.0 && 27.0 <= hi, "x[0] in [{lo}, {hi}]");
    // a radius about the reference's value (9 or 27) that reaches the other
    // outcome: the flag that may fall is certainly down one halving later
    // (an `and` with a certain false), so the element is not widened
    // through the other's six more iterations
    assert!(hi < 46.0, "x[0] in [{lo}, {hi}]");
    assert_eq!((b.lo.get_f64(1), b.hi.get_f64(1)), (19683.0, 19683.0));
}

const SCATTER_ADD: &str = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
    ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[2] parameter(0)\n  i = s32[12,1] parameter(1)\n  \
    u = f32[12] parameter(2)\n  ROOT s = f32[2] scatter(x, i, u), update_window_dims={}, \
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";

#[test]
fn every_order_of_a_colliding_scatter_add_lies_inside_its_bound() {
    // the reference folds colliding updates in row order, rounding each
    // partial sum, so its value is one order's; the bound holds every other
    // order's (the updates' rows permuted), whose sums it centres on
    let m = parse_module(SCATTER_ADD).unwrap();
    let allow = Allowances {
        reassociates: true,
        ..Allowances::default()
    };
    let (mut outside, mut orders) = (Vec::new(), 0usize);
    for seed in 1..400u64 {
        let mut s = SplitMix::new(seed);
        let value = |s: &mut SplitMix| {
            let r = s.next_u64();
            let mag =
                2f64.powi((r % 21) as i32 - 10) * (1.0 + (r >> 11) as f64 / (1u64 << 53) as f64);
            let v = if r & (1 << 10) == 0 { mag } else { -mag };
            f64::from(v as f32)
        };
        let x: Vec<f64> = (0..2).map(|_| value(&mut s)).collect();
        let rows: Vec<(f64, f64)> = (0..12)
            .map(|_| ((s.next_u64() % 2) as f64, value(&mut s)))
            .collect();
        let args = |rows: &[(f64, f64)]| {
            let idx: Vec<f64> = rows.iter().map(|r| r.0).collect();
            let upd: Vec<f64> = rows.iter().map(|r| r.1).collect();
            vec![
                f32s(vec![2], &x),
                Literal::from_f64s(&ArrayShape::new(ElementType::S32, vec![12, 1]), &idx).unwrap(),
                f32s(vec![12], &upd),
            ]
        };
        let b = first_order_bounds(&m, &args(&rows), &allow).unwrap();
        let mut permuted = vec![rows.iter().rev().copied().collect::<Vec<_>>()];
        let mut by_size = rows.clone();
        by_size.sort_by(|p, q| p.1.abs().total_cmp(&q.1.abs()));
        permuted.push(by_size.iter().rev().copied().collect());
        permuted.push(by_size);
        for _ in 0..4 {
            let mut shuffled = rows.clone();
            for k in (1..shuffled.len()).rev() {
                shuffled.swap(k, (s.next_u64() % (k as u64 + 1)) as usize);
            }
            permuted.push(shuffled);
        }
        for p in &permuted {
            let other = evaluate(&m, &args(p)).unwrap();
            orders += 1;
            for i in 0..2 {
                if !b[0].contains(i, other[0].get_bits(i)) {
                    outside.push(format!(
                        "seed {seed} [{i}]: {} outside [{}, {}]",
                        other[0].get_f64(i),
                        b[0].lo.get_f64(i),
                        b[0].hi.get_f64(i)
                    ));
                }
            }
        }
    }
    assert!(orders > 2000, "only {orders} orders ran");
    assert!(
        outside.is_empty(),
        "{}",
        outside[..outside.len().min(10)].join("\n")
    );
}

#[test]
fn a_maximum_that_combines_exact_operands_rounds_nothing() {
    // max-combining reduce-window and scatter return one of their operands'
    // values: odd-mantissa values (whose half-step neighbourhood rounds to
    // the even neighbour) stay points
    let m = parse_module(
        "HloModule m\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT m = f32[] maximum(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  \
         c = f32[] constant(-inf)\n  w = f32[2] reduce-window(x, c), window={size=2 stride=2}, to_apply=max\n  \
         i = s32[4,1] parameter(1)\n  s = f32[4] scatter(x, i, x), update_window_dims={}, \
         inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max\n  \
         ROOT t = (f32[2], f32[4]) tuple(w, s)\n}\n",
    )
    .unwrap();
    let odd = |v: f64| v * (1.0 + f64::from(f32::EPSILON));
    let x = f32s(vec![4], &[odd(3.0), odd(-5.0), odd(0.75), odd(1.5)]);
    let idx = Literal::from_f64s(
        &ArrayShape::new(ElementType::S32, vec![4, 1]),
        &[1.0, 0.0, 3.0, 2.0],
    )
    .unwrap();
    let b = first_order_bounds(&m, &[x, idx], &Allowances::default()).unwrap();
    for out in &b {
        for i in 0..out.len() {
            assert_eq!(
                out.lo.get_bits(i),
                out.hi.get_bits(i),
                "element {i} widened"
            );
        }
    }
}

#[test]
fn a_conversion_to_integer_of_a_moved_value_may_step_past_the_integer() {
    // exp(ln 2) within 2 ULP straddles 2.0: truncation gives 1 or 2, and
    // the float it converts back to is 1 or 2 (an integer convert is not the
    // identity that an f64 run of it would be)
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  p = f32[] exponential(x)\n  \
         c = s32[] convert(p)\n  ROOT f = f32[] convert(c)\n}\n",
    )
    .unwrap();
    let x = f32s(vec![], &[f64::from(std::f32::consts::LN_2)]);
    let b = first_order_bounds(&m, &[x], &exp_budget()).unwrap();
    for v in [1.0, 2.0] {
        let l = f32s(vec![], &[v]);
        assert!(
            b[0].contains(0, l.get_bits(0)),
            "{v} outside the bound of f32(s32(exp(ln 2)))"
        );
    }
}

#[test]
fn a_masked_element_far_below_the_maximum_does_not_move_it() {
    // a causal mask: logits at about 1, a masked one at -1e30 whose radius
    // (its budget at that magnitude, ~1e23) is far wider than the gap it
    // would have to cross; the maximum moves with the live logits only.
    // The masked element alone still moves its own (all-masked) row
    let m = parse_module(
        "HloModule m\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT m = f32[] maximum(a, b)\n}\nENTRY e {\n  x = f32[2,3] parameter(0)\n  \
         p = f32[2,3] exponential(x)\n  s = f32[2,3] constant({{1, 1, -1e30}, {-1e30, -1e30, -1e30}})\n  \
         l = f32[2,3] multiply(p, s)\n  c = f32[] constant(-inf)\n  \
         ROOT r = f32[2] reduce(l, c), dimensions={1}, to_apply=max\n}\n",
    )
    .unwrap();
    let x = f32s(vec![2, 3], &[0.1, 0.2, 0.0, 0.0, 0.0, 0.0]);
    let b = first_order_bounds(&m, &[x], &exp_budget()).unwrap();
    let (lo, hi) = (b[0].lo.get_f64(0), b[0].hi.get_f64(0));
    let max = 0.2f64.exp();
    assert!(lo <= max && max <= hi, "[{lo}, {hi}] misses {max}");
    // within a few ulp of the live maximum (its exp budget, the product's
    // rounding, either side), never the masked element's 1e23
    assert!(
        hi - lo <= 16.0 * f64::from(f32::EPSILON) * max,
        "[{lo}, {hi}]"
    );
    // the all-masked row moves by its own radius, about 1e30 * 2^-22
    let (lo1, hi1) = (b[0].lo.get_f64(1), b[0].hi.get_f64(1));
    assert!(hi1 - lo1 > 1e22 && lo1 <= -1e30 && -1e30 <= hi1);
}
