//! Input generation tests: every constraint class yields legal inputs, the
//! propagation handles graphs, and generation is deterministic.

use super::graph::Graph;
use super::point;
use super::*;
use crate::hlo::row_gather;
use crate::hlo::{
    CompId, Computation, ConstantData, DotDims, ElementType, InstrId, Instruction, Module, Opcode,
    Shape,
};

/// A tiny computation builder for tests.
#[derive(Default)]
struct B {
    instrs: Vec<Instruction>,
    params: i64,
}

impl B {
    fn push(&mut self, op: Opcode, shape: Shape, operands: &[InstrId]) -> InstrId {
        let name = format!("i{}", self.instrs.len());
        self.instrs
            .push(Instruction::new(name, op, shape, operands.to_vec()));
        InstrId(self.instrs.len() as u32 - 1)
    }
    fn param(&mut self, shape: Shape) -> InstrId {
        let id = self.push(Opcode::Parameter, shape, &[]);
        self.instrs[id.index()].attrs.parameter_number = Some(self.params);
        self.params += 1;
        id
    }
    fn constant(&mut self, dtype: ElementType, v: f64) -> InstrId {
        let id = self.push(Opcode::Constant, Shape::scalar(dtype), &[]);
        self.instrs[id.index()].attrs.constant = Some(if dtype.is_float() {
            ConstantData::Float(vec![v])
        } else {
            ConstantData::Int(vec![v as i128])
        });
        id
    }
    fn broadcast(&mut self, x: InstrId, shape: Shape) -> InstrId {
        let id = self.push(Opcode::Broadcast, shape, &[x]);
        self.instrs[id.index()].attrs.dimensions = Some(vec![]);
        id
    }
    fn un(&mut self, op: Opcode, x: InstrId) -> InstrId {
        let s = self.instrs[x.index()].shape.clone();
        self.push(op, s, &[x])
    }
    fn bin(&mut self, op: Opcode, x: InstrId, y: InstrId) -> InstrId {
        let s = self.instrs[x.index()].shape.clone();
        self.push(op, s, &[x, y])
    }
    fn comp(self, name: &str, root: InstrId) -> Computation {
        Computation::new(name, self.instrs, root)
    }
}

fn module(comps: Vec<Computation>) -> Module {
    let entry = CompId(comps.len() as u32 - 1);
    Module {
        name: "m".into(),
        attrs: vec![],
        computations: comps,
        entry,
    }
}

/// Parameter `k`'s interval is `want`, and every value drawn for it lies in it.
fn assert_drawn_within(g: &GeneratedInputs, k: usize, want: Interval) {
    assert_eq!(g.intervals[k], want);
    for (i, v) in g.args[k].to_f64_vec().into_iter().enumerate() {
        assert!(
            want.lo <= v && v <= want.hi,
            "parameter {k} element {i}: {v}"
        );
    }
}

/// `op` of one `from[n]` parameter, giving `to[n]`.
fn conversion(op: Opcode, from: ElementType, to: ElementType, n: i64) -> Module {
    let mut b = B::default();
    let x = b.param(vec_shape(from, n));
    let r = b.push(op, vec_shape(to, n), &[x]);
    module(vec![b.comp("main", r)])
}

fn vec_shape(t: ElementType, n: i64) -> Shape {
    Shape::array(t, vec![n])
}

/// Every node's values, by the point evaluator (exact f64, rounded per node).
fn root_values(m: &Module, g: &GeneratedInputs) -> Vec<f64> {
    let graph = Graph::build(m).unwrap();
    point::evaluate(m, &graph, &g.args)[graph.root]
        .clone()
        .expect("point-evaluable root")
}

fn assert_finite_root(m: &Module, g: &GeneratedInputs) {
    for (i, v) in root_values(m, g).iter().enumerate() {
        assert!(v.is_finite(), "element {i} is {v}");
    }
}

fn unary_module(op: Opcode, t: ElementType) -> Module {
    let mut b = B::default();
    let x = b.param(vec_shape(t, 256));
    let r = b.un(op, x);
    module(vec![b.comp("main", r)])
}

fn binary_module(op: Opcode, t: ElementType) -> Module {
    let mut b = B::default();
    let x = b.param(vec_shape(t, 256));
    let y = b.param(vec_shape(t, 256));
    let r = b.bin(op, x, y);
    module(vec![b.comp("main", r)])
}

#[test]
fn sqrt_rsqrt_log_log1p_domains() {
    for t in [
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F8E4M3Fn,
    ] {
        let min_normal = t.float_format().unwrap().min_normal();
        for (op, lo) in [
            (Opcode::Sqrt, 0.0),
            (Opcode::Rsqrt, min_normal),
            (Opcode::Log, min_normal),
            (Opcode::LogPlusOne, -1.0),
        ] {
            for d in [Distribution::Uniform, Distribution::LogUniform] {
                let m = unary_module(op, t);
                let g = generate_inputs(&m, d, 11).unwrap();
                assert!(!g.rejection_sampling_used, "{op} {t} {d}");
                for i in 0..256 {
                    let x = g.args[0].get_f64(i);
                    assert!(x >= lo, "{op} {t}: {x}");
                    if op == Opcode::LogPlusOne {
                        assert!(x > -1.0);
                    }
                }
                assert_finite_root(&m, &g);
            }
        }
    }
}

