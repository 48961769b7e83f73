//! The XLA backend end to end: lowering, PJRT in the worker, crash isolation.
//!
//! These tests need the pinned plugin (`scripts/fetch-xla-plugin.sh`). Without
//! it they skip with a message, unless `CI` is set: CI fetches the plugin
//! first, so there a missing plugin is a failure.

mod common;

use std::time::Duration;

use xla_props::backend::xla::{XlaBackend, XlaError, XlaExecutable, XlaPlugin};
use xla_props::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection, Computation, ConstantData, DotDims,
    ElementType, GatherDims, InstrId, Instruction, Module, Opcode, Shape,
};
use xla_props::literal::Literal;

use common::with;

use ElementType::{F16, F32, S32};

fn backend_or_skip(plugin: XlaPlugin) -> Option<XlaBackend> {
    let b = XlaBackend::isolated(plugin);
    xla_props::skip::backend_available(plugin.backend_name(), b.availability()).then_some(b)
}

/// A tiny instruction-list builder for hand-written modules.
#[derive(Default)]
struct Comp {
    instrs: Vec<Instruction>,
}

impl Comp {
    fn push(&mut self, op: Opcode, shape: Shape, operands: &[u32], attrs: Attrs) -> u32 {
        let name = format!("i{}", self.instrs.len());
        let operands = operands.iter().map(|&k| InstrId(k)).collect();
        let i = Instruction::with_attrs(name, op, shape, operands, attrs);
        self.instrs.push(i);
        self.instrs.len() as u32 - 1
    }
    fn param(&mut self, n: i64, shape: Shape) -> u32 {
        let attrs = with(|t| t.parameter_number = Some(n));
        self.push(Opcode::Parameter, shape, &[], attrs)
    }
    fn op(&mut self, op: Opcode, shape: Shape, operands: &[u32]) -> u32 {
        self.push(op, shape, operands, Attrs::default())
    }
    /// `a < b`, a pred scalar.
    fn less_than(&mut self, a: u32, b: u32) -> u32 {
        let attrs = with(|t| t.direction = Some(ComparisonDirection::Lt));
        self.push(
            Opcode::Compare,
            Shape::scalar(ElementType::Pred),
            &[a, b],
            attrs,
        )
    }
    /// A while loop on `init` of `state`, its condition computation 0 and
    /// its body computation 1.
    fn while_loop(&mut self, state: Shape, init: u32) -> u32 {
        let attrs = with(|t| {
            t.condition = Some(CompId(0));
            t.body = Some(CompId(1));
        });
        self.push(Opcode::While, state, &[init], attrs)
    }
    fn finish(self, name: &str, root: u32) -> Computation {
        Computation::new(name, self.instrs, InstrId(root))
    }
}

/// The isolated xla-cpu, or None (the test skips) without its plugin.
fn cpu() -> Option<XlaBackend> {
    backend_or_skip(XlaPlugin::Cpu)
}

/// The module of `computations` (the entry last) compiled on `b` and run.
fn run(b: &XlaBackend, computations: Vec<Computation>, args: &[Literal]) -> Vec<Literal> {
    let exe = b.compile_module(&module(computations)).unwrap();
    exe.run(args).unwrap()
}

fn module(computations: Vec<Computation>) -> Module {
    let entry = CompId(computations.len() as u32 - 1);
    Module {
        name: "test".into(),
        attrs: vec![],
        computations,
        entry,
    }
}

fn arr(t: ElementType, dims: &[i64]) -> Shape {
    Shape::array(t, dims.to_vec())
}

fn lit(t: ElementType, dims: &[i64], values: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), values).unwrap()
}

