//! One judge for every entry point: the same (module, inputs, backend) gets
//! the same verdict, with the same reasons, from `vs_reference` (the suite),
//! `compare`, isolation, the fuzzer's differential and `.hlotest` files.
//! One case agrees exactly, one exercises each entry of the registry of
//! legal differences, one is a known bug and one is a mismatch.

use xla_props::backend::xla::known_bugs::INT_POWER_LOW_6_BITS;
use xla_props::backend::{Backend, BackendError, Executable};
use xla_props::check::{
    excess_precision_variant, fma_contraction_variant, legal_differences, op_semantics_variant,
    whole_module_excess_precision_variant, ErrorBudget, KnownBug, LegalReason, Numerics, Produced,
    Verdict,
};
use xla_props::filetest::render_arg;
use xla_props::filetest::{observe, HloTest};
use xla_props::hlo::{parse_module, print_module, ElementType as T, Module, Opcode};
use xla_props::isolate::{judge_module, Oracle, Tested};
use xla_props::literal::Literal;

/// A backend that returns fixed outputs with declared numerics.
struct Fixed {
    numerics: Numerics,
    bugs: Vec<KnownBug>,
    outputs: Vec<Literal>,
}

struct FixedExe(Vec<Literal>);

impl Executable for FixedExe {
    fn execute(&self, _: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        Ok(self.0.clone())
    }
}

impl Backend for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }
    fn numerics(&self) -> Numerics {
        self.numerics.clone()
    }
    fn known_bugs(&self) -> &[KnownBug] {
        &self.bugs
    }
    fn compile(&self, _: &Module) -> Result<Box<dyn Executable>, BackendError> {
        Ok(Box::new(FixedExe(self.outputs.clone())))
    }
}

fn f32s(v: &[f64]) -> Literal {
    Literal::from_f64s(
        &xla_props::hlo::ArrayShape::new(T::F32, vec![v.len() as i64]),
        v,
    )
    .unwrap()
}

fn typed(t: T, bits: &[u64]) -> Literal {
    Literal::from_bits(
        &xla_props::hlo::ArrayShape::new(t, vec![bits.len() as i64]),
        bits,
    )
    .unwrap()
}

fn eval(m: &Module, args: &[Literal]) -> Vec<Literal> {
    xla_props::reference::evaluate(m, args).expect("the reference evaluates the case")
}

/// The verdict of every entry point; asserts they are the same.
fn everywhere(m: &Module, args: &[Literal], b: &Fixed) -> Verdict {
    let expected = eval(m, args);
    let n = b.numerics();
    let suite = xla_props::check::judge_against_reference(
        m, args, &expected, &b.outputs, &n, &b.bugs, false,
    );
    let compare = xla_props::cli::judge_compare(
        m,
        args,
        &Produced::Ok(expected.clone()),
        &Produced::Ok(b.outputs.clone()),
        &n,
        &b.bugs,
        true,
        false,
    );
    let isolate = judge_module(m, args, &Oracle::Exact, &Tested::new(b));
    let fuzz = xla_props::fuzz::differential(b, m, args, false).verdict;
    let mut text = String::from("// run: backends=fixed inputs=inline\n// expect: agree\n");
    for a in args {
        text.push_str(&format!("// arg: {}\n", render_arg(a)));
    }
    text.push_str(&print_module(m));
    let test = HloTest::parse(&text, None).expect("the reproducer parses");
    let filetest = observe(&test, b).expect("the reproducer runs");
    // known bugs are the suite's and compare's (the others judge without them)
    let plain = |v: &Verdict| match v {
        Verdict::KnownBug { mismatch, .. } => Verdict::Mismatch(mismatch.clone()),
        v => v.clone(),
    };
    if b.bugs.is_empty() {
        assert_eq!(suite, compare, "compare");
        assert_eq!(suite, isolate, "isolate");
        assert_eq!(suite, fuzz, "fuzz");
        assert_eq!(filetest.detail, suite.to_string(), "filetest");
    } else {
        assert_eq!(suite, compare, "compare");
        assert_eq!(plain(&suite).is_agreement(), isolate.is_agreement());
    }
    suite
}

