//! The exact reference evaluator.
//!
//! Every instruction computes its exact result (or an f64 result where f64
//! is exact enough) and rounds ONCE to its output dtype, to nearest even.
//! The state is a value per instruction ([`Evaluator::evaluate_all`] returns
//! it); the semantics are one `match` on the opcode (in `eval.rs`) calling
//! small typed kernels split by op family.
//!
//! Choices worth knowing (each follows XLA's semantics where XLA defines one):
//!
//! - Floats: `+ - * / sqrt` and conversions are correctly rounded for every
//!   type up to f32 (computed in f64, rounded once; no f32 step for f16, bf16
//!   or f8). Transcendentals use the platform libm in f64 (erf and logistic
//!   are computed here without cancellation) and round once: every f16 word
//!   of the 13 unary ops in `../shared/oracle/f16` is reproduced exactly. For
//!   f64 operands the results are libm's.
//! - Integers wrap. `x / 0 = -1` (all bits set), `x % 0 = x`,
//!   `INT_MIN / -1 = INT_MIN`, `INT_MIN % -1 = 0`; shifts by the width or
//!   more give 0 (or the sign fill for arithmetic right shifts); a negative
//!   integer power gives 1 for a base of 1 and 0 otherwise.
//! - Reductions: a plain float `add` reducer is summed exactly (order does not
//!   matter) and rounded once; a plain float `multiply` is a row-major f64
//!   product rounded once; `max`/`min`/logical reducers are order-independent;
//!   any other reducer is a left fold from the init value in row-major order
//!   of the reduced elements. Reduce-window folds each window in row-major
//!   window order the same way, skipping padding.
//! - dot and convolution: exact i128 accumulation for integers; compensated
//!   f64 accumulation (error-free products) for floats, rounded once.
//! - sort is always stable (valid for `is_stable=false` too). Scatter applies
//!   updates in row-major update order, one at a time, and drops an update
//!   whose window does not fit; gather and dynamic slices clamp their starts.
//! - while loops share a fuel budget of iterations ([`DEFAULT_FUEL`]); a loop
//!   that never ends is [`EvalError::FuelExhausted`], not a hang.
//! - Parse-only ops and complex types are [`EvalError::Unsupported`]; a
//!   malformed module is [`EvalError::Invalid`] (never a panic).

mod calls;
mod channels;
pub mod collective;
mod complex;
mod complex_boxed;
pub(crate) mod complex_math;
pub(crate) mod contraction;
mod control;
mod conversion;
pub(crate) mod data;
mod devices;
mod elementwise;
mod error;
mod eval;
mod exact_sum;
mod fft;
mod first_order;
mod indexing;
mod interval;
mod linalg;
pub(crate) mod math;
pub mod parallel;
pub(crate) mod reduction;
pub mod rendezvous;
mod rng;
mod scalar;
mod shape_ops;
mod sort;
pub mod spmd;
mod supported;
mod topk;
mod walk;

pub(crate) use calls::Calls;
pub(crate) use control::branch_index;
pub use error::EvalError;
pub(crate) use error::OpError;
pub(crate) use eval::Run;
pub use eval::{evaluate, evaluate_global, evaluate_values, Evaluator, FusionValues, DEFAULT_FUEL};
pub(crate) use first_order::{debug_enabled, widen_hull};
pub use first_order::{first_order_bounds, witness_bounds, FirstOrder};
pub(crate) use indexing::scatter_targets;
pub use interval::{enclose, Allowances, Bounds, Enclosure};
pub(crate) use sort::merge_sort;
pub use supported::{evaluates, evaluates_instruction};
pub(crate) use walk::from_leaves;

#[cfg(test)]
mod tests;
