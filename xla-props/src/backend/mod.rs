//! Backends: compilers under test behind a two-level trait (compile once,
//! execute many), the registry of built-in backends, the interpreter, and
//! XLA through a PJRT plugin (`xla`), IREE through its tools (`iree`).

mod api;
mod error;
pub mod interpreter;
pub mod iree;
pub mod mutant;
mod reference_backend;
mod registry;
mod run;
mod unavailable;
pub mod xla;

pub use api::{
    builtin_version, Backend, BackendTraits, BatchRequest, Executable, FusionProbe, ProbedValue,
};
pub use api::{PassControl, PassStep};
pub use error::BackendError;
pub use interpreter::Interpreter;
pub(crate) use reference_backend::to_backend_error as reference_error;
pub use reference_backend::ReferenceBackend;
pub use registry::{
    available_backends, config_error, create, known_backends, Availability, KnownBackend,
};
pub(crate) use run::panic_text;
pub use run::{guarded, run_module, run_reference};
pub use unavailable::Unavailable;
pub use xla::{XlaBackend, XlaPlugin};
