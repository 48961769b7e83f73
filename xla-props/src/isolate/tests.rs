//! Isolation tests: injected miscompilations (one fusion, one bug) found,
//! named, and minimized.

use super::testing::{deep_transformer, transformer, Transformer, MASKING_GAIN};
use super::*;
use crate::backend::interpreter::tests::Rewritten;
use crate::backend::mutant::{scale_by_constant, Bug, Buggy};
use crate::backend::{Backend, Interpreter};
use crate::check::MismatchKind;
use crate::filetest::{observe, Expectation, HloTest};
use crate::hlo::{ElementType::F32, FusionKind, Module, ModuleBuilder, Opcode, Shape};

/// `y = p + (x - f32(f16(x)))` with the residual in its own fusion.
fn quant_residual_module() -> Module {
    let mut m = ModuleBuilder::new("quant");
    let fused = m
        .computation("residual", |b| {
            let x = b.parameter(Shape::array(F32, vec![64]))?;
            let h = b.convert(x, crate::hlo::ElementType::F16)?;
            let back = b.convert(h, F32)?;
            b.binary(Opcode::Subtract, x, back)
        })
        .unwrap();
    m.build("main", |b| {
        let x = b.parameter(Shape::array(F32, vec![64]))?;
        let p = b.parameter(Shape::array(F32, vec![64]))?;
        let e = b.unary(Opcode::Negate, x)?;
        let r = b.fusion(FusionKind::Loop, fused, &[e])?;
        b.binary(Opcode::Add, p, r)
    })
    .unwrap()
}

fn isolated(module: &Module, backend: &dyn Backend, seed: u64) -> Isolated {
    let what = format!("{} (seed {seed})", backend.name());
    let options = Options {
        seed,
        ..Options::default()
    };
    match isolate(module, backend, &Oracle::Exact, &options).unwrap() {
        Isolation::Isolated(i) => *i,
        Isolation::Agree { verdict, .. } => {
            panic!("{what}: expected a disagreement, got {verdict}")
        }
        Isolation::Amplified { certificate, .. } => {
            panic!("{what}: expected a disagreement, got {certificate}")
        }
    }
}

/// The reproducer, written and read back, fails on `buggy` and agrees on the interpreter.
fn check_reproducer(iso: &mut Isolated, buggy: &Buggy) {
    let dir = tempfile::tempdir().unwrap();
    let path =
        crate::filetest::write_isolation_results(iso, dir.path(), &["interpreter".to_string()])
            .unwrap();
    let test = HloTest::load(&path).unwrap();
    let on_bug = observe(&test, buggy).unwrap();
    assert_eq!(
        on_bug.outcome,
        Expectation::Mismatch(iso.report.mismatch),
        "{}",
        on_bug.detail
    );
    assert_eq!(test.expectation(buggy.name()), on_bug.outcome);
    let on_good = observe(&test, &Interpreter::default()).unwrap();
    assert_eq!(on_good.outcome, Expectation::Agree, "{}", on_good.detail);
    assert_eq!(test.expectation("interpreter"), Expectation::Agree);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    for key in [
        "culprit",
        "local",
        "vanishes_when_split",
        "backend_runs",
        "seconds",
        "reproducer",
    ] {
        assert!(json.get(key).is_some(), "report.json lacks {key}: {json}");
    }
    assert!(std::fs::read_to_string(dir.path().join("report.md"))
        .unwrap()
        .contains(&iso.report.culprit.instruction));
}

#[test]
fn the_correct_interpreter_agrees_and_nothing_is_isolated() {
    let m = quant_residual_module();
    let out = isolate(
        &m,
        &Interpreter::default(),
        &Oracle::Exact,
        &Options::default(),
    )
    .unwrap();
    assert!(matches!(out, Isolation::Agree { .. }));
}

#[test]
fn elided_round_trip_is_isolated_to_the_convert_pair_and_vanishes_when_split() {
    let m = quant_residual_module();
    let buggy = Buggy::new(Bug::ElideRoundTrip, "residual");
    let mut iso = isolated(&m, &buggy, 1);
    let r = &iso.report;
    assert_eq!(r.culprit.fusion.as_deref(), Some("fusion.8"));
    assert_eq!(r.culprit.computation, "residual");
    assert_eq!(r.culprit.opcode, "convert");
    // the f32 convert of the pair, whose operand is the f16 convert
    assert_eq!(r.culprit.instruction, "convert.3");
    assert_eq!(r.culprit.operands, vec!["convert.2 (convert)".to_string()]);
    assert!(r.local);
    assert!(r.vanishes_when_split);
    assert_eq!(r.inside, Some(InsideMethod::Probe));
    assert_eq!(r.mismatch, MismatchKind::Values);
    assert!(
        r.reproducer_instructions <= 10,
        "{}",
        r.reproducer_instructions
    );
    check_reproducer(&mut iso, &buggy);
}

