//! Parameter roles read from small hand-written programs, and the finite
//! repair on programs whose default inputs overflow.

use super::graph::Graph;
use super::*;
use crate::hlo::parse_module;

fn module(text: &str) -> crate::hlo::Module {
    parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn roles(text: &str) -> Vec<ParameterRole> {
    let m = module(text);
    let g = Graph::build_unrolled(&m).unwrap();
    super::scale::parameter_roles(&m, &g)
}

const ADD: &str =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

#[test]
fn a_dot_kernel_is_a_weight_and_what_is_added_to_its_result_a_bias() {
    let text = "HloModule m\nENTRY e {\n  x = f32[8,16] parameter(0)\n  w = f32[16,32] parameter(1)\n  \
                b = f32[32] parameter(2)\n  d = f32[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  \
                bb = f32[8,32] broadcast(b), dimensions={1}\n  ROOT y = f32[8,32] add(d, bb)\n}\n";
    assert_eq!(
        roles(text),
        vec![
            ParameterRole::Input,
            ParameterRole::Weight { fan_in: 16.0 },
            ParameterRole::Bias
        ]
    );
    let g = generate_inputs(&module(text), Distribution::Uniform, 1).unwrap();
    let bound = (3.0f64 / 16.0).sqrt();
    assert!(
        g.intervals[1].lo >= -bound && g.intervals[1].hi <= bound,
        "{:?}",
        g.intervals[1]
    );
    assert_eq!(g.intervals[2], Interval::new(-0.25, 0.25));
    // the data the layer takes: standardized, so that `x w` stays of order one
    assert_eq!(g.intervals[0], Interval::new(-1.0, 1.0));
    assert_eq!(g.roles[1].name(), "weight");
}

#[test]
fn what_depends_on_itself_is_neither_norm_scale_nor_bias() {
    // x * rsqrt(x . x) normalizes x; x + dot(x, w) is a residual
    let text =
        "HloModule m\nENTRY e {\n  x = f32[4,8] parameter(0)\n  w = f32[8,8] parameter(1)\n  \
                d = f32[4,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  \
                r = f32[4,8] add(x, d)\n  s = f32[4,8] multiply(r, r)\n  q = f32[4,8] rsqrt(s)\n  \
                ROOT n = f32[4,8] multiply(x, q)\n}\n";
    assert_eq!(
        roles(text),
        vec![ParameterRole::Input, ParameterRole::Weight { fan_in: 8.0 }]
    );
}

#[test]
fn a_convolution_kernel_is_a_weight_with_its_fan_in() {
    let text = "HloModule m\nENTRY e {\n  x = f32[1,8,8,3] parameter(0)\n  k = f32[3,3,3,4] parameter(1)\n  \
                ROOT c = f32[1,8,8,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
    assert_eq!(
        roles(text),
        vec![ParameterRole::Input, ParameterRole::Weight { fan_in: 27.0 }]
    );
}

/// Equinox's `Linear` is `W @ x` (vmapped: `dot(W, x)` contracting both
/// last dimensions), and an LSTM cell adds its bias to a sum of two
/// contractions: `W x + U h + b`.
#[test]
fn a_weight_multiplied_from_the_left_and_the_bias_of_a_sum_of_contractions() {
    let text = "HloModule m\nENTRY e {\n  w = f32[16,8] parameter(0)\n  x = f32[4,8] parameter(1)\n  \
                u = f32[16,32] parameter(2)\n  h = f32[4,32] parameter(3)\n  b = f32[16] parameter(4)\n  \
                d = f32[16,4] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n  \
                e = f32[16,4] dot(u, h), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n  \
                s = f32[16,4] add(d, e)\n  bb = f32[16,4] broadcast(b), dimensions={0}\n  \
                ROOT y = f32[16,4] add(s, bb)\n}\n";
    let r = roles(text);
    // the data on the right is scaled like a weight, the weight on the
    // left like standardized data: either way no layer saturates
    assert_eq!(
        r,
        vec![
            ParameterRole::Input,
            ParameterRole::Weight { fan_in: 8.0 },
            ParameterRole::Input,
            ParameterRole::Weight { fan_in: 32.0 },
            ParameterRole::Bias,
        ]
    );
    let g = generate_inputs(&module(text), Distribution::Uniform, 3).unwrap();
    for k in 0..4 {
        let i = g.intervals[k];
        assert!(i.lo >= -1.0 && i.hi <= 1.0, "parameter {k}: {i}");
    }
}

/// A layer norm: `(x - mean) * rsqrt(var + eps) * scale + shift`.
const LAYER_NORM: &str = "HloModule m\nADD\nENTRY e {\n  x = f32[4,8] parameter(0)\n  scale = f32[8] parameter(1)\n  \
    shift = f32[8] parameter(2)\n  z = f32[] constant(0)\n  eight = f32[] constant(8)\n  n = f32[4] broadcast(eight), dimensions={}\n  \
    s = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n  mean = f32[4] divide(s, n)\n  \
    mb = f32[4,8] broadcast(mean), dimensions={0}\n  c = f32[4,8] subtract(x, mb)\n  c2 = f32[4,8] multiply(c, c)\n  \
    v = f32[4] reduce(c2, z), dimensions={1}, to_apply=add\n  var = f32[4] divide(v, n)\n  \
    e5 = f32[] constant(1e-5)\n  eps = f32[4] broadcast(e5), dimensions={}\n  ve = f32[4] add(var, eps)\n  r = f32[4] rsqrt(ve)\n  \
    rb = f32[4,8] broadcast(r), dimensions={0}\n  normed = f32[4,8] multiply(c, rb)\n  \
    sb = f32[4,8] broadcast(scale), dimensions={1}\n  scaled = f32[4,8] multiply(normed, sb)\n  \
    hb = f32[4,8] broadcast(shift), dimensions={1}\n  ROOT y = f32[4,8] add(scaled, hb)\n}\n";

/// The roles of a norm `text` (with `ADD` for the reducer) whose
/// parameter 0 is the data it normalizes and parameter 1 its scale: those
/// two are checked, and the scale's drawn range.
fn norm_roles(text: &str) -> Vec<ParameterRole> {
    let text = text.replace("ADD\n", ADD);
    let r = roles(&text);
    assert_eq!(r[1], ParameterRole::NormScale, "{r:?}");
    // x is normalized by a value computed from itself: data, not a scale
    assert_eq!(r[0], ParameterRole::Data, "{r:?}");
    let g = generate_inputs(&module(&text), Distribution::Uniform, 2).unwrap();
    assert_eq!(g.intervals[1], Interval::new(0.5, 1.5));
    r
}

#[test]
fn what_multiplies_a_normalized_value_is_a_norm_scale() {
    let r = norm_roles(LAYER_NORM);
    // the shift is added to a normalized value
    assert_eq!(r[2], ParameterRole::Bias);
}

/// Haiku's RMSNorm: `(x * scale) * rsqrt(mean(x^2) + eps)`, the scale
/// meeting the normalizer only after multiplying `x`.
const RMS_NORM: &str = "HloModule m\nADD\nENTRY e {\n  x = f32[4,8] parameter(0)\n  scale = f32[8] parameter(1)\n  \
    z = f32[] constant(0)\n  eight = f32[] constant(8)\n  n = f32[4] broadcast(eight), dimensions={}\n  \
    sb = f32[4,8] broadcast(scale), dimensions={1}\n  xs = f32[4,8] multiply(x, sb)\n  \
    x2 = f32[4,8] multiply(x, x)\n  s = f32[4] reduce(x2, z), dimensions={1}, to_apply=add\n  ms = f32[4] divide(s, n)\n  \
    e5 = f32[] constant(1e-5)\n  eps = f32[4] broadcast(e5), dimensions={}\n  me = f32[4] add(ms, eps)\n  r = f32[4] rsqrt(me)\n  \
    rb = f32[4,8] broadcast(r), dimensions={0}\n  ROOT y = f32[4,8] multiply(xs, rb)\n}\n";

#[test]
fn a_scale_that_meets_the_normalizer_after_another_factor_is_a_norm_scale() {
    norm_roles(RMS_NORM);
}

#[test]
fn embeddings_class_tokens_and_running_means_take_activations_place() {
    // tokens looked up in `emb` plus a position embedding `pos`; a class
    // token `cls` joined with a dense layer's output; a running mean `mu`
    // subtracted from it; a VAE's noise `eps` in `d + exp(x) * eps`; and
    // `out`, a table whose rows are only moved
    let text = "HloModule m\nENTRY e {\n  emb = f32[10,4] parameter(0)\n  ids = s32[3,1] parameter(1)\n  \
                pos = f32[3,4] parameter(2)\n  x = f32[3,4] parameter(3)\n  w = f32[4,4] parameter(4)\n  \
                cls = f32[1,4] parameter(5)\n  mu = f32[4] parameter(6)\n  out = f32[10,4] parameter(7)\n  \
                eps = f32[3,4] parameter(8)\n  sig = f32[3,4] exponential(x)\n  ns = f32[3,4] multiply(sig, eps)\n  \
                z = f32[3,4] add(d, ns)\n  \
                g = f32[3,4] gather(emb, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}\n  \
                e = f32[3,4] add(g, pos)\n  d = f32[3,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  \
                mb = f32[3,4] broadcast(mu), dimensions={1}\n  c = f32[3,4] subtract(d, mb)\n  \
                j = f32[4,4] concatenate(cls, d), dimensions={0}\n  \
                moved = f32[3,4] gather(out, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}\n  \
                ROOT t = (f32[3,4], f32[3,4], f32[4,4], f32[3,4], f32[3,4]) tuple(e, c, j, moved, z)\n}\n";
    let r = roles(text);
    for k in [0, 2, 5, 6, 8] {
        assert_eq!(r[k], ParameterRole::Activation, "parameter {k}: {r:?}");
    }
    assert_eq!(r[3], ParameterRole::Input, "{r:?}");
    assert_eq!(r[7], ParameterRole::Data, "{r:?}");
    let g = generate_inputs(&module(text), Distribution::Uniform, 2).unwrap();
    assert_eq!(g.intervals[0], Interval::new(-1.0, 1.0));
}

#[test]
fn biases_concatenated_before_their_add_are_biases() {
    // an LSTM cell's gate biases joined into one vector added to one dot
    let text = "HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n  w = f32[4,8] parameter(1)\n  \
                bi = f32[4] parameter(2)\n  bf = f32[4] parameter(3)\n  \
                d = f32[2,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  \
                b = f32[8] concatenate(bi, bf), dimensions={0}\n  bb = f32[2,8] broadcast(b), dimensions={1}\n  \
                ROOT y = f32[2,8] add(d, bb)\n}\n";
    let r = roles(text);
    assert_eq!(r[2], ParameterRole::Bias, "{r:?}");
    assert_eq!(r[3], ParameterRole::Bias, "{r:?}");
}

#[test]
fn a_scale_rescaled_by_a_constant_keeps_the_default_range() {
    // `(scale / 64)` drawn in the default range is a scale in [-1, 1]: the
    // role's range would describe the product, not the parameter
    let text = RMS_NORM.replace("ADD\n", ADD).replace(
        "sb = f32[4,8] broadcast(scale), dimensions={1}",
        "c = f32[] constant(0.015625)\n  cb = f32[8] broadcast(c), dimensions={}\n  \
         sc = f32[8] multiply(scale, cb)\n  sb = f32[4,8] broadcast(sc), dimensions={1}",
    );
    let r = roles(&text);
    assert_eq!(r[1], ParameterRole::Data, "{r:?}");
}

/// Adam's update of one parameter (optax's form): moments, bias
/// corrections from the step count, and the learning rate.
const ADAM: &str = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  g = f32[16] parameter(1)\n  \
    mu = f32[16] parameter(2)\n  nu = f32[16] parameter(3)\n  count = s32[] parameter(4)\n  lr = f32[] parameter(5)\n  \
    c9 = f32[] constant(0.9)\n  c1 = f32[] constant(0.1)\n  b1 = f32[16] broadcast(c9), dimensions={}\n  b1c = f32[16] broadcast(c1), dimensions={}\n  \
    m1 = f32[16] multiply(mu, b1)\n  m2 = f32[16] multiply(g, b1c)\n  m = f32[16] add(m1, m2)\n  \
    c999 = f32[] constant(0.999)\n  c001 = f32[] constant(0.001)\n  b2 = f32[16] broadcast(c999), dimensions={}\n  b2c = f32[16] broadcast(c001), dimensions={}\n  \
    v1 = f32[16] multiply(nu, b2)\n  gs = f32[16] multiply(g, b2c)\n  g2 = f32[16] multiply(gs, g)\n  v = f32[16] add(v1, g2)\n  \
    one = s32[] constant(1)\n  t = s32[] add(count, one)\n  tf = f32[] convert(t)\n  \
    pw = f32[] power(c999, tf)\n  onef = f32[] constant(1)\n  corr = f32[] subtract(onef, pw)\n  \
    cb = f32[16] broadcast(corr), dimensions={}\n  vh = f32[16] divide(v, cb)\n  sq = f32[16] sqrt(vh)\n  \
    c8 = f32[] constant(1e-8)\n  e = f32[16] broadcast(c8), dimensions={}\n  den = f32[16] add(sq, e)\n  u = f32[16] divide(m, den)\n  \
    lb = f32[16] broadcast(lr), dimensions={}\n  step = f32[16] multiply(lb, u)\n  np = f32[16] subtract(p, step)\n  \
    ROOT r = (f32[16], f32[16], f32[16]) tuple(np, m, v)\n}\n";

