//! TEMPORARY local copy of the `Backend` contract from DESIGN.md, until the
//! interpreter branch lands `crate::backend` (then this file is deleted and
//! the XLA backend implements the real traits).

use crate::hlo::Module;
use crate::literal::Literal;

/// Why a backend could not compile or run a case (temporary copy).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend lacks an op or dtype: the case is a skip.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The backend is not installed: its cases are skipped.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything else: the case fails.
    #[error("{0}")]
    Failed(String),
}

/// A compiler under test (temporary copy of the DESIGN.md contract).
pub trait Backend: Send + Sync {
    /// Stable short name used in case names and filters.
    fn name(&self) -> &str;
    /// Compile once.
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError>;
}

/// A compiled module (temporary copy of the DESIGN.md contract).
pub trait Executable: Send + Sync {
    /// Run many times; outputs with tuples flattened.
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError>;
}