#[test]
fn without_a_probe_moving_the_root_finds_the_same_instruction() {
    let m = quant_residual_module();
    let buggy = Buggy::new(Bug::ElideRoundTrip, "residual");
    let x = extract_instruction(&m, m.entry_computation().find("fusion.8").unwrap());
    let args = crate::inputs::generate_inputs(&x.module, crate::inputs::Distribution::Uniform, 3)
        .unwrap()
        .args;
    let tested = Tested::new(&buggy);
    let root = x.module.entry_computation().root;
    let at = Fused {
        module: &x.module,
        fusion: root,
        args: &args,
    };
    let id = by_moved_root(at, &Oracle::Exact, &tested).unwrap();
    let fused = x.module.comp(crate::hlo::CompId(0));
    assert_eq!(fused.instr(id).name, "convert.3");
    assert!(tested.runs() <= 3, "the scan took {} runs", tested.runs());
}

/// `bug` in the fusion of `role` in `layer` of `t`, isolated with `seed`:
/// the report names that fusion, its computation and the first corrupted
/// instruction, is local, and its reproducer (at most 10 instructions) fails
/// on the buggy backend and passes on the correct one. Returns the report.
fn names_the_bug(t: &Transformer, bug: Bug, (layer, role): (usize, &str), seed: u64) -> Report {
    let (comp, fusion) = t.fusion(layer, role).unwrap();
    let buggy = Buggy::new(bug, comp);
    let corrupted = buggy.corrupted(&t.module);
    let mut iso = isolated(&t.module, &buggy, seed);
    let r = &iso.report;
    let what = format!(
        "{bug:?} in {comp}, seed {seed}: {}",
        serde_json::to_string(r).unwrap_or_default()
    );
    assert_eq!(r.culprit.fusion.as_deref(), Some(fusion), "{what}");
    assert_eq!(r.culprit.computation, comp, "{what}");
    assert_eq!(r.culprit.instruction, corrupted[0], "{what}");
    assert!(r.local, "{what}");
    assert!(
        r.reproducer_instructions <= 10,
        "{what}: {}",
        r.reproducer_instructions
    );
    check_reproducer(&mut iso, &buggy);
    iso.report
}

#[test]
fn transformer_bugs_are_named_by_fusion_and_instruction() {
    let t = transformer(600).unwrap();
    assert!(t.module.instruction_count() >= 600);
    let cases = [
        (Bug::ElideRoundTrip, 1, "quant_residual", "convert"),
        (Bug::WrongConstant, 2, "query", "multiply"),
        (Bug::SliceOffByOne, 3, "key", "slice"),
        (Bug::WrongConstant, 4, "layernorm", "multiply"),
    ];
    for (bug, layer, role, opcode) in cases {
        let layer = layer % t.layers;
        let r = names_the_bug(&t, bug, (layer, role), layer as u64);
        assert_eq!(r.culprit.opcode, opcode, "{bug:?}");
    }
}

#[test]
fn buggy_rewrites_only_the_target_fusion() {
    let t = transformer(300).unwrap();
    let (comp, _) = t.fusion(0, "query").unwrap();
    let m2 = Buggy::new(Bug::WrongConstant, comp).miscompile(&t.module);
    let changed: Vec<&str> = t
        .module
        .computations
        .iter()
        .zip(&m2.computations)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.name.as_str())
        .collect();
    assert_eq!(changed, vec![comp]);
}

#[test]
fn buggy_changes_the_transformer_output() {
    let t = transformer(300).unwrap();
    let args =
        crate::inputs::generate_inputs(&t.module, crate::inputs::Distribution::Uniform, 1).unwrap();
    // no parameter is narrowed to (almost) a point: every layer matters
    assert!(args.intervals.iter().all(|i| i.width() >= 1.0));
    let args = args.args;
    let good = Interpreter::default()
        .compile(&t.module)
        .unwrap()
        .execute(&args)
        .unwrap();
    for (bug, role) in [
        (Bug::WrongConstant, "query"),
        (Bug::WrongConstant, "layernorm"),
        (Bug::ElideRoundTrip, "quant_residual"),
        (Bug::SliceOffByOne, "value"),
    ] {
        let (comp, _) = t.fusion(0, role).unwrap();
        let bad = Buggy::new(bug, comp)
            .compile(&t.module)
            .unwrap()
            .execute(&args)
            .unwrap();
        assert_ne!(
            good[0].to_bits_vec(),
            bad[0].to_bits_vec(),
            "{bug:?} in {role}"
        );
    }
}

