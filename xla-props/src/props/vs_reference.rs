//! `vs_reference`: every op the catalogue builds, with every dtype it accepts,
//! on every backend, agrees with the exact reference.

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The case's single-op module runs on the backend and matches the reference
/// (within the tolerance, or as the backend's declared numerics allow).
#[xla_property(
    ops = all,
    dtypes = all,
    shapes = default,
    distributions = default,
    tolerance = ulp(1)
)]
pub fn vs_reference(ctx: &mut CaseContext<'_>) -> Outcome {
    super::declared::compare_declared(ctx)
}
