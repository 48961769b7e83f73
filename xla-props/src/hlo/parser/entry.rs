//! The entry points: HLO text (as a string or bytes) into a [`Module`], and a
//! shape's text into a [`Shape`].

use super::error::{line_col, ParseError};
use super::lexer::Parser;
use crate::hlo::ir::Module;
use crate::hlo::shape::Shape;

/// Parses HLO text as XLA prints it.
///
/// ```
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module(
///     "HloModule add, is_scheduled=true\n\
///      ENTRY %main (x: f32[2]) -> f32[2] {\n\
///        %x = f32[2]{0} parameter(0)\n\
///        ROOT %sum = f32[2]{0} add(f32[2]{0} %x, %x)\n\
///      }\n",
/// )
/// .unwrap();
/// assert_eq!(m.name, "add");
/// let entry = m.entry_computation();
/// assert_eq!(entry.instr(entry.root).opcode, Opcode::Add);
/// ```
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(text);
    p.module().map_err(|e| ParseError::at(text, e.pos, e.msg))
}

/// Parses one HLO shape (`f32[2,3]{1,0}`, `(f32[], s32[4])`) that makes up
/// all of `text`; None when it is not one.
pub(crate) fn parse_shape_text(text: &str) -> Option<Shape> {
    let mut p = Parser::new(text);
    let s = p.shape().ok()?;
    p.skip_ws().ok()?;
    (p.pos == text.len()).then_some(s)
}

/// Parses HLO text given as bytes; invalid UTF-8 is an error at the first
/// invalid byte.
///
/// ```
/// let err = xla_props::hlo::parse_module_bytes(b"HloModule m\n\xff").unwrap_err();
/// assert_eq!((err.line, err.col), (2, 1));
/// assert_eq!(err.message, "invalid utf-8 byte 0xff");
/// ```
pub fn parse_module_bytes(bytes: &[u8]) -> Result<Module, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_module(text),
        Err(e) => {
            let pos = e.valid_up_to();
            let (line, col) = line_col(bytes, pos);
            let byte = bytes.get(pos).copied().unwrap_or(0);
            Err(ParseError {
                line,
                col,
                message: format!("invalid utf-8 byte 0x{byte:02x}"),
            })
        }
    }
}