/// `(a, b) -> op(a, b)` on scalars of type `t`, for reductions and comparators.
fn scalar_binary(
    name: &str,
    t: ElementType,
    op: Opcode,
    direction: Option<ComparisonDirection>,
) -> Computation {
    let mut c = Comp::default();
    let a = c.param(0, Shape::scalar(t));
    let b = c.param(1, Shape::scalar(t));
    let (shape, attrs) = match direction {
        Some(d) => (
            Shape::scalar(ElementType::Pred),
            with(|t| t.direction = Some(d)),
        ),
        None => (Shape::scalar(t), Attrs::default()),
    };
    let r = c.push(op, shape, &[a, b], attrs);
    c.finish(name, r)
}

fn binary_module(op: Opcode, t: ElementType, dims: &[i64]) -> Module {
    let mut c = Comp::default();
    let a = c.param(0, arr(t, dims));
    let b = c.param(1, arr(t, dims));
    let r = c.op(op, arr(t, dims), &[a, b]);
    module(vec![c.finish("main", r)])
}

/// `binary_module(op, t, dims)` compiled on `b`.
fn compile_binary(b: &XlaBackend, op: Opcode, t: ElementType, dims: &[i64]) -> XlaExecutable {
    b.compile_module(&binary_module(op, t, dims)).unwrap()
}

#[test]
fn add_f32() {
    let Some(b) = cpu() else { return };
    let exe = compile_binary(&b, Opcode::Add, F32, &[2]);
    let out = exe
        .run(&[lit(F32, &[2], &[1.5, 2.0]), lit(F32, &[2], &[0.25, -4.0])])
        .unwrap();
    assert_eq!(out, vec![lit(F32, &[2], &[1.75, -2.0])]);
}

#[test]
fn add_f32_on_the_older_plugin() {
    let Some(b) = backend_or_skip(XlaPlugin::Cpu081) else {
        return;
    };
    let exe = compile_binary(&b, Opcode::Add, F32, &[3]);
    let out = exe
        .run(&[
            lit(F32, &[3], &[1.0, -0.0, 1e30]),
            lit(F32, &[3], &[2.0, -0.0, 1e30]),
        ])
        .unwrap();
    let want = lit(F32, &[3], &[3.0, -0.0, 2e30]);
    assert_eq!(
        out[0].to_bits_vec(),
        want.to_bits_vec(),
        "signed zero must survive"
    );
}

#[test]
fn exp_f16() {
    let Some(b) = cpu() else { return };
    let mut c = Comp::default();
    let p = c.param(0, arr(F16, &[4]));
    let r = c.op(Opcode::Exponential, arr(F16, &[4]), &[p]);
    let out = run(
        &b,
        vec![c.finish("main", r)],
        &[lit(F16, &[4], &[0.0, 1.0, f64::NEG_INFINITY, 12.0])],
    );
    let got = out[0].to_f64_vec();
    assert_eq!(got[0], 1.0);
    // e rounds to 2.71875 in f16 (ulp 2^-9 in [2, 4)); allow one ulp of approximation.
    assert!(
        (got[1] - 2.71875).abs() <= 2f64.powi(-9),
        "exp(1) = {}",
        got[1]
    );
    assert_eq!(got[2], 0.0);
    assert_eq!(got[3], f64::INFINITY, "exp(12) = 162755 overflows f16");
}

#[test]
fn dot_f32() {
    let Some(b) = cpu() else { return };
    let mut c = Comp::default();
    let x = c.param(0, arr(F32, &[2, 2]));
    let y = c.param(1, arr(F32, &[2, 2]));
    let attrs = with(|t| {
        t.dot_dims = Some(DotDims {
            lhs_contracting: vec![1],
            rhs_contracting: vec![0],
            ..DotDims::default()
        })
    });
    let r = c.push(Opcode::Dot, arr(F32, &[2, 2]), &[x, y], attrs);
    let out = run(
        &b,
        vec![c.finish("main", r)],
        &[
            lit(F32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]),
            lit(F32, &[2, 2], &[5.0, 6.0, 7.0, 8.0]),
        ],
    );
    assert_eq!(out[0].to_f64_vec(), vec![19.0, 22.0, 43.0, 50.0]);
}

