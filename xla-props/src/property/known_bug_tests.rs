//! The judge's known-bug phase: a mismatch a known bug's model explains is a
//! `Verdict::KnownBug`; a different wrong value still fails.

use super::spec::Tolerance;
use crate::backend::xla::known_bugs::tests::module;
use crate::backend::xla::known_bugs::{
    F32_LOG_SUBNORMAL, INT_POWER_LOW_6_BITS, XLA_CPU_KNOWN_BUGS,
};
use crate::check::{KnownBug, Numerics, Verdict};
use crate::hlo::{parse_module, ArrayShape, ElementType, Module};
use crate::literal::Literal;

fn judge(
    m: &Module,
    inputs: &[Literal],
    numerics: &Numerics,
    bugs: &[KnownBug],
    actual: &[Literal],
) -> Verdict {
    let j = Tolerance::Exact.judge(numerics, false, crate::check::Policy::Reference, bugs);
    j.against_reference(m, inputs, actual)
}

fn f32s(bits: &[u64]) -> Literal {
    Literal::from_bits(
        &ArrayShape::new(ElementType::F32, vec![bits.len() as i64]),
        bits,
    )
    .unwrap()
}

fn ids(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::KnownBug { bugs, .. } => bugs.iter().map(|b| b.id.clone()).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn the_log_model_explains_its_bug_and_nothing_else() {
    let m = module("log", "f32[3]", false);
    let x = [f32s(&[0x1, 0x3f80_0000, 0x4080_0000])];
    // what xla-cpu flushes and computes: subnormals flushed on input and output
    let n = Numerics::exact().with_ftz(ElementType::F32, true, true);
    let ln4 = (4f64.ln() as f32).to_bits() as u64;
    // the bug: log(2^-149) = ln(2^-150)
    let buggy = [f32s(&[0xc2cf_f1b4, 0, ln4])];
    let v = judge(&m, &x, &n, XLA_CPU_KNOWN_BUGS, &buggy);
    assert_eq!(ids(&v), vec![F32_LOG_SUBNORMAL.id.to_string()], "{v}");
    assert!(!v.is_agreement());
    // a different wrong value in the same element still fails
    let other = [f32s(&[0xc2c0_0000, 0, ln4])];
    assert!(matches!(
        judge(&m, &x, &n, XLA_CPU_KNOWN_BUGS, &other),
        Verdict::Mismatch(_)
    ));
    // so does the bug's value with another element wrong too
    let both = [f32s(&[0xc2cf_f1b4, 0x3f80_0000, ln4])];
    assert!(matches!(
        judge(&m, &x, &n, XLA_CPU_KNOWN_BUGS, &both),
        Verdict::Mismatch(_)
    ));
    // the flushed result (-inf) is legal, not a bug
    let flushed = [f32s(&[0xff80_0000, 0, ln4])];
    assert!(judge(&m, &x, &n, XLA_CPU_KNOWN_BUGS, &flushed).is_agreement());
    // without declared bugs the bug is a plain mismatch
    assert!(matches!(
        judge(&m, &x, &n, &[], &buggy),
        Verdict::Mismatch(_)
    ));
}

#[test]
fn the_integer_power_model_explains_its_bug_and_nothing_else() {
    let m = module("power", "u16[3]", true);
    let shape = ArrayShape::new(ElementType::U16, vec![3]);
    let args = [
        Literal::from_i128s(&shape, &[5669, 48305, 3]).unwrap(),
        Literal::from_i128s(&shape, &[5266, 46723, 10]).unwrap(),
    ];
    let n = Numerics::exact();
    // xla-cpu's result: 5669^(5266 mod 64), 0 for a top-bit exponent
    let buggy = [Literal::from_i128s(&shape, &[50457, 0, 59049]).unwrap()];
    let v = judge(&m, &args, &n, &[INT_POWER_LOW_6_BITS], &buggy);
    assert_eq!(ids(&v), vec![INT_POWER_LOW_6_BITS.id.to_string()], "{v}");
    // off by one in an element the model covers: a new bug, still failing
    let other = [Literal::from_i128s(&shape, &[50458, 0, 59049]).unwrap()];
    assert!(matches!(
        judge(&m, &args, &n, &[INT_POWER_LOW_6_BITS], &other),
        Verdict::Mismatch(_)
    ));
    // the right answer agrees
    let right = crate::reference::evaluate(&m, &args).unwrap();
    assert!(judge(&m, &args, &n, &[INT_POWER_LOW_6_BITS], &right).is_agreement());
}

/// The interpreter, declaring that reduce init values must be identities (as XLA does).
struct IdentityInitOnly(crate::backend::Interpreter);

impl crate::backend::Backend for IdentityInitOnly {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn compile(
        &self,
        module: &Module,
    ) -> Result<Box<dyn crate::backend::Executable>, crate::backend::BackendError> {
        self.0.compile(module)
    }
    fn traits(&self) -> crate::backend::BackendTraits {
        crate::backend::BackendTraits {
            requires_identity_reduce_init: true,
            ..Default::default()
        }
    }
}

#[test]
fn reduce_with_init_skips_where_the_init_must_be_an_identity() {
    use super::{CaseContext, CaseId, Outcome, ReferenceCache};
    use crate::backend::Backend;
    let case: CaseId = "reduce_with_init::reduce::f32::f32[7]{0}::uniform.add-all::interpreter"
        .parse()
        .unwrap();
    let interp = crate::backend::Interpreter::default();
    let reference = crate::backend::ReferenceBackend::default();
    let cache = ReferenceCache::new();
    let mut ctx = CaseContext::new(case, &interp, &reference, &cache, 2, 0);
    assert!(matches!((ctx.spec.body)(&mut ctx), Outcome::Pass));
    let xla_like = IdentityInitOnly(crate::backend::Interpreter::default());
    assert!(xla_like.traits().requires_identity_reduce_init);
    let mut ctx = CaseContext::new(case, &xla_like, &reference, &cache, 2, 0);
    match (ctx.spec.body)(&mut ctx) {
        Outcome::Skip(why) => assert!(why.contains("identity"), "{why}"),
        _ => panic!("reduce_with_init ran on a backend that requires identity inits"),
    }
}

/// A backend that fails every compile with `self.0` and declares IREE's
/// strided reduce-window rejection.
struct Rejecting(&'static str);

impl crate::backend::Backend for Rejecting {
    fn name(&self) -> &str {
        "rejecting"
    }
    fn compile(
        &self,
        _: &Module,
    ) -> Result<Box<dyn crate::backend::Executable>, crate::backend::BackendError> {
        Err(crate::backend::BackendError::Compile(self.0.to_string()))
    }
    fn known_bugs(&self) -> &[KnownBug] {
        &[crate::backend::iree::known_bugs::STRIDED_WINDOW_REJECTED]
    }
}

#[test]
fn a_declared_rejection_is_a_known_bug_and_other_compile_errors_fail() {
    use super::{CaseContext, CaseId, Outcome, ReferenceCache};
    let window = |input: &str, out: &str, window: &str| {
        parse_module(&format!(
            "HloModule m\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT s = f32[] add(a, b)\n}}\nENTRY e {{\n  x = f32[{input}] parameter(0)\n  \
             z = f32[] constant(0)\n  ROOT r = f32[{out}] reduce-window(x, z), \
             window={{{window}}}, to_apply=add\n}}\n"
        ))
        .unwrap()
    };
    let rejected = window("4,3", "2,1", "size=2x2 stride=2x2");
    let accepted = window("4,2", "2,1", "size=2x2 stride=2x2");
    let unstrided = window("4,3", "3,2", "size=2x2");
    let case: CaseId = "vs_reference::add::f32::f32[7]{0}::uniform::interpreter"
        .parse()
        .unwrap();
    let reference = crate::backend::ReferenceBackend::default();
    let cache = ReferenceCache::new();
    let ctx = CaseContext::new(case, &reference, &reference, &cache, 1, 0);
    let iree = Rejecting(
        "iree-compile: module.mlir:5:10: error: 'linalg.generic' op inferred input/output \
         operand #1 has shape's dimension #1 to be 2, but found 3",
    );
    let crash = Rejecting("iree-compile: module.mlir:5:10: error: something else");
    let run = |b: &Rejecting, m: &Module| match ctx.run_on(b, m, &[]) {
        Err(Outcome::Fail(f)) => f.verdict,
        _ => panic!("expected a failure"),
    };
    match run(&iree, &rejected) {
        Some(Verdict::KnownRejection { bugs, error }) => {
            assert_eq!(bugs[0].id, "iree-cpu/strided-window-rejected");
            assert!(error.contains("linalg.generic"), "{error}");
        }
        v => panic!("expected the known rejection, got {v:?}"),
    }
    // another error, or a module the bug does not reject, is a plain failure:
    // the judge's "only the backend failed"
    let plain = |v: Option<Verdict>| {
        matches!(
            v,
            Some(Verdict::OnlyOneFailed {
                failed: crate::check::Side::Backend,
                ..
            })
        )
    };
    assert!(plain(run(&crash, &rejected)));
    assert!(plain(run(&iree, &accepted)));
    assert!(plain(run(&iree, &unstrided)));
    // the same rule for a convolution's spatial dimensions
    let conv = |n: i64, o: i64| {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = f32[1,{n},1] parameter(0)\n  \
             w = f32[2,1,1] parameter(1)\n  ROOT c = f32[1,{o},1] convolution(x, w), \
             window={{size=2 stride=2}}, dim_labels=b0f_0io->b0f\n}}\n"
        ))
        .unwrap()
    };
    assert!(matches!(
        run(&iree, &conv(3, 1)),
        Some(Verdict::KnownRejection { .. })
    ));
    assert!(plain(run(&iree, &conv(4, 2))));
}
