//! HLO: element types, shapes, the opcode table, the IR, and its text form.

mod attr_classes;
mod builder;
pub mod collective;
mod custom_calls;
mod dot_algorithm;
mod dtype;
mod float_bits;
mod ir;
mod lapack;
mod load;
mod opcode;
mod parser;
mod printer;
pub mod rewrite;
pub mod sdy;
pub mod sdy_gspmd;
mod shape;
mod shape_inference;
pub mod sharding;
pub mod stablehlo;
mod verifier;

pub use attr_classes::{class_families, class_family, ClassFamily, ATTRIBUTE_CLASSES};
/// For other modules' tests.
#[cfg(test)]
pub(crate) use builder::tests::row_gather;
pub use builder::{BuildError, ComputationBuilder, ModuleBuilder};
pub use custom_calls::expand_known_custom_calls;
pub use dot_algorithm::{DotAlgorithm, OperandPrecision};
pub use dtype::{ElementType, FloatFormat, Specials, TypeKind, UnknownElementType};
pub use float_bits::{bits_to_f64, round_to_bits};
pub use ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData, ConvDims,
    DotDims, FftType, FusionKind, GatherDims, InstrId, Instruction, Module, PadDim, RngAlgorithm,
    ScatterDims, SliceDim, TransposeA, TriangularSolveOptions, WindowDim,
};
pub use load::{
    is_stablehlo_file, load_check_programs, load_module_bytes, load_module_file, LoadError,
};
pub use opcode::{
    accepts_attribute, Arity, Category, Opcode, UnknownOpcode, XLA_GENERIC_ATTRIBUTES,
    XLA_OP_ATTRIBUTES,
};
pub use parser::{
    parse_module, parse_module_bytes, ParseError, MAX_NESTING, MAX_OPERAND_NESTING,
    MAX_SPLAT_ELEMENTS,
};
pub use printer::{attrs_text, print_module};
pub(crate) use shape::write_separated;
pub use shape::{ArrayShape, Layout, Shape};
#[cfg(test)]
pub(crate) use shape_inference::tests::with;
pub use shape_inference::{
    check_constant, default_comparison_type, infer, infer_shape, signature, ShapeError,
    ShapeErrorKind, Signature,
};
pub use verifier::{uniquify_names, verify, VerifyError};
