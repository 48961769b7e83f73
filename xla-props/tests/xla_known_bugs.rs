//! The XLA bugs in docs/findings.md, pinned to the plugin versions they were
//! found in: each test reproduces the wrong result exactly, so the finding
//! stays true (and a plugin upgrade that fixes it shows up here).

use xla_props::backend::xla::{XlaBackend, XlaPlugin};
use xla_props::hlo::{parse_module, ArrayShape, ElementType};
use xla_props::literal::Literal;

fn backend(plugin: XlaPlugin) -> Option<XlaBackend> {
    let b = XlaBackend::new(plugin);
    match b.availability() {
        Ok(()) => Some(b),
        Err(reason) if std::env::var_os("CI").is_some() => panic!("{reason}"),
        Err(reason) => {
            eprintln!("skipping: {reason}");
            None
        }
    }
}

fn lit(t: ElementType, dims: &[i64], values: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), values).unwrap()
}

const SCATTER: &str = r#"
HloModule m

comb {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  u0 = f32[] parameter(2)
  u1 = f32[] parameter(3)
  s = f32[] add(a0, u0)
  p = f32[] multiply(a1, u1)
  ROOT t = (f32[], f32[]) tuple(s, p)
}

ENTRY main {
  idx = s32[2] parameter(0)
  up0 = f32[2] parameter(1)
  up1 = f32[2] parameter(2)
  z0 = f32[3] constant({0, 0, 0})
  z1 = f32[3] constant({ZERO_OR_ONE, ZERO_OR_ONE, ZERO_OR_ONE})
  sc = (f32[3], f32[3]) scatter(z0, z1, idx, up0, up1), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
  r0 = f32[3] get-tuple-element(sc), index=0
  r1 = f32[3] get-tuple-element(sc), index=1
  ROOT out = (f32[3], f32[3]) tuple(r0, r1)
}
"#;

#[test]
fn variadic_scatter_over_equal_constants_returns_the_first_result_twice() {
    for plugin in [XlaPlugin::Cpu, XlaPlugin::Cpu081] {
        let Some(b) = backend(plugin) else { continue };
        let args = [
            lit(ElementType::S32, &[2], &[1.0, 0.0]),
            lit(ElementType::F32, &[2], &[-0.125, 1.0]),
            lit(ElementType::F32, &[2], &[1.625, 1.25]),
        ];
        let run = |z1: &str| {
            let m = parse_module(&SCATTER.replace("ZERO_OR_ONE", z1)).unwrap();
            b.compile_module(&m).unwrap().run(&args).unwrap()
        };
        // z1 = 1: correct (1 * 1.25, 1 * 1.625, untouched 1).
        let ok = run("1");
        assert_eq!(ok[0].to_f64_vec(), vec![1.0, -0.125, 0.0]);
        assert_eq!(ok[1].to_f64_vec(), vec![1.25, 1.625, 1.0]);
        // z1 = 0 (equal to z0): the second result should be all zeros, but is
        // a copy of the first.
        let bad = run("0");
        assert_eq!(bad[0].to_f64_vec(), vec![1.0, -0.125, 0.0]);
        assert_eq!(
            bad[1].to_f64_vec(),
            vec![1.0, -0.125, 0.0],
            "{}: XLA no longer aliases the scatter results; update docs/findings.md",
            plugin.backend_name()
        );
    }
}

#[test]
fn f32_cbrt_of_a_subnormal_is_negative_on_xla_cpu_0_115() {
    let Some(b) = backend(XlaPlugin::Cpu) else {
        return;
    };
    let m = parse_module(
        "HloModule m\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] cbrt(x)\n}\n",
    )
    .unwrap();
    let x = Literal::from_bits(
        &ArrayShape::new(ElementType::F32, vec![2]),
        &[0x0000_0001, 0x0040_0000],
    )
    .unwrap();
    let y = b.compile_module(&m).unwrap().run(&[x]).unwrap();
    assert_eq!(
        y[0].to_bits_vec(),
        vec![0xa621_4518, 0xa621_4518],
        "cbrt(positive subnormal) = -5.6e-16; update docs/findings.md if this changed"
    );
}

#[test]
fn f32_log_of_the_smallest_subnormal_in_f32_7_on_xla_cpu_0_115() {
    let Some(b) = backend(XlaPlugin::Cpu) else {
        return;
    };
    let m = parse_module(
        "HloModule m\n\nENTRY main {\n  x = f32[7] parameter(0)\n  ROOT y = f32[7] log(x)\n}\n",
    )
    .unwrap();
    let exe = b.compile_module(&m).unwrap();
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
    let Some(b) = backend(XlaPlugin::Cpu) else {
        return;
    };
    let m = parse_module(
        "HloModule m\n\nENTRY main {\n  x = u16[3] parameter(0)\n  y = u16[3] parameter(1)\n  ROOT p = u16[3] power(x, y)\n}\n",
    )
    .unwrap();
    let x = lit(ElementType::U16, &[3], &[5669.0, 48305.0, 3.0]);
    let y = lit(ElementType::U16, &[3], &[5266.0, 46723.0, 10.0]);
    let p = b.compile_module(&m).unwrap().run(&[x, y]).unwrap();
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
