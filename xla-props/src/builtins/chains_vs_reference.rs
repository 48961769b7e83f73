//! `chains_vs_reference`: an elementwise op followed by another op (the
//! `fusion_invariance` chains, unfused) agrees with the exact reference, e.g.
//! `chains_vs_reference::sqrt::f32::f32[7]{0}::uniform.then-divide-by-it::xla-cpu`
//! (`y / sqrt(b)`). `fusion_invariance` compares a chain with itself, fused
//! and unfused, on one backend, so a rewrite that fires either way (XLA's
//! algebraic simplifier turns `a / sqrt(b)` into `a * rsqrt(b)` and
//! `(a / b) / c` into `a / (b * c)`) passes it; single-op cases never give
//! an op another op's result. Floats only, the small shapes, uniform inputs:
//! the rewrites are about rounding, not edge values, and the suite keeps
//! within its case budget.

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The unfused chain runs on the backend and matches the reference.
#[xla_property(
    ops = elementwise,
    dtypes = [f16, bf16, f32, f64],
    shapes = small,
    distributions = [uniform],
    layouts = default,
    template = elementwise_chain,
    tolerance = exact
)]
pub fn chains_vs_reference(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}
