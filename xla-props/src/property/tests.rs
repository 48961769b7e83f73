//! Tests of the case space, names, catalogue, inputs, checker and cache.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::backend::{Backend, BackendError, Executable, Unavailable};
use crate::check::Numerics;
use crate::hlo::{ArrayShape, ElementType, Module, Opcode};
use crate::inputs::{generate, Distribution, Role, SplitMix};
use crate::literal::Literal;

fn builtin_spaces() -> Vec<CaseSpace> {
    registry()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_builtin())
        .map(|(i, s)| CaseSpace::new(i as u16, s, &SpaceFilter::default()).unwrap())
        .collect()
}

#[test]
fn default_settings_give_at_least_200k_cases_per_backend() {
    let total: u64 = builtin_spaces().iter().map(CaseSpace::len).sum();
    assert!(total >= 200_000, "{total}");
    let names: Vec<&str> = builtin_spaces().iter().map(|s| s.spec().name).collect();
    assert_eq!(
        names,
        [
            "chains_vs_reference",
            "collectives",
            "configurations",
            "exhaustive",
            "fusion_invariance",
            "grouped_convolution",
            "integer_division_edges",
            "layout_invariance",
            "operand_forms",
            "quantization_residual",
            "reduce_with_init",
            "round_trip_residual",
            "scatter_duplicate_indices",
            "select_broadcast_pred",
            "sharding_invariance",
            "softmax_rows",
            "stable_sort_pairs",
            "template_fusion_invariance",
            "template_vs_reference",
            "topk_recall",
            "vs_reference"
        ]
    );
}

