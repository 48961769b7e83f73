//! The XLA bugs in docs/findings.md that have no reproducer under
//! docs/repro/ (those run as `.hlotest` files, `tests/hlotest.rs`), pinned
//! to the plugin versions they were found in: each test reproduces the wrong
//! result exactly, so the finding stays true (and a plugin upgrade that
//! fixes it shows up here); and every declared model against the plugin.

use xla_props::backend::xla::{XlaBackend, XlaExecutable, XlaPlugin};
use xla_props::hlo::{parse_module, ArrayShape, ElementType};
use xla_props::literal::Literal;

fn backend(plugin: XlaPlugin) -> Option<XlaBackend> {
    let b = XlaBackend::new(plugin);
    xla_props::skip::backend_available(plugin.backend_name(), b.availability()).then_some(b)
}

/// The module `text` compiled on xla-cpu, or None (the test skips) without
/// the plugin.
fn on_xla_cpu(text: &str) -> Option<XlaExecutable> {
    let b = backend(XlaPlugin::Cpu)?;
    Some(b.compile_module(&parse_module(text).unwrap()).unwrap())
}

fn lit(t: ElementType, dims: &[i64], values: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), values).unwrap()
}

#[test]
fn f32_log_of_the_smallest_subnormal_in_f32_7_on_xla_cpu_0_115() {
    let log =
        "HloModule m\n\nENTRY main {\n  x = f32[7] parameter(0)\n  ROOT y = f32[7] log(x)\n}\n";
    let Some(exe) = on_xla_cpu(log) else {
        return;
    };
    let run = |bits: &[u64]| {
        let x = Literal::from_bits(&ArrayShape::new(ElementType::F32, vec![7]), bits).unwrap();
        exe.run(&[x]).unwrap()[0].to_bits_vec()
    };
    // in f32[7], 2^-149 gives ln(2^-150) = -103.97208 (0xc2cff1b4): neither
    // ln(2^-149) = -103.27893 (0xc2ce8ed0) nor the flushed -inf (what f32[2]
    // and f32[16] give, legal under DAZ)
    let out = run(&[1; 7]);
    assert_eq!(
        out,
        vec![0xc2cf_f1b4; 7],
        "log(0x00000001) changed: {out:x?}; update docs/findings.md"
    );
}

#[test]
fn wrapping_integer_power_uses_the_low_6_bits_of_the_exponent_on_xla_cpu_0_115() {
    let power = "HloModule m\n\nENTRY main {\n  x = u16[3] parameter(0)\n  y = u16[3] parameter(1)\n  ROOT p = u16[3] power(x, y)\n}\n";
    let Some(exe) = on_xla_cpu(power) else {
        return;
    };
    let x = lit(ElementType::U16, &[3], &[5669.0, 48305.0, 3.0]);
    let y = lit(ElementType::U16, &[3], &[5266.0, 46723.0, 10.0]);
    let p = exe.run(&[x, y]).unwrap();
    let wrap = |base: u64, e: u64| (0..e).fold(1u64, |acc, _| acc * base % 65536);
    // small exponents are right
    assert_eq!(p[0].to_bits_vec()[2], wrap(3, 10));
    // 5669^5266 mod 2^16 = 54041, but xla gives 5669^(5266 mod 64)
    assert_eq!(wrap(5669, 5266), 54041);
    assert_eq!(
        p[0].to_bits_vec()[0],
        wrap(5669, 5266 % 64),
        "power(5669, 5266) changed; update docs/findings.md"
    );
    // an exponent with the top bit set counts as negative: 0 (48305 is odd)
    assert_ne!(wrap(48305, 46723), 0);
    assert_eq!(p[0].to_bits_vec()[1], 0);
}

#[test]
fn minimum_and_maximum_drop_a_nan_second_operand_on_xla_cpu_0_115() {
    let Some(b) = backend(XlaPlugin::Cpu) else {
        return;
    };
    for op in ["minimum", "maximum"] {
        let m = parse_module(&format!(
            "HloModule m\n\nENTRY main {{\n  x = f32[7] parameter(0)\n  y = f32[7] parameter(1)\n  ROOT r = f32[7] {op}(x, y)\n}}\n"
        ))
        .unwrap();
        let x = lit(
            ElementType::F32,
            &[7],
            &[1.5, f64::NAN, 0.0, 1.5, 1.5, 1.5, 1.5],
        );
        let y = lit(
            ElementType::F32,
            &[7],
            &[f64::NAN, 1.5, f64::NAN, 1.5, 1.5, 1.5, 1.5],
        );
        let r = b.compile_module(&m).unwrap().run(&[x, y]).unwrap()[0].to_f64_vec();
        eprintln!("{op}: {r:?}");
        // StableHLO's minimum/maximum propagate NaN; xla-cpu returns x when y is NaN
        assert_eq!(
            r[0], 1.5,
            "{op}(1.5, NaN) changed: {r:?}; update docs/findings.md"
        );
    }
}

