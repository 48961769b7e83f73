//! The HLO text parser: XLA's text form into a [`Module`](crate::hlo::Module).
//!
//! A hand-written recursive-descent parser over the source bytes. Every
//! syntactic construct that can nest (tuple shapes, literals) is bounded by
//! [`MAX_NESTING`], attribute values it does not interpret are scanned
//! iteratively, names are resolved after the whole text has been read (so
//! operands and computations may be used before they are defined), and all
//! arithmetic on user numbers is checked. It never panics on any input.

mod attrs;
mod entry;
mod error;
mod lexer;
mod module;
mod pending;
mod resolve;
mod shapes;
#[cfg(test)]
mod tests;

pub(crate) use entry::parse_shape_text;
pub use entry::{parse_module, parse_module_bytes};
pub(crate) use error::line_col;
pub use error::ParseError;
pub use lexer::{MAX_NESTING, MAX_OPERAND_NESTING, MAX_SPLAT_ELEMENTS};