#[test]
fn vs_reference_covers_every_buildable_op_with_every_accepted_dtype() {
    let (idx, spec) = find_property("vs_reference").unwrap();
    let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
    let comp = space.composition();
    for op in catalogue_ops().filter(|op| !super::groups::CONFIGURATION_ONLY.contains(op)) {
        for &t in accepted_dtypes(op).dtypes {
            assert!(comp.iter().any(|c| c.0 == op && c.1 == t), "{op} {t}");
        }
    }
    // convert covers all dtype pairs, compare every direction
    let convert = comp.iter().filter(|c| c.0 == Opcode::Convert).count();
    assert_eq!(convert, ElementType::REAL.len());
    let key: CaseKey = "vs_reference::convert::f8e4m3fn::f8e4m3fn[7]{0}::special.to-u64"
        .parse()
        .unwrap();
    assert_eq!(key.param(), Some("to-u64"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn names_round_trip_for_random_indices(which in 0usize..3, frac in 0.0f64..1.0, backend in 0usize..3) {
        let spaces = builtin_spaces();
        let space = &spaces[which];
        let i = ((space.len() as f64 * frac) as u64).min(space.len() - 1);
        let b = BackendId::intern(["reference", "interpreter", "xla-cpu"][backend]);
        let id = space.case(i, b).unwrap();
        let name = id.to_string();
        let back: CaseId = name.parse().unwrap();
        prop_assert_eq!(back, id);
        prop_assert_eq!(space.index_of(&back.key), Some(i));
        prop_assert_eq!(name.split("::").count(), 6);
    }
}

#[test]
fn every_section_builds_well_formed_modules_and_inputs() {
    for space in builtin_spaces() {
        if space.spec().template == Template::Program {
            // built by `crate::programs`, tested there
            continue;
        }
        let mut i = 0;
        // a stride that is prime to every radix visits every op, dtype, shape and variant family
        while i < space.len() {
            let key = space.get(i).unwrap();
            let built = build_case(&key).unwrap_or_else(|e| panic!("{e}"));
            check_module(&built.module, &key.to_string());
            assert_eq!(built.module.parameter_shapes().len(), built.roles.len());
            // the catalogue writes valid HLO: it prints and parses back to the same module
            let text = crate::hlo::print_module(&built.module);
            let parsed =
                crate::hlo::parse_module(&text).unwrap_or_else(|e| panic!("{key}: {e}\n{text}"));
            assert_eq!(crate::hlo::print_module(&parsed), text, "{key}");
            crate::hlo::verify(&built.module).unwrap_or_else(|e| panic!("{key}: {e}\n{text}"));
            let b = Unavailable::new("x", "test");
            let cache = ReferenceCache::new();
            let mut ctx = CaseContext::new(key.on(BackendId::intern("x")), &b, &b, &cache, 1, 0);
            let inputs = ctx
                .inputs()
                .unwrap_or_else(|_| panic!("inputs of {key}"))
                .to_vec();
            for (lit, shape) in inputs.iter().zip(built.module.parameter_shapes()) {
                let a = shape.as_array().unwrap();
                assert_eq!(lit.dtype(), a.dtype);
                assert_eq!(
                    lit.dims().iter().map(|&d| d as i64).collect::<Vec<_>>(),
                    a.dims
                );
            }
            if key.spec().template == Template::ElementwiseChain {
                let fused = build_fused_chain(&key).unwrap();
                check_module(&fused.module, &key.to_string());
                assert_eq!(fused.module.result_shape(), built.module.result_shape());
                crate::hlo::verify(&fused.module).unwrap_or_else(|e| panic!("{key} fused: {e}"));
            }
            i += 37;
        }
    }
}

fn check_module(m: &Module, name: &str) {
    for c in &m.computations {
        for (k, instr) in c.instructions.iter().enumerate() {
            assert!(
                instr.operands.iter().all(|o| o.index() < k),
                "{name}: operand order"
            );
            for leaf in instr.shape.leaves() {
                assert!(leaf.dims.iter().all(|&d| d >= 0), "{name}: {}", instr.shape);
            }
            for callee in instr.called_computations() {
                assert!(callee.index() < m.computations.len(), "{name}: callee");
            }
        }
        assert!(c.root.index() < c.instructions.len());
    }
    assert_eq!(m.entry.index(), m.computations.len() - 1, "{name}");
}

#[test]
fn bad_names_are_rejected_with_reasons() {
    for (name, why) in [
        ("vs_reference::add::f32::f32[7]{0}", "expected"),
        (
            "nope::add::f32::f32[7]{0}::uniform::interpreter",
            "unknown property",
        ),
        (
            "vs_reference::frob::f32::f32[7]{0}::uniform::interpreter",
            "unknown op",
        ),
        (
            "vs_reference::add::f32::f16[7]{0}::uniform::interpreter",
            "dtype",
        ),
        (
            "vs_reference::add::f32::f32[8]{0}::uniform::interpreter",
            "no such shape",
        ),
        (
            "vs_reference::add::f32::f32[3,5]{0,0}::uniform::interpreter",
            "layout",
        ),
        (
            "vs_reference::add::f32::f32[7]{0}::gaussian::interpreter",
            "distribution",
        ),
        (
            "vs_reference::compare::f32::f32[7]{0}::uniform::interpreter",
            "needs a parameter",
        ),
        (
            "vs_reference::add::f32::f32[7]{0}::uniform.lt::interpreter",
            "no variant parameter",
        ),
        (
            "vs_reference::sine::s32::s32[7]{0}::uniform::interpreter",
            "not a case",
        ),
        (
            "layout_invariance::add::f32::f32[3,5]{1,0}::uniform::interpreter",
            "not a case",
        ),
        (
            "vs_reference::add::f32::f32[7]{0}::uniform::",
            "empty backend",
        ),
    ] {
        let err = name.parse::<CaseId>().unwrap_err();
        assert!(err.to_string().contains(why), "{name}: {err}");
        assert!(err.to_string().starts_with("invalid case name"));
    }
}

#[test]
fn filters_restrict_the_space_to_what_they_name() {
    let (idx, spec) = find_property("vs_reference").unwrap();
    let full = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
    let filter = SpaceFilter {
        ops: vec![Opcode::Add, Opcode::Dot],
        dtypes: vec![ElementType::Bf16],
    };
    let part = CaseSpace::new(idx, spec, &filter).unwrap();
    let keys: Vec<CaseKey> = part.iter().collect();
    let expected: Vec<CaseKey> = full
        .iter()
        .filter(|k| matches!(k.op, Opcode::Add | Opcode::Dot) && k.dtype == ElementType::Bf16)
        .collect();
    assert_eq!(keys, expected);
    assert!(!keys.is_empty());
}

fn leaked_spec(budget: Option<u64>) -> &'static PropertySpec {
    fn body(_: &mut CaseContext<'_>) -> Outcome {
        Outcome::Pass
    }
    Box::leak(Box::new(PropertySpec {
        name: "budgeted",
        module_path: "tests",
        ops: Selection::Group("elementwise_binary"),
        dtypes: Selection::List(&["f32", "s8"]),
        shapes: "small",
        distributions: Selection::Group("default"),
        layouts: LayoutSelection::All,
        template: Template::SingleOp,
        tolerance: Tolerance::Exact,
        strict_rounding: false,
        limitations: &[],
        budget,
        body,
    }))
}

#[test]
fn a_budget_is_an_even_deterministic_subset() {
    let full = CaseSpace::new(900, leaked_spec(None), &SpaceFilter::default()).unwrap();
    let small = CaseSpace::new(900, leaked_spec(Some(100)), &SpaceFilter::default()).unwrap();
    assert!(full.len() > 100);
    assert_eq!(small.len(), 100);
    let mut seen = std::collections::HashSet::new();
    for i in 0..small.len() {
        let k = small.get(i).unwrap();
        assert!(seen.insert(k));
        assert_eq!(small.index_of(&k), Some(i));
        assert!(full.index_of(&k).is_some());
    }
    // the subset reaches the end of the space
    assert!(small.get(99).unwrap().op > small.get(0).unwrap().op);
    let outside = full.iter().find(|k| small.index_of(k).is_none()).unwrap();
    assert!(full.index_of(&outside).is_some());
}

#[test]
fn property_tolerances_resolve_per_dtype() {
    use crate::check::{compare, CompareContext, Verdict};
    let s = ArrayShape::new(ElementType::F16, vec![4]);
    let e = Literal::from_bits(&s, &[0x7e00, 0x0000, 0x3c00, 0x3c00]).unwrap();
    // another NaN payload, -0, 1 + 1ulp, 1 + 3ulp
    let a = Literal::from_bits(&s, &[0x7e01, 0x8000, 0x3c01, 0x3c03]).unwrap();
    let judge = |spec| {
        compare(
            std::slice::from_ref(&e),
            std::slice::from_ref(&a),
            &spec,
            &CompareContext::new(),
        )
    };
    match judge(Tolerance::Ulp(1).error_spec(false, ElementType::F16)) {
        Verdict::Mismatch(r) => {
            assert_eq!(r.count, 2); // -0 and the 3-ulp element
            let w = &r.outputs[0].worst;
            // class failures (the signed zero) first, then by ULP
            assert_eq!(
                (w[0].index.flat, w[1].index.flat, w[1].ulp),
                (1, 3, Some(3))
            );
        }
        v => panic!("{v}"),
    }
    // strict rounding: the 1-ulp element fails too
    match judge(Tolerance::Ulp(1).error_spec(true, ElementType::F16)) {
        Verdict::Mismatch(r) => assert_eq!(r.count, 3),
        v => panic!("{v}"),
    }
    // integers stay exact whatever the float tolerance
    assert_eq!(
        Tolerance::Ulp(1000).error_spec(false, ElementType::S8),
        crate::check::ErrorSpec::exact()
    );
    assert_eq!(
        Tolerance::Rel(0.5).error_spec(false, ElementType::F32).rel,
        0.5
    );
}

struct Counting(Arc<AtomicUsize>);
struct Echo;

impl Backend for Counting {
    fn name(&self) -> &str {
        "counting"
    }
    fn compile(&self, _: &Module) -> Result<Box<dyn Executable>, BackendError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Echo))
    }
}

