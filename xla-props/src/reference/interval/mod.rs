//! Interval evaluation: an enclosure of every value a backend may legally
//! compute for each instruction, carried through the whole graph.
//!
//! Each array element is a closed range `[lo, hi]` of values of its type
//! (ordered with `-0 < +0`) plus a flag that says NaN is possible. An
//! instruction's range is computed from its operands' ranges with the
//! reference's own kernels, evaluated at the corners of the operand box:
//! every kernel rounds once to nearest even, which is monotone, so for an op
//! that is monotone in each operand (or bilinear) the rounded results at the
//! corners bound the rounded results inside. Ops that are not (sine near an
//! extremum, a divisor range holding zero, a pole of tan) are widened by
//! their own rule or made unbounded; ops with no rule are exact on exact
//! operands and unbounded otherwise. So the enclosure is sound, and tight:
//! an exact op on exact operands encloses just its correctly rounded result.
//!
//! The backend's declared numerics come in as [`Allowances`]: every op with
//! a declared ULP budget widens by it, a flushed type's subnormal range
//! includes zero on input and output, and a reassociated reduction (reduce,
//! reduce-window, dot, convolution) widens by `n * eps * sum|x|`.

mod bounds;
mod eval;
mod families;

pub(crate) use bounds::widen_abs;
pub use bounds::{Allowances, Bounds, Enclosure};
pub use eval::enclose;

#[cfg(test)]
mod tests;