/// The done-when check: large (>= 2,000 instructions) transformer-like
/// modules, one injected miscompilation in one fusion, several seeds and
/// bug kinds; isolation names the fusion and the instruction every time and
/// the reproducer is small, fails on the buggy backend and passes on the
/// correct one.
#[test]
fn large_transformers_are_isolated_every_time() {
    let t = transformer(2000).unwrap();
    assert!(t.module.instruction_count() >= 2000);
    let cases = [
        (Bug::WrongConstant, "layernorm2"),
        (Bug::WrongConstant, "gelu"),
        (Bug::ElideRoundTrip, "quant_residual"),
        (Bug::WrongConstant, "query"),
        (Bug::SliceOffByOne, "key"),
        (Bug::SliceOffByOne, "value"),
    ];
    for (k, (bug, role)) in cases.into_iter().enumerate() {
        for seed in [0u64, 11] {
            let layer = (3 * k + 12 + seed as usize) % t.layers;
            names_the_bug(&t, bug, (layer, role), seed);
        }
    }
}

/// No false alarm: on the correct interpreter a large generated module
/// agrees, and input generation leaves every weight live.
#[test]
fn the_correct_interpreter_agrees_on_a_large_transformer() {
    let t = transformer(2000).unwrap();
    let g =
        crate::inputs::generate_inputs(&t.module, crate::inputs::Distribution::Uniform, 0).unwrap();
    assert!(
        g.intervals.iter().all(|i| i.width() >= 1.0),
        "{:?}",
        g.intervals
    );
    let out = isolate(
        &t.module,
        &Interpreter::default(),
        &Oracle::Exact,
        &Options::default(),
    )
    .unwrap();
    // one run of the whole module, then one batch run per BATCH_SIZE
    // top-level instructions (the deep check, which finds nothing)
    let batches = candidates(&t.module).len().div_ceil(BATCH_SIZE) as u64;
    match out {
        Isolation::Agree { backend_runs, .. } => assert_eq!(backend_runs, 1 + batches),
        Isolation::Amplified { certificate, .. } => panic!("not an agreement: {certificate}"),
        Isolation::Isolated(i) => panic!("false alarm: {:?}", i.report.culprit),
    }
}

/// The interpreter, except that the entry instruction `target` comes out
/// larger by a factor `1 + 2^-22` (two ulp): within an approximate
/// function's budget, so the instruction itself passes.
fn nudged(target: String) -> Rewritten<impl Fn(&mut Module) + Send + Sync> {
    Rewritten::new("nudged", move |m: &mut Module| {
        let entry = m.entry.index();
        let comp = &mut m.computations[entry];
        if let Some(k) = comp.find(&target) {
            scale_by_constant(comp, k.index(), F32, 1.0 + 2f64.powi(-22), &target);
            let x = &mut comp.instructions[k.index()];
            x.opcode = Opcode::Multiply;
            x.attrs = Default::default();
        }
    })
}

#[test]
fn a_cancellation_of_legal_errors_is_legal_by_the_bound() {
    // exp(x) - exp(x): the two exps agree with the reference within their
    // budget, and the subtract is exact on the reference's values; only the
    // small legal error of the first exp, cancelled against the second,
    // makes the output differ. The declared budget explains it: the bound
    // carried through the graph accepts it (the old flat tolerances called
    // it a bug)
    let m = ModuleBuilder::new("cancel")
        .build("main", |b| {
            let x = b.parameter(Shape::array(F32, vec![16]))?;
            let e1 = b.unary(Opcode::Exponential, x)?;
            let c = b.copy(x)?;
            let e2 = b.unary(Opcode::Exponential, c)?;
            b.binary(Opcode::Subtract, e1, e2)
        })
        .unwrap();
    let entry = m.entry_computation();
    let e1 = entry.instructions[1].name.clone();
    let backend = nudged(e1);
    let options = Options {
        seed: 5,
        ..Options::default()
    };
    match isolate(&m, &backend, &Oracle::Exact, &options).unwrap() {
        Isolation::Agree { verdict, .. } => match &verdict {
            crate::check::Verdict::Agree(a) => assert!(
                a.legal
                    .contains_key(&crate::check::LegalReason::PropagatedBound),
                "{verdict}"
            ),
            v => panic!("expected an agreement, got {v}"),
        },
        Isolation::Amplified { certificate, .. } => {
            panic!("the bound alone should legalize it: {certificate}")
        }
        Isolation::Isolated(i) => {
            panic!("a legal cancellation was isolated: {:?}", i.report.culprit)
        }
    }
}

/// A backend without a fusion probe: its executables only execute.
struct NoProbe(Buggy);

struct Plain(Box<dyn crate::backend::Executable>);

impl crate::backend::Executable for Plain {
    fn execute(
        &self,
        args: &[crate::literal::Literal],
    ) -> Result<Vec<crate::literal::Literal>, crate::backend::BackendError> {
        self.0.execute(args)
    }
}

