//! The IREE backend (`iree-cpu`): IREE's llvm-cpu target, compiled by
//! IREE's compiler library in a worker process (or one `iree-compile`
//! process per compile) and run by `iree-run-module`, one process per run.
//!
//! - [`tools`]: finding the pinned tools and running them with a timeout.
//! - `embed`: the compiler's C embedding API (`libIREECompiler.so`).
//! - [`compile_worker`]: the worker process that holds a compiler session,
//!   and the pool of them the backend compiles with.
//! - [`numerics`]: what IREE was measured to compute (docs/numerics.md).
//! - [`canonical`]: valid HLO that IREE rejects, rewritten before lowering.
//! - `kept`: compile results kept by StableHLO text, so that a module
//!   compiles at most once in a run.
//! - [`packing`]: entry parameters packed per element type, for dispatches
//!   the runtime refuses (too many bindings).
//! - `IreeBackend`: lowering (the XLA backend's StableHLO printer),
//!   compiling (in a compile worker or with `iree-compile`), running with
//!   `iree-run-module`, and
//!   batching through the XLA backend's batcher (`xla::many`).

mod backend;
pub mod canonical;
pub mod compile_worker;
mod embed;
mod error;
mod kept;
pub mod known_bugs;
pub mod numerics;
pub mod packing;
pub mod tools;

pub use backend::{IreeBackend, IreeExecutable};
pub use error::IreeError;
pub use tools::IreeTools;
