//! Built-in properties, declared with the same `#[xla_property]` users write.

mod chains_vs_reference;
mod configurations;
mod edge_programs;
mod exhaustive;
mod fusion_invariance;
mod layout_invariance;
mod operand_forms;
mod sharding_invariance;
mod template_properties;
mod vs_reference;