fn f32s(bits: &[u64]) -> Literal {
    Literal::from_bits(
        &ArrayShape::new(ElementType::F32, vec![bits.len() as i64]),
        bits,
    )
    .unwrap()
}

fn binary(op: &str, t: &str) -> xla_props::hlo::Module {
    parse_module(&format!(
        "HloModule m\n\nENTRY main {{\n  y = {t} parameter(0)\n  x = {t} parameter(1)\n  ROOT r = {t} {op}(y, x)\n}}\n"
    ))
    .unwrap()
}

/// f64 atan2 of two subnormals is `copysign(pi/2, y)` (the f32 case is the
/// reproducer docs/repro/atan2-subnormals, run by `tests/hlotest.rs`).
#[test]
fn f64_atan2_of_two_subnormals_is_pi_over_2() {
    for plugin in [XlaPlugin::Cpu, XlaPlugin::Cpu081] {
        let Some(b) = backend(plugin) else { continue };
        let name = plugin.backend_name();
        // exact: pi/4 and -3pi/4; flushed: 0 and -pi
        let s = 1u64 << 63;
        let f64s =
            |v: &[u64]| Literal::from_bits(&ArrayShape::new(ElementType::F64, vec![2]), v).unwrap();
        let r = b
            .compile_module(&binary("atan2", "f64[2]"))
            .unwrap()
            .run(&[f64s(&[1, s | 1]), f64s(&[1, s | 1])])
            .unwrap()[0]
            .to_f64_vec();
        assert_eq!(
            r,
            vec![std::f64::consts::FRAC_PI_2, -std::f64::consts::FRAC_PI_2],
            "{name}: f64 atan2 of two subnormals changed; update docs/findings.md"
        );
    }
}

#[test]
fn power_with_a_subnormal_base_takes_it_as_2_pow_minus_150() {
    for plugin in [XlaPlugin::Cpu, XlaPlugin::Cpu081] {
        let Some(b) = backend(plugin) else { continue };
        let x = f32s(&[0x1, 0x7f_ffff, 0x1]);
        let y = lit(ElementType::F32, &[3], &[0.5, 0.5, -0.5]);
        let r = b
            .compile_module(&binary("power", "f32[3]"))
            .unwrap()
            .run(&[x, y])
            .unwrap()[0]
            .to_bits_vec();
        // pow(2^-149, 0.5) = 2^-74.5 exactly, 0 if flushed; xla: (2^-150)^0.5 = 2^-75
        assert_eq!(
            r,
            vec![0x1a00_0000, 0x1a00_0000, 0x6500_0000],
            "{}: power of a subnormal changed: {r:x?}; update docs/findings.md",
            plugin.backend_name()
        );
    }
}

/// An f64 depthwise convolution over 3 features with an infinite input in
/// feature 0 (the other features' windows that hold it leak).
fn depthwise_probe() -> (xla_props::hlo::Module, Vec<Literal>) {
    let m = parse_module(
        "HloModule m\n\nENTRY main {\n  x = f64[1,5,5,3] parameter(0)\n  w = f64[3,3,1,3] parameter(1)\n  \
         ROOT c = f64[1,3,3,3] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3\n}\n",
    )
    .unwrap();
    let mut x: Vec<f64> = (0..75).map(|i| f64::from(i % 7) - 3.0).collect();
    x[(2 * 5 + 2) * 3] = f64::INFINITY;
    let w: Vec<f64> = (0..27).map(|i| f64::from(i % 5) * 0.5 - 1.0).collect();
    (
        m,
        vec![
            lit(ElementType::F64, &[1, 5, 5, 3], &x),
            lit(ElementType::F64, &[3, 3, 1, 3], &w),
        ],
    )
}

/// A convolution of 2 batch groups with 2 output features each, one
/// non-finite weight of output feature 1 (group 0) and one infinite input
/// (group 1, at the corner): feature 3 leaks everywhere, the input does not.
fn batch_group_probe(t: ElementType) -> (xla_props::hlo::Module, Vec<Literal>) {
    let m = parse_module(&format!(
        "HloModule m\n\nENTRY main {{\n  x = {t}[2,5,5,2] parameter(0)\n  w = {t}[3,3,2,4] parameter(1)\n  \
         ROOT c = {t}[1,3,3,4] convolution(x, w), window={{size=3x3}}, dim_labels=b01f_01io->b01f, batch_group_count=2\n}}\n"
    ))
    .unwrap();
    let bad = if t == ElementType::F8E4M3Fn {
        f64::NAN
    } else {
        f64::INFINITY
    };
    let mut x: Vec<f64> = (0..100).map(|i| f64::from(i % 5) * 0.5 - 1.0).collect();
    x[5 * 5 * 2] = bad;
    let mut w: Vec<f64> = (0..72).map(|i| f64::from(i % 3) - 1.0).collect();
    w[((3 + 1) * 2) * 4 + 1] = bad;
    (
        m,
        vec![lit(t, &[2, 5, 5, 2], &x), lit(t, &[3, 3, 2, 4], &w)],
    )
}

