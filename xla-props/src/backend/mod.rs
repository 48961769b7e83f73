//! Backends: compilers under test behind a two-level trait (compile once,
//! execute many), the registry of built-in backends, and the interpreter.

mod api;
mod error;
pub mod interpreter;
pub mod mutant;
mod registry;

pub use api::{Backend, Executable, FusionProbe, ProbedValue};
pub use error::BackendError;
pub use interpreter::Interpreter;
pub use registry::{create, known_backends, Availability, BackendInfo};