impl Executable for Echo {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        Ok(args[..1].to_vec())
    }
}

#[test]
fn the_reference_runs_once_per_case_for_all_backends() {
    let compiles = Arc::new(AtomicUsize::new(0));
    let reference = Counting(compiles.clone());
    let cache = ReferenceCache::new();
    let key: CaseKey = "vs_reference::negate::f32::f32[7]{0}::uniform"
        .parse()
        .unwrap();
    for b in ["a", "b", "c"] {
        let backend = Counting(Arc::new(AtomicUsize::new(0)));
        let mut ctx = CaseContext::new(
            key.on(BackendId::intern(b)),
            &backend,
            &reference,
            &cache,
            3,
            0,
        );
        assert!(ctx.reference_result().is_ok());
    }
    assert_eq!(compiles.load(Ordering::SeqCst), 1);
    assert_eq!(cache.computed(), 1);
}

#[test]
fn inputs_respect_roles_and_distributions() {
    let mut rng = SplitMix::new(3);
    let s = ArrayShape::new(ElementType::S8, vec![64]);
    let shifts = generate(&s, Role::ShiftAmount, Distribution::Special, &mut rng).unwrap();
    assert!(shifts.to_i128_vec().iter().all(|&v| (0..8).contains(&v)));
    let idx = generate(&s, Role::Index(-2, 5), Distribution::Mixed, &mut rng).unwrap();
    assert!(idx.to_i128_vec().iter().all(|&v| (-2..=5).contains(&v)));
    let f = ArrayShape::new(ElementType::F32, vec![256]);
    let special = generate(&f, Role::Data, Distribution::Special, &mut rng)
        .unwrap()
        .to_f64_vec();
    assert!(special.iter().any(|v| v.is_nan()));
    assert!(special.iter().any(|v| v.is_infinite()));
    let logs = generate(&f, Role::Range(0.05, 8.0), Distribution::Uniform, &mut rng).unwrap();
    assert!(logs.to_f64_vec().iter().all(|&v| (0.05..=8.0).contains(&v)));
}