#[test]
fn adams_second_moment_step_count_and_learning_rate() {
    let r = roles(ADAM);
    assert_eq!(
        r,
        vec![
            ParameterRole::Data,
            // the gradient is squared into nu: its sign does not matter there
            ParameterRole::Data,
            // mu: a moving average of the gradient
            ParameterRole::Average,
            ParameterRole::Moment,
            ParameterRole::StepCount,
            ParameterRole::Rate,
        ]
    );
    let g = generate_inputs(&module(ADAM), Distribution::Uniform, 3).unwrap();
    assert_eq!(g.intervals[3], Interval::new(0.0, 1.0));
    assert_eq!(g.intervals[4], Interval::new(1.0, 16.0));
    // 1e-4 and 1e-2 are not f32 values: the range is rounded inward
    let lr = g.intervals[5];
    assert!(
        lr.lo >= 1e-4 && lr.lo < 1.0001e-4 && lr.hi <= 1e-2 && lr.hi > 0.9999e-2,
        "{lr}"
    );
    let count = g.args[4].get_f64(0);
    assert!(
        (1.0..=16.0).contains(&count) && count.fract() == 0.0,
        "{count}"
    );
    for i in 0..16 {
        assert!(g.args[3].get_f64(i) >= 0.0);
    }
}

#[test]
fn labels_compared_with_an_iota_are_in_range_of_its_extent() {
    let text = "HloModule m\nENTRY e {\n  logits = f32[8,10] parameter(0)\n  y = s32[8] parameter(1)\n  \
                yb = s32[8,10] broadcast(y), dimensions={0}\n  io = s32[8,10] iota(), iota_dimension=1\n  \
                oh = pred[8,10] compare(yb, io), direction=EQ\n  zero = f32[] constant(0)\n  z = f32[8,10] broadcast(zero), dimensions={}\n  \
                ROOT s = f32[8,10] select(oh, logits, z)\n}\n";
    assert_eq!(
        roles(text),
        vec![ParameterRole::Data, ParameterRole::Label { classes: 10 }]
    );
    let g = generate_inputs(&module(text), Distribution::Uniform, 4).unwrap();
    assert_eq!(g.intervals[1], Interval::new(0.0, 9.0));
    for i in 0..8 {
        assert!((0.0..10.0).contains(&g.args[1].get_f64(i)));
    }
}

