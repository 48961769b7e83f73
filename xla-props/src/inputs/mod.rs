//! Legal inputs.