impl Backend for NoProbe {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn numerics(&self) -> crate::check::Numerics {
        self.0.numerics()
    }
    fn compile(
        &self,
        module: &Module,
    ) -> Result<Box<dyn crate::backend::Executable>, crate::backend::BackendError> {
        Ok(Box::new(Plain(self.0.compile(module)?)))
    }
}

#[test]
fn without_a_probe_the_whole_isolation_moves_the_root_instead() {
    let t = transformer(600).unwrap();
    let (comp, fusion) = t.fusion(2, "layernorm").unwrap();
    let buggy = Buggy::new(Bug::WrongConstant, comp);
    let corrupted = buggy.corrupted(&t.module);
    let iso = isolated(&t.module, &NoProbe(buggy), 4);
    let r = &iso.report;
    assert_eq!(r.inside, Some(InsideMethod::MovedRoot));
    assert_eq!(r.culprit.fusion.as_deref(), Some(fusion));
    assert_eq!(r.culprit.instruction, corrupted[0]);
    assert!(
        r.reproducer_instructions <= 10,
        "{}",
        r.reproducer_instructions
    );
}

/// The done-when check of the masked bug: a deep (40 blocks, over 2,000
/// instructions) transformer-like module whose quantization feedback fusion
/// after the middle block has its f16 round trip elided. With the default
/// settings, isolation names that fusion and the convert pair whether the
/// output shows the bug (gain 1) or not (a gain that hides it below half an
/// ULP), and the reproducer is at most 10 instructions.
#[test]
fn a_masked_quantization_bug_deep_in_a_transformer_is_named() {
    for (gain, masked) in [(MASKING_GAIN, true), (1.0, false)] {
        let t = deep_transformer(40, gain).unwrap();
        assert!(t.module.instruction_count() >= 2000);
        let buggy = Buggy::new(Bug::ElideRoundTrip, &t.quant_computation);
        let out = isolate(&t.module, &buggy, &Oracle::Exact, &Options::default()).unwrap();
        let Isolation::Isolated(mut iso) = out else {
            panic!("gain {gain}: the masked bug was not seen: {out:?}");
        };
        let r = &iso.report;
        let what = serde_json::to_string(r).unwrap_or_default();
        // the unmasked bug shows at the output; masked, the module-level
        // verdict may go either way (the enclosure of a 40-layer graph is too
        // wide to legalize its accumulated roundings: docs/findings.md), and
        // the deep check finds the bug regardless
        if !masked {
            assert!(!r.output_agrees, "{what}");
        }
        assert_eq!(r.culprit.fusion.as_deref(), Some(t.quant_fusion.as_str()));
        assert_eq!(r.culprit.computation, t.quant_computation);
        // the pair: the f32 convert whose operand is the f16 convert
        assert_eq!(r.culprit.opcode, "convert", "{what}");
        assert_eq!(r.culprit.instruction, buggy.corrupted(&t.module)[0]);
        assert_eq!(r.culprit.operands.len(), 1, "{what}");
        assert!(r.culprit.operands[0].ends_with("(convert)"), "{what}");
        assert!(r.local);
        assert!(r.vanishes_when_split);
        // the only local disagreement is the culprit's, named the same way
        assert_eq!(r.local_disagreements.len(), 1, "{what}");
        assert_eq!(r.local_disagreements[0].location, r.culprit);
        assert_eq!(r.local_disagreements[0].top_level, t.quant_fusion);
        assert!(r.reproducer_instructions <= 10, "{what}");
        check_reproducer(&mut iso, &buggy);
    }
}

/// The deep module's output really hides the bug at the masking gain (so
/// the test above is about a masked bug), and the correct interpreter has
/// no local disagreement anywhere in it.
#[test]
fn the_deep_transformer_masks_the_bug_and_has_no_false_local_alarm() {
    let t = deep_transformer(40, MASKING_GAIN).unwrap();
    let args = crate::inputs::generate_inputs(&t.module, crate::inputs::Distribution::Uniform, 0)
        .unwrap()
        .args;
    let run = |b: &dyn Backend| b.compile(&t.module).unwrap().execute(&args).unwrap();
    let good = run(&Interpreter::default());
    let bad = run(&Buggy::new(Bug::ElideRoundTrip, &t.quant_computation));
    assert_eq!(good[0].to_bits_vec(), bad[0].to_bits_vec());
    let reference = Oracle::Exact.all_values(&t.module, &args).unwrap();
    let interp = Interpreter::default();
    let tested = Tested::new(&interp);
    let deep = deep_check(&t.module, &reference, &Oracle::Exact, &tested, &mut |_| {});
    assert_eq!(deep.candidates, candidates(&t.module).len());
    assert!(
        deep.local_disagreements.is_empty(),
        "{:?}",
        deep.local_disagreements
    );
}
