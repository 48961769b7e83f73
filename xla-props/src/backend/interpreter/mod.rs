//! The `interpreter` backend: an independent, straightforward evaluation of
//! HLO the way a simple CPU compiler computes it.
//!
//! - f16, bf16 and f8 elementwise ops widen to f32, compute with Rust's f32
//!   functions, and round back to the narrow type after every op;
//! - f32 uses Rust's f32 math (erf is our own f32 rational approximation),
//!   f64 uses f64;
//! - reduce and dot accumulate in f32 for f16, bf16 and f32 (f64 for f64),
//!   sequentially; generic reducers run element by element;
//! - a fusion runs as one unit, each intermediate kept in its declared type.
//! - triangular-solve substitutes row by row, accumulating like dot and
//!   rounding each solved element to its type; rng-bit-generator computes
//!   XLA's ThreeFry and Philox bits (its own code, not the reference's).
//!
//! It shares the IR and `Literal` with the rest of the crate, and none of the
//! reference evaluator's kernels.

mod backend;
mod complex;
#[cfg(test)]
mod complex_tests;
mod contraction;
mod devices;
mod dispatch;
mod elem;
mod elementwise;
mod engine;
mod indexing;
mod linalg;
mod math;
mod numerics;
mod reduce;
mod rng;
mod shape_ops;
#[cfg(test)]
pub(crate) mod tests;

pub use backend::{Interpreter, DEFAULT_WHILE_LIMIT};
pub(crate) use elem::nth;
pub use numerics::interpreter_numerics;