#[test]
fn a_gather_index_is_an_index() {
    let text = "HloModule m\nENTRY e {\n  t = f32[10,4] parameter(0)\n  i = s32[3,1] parameter(1)\n  \
                ROOT g = f32[3,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, \
                index_vector_dim=1, slice_sizes={1,4}\n}\n";
    assert_eq!(
        roles(text),
        vec![ParameterRole::Data, ParameterRole::Index { extent: 10 }]
    );
}

#[test]
fn a_whole_type_integer_that_is_no_count_keeps_its_range() {
    // an integer tensor converted to float is data, not a step count
    let text =
        "HloModule m\nENTRY e {\n  q = s8[16] parameter(0)\n  ROOT f = f32[16] convert(q)\n}\n";
    assert_eq!(roles(text), vec![ParameterRole::Data]);
}

/// `x * 4^10` in f16, by a loop: the default inputs overflow it; the
/// intervals and the point check do not see through the loop, the
/// reference does.
const LOOP: &str = "HloModule m\ncond {\n  s = (s32[], f16[8]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  \
    n = s32[] constant(10)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\
    body {\n  s = (s32[], f16[8]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  one = s32[] constant(1)\n  \
    j = s32[] add(i, one)\n  v = f16[8] get-tuple-element(s), index=1\n  four = f16[] constant(4)\n  \
    fb = f16[8] broadcast(four), dimensions={}\n  w = f16[8] multiply(v, fb)\n  ROOT t = (s32[], f16[8]) tuple(j, w)\n}\n\
    ENTRY e {\n  x = f16[8] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f16[8]) tuple(z, x)\n  \
    l = (s32[], f16[8]) while(t), condition=cond, body=body\n  ROOT r = f16[8] get-tuple-element(l), index=1\n}\n";

