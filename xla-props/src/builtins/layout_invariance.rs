//! `layout_invariance`: an op on operands with a permuted physical layout gives
//! the same logical result as on the default layout, on the same backend.

use crate::property::{build_case, CaseContext, CaseKey, Outcome};
use xla_props_macros::xla_property;

/// Permuted layout vs default layout, same backend, bit-exact.
#[xla_property(
    ops = all,
    dtypes = all,
    shapes = default,
    distributions = [uniform, special],
    layouts = permuted,
    tolerance = exact
)]
pub fn layout_invariance(ctx: &mut CaseContext<'_>) -> Outcome {
    let default_key = CaseKey {
        layout: 0,
        ..ctx.case.key
    };
    let twin = match build_case(&default_key) {
        Ok(b) => b,
        Err(e) => return Outcome::fail(e.to_string()),
    };
    let (permuted, inputs) = match ctx.prepared() {
        Ok(p) => p,
        Err(o) => return o,
    };
    // the same logical values, with the default layout's metadata
    let default_inputs: Vec<_> = inputs
        .iter()
        .zip(twin.module.parameter_shapes())
        .map(|(l, s)| {
            l.clone()
                .with_layout(s.as_array().and_then(|a| a.layout.clone()))
        })
        .collect();
    let expected = match ctx.run_on(ctx.backend, &twin.module, &default_inputs) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let actual = match ctx.run_on(ctx.backend, &permuted.module, &inputs) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let verdict = ctx.check(&expected, &actual);
    Outcome::from_verdict("permuted layout vs default layout", verdict)
}
