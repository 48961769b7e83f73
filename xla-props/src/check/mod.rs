//! Judging results: what a backend promises about its numerics (`Numerics`),
//! how far a result may be from the reference (`ErrorSpec` and the default
//! tolerances), ULP distance, the registry of legal differences
//! (`legal`, one entry per file), and THE judge (`Judge`, used by every
//! caller) with its `Verdict`.

mod alternatives;
pub(crate) mod compare;
mod complex;
mod contraction;
mod error_spec;
mod excess;
mod excess_adjoint;
mod excess_witness;
mod flushed_readings;
mod grouped_conv_model;
mod judge;
mod kind;
mod known_bug_model;
mod known_bug_verdict;
mod known_bugs;
mod legal;
mod magnitude_sums;
mod numerics;
mod op_semantics;
mod policy;
mod produced;
mod sweep;
mod tolerances;
mod ulp;
mod unstable_sort;
mod verdict;

#[cfg(test)]
mod comparator_tests;
#[cfg(test)]
mod excess_adjoint_tests;
#[cfg(test)]
mod judge_semantics_tests;

pub use alternatives::{
    excess_precision_variant, flush_subnormal_constants, flush_subnormal_inputs,
};
pub(crate) use compare::{compare, CompareContext};
pub use compare::{module_opcodes, MagnitudeSums};
pub use contraction::{fma_contraction_variant, unrounded_products_variant};
pub use error_spec::{ElementCheck, ElementFailure, ErrorSpec};
pub use excess::whole_module_excess_precision_variant;
pub use excess_witness::{excess_witness_bounds, Aim, ExcessWitness};
pub(crate) use flushed_readings::{judge_readings, judge_with_alternatives, unflushed_operands};
pub use grouped_conv_model::{batch_group_dilation_holes, dense_depthwise_convolutions};
pub use judge::{judge_against_reference, known_rejection, Judge};
pub use kind::{FailureSignature, MismatchKind};
pub use known_bug_model::{
    apply_model_specs, replace_with_model, replace_with_model_of, type_text, DivisionRewrite,
    ModelSpec, ModelTemplate, SubnormalSign,
};
pub(crate) use known_bug_model::{int_power_low_bits, is_folded_constant, with_dtype};
pub use known_bugs::{
    any_value_spec_masks, operand_is_one_outputs, output_masks, AnyValueMasks, BugModel, KnownBug,
    KnownBugNote,
};
pub use legal::legal_differences;
pub(crate) use magnitude_sums::DotRoles;
pub use magnitude_sums::{magnitude_sums_for_dot, magnitude_sums_for_reduce};
pub use numerics::{Approximation, ErrorBudget, Numerics};
pub use op_semantics::{op_semantics_variant, op_semantics_variant_ordered, ConstantOrder};
pub use policy::{EvalFn, Policy};
pub use produced::Produced;
pub use sweep::{ulp_stats, UlpStats};
pub use tolerances::{
    default_error_spec, default_error_spec_for_module, tolerance_rule, Dtypes, ToleranceRule,
    UnitTolerance, DEFAULT_TOLERANCES,
};
pub use ulp::{
    classify, float_bits, from_ordinal, int_value, next_down, next_up, ordinal, round_down,
    round_up, ulp_distance, FloatClass,
};
pub use unstable_sort::canonical_unstable_sort;
pub use verdict::{
    histogram_bucket, histogram_label, Agreement, ElementBound, ElementIndex, ElementMismatch,
    ElementValue, HistogramBucket, LegalReason, MismatchReport, OutputMismatch, Side, Verdict,
};