#[test]
fn non_finite_reference_outputs_are_repaired_and_reported() {
    let m = module(LOOP);
    let g = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
    let out = crate::reference::evaluate(&m, &g.args).unwrap();
    for l in &out {
        for i in 0..l.element_count() {
            assert!(l.get_f64(i).is_finite(), "{:?}", g.notes);
        }
    }
    assert_eq!(g.narrowed, vec![0], "{:?}", g.notes);
    // 4^10 * x stays below f16's max (65504) only for |x| < 0.0625
    assert!(
        g.intervals[0].hi <= 0.0625 && g.intervals[0].hi > 0.0,
        "{}",
        g.intervals[0]
    );
    for &p in &g.narrowed {
        assert!(
            g.notes
                .iter()
                .any(|n| n.starts_with(&format!("parameter {p} ")) && n.contains("narrowed")),
            "{:?}",
            g.notes
        );
    }
    // the intervals reported are the ones drawn from
    let x = &g.args[0];
    for i in 0..x.element_count() {
        assert!(g.intervals[0].contains(x.get_f64(i)));
    }
    // deterministic per seed
    let again = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
    assert_eq!(again.args, g.args);
    assert_eq!(again.notes, g.notes);
}

#[test]
fn non_finite_values_start_where_every_operand_is_finite() {
    // log(x . w) is NaN where the dot is negative; the -inf is the program's
    let text = "HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n  w = f32[2,2] parameter(1)\n  \
                d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  l = f32[2,2] log(d)\n  \
                minf = f32[] constant(-inf)\n  ninf = f32[2,2] broadcast(minf), dimensions={}\n  \
                a = f32[2,2] add(l, ninf)\n  ROOT r = (f32[2,2], f32[2,2]) tuple(a, d)\n}\n";
    let m = module(text);
    let shape = crate::hlo::ArrayShape::new(crate::hlo::ElementType::F32, vec![2, 2]);
    let lit = |v: &[f64]| crate::literal::Literal::from_f64s(&shape, v).unwrap();
    // d = x . w = w: positive, so the non-finite values start at the constant alone
    let positive = [lit(&[1.0, 0.0, 0.0, 1.0]), lit(&[1.0, 1.0, 2.0, 3.0])];
    let starts = super::finite::nonfinite_starts(&m, &positive)
        .unwrap()
        .unwrap();
    let at: Vec<&str> = starts.iter().map(|s| s.at.as_str()).collect();
    assert_eq!(at, ["minf"], "{starts:?}");
    assert!(starts[0].params.is_empty());
    // d = [[1, -1], [2, 3]]: the log's NaN starts upstream of both parameters
    let args = [lit(&[1.0, 0.0, 0.0, 1.0]), lit(&[1.0, -1.0, 2.0, 3.0])];
    let starts = super::finite::nonfinite_starts(&m, &args).unwrap().unwrap();
    let at: Vec<&str> = starts.iter().map(|s| s.at.as_str()).collect();
    assert_eq!(at, ["l", "minf"], "{starts:?}");
    assert_eq!(starts[0].params, vec![0, 1]);
    assert_eq!(starts[0].elements, Some((4, vec![1])));
    let finite_text = text.replace("add(l, ninf)", "add(d, d)");
    // and where everything is finite there is nothing to repair
    assert_eq!(
        super::finite::nonfinite_starts(&module(&finite_text), &positive).unwrap(),
        None
    );
}

