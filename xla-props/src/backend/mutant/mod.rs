//! `mutant`: a backend wrapper injecting one known miscompilation (or one
//! legal deviation), to measure what the suite catches and what it wrongly flags.
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
mod kernels;
mod mutation;
mod rewrite;

pub use backend::Mutant;
pub use mutation::{Mutation, MutationCategory, UnknownMutation};
pub use rewrite::widen_fused_arithmetic;