#[test]
fn reduce_sum_rows() {
    let Some(b) = cpu() else { return };
    let add = scalar_binary("add", F32, Opcode::Add, None);
    let mut c = Comp::default();
    let x = c.param(0, arr(F32, &[2, 3]));
    let zero = c.push(
        Opcode::Constant,
        Shape::scalar(F32),
        &[],
        with(|t| t.constant = Some(ConstantData::Float(vec![0.0]))),
    );
    let attrs = with(|t| {
        t.dimensions = Some(vec![1]);
        t.to_apply = Some(CompId(0));
    });
    let r = c.push(Opcode::Reduce, arr(F32, &[2]), &[x, zero], attrs);
    let out = run(
        &b,
        vec![add, c.finish("main", r)],
        &[lit(F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
    );
    assert_eq!(out[0].to_f64_vec(), vec![6.0, 15.0]);
}

#[test]
fn gather_picks_rows() {
    let Some(b) = cpu() else { return };
    let mut c = Comp::default();
    let x = c.param(0, arr(F32, &[4]));
    let idx = c.param(1, arr(S32, &[2, 1]));
    let attrs = with(|t| {
        t.gather_dims = Some(GatherDims {
            offset_dims: vec![],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: 1,
            slice_sizes: vec![1],
            ..GatherDims::default()
        })
    });
    let r = c.push(Opcode::Gather, arr(F32, &[2]), &[x, idx], attrs);
    let out = run(
        &b,
        vec![c.finish("main", r)],
        &[
            lit(F32, &[4], &[10.0, 20.0, 30.0, 40.0]),
            lit(S32, &[2, 1], &[2.0, 0.0]),
        ],
    );
    assert_eq!(out[0].to_f64_vec(), vec![30.0, 10.0]);
}

#[test]
fn sort_two_operands_by_key() {
    let Some(b) = cpu() else { return };
    // comparator over (key_lhs, key_rhs, val_lhs, val_rhs): key_lhs < key_rhs
    let mut k = Comp::default();
    let a = k.param(0, Shape::scalar(F32));
    let bb = k.param(1, Shape::scalar(F32));
    k.param(2, Shape::scalar(S32));
    k.param(3, Shape::scalar(S32));
    let lt = k.less_than(a, bb);
    let cmp = k.finish("cmp", lt);
    let mut c = Comp::default();
    let keys = c.param(0, arr(F32, &[4]));
    let vals = c.param(1, arr(S32, &[4]));
    let attrs = with(|t| {
        t.dimensions = Some(vec![0]);
        t.is_stable = true;
        t.to_apply = Some(CompId(0));
    });
    let shape = Shape::Tuple(vec![arr(F32, &[4]), arr(S32, &[4])]);
    let r = c.push(Opcode::Sort, shape, &[keys, vals], attrs);
    let out = run(
        &b,
        vec![cmp, c.finish("main", r)],
        &[
            lit(F32, &[4], &[3.0, -1.0, 2.0, -1.0]),
            lit(S32, &[4], &[0.0, 1.0, 2.0, 3.0]),
        ],
    );
    assert_eq!(out.len(), 2, "tuple results come back flattened");
    assert_eq!(out[0].to_f64_vec(), vec![-1.0, -1.0, 2.0, 3.0]);
    assert_eq!(
        out[1].to_i128_vec(),
        vec![1, 3, 2, 0],
        "stable: ties keep order"
    );
}

#[test]
fn while_loop_doubles_five_times() {
    let Some(b) = cpu() else { return };
    let state = Shape::Tuple(vec![Shape::scalar(S32), Shape::scalar(F32)]);
    let konst = |c: &mut Comp, t: ElementType, v: ConstantData| {
        c.push(
            Opcode::Constant,
            Shape::scalar(t),
            &[],
            with(|t| t.constant = Some(v)),
        )
    };
    let gte = |c: &mut Comp, t: ElementType, of: u32, i: i64| {
        c.push(
            Opcode::GetTupleElement,
            Shape::scalar(t),
            &[of],
            with(|t| t.index = Some(i)),
        )
    };
    // cond: i < 5
    let mut cond = Comp::default();
    let s = cond.param(0, state.clone());
    let i = gte(&mut cond, S32, s, 0);
    let five = konst(&mut cond, S32, ConstantData::Int(vec![5]));
    let lt = cond.less_than(i, five);
    let cond = cond.finish("cond", lt);
    // body: (i + 1, acc * 2)
    let mut body = Comp::default();
    let s = body.param(0, state.clone());
    let i = gte(&mut body, S32, s, 0);
    let acc = gte(&mut body, F32, s, 1);
    let one = konst(&mut body, S32, ConstantData::Int(vec![1]));
    let two = konst(&mut body, F32, ConstantData::Float(vec![2.0]));
    let i1 = body.op(Opcode::Add, Shape::scalar(S32), &[i, one]);
    let acc2 = body.op(Opcode::Multiply, Shape::scalar(F32), &[acc, two]);
    let t = body.op(Opcode::Tuple, state.clone(), &[i1, acc2]);
    let body = body.finish("body", t);
    // main(i0, acc0) = while((i0, acc0))
    let mut c = Comp::default();
    let i0 = c.param(0, Shape::scalar(S32));
    let a0 = c.param(1, Shape::scalar(F32));
    let init = c.op(Opcode::Tuple, state.clone(), &[i0, a0]);
    let w = c.while_loop(state, init);
    let out = run(
        &b,
        vec![cond, body, c.finish("main", w)],
        &[Literal::scalar(S32, 0.0), Literal::scalar(F32, 1.5)],
    );
    assert_eq!(out[0].get_i128(0), 5);
    assert_eq!(out[1].get_f64(0), 48.0);
}

#[test]
fn compile_cache_hits_on_the_same_module() {
    let Some(b) = cpu() else { return };
    let m = binary_module(Opcode::Multiply, F32, &[5]);
    let before = b.cache_stats();
    b.compile_module(&m).unwrap();
    b.compile_module(&m).unwrap();
    let after = b.cache_stats();
    assert_eq!(after.misses - before.misses, 1);
    assert_eq!(after.hits - before.hits, 1);
    assert!(after.hit_rate() > 0.0);
}

#[test]
fn wrong_arguments_are_a_typed_error() {
    let Some(b) = cpu() else { return };
    let exe = compile_binary(&b, Opcode::Add, F32, &[2]);
    let err = exe.run(&[
        lit(F32, &[3], &[1.0, 2.0, 3.0]),
        lit(F32, &[2], &[1.0, 2.0]),
    ]);
    assert!(matches!(err, Err(XlaError::Signature(_))), "{err:?}");
    let err = exe.run(&[lit(F32, &[2], &[1.0, 2.0])]);
    assert!(matches!(err, Err(XlaError::Signature(_))), "{err:?}");
}

#[test]
fn an_abort_in_the_worker_fails_one_call_and_the_next_succeeds() {
    let Some(b) = cpu() else { return };
    let exe = compile_binary(&b, Opcode::Add, F32, &[2]);
    let err = b.debug_compile_without_options(exe.mlir()).unwrap_err();
    eprintln!("the expected crash: {err}");
    match &err {
        XlaError::Crashed { status, stderr, .. } => {
            assert!(status.contains("signal"), "status: {status}");
            assert!(stderr.contains("replica_count"), "stderr: {stderr}");
        }
        other => panic!("expected a crash, got {other:?}"),
    }
    assert_eq!(b.cache_stats().restarts, 1);
    // The executable survives: the restarted worker recompiles it.
    let out = exe
        .run(&[lit(F32, &[2], &[1.0, 2.0]), lit(F32, &[2], &[3.0, 4.0])])
        .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![4.0, 6.0]);
}

#[test]
fn a_hang_past_the_timeout_fails_one_call_and_the_next_succeeds() {
    let Some(b) = cpu() else { return };
    let b = b.with_timeout(Duration::from_secs(2));
    let err = b.debug_sleep(60_000).unwrap_err();
    assert!(matches!(err, XlaError::Timeout { .. }), "{err:?}");
    let exe = compile_binary(&b, Opcode::Subtract, F32, &[1]);
    let out = exe
        .run(&[lit(F32, &[1], &[1.0]), lit(F32, &[1], &[3.0])])
        .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![-2.0]);
}

