//! The backend contract of DESIGN.md, as the runner uses it.
//!
//! Stand-in until `crate::backend` lands on main: the same trait names and
//! signatures, so that switching is a change of `use` lines. Keep in sync
//! with DESIGN.md's "Backend" section.

use crate::hlo::Module;
use crate::literal::Literal;

/// Why a backend could not compile or run a module.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend lacks an op or dtype: the case is skipped, not failed.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The backend is not compiled in or not installed.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Compilation failed.
    #[error("compile failed: {0}")]
    Compile(String),
    /// Execution failed.
    #[error("execution failed: {0}")]
    Execute(String),
}

impl BackendError {
    /// True for errors that make a case a skip rather than a failure.
    pub fn is_skip(&self) -> bool {
        matches!(
            self,
            BackendError::Unsupported(_) | BackendError::Unavailable(_)
        )
    }
}

/// A compiler under test (DESIGN.md contract).
pub trait Backend: Send + Sync {
    /// Stable short name used in case names and filters.
    fn name(&self) -> &str;
    /// The numerics this backend promises (DESIGN.md); exact unless declared.
    fn numerics(&self) -> crate::check::Numerics {
        crate::check::Numerics::exact()
    }
    /// Compile once.
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError>;
}

/// A compiled module (DESIGN.md contract).
pub trait Executable: Send + Sync {
    /// Run; returns the entry computation's outputs, tuples flattened.
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError>;
}

/// A backend that exists but cannot run anything, and says why.
///
/// ```
/// use xla_props::property::{Backend, Unavailable};
/// let b = Unavailable::new("reference", "the reference evaluator is not built yet");
/// assert_eq!(b.name(), "reference");
/// ```
#[derive(Clone, Debug)]
pub struct Unavailable {
    name: String,
    why: String,
}

impl Unavailable {
    /// A backend named `name` that is unavailable because `why`.
    pub fn new(name: impl Into<String>, why: impl Into<String>) -> Unavailable {
        Unavailable {
            name: name.into(),
            why: why.into(),
        }
    }
}

impl Backend for Unavailable {
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, _module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        Err(BackendError::Unavailable(self.why.clone()))
    }
}

/// Runs a module on a backend: compile, then execute once.
pub fn run_module(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Result<Vec<Literal>, BackendError> {
    backend.compile(module)?.execute(args)
}
