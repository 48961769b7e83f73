//! Properties: `PropertySpec` (what `#[xla_property]` emits) and the case
//! context, `CaseId` (Display <-> FromStr), the lazy case space, its groups
//! and coverage classes, and the map from a case key to the catalogue's
//! module (`crate::programs`). Inputs come from `crate::inputs`, judging
//! from `crate::check`.

#[cfg(feature = "quickcheck")]
mod arbitrary;
mod build;
mod context;
mod coverage;
mod groups;
mod id;
mod key;
mod parse;
mod space;
mod spec;
mod tables;

pub use build::{build_case, build_fused_chain};
pub use coverage::{
    class_coverage, coverage_markdown, coverage_text, full_coverage, ClassCoverage, DTYPE_FAMILIES,
};
pub use groups::{
    accepted_dtypes, bitcast_targets, catalogue_ops, distribution_group, dtype_group, op_group,
    DtypeRule, DISTRIBUTION_GROUPS, DTYPE_GROUPS, OP_GROUPS,
};
pub use groups::{validate, CONFIG_SET, FORMS_SET, SHAPE_SETS};
pub use id::{BackendId, CaseId, CaseKey, Fnv, ParseCaseIdError};
pub use space::{CaseSpace, SpaceError, SpaceFilter};
pub use spec::{
    find_property, registry, LayoutSelection, Limitation, LimitationKind, PropertySpec, Selection,
    Template, Tolerance,
};
pub use spec::{CaseContext, Failure, Outcome, ReferenceCache};
pub use tables::{case_params, is_exhaustive_shape, layouts, params, shapes};

#[cfg(test)]
mod forms_tests;
#[cfg(test)]
mod known_bug_tests;
#[cfg(test)]
mod tests;