fn reasons(v: &Verdict) -> Vec<LegalReason> {
    match v {
        Verdict::Agree(a) => a.legal.keys().copied().collect(),
        Verdict::Mismatch(r) => r.agreement.legal.keys().copied().collect(),
        Verdict::KnownBug { mismatch, .. } => mismatch.agreement.legal.keys().copied().collect(),
        _ => Vec::new(),
    }
}

fn backend(numerics: Numerics, outputs: Vec<Literal>) -> Fixed {
    Fixed {
        numerics,
        bugs: Vec::new(),
        outputs,
    }
}

/// A backend with `numerics` that returns `outputs` agrees on `m`
/// everywhere, accepted for `reason`.
fn agrees_for(
    m: &Module,
    args: &[Literal],
    numerics: Numerics,
    outputs: Vec<Literal>,
    reason: LegalReason,
) {
    let v = everywhere(m, args, &backend(numerics, outputs));
    assert!(v.is_agreement(), "{reason:?}: {v}");
    assert!(reasons(&v).contains(&reason), "{reason:?}: {v}");
}

fn module(text: &str) -> Module {
    parse_module(text).expect("test module parses")
}

#[test]
fn an_exact_result_agrees_everywhere() {
    let m = module(
        "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT n = f32[3] negate(x)\n}\n",
    );
    let args = [f32s(&[1.0, -2.0, 0.5])];
    let v = everywhere(&m, &args, &backend(Numerics::exact(), eval(&m, &args)));
    assert!(v.is_agreement() && reasons(&v).is_empty(), "{v}");
}

#[test]
fn a_wrong_value_is_a_mismatch_everywhere_and_shows_its_bound() {
    let m = module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  t = f32[2] tanh(x)\n  one = f32[2] constant({1, 1})\n  ROOT s = f32[2] add(t, one)\n}\n");
    let args = [f32s(&[0.5, -4.3])];
    let mut out = eval(&m, &args);
    let v = out[0].get_f64(1) * 1.01;
    out[0].set_f64(1, v);
    let n = Numerics::exact().with_approximation(Opcode::Tanh, T::F32, ErrorBudget::ulp(2));
    let v = everywhere(&m, &args, &backend(n, out));
    match &v {
        Verdict::Mismatch(r) => {
            assert_eq!(r.count, 1);
            let w = &r.outputs[0].worst[0];
            assert!(
                w.bound.is_some(),
                "the mismatch shows the bound it exceeded: {v}"
            );
        }
        v => panic!("expected a mismatch, got {v}"),
    }
    assert!(v.to_string().contains("outside the legal bound"), "{v}");
}

