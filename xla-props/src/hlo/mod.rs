//! HLO: element types, shapes, the opcode table, the IR, and its text form.

mod dtype;
mod ir;
mod opcode;
mod parser;
mod printer;
mod shape;

pub use dtype::{ElementType, FloatFormat, TypeKind, UnknownElementType};
pub use ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData, ConvDims,
    DotDims, FusionKind, GatherDims, InstrId, Instruction, Module, PadDim, ScatterDims, SliceDim,
    WindowDim,
};
pub use opcode::{Arity, Category, Opcode, UnknownOpcode};
pub use parser::{
    parse_module, parse_module_bytes, ParseError, MAX_NESTING, MAX_OPERAND_NESTING,
    MAX_SPLAT_ELEMENTS,
};
pub use printer::print_module;
pub use shape::{ArrayShape, Layout, Shape};
