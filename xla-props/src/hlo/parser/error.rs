//! Parse errors: the public [`ParseError`] with its line and column, and the
//! parser's internal failure (a byte offset and a message).

use std::fmt;

/// A parse failure at a 1-based line and column (columns count characters).
///
/// ```
/// let err = xla_props::hlo::parse_module("HloModule m\nENTRY e {\n  ROOT x = f32[] frob()\n}\n")
///     .unwrap_err();
/// assert_eq!((err.line, err.col), (3, 18));
/// assert_eq!(err.message, "unknown opcode `frob`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What is wrong, lowercase.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// `FILE:LINE:COL: message`, then the offending source line and a caret
    /// under the column.
    ///
    /// ```
    /// let src = "HloModule m\nENTRY e {\n  ROOT x = f32[] frob()\n}\n";
    /// let err = xla_props::hlo::parse_module(src).unwrap_err();
    /// let text = err.render("m.hlo", src);
    /// assert_eq!(
    ///     text,
    ///     "m.hlo:3:18: unknown opcode `frob`\n  ROOT x = f32[] frob()\n                 ^"
    /// );
    /// ```
    pub fn render(&self, file_name: &str, source: &str) -> String {
        let mut out = format!("{file_name}:{}:{}: {}", self.line, self.col, self.message);
        if let Some(line) = source.split('\n').nth(self.line.saturating_sub(1)) {
            let line = line.strip_suffix('\r').unwrap_or(line);
            // keep tabs so the caret lines up in a terminal
            let pad: String = line
                .chars()
                .take(self.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push('\n');
            out.push_str(line);
            out.push('\n');
            out.push_str(&pad);
            out.push('^');
        }
        out
    }

    /// The error for a byte offset into `source`.
    pub(crate) fn at(source: &str, pos: usize, message: String) -> ParseError {
        let (line, col) = line_col(source.as_bytes(), pos);
        ParseError { line, col, message }
    }
}

/// 1-based line and column (in characters) of byte offset `pos`.
pub(crate) fn line_col(bytes: &[u8], pos: usize) -> (usize, usize) {
    let pos = pos.min(bytes.len());
    let before = &bytes[..pos];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |k| k + 1);
    // count characters: every byte that is not a UTF-8 continuation byte
    let col = before[start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, col)
}

/// An error at a byte offset (converted to line/column once, at the end).
pub(super) struct Failure {
    pub(super) pos: usize,
    pub(super) msg: String,
}

pub(super) type PResult<T> = Result<T, Failure>;

pub(super) fn fail<T>(pos: usize, msg: impl Into<String>) -> PResult<T> {
    Err(Failure {
        pos,
        msg: msg.into(),
    })
}
