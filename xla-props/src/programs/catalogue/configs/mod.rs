//! The attribute-class cases: one module per class of
//! [`crate::hlo::ATTRIBUTE_CLASSES`] (the `configurations` shape set). Each
//! op family has its own file; a class's operand shapes are part of the class
//! (`first_dims`), so a case name still parses back without building anything.

mod cfg;
mod contraction;
mod control;
mod elementwise;
mod indexing;
mod reduction;
mod shape_ops;
mod table;

use cfg::{digits, Cfg, Res};
pub(crate) use table::{build, classes, first_dims};
