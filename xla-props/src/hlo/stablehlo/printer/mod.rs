//! Lowering of our HLO IR to StableHLO MLIR text (generic operation form).
//!
//! Every HLO value becomes a list of SSA values, one per array leaf: tuples
//! are flattened, so `tuple` and `get-tuple-element` emit nothing, the entry
//! function takes one argument per parameter leaf and returns one result per
//! root leaf (what PJRT hands back untupled). Fusions and calls are inlined;
//! reductions, sorts, maps, scatters and loops get their called computation
//! as a region; conditionals inline their branches into `stablehlo.if`/`case`
//! regions, which capture the branch operands from the enclosing scope.
//!
//! Float constants are written as raw hexadecimal bit patterns, so every
//! value (signed zeros, subnormals, infinities) reaches XLA exactly.

mod collectives;
mod constants;
mod contraction;
mod control;
mod faithful;
mod faithful_ops;
mod indexing;
mod lower;
mod opnames;
mod shaping;
mod types;
mod values;

pub use faithful::print_module;
pub use lower::{lower_annotated, lower_module};
pub use opnames::lowers;
pub use types::{mlir_element_type, tensor_type, LowerError, Lowered};
