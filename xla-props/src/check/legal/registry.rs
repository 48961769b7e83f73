//! The registry: every legal difference, in the order the judge applies
//! them. Adding a legal difference means adding its file to `legal/` and
//! one line here.

use super::difference::LegalDifference;
use super::{
    approximate, convolution_padding, excess_anywhere, excess_in_fusions, fast_min_max,
    flushed_inputs, flushed_outputs, fma, known_bug, op_semantics, propagated_bound, reassociation,
    reduce_precision, unspecified_conversion, unstable_sort,
};
use crate::check::verdict::LegalReason;

/// Every legal difference, in the order the judge applies them.
pub(crate) static REGISTRY: &[&dyn LegalDifference] = &[
    &flushed_outputs::FlushedOutputs,
    &approximate::Approximate,
    &reassociation::Reassociation,
    &unstable_sort::UnstableSort,
    &flushed_inputs::FlushedInputs,
    &excess_in_fusions::ExcessInFusions,
    &excess_anywhere::ExcessAnywhere,
    &fma::Fma,
    &fast_min_max::FastMinMax,
    &reduce_precision::ReducePrecisionInOwnType,
    &convolution_padding::ConvolutionPadding,
    &unspecified_conversion::UnspecifiedConversion,
    &op_semantics::OpSemanticsTogether,
    &propagated_bound::PropagatedBound,
    &known_bug::KnownBugs,
];

/// The registry as `(reason, summary)` pairs, for documentation.
///
/// ```
/// let entries = xla_props::check::legal_differences();
/// assert!(entries.iter().any(|(r, _)| r.name() == "fma"));
/// assert!(entries.iter().any(|(r, _)| r.name() == "propagated-bound"));
/// ```
pub fn legal_differences() -> Vec<(LegalReason, &'static str)> {
    REGISTRY.iter().map(|e| (e.reason(), e.summary())).collect()
}