#[test]
fn divide_and_remainder_denominators_nonzero() {
    for t in [
        ElementType::F32,
        ElementType::F8E5M2,
        ElementType::S8,
        ElementType::U8,
    ] {
        for op in [Opcode::Divide, Opcode::Remainder] {
            let m = binary_module(op, t);
            for d in [Distribution::Uniform, Distribution::Duplicates] {
                let g = generate_inputs(&m, d, 3).unwrap();
                for i in 0..256 {
                    let y = g.args[1].get_f64(i);
                    assert!(y != 0.0, "{op} {t} {d}: zero divisor at {i}");
                    if t.is_float() {
                        assert!(y.abs() >= t.float_format().unwrap().min_normal());
                    }
                }
                if t.is_float() {
                    assert_finite_root(&m, &g);
                }
            }
        }
    }
}

#[test]
fn power_negative_base_only_with_integer_exponent() {
    let m = binary_module(Opcode::Power, ElementType::F32);
    let g = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
    for i in 0..256 {
        let (b, e) = (g.args[0].get_f64(i), g.args[1].get_f64(i));
        assert!(b >= 0.0 || e.fract() == 0.0, "pow({b}, {e})");
    }
    assert_finite_root(&m, &g);
    // with an integer constant exponent, negative bases stay legal
    let mut b = B::default();
    let x = b.param(vec_shape(ElementType::F32, 256));
    let c = b.constant(ElementType::F32, 3.0);
    let e = b.broadcast(c, vec_shape(ElementType::F32, 256));
    let r = b.bin(Opcode::Power, x, e);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
    assert!(g.intervals[0].lo < 0.0, "{:?}", g.intervals[0]);
    assert!((0..256).any(|i| g.args[0].get_f64(i) < 0.0));
}

#[test]
fn exp_and_expm1_below_overflow() {
    for t in [
        ElementType::F16,
        ElementType::F8E4M3Fn,
        ElementType::F8E5M2,
        ElementType::Bf16,
    ] {
        for op in [Opcode::Exponential, Opcode::ExponentialMinusOne] {
            let m = unary_module(op, t);
            let g = generate_inputs(&m, Distribution::Uniform, 9).unwrap();
            let max = t.float_format().unwrap().max;
            assert!(
                g.intervals[0].hi <= max.ln(),
                "{op} {t} {:?}",
                g.intervals[0]
            );
            assert_finite_root(&m, &g);
        }
    }
}

#[test]
fn float_to_int_convert_within_range() {
    let m = conversion(Opcode::Convert, ElementType::F32, ElementType::S8, 256);
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert_eq!(g.intervals[0], Interval::new(-64.0, 64.0));
    let m = conversion(Opcode::Convert, ElementType::F32, ElementType::U4, 256);
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert_drawn_within(&g, 0, Interval::new(0.0, 15.0));
}

#[test]
fn integers_bitcast_to_floats_draw_no_nan_or_infinity_patterns() {
    // u16 -> f16 and s32 -> f32: the whole integer range holds the float's
    // NaN and infinity bit patterns (about 3% of u16's); 256 elements a seed
    // draw some, which the point check sees and the repair redraws
    for (from, to) in [
        (ElementType::U16, ElementType::F16),
        (ElementType::S32, ElementType::F32),
    ] {
        let m = conversion(Opcode::BitcastConvert, from, to, 256);
        for seed in 0..8 {
            let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
            assert!(g.unchecked.is_empty(), "{:?}", g.unchecked);
            assert!(g.unmet.is_empty(), "{:?}", g.unmet);
            assert_finite_root(&m, &g);
            let out = crate::reference::evaluate(&m, &g.args).unwrap();
            let bad = (0..256).filter(|&i| !out[0].get_f64(i).is_finite());
            assert_eq!(bad.count(), 0, "{from} -> {to}, seed {seed}");
        }
    }
}

#[test]
fn shift_amounts_below_width() {
    for t in [ElementType::S32, ElementType::U8] {
        for op in [
            Opcode::ShiftLeft,
            Opcode::ShiftRightLogical,
            Opcode::ShiftRightArithmetic,
        ] {
            let m = binary_module(op, t);
            let g = generate_inputs(&m, Distribution::Uniform, 2).unwrap();
            let w = t.bit_width() as i128;
            for i in 0..256 {
                let s = g.args[1].get_i128(i);
                assert!((0..w).contains(&s), "{op} {t}: shift by {s}");
            }
            // the shifted operand keeps its full range
            assert_eq!(g.intervals[0], Interval::of_type(t));
        }
    }
}

fn dynamic_slice_module() -> Module {
    let mut b = B::default();
    let x = b.param(Shape::array(ElementType::F32, vec![10, 4]));
    let i = b.param(Shape::scalar(ElementType::S32));
    let j = b.param(Shape::scalar(ElementType::S32));
    let r = b.push(
        Opcode::DynamicSlice,
        Shape::array(ElementType::F32, vec![3, 2]),
        &[x, i, j],
    );
    b.instrs[r.index()].attrs.dynamic_slice_sizes = Some(vec![3, 2]);
    module(vec![b.comp("main", r)])
}

