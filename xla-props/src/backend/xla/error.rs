//! Typed failures of the XLA backend.

/// Why the XLA backend could not compile or run a case.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum XlaError {
    /// The plugin or the worker binary is missing, or the plugin failed to load.
    #[error("xla backend unavailable: {0}")]
    Unavailable(String),
    /// The module uses something the StableHLO lowering cannot express.
    #[error("{0}")]
    Lowering(#[from] super::lower::LowerError),
    /// XLA rejected the program (the plugin's message).
    #[error("xla compile failed: {0}")]
    Compile(String),
    /// XLA failed to run the program (the plugin's message).
    #[error("xla execute failed: {0}")]
    Execute(String),
    /// Arguments that do not match the entry signature.
    #[error("{0}")]
    Signature(String),
    /// XLA returned outputs that do not match the entry's result shapes.
    #[error("xla output mismatch: {0}")]
    Output(String),
    /// The worker process died (abort, segfault); it is restarted on the next call.
    #[error("xla worker crashed while {during}: {status}; stderr: {stderr}")]
    Crashed {
        /// What the worker was doing.
        during: &'static str,
        /// How it ended.
        status: String,
        /// The tail of its stderr (XLA's check-failure message, typically).
        stderr: String,
    },
    /// The worker did not answer in time; it was killed and is restarted on the next call.
    #[error("xla worker timed out after {seconds}s while {during}")]
    Timeout {
        /// What the worker was doing.
        during: &'static str,
        /// The timeout.
        seconds: f64,
    },
    /// The worker sent something unexpected.
    #[error("xla worker protocol error: {0}")]
    Protocol(String),
}