/// The `exhaustive` property: one case per (unary float op, narrow float
/// type), each input holding every bit pattern of its type.
#[test]
fn exhaustive_cases_cover_every_unary_float_op_and_bit_pattern() {
    let (idx, spec) = find_property("exhaustive").unwrap();
    let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
    let unary = op_group("elementwise_unary").unwrap();
    let narrow = [
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F8E4M3Fn,
        ElementType::F8E5M2,
    ];
    let float_unary: Vec<Opcode> = unary
        .into_iter()
        .filter(|&op| accepted_dtypes(op).dtypes.contains(&ElementType::F16))
        .collect();
    assert!(float_unary.contains(&Opcode::Log) && float_unary.contains(&Opcode::Erf));
    assert_eq!(space.len() as usize, float_unary.len() * narrow.len());
    let mut rng = SplitMix::new(0);
    for key in space.iter() {
        assert!(narrow.contains(&key.dtype) && float_unary.contains(&key.op));
        assert_eq!(key.dist, Distribution::Exhaustive);
        let n = 1usize << key.dtype.bit_width();
        let x = generate(&key.shape(), Role::Data, key.dist, &mut rng).unwrap();
        let bits: Vec<u64> = (0..x.element_count()).map(|i| x.get_bits(i)).collect();
        assert_eq!(bits, (0..n as u64).collect::<Vec<_>>(), "{key}");
        // the name parses back
        let name = key.to_string();
        assert_eq!(name.parse::<CaseKey>().unwrap(), key);
    }
    // filterable by op and dtype
    let filter = SpaceFilter {
        ops: vec![Opcode::Log],
        dtypes: vec![ElementType::F8E5M2],
    };
    let one = CaseSpace::new(idx, spec, &filter).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(
        one.get(0).unwrap().to_string(),
        "exhaustive::log::f8e5m2::f8e5m2[256]{0}::exhaustive"
    );
    // the default distributions never include the exhaustive one
    assert!(!distribution_group("default")
        .unwrap()
        .contains(&Distribution::Exhaustive));
}

