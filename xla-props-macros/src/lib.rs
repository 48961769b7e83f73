//! Procedural macros for xla-props. The `#[xla_property]` attribute arrives
//! with the runner.
