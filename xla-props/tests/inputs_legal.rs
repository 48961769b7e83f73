//! For each legal-domain class: generated inputs are legal, judged by the
//! exact reference (no non-finite output from finite legal inputs), for every
//! distribution that wants finite results, over several seeds.

use xla_props::hlo::{parse_module, Module};
use xla_props::inputs::{generate_inputs, Distribution};

const FINITE: &[Distribution] = &[
    Distribution::Uniform,
    Distribution::LogUniform,
    Distribution::Duplicates,
];

/// (what, HLO text)
const CASES: &[(&str, &str)] = &[
    ("sqrt >= 0", "HloModule m\nENTRY e {\n  x = f16[256] parameter(0)\n  ROOT r = f16[256] sqrt(x)\n}\n"),
    ("rsqrt > 0", "HloModule m\nENTRY e {\n  x = bf16[256] parameter(0)\n  ROOT r = bf16[256] rsqrt(x)\n}\n"),
    ("log > 0", "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  ROOT r = f32[256] log(x)\n}\n"),
    ("log1p > -1", "HloModule m\nENTRY e {\n  x = f16[256] parameter(0)\n  ROOT r = f16[256] log-plus-one(x)\n}\n"),
    ("divide != 0", "HloModule m\nENTRY e {\n  x = f8e4m3fn[256] parameter(0)\n  y = f8e4m3fn[256] parameter(1)\n  ROOT r = f8e4m3fn[256] divide(x, y)\n}\n"),
    ("remainder != 0", "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  y = f32[256] parameter(1)\n  ROOT r = f32[256] remainder(x, y)\n}\n"),
    ("power: negative base needs an integer exponent", "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  y = f32[256] parameter(1)\n  ROOT r = f32[256] power(x, y)\n}\n"),
    ("exp below overflow", "HloModule m\nENTRY e {\n  x = f16[256] parameter(0)\n  ROOT r = f16[256] exponential(x)\n}\n"),
    ("expm1 below overflow", "HloModule m\nENTRY e {\n  x = f8e5m2[256] parameter(0)\n  ROOT r = f8e5m2[256] exponential-minus-one(x)\n}\n"),
    ("sqrt(x - y)", "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  y = f32[256] parameter(1)\n  d = f32[256] subtract(x, y)\n  ROOT r = f32[256] sqrt(d)\n}\n"),
    ("log(a*b + c)", "HloModule m\nENTRY e {\n  a = f16[256] parameter(0)\n  b = f16[256] parameter(1)\n  c = f16[256] parameter(2)\n  p = f16[256] multiply(a, b)\n  s = f16[256] add(p, c)\n  ROOT r = f16[256] log(s)\n}\n"),
    ("1/(x - y)", "HloModule m\nENTRY e {\n  x = bf16[256] parameter(0)\n  y = bf16[256] parameter(1)\n  one = bf16[] constant(1)\n  ones = bf16[256] broadcast(one), dimensions={}\n  d = bf16[256] subtract(x, y)\n  ROOT r = bf16[256] divide(ones, d)\n}\n"),
    ("inside a fusion", "HloModule m\nfused {\n  p0 = f32[256] parameter(0)\n  p1 = f32[256] parameter(1)\n  d = f32[256] subtract(p0, p1)\n  ROOT l = f32[256] log(d)\n}\nENTRY e {\n  x = f32[256] parameter(0)\n  y = f32[256] parameter(1)\n  ROOT f = f32[256] fusion(x, y), kind=kLoop, calls=fused\n}\n"),
    ("across a reduce", "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[8,32] parameter(0)\n  z = f32[] constant(0)\n  r = f32[8] reduce(x, z), dimensions={1}, to_apply=add\n  ROOT l = f32[8] rsqrt(r)\n}\n"),
    ("x*x - 1 >= 0 (rejection sampling)", "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  s = f32[256] multiply(x, x)\n  one = f32[] constant(1)\n  b = f32[256] broadcast(one), dimensions={}\n  d = f32[256] subtract(s, b)\n  ROOT r = f32[256] sqrt(d)\n}\n"),
    ("select: log on the branch taken where x > 0", "HloModule m\nENTRY e {\n  x = f32[512] parameter(0)\n  z = f32[512] broadcast(f32[] constant(0)), dimensions={}\n  p = pred[512] compare(x, z), direction=GT\n  l = f32[512] log(x)\n  ROOT r = f32[512] select(p, l, x)\n}\n"),
    ("clamp: log(clamp(-1, x, 4))", "HloModule m\nENTRY e {\n  x = f16[256] parameter(0)\n  lo = f16[256] broadcast(f16[] constant(-1)), dimensions={}\n  hi = f16[256] broadcast(f16[] constant(4)), dimensions={}\n  c = f16[256] clamp(lo, x, hi)\n  ROOT r = f16[256] log(c)\n}\n"),
    ("index normalization before dynamic-slice", "HloModule m\nENTRY e {\n  x = f32[10,4] parameter(0)\n  i = s32[] parameter(1)\n  zero = s32[] constant(0)\n  n = s32[] constant(10)\n  lt = pred[] compare(i, zero), direction=LT\n  w = s32[] add(i, n)\n  idx = s32[] select(lt, w, i)\n  ROOT r = f32[3,4] dynamic-slice(x, idx, zero), dynamic_slice_sizes={3,4}\n}\n"),
    ("index normalization and clamp before gather", "HloModule m\nENTRY e {\n  x = f32[16,8] parameter(0)\n  i = s32[5] parameter(1)\n  zb = s32[5] broadcast(s32[] constant(0)), dimensions={}\n  nb = s32[5] broadcast(s32[] constant(16)), dimensions={}\n  hb = s32[5] broadcast(s32[] constant(15)), dimensions={}\n  lt = pred[5] compare(i, zb), direction=LT\n  w = s32[5] add(i, nb)\n  s = s32[5] select(lt, w, i)\n  c = s32[5] clamp(zb, s, hb)\n  r = s32[5,1] reshape(c)\n  ROOT g = f32[5,8] gather(x, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n}\n"),
    ("sum of squares under rsqrt", "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4,32] parameter(0)\n  sq = f32[4,32] multiply(x, x)\n  z = f32[] constant(0)\n  s = f32[4] reduce(sq, z), dimensions={1}, to_apply=add\n  r = f32[4] rsqrt(s)\n  rb = f32[4,32] broadcast(r), dimensions={0}\n  ROOT o = f32[4,32] multiply(x, rb)\n}\n"),
    ("erf-style branches: 1/|x| and log|x| only where |x| >= 1", "HloModule m\nENTRY e {\n  x = f32[1024] parameter(0)\n  ax = f32[1024] abs(x)\n  ob = f32[1024] broadcast(f32[] constant(1)), dimensions={}\n  small = pred[1024] compare(ax, ob), direction=LT\n  xx = f32[1024] multiply(x, x)\n  poly = f32[1024] multiply(xx, x)\n  nxx = f32[1024] negate(xx)\n  ex = f32[1024] exponential(nxx)\n  q = f32[1024] divide(ob, ax)\n  q2 = f32[1024] multiply(q, q)\n  q4 = f32[1024] multiply(q2, q2)\n  q8 = f32[1024] multiply(q4, q4)\n  q16 = f32[1024] multiply(q8, q8)\n  q32 = f32[1024] multiply(q16, q16)\n  t = f32[1024] multiply(ex, q32)\n  lg = f32[1024] log(ax)\n  t2 = f32[1024] add(t, lg)\n  ROOT r = f32[1024] select(small, poly, t2)\n}\n"),
    ("product chain below overflow", "HloModule m\nENTRY e {\n  a = f16[256] parameter(0)\n  b = f16[256] parameter(1)\n  c = f16[256] parameter(2)\n  d = f16[256] parameter(3)\n  p = f16[256] multiply(a, b)\n  q = f16[256] multiply(p, c)\n  ROOT r = f16[256] multiply(q, d)\n}\n"),
];

