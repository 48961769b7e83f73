//! `exhaustive`: every unary float op of the opcode table, on every bit
//! pattern of f16, bf16, f8e4m3fn and f8e5m2 (NaNs, infinities, subnormals
//! and the inputs outside the op's legal domain included), one case per
//! (op, dtype), e.g. `exhaustive::log::f16::f16[65536]{0}::exhaustive::interpreter`.
//!
//! Judged against the reference with the backend's declared `Numerics`
//! (approximate-function budgets, flush-to-zero) and the default error specs
//! per (op, dtype). Outside the legal domain the reference defines the
//! result (log of a negative number is NaN, rsqrt of 0 is inf), and NaN is
//! compared by class and infinities exactly: a backend that legally differs
//! there must say so in its `Numerics` (e.g. flushed subnormal inputs, which
//! make `log` of a subnormal `-inf`).

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The op on all `2^bits` inputs of the type agrees with the reference.
#[xla_property(
    ops = elementwise_unary,
    dtypes = [f16, bf16, f8e4m3fn, f8e5m2],
    shapes = exhaustive,
    distributions = [exhaustive],
    layouts = default,
    tolerance = exact
)]
pub fn exhaustive(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}
