//! What generating inputs can fail with.

use crate::literal::LiteralError;

/// Why no legal inputs could be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    /// A parameter that is not an array (a tuple or token).
    #[error("parameter {index} has shape {shape}; only array parameters can be generated")]
    UnsupportedParameter {
        /// Parameter number.
        index: usize,
        /// Its shape.
        shape: String,
    },
    /// The module's graph is malformed.
    #[error("cannot analyse the module: {0}")]
    Graph(String),
    /// The requirements contradict each other.
    #[error("no input satisfies every requirement: {0}")]
    Infeasible(String),
    /// Rejection sampling gave up.
    #[error("no legal inputs after {rounds} rounds of resampling: {requirement} still fails")]
    NoLegalInputs {
        /// The requirement that kept failing.
        requirement: String,
        /// Rounds tried.
        rounds: usize,
    },
    /// A literal could not be built.
    #[error(transparent)]
    Literal(#[from] LiteralError),
}