/// Every known-bug model the plugin declares computes, by the reference,
/// exactly what the plugin returns wherever the model departs from the exact
/// result (elsewhere the plugin may flush legally), so that a model cannot
/// drift from the compiler it describes.
#[test]
fn every_declared_model_reproduces_the_plugin() {
    use xla_props::backend::Backend;
    let s8 = |v: &[f64]| lit(ElementType::S8, &[7], v);
    let u16s = |v: &[f64]| lit(ElementType::U16, &[3], v);
    let bf16s = |v: &[u64]| {
        Literal::from_bits(&ArrayShape::new(ElementType::Bf16, vec![v.len() as i64]), v).unwrap()
    };
    let unary = |op: &str, t: &str| {
        parse_module(&format!(
            "HloModule m\n\nENTRY main {{\n  x = {t} parameter(0)\n  ROOT r = {t} {op}(x)\n}}\n"
        ))
        .unwrap()
    };
    let probes: Vec<(xla_props::hlo::Module, Vec<Literal>)> = vec![
        (
            binary("power", "s8[7]"),
            vec![
                s8(&[46.0, -1.0, -1.0, 2.0, 3.0, -3.0, 1.0]),
                s8(&[71.0, -3.0, -128.0, -1.0, 64.0, 65.0, -5.0]),
            ],
        ),
        (
            binary("power", "u16[3]"),
            vec![
                u16s(&[5669.0, 48305.0, 3.0]),
                u16s(&[5266.0, 46723.0, 10.0]),
            ],
        ),
        (
            unary("log", "f32[7]"),
            vec![f32s(&[
                0x1,
                0x2,
                0x40_0000,
                0x7f_ffff,
                0x1,
                0x3f80_0000,
                0x80_0000,
            ])],
        ),
        (
            binary("power", "f32[3]"),
            vec![
                f32s(&[0x1, 0x40_0000, 0x1]),
                lit(ElementType::F32, &[3], &[0.5, 2.0, -0.5]),
            ],
        ),
        (
            unary("cbrt", "f32[4]"),
            vec![f32s(&[0x1, 0x8040_0000, 0x7f_ffff, 0x4100_0000])],
        ),
        (unary("cbrt", "bf16[2]"), vec![bf16s(&[0x007e, 0x8001])]),
        (
            parse_module(
                "HloModule m\n\nENTRY main {\n  x = f32[3] parameter(0)\n  \
                 ROOT r = f32[3] reduce-precision(x), exponent_bits=5, mantissa_bits=0\n}\n",
            )
            .unwrap(),
            vec![lit(ElementType::F32, &[3], &[f64::NAN, 3.0, -f64::NAN])],
        ),
        depthwise_probe(),
        batch_group_probe(ElementType::F32),
        batch_group_probe(ElementType::Bf16),
        batch_group_probe(ElementType::F16),
        batch_group_probe(ElementType::F8E5M2),
        batch_group_probe(ElementType::F8E4M3Fn),
        (
            // an unsigned power of a broadcast base ignores the exponent's top bit
            parse_module(
                "HloModule m\n\nENTRY main {\n  s = u16[] parameter(0)\n  \
                 x = u16[3] broadcast(s), dimensions={}\n  y = u16[3] parameter(1)\n  \
                 ROOT r = u16[3] power(x, y)\n}\n",
            )
            .unwrap(),
            vec![
                lit(ElementType::U16, &[], &[55558.0]),
                u16s(&[59717.0, 14529.0, 10.0]),
            ],
        ),
        (
            // divide by a broadcast constant: x * (1/3)
            parse_module(
                "HloModule m\n\nENTRY main {\n  x = f32[4] parameter(0)\n  \
                 c = f32[] constant(3)\n  b = f32[4] broadcast(c), dimensions={}\n  \
                 ROOT r = f32[4] divide(x, b)\n}\n",
            )
            .unwrap(),
            vec![lit(ElementType::F32, &[4], &[10.0, 1.0, 7.0, 5.0])],
        ),
        (
            // -0 + broadcast(0)
            parse_module(
                "HloModule m\n\nENTRY main {\n  x = f32[2] parameter(0)\n  \
                 c = f32[] constant(0)\n  b = f32[2] broadcast(c), dimensions={}\n  \
                 ROOT r = f32[2] add(x, b)\n}\n",
            )
            .unwrap(),
            vec![lit(ElementType::F32, &[2], &[-0.0, 1.0])],
        ),
        (
            // a convolution of two constants, folded with saturation
            parse_module(
                "HloModule m\n\nENTRY main {\n  \
                 x = s16[1,2,1,2] constant({{{{32767, 1}}, {{100, -3}}}})\n  \
                 w = s16[1,1,2,1] constant({{{{32767}, {32767}}}})\n  \
                 ROOT r = s16[1,2,1,1] convolution(x, w), window={size=1x1}, \
                 dim_labels=b01f_01io->b01f\n}\n",
            )
            .unwrap(),
            Vec::new(),
        ),
        (
            binary("atan2", "bf16[3]"),
            vec![
                bf16s(&[0x0001, 0x8001, 0x0040]),
                bf16s(&[0x0001, 0x8001, 0x0080]),
            ],
        ),
    ];
    for plugin in [XlaPlugin::Cpu, XlaPlugin::Cpu081] {
        let Some(b) = backend(plugin) else { continue };
        for (m, args) in &probes {
            let bugs: Vec<_> = b
                .known_bugs()
                .iter()
                .filter_map(|k| k.model.apply(m).map(|v| (k.id, v)))
                .collect();
            let actual = b.compile_module(m).unwrap().run(args).unwrap();
            let exact = xla_props::reference::evaluate(m, args).unwrap();
            let same = |w: &Literal, a: &Literal, i: usize| {
                w.get_bits(i) == a.get_bits(i)
                    || (w.dtype().is_float() && w.get_f64(i).is_nan() && a.get_f64(i).is_nan())
            };
            for (id, model) in bugs {
                let want = xla_props::reference::evaluate(&model, args).unwrap();
                let (w, a) = (&want[0], &actual[0]);
                let mut shown = 0;
                for i in 0..a.element_count() {
                    if same(w, &exact[0], i) {
                        continue;
                    }
                    shown += 1;
                    assert!(
                        same(w, a, i),
                        "{}: model {id} element {i}: model {:#x}, plugin {:#x}",
                        plugin.backend_name(),
                        w.get_bits(i),
                        a.get_bits(i)
                    );
                }
                assert!(shown > 0, "probe shows nothing of {id}");
            }
        }
    }
}