#[test]
fn dynamic_slice_indices_in_range_and_out_of_range_on_purpose() {
    let m = dynamic_slice_module();
    for seed in 0..20 {
        let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
        assert!((0..=7).contains(&g.args[1].get_i128(0)));
        assert!((0..=2).contains(&g.args[2].get_i128(0)));
    }
    assert_eq!(
        legal_intervals(&m, Distribution::Uniform).unwrap().params[1],
        Interval::new(0.0, 7.0)
    );
    let out_of_range = (0..40)
        .filter(|&seed| {
            let g = generate_inputs(&m, Distribution::OutOfRangeIndices, seed).unwrap();
            let (i, j) = (g.args[1].get_i128(0), g.args[2].get_i128(0));
            !(0..=7).contains(&i) || !(0..=2).contains(&j)
        })
        .count();
    assert!(out_of_range >= 10, "only {out_of_range} of 40 out of range");
}

#[test]
fn gather_indices_in_range() {
    let mut b = B::default();
    let x = b.param(Shape::array(ElementType::F32, vec![6, 3]));
    let idx = b.param(Shape::array(ElementType::S32, vec![5, 1]));
    let r = b.push(
        Opcode::Gather,
        Shape::array(ElementType::F32, vec![5, 3]),
        &[x, idx],
    );
    b.instrs[r.index()].attrs.gather_dims = Some(row_gather(3));
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 4).unwrap();
    assert_drawn_within(&g, 1, Interval::new(0.0, 5.0));
}

#[test]
fn sqrt_of_difference_splits_the_intervals() {
    let mut b = B::default();
    let x = b.param(vec_shape(ElementType::F16, 128));
    let y = b.param(vec_shape(ElementType::F16, 128));
    let d = b.bin(Opcode::Subtract, x, y);
    let r = b.un(Opcode::Sqrt, d);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 17).unwrap();
    // every point of the box is legal: x.lo >= y.hi
    assert!(g.intervals[0].lo >= g.intervals[1].hi, "{:?}", g.intervals);
    assert!(g.unguaranteed.is_empty(), "{:?}", g.unguaranteed);
    assert!(!g.rejection_sampling_used);
    assert_finite_root(&m, &g);
    for v in root_values(&m, &g) {
        assert!(v >= 0.0);
    }
}

#[test]
fn hc4_narrows_against_a_constant() {
    // sqrt(x - 3): HC4 alone gives x >= 3
    let mut b = B::default();
    let x = b.param(vec_shape(ElementType::F32, 8));
    let c = b.constant(ElementType::F32, 3.0);
    let cb = b.broadcast(c, vec_shape(ElementType::F32, 8));
    let d = b.bin(Opcode::Subtract, x, cb);
    let r = b.un(Opcode::Sqrt, d);
    let m = module(vec![b.comp("main", r)]);
    let li = legal_intervals(&m, Distribution::Uniform).unwrap();
    assert_eq!(li.params[0], Interval::new(3.0, 64.0));
    assert!(li.unguaranteed.is_empty());
}

#[test]
fn log_of_product_plus_constant() {
    // log(a*b + c) with c = -2: a*b must exceed 2
    let t = ElementType::F32;
    let mut b = B::default();
    let a = b.param(vec_shape(t, 128));
    let bb = b.param(vec_shape(t, 128));
    let c = b.param(vec_shape(t, 128));
    let p = b.bin(Opcode::Multiply, a, bb);
    let s = b.bin(Opcode::Add, p, c);
    let r = b.un(Opcode::Log, s);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 23).unwrap();
    assert!(
        !g.rejection_sampling_used,
        "{:?} {:?}",
        g.unguaranteed, g.intervals
    );
    let min_normal = t.float_format().unwrap().min_normal();
    for i in 0..128 {
        let (x, y, z) = (
            g.args[0].get_f64(i),
            g.args[1].get_f64(i),
            g.args[2].get_f64(i),
        );
        assert!(x * y + z >= min_normal, "{x} * {y} + {z}");
    }
    assert_finite_root(&m, &g);
}

#[test]
fn reciprocal_of_difference_avoids_the_hole() {
    for t in [ElementType::F32, ElementType::F8E4M3Fn] {
        let mut b = B::default();
        let x = b.param(vec_shape(t, 256));
        let y = b.param(vec_shape(t, 256));
        let one = b.constant(t, 1.0);
        let ones = b.broadcast(one, vec_shape(t, 256));
        let d = b.bin(Opcode::Subtract, x, y);
        let r = b.bin(Opcode::Divide, ones, d);
        let m = module(vec![b.comp("main", r)]);
        let g = generate_inputs(&m, Distribution::Duplicates, 8).unwrap();
        for i in 0..256 {
            let (a, c) = (g.args[0].get_f64(i), g.args[1].get_f64(i));
            assert!(a != c, "{t}: x == y at {i}");
        }
        assert_finite_root(&m, &g);
        if t == ElementType::F8E4M3Fn {
            // 32 distinct f8 values per side make x == y frequent: holes were redrawn
            assert!(g.hole_resamples > 0);
        }
    }
}

