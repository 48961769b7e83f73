//! xla-props: property tests for XLA-like tensor compilers.
//!
//! See the repository's DESIGN notes: an exact reference evaluator, a
//! tolerance model that knows legal hardware differences, and isolation of a
//! disagreement down to one fusion and one instruction.

#![warn(missing_docs)]

// The `#[xla_property]` expansion names `::xla_props`, also inside this crate.
extern crate self as xla_props;

pub mod backend;
mod builtins;
pub mod check;
pub mod cli;
pub mod detection;
pub mod filetest;
pub mod fuzz;
pub mod hlo;
pub mod inputs;
pub mod isolate;
pub mod literal;
pub mod programs;
pub mod property;
pub mod reference;
pub mod report;
pub mod runner;
pub mod skip;
pub mod triage;

pub use runner::Harness;
pub use xla_props_macros::xla_property;

#[doc(hidden)]
pub use inventory;