#[test]
fn each_legal_difference_is_accepted_with_its_reason_everywhere() {
    // flushed outputs: x * x underflows to a subnormal, written as zero
    let m = module(
        "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] multiply(x, x)\n}\n",
    );
    let args = [f32s(&[1e-20])];
    let n = Numerics::exact().with_ftz(T::F32, false, true);
    agrees_for(
        &m,
        &args,
        n,
        vec![f32s(&[0.0])],
        LegalReason::FlushedSubnormalOutput,
    );

    // approximate function: exp off by one ULP within a budget of two
    let m =
        module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] sqrt(x)\n}\n");
    let args = [f32s(&[0.75])];
    let mut out = eval(&m, &args);
    // beyond the default spec (20 eps relative), within a declared 128 ULP
    let b = out[0].get_bits(0) + 100;
    out[0].set_bits(0, b);
    let n = Numerics::exact().with_approximation(Opcode::Sqrt, T::F32, ErrorBudget::ulp(128));
    agrees_for(&m, &args, n, out, LegalReason::ApproximateFunction);

    // reassociation: (1e8 + 1) - 1e8 + 1 summed left to right in f32
    let m = module("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n");
    let args = [f32s(&[1e8, 1.0, -1e8, 1.0])];
    let seq = ((1e8f32 + 1.0) - 1e8) + 1.0;
    let out = vec![Literal::scalar(T::F32, f64::from(seq))];
    let n = Numerics::exact().with_reassociation();
    agrees_for(&m, &args, n, out, LegalReason::Reassociation);

    // unstable sort: tied keys carry their values in another order
    let m = module("HloModule m\ncmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT lt = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  k = s32[3] parameter(0)\n  v = s32[3] parameter(1)\n  ROOT s = (s32[3], s32[3]) sort(k, v), dimensions={0}, is_stable=false, to_apply=cmp\n}\n");
    let args = [typed(T::S32, &[2, 1, 1]), typed(T::S32, &[7, 8, 9])];
    let out = vec![typed(T::S32, &[1, 1, 2]), typed(T::S32, &[9, 8, 7])];
    agrees_for(&m, &args, Numerics::exact(), out, LegalReason::UnstableSort);

    // flushed inputs: a subnormal argument read as zero
    let m = module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  one = f32[1] constant({1})\n  ROOT y = f32[1] multiply(x, one)\n}\n");
    let args = [f32s(&[1e-40])];
    let n = Numerics::exact().with_ftz(T::F32, true, false);
    agrees_for(&m, &args, n, vec![f32s(&[0.0])], LegalReason::FlushedInputs);

    // excess precision in fusions: the f16 round trip of a residual elided
    let m = module("HloModule m\nfused {\n  x = f32[1] parameter(0)\n  h = f16[1] convert(x)\n  b = f32[1] convert(h)\n  ROOT r = f32[1] subtract(x, b)\n}\nENTRY e {\n  p = f32[1] parameter(0)\n  ROOT f = f32[1] fusion(p), kind=kLoop, calls=fused\n}\n");
    let args = [f32s(&[1.0 + 2f64.powi(-12)])];
    let out = eval(&excess_precision_variant(&m).unwrap(), &args);
    let n = Numerics::exact().with_excess_precision();
    agrees_for(&m, &args, n, out, LegalReason::ExcessPrecision);

    // excess precision anywhere: bf16 arithmetic kept in f32
    let m = module("HloModule m\nENTRY e {\n  x = bf16[2] parameter(0)\n  y = bf16[2] multiply(x, x)\n  ROOT z = bf16[2] subtract(y, x)\n}\n");
    let args = [typed(T::Bf16, &[0x3f81, 0x4049])];
    let out = eval(&whole_module_excess_precision_variant(&m).unwrap(), &args);
    let n = Numerics {
        excess_precision_anywhere: true,
        ..Numerics::exact()
    };
    if out != eval(&m, &args) {
        agrees_for(&m, &args, n, out, LegalReason::ExcessPrecisionAnywhere);
    }

    // fma: a * b + c with one rounding
    let m = module("HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n  c = f32[1] parameter(2)\n  p = f32[1] multiply(a, b)\n  ROOT s = f32[1] subtract(p, c)\n}\n");
    let a = 1.0 + 2f64.powi(-12);
    let args = [f32s(&[a]), f32s(&[a]), f32s(&[f64::from((a * a) as f32)])];
    let out = eval(&fma_contraction_variant(&m).unwrap(), &args);
    assert_ne!(out, eval(&m, &args), "the contraction differs here");
    let n = Numerics {
        contracts_multiply_add: true,
        ..Numerics::exact()
    };
    agrees_for(&m, &args, n, out, LegalReason::Fma);

    // fast min/max: a NaN second operand dropped
    let m = module("HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n  ROOT r = f32[1] minimum(a, b)\n}\n");
    let args = [f32s(&[1.5]), f32s(&[f64::NAN])];
    let n = Numerics {
        fast_min_max: true,
        ..Numerics::exact()
    };
    let out = eval(&op_semantics_variant(&m, &n).unwrap(), &args);
    agrees_for(&m, &args, n, out, LegalReason::FastMinMax);

    // reduce-precision on the operand's own bits: an f16 subnormal kept
    let m = module("HloModule m\nENTRY e {\n  x = f16[1] parameter(0)\n  ROOT r = f16[1] reduce-precision(x), exponent_bits=5, mantissa_bits=10\n}\n");
    let args = [typed(T::F16, &[0x0003])];
    let n = Numerics {
        reduce_precision_in_own_type: vec![T::F16],
        ..Numerics::exact()
    };
    let out = eval(&op_semantics_variant(&m, &n).unwrap(), &args);
    if out != eval(&m, &args) {
        agrees_for(&m, &args, n, out, LegalReason::ReducePrecisionInOwnType);
    }

    // convolution padding multiplied: an infinite weight times a padded zero
    let m = module("HloModule m\nENTRY e {\n  x = f32[1,3,1] parameter(0)\n  w = f32[2,1,1] parameter(1)\n  ROOT c = f32[1,4,1] convolution(x, w), window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f\n}\n");
    let x = Literal::from_f64s(
        &xla_props::hlo::ArrayShape::new(T::F32, vec![1, 3, 1]),
        &[1.0, 2.0, 3.0],
    )
    .unwrap();
    let w = Literal::from_f64s(
        &xla_props::hlo::ArrayShape::new(T::F32, vec![2, 1, 1]),
        &[f64::INFINITY, 1.0],
    )
    .unwrap();
    let args = [x, w];
    let n = Numerics {
        convolution_multiplies_padding: true,
        ..Numerics::exact()
    };
    let out = eval(&op_semantics_variant(&m, &n).unwrap(), &args);
    assert_ne!(out, eval(&m, &args), "padding times inf differs");
    agrees_for(&m, &args, n, out, LegalReason::ConvolutionPadding);
}

