//! `configurations`: every attribute class of every op
//! (`crate::hlo::ATTRIBUTE_CLASSES`: dimension numbers, permutations,
//! paddings, strides, groups, comparison types, index types, structures...),
//! on every dtype the op accepts, agrees with the exact reference. Each class
//! is one case per dtype and distribution; the layout of the main operand
//! rotates with the class and dtype, e.g.
//! `configurations::dot::f32::f32[3,2,4]{2,1,0}::uniform.batch-middle::interpreter`.

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The class's module runs on the backend and matches the reference.
#[xla_property(
    ops = all,
    dtypes = all,
    shapes = configurations,
    distributions = default,
    tolerance = exact
)]
pub fn configurations(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}
