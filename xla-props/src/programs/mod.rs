//! Programs beyond single ops: multi-op templates with fusion configurations,
//! the outlining transformation that makes a configuration, and random
//! well-typed programs for the fuzzer (the fuzz loop itself is `crate::fuzz`).
//!
//! Generators only make programs; judging lives in `check`.

mod cases;
mod catalogue;
mod collectives;
mod fusion;
mod random;
mod sharded;
mod templates;

pub use cases::{
    find_template, program_params, split_case, split_sharded_case, PROGRAM_PROPERTIES,
};
pub use catalogue::{
    build_chain, build_operand_forms, build_single, elementwise_role, forms_operand_dims,
    fuse_entry, has_operand_forms, operand_form_slots, BuiltCase, CatalogueError, Form, FormsSite,
    OpCase, FUSED_SUFFIX, OPERAND_FORMS, SLOT_SEPARATOR,
};
pub(crate) use catalogue::{build_configuration, class_operand_dims, op_classes};
pub use collectives::COLLECTIVE_TEMPLATES;
pub use fusion::{apply_configuration, outline, FusionGroup, OutlineError};
pub use random::{program_strategy, random_program, FUZZ_DTYPES};
pub use sharded::{
    annotate, array_sharding, find_scheme, shape_sharding, ShardingScheme, SHARDED_OP_TEMPLATES,
    SHARDING_SCHEMES,
};
pub use templates::{
    template_cases, topk_k, Configuration, ProgramTemplate, StagedModule, TemplateError, TEMPLATES,
    TEMPLATE_SHAPES,
};