/// The module of the case whose name starts with `name`.
fn case(name: &str) -> Module {
    let (_, text) = CASES
        .iter()
        .find(|c| c.0.starts_with(name))
        .unwrap_or_else(|| panic!("no case {name}"));
    parse_module(text).unwrap()
}

#[test]
fn reference_outputs_are_finite_on_generated_inputs() {
    for (what, text) in CASES {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{what}: {e}"));
        for &d in FINITE {
            for seed in 0..4 {
                let g = generate_inputs(&m, d, seed).unwrap_or_else(|e| panic!("{what} {d}: {e}"));
                let out = xla_props::reference::evaluate(&m, &g.args)
                    .unwrap_or_else(|e| panic!("{what} {d}: {e}"));
                for o in &out {
                    for i in 0..o.element_count() {
                        let v = o.get_f64(i);
                        assert!(v.is_finite(), "{what} {d} seed {seed}: element {i} is {v}");
                    }
                }
            }
        }
    }
}

#[test]
fn index_and_shift_and_convert_classes() {
    // dynamic-slice starts in range: the reference clamps, so check the values directly
    let ds = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[10,4] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n  ROOT r = f32[3,2] dynamic-slice(x, i, j), dynamic_slice_sizes={3,2}\n}\n",
    )
    .unwrap();
    let shl = parse_module(
        "HloModule m\nENTRY e {\n  x = u16[256] parameter(0)\n  s = u16[256] parameter(1)\n  ROOT r = u16[256] shift-left(x, s)\n}\n",
    )
    .unwrap();
    let cvt = parse_module(
        "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  ROOT r = s8[256] convert(x)\n}\n",
    )
    .unwrap();
    for seed in 0..8 {
        let g = generate_inputs(&ds, Distribution::Uniform, seed).unwrap();
        assert!((0..=7).contains(&g.args[1].get_i128(0)));
        assert!((0..=2).contains(&g.args[2].get_i128(0)));
        let g = generate_inputs(&shl, Distribution::Uniform, seed).unwrap();
        assert!(g.args[1].to_i128_vec().iter().all(|s| (0..16).contains(s)));
        let g = generate_inputs(&cvt, Distribution::Uniform, seed).unwrap();
        assert!(g.args[0]
            .to_f64_vec()
            .iter()
            .all(|v| (-128.0..=127.0).contains(v)));
        // the reference agrees: no saturation happened
        let out = xla_props::reference::evaluate(&cvt, &g.args).unwrap();
        for i in 0..256 {
            assert_eq!(out[0].get_f64(i), g.args[0].get_f64(i).trunc());
        }
    }
}

