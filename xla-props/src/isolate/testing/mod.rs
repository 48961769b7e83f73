//! Test support for isolation (feature `testing`): generators of large
//! transformer-like modules. The fusion-only miscompilations they are
//! isolated against live with the other bug injectors, in
//! `backend::mutant` (`buggy:BUG@COMPUTATION`, made by `backend::create`).

mod deep;
mod transformer;

pub use deep::{deep_transformer, DeepTransformer, MASKING_GAIN};
pub use transformer::{transformer, Transformer, FUSION_ROLES};
