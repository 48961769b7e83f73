//! Running one side of a comparison: the one home of "compile, run once,
//! and catch a panic as that run's failure", for a backend
//! (`run_module`) and for the exact reference (`run_reference`), each
//! giving what the judge takes (`check::Produced`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::api::Backend;
use super::error::BackendError;
use crate::check::Produced;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::reference::EvalError;

/// Runs a module on a backend: compile, then execute once; a panic is
/// this run's failure (`BackendError::Panicked`), not the caller's.
/// `Produced::from` turns the result into one side of a comparison.
///
/// ```
/// use xla_props::backend::{run_module, Interpreter};
/// use xla_props::check::Produced;
/// use xla_props::hlo::{parse_module, ElementType};
/// use xla_props::literal::Literal;
/// let m = parse_module("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n").unwrap();
/// let out = run_module(&Interpreter::default(), &m, &[Literal::scalar(ElementType::F32, 2.0)]);
/// assert_eq!(out.clone().unwrap()[0].get_f64(0), -2.0);
/// assert!(Produced::from(out).outputs().is_some());
/// ```
pub fn run_module(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Result<Vec<Literal>, BackendError> {
    guarded(backend.name(), || backend.compile(module)?.execute(args))
}

/// One call into backend `name` (a compile, an execution, a probe) with a
/// panic caught as that call's failure (`BackendError::Panicked`): for
/// callers that need the steps apart (isolation counts its runs between
/// them); `run_module` is both steps in one.
pub fn guarded<T>(
    name: &str,
    f: impl FnOnce() -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(BackendError::Panicked {
            backend: name.to_string(),
            message: panic_text(p.as_ref()),
        })
    })
}

/// Runs `module` on the exact reference evaluator, as one side of a
/// comparison (its own error messages; a panic is a failure).
///
/// ```
/// use xla_props::backend::run_reference;
/// use xla_props::hlo::{parse_module, ElementType};
/// use xla_props::literal::Literal;
/// let m = parse_module("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n").unwrap();
/// let out = run_reference(&m, &[Literal::scalar(ElementType::F32, 2.0)]);
/// assert_eq!(out.outputs().unwrap()[0].get_f64(0), -2.0);
/// ```
pub fn run_reference(module: &Module, args: &[Literal]) -> Produced {
    match catch_unwind(AssertUnwindSafe(|| {
        crate::reference::evaluate(module, args)
    })) {
        Ok(Ok(v)) => Produced::Ok(v),
        Ok(Err(e @ EvalError::Unsupported { .. })) => Produced::Unsupported(e.to_string()),
        Ok(Err(e)) => Produced::Failed(e.to_string()),
        Err(p) => Produced::Panicked(panic_text(p.as_ref())),
    }
}

impl From<Result<Vec<Literal>, BackendError>> for Produced {
    /// A backend's result as one side: an unsupported op or an unavailable
    /// backend is a skip (`BackendError::is_skip`), a compile or execution
    /// error keeps the backend's message for known rejections, a panic is
    /// a panic, any other error a failure, described.
    fn from(r: Result<Vec<Literal>, BackendError>) -> Produced {
        match r {
            Ok(v) => Produced::Ok(v),
            Err(e) if e.is_skip() => Produced::Unsupported(e.to_string()),
            Err(BackendError::Panicked { message, .. }) => Produced::Panicked(message),
            Err(e) => {
                let error = e.to_string();
                match e {
                    BackendError::Compile(message) | BackendError::Execute(message) => {
                        Produced::Errored { message, error }
                    }
                    _ => Produced::Failed(error),
                }
            }
        }
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}
