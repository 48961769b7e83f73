//! Programs beyond single ops: multi-op templates with fusion configurations,
//! the outlining transformation that makes a configuration, and random
//! well-typed programs for the fuzzer.
//!
//! Generators only make programs; judging lives in `check`.

mod cases;
mod differential;
mod fusion;
mod fuzz;
mod random;
mod templates;

pub use cases::{program_params, PROGRAM_PROPERTIES};
pub use differential::{
    differential, judge_outputs, run_backend, run_reference, Differential, RunResult,
};
pub use fusion::{apply_configuration, outline, FusionGroup, OutlineError};
pub use fuzz::{
    fuzz, hlotest_inline_text, hlotest_text, judge_instruction, mismatch_kind,
    program_distribution, FailureSignature, FuzzError, FuzzOptions, FuzzProgress, FuzzReport,
    INPUT_MIX,
};
pub use random::{program_strategy, random_program, FUZZ_DTYPES};
pub use templates::{
    find_template, split_case, template_cases, topk_k, Configuration, ProgramTemplate,
    StagedModule, TemplateError, TEMPLATES, TEMPLATE_SHAPES,
};
