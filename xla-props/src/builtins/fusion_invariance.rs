//! `fusion_invariance`: an elementwise chain computes the same inside one
//! `kLoop` fusion as unfused (e.g. a fusion must not elide the f16 round trip
//! of a quantization residual).

use crate::property::{build_fused_chain, CaseContext, Outcome};
use xla_props_macros::xla_property;

/// Fused vs unfused chain, same backend, bit-exact.
#[xla_property(
    ops = elementwise,
    dtypes = all,
    shapes = default,
    distributions = [uniform, special],
    layouts = default,
    template = elementwise_chain,
    tolerance = exact
)]
pub fn fusion_invariance(ctx: &mut CaseContext<'_>) -> Outcome {
    let fused = match build_fused_chain(&ctx.case.key) {
        Ok(b) => b.module,
        Err(e) => return Outcome::fail(e.to_string()),
    };
    let (unfused, inputs) = match ctx.prepared() {
        Ok(p) => p,
        Err(o) => return o,
    };
    let expected = match ctx.run_on(ctx.backend, &unfused.module, &inputs) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let actual = match ctx.run_on(ctx.backend, &fused, &inputs) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let verdict = ctx.check(&expected, &actual);
    // a backend that declares excess precision inside fusions may compute the
    // fused chain as the explicitly widened program does (explicit converts still round)
    if !verdict.is_agreement() && ctx.backend.numerics().excess_precision_in_fusions {
        if let Some(wide) = crate::backend::mutant::widen_fused_arithmetic(&fused) {
            if let Ok(widened) = ctx.run_on(ctx.backend, &wide, &inputs) {
                if ctx.check(&widened, &actual).is_agreement() {
                    return Outcome::Pass;
                }
            }
        }
    }
    Outcome::from_verdict("fused vs unfused", verdict)
}