#[test]
fn requirement_inside_a_fusion() {
    let t = ElementType::F32;
    // fused: sqrt(p0 - p1)
    let mut f = B::default();
    let p0 = f.param(vec_shape(t, 64));
    let p1 = f.param(vec_shape(t, 64));
    let d = f.bin(Opcode::Subtract, p0, p1);
    let r = f.un(Opcode::Sqrt, d);
    let fused = f.comp("fused", r);
    let mut b = B::default();
    let x = b.param(vec_shape(t, 64));
    let y = b.param(vec_shape(t, 64));
    let fu = b.push(Opcode::Fusion, vec_shape(t, 64), &[x, y]);
    b.instrs[fu.index()].attrs.calls = vec![CompId(0)];
    let m = module(vec![fused, b.comp("main", fu)]);
    let g = generate_inputs(&m, Distribution::Uniform, 31).unwrap();
    assert!(!g.rejection_sampling_used);
    for i in 0..64 {
        assert!(g.args[0].get_f64(i) >= g.args[1].get_f64(i));
    }
    assert_finite_root(&m, &g);
}

fn add_computation(t: ElementType) -> Computation {
    let mut a = B::default();
    let p = a.param(Shape::scalar(t));
    let q = a.param(Shape::scalar(t));
    let s = a.bin(Opcode::Add, p, q);
    a.comp("add", s)
}

#[test]
fn requirement_across_a_reduce() {
    // log(reduce_add(x, dims={1})): every row sum must be positive
    let t = ElementType::F32;
    let mut b = B::default();
    let x = b.param(Shape::array(t, vec![8, 16]));
    let zero = b.constant(t, 0.0);
    let r = b.push(Opcode::Reduce, vec_shape(t, 8), &[x, zero]);
    b.instrs[r.index()].attrs.dimensions = Some(vec![1]);
    b.instrs[r.index()].attrs.to_apply = Some(CompId(0));
    let l = b.un(Opcode::Log, r);
    let m = module(vec![add_computation(t), b.comp("main", l)]);
    let g = generate_inputs(&m, Distribution::Uniform, 13).unwrap();
    assert!(!g.rejection_sampling_used, "{:?}", g.unguaranteed);
    assert!(g.intervals[0].lo > 0.0);
    assert_finite_root(&m, &g);
}

#[test]
fn square_minus_one_needs_rejection_sampling() {
    // sqrt(x*x - 1): |x| >= 1 is a union, no interval expresses it
    let t = ElementType::F32;
    let mut b = B::default();
    let x = b.param(vec_shape(t, 256));
    let sq = b.bin(Opcode::Multiply, x, x);
    let one = b.constant(t, 1.0);
    let ones = b.broadcast(one, vec_shape(t, 256));
    let d = b.bin(Opcode::Subtract, sq, ones);
    let r = b.un(Opcode::Sqrt, d);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 29).unwrap();
    assert!(g.rejection_sampling_used);
    assert!(!g.unguaranteed.is_empty());
    assert!(g.resampled_elements > 0);
    // the full domain is kept: both signs appear
    let xs: Vec<f64> = (0..256).map(|i| g.args[0].get_f64(i)).collect();
    assert!(xs.iter().all(|x| x * x >= 1.0));
    assert!(xs.iter().any(|&x| x < 0.0) && xs.iter().any(|&x| x > 0.0));
    assert_finite_root(&m, &g);
}

#[test]
fn deterministic_from_the_seed() {
    let m = binary_module(Opcode::Divide, ElementType::Bf16);
    for d in Distribution::ALL {
        let bits = |g: &GeneratedInputs| -> Vec<Vec<u64>> {
            g.args.iter().map(|l| l.to_bits_vec()).collect()
        };
        let a = generate_inputs(&m, *d, 42).unwrap();
        let b = generate_inputs(&m, *d, 42).unwrap();
        assert_eq!(bits(&a), bits(&b), "{d}");
        if *d != Distribution::Exhaustive {
            let c = generate_inputs(&m, *d, 43).unwrap();
            assert_ne!(bits(&a), bits(&c), "{d}");
        }
    }
}

#[test]
fn edge_and_integer_edge_distributions() {
    let m = unary_module(Opcode::Negate, ElementType::F16);
    let g = generate_inputs(&m, Distribution::EdgeValues, 1).unwrap();
    let bits: Vec<u64> = g.args[0].to_bits_vec();
    assert!(bits.contains(&0x8000), "-0");
    assert!(
        bits.contains(&0x7c00) && bits.contains(&0xfc00),
        "infinities"
    );
    assert!(bits.contains(&0x0001), "smallest subnormal");
    assert!(bits.contains(&0x7bff), "max");
    assert!(
        bits.iter().any(|&b| b & 0x7c00 == 0x7c00 && b & 0x3ff != 0),
        "nan"
    );
    let m = unary_module(Opcode::Negate, ElementType::S8);
    let g = generate_inputs(&m, Distribution::IntegerEdges, 1).unwrap();
    let v = g.args[0].to_i128_vec();
    for edge in [-128, -127, -1, 0, 1, 126, 127] {
        assert!(v.contains(&edge), "{edge}");
    }
}