/// `xla-cpu/bf16-dot-sums-in-bf16`: the attention dot of the causal LMs'
/// train steps (rhs batch dimensions {0,2}, lhs contracting its dimension
/// 2), run inside a larger module: the deep check names it, and judged
/// alone with xla-cpu's known bugs it is that bug (the line `compare`
/// prints under its culprit).
#[test]
fn a_bf16_dot_culprit_is_named_as_its_known_bug_on_xla_cpu_0_115() {
    use xla_props::backend::Backend;
    use xla_props::isolate::{deep_check, known_bugs_of_unit, Oracle, Tested};
    let Some(b) = backend(XlaPlugin::Cpu) else {
        return;
    };
    let m = parse_module(
        "HloModule m\nENTRY e {\n  a = bf16[2,2,8,8] parameter(0)\n  b = bf16[2,8,2,8] parameter(1)\n  \
         d = bf16[2,2,8,8] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, \
         rhs_batch_dims={0,2}, rhs_contracting_dims={3}\n  ROOT t = bf16[2,2,8,8] tanh(d)\n}\n",
    )
    .unwrap();
    // alternating signs: cancellation that a sum in bf16 cannot keep
    let v = |n: usize, s: f64| -> Vec<f64> {
        (0..n)
            .map(|i| (1.0 + (i % 7) as f64 / 8.0) * if (i / 3) % 2 == 0 { s } else { -s })
            .collect()
    };
    let args = [
        lit(ElementType::Bf16, &[2, 2, 8, 8], &v(256, 0.75)),
        lit(ElementType::Bf16, &[2, 8, 2, 8], &v(256, 0.5)),
    ];
    let tested = Tested::new(&b);
    let values = Oracle::Exact.all_values(&m, &args).unwrap();
    let deep = deep_check(&m, &values, &Oracle::Exact, &tested, &mut |_| {});
    let culprit = deep.local_disagreements.first().expect("the dot disagrees");
    assert_eq!(culprit.top_level, "d");
    let notes = known_bugs_of_unit(&m, &values, culprit, &tested, b.known_bugs());
    assert!(
        notes
            .iter()
            .any(|n| n.id == "xla-cpu/bf16-dot-sums-in-bf16"),
        "{notes:?}"
    );
    // without the bug declared, nothing explains it
    assert!(known_bugs_of_unit(&m, &values, culprit, &tested, &[]).is_empty());
}
