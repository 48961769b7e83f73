//! `vs_reference`: every op the catalogue builds, with every dtype it accepts,
//! on every backend, agrees with the exact reference.

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The case's single-op module runs on the backend and matches the reference.
///
/// Judged with the full tolerance model (`CaseContext::compare_with_reference`):
/// every difference the backend may show is declared in its `Numerics`.
#[xla_property(
    ops = all,
    dtypes = all,
    shapes = default,
    distributions = default,
    tolerance = exact
)]
pub fn vs_reference(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}