#[test]
fn convert_ties_are_edge_values() {
    // f32 -> f16: 1 + 2^-11 is a tie (rounds to even, 1.0)
    let m = conversion(Opcode::Convert, ElementType::F32, ElementType::F16, 512);
    let g = generate_inputs(&m, Distribution::EdgeValues, 3).unwrap();
    let v = g.args[0].to_f64_vec();
    assert!(v.contains(&(1.0 + 2f64.powi(-11))));
    assert!(v.contains(&(1.0 + 1.5 * 2f64.powi(-10))));
}

#[test]
fn duplicates_and_log_uniform_shapes() {
    let m = unary_module(Opcode::Negate, ElementType::F32);
    let g = generate_inputs(&m, Distribution::Duplicates, 6).unwrap();
    let mut v = g.args[0].to_f64_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    assert!(v.len() <= 32, "{} distinct", v.len());
    let g = generate_inputs(&m, Distribution::LogUniform, 6).unwrap();
    let small = g.args[0]
        .to_f64_vec()
        .iter()
        .filter(|x| x.abs() < 1e-10)
        .count();
    // exponents uniform in [-126, 6]: about 70% of magnitudes are below 1e-10
    assert!(small > 100, "{small} of 256 tiny");
}

#[test]
fn dot_and_overflowing_chains_stay_finite() {
    // f16 x*y*z*w: products of four values up to 16 would overflow (65536)
    let t = ElementType::F16;
    let mut b = B::default();
    let ps: Vec<InstrId> = (0..4).map(|_| b.param(vec_shape(t, 128))).collect();
    let a = b.bin(Opcode::Multiply, ps[0], ps[1]);
    let c = b.bin(Opcode::Multiply, a, ps[2]);
    let r = b.bin(Opcode::Multiply, c, ps[3]);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 2).unwrap();
    assert!(!g.rejection_sampling_used);
    assert_finite_root(&m, &g);
    // a dot of [4,8]x[8,4] in f8e4m3fn: 8 terms of products up to 64 overflow 448
    let t = ElementType::F8E4M3Fn;
    let mut b = B::default();
    let x = b.param(Shape::array(t, vec![4, 8]));
    let y = b.param(Shape::array(t, vec![8, 4]));
    let d = b.push(Opcode::Dot, Shape::array(t, vec![4, 4]), &[x, y]);
    b.instrs[d.index()].attrs.dot_dims = Some(DotDims {
        lhs_contracting: vec![1],
        rhs_contracting: vec![0],
        ..Default::default()
    });
    let m = module(vec![b.comp("main", d)]);
    let li = legal_intervals(&m, Distribution::Uniform).unwrap();
    let bound = li.params[0].abs().hi * li.params[1].abs().hi * 8.0;
    assert!(bound <= 448.0, "{:?}", li.params);
}

#[test]
fn index_computed_by_integer_arithmetic() {
    // dynamic-slice of [3,3] by [1,1] at (i + i, i + i): i + i in [0, 2], so i in [0, 1]
    let mut b = B::default();
    let x = b.param(Shape::array(ElementType::F32, vec![3, 3]));
    let i = b.param(Shape::scalar(ElementType::S32));
    let idx = b.bin(Opcode::Add, i, i);
    let r = b.push(
        Opcode::DynamicSlice,
        Shape::array(ElementType::F32, vec![1, 1]),
        &[x, idx, idx],
    );
    b.instrs[r.index()].attrs.dynamic_slice_sizes = Some(vec![1, 1]);
    let m = module(vec![b.comp("main", r)]);
    let li = legal_intervals(&m, Distribution::Uniform).unwrap();
    assert_eq!(li.params[1], Interval::new(0.0, 1.0), "{:?}", li.params);
    assert!(li.unguaranteed.is_empty());
    // a product that may overflow s8 wraps: intervals do not follow it
    let m = binary_module(Opcode::Multiply, ElementType::S8);
    let li = legal_intervals(&m, Distribution::Uniform).unwrap();
    assert_eq!(li.params[0], Interval::of_type(ElementType::S8));
}

#[test]
fn requirement_on_a_constant_is_reported_not_enforced() {
    // log(c - 5) with c = 3: no input can fix it; generation still succeeds
    let t = ElementType::F32;
    let mut b = B::default();
    let x = b.param(vec_shape(t, 4));
    let c = b.constant(t, 3.0);
    let five = b.constant(t, 5.0);
    let d = b.bin(Opcode::Subtract, c, five);
    let l = b.un(Opcode::Log, d);
    let lb = b.broadcast(l, vec_shape(t, 4));
    let r = b.bin(Opcode::Add, x, lb);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert!(
        g.unguaranteed.iter().any(|u| u.contains("log")),
        "{:?}",
        g.unguaranteed
    );
    assert!(!g.rejection_sampling_used);
}