/// GELU with tanh at x = -4.3: `1 + tanh` cancels, so a tanh within its
/// declared two ULP is tens of thousands of ULP off at the output. No flat
/// tolerance tells that from a bug; the bound carried through the graph does.
#[test]
fn a_cancellation_after_an_approximate_function_is_legal_by_the_bound() {
    let m = module("HloModule gelu\nENTRY e {\n  x = f32[1] parameter(0)\n  c = f32[1] constant({0.044715})\n  k = f32[1] constant({0.7978845608})\n  half = f32[1] constant({0.5})\n  one = f32[1] constant({1})\n  x2 = f32[1] multiply(x, x)\n  x3 = f32[1] multiply(x2, x)\n  cx3 = f32[1] multiply(c, x3)\n  inner = f32[1] add(x, cx3)\n  arg = f32[1] multiply(k, inner)\n  t = f32[1] tanh(arg)\n  onept = f32[1] add(one, t)\n  hx = f32[1] multiply(half, x)\n  ROOT g = f32[1] multiply(hx, onept)\n}\n");
    let x = -4.3f32;
    let args = [f32s(&[f64::from(x)])];
    // the backend: the same program with tanh two ULP up
    let arg = 0.797_884_6f32 * (x + 0.044715f32 * (x * x * x));
    let t_exact = eval(
        &module(
            "HloModule t\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT t = f32[1] tanh(x)\n}\n",
        ),
        &[f32s(&[f64::from(arg)])],
    )[0]
    .get_f64(0) as f32;
    let t = f32::from_bits(t_exact.to_bits() - 2); // toward zero: larger, since t < 0
    let g = (0.5f32 * x) * (1.0 + t);
    let out = vec![f32s(&[f64::from(g)])];
    let expected = eval(&m, &args)[0].get_f64(0);
    let ulps = (f64::from(g) - expected).abs() / (expected.abs() * f64::from(f32::EPSILON));
    assert!(ulps > 1000.0, "the cancellation amplifies: {ulps} ulp");
    let n = Numerics::exact().with_approximation(Opcode::Tanh, T::F32, ErrorBudget::ulp(2));
    agrees_for(&m, &args, n.clone(), out, LegalReason::PropagatedBound);
    // four ULP of tanh are outside a two-ULP budget
    let t4 = f32::from_bits(t_exact.to_bits() - 5);
    let g4 = (0.5f32 * x) * (1.0 + t4);
    let v = everywhere(&m, &args, &backend(n, vec![f32s(&[f64::from(g4)])]));
    assert!(v.is_disagreement(), "{v}");
}

