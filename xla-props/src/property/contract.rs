//! The backend contract of DESIGN.md, as the runner uses it.
//!
//! STAND-IN until `crate::backend` and `crate::check` land on main: the same
//! names, signatures and error variants as those modules (`Backend`,
//! `Executable`, `BackendError`, `Numerics`), so that switching is replacing
//! the stand-in types with re-exports (`pub use crate::backend::{...}`).
//! Nothing else in the runner names those modules. `ReferenceBackend` is the
//! real reference evaluator.

use crate::hlo::{ElementType, Module, Opcode};
use crate::literal::Literal;
use crate::reference::{evaluate, EvalError};

/// Why a backend could not compile or run a module (mirrors `backend::BackendError`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend cannot express this module: the case is skipped, not failed.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is missing.
        what: String,
    },
    /// The backend exists but cannot be used in this build or on this machine.
    #[error("backend `{backend}` is unavailable: {reason}")]
    Unavailable {
        /// The backend's name.
        backend: String,
        /// Why.
        reason: String,
    },
    /// Compilation failed.
    #[error("compile error: {0}")]
    Compile(String),
    /// Execution failed.
    #[error("execution error: {0}")]
    Execute(String),
    /// The arguments do not match the entry computation's parameters.
    #[error("bad arguments: {0}")]
    BadArguments(String),
}

impl BackendError {
    /// An `Unsupported` error.
    pub fn unsupported(what: impl Into<String>) -> BackendError {
        BackendError::Unsupported { what: what.into() }
    }
}

/// A per-op error budget (mirrors `check::ErrorBudget`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBudget {
    /// Allowed distance in units in the last place.
    pub ulp: u64,
    /// Allowed absolute difference.
    pub abs: f64,
}

/// What a backend promises about its arithmetic (mirrors the fields of
/// `check::Numerics` that the runner reads).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Numerics {
    /// Approximate functions: (op, result type, budget).
    pub approximations: Vec<(Opcode, ElementType, ErrorBudget)>,
    /// Intermediates inside fusions may be kept wider than declared.
    pub excess_precision_in_fusions: bool,
    /// Float reductions may be computed in any order.
    pub reassociates_reductions: bool,
}

impl Numerics {
    /// Promises nothing approximate.
    pub fn exact() -> Numerics {
        Numerics::default()
    }
    /// The budget of `op` at result type `dtype`, or None when it is exact.
    pub fn budget(&self, op: Opcode, dtype: ElementType) -> Option<ErrorBudget> {
        self.approximations
            .iter()
            .find(|a| a.0 == op && a.1 == dtype)
            .map(|a| a.2)
    }
}

/// A compiler under test (DESIGN.md contract).
pub trait Backend: Send + Sync {
    /// Stable short name used in case names and filters.
    fn name(&self) -> &str;
    /// The numerics this backend promises.
    fn numerics(&self) -> Numerics {
        Numerics::exact()
    }
    /// Compile once.
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError>;
}

/// A compiled module (DESIGN.md contract).
pub trait Executable: Send + Sync {
    /// Run; returns the entry computation's outputs, tuples flattened.
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError>;
}

/// True for errors that make a case a skip rather than a failure.
pub fn is_skip(e: &BackendError) -> bool {
    matches!(
        e,
        BackendError::Unsupported { .. } | BackendError::Unavailable { .. }
    )
}

/// A backend that exists but cannot run anything, and says why.
///
/// ```
/// use xla_props::property::{Backend, Unavailable};
/// let b = Unavailable::new("my-compiler", "not installed here");
/// assert_eq!(b.name(), "my-compiler");
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
        Err(BackendError::Unavailable {
            backend: self.name.clone(),
            reason: self.why.clone(),
        })
    }
}

/// The exact reference evaluator as a backend named `reference`: the oracle of
/// every comparison, and a backend under test of its own (determinism).
///
/// ```
/// use xla_props::property::{build_case, run_module, CaseKey, ReferenceBackend};
/// use xla_props::literal::Literal;
/// use xla_props::hlo::{ArrayShape, ElementType};
/// let key: CaseKey = "vs_reference::negate::f32::f32[7]{0}::uniform".parse().unwrap();
/// let module = build_case(&key).unwrap().module;
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![7]), &[1.0; 7]).unwrap();
/// let out = run_module(&ReferenceBackend, &module, &[x]).unwrap();
/// assert_eq!(out[0].to_f64_vec(), vec![-1.0; 7]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceBackend;

struct ReferenceExecutable(Module);

impl Backend for ReferenceBackend {
    fn name(&self) -> &str {
        "reference"
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        Ok(Box::new(ReferenceExecutable(module.clone())))
    }
}

impl Executable for ReferenceExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        evaluate_reference(&self.0, args)
    }
}

/// Evaluates with the reference, with backend errors (no compiled copy of the module).
pub(crate) fn evaluate_reference(
    module: &Module,
    args: &[Literal],
) -> Result<Vec<Literal>, BackendError> {
    evaluate(module, args).map_err(|e| match e {
        EvalError::Unsupported { .. } => BackendError::unsupported(e.to_string()),
        EvalError::BadArguments(m) => BackendError::BadArguments(m),
        other => BackendError::Execute(other.to_string()),
    })
}

/// Every backend of the built-in registry that is available in this build
/// (none until `backend::registry` lands).
pub fn registry_backends() -> Vec<Box<dyn Backend>> {
    Vec::new()
}

/// Runs a module on a backend: compile, then execute once.
pub fn run_module(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Result<Vec<Literal>, BackendError> {
    backend.compile(module)?.execute(args)
}
