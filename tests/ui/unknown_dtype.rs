#![allow(unused_imports)]
use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

#[xla_property(ops = [add], dtypes = [f16, f17])]
fn p(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}

fn main() {}
