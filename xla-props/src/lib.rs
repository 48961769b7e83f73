//! xla-props: property tests for XLA-like tensor compilers.
//!
//! See the repository's DESIGN notes: an exact reference evaluator, a
//! tolerance model that knows legal hardware differences, and isolation of a
//! disagreement down to one fusion and one instruction.

#![warn(missing_docs)]

pub mod backend;
pub mod check;
pub mod cli;
pub mod hlo;
pub mod literal;
