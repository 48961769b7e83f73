#![allow(unused_imports)]
use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

#[xla_property(ops = elementwise_binary, dtypes = doubles)]
fn p(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}

fn main() {}