#[test]
fn a_missing_plugin_is_unavailable_not_a_failure() {
    let b = XlaBackend::with_plugin_path(XlaPlugin::Cpu, "/nonexistent/xla.so".into());
    let reason = b.availability().unwrap_err();
    assert!(reason.contains("does not exist"), "{reason}");
    let err = b.compile_module(&binary_module(Opcode::Add, F32, &[1]));
    assert!(
        matches!(err, Err(XlaError::Unavailable(_))),
        "{:?}",
        err.err()
    );
}

#[test]
fn an_xla_compile_error_is_typed_and_keeps_the_plugin_message() {
    let Some(b) = cpu() else { return };
    let lowered = xla_props::backend::xla::lower::Lowered {
        mlir: "module { func.func @main( }".into(),
        params: vec![],
        results: vec![],
    };
    match b.compile_lowered(lowered) {
        Err(XlaError::Compile(message)) => assert!(!message.is_empty()),
        other => panic!("expected a compile error, got {:?}", other.err()),
    }
    // The worker survived the error: the next compile works without a restart.
    assert_eq!(b.cache_stats().restarts, 0);
    b.compile_module(&binary_module(Opcode::Add, F32, &[1]))
        .unwrap();
}

#[test]
fn both_xla_versions_agree_on_a_sort() {
    let (Some(new), Some(old)) = (
        backend_or_skip(XlaPlugin::Cpu),
        backend_or_skip(XlaPlugin::Cpu081),
    ) else {
        return;
    };
    let cmp = scalar_binary("lt", F32, Opcode::Compare, Some(ComparisonDirection::Lt));
    let mut c = Comp::default();
    let x = c.param(0, arr(F32, &[5]));
    let attrs = with(|t| {
        t.dimensions = Some(vec![0]);
        t.to_apply = Some(CompId(0));
    });
    let r = c.push(Opcode::Sort, arr(F32, &[5]), &[x], attrs);
    let m = module(vec![cmp, c.finish("main", r)]);
    let input = [lit(F32, &[5], &[3.0, -0.5, 9.0, 0.0, -7.25])];
    let a = new.compile_module(&m).unwrap().run(&input).unwrap();
    let b = old.compile_module(&m).unwrap().run(&input).unwrap();
    assert_eq!(a, b);
    assert_eq!(a[0].to_f64_vec(), vec![-7.25, -0.5, 0.0, 3.0, 9.0]);
    assert!(new.describe().unwrap().contains("0.115"));
    assert!(old.describe().unwrap().contains("0.81"));
}

