//! The XLA backend: XLA through a PJRT C API plugin, in a worker process.
//!
//! - [`pjrt`]: the PJRT C API by hand-written `#[repr(C)]` structs (worker side).
//! - [`lower`]: our HLO IR to StableHLO MLIR text.
//! - [`protocol`] and [`worker`]: the framed pipe protocol and the worker loop.

pub mod pjrt;
pub mod protocol;
pub mod worker;