#[test]
fn exhaustive_distribution_covers_every_pattern() {
    let mut b = B::default();
    let x = b.param(vec_shape(ElementType::F8E4M3Fn, 256));
    let r = b.un(Opcode::Log, x);
    let m = module(vec![b.comp("main", r)]);
    let g = generate_inputs(&m, Distribution::Exhaustive, 0).unwrap();
    assert_eq!(g.args[0].to_bits_vec(), (0..256).collect::<Vec<u64>>());
    assert!(!g.rejection_sampling_used);
}

#[test]
fn a_reduce_init_parameter_is_drawn_as_the_reducers_identity() {
    // corpus 102_hlo_fusion_analysis.hlo: the init value is parameter 1
    for (op, ty, want) in [
        ("add", "f32", 0.0),
        ("multiply", "f32", 1.0),
        ("maximum", "f32", f64::from(f32::MIN)),
        ("minimum", "s32", f64::from(i32::MAX)),
    ] {
        let text = format!(
            "HloModule m\nr {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  \
             ROOT c = {ty}[] {op}(a, b)\n}}\nENTRY e {{\n  x = {ty}[4] parameter(0)\n  \
             i = {ty}[] parameter(1)\n  ROOT s = {ty}[] reduce(x, i), dimensions={{0}}, to_apply=r\n}}\n"
        );
        let m = crate::hlo::parse_module(&text).unwrap();
        for seed in 0..4 {
            let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
            assert_eq!(g.args[1].get_f64(0), want, "{op} {ty} seed {seed}");
        }
    }
}

// ---- HC4 revise rules for selection and index arithmetic ----

fn intervals_of(text: &str) -> Vec<Interval> {
    let m = crate::hlo::parse_module(text).unwrap();
    legal_intervals(&m, Distribution::Uniform).unwrap().params
}

/// A dynamic slice of `f32[10,4]` of 3 rows whose start is `index` (computed
/// from parameter 1 by `body`): the start must lie in [0, 7].
fn ds_module(body: &str) -> String {
    format!(
        "HloModule m\nENTRY e {{\n  x = f32[10,4] parameter(0)\n  i = {body}\n  zero = s32[] constant(0)\n  ROOT r = f32[3,4] dynamic-slice(x, idx, zero), dynamic_slice_sizes={{3,4}}\n}}\n"
    )
}

#[test]
fn hc4_select_is_the_union_of_its_branches() {
    // index normalization: select(i < 0, i + 10, i) in [0, 7]
    let p = intervals_of(&ds_module(
        "s32[] parameter(1)\n  z = s32[] constant(0)\n  n = s32[] constant(10)\n  lt = pred[] compare(i, z), direction=LT\n  w = s32[] add(i, n)\n  idx = s32[] select(lt, w, i)",
    ));
    assert_eq!(p[1], Interval::new(-10.0, 7.0));
}

#[test]
fn hc4_select_with_an_impossible_branch_decides_the_compare() {
    // the first branch (1000) is never in range: i > 100 must be false
    let p = intervals_of(&ds_module(
        "s32[] parameter(1)\n  c = s32[] constant(100)\n  big = s32[] constant(1000)\n  gt = pred[] compare(i, c), direction=GT\n  idx = s32[] select(gt, big, i)",
    ));
    assert_eq!(p[1], Interval::new(0.0, 7.0));
}

#[test]
fn hc4_integer_add_follows_unwrapped_values() {
    let p = intervals_of(&ds_module(
        "s32[] parameter(1)\n  n = s32[] constant(10)\n  idx = s32[] add(i, n)",
    ));
    assert_eq!(p[1], Interval::new(-10.0, -3.0));
    let p = intervals_of(&ds_module(
        "s32[] parameter(1)\n  n = s32[] constant(2)\n  idx = s32[] multiply(i, n)",
    ));
    assert_eq!(p[1], Interval::new(0.0, 3.0));
    let p = intervals_of(&ds_module(
        "s32[] parameter(1)\n  n = s32[] constant(5)\n  idx = s32[] subtract(n, i)",
    ));
    assert_eq!(p[1], Interval::new(-2.0, 5.0));
}

#[test]
fn hc4_convert_of_a_float_index_truncates() {
    let p = intervals_of(&ds_module("f32[] parameter(1)\n  idx = s32[] convert(i)"));
    // HC4 allows (-1, 8); the inner step keeps what is legal for every point
    assert!(p[1].lo > -1.0 && p[1].hi < 8.0, "{:?}", p[1]);
    assert!(
        p[1].contains_interval(Interval::new(0.0, 7.0)),
        "{:?}",
        p[1]
    );
}

