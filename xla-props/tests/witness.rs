//! Witness runs (`reference::witness_bounds`): the reference run again with
//! every instruction moved within its declared numerics. Their hull never
//! claims a value that the first-order bound of the same numerics excludes
//! (random programs), it moves nothing a correctly rounded program cannot
//! move, and it reaches the legal outputs of JAX's f64 incomplete gamma,
//! whose continued fraction the first-order bound cannot follow.

mod common;

use std::collections::HashMap;
use xla_props::check::{excess_witness_bounds, Aim, Judge, LegalReason, Numerics, Policy, Verdict};
use xla_props::hlo::{parse_module, ArrayShape, ElementType, Module, Opcode};
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::literal::Literal;
use xla_props::reference::{evaluate, first_order_bounds, witness_bounds, Allowances, Bounds};

/// Numerics with room to move: approximate functions of a few ulp, sums in
/// any order, multiply-adds contracted.
fn loose() -> Allowances {
    let mut budgets = HashMap::new();
    for op in [
        Opcode::Exponential,
        Opcode::ExponentialMinusOne,
        Opcode::Log,
        Opcode::LogPlusOne,
        Opcode::Logistic,
        Opcode::Tanh,
        Opcode::Sine,
        Opcode::Cosine,
        Opcode::Power,
        Opcode::Rsqrt,
    ] {
        for t in [ElementType::F32, ElementType::F64, ElementType::F16] {
            budgets.insert((op, t), (3, 0.0));
        }
    }
    Allowances {
        budgets,
        reassociates: true,
        contracts_multiply_add: true,
        ..Allowances::default()
    }
}

fn widened(b: &Bounds, i: usize) -> bool {
    b.lo.get_bits(i) != b.hi.get_bits(i)
}

#[test]
fn witness_runs_stay_inside_the_first_order_bound_of_random_programs() {
    let allow = loose();
    let mut programs = 0usize;
    let mut tally = Tally::default();
    for (seed, m, args) in common::random_programs_with_inputs(0..2600) {
        let (Ok(bounds), Ok(hulls)) = (
            first_order_bounds(&m, &args, &allow),
            witness_bounds(&m, &args, &allow),
        ) else {
            continue;
        };
        programs += 1;
        tally.add(seed, &bounds, &hulls);
    }
    assert!(programs >= 1300, "only {programs} programs ran");
    tally.check();
}

/// Witnessed hulls against first-order bounds, over many programs.
#[derive(Default)]
struct Tally {
    checked: usize,
    moved: usize,
    violations: Vec<String>,
}

impl Tally {
    /// Every bounded element of `bounds` whose witnessed hull is finite.
    fn add(&mut self, seed: u64, bounds: &[Bounds], hulls: &[Bounds]) {
        for (k, (b, h)) in bounds.iter().zip(hulls).enumerate() {
            assert_eq!(b.len(), h.len(), "seed {seed}: output {k} sizes");
            for i in 0..b.len() {
                let (lo, hi) = (h.lo.get_f64(i), h.hi.get_f64(i));
                if !b.is_bounded(i) || !lo.is_finite() || !hi.is_finite() {
                    continue;
                }
                self.checked += 1;
                self.moved += usize::from(widened(h, i));
                if !b.contains(i, h.lo.get_bits(i)) || !b.contains(i, h.hi.get_bits(i)) {
                    self.violations.push(format!(
                        "seed {seed} output {k}[{i}]: witnessed [{lo:e}, {hi:e}] bound [{:e}, {:e}]",
                        b.lo.get_f64(i),
                        b.hi.get_f64(i)
                    ));
                }
            }
        }
    }

    /// The witness moved at least one element in 20, and never past a bound.
    fn check(&self) {
        let (checked, moved) = (self.checked, self.moved);
        assert!(
            moved * 20 >= checked,
            "the witness moved only {moved} of {checked} elements: the test checks little"
        );
        assert!(
            self.violations.is_empty(),
            "{} of {checked} witnessed elements outside the first-order bound:\n{}",
            self.violations.len(),
            self.violations[..self.violations.len().min(20)].join("\n")
        );
    }
}

#[test]
fn a_correctly_rounded_program_has_nothing_to_move() {
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  \
         p = f32[4] multiply(x, y)\n  d = f32[4] divide(p, y)\n  ROOT s = f32[4] subtract(d, x)\n}\n",
    )
    .unwrap();
    let shape = ArrayShape::new(ElementType::F32, vec![4]);
    let x = Literal::from_f64s(&shape, &[0.1, 1.7, -3.3, 1e-3]).unwrap();
    let y = Literal::from_f64s(&shape, &[3.0, 0.7, 11.0, 7.0]).unwrap();
    let strict = Allowances::default();
    let h = witness_bounds(&m, &[x.clone(), y.clone()], &strict).unwrap();
    let e = evaluate(&m, &[x, y]).unwrap();
    for i in 0..4 {
        assert_eq!(h[0].lo.get_bits(i), e[0].get_bits(i), "element {i}");
        assert_eq!(h[0].hi.get_bits(i), e[0].get_bits(i), "element {i}");
    }
}

