//! `operand_forms`: every op with operands, each operand slot in each of
//! the forms real programs give it (a parameter, a constant array, a
//! broadcast scalar constant or parameter, an iota, a reshape, transpose or
//! slice of a parameter, a get-tuple-element; all slots constant, where
//! constant folding fires), unfused and inside one `kLoop` fusion, agrees
//! with the exact reference. The forms are sampled as a covering array
//! (every dtype meets every form in every slot, every op every pair of
//! forms on every pair of slots), e.g.
//! `operand_forms::atan2::f64::f64[8,8]{1,0}::uniform.param+bcast-one::interpreter`.
//! Single-op cases give an op parameters only; `jnp.arctan` lowers to
//! `atan2(x, broadcast(1))`, which XLA CPU miscompiled (docs/findings.md).

use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The op, its operands in the row's forms, matches the reference.
#[xla_property(
    ops = all,
    dtypes = all,
    shapes = operand_forms,
    distributions = default,
    tolerance = exact
)]
pub fn operand_forms(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}
