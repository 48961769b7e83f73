//! First-order error bounds: for every array element the reference's own
//! value and a radius that holds every value a backend within its declared
//! numerics can compute there, carried through the whole graph in f64.
//!
//! The interval evaluation (`interval/`) keeps each element's range in the
//! element's own type and rounds it outward at every step; over thousands
//! of instructions (a train step: forward pass, gradients, optimizer
//! update) the ranges of dependent operands grow until they say nothing.
//! Here each value is a midpoint (the reference's value) and a radius
//! (an absolute error bound, in f64), propagated with the magnitude of
//! the op's derivative at the reference's own values:
//!
//! - linear ops carry the radii linearly (`r(x ± y) = r(x) + r(y)`, data
//!   movement moves them, `max`/`min` take the larger);
//! - products and contractions carry `|a| r(b) + r(a) |b| + r(a) r(b)`,
//!   where the last term is the second-order guard that keeps the bound
//!   sound where the linearization is not;
//! - a monotone function's radius is its image of the operand's interval
//!   (`f(x ± r)`, evaluated in f64), which is the first-order term
//!   `|f'(x)| r` plus its own exact second-order remainder; periodic
//!   functions use their Lipschitz constant, `divide` and `atan2` the
//!   exact bound of their quotient;
//! - sums and contractions of `n` terms add the classical bound
//!   `gamma_n * sum |x_i|` (`gamma_n = n u / (1 - n u)`) for any order of
//!   summation, products `gamma_n * prod |x_i|`, with `n` counted per output
//!   element by the same op on ones;
//! - every rounding op adds its own rounding (one ULP of the result's type,
//!   which also holds an unrounded value kept in excess precision or a
//!   multiply contracted into an fma), its declared approximation budget,
//!   and flushed subnormals;
//! - a predicate that may flip (a compare whose operands' intervals
//!   overlap) makes a `select` take both branches' distance and a
//!   conditional every branch it may pick; loops are iterated to their trip
//!   count on the reference's values, and where their exit may move every
//!   state they may stop at is covered (`loops`).
//!
//! Every rule bounds the exact image of its operands' intervals (up to f64
//! evaluation, covered by a relative slack), so the bound is sound; it is
//! tight because it is centred on the reference's values and never
//! rounded to a narrow type in between.

mod devices;
mod dual;
mod eval;
mod families;
mod loops;
mod moving;
mod rules;
mod selection;
mod witness;

pub(crate) use eval::debug_enabled;
pub use eval::{first_order_bounds, FirstOrder};
pub(crate) use witness::widen_hull;
pub use witness::witness_bounds;
