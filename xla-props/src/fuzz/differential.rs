//! Glue for program properties and the fuzzer: run a program on the reference
//! and on a backend, and judge the two with the full tolerance model
//! (`check::Judge`): the same judgement `xla-props compare` makes.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::backend::{Backend, BackendError};
use crate::check::{Judge, Numerics, Policy, Produced, Verdict};
use crate::hlo::Module;
use crate::literal::Literal;

/// What one side of a run produced.
#[derive(Clone, Debug, PartialEq)]
pub enum RunResult {
    /// The outputs, tuples flattened.
    Ok(Vec<Literal>),
    /// An error (or a panic), described.
    Failed(String),
    /// The side cannot run this program.
    Unsupported(String),
}

impl RunResult {
    pub(crate) fn outcome(&self) -> Produced<'_> {
        match self {
            RunResult::Ok(v) => Produced::Ok(v),
            RunResult::Failed(e) => Produced::Failed(e),
            RunResult::Unsupported(e) => Produced::Unsupported(e),
        }
    }
    /// The outputs, when it ran.
    pub fn outputs(&self) -> Option<&[Literal]> {
        match self {
            RunResult::Ok(v) => Some(v),
            _ => None,
        }
    }
}

fn from_backend(r: Result<Vec<Literal>, BackendError>) -> RunResult {
    match r {
        Ok(v) => RunResult::Ok(v),
        Err(e @ BackendError::Unsupported { .. }) => RunResult::Unsupported(e.to_string()),
        Err(e) => RunResult::Failed(e.to_string()),
    }
}

/// Runs `module` on `backend`; a panic is a failure of this run, not of the caller.
pub fn run_backend(backend: &dyn Backend, module: &Module, args: &[Literal]) -> RunResult {
    catch_unwind(AssertUnwindSafe(|| {
        from_backend(backend.compile(module).and_then(|exe| exe.execute(args)))
    }))
    .unwrap_or_else(|_| RunResult::Failed(format!("{} panicked", backend.name())))
}

/// Runs `module` on the exact reference evaluator.
pub fn run_reference(module: &Module, args: &[Literal]) -> RunResult {
    match catch_unwind(AssertUnwindSafe(|| {
        crate::reference::evaluate(module, args)
    })) {
        Ok(Ok(v)) => RunResult::Ok(v),
        Ok(Err(e @ crate::reference::EvalError::Unsupported { .. })) => {
            RunResult::Unsupported(e.to_string())
        }
        Ok(Err(e)) => RunResult::Failed(e.to_string()),
        Err(_) => RunResult::Failed("the reference panicked".to_string()),
    }
}

/// Judges `actual` (from a backend with `numerics`) against `expected` for
/// `module` run on `args`: the one judge (`check::Judge`) against the
/// reference, `strict_rounding` forbidding elided roundings.
pub fn judge_runs(
    module: &Module,
    args: &[Literal],
    expected: &RunResult,
    actual: &RunResult,
    numerics: &Numerics,
    strict_rounding: bool,
) -> Verdict {
    let eval = |m: &Module, a: &[Literal]| run_reference(m, a).outputs().map(<[Literal]>::to_vec);
    Judge::new(numerics, Policy::Reference)
        .strict_rounding(strict_rounding)
        .judge(module, args, expected.outcome(), actual.outcome(), &eval)
}

/// A program run on the reference and on a backend, and the verdict.
#[derive(Clone, Debug)]
pub struct Differential {
    /// The reference's result.
    pub expected: RunResult,
    /// The backend's result.
    pub actual: RunResult,
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
    let actual = run_backend(backend, module, args);
    let verdict = judge_runs(
        module,
        args,
        &expected,
        &actual,
        &backend.numerics(),
        strict_rounding,
    );
    Differential {
        expected,
        actual,
        verdict,
    }
}