/// A backend whose log returns 0 (not NaN) outside the legal domain: the
/// exhaustive sweep catches it, exactly as a NaN-class mismatch, while the
/// honest interpreter passes the same case.
#[test]
fn exhaustive_sweep_is_exact_about_nan_outside_the_domain() {
    struct NanToZero;
    struct NanToZeroExe(Box<dyn Executable>);
    impl Backend for NanToZero {
        fn name(&self) -> &str {
            "nan-to-zero"
        }
        fn numerics(&self) -> Numerics {
            crate::backend::interpreter::interpreter_numerics()
        }
        fn compile(&self, m: &Module) -> Result<Box<dyn Executable>, BackendError> {
            Ok(Box::new(NanToZeroExe(
                crate::backend::Interpreter::default().compile(m)?,
            )))
        }
    }
    impl Executable for NanToZeroExe {
        fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
            let mut out = self.0.execute(args)?;
            for l in &mut out {
                for i in 0..l.element_count() {
                    if l.get_f64(i).is_nan() {
                        l.set_f64(i, 0.0);
                    }
                }
            }
            Ok(out)
        }
    }
    let key: CaseKey = "exhaustive::log::bf16::bf16[65536]{0}::exhaustive"
        .parse()
        .unwrap();
    let cache = ReferenceCache::new();
    let honest = crate::backend::Interpreter::default();
    let reference = crate::backend::ReferenceBackend::default();
    let mut ctx = CaseContext::new(
        key.on(BackendId::intern("interpreter")),
        &honest,
        &reference,
        &cache,
        1,
        0,
    );
    assert!(matches!((key.spec().body)(&mut ctx), Outcome::Pass));
    let buggy = NanToZero;
    let mut ctx = CaseContext::new(
        key.on(BackendId::intern("nan-to-zero")),
        &buggy,
        &reference,
        &cache,
        1,
        0,
    );
    let Outcome::Fail(f) = (key.spec().body)(&mut ctx) else {
        panic!("a NaN turned into 0 passed");
    };
    let Some(crate::check::Verdict::Mismatch(r)) = &f.verdict else {
        panic!("{}", f.summary);
    };
    // every negative input (and -inf) and every NaN input: half the patterns
    assert!(r.count > 32000, "{}", r.count);
    let w = &r.outputs[0].worst[0];
    assert_eq!(w.failure, crate::check::ElementFailure::NanClass);
    assert!(!w.inputs.is_empty(), "the input at the index is reported");
    assert!(ctx.worst_mismatch().unwrap().contains("nan"));
    let hist = ctx.ulp_histogram().unwrap();
    assert_eq!(hist.iter().map(|b| b.count).sum::<u64>(), 65536);
}

/// Every class of every op builds, for every dtype it applies to, into a
/// module the verifier accepts, and its name parses back to the same case.
#[test]
fn every_class_builds_a_valid_module_and_round_trips() {
    let (idx, spec) = find_property("configurations").unwrap();
    let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
    assert!(space.len() > 3000, "{} cases", space.len());
    eprintln!("configurations: {} cases", space.len());
    let mut failures = Vec::new();
    for key in space.iter() {
        let name = key.to_string();
        match build_case(&key) {
            Ok(built) => {
                if let Err(e) = crate::hlo::verify(&built.module) {
                    failures.push(format!("{name}: {e}"));
                }
                assert_eq!(built.module.parameter_shapes().len(), built.roles.len());
            }
            Err(e) => failures.push(e.to_string()),
        }
        let back: CaseKey = name.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, key);
    }
    assert!(
        failures.is_empty(),
        "{} failures: {:#?}",
        failures.len(),
        &failures[..failures.len().min(20)]
    );
}
