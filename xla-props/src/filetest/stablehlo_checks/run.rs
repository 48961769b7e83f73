//! One check program on one backend.

use super::compare::{judge_check, CheckFailure, CheckPass};
use crate::backend::{Backend, BackendError};
use crate::hlo::stablehlo::{CheckProgram, CheckSpec};
use crate::literal::Literal;

/// One check's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The check.
    pub spec: CheckSpec,
    /// Held (with the worst difference) or failed (with the first failing element).
    pub verdict: Result<CheckPass, CheckFailure>,
    /// The value the program computed (the check's first operand).
    pub actual: Literal,
    /// The value the check expected (its second operand).
    pub expected: Literal,
}

/// What running a check program gave.
#[derive(Clone, Debug, PartialEq)]
pub enum ProgramOutcome {
    /// It ran; one result per check.
    Ran(Vec<CheckResult>),
    /// The backend (or the reference) cannot run it: an op or type it lacks.
    Unsupported(String),
    /// Compiling or running it failed otherwise.
    Error(String),
}

/// Compiles and runs `program` (no arguments) on `backend`, then judges its checks.
pub fn run_check_program(backend: &dyn Backend, program: &CheckProgram) -> ProgramOutcome {
    let outputs = match backend
        .compile(&program.module)
        .and_then(|exe| exe.execute(&[]))
    {
        Ok(o) => o,
        Err(BackendError::Unsupported { what }) => return ProgramOutcome::Unsupported(what),
        Err(e) => return ProgramOutcome::Error(e.to_string()),
    };
    let mut results = Vec::new();
    for spec in &program.checks {
        let (Some(a), Some(e)) = (outputs.get(spec.actual), outputs.get(spec.expected)) else {
            return ProgramOutcome::Error(format!(
                "the backend returned {} outputs; the checks need {}",
                outputs.len(),
                spec.expected + 1
            ));
        };
        results.push(CheckResult {
            spec: spec.clone(),
            verdict: judge_check(spec.kind, a, e, spec.max_ulp, spec.tolerance),
            actual: a.clone(),
            expected: e.clone(),
        });
    }
    ProgramOutcome::Ran(results)
}