#[test]
fn an_approximate_function_moves_by_its_budget_and_no_more() {
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT y = f32[3] exponential(x)\n}\n",
    )
    .unwrap();
    let shape = ArrayShape::new(ElementType::F32, vec![3]);
    let x = Literal::from_f64s(&shape, &[0.5, -2.0, 3.25]).unwrap();
    let mut allow = Allowances::default();
    allow
        .budgets
        .insert((Opcode::Exponential, ElementType::F32), (2, 0.0));
    let h = witness_bounds(&m, std::slice::from_ref(&x), &allow).unwrap();
    let e = evaluate(&m, &[x]).unwrap();
    for i in 0..3 {
        let v = e[0].get_f64(i) as f32;
        let ulp = f64::from(v.next_up() - v);
        let (lo, hi) = (h[0].lo.get_f64(i), h[0].hi.get_f64(i));
        assert!(
            lo < f64::from(v) && hi > f64::from(v),
            "element {i}: not moved"
        );
        // two ulp either side (three at a binade's edge, counted from above)
        assert!(f64::from(v) - lo <= 3.0 * ulp && hi - f64::from(v) <= 3.0 * ulp);
    }
}

/// JAX's f64 `igamma` (a series and a continued fraction in `while` loops)
/// under xla-cpu's declared numerics: the first-order bound is unbounded at
/// elements where the witness hull is finite and wider than the reference's
/// point (the elements xla-cpu's run differs at by up to 122 ulp,
/// docs/repro/jax-igamma-f64).
#[test]
fn the_witness_reaches_where_the_bound_cannot_in_jax_igamma_f64() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/harnesses/igamma_dtypes_lhs_float64_20_20_rhs_float64_20_20.before.hlo"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let m: Module = parse_module(&text).unwrap();
    let inputs = generate_inputs(&m, Distribution::Uniform, 0).unwrap();
    // xla-cpu's declared numerics (its f64 exp and log1p budgets)
    let xla = xla_props::backend::xla::config::builtin_backend("xla-cpu").unwrap();
    let allow = xla.numerics.allowances(false);
    let bounds = first_order_bounds(&m, &inputs.args, &allow).unwrap();
    let hulls = witness_bounds(&m, &inputs.args, &allow).unwrap();
    let e = evaluate(&m, &inputs.args).unwrap();
    let reached = (0..e[0].element_count())
        .filter(|&i| e[0].get_f64(i).is_finite())
        .filter(|&i| !bounds[0].is_bounded(i))
        .filter(|&i| {
            let (lo, hi) = (hulls[0].lo.get_f64(i), hulls[0].hi.get_f64(i));
            lo.is_finite() && hi.is_finite() && widened(&hulls[0], i)
        })
        .count();
    let finite = (0..e[0].element_count())
        .filter(|&i| e[0].get_f64(i).is_finite())
        .count();
    let unbounded = (0..e[0].element_count())
        .filter(|&i| e[0].get_f64(i).is_finite() && !bounds[0].is_bounded(i))
        .count();
    let moved = (0..e[0].element_count())
        .filter(|&i| widened(&hulls[0], i))
        .count();
    assert!(
        reached > 0,
        "no element where the bound is unbounded has a witnessed range \
         ({finite} finite, {unbounded} of them unbounded, {moved} moved)"
    );
}

/// The first two elements of each float output of a random program aimed
/// at, both ways, to the end of the type's range (so every search runs to
/// its end: passes of flips, then blocks of elements).
fn every_aim(out: &[Literal]) -> Vec<Aim> {
    out.iter()
        .enumerate()
        .filter(|(_, l)| l.dtype().is_float())
        .flat_map(|(k, l)| {
            (0..l.element_count().min(2)).flat_map(move |i| {
                [true, false].map(|up| Aim {
                    output: k,
                    element: i,
                    up,
                    target: if up { f64::INFINITY } else { f64::NEG_INFINITY },
                })
            })
        })
        .collect()
}

