//! The IREE backend (`iree-cpu`): IREE's llvm-cpu target through its own
//! command-line tools, one process per compile and per run.
//!
//! - [`tools`]: finding the pinned tools and running them with a timeout.
//! - [`numerics`]: what IREE was measured to compute (docs/numerics.md).
//! - [`canonical`]: valid HLO that IREE rejects, rewritten before lowering.
//! - [`packing`]: entry parameters packed per element type, for dispatches
//!   the runtime refuses (too many bindings).
//! - `IreeBackend`: lowering (the XLA backend's StableHLO printer),
//!   compiling with `iree-compile`, running with `iree-run-module`, and
//!   batching through the XLA backend's batcher (`xla::many`).

mod backend;
pub mod canonical;
mod error;
pub mod known_bugs;
pub mod numerics;
pub mod packing;
pub mod tools;

pub use backend::{IreeBackend, IreeExecutable};
pub use error::IreeError;
pub use tools::IreeTools;
