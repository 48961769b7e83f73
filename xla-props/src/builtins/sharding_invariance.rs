//! `sharding_invariance`: a program annotated with shardings means what it
//! means on one device; a backend that partitions it over several devices
//! must agree with the one-device reference.

use super::template_properties::against_reference;
use crate::inputs::{generate_inputs, Distribution};
use crate::programs::{annotate, split_sharded_case};
use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// Every program template and a sample of single ops covering the SPMD
/// partitioner's handler families, annotated under every sharding scheme
/// (`programs::SHARDING_SCHEMES`: data-, tensor- and 2-D-mesh-parallel over
/// 2, 4 and 8 devices, a transposed device order, partial replication; the
/// case shapes tile unevenly, so shards are padded), agree with the one-
/// device reference on global arrays, judged by the full tolerance model.
/// A backend with fewer devices than the scheme spans skips, with the reason.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16, f8e4m3fn, f8e5m2],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn sharding_invariance(ctx: &mut CaseContext<'_>) -> Outcome {
    let run = || -> Result<Outcome, Outcome> {
        let key = ctx.case.key;
        let param = key
            .param()
            .ok_or_else(|| Outcome::fail("a sharded case needs a `template.scheme` parameter"))?;
        let (template, scheme) = split_sharded_case(param)
            .ok_or_else(|| Outcome::fail(format!("unknown sharded case `{param}`")))?;
        let plain = template
            .build(key.dtype, key.dims(), "unfused")
            .map_err(|e| Outcome::fail(e.to_string()))?;
        let module = annotate(&plain, scheme);
        let args = generate_inputs(&plain, Distribution::Uniform, ctx.seed())
            .map(|g| g.args)
            .map_err(|e| Outcome::fail(format!("failed to generate inputs: {e}")))?;
        let expected = ctx.run_on(ctx.reference, &plain, &args)?;
        let actual = ctx.run_on(ctx.backend, &module, &args)?;
        let what = format!(
            "sharded over {} devices ({}) vs one-device reference",
            scheme.devices, scheme.about
        );
        Ok(against_reference(
            ctx, &what, &plain, &args, expected, actual,
        ))
    };
    run().unwrap_or_else(|o| o)
}