/// The excess-precision witness (`check::excess_witness_bounds`): each of
/// its runs keeps some narrow values in f32, which a backend allowed excess
/// precision anywhere may do, so its hull stays inside the first-order
/// bound of those numerics (which widens each narrow result by a step).
#[test]
fn excess_witness_runs_stay_inside_the_first_order_bound_of_random_programs() {
    let allow = Allowances {
        excess_anywhere: true,
        ..Allowances::default()
    };
    let mut programs = 0usize;
    let mut tally = Tally::default();
    // seed 1687 (an f8e4m3fn NaN kept past its type) found a way out once
    let seeds = common::random_programs_with_inputs(0..1300)
        .chain(common::random_programs_with_inputs(1687..1688));
    for (seed, m, args) in seeds {
        let Ok(reference) = evaluate(&m, &args) else {
            continue;
        };
        let aims = every_aim(&reference);
        let (Ok(bounds), Ok(Some(w))) = (
            first_order_bounds(&m, &args, &allow),
            excess_witness_bounds(&m, &args, &reference, &aims),
        ) else {
            continue;
        };
        programs += 1;
        tally.add(seed, &bounds, &w.bounds);
    }
    assert!(programs >= 300, "only {programs} narrow programs ran");
    tally.check();
}

/// `1 / (x*x - y*w)` in bf16 with the products close: the difference
/// cancels, so whether `y*w` is rounded to bf16 or kept in f32 moves the
/// quotient by far more than the first-order bound can carry (its divisor's
/// interval covers zero). A backend that keeps only `y*w` in f32 is legal
/// under excess precision anywhere: the excess witness reaches it, and the
/// judge accepts it as witnessed. The same values are a mismatch for a
/// backend that must round as written, and a value no run reaches is a
/// mismatch under excess precision too.
#[test]
fn the_excess_witness_reaches_a_product_kept_in_f32_where_the_bound_cannot() {
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = bf16[4] parameter(0)\n  y = bf16[4] parameter(1)\n  \
         w = bf16[4] parameter(2)\n  one = bf16[] constant(1)\n  \
         ones = bf16[4] broadcast(one), dimensions={}\n  p = bf16[4] multiply(x, x)\n  \
         q = bf16[4] multiply(y, w)\n  d = bf16[4] subtract(p, q)\n  \
         ROOT r = bf16[4] divide(ones, d)\n}\n",
    )
    .unwrap();
    // the backend's run: `q` kept in f32, everything else rounded
    let kept = parse_module(
        "HloModule m\nENTRY e {\n  x = bf16[4] parameter(0)\n  y = bf16[4] parameter(1)\n  \
         w = bf16[4] parameter(2)\n  x32 = f32[4] convert(x)\n  y32 = f32[4] convert(y)\n  \
         w32 = f32[4] convert(w)\n  p32 = f32[4] multiply(x32, x32)\n  \
         p16 = bf16[4] convert(p32)\n  p = f32[4] convert(p16)\n  \
         q = f32[4] multiply(y32, w32)\n  d32 = f32[4] subtract(p, q)\n  \
         d16 = bf16[4] convert(d32)\n  d = f32[4] convert(d16)\n  one = f32[] constant(1)\n  \
         ones = f32[4] broadcast(one), dimensions={}\n  r32 = f32[4] divide(ones, d)\n  \
         ROOT r = bf16[4] convert(r32)\n}\n",
    )
    .unwrap();
    let shape = ArrayShape::new(ElementType::Bf16, vec![4]);
    let x = Literal::from_f64s(&shape, &[1.0625; 4]).unwrap();
    let y = Literal::from_f64s(&shape, &[1.0078125, 1.0078125, 1.0234375, 1.0390625]).unwrap();
    let w = Literal::from_f64s(&shape, &[1.109375, 1.125, 1.09375, 1.078125]).unwrap();
    let args = [x, y, w];
    let expected = evaluate(&m, &args).unwrap();
    let actual = evaluate(&kept, &args).unwrap();
    let differ = (0..4)
        .filter(|&i| expected[0].get_bits(i) != actual[0].get_bits(i))
        .count();
    assert_eq!(differ, 4, "the kept product changes too little to test");
    let allow = Allowances {
        excess_anywhere: true,
        ..Allowances::default()
    };
    let bound = first_order_bounds(&m, &args, &allow).unwrap();
    assert!(
        (0..4).all(|i| !bound[0].is_bounded(i)),
        "the first-order bound is finite: the test needs the witness no more"
    );

    let mut excess = Numerics::exact();
    excess.excess_precision_anywhere = true;
    let v = Judge::new(&excess, &[], Policy::Reference).against_reference(&m, &args, &actual);
    let Verdict::Agree(a) = &v else {
        panic!("a product kept in f32 is legal under excess precision: {v:?}")
    };
    assert!(a.legal.contains_key(&LegalReason::Witnessed), "{a:?}");

    let exact = Numerics::exact();
    let v = Judge::new(&exact, &[], Policy::Reference).against_reference(&m, &args, &actual);
    assert!(v.is_disagreement(), "rounding as written: {v:?}");

    // twice the kept run's departure is reached by no run
    let mut far = actual[0].clone();
    for i in 0..4 {
        let (e, a) = (expected[0].get_f64(i), actual[0].get_f64(i));
        far.set_f64(i, e + 4.0 * (a - e));
    }
    let v = Judge::new(&excess, &[], Policy::Reference).against_reference(&m, &args, &[far]);
    assert!(v.is_disagreement(), "beyond every legal run: {v:?}");
}

