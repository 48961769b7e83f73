//! The exact reference evaluator.
//!
//! Every instruction computes its exact result (or an f64 result where f64
//! is exact enough) and rounds ONCE to its output dtype, to nearest even.
//! The state is a value per instruction; semantics are one `match` on the
//! opcode (in `eval.rs`) calling small typed kernels split by op family.

mod contraction;
mod control;
mod conversion;
mod data;
mod elementwise;
mod eval;
mod indexing;
mod math;
mod reduction;
mod shape_ops;

pub use eval::{evaluate, evaluate_values, EvalError, Evaluator, FusionValues, DEFAULT_FUEL};
pub(crate) use eval::{OpError, Run};

#[cfg(test)]
mod tests;
