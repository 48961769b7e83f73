//! From the syntax tree to the IR: one computation per `func.func`, one per
//! region; multi-result ops become tuple-shaped instructions read through
//! `get-tuple-element`.
//!
//! Regions of `while`, `if` and `case` may use values of the enclosing scope
//! (MLIR allows it, HLO does not): those values are found syntactically and
//! passed in explicitly (appended to the loop state, or as the branch
//! operand). Other regions may only capture constants, which are copied in.

mod attrs;
mod check;
mod collectives;
mod control;
mod converter;
mod dynamic;
mod helpers;
mod ops;
mod quant;
mod regions;
mod scan;

pub(crate) use attrs::stablehlo_rng_algorithm;
pub use check::{CheckKind, CheckSpec};
pub(crate) use converter::Converter;
