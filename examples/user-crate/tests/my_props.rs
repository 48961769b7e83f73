use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

#[xla_property(
    ops = [add, subtract],   // or a group: elementwise_binary, reduction, all, ...
    dtypes = [f16, bf16],    // or a group: floats, integers, all, ...
    shapes = small,
    tolerance = ulp(1),
    budget = 20
)]
fn my_property(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}

xla_props::main!();