#[test]
fn xla_gpu_without_a_gpu_says_why() {
    if std::path::Path::new("/dev/nvidiactl").exists()
        || std::env::var_os("XLA_PJRT_PLUGIN_GPU").is_some()
    {
        return;
    }
    let reason = XlaBackend::gpu().availability().unwrap_err();
    assert!(reason.contains("no nvidia gpu"), "{reason}");
}

#[test]
fn concurrent_executions_share_the_worker_pool() {
    let Some(b) = cpu() else { return };
    let exe = compile_binary(&b, Opcode::Multiply, F32, &[3]);
    std::thread::scope(|s| {
        for k in 0..4 {
            let exe = &exe;
            s.spawn(move || {
                let x = k as f64;
                for _ in 0..5 {
                    let out = exe
                        .run(&[
                            lit(F32, &[3], &[x, 1.0, -2.0]),
                            lit(F32, &[3], &[2.0, x, 0.5]),
                        ])
                        .unwrap();
                    assert_eq!(out[0].to_f64_vec(), vec![2.0 * x, x, -1.0]);
                }
            });
        }
    });
    assert_eq!(b.cache_stats().misses, 1);
}

#[test]
fn backends_made_with_new_share_one_pool_and_cache() {
    if backend_or_skip(XlaPlugin::Cpu).is_none() {
        return;
    }
    let (a, b) = (
        XlaBackend::new(XlaPlugin::Cpu),
        XlaBackend::new(XlaPlugin::Cpu),
    );
    // A module no other test compiles.
    let m = binary_module(Opcode::Maximum, F32, &[7, 3]);
    let before = b.cache_stats();
    a.compile_module(&m).unwrap();
    b.compile_module(&m).unwrap();
    let after = b.cache_stats();
    assert!(after.hits > before.hits, "{before:?} -> {after:?}");
}

