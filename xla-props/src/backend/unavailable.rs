//! A backend that exists but cannot run anything, and says why (a backend
//! not compiled in or not installed still exists, DESIGN.md).

use super::api::{Backend, BackendTraits, Executable};
use super::error::BackendError;
use crate::hlo::Module;

/// A backend that exists but cannot run anything, and says why.
///
/// ```
/// use xla_props::backend::{Backend, Unavailable};
/// let b = Unavailable::new("my-compiler", "not installed here");
/// assert_eq!(b.name(), "my-compiler");
/// ```
#[derive(Clone, Debug)]
pub struct Unavailable {
    name: String,
    why: String,
    traits: BackendTraits,
}

impl Unavailable {
    /// A backend named `name` that is unavailable because `why`.
    pub fn new(name: impl Into<String>, why: impl Into<String>) -> Unavailable {
        Unavailable {
            name: name.into(),
            why: why.into(),
            traits: BackendTraits::NONE,
        }
    }
    /// The same, with the traits the backend would have (so that its cases
    /// are selected as they would be where it is available).
    pub fn with_traits(mut self, traits: BackendTraits) -> Unavailable {
        self.traits = traits;
        self
    }
}

impl Backend for Unavailable {
    fn name(&self) -> &str {
        &self.name
    }
    fn traits(&self) -> BackendTraits {
        self.traits
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
