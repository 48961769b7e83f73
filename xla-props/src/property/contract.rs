//! The backend contract of DESIGN.md (`crate::backend`), and two backends the
//! runner needs itself: the reference evaluator as a backend, and a backend
//! that exists but says why it cannot run.

pub use crate::backend::{Backend, BackendError, Executable};
pub use crate::check::Numerics;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::reference::evaluate;

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
    fn version(&self) -> Option<String> {
        Some(format!("unavailable: {}", self.why))
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
    fn version(&self) -> Option<String> {
        Some(crate::backend::builtin_version())
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
    evaluate(module, args).map_err(crate::backend::reference_error)
}

/// Every backend of the built-in registry that is available in this build.
pub fn registry_backends() -> Vec<Box<dyn Backend>> {
    crate::backend::known_backends()
        .into_iter()
        .filter(|info| info.availability == crate::backend::Availability::Available)
        .filter_map(|info| crate::backend::create(info.name).ok())
        .collect()
}

/// Runs a module on a backend: compile, then execute once.
pub fn run_module(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
) -> Result<Vec<Literal>, BackendError> {
    backend.compile(module)?.execute(args)
}