#[test]
fn a_batch_of_cases_runs_as_one_module_and_splits_back() {
    let Some(b) = cpu() else { return };
    let add = binary_module(Opcode::Add, F32, &[2]);
    let mul = binary_module(Opcode::Multiply, F16, &[3]);
    let a1 = [lit(F32, &[2], &[1.0, 2.0]), lit(F32, &[2], &[3.0, 4.0])];
    let a2 = [
        lit(F16, &[3], &[2.0, 3.0, 0.5]),
        lit(F16, &[3], &[4.0, -1.0, 0.5]),
    ];
    let a3 = [lit(F32, &[2], &[-1.0, 0.5]), lit(F32, &[2], &[1.0, 0.25])];
    let cases: Vec<(&Module, &[Literal])> = vec![(&add, &a1), (&mul, &a2), (&add, &a3)];
    let before = b.cache_stats().misses;
    let out = b.run_batch(&cases).unwrap();
    assert_eq!(
        b.cache_stats().misses - before,
        1,
        "one compile for the batch"
    );
    assert_eq!(out.len(), 3);
    assert_eq!(out[0][0].to_f64_vec(), vec![4.0, 6.0]);
    assert_eq!(out[1][0].to_f64_vec(), vec![8.0, -3.0, 0.25]);
    assert_eq!(out[2][0].to_f64_vec(), vec![0.0, 0.75]);
}

#[test]
fn xla_cpu_through_the_registry_and_the_backend_trait() {
    use xla_props::backend::{create, BackendError};
    if backend_or_skip(XlaPlugin::Cpu).is_none() {
        return;
    }
    let b = create("xla-cpu").unwrap();
    assert_eq!(b.name(), "xla-cpu");
    let n = b.numerics();
    assert!(n.flushes_inputs(F32) && n.flushes_outputs(ElementType::Bf16));
    assert!(!n.flushes_inputs(F16), "f16 subnormals are kept");
    assert_eq!(n.budget(Opcode::Exponential, F16).map(|e| e.ulp), Some(1));
    assert_eq!(
        n.budget(Opcode::Sqrt, F32),
        None,
        "sqrt is correctly rounded"
    );
    let exe = b
        .compile(&binary_module(Opcode::Divide, F32, &[2]))
        .unwrap();
    let out = exe
        .execute(&[lit(F32, &[2], &[1.0, 3.0]), lit(F32, &[2], &[4.0, -2.0])])
        .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![0.25, -1.5]);
    let bad = exe.execute(&[lit(F32, &[1], &[1.0]), lit(F32, &[2], &[1.0, 2.0])]);
    assert!(matches!(bad, Err(BackendError::BadArguments(_))), "{bad:?}");
    // An op StableHLO cannot express is a skip, not a failure.
    let mut c = Comp::default();
    let p = c.param(0, arr(F32, &[2]));
    let r = c.op(Opcode::CustomCall, arr(F32, &[2]), &[p]);
    let err = b.compile(&module(vec![c.finish("main", r)])).err().unwrap();
    assert!(err.is_unsupported(), "{err}");
}
