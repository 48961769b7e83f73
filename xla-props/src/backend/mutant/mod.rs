//! `mutant`: the one home of bug injection. A backend wrapper injecting one
//! known miscompilation (or one legal deviation), to measure what the suite
//! catches and what it wrongly flags (`mutant:NAME[@BASE]`), and the
//! fusion-only miscompilations `isolate` is measured against
//! (`buggy:BUG@COMPUTATION`, `fusion_bugs.rs`). `backend::create` makes both
//! from their names.
//!
//! A mutation is applied on the module before the base compiles it (an HLO
//! rewrite), or by computing the targeted instructions with a wrong kernel
//! while everything else runs on the base, one instruction at a time.

mod backend;
mod collective_bugs;
mod config_bugs;
mod ctx;
mod exec;
mod form_bugs;
mod fusion_bugs;
mod kernels;
mod mutation;
mod rewrite;

pub use backend::Mutant;
#[cfg(test)]
pub(crate) use fusion_bugs::scale_by_constant;
pub use fusion_bugs::{Bug, Buggy};
pub use mutation::{Mutation, MutationCategory, UnknownMutation};
pub use rewrite::widen_fused_arithmetic;
