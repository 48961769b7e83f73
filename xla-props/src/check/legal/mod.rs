//! The registry of legal differences: every way a backend's result may
//! legally differ from the reference's, one entry per file.
//!
//! Each entry says three things: its reason (the `LegalReason` that reports
//! name), when it is admissible (decided once, here, from the backend's
//! `Numerics` and the judge's policy), and how its evidence is built (an
//! element rule the comparator applies, alternative outputs the reference
//! computes, a variant module whose enclosure is legal too, ...). The judge
//! (`check::Judge`) asks every admissible entry for its evidence; adding a
//! legal difference means adding one file here and one line to `registry.rs`.

mod approximate;
mod convolution_padding;
mod difference;
mod excess_anywhere;
mod excess_in_fusions;
mod fast_min_max;
mod flushed_inputs;
mod flushed_outputs;
mod fma;
mod known_bug;
mod op_semantics;
mod propagated_bound;
mod reassociation;
mod reassociation_complex;
mod reduce_precision;
mod reduction_root;
mod registry;
mod unspecified_conversion;
mod unstable_sort;

pub(crate) use difference::{
    only_semantics, variant_evidence, Case, Evidence, LegalDifference, Setting,
};
pub use registry::legal_differences;
pub(crate) use registry::REGISTRY;
