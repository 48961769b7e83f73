//! What a PJRT call or a plugin load can fail with.

/// An error from loading a plugin or from a PJRT call, with the plugin's message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PjrtError {
    /// The shared library could not be loaded or lacks `GetPjrtApi`.
    #[error("failed to load pjrt plugin {path}: {message}")]
    Load {
        /// The plugin path.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The plugin speaks another API major version or its function table is too short.
    #[error("incompatible pjrt plugin: {0}")]
    Incompatible(String),
    /// A PJRT call returned an error.
    #[error("{call} failed (code {code}): {message}")]
    Call {
        /// The PJRT function.
        call: &'static str,
        /// The PJRT (absl) error code.
        code: i32,
        /// The plugin's message.
        message: String,
    },
    /// Data that does not fit the call (unsupported dtype, wrong byte count).
    #[error("{0}")]
    Data(String),
}