#[test]
fn hc4_clamp_max_min_and_remainder_keep_log_positive() {
    let m = |body: &str| {
        format!("HloModule m\nENTRY e {{\n  x = f32[64] parameter(0)\n  {body}\n  ROOT r = f32[64] log(v)\n}}\n")
    };
    let tiny = ElementType::F32.float_format().unwrap().min_normal();
    // clamp(-1, x, 4): the lower bound -1 cannot reach tiny, so x must
    let p = intervals_of(&m("lo = f32[64] broadcast(f32[] constant(-1)), dimensions={}\n  hi = f32[64] broadcast(f32[] constant(4)), dimensions={}\n  v = f32[64] clamp(lo, x, hi)"));
    assert_eq!(p[0], Interval::new(tiny, 64.0));
    // max(x, -2): -2 cannot be the positive one
    let p = intervals_of(&m(
        "c = f32[64] broadcast(f32[] constant(-2)), dimensions={}\n  v = f32[64] maximum(x, c)",
    ));
    assert_eq!(p[0], Interval::new(tiny, 64.0));
    // min(x, 8): both must be positive
    let p = intervals_of(&m(
        "c = f32[64] broadcast(f32[] constant(8)), dimensions={}\n  v = f32[64] minimum(x, c)",
    ));
    assert_eq!(p[0], Interval::new(tiny, 64.0));
    // remainder(x, 3) > 0 has the sign of x
    let p = intervals_of(&m(
        "c = f32[64] broadcast(f32[] constant(3)), dimensions={}\n  v = f32[64] remainder(x, c)",
    ));
    assert_eq!(p[0], Interval::new(tiny, 64.0));
}

#[test]
fn hc4_abs_sign_convert_compare_preimages_by_hand() {
    use super::preimage::{
        abs_preimage, compare_preimage, convert_preimage, negated_direction, sign_preimage,
    };
    use crate::hlo::ComparisonDirection as D;
    let all = Interval::ALL;
    // |x| in [2, 5]
    assert_eq!(
        abs_preimage(Interval::new(2.0, 5.0), all),
        Interval::new(-5.0, 5.0)
    );
    assert_eq!(
        abs_preimage(Interval::new(2.0, 5.0), Interval::at_least(0.0)),
        Interval::new(2.0, 5.0)
    );
    assert_eq!(
        abs_preimage(Interval::new(2.0, 5.0), Interval::at_most(0.0)),
        Interval::new(-5.0, -2.0)
    );
    // sign(x) = 1, = -1, = 0, >= 0
    let s32 = Some(ElementType::S32);
    assert_eq!(
        sign_preimage(Interval::point(1.0), s32),
        Interval::at_least(1.0)
    );
    assert_eq!(
        sign_preimage(Interval::point(-1.0), s32),
        Interval::at_most(-1.0)
    );
    assert_eq!(
        sign_preimage(Interval::point(0.0), s32),
        Interval::point(0.0)
    );
    assert_eq!(
        sign_preimage(Interval::new(0.0, 1.0), s32),
        Interval::at_least(0.0)
    );
    assert_eq!(sign_preimage(Interval::new(-1.0, 1.0), s32), Interval::ALL);
    // convert s32 <- f32 truncates toward zero; int -> int is the identity
    let (f32t, s32t) = (Some(ElementType::F32), Some(ElementType::S32));
    let c = convert_preimage(Interval::new(2.0, 5.0), f32t, s32t);
    assert_eq!(c.lo, 2.0);
    assert!(c.hi < 6.0 && c.hi > 5.99);
    assert_eq!(
        convert_preimage(Interval::new(2.0, 5.0), s32t, Some(ElementType::S8)),
        Interval::new(2.0, 5.0)
    );
    // x < y with integers: x <= y.hi - 1, y >= x.lo + 1
    let (x, y) = (Interval::new(0.0, 10.0), Interval::new(3.0, 6.0));
    assert_eq!(
        compare_preimage(D::Lt, x, y, true),
        (Interval::at_most(5.0), Interval::at_least(1.0))
    );
    assert_eq!(
        compare_preimage(D::Ge, x, y, false),
        (Interval::at_least(3.0), Interval::at_most(10.0))
    );
    assert_eq!(compare_preimage(D::Eq, x, y, false), (y, x));
    assert_eq!(negated_direction(D::Lt), D::Ge);
    assert_eq!(negated_direction(D::Eq), D::Ne);
}

#[test]
fn normalization_inputs_are_not_collapsed_to_zero() {
    // (x - mean) * rsqrt(var + eps): the rsqrt is unbounded above, which used
    // to make the inner step scale x to exactly 0
    let text = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4,32] parameter(0)\n  bias = f32[32] parameter(1)\n  sq = f32[4,32] multiply(x, x)\n  z = f32[] constant(0)\n  s = f32[4] reduce(sq, z), dimensions={1}, to_apply=add\n  r = f32[4] rsqrt(s)\n  rb = f32[4,32] broadcast(r), dimensions={0}\n  n = f32[4,32] multiply(x, rb)\n  bb = f32[4,32] broadcast(bias), dimensions={1}\n  ROOT o = f32[4,32] add(n, bb)\n}\n";
    let m = crate::hlo::parse_module(text).unwrap();
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert!(g.point_parameters.is_empty(), "{:?}", g.intervals);
    // x is data; the bias, added to the normalized x, has a bias's range
    assert_eq!(g.roles, vec![ParameterRole::Data, ParameterRole::Bias]);
    assert!(g.intervals[0].width() >= 1.0, "{:?}", g.intervals);
    assert_eq!(g.intervals[1], Interval::new(-0.25, 0.25));
}

