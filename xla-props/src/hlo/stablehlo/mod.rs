//! StableHLO MLIR text: the reader into the IR (pretty and generic forms,
//! `chlo` decompositions, check ops, `// -----` split files) and the printer
//! (the lowering the XLA backend compiles).

mod build;
mod chlo;
mod chlo_ext;
mod convert;
mod dense;
mod printer;
mod reader;
#[cfg(test)]
mod spec_syntax_tests;
mod syntax;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_eval;

pub use chlo::{ChloLowering, CHLO_OPS};
pub use convert::{CheckKind, CheckSpec};
pub use printer::{
    lower_annotated, lower_module, lowers, mlir_element_type, print_module, tensor_type,
    LowerError, Lowered,
};
pub use reader::{parse_stablehlo, read_check_programs, CheckProgram, MAX_DEPTH};
