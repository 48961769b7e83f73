//! Complex parameters: each element's real and imaginary parts drawn as
//! floats of the component type, deterministically per seed; no real-interval
//! requirement reaches a complex value; the finite repair sees complex
//! outputs.

use super::*;
use crate::hlo::{parse_module, ElementType, Module};
use crate::literal::Literal;

fn module(text: &str) -> Module {
    parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `op(z)` on one complex parameter of type `t` and dims `dims`.
fn unary(op: &str, t: &str, dims: &str) -> Module {
    module(&format!(
        "HloModule m\nENTRY e {{\n  z = {t}[{dims}] parameter(0)\n  ROOT r = {t}[{dims}] {op}(z)\n}}\n"
    ))
}

fn parts(l: &Literal) -> Vec<(f64, f64)> {
    l.to_complex_vec()
}

#[test]
fn a_complex_parameter_has_its_shape_and_type() {
    let m = unary("negate", "c64", "3,5");
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert_eq!(g.args.len(), 1);
    assert_eq!(g.args[0].dtype(), ElementType::C64);
    assert_eq!(g.args[0].dims(), &[3, 5]);
    let m = unary("negate", "c128", "7");
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert_eq!(g.args[0].dtype(), ElementType::C128);
    assert_eq!(g.args[0].dims(), &[7]);
}

#[test]
fn complex_generation_is_deterministic_per_seed() {
    let m = unary("exponential", "c64", "4,4");
    let a = generate_inputs(&m, Distribution::Uniform, 42).unwrap();
    let b = generate_inputs(&m, Distribution::Uniform, 42).unwrap();
    assert_eq!(a.args, b.args);
    let c = generate_inputs(&m, Distribution::Uniform, 43).unwrap();
    assert_ne!(a.args, c.args);
}

#[test]
fn both_parts_are_drawn_independently_inside_the_default_range() {
    let m = unary("negate", "c64", "64");
    let g = generate_inputs(&m, Distribution::Uniform, 3).unwrap();
    let p = parts(&g.args[0]);
    // neither part is left at 0, and the parts are not copies of each other
    assert!(p.iter().all(|&(re, im)| re != 0.0 && im != 0.0));
    assert!(p.iter().filter(|(re, im)| re != im).count() == p.len());
    // both signs in both parts
    assert!(p.iter().any(|&(re, _)| re < 0.0) && p.iter().any(|&(re, _)| re > 0.0));
    assert!(p.iter().any(|&(_, im)| im < 0.0) && p.iter().any(|&(_, im)| im > 0.0));
    // each part from the f32 default range, the parameter's reported interval
    let i = g.intervals[0];
    assert!(i.lo < 0.0 && i.hi > 0.0 && i.hi <= 64.0);
    assert!(p.iter().all(|&(re, im)| i.contains(re) && i.contains(im)));
}

#[test]
fn c128_parts_are_drawn_as_f64() {
    let m = unary("negate", "c128", "32");
    let g = generate_inputs(&m, Distribution::Uniform, 5).unwrap();
    let p = parts(&g.args[0]);
    // a value drawn as f32 would survive the round trip through f32
    let wide = |x: f64| (x as f32) as f64 != x;
    assert!(p.iter().any(|&(re, _)| wide(re)));
    assert!(p.iter().any(|&(_, im)| wide(im)));
}

#[test]
fn the_edge_distribution_puts_specials_in_both_parts() {
    let m = unary("negate", "c64", "256");
    let g = generate_inputs(&m, Distribution::EdgeValues, 9).unwrap();
    let p = parts(&g.args[0]);
    let special = |x: f64| !x.is_finite() || x == 0.0 || x.abs() < f32::MIN_POSITIVE as f64;
    assert!(p.iter().any(|&(re, _)| re.is_nan()));
    assert!(p.iter().any(|&(_, im)| im.is_nan()));
    assert!(p.iter().any(|&(re, _)| re.is_infinite()));
    assert!(p.iter().any(|&(_, im)| im.is_infinite()));
    assert!(p.iter().any(|&(re, im)| special(re) && !special(im)));
    // and none under the uniform distribution
    let u = generate_inputs(&m, Distribution::Uniform, 9).unwrap();
    assert!(parts(&u.args[0])
        .iter()
        .all(|&(re, im)| re.is_finite() && im.is_finite()));
}

#[test]
fn the_duplicates_distribution_repeats_values_in_each_part() {
    let m = unary("negate", "c64", "128");
    let g = generate_inputs(&m, Distribution::Duplicates, 2).unwrap();
    let mut re: Vec<u64> = parts(&g.args[0]).iter().map(|p| p.0.to_bits()).collect();
    re.sort_unstable();
    re.dedup();
    // a pool of 128 / 8 = 16 values
    assert!(re.len() <= 16, "{} distinct real parts", re.len());
}

#[test]
fn no_real_domain_reaches_a_complex_operand() {
    // real log and sqrt would demand positive operands; complex ones are
    // defined off 0 (log) or everywhere (sqrt): both signs stay
    for op in ["log", "sqrt", "rsqrt"] {
        let m = unary(op, "c64", "64");
        let g = generate_inputs(&m, Distribution::Uniform, 11).unwrap();
        let p = parts(&g.args[0]);
        assert!(p.iter().any(|&(re, _)| re < 0.0), "{op}");
        assert!(p.iter().any(|&(_, im)| im < 0.0), "{op}");
        assert!(g.unmet.is_empty(), "{op}: {:?}", g.unmet);
    }
    // a real requirement on a value computed from a complex one narrows
    // nothing (no interval describes |z|) and does not fail
    let m = module(
        "HloModule m\nENTRY e {\n  z = c64[16] parameter(0)\n  a = f32[16] abs(z)\n  \
         ROOT l = f32[16] log(a)\n}\n",
    );
    let g = generate_inputs(&m, Distribution::Uniform, 1).unwrap();
    assert!(parts(&g.args[0]).iter().any(|&(re, _)| re < 0.0));
}

#[test]
fn a_real_requirement_on_the_real_part_is_enforced_by_the_point_check() {
    // sqrt(real(z)): the point check reads the real parts and redraws the
    // elements that break it (the intervals do not narrow through `real`)
    let m = module(
        "HloModule m\nENTRY e {\n  z = c64[64] parameter(0)\n  r = f32[64] real(z)\n  \
         ROOT s = f32[64] sqrt(r)\n}\n",
    );
    let g = generate_inputs(&m, Distribution::Uniform, 4).unwrap();
    let p = parts(&g.args[0]);
    assert!(p.iter().all(|&(re, _)| re >= 0.0), "{p:?}");
    assert!(p.iter().any(|&(_, im)| im < 0.0));
    assert!(g.resampled_elements > 0);
}

#[test]
fn a_real_parameter_beside_a_complex_one_keeps_its_domain() {
    let m = module(
        "HloModule m\nENTRY e {\n  z = c64[32] parameter(0)\n  x = f32[32] parameter(1)\n  \
         s = f32[32] sqrt(x)\n  c = c64[32] complex(s, s)\n  ROOT r = c64[32] multiply(z, c)\n}\n",
    );
    let g = generate_inputs(&m, Distribution::Uniform, 8).unwrap();
    assert!(g.intervals[1].lo >= 0.0);
    assert!((0..32).all(|i| g.args[1].get_f64(i) >= 0.0));
    assert_eq!(g.args[0].dtype(), ElementType::C64);
}

#[test]
fn the_finite_repair_narrows_a_complex_parameter_whose_output_overflows() {
    // z * 1e37 overflows c64 for parts above ~34: the reference sees it
    let m = module(
        "HloModule m\nENTRY e {\n  z = c64[64] parameter(0)\n  c = c64[] constant((1e37, 0))\n  \
         b = c64[64] broadcast(c), dimensions={}\n  ROOT r = c64[64] multiply(z, b)\n}\n",
    );
    let g = generate_inputs(&m, Distribution::Uniform, 6).unwrap();
    let p = parts(&g.args[0]);
    let finite = |x: f64| ((x * 1e37) as f32).is_finite();
    assert!(
        p.iter().all(|&(re, im)| finite(re) && finite(im)),
        "{:?} {:?}",
        g.notes,
        p
    );
    assert!(p.iter().any(|&(_, im)| im != 0.0));
    // the default draw overflows: the repair had to act
    assert!(g.resampled_elements > 0 || !g.narrowed.is_empty());
}

#[test]
fn a_complex_reduce_init_parameter_is_the_identity() {
    let text = "HloModule m\nmul {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  \
                ROOT m = c64[] multiply(a, b)\n}\nENTRY e {\n  z = c64[8] parameter(0)\n  \
                i = c64[] parameter(1)\n  ROOT r = c64[] reduce(z, i), dimensions={0}, to_apply=mul\n}\n";
    let m = module(text);
    let g = generate_inputs(&m, Distribution::Uniform, 0).unwrap();
    assert_eq!(g.args[1].get_complex(0), (1.0, 0.0));
}

#[test]
fn the_parts_of_a_complex_parameter_are_bounded_by_its_interval() {
    // exp(real(z)) + exp(imag(z)) stays finite for every part in [-64, 64]: guaranteed by
    // the intervals, nothing left to the point check
    let m = module(
        "HloModule m\nENTRY e {\n  z = c64[16] parameter(0)\n  r = f32[16] real(z)\n  \
         i = f32[16] imag(z)\n  e = f32[16] exponential(r)\n  f = f32[16] exponential(i)\n  \
         ROOT x = f32[16] add(e, f)\n}\n",
    );
    let g = generate_inputs(&m, Distribution::Uniform, 0).unwrap();
    assert!(g.unguaranteed.is_empty(), "{:?}", g.unguaranteed);
    assert!(!g.rejection_sampling_used);
    assert!(parts(&g.args[0]).iter().any(|&(_, im)| im < 0.0));
}
