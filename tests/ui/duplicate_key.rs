#![allow(unused_imports)]
use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

#[xla_property(ops = [add], ops = [subtract])]
fn p(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}

fn main() {}
