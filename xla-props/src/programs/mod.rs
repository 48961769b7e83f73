//! Programs beyond single ops: multi-op templates with fusion configurations,
//! the outlining transformation that makes a configuration, and random
//! well-typed programs for the fuzzer.
//!
//! Generators only make programs; judging lives in `check`.

mod fusion;
mod templates;

pub use fusion::{apply_configuration, outline, FusionGroup, OutlineError};
pub use templates::{
    find_template, split_case, template_cases, topk_k, Configuration, ProgramTemplate,
    StagedModule, TemplateError, TEMPLATES, TEMPLATE_SHAPES,
};
