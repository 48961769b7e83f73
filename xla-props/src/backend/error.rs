//! Errors a backend reports.

/// Why a backend could not compile or run a module.
///
/// `Unsupported` is not a failure: it makes a test case a skip.
///
/// ```
/// use xla_props::backend::BackendError;
/// let e = BackendError::Unsupported { what: "opcode `fft`".into() };
/// assert_eq!(e.to_string(), "unsupported: opcode `fft`");
/// assert!(e.is_unsupported());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend cannot express this module (an op, dtype or attribute it lacks).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is missing, e.g. "opcode `fft`".
        what: String,
    },
    /// The backend exists but cannot be used in this build or on this machine.
    #[error("backend `{backend}` is unavailable: {reason}")]
    Unavailable {
        /// The backend's name.
        backend: String,
        /// Why (not compiled in, plugin missing, ...).
        reason: String,
    },
    /// No backend of this name is known.
    #[error("unknown backend `{name}`; known backends: {}", known.join(", "))]
    UnknownBackend {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: Vec<String>,
    },
    /// Compilation failed (a malformed or inconsistent module).
    #[error("compile error: {0}")]
    Compile(String),
    /// Execution failed (e.g. a while loop over its iteration limit).
    #[error("execution error: {0}")]
    Execute(String),
    /// The arguments do not match the entry computation's parameters; the message names the parameter.
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// The backend panicked while compiling or running (caught by
    /// `backend::run_module`: a failure of that run, not of the caller).
    #[error("{backend} panicked")]
    Panicked {
        /// The backend's name.
        backend: String,
        /// The panic's message.
        message: String,
    },
}

impl BackendError {
    /// True for [`BackendError::Unsupported`] (a skip, not a failure).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, BackendError::Unsupported { .. })
    }
    /// True for errors that make a case a skip rather than a failure: the
    /// backend lacks the op or dtype, or cannot run here at all.
    pub fn is_skip(&self) -> bool {
        matches!(
            self,
            BackendError::Unsupported { .. } | BackendError::Unavailable { .. }
        )
    }
    /// An `Unsupported` error.
    pub fn unsupported(what: impl Into<String>) -> BackendError {
        BackendError::Unsupported { what: what.into() }
    }
}
