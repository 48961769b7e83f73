//! Typed failures of the IREE backend.

use crate::hlo::stablehlo::LowerError;

/// Why the IREE backend could not compile or run a case.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IreeError {
    /// The tools are missing (run `scripts/fetch-iree.sh`).
    #[error("iree backend unavailable: {0}")]
    Unavailable(String),
    /// The module uses something the StableHLO lowering cannot express.
    #[error("{0}")]
    Lowering(#[from] LowerError),
    /// Something IREE is declared not to support (`numerics::UNSUPPORTED`).
    #[error("{0}")]
    Unsupported(String),
    /// `iree-compile` rejected the program (its diagnostics).
    #[error("iree-compile failed: {0}")]
    Compile(String),
    /// `iree-run-module` failed (its message).
    #[error("iree-run-module failed: {0}")]
    Execute(String),
    /// A tool died on a signal (a crash inside IREE).
    #[error("{tool} crashed: {status}; stderr: {stderr}")]
    Crashed {
        /// Which tool.
        tool: &'static str,
        /// How it ended.
        status: String,
        /// The tail of its stderr.
        stderr: String,
    },
    /// A tool did not finish in time and was killed.
    #[error("{tool} timed out after {seconds}s")]
    Timeout {
        /// Which tool.
        tool: &'static str,
        /// The timeout.
        seconds: f64,
    },
    /// Arguments that do not match the entry signature.
    #[error("{0}")]
    Signature(String),
    /// Outputs that do not match the entry's result shapes.
    #[error("iree output mismatch: {0}")]
    Output(String),
    /// A temporary file could not be written or read.
    #[error("iree backend i/o: {0}")]
    Io(String),
}