#[test]
fn weights_of_a_dot_are_scaled_by_their_fan_in() {
    let text = "HloModule m\nENTRY e {\n  x = f32[8,48] parameter(0)\n  w = f32[48,16] parameter(1)\n  ROOT d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let p = intervals_of(text);
    // the data the dot takes: standardized
    assert_eq!(p[0], Interval::new(-1.0, 1.0));
    let b = (3.0f64 / 48.0).sqrt();
    assert!(
        (p[1].hi - b).abs() < 1e-6 && (p[1].lo + b).abs() < 1e-6,
        "{:?}",
        p[1]
    );
}

#[test]
fn a_single_valued_parameter_is_a_warning() {
    // a slice as long as its dimension has one legal start: 0
    let text = "HloModule m\nENTRY e {\n  x = f32[4,4] parameter(0)\n  i = s32[] parameter(1)\n  zero = s32[] constant(0)\n  ROOT r = f32[4,4] dynamic-slice(x, i, zero), dynamic_slice_sizes={4,4}\n}\n";
    let m = crate::hlo::parse_module(text).unwrap();
    let g = generate_inputs(&m, Distribution::Uniform, 0).unwrap();
    assert_eq!(g.point_parameters, vec![1]);
}

#[test]
fn no_in_range_index_falls_back_to_clamping_and_says_so() {
    // i + 100 with i a u8 >= 0 can never be a start in [0, 7]
    let text = "HloModule m\nENTRY e {\n  x = f32[10,4] parameter(0)\n  i = u8[] parameter(1)\n  c = s32[] constant(100)\n  ii = s32[] convert(i)\n  idx = s32[] add(ii, c)\n  zero = s32[] constant(0)\n  ROOT r = f32[3,4] dynamic-slice(x, idx, zero), dynamic_slice_sizes={3,4}\n}\n";
    let m = crate::hlo::parse_module(text).unwrap();
    let g = generate_inputs(&m, Distribution::Uniform, 0).unwrap();
    assert!(
        g.notes.iter().any(|n| n.contains("clamping")),
        "{:?}",
        g.notes
    );
}

#[test]
fn scatter_indices_built_by_a_concatenate_stay_in_range() {
    // the parameter reaches the scatter's indices through a reshape and a
    // concatenate with an iota (XLA's TensorFlowScatterV2 test): the point
    // check sees the concatenated indices and repairs the parameter
    let m = crate::hlo::parse_module(
        "HloModule m\nc {\n  a = s32[] parameter(0)\n  ROOT b = s32[] parameter(1)\n}\nENTRY e {\n  p = s32[3,4] parameter(0)\n  r = s32[3,4,1] reshape(p)\n  x = s32[3,4] iota(), iota_dimension=1\n  u = s32[3,4,1,1] iota(), iota_dimension=1\n  i = s32[3,4,1] iota(), iota_dimension=0\n  idx = s32[3,4,2] concatenate(i, r), dimensions={2}\n  ROOT s = s32[3,4] scatter(x, idx, u), to_apply=c, update_window_dims={2,3}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=2\n}\n",
    )
    .unwrap();
    for seed in 0..10 {
        let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
        assert!(g.unchecked.is_empty(), "{:?}", g.unchecked);
        for k in 0..12 {
            assert!((0..=2).contains(&g.args[0].get_i128(k)), "seed {seed}");
        }
    }
}

#[test]
fn gather_indices_concatenated_then_reshaped_stay_in_range() {
    // JAX's take_along_axis after XLA: the batch iotas and the wrapped
    // label concatenated into s32[2,8,1,3], bitcast to the gather's
    // s32[16,3] index vectors: each piece keeps its own dimension's bound
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2,8,32] parameter(0)\n  y = s32[2,8] parameter(1)\n  \
         a = s32[2,8,1,1] iota(), iota_dimension=0\n  b = s32[2,8,1,1] iota(), iota_dimension=1\n  \
         y3 = s32[2,8,1] bitcast(y)\n  z = s32[2,8,1] constant({{{0},{0},{0},{0},{0},{0},{0},{0}},{{0},{0},{0},{0},{0},{0},{0},{0}}})\n  \
         lt = pred[2,8,1] compare(y3, z), direction=LT\n  n = s32[] constant(32)\n  nb = s32[2,8,1] broadcast(n), dimensions={}\n  \
         w = s32[2,8,1] add(y3, nb)\n  s = s32[2,8,1] select(lt, w, y3)\n  s4 = s32[2,8,1,1] bitcast(s)\n  \
         c = s32[2,8,1,3] concatenate(a, b, s4), dimensions={3}\n  i = s32[16,3] bitcast(c)\n  \
         ROOT g = f32[16,1,1,1] gather(x, i), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1,1}\n}\n",
    )
    .unwrap();
    for seed in 0..10 {
        let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
        assert!(
            !g.notes.iter().any(|n| n.contains("unmet")),
            "seed {seed}: {:?}",
            g.notes
        );
        for k in 0..16 {
            let v = g.args[1].get_i128(k);
            assert!((-32..32).contains(&v), "seed {seed}: y[{k}] = {v}");
        }
    }
}
