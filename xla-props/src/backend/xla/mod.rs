//! The XLA backend: XLA through a PJRT C API plugin, in a worker process.
//!
//! - [`lower`]: our HLO IR to StableHLO MLIR text (runs in the test process).
//! - [`pjrt`]: the PJRT C API by hand-written `#[repr(C)]` structs (worker side).
//! - [`protocol`] and [`worker`]: the framed pipe protocol and the worker loop.
//! - `XlaBackend`: compile cache, worker restarts, typed errors.

mod backend;
pub mod batch;
pub mod config;
mod error;
mod host;
pub mod known_bugs;
mod learn;
pub mod lower;
pub(crate) mod many;
mod multi;
pub mod numerics;
pub mod passes;
pub mod pjrt;
mod plugin;
mod process;
pub mod protocol;
mod rows;
mod version;
pub mod worker;

pub use backend::{to_backend_error, CacheStats, XlaBackend, XlaExecutable};
pub use config::{BackendSource, ConfigError, DeclaredBackend};
pub use error::XlaError;
pub use plugin::XlaPlugin;
pub use process::{current_exe_serves_worker, find_worker_program};