/// A sum of log-plus-one, expm1, cbrt and tan that nearly cancels.
#[test]
fn a_near_cancelling_sum_of_approximate_functions_is_legal_by_the_bound() {
    let m = module("HloModule s\nENTRY e {\n  x = f32[1] parameter(0)\n  a = f32[1] log-plus-one(x)\n  b = f32[1] exponential-minus-one(x)\n  c = f32[1] cbrt(x)\n  d = f32[1] tan(x)\n  ab = f32[1] subtract(a, b)\n  cd = f32[1] subtract(c, d)\n  ROOT s = f32[1] add(ab, cd)\n}\n");
    let x = 0.3f32;
    let args = [f32s(&[f64::from(x)])];
    let one = |op: &str| {
        eval(
            &module(&format!("HloModule t\nENTRY e {{\n  x = f32[1] parameter(0)\n  ROOT t = f32[1] {op}(x)\n}}\n")),
            &args,
        )[0]
            .get_f64(0) as f32
    };
    let up = |v: f32| f32::from_bits(v.to_bits() + 1);
    let (a, b, c, d) = (
        up(one("log-plus-one")),
        one("exponential-minus-one"),
        up(one("cbrt")),
        one("tan"),
    );
    let s = (a - b) + (c - d);
    let mut n = Numerics::exact();
    for op in [
        Opcode::LogPlusOne,
        Opcode::ExponentialMinusOne,
        Opcode::Cbrt,
        Opcode::Tan,
    ] {
        n = n.with_approximation(op, T::F32, ErrorBudget::ulp(1));
    }
    let out = vec![f32s(&[f64::from(s)])];
    let v = everywhere(&m, &args, &backend(n, out));
    assert!(v.is_agreement(), "{v}");
}

#[test]
fn a_known_bug_is_an_expected_failure_where_known_bugs_apply() {
    let m = module("HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  y = s32[2] parameter(1)\n  ROOT p = s32[2] power(x, y)\n}\n");
    let args = [typed(T::S32, &[1, 2]), typed(T::S32, &[3, 65])];
    let out = eval(&INT_POWER_LOW_6_BITS.model.apply(&m).unwrap(), &args);
    let b = Fixed {
        numerics: Numerics::exact(),
        bugs: vec![INT_POWER_LOW_6_BITS],
        outputs: out,
    };
    let v = everywhere(&m, &args, &b);
    match &v {
        Verdict::KnownBug { bugs, .. } => assert_eq!(bugs[0].id, INT_POWER_LOW_6_BITS.id),
        v => panic!("expected the known bug, got {v}"),
    }
}

#[test]
fn the_registry_is_listed_in_the_numerics_notes() {
    let notes =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/numerics.md"))
            .expect("docs/numerics.md");
    for (reason, _) in legal_differences() {
        assert!(
            notes.contains(&format!("`{}`", reason.name())),
            "docs/numerics.md does not list `{}`",
            reason.name()
        );
    }
}

#[test]
fn a_complex_abs_has_its_operand_types_budget_and_a_real_abs_none() {
    // |z| of a c64 is an f32 hypot: xla-cpu declares 2 ulp at (abs, c64)
    let n = Numerics::exact().with_approximation(Opcode::Abs, T::C64, ErrorBudget::ulp(2));
    let judge = |m: &Module, args: &[Literal], out: Vec<Literal>| {
        let expected = eval(m, args);
        xla_props::check::judge_against_reference(m, args, &expected, &out, &n, &[], false)
    };
    let two_ulp_up = |mut out: Vec<Literal>| {
        let b = out[0].get_bits(0);
        out[0].set_bits(0, b + 2);
        out
    };
    let complex =
        module("HloModule m\nENTRY e {\n  x = c64[2] parameter(0)\n  ROOT a = f32[2] abs(x)\n}\n");
    let shape = xla_props::hlo::ArrayShape::new(T::C64, vec![2]);
    let z = [Literal::from_complex(&shape, &[(3.1, -4.7), (0.25, 1.5)]).unwrap()];
    let v = judge(&complex, &z, two_ulp_up(eval(&complex, &z)));
    assert!(v.is_agreement(), "{v}");
    // the same budget does not excuse a real abs (exact)
    let real =
        module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] abs(x)\n}\n");
    let x = [f32s(&[-3.1, 4.7])];
    let v = judge(&real, &x, two_ulp_up(eval(&real, &x)));
    assert!(v.is_disagreement(), "{v}");
}