#[test]
fn normalized_indices_are_in_range_and_both_signs_occur() {
    let m = case("index normalization before");
    let mut negative = false;
    for seed in 0..16 {
        let g = generate_inputs(&m, Distribution::Uniform, seed).unwrap();
        let i = g.args[1].get_i128(0);
        let start = if i < 0 { i + 10 } else { i };
        assert!((0..=7).contains(&start), "seed {seed}: i = {i}");
        negative |= i < 0;
    }
    assert!(
        negative,
        "negative indices are legal too and should be drawn"
    );
}

#[test]
fn erf_style_branches_keep_both_sides_of_the_predicate() {
    let m = case("erf-style");
    let g = generate_inputs(&m, Distribution::Uniform, 3).unwrap();
    let xs = g.args[0].to_f64_vec();
    assert!(xs.iter().any(|x| x.abs() < 1.0) && xs.iter().any(|x| x.abs() >= 1.0));
    assert!(g.unmet.is_empty(), "{:?}", g.unmet);
}

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/xla-hlo");

/// Every module of the shared corpus gets inputs (none fails to generate).
#[test]
fn every_shared_corpus_module_gets_inputs() {
    let Some(files) = xla_props::skip::hlo_corpus(CORPUS) else {
        return;
    };
    assert!(!files.is_empty());
    let mut failed = Vec::new();
    for f in &files {
        let m = xla_props::hlo::load_module_file(f).unwrap_or_else(|e| panic!("{e}"));
        // in debug builds the largest modules are left to the release run
        // (`cargo test --release -p xla-props --test inputs_legal`)
        let elements: u64 = m
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .flat_map(|i| i.shape.leaves())
            .map(|a| a.element_count().unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add);
        if cfg!(debug_assertions) && elements > 200_000 {
            continue;
        }
        if let Err(e) = generate_inputs(&m, Distribution::Uniform, 0) {
            failed.push(format!("{}: failed to generate inputs: {e}", f.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
