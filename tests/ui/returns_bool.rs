#![allow(unused_imports)]
use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

#[xla_property(ops = [add])]
fn p(ctx: &mut CaseContext<'_>) -> bool {
    ctx.compare_with_reference();
    true
}

fn main() {}