#[test]
fn a_role_range_that_leaves_no_legal_input_is_dropped() {
    // sqrt(x - 3): x is a moment by its dataflow, but [0, 1] holds no x >= 3
    let text = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  c = f32[] constant(3)\n  \
                cb = f32[8] broadcast(c), dimensions={}\n  d = f32[8] subtract(x, cb)\n  ROOT r = f32[8] sqrt(d)\n}\n";
    assert_eq!(roles(text), vec![ParameterRole::Moment]);
    let g = generate_inputs(&module(text), Distribution::Uniform, 7).unwrap();
    assert_eq!(g.intervals[0], Interval::new(3.0, 64.0));
    assert!(g.notes.iter().any(|n| n.contains("roles")), "{:?}", g.notes);
}

#[test]
fn every_role_has_a_rule_and_a_sensible_range() {
    let all = [
        ParameterRole::Weight { fan_in: 4.0 },
        ParameterRole::NormScale,
        ParameterRole::Moment,
        ParameterRole::Average,
        ParameterRole::Bias,
        ParameterRole::Rate,
        ParameterRole::StepCount,
        ParameterRole::Label { classes: 3 },
        ParameterRole::Index { extent: 5 },
        ParameterRole::Input,
        ParameterRole::Activation,
        ParameterRole::Data,
    ];
    for r in all {
        assert!(!r.rule().is_empty() && !r.name().is_empty());
        if let Some(i) = r.range() {
            assert!(i.lo < i.hi && i.is_bounded(), "{r}: {i}");
        }
    }
    assert_eq!(
        ParameterRole::Label { classes: 3 }.range(),
        Some(Interval::new(0.0, 2.0))
    );
}
