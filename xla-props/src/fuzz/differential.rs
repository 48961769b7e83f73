//! Glue for program properties and the fuzzer: run a program on the reference
//! and on a backend, and judge the two with the full tolerance model
//! (`check::Judge`): the same judgement `xla-props compare` makes.

use crate::backend::{run_module, run_reference, Backend};
use crate::check::{Judge, KnownBug, Numerics, Policy, Produced, Verdict};
use crate::hlo::Module;
use crate::literal::Literal;

/// Judges `actual` (from a backend with `numerics`) against `expected` for
/// `module` run on `args`: the one judge (`check::Judge`) against the
/// reference, a mismatch the backend's `known_bugs` explain a known bug
/// (none for the fuzzer, which looks for bugs known or not),
/// `strict_rounding` forbidding elided roundings.
pub fn judge_runs(
    module: &Module,
    args: &[Literal],
    expected: &Produced,
    actual: &Produced,
    numerics: &Numerics,
    known_bugs: &[KnownBug],
    strict_rounding: bool,
) -> Verdict {
    let eval = |m: &Module, a: &[Literal]| run_reference(m, a).into_outputs();
    Judge::new(numerics, known_bugs, Policy::Reference)
        .strict_rounding(strict_rounding)
        .judge(module, args, expected, actual, &eval)
}

/// A program run on the reference and on a backend, and the verdict.
#[derive(Clone, Debug)]
pub struct Differential {
    /// The reference's result.
    pub expected: Produced,
    /// The backend's result.
    pub actual: Produced,
    /// The judgement.
    pub verdict: Verdict,
}

/// Runs `module` on the reference and on `backend` and judges the results.
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// use xla_props::literal::Literal;
/// use xla_props::fuzz::differential;
/// let m = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![3]))?;
///         b.binary(Opcode::Add, x, x)
///     })
///     .unwrap();
/// let args = [Literal::zeros(m.parameter_shapes()[0].as_array().unwrap()).unwrap()];
/// let d = differential(&Interpreter::default(), &m, &args, false);
/// assert!(d.verdict.is_agreement());
/// ```
pub fn differential(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
    strict_rounding: bool,
) -> Differential {
    let expected = run_reference(module, args);
    let actual = Produced::from(run_module(backend, module, args));
    let verdict = judge_runs(
        module,
        args,
        &expected,
        &actual,
        &backend.numerics(),
        &[],
        strict_rounding,
    );
    Differential {
        expected,
        actual,
        verdict,
    }
}