/// Two sums of bf16 products: the largest (smallest) sum a legal run
/// reaches keeps each product in f32 exactly where its rounding would lower
/// (raise) it, element by element, which neither every product kept nor
/// every one rounded gives. The excess witness's reverse pass chooses each
/// element its way and reaches both.
#[test]
fn the_excess_witness_chooses_element_by_element_where_a_sum_needs_it() {
    let sums = |term: &str| {
        format!(
            "HloModule m\nadd {{\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  \
             ROOT s = f32[] add(x, y)\n}}\nENTRY e {{\n  a = bf16[4096] parameter(0)\n  \
             b = bf16[4096] parameter(1)\n  c = bf16[4096] parameter(2)\n  \
             d = bf16[4096] parameter(3)\n  zero = f32[] constant(0)\n{term}\n  \
             s1 = f32[] reduce(f1, zero), dimensions={{0}}, to_apply=add\n  \
             s2 = f32[] reduce(f2, zero), dimensions={{0}}, to_apply=add\n  \
             ROOT r = (f32[], f32[]) tuple(s1, s2)\n}}\n"
        )
    };
    let m = parse_module(&sums(
        "  p1 = bf16[4096] multiply(a, b)\n  p2 = bf16[4096] multiply(c, d)\n  \
         f1 = f32[4096] convert(p1)\n  f2 = f32[4096] convert(p2)",
    ))
    .unwrap();
    // per element the larger (smaller) of the product and its rounding
    let extreme = parse_module(&sums(
        "  a32 = f32[4096] convert(a)\n  b32 = f32[4096] convert(b)\n  \
         c32 = f32[4096] convert(c)\n  d32 = f32[4096] convert(d)\n  \
         q1 = f32[4096] multiply(a32, b32)\n  q2 = f32[4096] multiply(c32, d32)\n  \
         r1 = bf16[4096] convert(q1)\n  r2 = bf16[4096] convert(q2)\n  \
         g1 = f32[4096] convert(r1)\n  g2 = f32[4096] convert(r2)\n  \
         f1 = f32[4096] maximum(q1, g1)\n  f2 = f32[4096] minimum(q2, g2)",
    ))
    .unwrap();
    let every = |kept: bool| {
        let t = if kept { "f32" } else { "bf16" };
        parse_module(&sums(&format!(
            "  a32 = f32[4096] convert(a)\n  b32 = f32[4096] convert(b)\n  \
             c32 = f32[4096] convert(c)\n  d32 = f32[4096] convert(d)\n  \
             q1 = f32[4096] multiply(a32, b32)\n  q2 = f32[4096] multiply(c32, d32)\n  \
             r1 = {t}[4096] convert(q1)\n  r2 = {t}[4096] convert(q2)\n  \
             f1 = f32[4096] convert(r1)\n  f2 = f32[4096] convert(r2)"
        )))
        .unwrap()
    };
    let shape = ArrayShape::new(ElementType::Bf16, vec![4096]);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut draw = || {
        let v: Vec<f64> = (0..4096)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                1.0 + (state >> 40) as f64 / (1u64 << 24) as f64
            })
            .collect();
        Literal::from_f64s(&shape, &v).unwrap()
    };
    let args: Vec<Literal> = (0..4).map(|_| draw()).collect();
    let reference = evaluate(&m, &args).unwrap();
    let target = evaluate(&extreme, &args).unwrap();
    let (t1, t2) = (target[0].get_f64(0), target[1].get_f64(0));
    for kept in [true, false] {
        let whole = evaluate(&every(kept), &args).unwrap();
        assert!(
            whole[0].get_f64(0) < t1 && whole[1].get_f64(0) > t2,
            "every product {} reaches the extremes: the test needs no element choice",
            if kept { "kept" } else { "rounded" }
        );
    }
    let aims = [
        Aim {
            output: 0,
            element: 0,
            up: true,
            target: t1,
        },
        Aim {
            output: 1,
            element: 0,
            up: false,
            target: t2,
        },
    ];
    let w = excess_witness_bounds(&m, &args, &reference, &aims)
        .unwrap()
        .expect("two rounding narrow instructions get a witness");
    assert!(
        w.bounds[0].hi.get_f64(0) >= t1,
        "the largest sum {t1} is not reached: {}",
        w.bounds[0].hi.get_f64(0)
    );
    assert!(
        w.bounds[1].lo.get_f64(0) <= t2,
        "the smallest sum {t2} is not reached: {}",
        w.bounds[1].lo.get_f64(0)
    );
}
