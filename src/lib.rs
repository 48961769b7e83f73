//! The xla-props conformance suite lives in `tests/`; this crate only owns it.
