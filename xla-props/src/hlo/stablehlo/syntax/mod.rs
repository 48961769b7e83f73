//! The StableHLO MLIR text syntax: a cursor over the bytes that reads
//! modules, functions, operations (pretty and generic form), types and
//! attributes into a small syntax tree ([`ModuleDef`], [`Op`], [`Attr`]).
//!
//! Every pretty form is read into the generic shape (operands, named
//! attributes, regions, result types) so one converter (`convert/`) builds
//! the IR from both forms. Positions are byte offsets into the whole file;
//! errors become `LINE:COL: message` through [`ParseError`](crate::hlo::ParseError).

mod ast;
mod attrs;
mod cursor;
mod generic;
mod pretty;
mod probes;
mod structure;
mod types;

pub(crate) use ast::{Attr, Dense, Func, ModuleDef, Op, Quant, Region, Scalar, Type, ValueRef};
pub use cursor::MAX_DEPTH;
pub(crate) use structure::parse_file;
