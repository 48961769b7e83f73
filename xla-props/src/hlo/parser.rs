//! The HLO text parser: XLA's text form into a [`Module`].
//!
//! A hand-written recursive-descent parser over the source bytes. Every
//! syntactic construct that can nest (tuple shapes, literals) is bounded by
//! [`MAX_NESTING`], attribute values it does not interpret are scanned
//! iteratively, names are resolved after the whole text has been read (so
//! operands and computations may be used before they are defined), and all
//! arithmetic on user numbers is checked. It never panics on any input.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::dtype::{ElementType, TypeKind};
use super::ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData, ConvDims,
    FftType, FusionKind, InstrId, Instruction, Module, PadDim, RngAlgorithm, SliceDim, TransposeA,
    TriangularSolveOptions, WindowDim,
};
use super::opcode::Opcode;
use super::shape::{ArrayShape, Layout, Shape};

/// How deeply tuple shapes, tuple constants and array literals may nest.
pub const MAX_NESTING: usize = 200;

/// How deeply instructions may nest inside operand lists
/// (`add(f32[] negate(f32[] parameter(0)), ...)`); each level costs far more
/// stack than a level of a shape or a literal.
pub const MAX_OPERAND_NESTING: usize = 32;

/// The most elements a single-value constant of an array shape
/// (`f32[9] constant(0)`) may expand to.
pub const MAX_SPLAT_ELEMENTS: u64 = 1 << 20;

/// The tables newer XLA prints between the header and the computations.
const STACK_FRAME_TABLES: &[&str] = &["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

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
    let mut p = Parser {
        src: text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
        nested: Vec::new(),
        inline: Vec::new(),
        inline_total: 0,
        nested_count: 0,
        operand_depth: 0,
    };
    p.module().map_err(|e| ParseError::at(text, e.pos, e.msg))
}

/// Parses one HLO shape (`f32[2,3]{1,0}`, `(f32[], s32[4])`) that makes up
/// all of `text`; None when it is not one.
pub(crate) fn parse_shape_text(text: &str) -> Option<Shape> {
    let mut p = Parser {
        src: text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
        nested: Vec::new(),
        inline: Vec::new(),
        inline_total: 0,
        nested_count: 0,
        operand_depth: 0,
    };
    let s = p.shape().ok()?;
    p.skip_ws().ok()?;
    (p.pos == text.len()).then_some(s)
}

/// The parser's canonical form for attributes with a default, the same as
/// XLA prints and as StableHLO reads back: a map names its dimensions
/// (always all of them), and float
/// constants hold their values rounded to their type (the value the
/// constant has; the printer writes the shortest text for it).
fn canonical_defaults(i: &mut Instruction) {
    let rank = i.shape.as_array().map(|a| a.dims.len() as i64);
    match i.opcode {
        Opcode::Map if i.attrs.dimensions.is_none() => {
            if let Some(rank) = rank {
                i.attrs.dimensions = Some((0..rank).collect());
            }
        }
        Opcode::Constant => {
            if let Some(data) = i.attrs.constant.as_mut() {
                round_constant(data, &i.shape);
            }
        }
        _ => {}
    }
}

fn round_constant(data: &mut ConstantData, shape: &Shape) {
    match (data, shape) {
        (ConstantData::Tuple(items), Shape::Tuple(shapes)) => {
            for (d, s) in items.iter_mut().zip(shapes) {
                round_constant(d, s);
            }
        }
        (ConstantData::Float(v), Shape::Array(a)) => {
            if let Some(fmt) = a.dtype.float_format() {
                if a.dtype != ElementType::F64 {
                    for x in v.iter_mut() {
                        if !x.is_nan() {
                            *x = super::float_bits::bits_to_f64(
                                super::float_bits::round_to_bits(*x, &fmt),
                                &fmt,
                            );
                        }
                    }
                }
            }
        }
        _ => {}
    }
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

/// An error at a byte offset (converted to line/column once, at the end).
struct Failure {
    pos: usize,
    msg: String,
}

type PResult<T> = Result<T, Failure>;

fn fail<T>(pos: usize, msg: impl Into<String>) -> PResult<T> {
    Err(Failure {
        pos,
        msg: msg.into(),
    })
}

/// Where a computation reference goes once resolved.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Calls,
    ToApply,
    Condition,
    Body,
    Branches,
    TrueBranch,
    FalseBranch,
    Select,
    Scatter,
}

/// A name used before it can be resolved, with where it was written.
struct NameRef {
    name: String,
    pos: usize,
}

struct PendingInstr {
    name: NameRef,
    opcode: Opcode,
    /// None when the text left it out (inferred when names are resolved).
    shape: Option<Shape>,
    operands: Vec<NameRef>,
    attrs: Attrs,
    comp_refs: Vec<(Slot, NameRef)>,
    /// A nested operand instruction; its name is generated.
    synthetic: bool,
}

struct PendingComp {
    name: NameRef,
    instrs: Vec<PendingInstr>,
    root: Option<usize>,
    other: Vec<(String, String)>,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
    /// Nested operand instructions of the instruction being read, in the
    /// order they must precede it.
    nested: Vec<PendingInstr>,
    /// How many nested instructions have been read (for unique temporary names).
    nested_count: usize,
    /// How deeply the instruction being read is nested in operand lists.
    operand_depth: usize,
    /// Computations written inline in an attribute (`to_apply={ ... }`),
    /// named by the parser, waiting to join the module before their user's
    /// computation.
    inline: Vec<PendingComp>,
    /// How many inline computations have been read (for unique names).
    inline_total: usize,
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

impl<'a> Parser<'a> {
    // ---------------------------------------------------------------- lexing

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos.checked_add(k)?).copied()
    }

    /// Skips whitespace and `//`, `/* */` comments.
    fn skip_ws(&mut self) -> PResult<()> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if self.peek_at(1) == Some(b'/') => {
                    while let Some(c) = self.peek() {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    let start = self.pos;
                    match self.src[self.pos + 2..].find("*/") {
                        Some(k) => self.pos += 2 + k + 2,
                        None => return fail(start, "unterminated comment"),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Describes what is at the cursor, for "expected X, found Y".
    fn found(&self) -> String {
        match self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "end of file".to_string(),
            Some(c) if c.is_ascii_graphic() => format!("`{c}`"),
            Some(c) => format!("{c:?}"),
        }
    }

    fn expect(&mut self, c: u8) -> PResult<()> {
        self.skip_ws()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            fail(
                self.pos,
                format!("expected `{}`, found {}", c as char, self.found()),
            )
        }
    }

    /// Consumes `c` if it is next (after whitespace).
    fn eat(&mut self, c: u8) -> PResult<bool> {
        self.skip_ws()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An identifier at the cursor (no whitespace skipping), possibly empty.
    fn raw_ident(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            // `->` ends a name (`b01f_01io->b01f`, `(x: f32[]) ->`)
            if !is_ident_byte(c) || (c == b'-' && self.peek_at(1) == Some(b'>')) {
                break;
            }
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    /// An identifier, after whitespace; `what` names it in the error.
    fn ident(&mut self, what: &str) -> PResult<(&'a str, usize)> {
        self.skip_ws()?;
        let start = self.pos;
        let s = self.raw_ident();
        if s.is_empty() {
            return fail(start, format!("expected {what}, found {}", self.found()));
        }
        Ok((s, start))
    }

    /// A name, with an optional `%` prefix (dropped).
    fn name(&mut self, what: &str) -> PResult<NameRef> {
        self.skip_ws()?;
        let start = self.pos;
        if self.peek() == Some(b'%') {
            self.pos += 1;
        }
        let s = self.raw_ident();
        if s.is_empty() {
            return fail(start, format!("expected {what}, found {}", self.found()));
        }
        Ok(NameRef {
            name: s.to_string(),
            pos: start,
        })
    }

    /// True when the identifier at the cursor (after whitespace) is `kw`.
    fn at_keyword(&mut self, kw: &str) -> PResult<bool> {
        self.skip_ws()?;
        let rest = &self.b[self.pos..];
        Ok(rest.starts_with(kw.as_bytes())
            && !matches!(rest.get(kw.len()), Some(&c) if is_ident_byte(c)))
    }

    /// An unsigned decimal integer that fits in u64.
    fn u64_lit(&mut self, what: &str) -> PResult<u64> {
        self.skip_ws()?;
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(c - b'0')))
            {
                Some(v) => v,
                None => return fail(start, format!("{what} is too large")),
            };
            self.pos += 1;
        }
        if self.pos == start {
            return fail(start, format!("expected {what}, found {}", self.found()));
        }
        Ok(v)
    }

    /// A signed decimal integer that fits in i64.
    fn i64_lit(&mut self, what: &str) -> PResult<i64> {
        self.skip_ws()?;
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.pos += 1;
        }
        let v = self.u64_lit(what)?;
        let v = if neg {
            i64::try_from(v)
                .ok()
                .and_then(i64::checked_neg)
                .or((v == 1u64 << 63).then_some(i64::MIN))
        } else {
            i64::try_from(v).ok()
        };
        match v {
            Some(v) => Ok(v),
            None => fail(start, format!("{what} is out of range")),
        }
    }

    fn nest(&mut self, pos: usize) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return fail(pos, format!("nesting deeper than {MAX_NESTING} levels"));
        }
        Ok(())
    }

    fn unnest(&mut self) {
        self.depth -= 1;
    }

    /// Scans a string literal at the cursor (which is at `"`); returns its
    /// text between the quotes, escapes as written.
    fn string(&mut self) -> PResult<&'a str> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => return fail(start, "unterminated string"),
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    // the escape skip may have stepped past the end
                    return match self.src.get(start + 1..self.pos - 1) {
                        Some(s) => Ok(s),
                        None => fail(start, "unterminated string"),
                    };
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// An attribute value kept verbatim: everything up to a top-level `,`,
    /// whitespace or unmatched closer, with brackets and strings balanced.
    fn raw_value(&mut self) -> PResult<String> {
        self.skip_ws()?;
        let start = self.pos;
        let mut open: Vec<(u8, usize)> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return match open.last() {
                    Some(&(_, at)) => fail(at, "unterminated bracket"),
                    None => break,
                };
            };
            match c {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' | b'(' => open.push((c, self.pos)),
                b'}' | b']' | b')' => match open.last() {
                    None => break,
                    Some(&(o, _)) => {
                        let want = match o {
                            b'{' => b'}',
                            b'[' => b']',
                            _ => b')',
                        };
                        if c != want {
                            return fail(
                                self.pos,
                                format!(
                                    "expected `{}` to close `{}`, found `{}`",
                                    want as char, o as char, c as char
                                ),
                            );
                        }
                        open.pop();
                    }
                },
                b',' if open.is_empty() => break,
                c if c.is_ascii_whitespace() && open.is_empty() => break,
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == start {
            return fail(start, format!("expected a value, found {}", self.found()));
        }
        Ok(self.src[start..self.pos].to_string())
    }

    /// `name=value` pairs after a `,`, verbatim.
    fn raw_attr_list(&mut self) -> PResult<Vec<(String, String)>> {
        let mut out = Vec::new();
        while self.eat(b',')? {
            let (name, _) = self.ident("an attribute name")?;
            self.expect(b'=')?;
            out.push((name.to_string(), self.raw_value()?));
        }
        Ok(out)
    }

    // ---------------------------------------------------------------- shapes

    fn shape(&mut self) -> PResult<Shape> {
        self.skip_ws()?;
        let start = self.pos;
        if self.peek() == Some(b'(') {
            self.nest(start)?;
            self.pos += 1;
            let mut elems = Vec::new();
            if !self.eat(b')')? {
                loop {
                    elems.push(self.shape()?);
                    if self.eat(b',')? {
                        continue;
                    }
                    self.expect(b')')?;
                    break;
                }
            }
            self.unnest();
            return Ok(Shape::Tuple(elems));
        }
        let (ty, at) = self.ident("a shape")?;
        if ty == "token" {
            self.expect(b'[')?;
            self.expect(b']')?;
            return Ok(Shape::Token);
        }
        let dtype: ElementType = match ty.parse() {
            Ok(t) => t,
            Err(_) => return fail(at, format!("unknown element type `{ty}`")),
        };
        self.expect(b'[')?;
        let mut dims = Vec::new();
        if !self.eat(b']')? {
            loop {
                self.skip_ws()?;
                if matches!(self.peek(), Some(b'<' | b'?')) {
                    return fail(self.pos, "dynamic dimensions are not supported");
                }
                let at = self.pos;
                let d = self.u64_lit("a dimension size")?;
                match i64::try_from(d) {
                    Ok(d) => dims.push(d),
                    Err(_) => return fail(at, "dimension size is too large"),
                }
                if self.eat(b',')? {
                    continue;
                }
                self.expect(b']')?;
                break;
            }
        }
        // a layout must follow `]` directly: `f32[2] {1, 2}` in a tuple
        // constant is a shape and a literal
        let layout = if self.peek() == Some(b'{') {
            Some(self.layout()?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            dtype,
            dims,
            layout,
        }))
    }

    fn layout(&mut self) -> PResult<Layout> {
        let open = self.pos;
        self.pos += 1;
        let mut minor_to_major = Vec::new();
        let mut extra = None;
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(b':') => {
                    self.pos += 1;
                    let start = self.pos;
                    let mut parens = 0usize;
                    loop {
                        match self.peek() {
                            None => return fail(open, "unterminated layout"),
                            Some(b'(') => parens += 1,
                            Some(b')') => parens = parens.saturating_sub(1),
                            Some(b'}') if parens == 0 => break,
                            Some(b'{') => return fail(self.pos, "unexpected `{` in layout"),
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    extra = Some(self.src[start..self.pos].to_string());
                }
                _ => {
                    if !minor_to_major.is_empty() {
                        self.expect(b',')?;
                    }
                    minor_to_major.push(self.i64_lit("a layout dimension")?);
                }
            }
        }
        Ok(Layout {
            minor_to_major,
            extra,
        })
    }

    // ---------------------------------------------------------------- module

    fn module(&mut self) -> PResult<Module> {
        self.skip_ws()?;
        if !self.at_keyword("HloModule")? {
            return fail(
                self.pos,
                format!("expected `HloModule`, found {}", self.found()),
            );
        }
        self.pos += "HloModule".len();
        let name = self.name("a module name")?.name;
        // XLA's lexer reads `HloModule name:` as the name (xla/tests/sample_text_test.cc)
        if self.peek() == Some(b':') {
            self.pos += 1;
        }
        let attrs = self.raw_attr_list()?;
        self.skip_tables()?;

        let mut comps: Vec<PendingComp> = Vec::new();
        let mut entry: Option<usize> = None;
        loop {
            self.skip_ws()?;
            if self.peek().is_none() {
                break;
            }
            let is_entry = self.at_keyword("ENTRY")?;
            let entry_pos = self.pos;
            if is_entry {
                self.pos += "ENTRY".len();
            }
            let comp = self.computation()?;
            // inline computations it called come first
            comps.append(&mut self.inline);
            if is_entry {
                if let Some(first) = entry {
                    return fail(
                        entry_pos,
                        format!(
                            "second entry computation `{}` (the first is `{}`)",
                            comp.name.name, comps[first].name.name
                        ),
                    );
                }
                entry = Some(comps.len());
            }
            comps.push(comp);
        }
        if comps.is_empty() {
            return fail(self.pos, "module has no computations");
        }
        let entry = entry.unwrap_or(comps.len() - 1);
        resolve(name, attrs, comps, entry)
    }

    /// Skips the FileNames/FunctionNames/FileLocations/StackFrames tables:
    /// a keyword, then lines that start with a number.
    fn skip_tables(&mut self) -> PResult<()> {
        loop {
            self.skip_ws()?;
            let save = self.pos;
            let word = self.raw_ident();
            if !STACK_FRAME_TABLES.contains(&word) {
                self.pos = save;
                return Ok(());
            }
            self.skip_ws()?;
            if matches!(self.peek(), Some(b'{' | b'(')) {
                // a computation that happens to have this name
                self.pos = save;
                return Ok(());
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                while let Some(c) = self.peek() {
                    match c {
                        b'\n' => break,
                        b'"' => {
                            self.string()?;
                        }
                        _ => self.pos += 1,
                    }
                }
                self.skip_ws()?;
            }
        }
    }

    fn computation(&mut self) -> PResult<PendingComp> {
        let name = self.name("a computation name")?;
        self.skip_ws()?;
        if self.peek() == Some(b'(') {
            // signature: (p: shape, ...) -> shape; the parameters say the same
            self.pos += 1;
            if !self.eat(b')')? {
                loop {
                    self.name("a parameter name")?;
                    self.expect(b':')?;
                    self.shape()?;
                    if self.eat(b',')? {
                        continue;
                    }
                    self.expect(b')')?;
                    break;
                }
            }
            self.skip_ws()?;
            if !self.b[self.pos..].starts_with(b"->") {
                return fail(self.pos, format!("expected `->`, found {}", self.found()));
            }
            self.pos += 2;
            self.shape()?;
        }
        let mut comp = self.computation_body(name)?;
        comp.other = self.raw_attr_list()?;
        Ok(comp)
    }

    /// `{ instructions }` of a computation (the named or the inline form).
    fn computation_body(&mut self, name: NameRef) -> PResult<PendingComp> {
        self.expect(b'{')?;
        let mut instrs: Vec<PendingInstr> = Vec::new();
        let mut root: Option<usize> = None;
        loop {
            self.skip_ws()?;
            match self.peek() {
                None => {
                    return fail(
                        name.pos,
                        format!("computation `{}` is not closed by `}}`", name.name),
                    )
                }
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => {}
            }
            let is_root = self.at_keyword("ROOT")?;
            if is_root {
                self.pos += "ROOT".len();
            }
            let instr = self.instruction()?;
            instrs.append(&mut self.nested);
            if is_root {
                if let Some(first) = root {
                    let first: &PendingInstr = &instrs[first];
                    return fail(
                        instr.name.pos,
                        format!(
                            "computation `{}` has a second ROOT `{}` (the first is `{}`)",
                            name.name, instr.name.name, first.name.name
                        ),
                    );
                }
                root = Some(instrs.len());
            }
            instrs.push(instr);
        }
        Ok(PendingComp {
            name,
            instrs,
            root,
            other: Vec::new(),
        })
    }

    // ----------------------------------------------------------- instructions

    fn instruction(&mut self) -> PResult<PendingInstr> {
        let name = self.name("an instruction name")?;
        self.expect(b'=')?;
        // `x = add(a, b)`: XLA lets simple instructions leave the shape out
        self.skip_ws()?;
        let save = self.pos;
        let word = self.raw_ident();
        let shapeless = !word.is_empty() && self.peek() == Some(b'(');
        self.pos = save;
        let shape = if shapeless { None } else { Some(self.shape()?) };
        self.instruction_body(name, shape, true)
    }

    /// The part of an instruction after its shape: `opcode(operands)` and,
    /// when `with_attrs`, the attribute list.
    fn instruction_body(
        &mut self,
        name: NameRef,
        shape: Option<Shape>,
        with_attrs: bool,
    ) -> PResult<PendingInstr> {
        let (op_name, op_pos) = self.ident("an opcode")?;
        let opcode: Opcode = match op_name.parse() {
            Ok(op) => op,
            Err(_) => return fail(op_pos, format!("unknown opcode `{op_name}`")),
        };
        self.expect(b'(')?;
        let mut attrs = Attrs::default();
        let mut operands = Vec::new();
        match opcode {
            Opcode::Parameter => {
                let at = self.pos;
                let n = self.i64_lit("a parameter number")?;
                if n < 0 {
                    return fail(at, "parameter number must not be negative");
                }
                attrs.parameter_number = Some(n);
                self.expect(b')')?;
            }
            Opcode::Constant => {
                let Some(shape) = &shape else {
                    return fail(name.pos, format!("constant `{}` needs a shape", name.name));
                };
                attrs.constant = Some(self.constant(shape)?);
                self.expect(b')')?;
            }
            _ => {
                if !self.eat(b')')? {
                    loop {
                        operands.push(self.operand()?);
                        if self.eat(b',')? {
                            continue;
                        }
                        self.expect(b')')?;
                        break;
                    }
                }
            }
        }
        let mut comp_refs = Vec::new();
        let mut seen: HashSet<&'a str> = HashSet::new();
        while with_attrs && self.eat(b',')? {
            let (attr, at) = self.ident("an attribute name")?;
            self.expect(b'=')?;
            if is_typed(opcode, attr) {
                if !seen.insert(attr) {
                    return fail(at, format!("duplicate attribute `{attr}`"));
                }
                self.typed_attr(opcode, attr, &mut attrs, &mut comp_refs)?;
            } else if super::opcode::accepts_attribute(opcode, attr) {
                let value = self.raw_value()?;
                attrs.other.push((attr.to_string(), value));
            } else {
                return fail(at, format!("unknown attribute `{attr}` of `{opcode}`"));
            }
        }
        // dimension numbers are part of these ops even when all are empty
        match opcode {
            Opcode::Dot => {
                attrs.dot_dims.get_or_insert_with(Default::default);
            }
            Opcode::Gather => {
                attrs.gather_dims.get_or_insert_with(Default::default);
            }
            Opcode::Scatter => {
                attrs.scatter_dims.get_or_insert_with(Default::default);
            }
            Opcode::TriangularSolve => {
                attrs.triangular_solve.get_or_insert_with(Default::default);
            }
            _ => {}
        }
        Ok(PendingInstr {
            name,
            opcode,
            shape,
            operands,
            attrs,
            comp_refs,
            synthetic: false,
        })
    }

    /// `name`, `%name`, `shape %name` (the shape is not checked here), or
    /// a nested instruction `shape opcode(...)` (it gets a generated name).
    fn operand(&mut self) -> PResult<NameRef> {
        self.skip_ws()?;
        let start = self.pos;
        let has_shape = match self.peek() {
            Some(b'(') => true,
            _ => {
                let word = self.raw_ident();
                let shaped = !word.is_empty() && self.peek() == Some(b'[');
                self.pos = start;
                shaped
            }
        };
        if !has_shape {
            return self.name("an operand name");
        }
        let shape = self.shape()?;
        self.skip_ws()?;
        let at = self.pos;
        let word = self.raw_ident();
        let nested =
            !word.is_empty() && self.peek() == Some(b'(') && word.parse::<Opcode>().is_ok();
        self.pos = at;
        if !nested {
            return self.name("an operand name");
        }
        if self.operand_depth >= MAX_OPERAND_NESTING {
            return fail(
                at,
                format!("instructions nested deeper than {MAX_OPERAND_NESTING} levels"),
            );
        }
        self.operand_depth += 1;
        // a name no source text can spell; replaced when names are resolved
        let temp = NameRef {
            name: format!("\0{}", self.nested_count),
            pos: at,
        };
        self.nested_count += 1;
        let mut instr = self.instruction_body(
            NameRef {
                name: temp.name.clone(),
                pos: at,
            },
            Some(shape),
            false,
        )?;
        instr.synthetic = true;
        self.nested.push(instr);
        self.operand_depth -= 1;
        Ok(temp)
    }

    // ------------------------------------------------------------ attributes

    fn int_list(&mut self) -> PResult<Vec<i64>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        if self.eat(b'}')? {
            return Ok(out);
        }
        loop {
            out.push(self.i64_lit("an integer")?);
            if self.eat(b',')? {
                continue;
            }
            self.expect(b'}')?;
            return Ok(out);
        }
    }

    fn bool_value(&mut self) -> PResult<bool> {
        let (w, at) = self.ident("`true` or `false`")?;
        match w {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => fail(at, format!("expected `true` or `false`, found `{w}`")),
        }
    }

    fn name_list(&mut self) -> PResult<Vec<NameRef>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        if self.eat(b'}')? {
            return Ok(out);
        }
        loop {
            out.push(self.name("a computation name")?);
            if self.eat(b',')? {
                continue;
            }
            self.expect(b'}')?;
            return Ok(out);
        }
    }

    /// The name of a called computation.
    fn comp_ref(&mut self) -> PResult<NameRef> {
        self.skip_ws()?;
        if self.peek() == Some(b'{') {
            // an inline computation (xla/hlo/transforms/simplifiers/hlo_dce_test.cc):
            // read it under a generated name; the module adds it
            let pos = self.pos;
            self.inline_total += 1;
            let name = format!("inline.computation.{}", self.inline_total);
            let outer = std::mem::take(&mut self.nested);
            let comp = self.computation_body(NameRef {
                name: name.clone(),
                pos,
            });
            self.nested = outer;
            self.inline.push(comp?);
            return Ok(NameRef { name, pos });
        }
        self.name("a computation name")
    }

    /// One name, or `{a, b}`.
    fn one_or_more_names(&mut self) -> PResult<Vec<NameRef>> {
        self.skip_ws()?;
        if self.peek() == Some(b'{') {
            self.name_list()
        } else {
            Ok(vec![self.comp_ref()?])
        }
    }

    fn typed_attr(
        &mut self,
        op: Opcode,
        attr: &str,
        a: &mut Attrs,
        refs: &mut Vec<(Slot, NameRef)>,
    ) -> PResult<()> {
        // a rank-0 pad prints as `padding=` with nothing after it
        if attr == "padding" && !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            a.padding = Some(Vec::new());
            return Ok(());
        }
        self.skip_ws()?;
        let at = self.pos;
        match attr {
            "index" => a.index = Some(self.i64_lit("an index")?),
            "iota_dimension" => a.iota_dimension = Some(self.i64_lit("a dimension")?),
            "dimensions" => a.dimensions = Some(self.int_list()?),
            "dynamic_slice_sizes" => a.dynamic_slice_sizes = Some(self.int_list()?),
            "slice" => a.slice = Some(self.slice_attr()?),
            "padding" => a.padding = Some(self.padding_attr()?),
            "window" => a.window = Some(self.window_attr()?),
            "dim_labels" => a.conv_dims = Some(self.dim_labels()?),
            "feature_group_count" => a.feature_group_count = Some(self.i64_lit("a count")?),
            "batch_group_count" => a.batch_group_count = Some(self.i64_lit("a count")?),
            "lhs_batch_dims" => dot(a).lhs_batch = self.int_list()?,
            "lhs_contracting_dims" => dot(a).lhs_contracting = self.int_list()?,
            "rhs_batch_dims" => dot(a).rhs_batch = self.int_list()?,
            "rhs_contracting_dims" => dot(a).rhs_contracting = self.int_list()?,
            "operand_precision" => {
                self.expect(b'{')?;
                let mut v = Vec::new();
                if !self.eat(b'}')? {
                    loop {
                        v.push(self.ident("a precision")?.0.to_string());
                        if self.eat(b',')? {
                            continue;
                        }
                        self.expect(b'}')?;
                        break;
                    }
                }
                a.precision = Some(v);
            }
            "offset_dims" => gather(a).offset_dims = self.int_list()?,
            "collapsed_slice_dims" => gather(a).collapsed_slice_dims = self.int_list()?,
            "start_index_map" => gather(a).start_index_map = self.int_list()?,
            "operand_batching_dims" => gather(a).operand_batching_dims = self.int_list()?,
            "start_indices_batching_dims" => {
                gather(a).start_indices_batching_dims = self.int_list()?
            }
            "slice_sizes" => gather(a).slice_sizes = self.int_list()?,
            "index_vector_dim" => {
                let v = self.i64_lit("a dimension")?;
                if op == Opcode::Scatter {
                    scatter(a).index_vector_dim = v;
                } else {
                    gather(a).index_vector_dim = v;
                }
            }
            "update_window_dims" => scatter(a).update_window_dims = self.int_list()?,
            "inserted_window_dims" => scatter(a).inserted_window_dims = self.int_list()?,
            "scatter_dims_to_operand_dims" => {
                scatter(a).scatter_dims_to_operand_dims = self.int_list()?
            }
            "input_batching_dims" => scatter(a).input_batching_dims = self.int_list()?,
            "scatter_indices_batching_dims" => {
                scatter(a).scatter_indices_batching_dims = self.int_list()?
            }
            "indices_are_sorted" => a.indices_are_sorted = self.bool_value()?,
            "unique_indices" => a.unique_indices = self.bool_value()?,
            "is_stable" => a.is_stable = self.bool_value()?,
            "direction" => {
                let (w, at) = self.ident("a comparison direction")?;
                a.direction = Some(match ComparisonDirection::from_name(w) {
                    Some(d) => d,
                    None => return fail(at, format!("unknown comparison direction `{w}`")),
                });
            }
            "type" => {
                let (w, at) = self.ident("a comparison type")?;
                a.comparison_type = Some(match ComparisonType::from_name(w) {
                    Some(d) => d,
                    None => return fail(at, format!("unknown comparison type `{w}`")),
                });
            }
            "kind" => {
                let (w, at) = self.ident("a fusion kind")?;
                a.fusion_kind = Some(match FusionKind::from_name(w) {
                    Some(d) => d,
                    None => return fail(at, format!("unknown fusion kind `{w}`")),
                });
            }
            "exponent_bits" => a.exponent_bits = Some(self.i64_lit("a bit count")?),
            "mantissa_bits" => a.mantissa_bits = Some(self.i64_lit("a bit count")?),
            "calls" | "called_computations" => {
                for n in self.one_or_more_names()? {
                    refs.push((Slot::Calls, n));
                }
            }
            "branch_computations" => {
                for n in self.name_list()? {
                    refs.push((Slot::Branches, n));
                }
            }
            "to_apply" => refs.push((Slot::ToApply, self.comp_ref()?)),
            "condition" => refs.push((Slot::Condition, self.comp_ref()?)),
            "body" => refs.push((Slot::Body, self.comp_ref()?)),
            "true_computation" => refs.push((Slot::TrueBranch, self.comp_ref()?)),
            "false_computation" => refs.push((Slot::FalseBranch, self.comp_ref()?)),
            "select" => refs.push((Slot::Select, self.comp_ref()?)),
            "scatter" => refs.push((Slot::Scatter, self.comp_ref()?)),
            "custom_call_target" => {
                if self.peek() != Some(b'"') {
                    return fail(at, format!("expected a string, found {}", self.found()));
                }
                a.custom_call_target = Some(self.string()?.to_string());
            }
            "fft_type" => {
                let (w, at) = self.ident("an fft type")?;
                a.fft_type = Some(match FftType::from_name(w) {
                    Some(t) => t,
                    None => {
                        return fail(
                            at,
                            format!("unknown fft type `{w}` (FFT, IFFT, RFFT or IRFFT)"),
                        )
                    }
                });
            }
            "fft_length" => a.fft_length = Some(self.int_list()?),
            "left_side" => triangular(a).left_side = self.bool_value()?,
            "lower" => triangular(a).lower = self.bool_value()?,
            "unit_diagonal" => triangular(a).unit_diagonal = self.bool_value()?,
            "transpose_a" => {
                let (w, at) = self.ident("a transpose")?;
                triangular(a).transpose_a = Some(match TransposeA::from_name(w) {
                    Some(t) => t,
                    None => {
                        return fail(
                            at,
                            format!(
                                "unknown transpose_a `{w}` (NO_TRANSPOSE, TRANSPOSE or ADJOINT)"
                            ),
                        )
                    }
                });
            }
            "algorithm" if op == Opcode::RngBitGenerator => {
                let (w, at) = self.ident("an rng algorithm")?;
                a.rng_algorithm = Some(match RngAlgorithm::from_name(w) {
                    Some(r) => r,
                    None => {
                        return fail(
                            at,
                            format!(
                                "unknown rng algorithm `{w}` (rng_default, rng_three_fry or rng_philox)"
                            ),
                        )
                    }
                });
            }
            _ => return fail(at, format!("attribute `{attr}` is not handled")),
        }
        Ok(())
    }

    /// `{[a:b], [a:b:s]}`.
    fn slice_attr(&mut self) -> PResult<Vec<SliceDim>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        if self.eat(b'}')? {
            return Ok(out);
        }
        loop {
            self.expect(b'[')?;
            let start = self.i64_lit("a slice start")?;
            self.expect(b':')?;
            let limit = self.i64_lit("a slice limit")?;
            let stride = if self.eat(b':')? {
                self.i64_lit("a slice stride")?
            } else {
                1
            };
            self.expect(b']')?;
            out.push(SliceDim {
                start,
                limit,
                stride,
            });
            if self.eat(b',')? {
                continue;
            }
            self.expect(b'}')?;
            return Ok(out);
        }
    }

    /// `lo_hi[_interior]` groups separated by `x`, directly adjacent.
    fn padding_attr(&mut self) -> PResult<Vec<PadDim>> {
        self.skip_ws()?;
        let mut out = Vec::new();
        loop {
            let mut parts = vec![self.signed_adjacent()?];
            while self.peek() == Some(b'_') {
                self.pos += 1;
                parts.push(self.signed_adjacent()?);
            }
            let (low, high, interior) = match parts[..] {
                [l, h] => (l, h, 0),
                [l, h, i] => (l, h, i),
                _ => return fail(self.pos, "expected `low_high` or `low_high_interior`"),
            };
            out.push(PadDim {
                low,
                high,
                interior,
            });
            if self.peek() == Some(b'x') {
                self.pos += 1;
                continue;
            }
            return Ok(out);
        }
    }

    /// A signed integer with no whitespace before it.
    fn signed_adjacent(&mut self) -> PResult<i64> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.i64_lit("an integer"),
            _ => fail(
                self.pos,
                format!("expected an integer, found {}", self.found()),
            ),
        }
    }

    /// `{size=3x3 stride=2x1 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`.
    fn window_attr(&mut self) -> PResult<Vec<WindowDim>> {
        self.expect(b'{')?;
        let open = self.pos;
        let mut fields: Vec<(&'a str, usize, Vec<Vec<i64>>)> = Vec::new();
        loop {
            if self.eat(b'}')? {
                break;
            }
            let (key, at) = self.ident("a window field")?;
            if !matches!(
                key,
                "size" | "stride" | "pad" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal"
            ) {
                return fail(at, format!("unknown window field `{key}`"));
            }
            if fields.iter().any(|f| f.0 == key) {
                return fail(at, format!("duplicate window field `{key}`"));
            }
            self.expect(b'=')?;
            self.skip_ws()?;
            let mut values = Vec::new();
            loop {
                let mut group = vec![self.signed_adjacent()?];
                while self.peek() == Some(b'_') {
                    self.pos += 1;
                    group.push(self.signed_adjacent()?);
                }
                values.push(group);
                if self.peek() == Some(b'x') {
                    self.pos += 1;
                    continue;
                }
                break;
            }
            fields.push((key, at, values));
        }
        let Some(rank) = fields.first().map(|f| f.2.len()) else {
            return Ok(Vec::new());
        };
        let Some(size) = fields.iter().find(|f| f.0 == "size") else {
            return fail(open, "window has no `size`");
        };
        let mut dims = Vec::with_capacity(rank);
        for g in &size.2 {
            match g[..] {
                [s] => dims.push(WindowDim::new(s)),
                _ => return fail(size.1, "window `size` takes one number per dimension"),
            }
        }
        for (key, at, values) in &fields {
            if values.len() != rank {
                return fail(
                    *at,
                    format!(
                        "window field `{key}` has {} dimensions, expected {rank}",
                        values.len()
                    ),
                );
            }
            for (d, g) in dims.iter_mut().zip(values) {
                match (*key, &g[..]) {
                    ("size", _) => {}
                    ("pad", [lo, hi]) => {
                        d.pad_low = *lo;
                        d.pad_high = *hi;
                    }
                    ("stride", [v]) => d.stride = *v,
                    ("lhs_dilate", [v]) => d.base_dilation = *v,
                    ("rhs_dilate", [v]) => d.window_dilation = *v,
                    ("rhs_reversal", [v @ (0 | 1)]) => d.reversal = *v == 1,
                    _ => return fail(*at, format!("malformed window field `{key}`")),
                }
            }
        }
        Ok(dims)
    }

    /// `b01f_01io->b01f`.
    fn dim_labels(&mut self) -> PResult<ConvDims> {
        self.skip_ws()?;
        let at = self.pos;
        let input = self.raw_ident();
        let (lhs, kernel) = match input.split_once('_') {
            Some(p) => p,
            None => return fail(at, "expected dim_labels like `b01f_01io->b01f`"),
        };
        if !self.b[self.pos..].starts_with(b"->") {
            return fail(self.pos, format!("expected `->`, found {}", self.found()));
        }
        self.pos += 2;
        let out_at = self.pos;
        let output = self.raw_ident();
        let (ib, if_, is) = labels(lhs, b'b', b'f').ok_or_else(|| Failure {
            pos: at,
            msg: format!("malformed input dim labels `{lhs}`"),
        })?;
        let (ki, ko, ks) = labels(kernel, b'i', b'o').ok_or_else(|| Failure {
            pos: at,
            msg: format!("malformed kernel dim labels `{kernel}`"),
        })?;
        let (ob, of, os) = labels(output, b'b', b'f').ok_or_else(|| Failure {
            pos: out_at,
            msg: format!("malformed output dim labels `{output}`"),
        })?;
        if is.len() != ks.len() || is.len() != os.len() {
            return fail(
                at,
                "dim_labels have different numbers of spatial dimensions",
            );
        }
        Ok(ConvDims {
            input_batch: ib,
            input_feature: if_,
            input_spatial: is,
            kernel_input_feature: ki,
            kernel_output_feature: ko,
            kernel_spatial: ks,
            output_batch: ob,
            output_feature: of,
            output_spatial: os,
        })
    }

    // ------------------------------------------------------------- constants

    fn constant(&mut self, shape: &Shape) -> PResult<ConstantData> {
        self.skip_ws()?;
        let start = self.pos;
        match shape {
            Shape::Token => fail(start, "a constant cannot have a token shape"),
            Shape::Tuple(elems) => {
                self.nest(start)?;
                self.expect(b'(')?;
                let mut out = Vec::with_capacity(elems.len());
                for (k, e) in elems.iter().enumerate() {
                    if k > 0 {
                        self.expect(b',')?;
                    }
                    // each element may be written with its shape first;
                    // `(s32[] 1, ...)` is a value and `(s32[], ...) (1, ...)`
                    // a shape and a value, so try a shape and back off
                    if let Some(s) = self.try_element_shape(e)? {
                        if !s.compatible(e) {
                            return fail(
                                self.pos,
                                format!("tuple constant element {k} has shape {s}, expected {e}"),
                            );
                        }
                    }
                    out.push(self.constant(e)?);
                }
                self.expect(b')')?;
                self.unnest();
                Ok(ConstantData::Tuple(out))
            }
            Shape::Array(a) => {
                let mut sink = Sink::new(a.dtype);
                if a.dims.is_empty() {
                    self.element(a.dtype, &mut sink)?;
                } else if self.peek() != Some(b'{') {
                    // `f32[9] constant(0)`: one value for every element
                    // every dim at least 1, so no prefix of the shape is
                    // larger than the element count (which bounds printing)
                    let count = match a.element_count() {
                        Some(n) if (1..=MAX_SPLAT_ELEMENTS).contains(&n) => n as usize,
                        _ => {
                            return fail(
                                start,
                                format!(
                                "a single value can fill from 1 to {MAX_SPLAT_ELEMENTS} elements"
                            ),
                            )
                        }
                    };
                    self.element(a.dtype, &mut sink)?;
                    sink.splat(count);
                } else {
                    self.nested(a, 0, &mut sink)?;
                }
                Ok(sink.finish())
            }
        }
    }

    /// A shape written before a tuple constant's element, if there is one.
    fn try_element_shape(&mut self, elem: &Shape) -> PResult<Option<Shape>> {
        self.skip_ws()?;
        let (save, depth) = (self.pos, self.depth);
        let word = self.raw_ident();
        let shaped = self.peek() == Some(b'[');
        self.pos = save;
        if shaped {
            return self.shape().map(Some);
        }
        if !(word.is_empty() && self.peek() == Some(b'(') && elem.is_tuple()) {
            return Ok(None);
        }
        match self.shape() {
            Ok(s) if self.eat(b'(')? => {
                self.pos -= 1;
                Ok(Some(s))
            }
            _ => {
                self.pos = save;
                self.depth = depth;
                Ok(None)
            }
        }
    }

    /// `{...}` at nesting level `level` of an array literal.
    fn nested(&mut self, a: &ArrayShape, level: usize, sink: &mut Sink) -> PResult<()> {
        self.skip_ws()?;
        let open = self.pos;
        self.nest(open)?;
        self.expect(b'{')?;
        let want = a.dims[level];
        let mut count: i64 = 0;
        let last = level + 1 == a.dims.len();
        if !self.eat(b'}')? {
            loop {
                if count == want {
                    self.skip_ws()?;
                    return fail(
                        self.pos,
                        format!(
                            "too many elements in dimension {level} of the constant (expected {want})"
                        ),
                    );
                }
                if last {
                    self.element(a.dtype, sink)?;
                } else {
                    self.nested(a, level + 1, sink)?;
                }
                count += 1;
                if self.eat(b',')? {
                    continue;
                }
                self.expect(b'}')?;
                break;
            }
        }
        if count != want {
            return fail(
                open,
                format!("dimension {level} of the constant has {count} elements, expected {want}"),
            );
        }
        self.unnest();
        Ok(())
    }

    fn element(&mut self, dtype: ElementType, sink: &mut Sink) -> PResult<()> {
        self.skip_ws()?;
        let at = self.pos;
        match sink {
            Sink::Pred(v) => {
                let b = match self.peek() {
                    Some(b'0'..=b'9') => match self.u64_lit("a pred")? {
                        0 => false,
                        1 => true,
                        _ => return fail(at, "expected `true` or `false`"),
                    },
                    _ => self.bool_value()?,
                };
                if self.peek().is_some_and(is_ident_byte) {
                    return fail(at, "expected `true` or `false`");
                }
                v.push(b);
            }
            Sink::Int(v) => {
                let neg = self.peek() == Some(b'-');
                if neg {
                    self.pos += 1;
                }
                let digits_at = self.pos;
                let mut x: i128 = 0;
                while let Some(c @ b'0'..=b'9') = self.peek() {
                    x = match x
                        .checked_mul(10)
                        .and_then(|x| x.checked_add(i128::from(c - b'0')))
                    {
                        Some(x) => x,
                        None => return fail(at, format!("integer is out of range for {dtype}")),
                    };
                    self.pos += 1;
                }
                if self.pos == digits_at || self.peek().is_some_and(is_ident_byte) {
                    return fail(at, format!("expected an integer of type {dtype}"));
                }
                let x = if neg { -x } else { x };
                if let Some((lo, hi)) = dtype.int_range() {
                    if x < lo || x > hi {
                        return fail(at, format!("integer {x} is out of range for {dtype}"));
                    }
                }
                v.push(x);
            }
            Sink::Float(v) => v.push(self.float()?),
            Sink::Complex(v) => {
                self.expect(b'(')?;
                let re = self.float()?;
                self.expect(b',')?;
                let im = self.float()?;
                self.expect(b')')?;
                v.push((re, im));
            }
        }
        Ok(())
    }

    /// A float: decimal, `nan`, `-nan`, `inf`, `-inf`.
    fn float(&mut self) -> PResult<f64> {
        self.skip_ws()?;
        let start = self.pos;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_')
            || (matches!(self.peek(), Some(b'-' | b'+'))
                && matches!(
                    self.pos.checked_sub(1).and_then(|k| self.b.get(k)),
                    Some(b'e' | b'E')
                ))
        {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        let (neg, body) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let v = match body {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            _ if body
                .bytes()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == b'.')
                && body.bytes().all(|c| {
                    c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+')
                }) =>
            {
                match body.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    Ok(_) => return fail(start, format!("float `{text}` is out of range")),
                    Err(_) => return fail(start, format!("malformed number `{text}`")),
                }
            }
            _ if text.is_empty() => {
                return fail(start, format!("expected a number, found {}", self.found()))
            }
            _ => return fail(start, format!("malformed number `{text}`")),
        };
        Ok(if neg { -v } else { v })
    }
}

/// Element storage while a literal is read.
enum Sink {
    Pred(Vec<bool>),
    Int(Vec<i128>),
    Float(Vec<f64>),
    Complex(Vec<(f64, f64)>),
}

impl Sink {
    fn new(dtype: ElementType) -> Sink {
        match dtype.kind() {
            TypeKind::Pred => Sink::Pred(Vec::new()),
            TypeKind::Signed | TypeKind::Unsigned => Sink::Int(Vec::new()),
            TypeKind::Complex => Sink::Complex(Vec::new()),
            _ => Sink::Float(Vec::new()),
        }
    }
    /// Repeats the one element read so far `count` times.
    fn splat(&mut self, count: usize) {
        fn rep<T: Clone>(v: &mut Vec<T>, count: usize) {
            if let Some(x) = v.first().cloned() {
                *v = vec![x; count];
            }
        }
        match self {
            Sink::Pred(v) => rep(v, count),
            Sink::Int(v) => rep(v, count),
            Sink::Float(v) => rep(v, count),
            Sink::Complex(v) => rep(v, count),
        }
    }
    fn finish(self) -> ConstantData {
        match self {
            Sink::Pred(v) => ConstantData::Pred(v),
            Sink::Int(v) => ConstantData::Int(v),
            Sink::Float(v) => ConstantData::Float(v),
            Sink::Complex(v) => ConstantData::Complex(v),
        }
    }
}

fn dot(a: &mut Attrs) -> &mut super::ir::DotDims {
    a.dot_dims.get_or_insert_with(Default::default)
}

fn gather(a: &mut Attrs) -> &mut super::ir::GatherDims {
    a.gather_dims.get_or_insert_with(Default::default)
}

fn scatter(a: &mut Attrs) -> &mut super::ir::ScatterDims {
    a.scatter_dims.get_or_insert_with(Default::default)
}

fn triangular(a: &mut Attrs) -> &mut TriangularSolveOptions {
    a.triangular_solve.get_or_insert_with(Default::default)
}

/// Attributes with a typed field in [`Attrs`]; parsed typed only when the
/// opcode table lists them for the opcode, verbatim otherwise.
const TYPED_ATTRS: &[&str] = &[
    "index",
    "iota_dimension",
    "dimensions",
    "dynamic_slice_sizes",
    "slice",
    "padding",
    "window",
    "dim_labels",
    "feature_group_count",
    "batch_group_count",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "operand_precision",
    "offset_dims",
    "collapsed_slice_dims",
    "start_index_map",
    "operand_batching_dims",
    "start_indices_batching_dims",
    "slice_sizes",
    "index_vector_dim",
    "update_window_dims",
    "inserted_window_dims",
    "scatter_dims_to_operand_dims",
    "input_batching_dims",
    "scatter_indices_batching_dims",
    "indices_are_sorted",
    "unique_indices",
    "is_stable",
    "direction",
    "type",
    "kind",
    "exponent_bits",
    "mantissa_bits",
    "calls",
    "called_computations",
    "branch_computations",
    "to_apply",
    "condition",
    "body",
    "true_computation",
    "false_computation",
    "select",
    "scatter",
    "custom_call_target",
];

/// Attributes with a typed field for one opcode only: the same name is
/// verbatim on the others that have it (cholesky's `lower`, dot's `algorithm`).
const OP_TYPED_ATTRS: &[(Opcode, &[&str])] = &[
    (Opcode::Fft, &["fft_type", "fft_length"]),
    (
        Opcode::TriangularSolve,
        &["left_side", "lower", "unit_diagonal", "transpose_a"],
    ),
    (Opcode::RngBitGenerator, &["algorithm"]),
];

/// True when `attr` of `op` is parsed into a typed [`Attrs`] field.
pub(crate) fn is_typed(op: Opcode, attr: &str) -> bool {
    (TYPED_ATTRS.contains(&attr) && op.attributes().contains(&attr))
        || OP_TYPED_ATTRS
            .iter()
            .any(|(o, attrs)| *o == op && attrs.contains(&attr))
}

/// Positions of the two named letters and the spatial digits of one dim-label group.
fn labels(s: &str, a: u8, b: u8) -> Option<(i64, i64, Vec<i64>)> {
    let n = s.len();
    if !(2..=12).contains(&n) {
        return None;
    }
    let (mut pa, mut pb) = (None, None);
    let mut spatial = vec![None; n - 2];
    for (k, c) in s.bytes().enumerate() {
        let k = k as i64;
        if c == a && pa.is_none() {
            pa = Some(k);
        } else if c == b && pb.is_none() {
            pb = Some(k);
        } else if c.is_ascii_digit() {
            let slot = spatial.get_mut(usize::from(c - b'0'))?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(k);
        } else {
            return None;
        }
    }
    let spatial: Option<Vec<i64>> = spatial.into_iter().collect();
    Some((pa?, pb?, spatial?))
}

/// Turns names into ids and builds the module.
fn resolve(
    name: String,
    attrs: Vec<(String, String)>,
    comps: Vec<PendingComp>,
    entry: usize,
) -> PResult<Module> {
    let mut comp_ids: HashMap<&str, CompId> = HashMap::with_capacity(comps.len());
    for (k, c) in comps.iter().enumerate() {
        let id = CompId(u32::try_from(k).map_err(|_| Failure {
            pos: c.name.pos,
            msg: "too many computations".into(),
        })?);
        if comp_ids.insert(c.name.name.as_str(), id).is_some() {
            return fail(
                c.name.pos,
                format!("duplicate computation name `{}`", c.name.name),
            );
        }
    }
    let lookup_comp = |instr: &str, r: &NameRef| -> PResult<CompId> {
        comp_ids
            .get(r.name.as_str())
            .copied()
            .ok_or_else(|| Failure {
                pos: r.pos,
                msg: format!(
                    "instruction `{instr}` refers to undefined computation `{}`",
                    r.name
                ),
            })
    };
    let mut out = Vec::with_capacity(comps.len());
    for c in &comps {
        if c.instrs.is_empty() {
            return fail(
                c.name.pos,
                format!("computation `{}` has no instructions", c.name.name),
            );
        }
        let mut ids: HashMap<&str, InstrId> = HashMap::with_capacity(c.instrs.len());
        for (k, i) in c.instrs.iter().enumerate() {
            let id = InstrId(u32::try_from(k).map_err(|_| Failure {
                pos: i.name.pos,
                msg: "too many instructions".into(),
            })?);
            if ids.insert(i.name.name.as_str(), id).is_some() {
                return fail(
                    i.name.pos,
                    format!(
                        "duplicate instruction name `{}` in computation `{}`",
                        i.name.name, c.name.name
                    ),
                );
            }
        }
        let mut operand_ids: Vec<Vec<InstrId>> = Vec::with_capacity(c.instrs.len());
        for i in &c.instrs {
            let mut operands = Vec::with_capacity(i.operands.len());
            for o in &i.operands {
                match ids.get(o.name.as_str()) {
                    Some(&id) => operands.push(id),
                    None => {
                        return fail(
                            o.pos,
                            format!(
                                "instruction `{}` uses undefined operand `{}`",
                                display_name(i),
                                o.name
                            ),
                        )
                    }
                }
            }
            operand_ids.push(operands);
        }
        let shapes = infer_shapes(c, &operand_ids)?;
        let names = final_names(c);
        let mut instructions = Vec::with_capacity(c.instrs.len());
        for (((i, operands), shape), name) in
            c.instrs.iter().zip(operand_ids).zip(shapes).zip(names)
        {
            let mut attrs = i.attrs.clone();
            let (mut t, mut f) = (None, None);
            for (slot, r) in &i.comp_refs {
                let id = lookup_comp(&i.name.name, r)?;
                match slot {
                    Slot::Calls => attrs.calls.push(id),
                    Slot::ToApply => attrs.to_apply = Some(id),
                    Slot::Condition => attrs.condition = Some(id),
                    Slot::Body => attrs.body = Some(id),
                    Slot::Branches => attrs.branch_computations.push(id),
                    Slot::TrueBranch => t = Some((id, r.pos)),
                    Slot::FalseBranch => f = Some((id, r.pos)),
                    Slot::Select => attrs.select = Some(id),
                    Slot::Scatter => attrs.scatter = Some(id),
                }
            }
            match (t, f) {
                (None, None) => {}
                (Some((t, _)), Some((f, _))) => {
                    if !attrs.branch_computations.is_empty() {
                        return fail(
                            i.name.pos,
                            format!(
                                "instruction `{}` has both branch_computations and true/false computations",
                                i.name.name
                            ),
                        );
                    }
                    attrs.branch_computations = vec![t, f];
                    attrs.pred_branches = true;
                }
                (Some((_, pos)), None) | (None, Some((_, pos))) => {
                    return fail(
                        pos,
                        format!(
                            "instruction `{}` needs both true_computation and false_computation",
                            i.name.name
                        ),
                    )
                }
            }
            instructions.push(Instruction {
                name,
                opcode: i.opcode,
                shape,
                operands,
                attrs,
            });
        }
        // a scalar's broadcast may leave `dimensions={}` out; it is kept
        // explicit, as XLA prints it (and as StableHLO reads back)
        for k in 0..instructions.len() {
            let i = &instructions[k];
            let scalar_operand = i.opcode == Opcode::Broadcast
                && i.attrs.dimensions.is_none()
                && i.operands.first().is_some_and(|o| {
                    instructions
                        .get(o.index())
                        .and_then(|x| x.shape.as_array())
                        .is_some_and(|a| a.dims.is_empty())
                });
            if scalar_operand {
                instructions[k].attrs.dimensions = Some(Vec::new());
            }
            canonical_defaults(&mut instructions[k]);
        }
        // like XLA, a computation without ROOT returns its last instruction
        let root = c.root.unwrap_or(c.instrs.len() - 1);
        out.push(Computation {
            name: c.name.name.clone(),
            instructions,
            root: InstrId(root as u32),
            other: c.other.clone(),
        });
    }
    Ok(Module {
        name,
        attrs,
        computations: out,
        entry: CompId(entry as u32),
    })
}

/// The instruction's name as the user sees it (nested ones have none yet).
fn display_name(i: &PendingInstr) -> String {
    if i.synthetic {
        format!("{} operand", i.opcode)
    } else {
        i.name.name.clone()
    }
}

/// Names for nested operand instructions: `opcode.N`, unused in the computation.
fn final_names(c: &PendingComp) -> Vec<String> {
    let mut used: HashSet<String> = c
        .instrs
        .iter()
        .filter(|i| !i.synthetic)
        .map(|i| i.name.name.clone())
        .collect();
    let mut next = 0usize;
    c.instrs
        .iter()
        .map(|i| {
            if !i.synthetic {
                return i.name.name.clone();
            }
            loop {
                let candidate = format!("{}.{next}", i.opcode);
                next += 1;
                if used.insert(candidate.clone()) {
                    return candidate;
                }
            }
        })
        .collect()
}

/// Every instruction's shape, inferring the ones the text left out (operands first).
fn infer_shapes(c: &PendingComp, operands: &[Vec<InstrId>]) -> PResult<Vec<Shape>> {
    let n = c.instrs.len();
    let mut shapes: Vec<Option<Shape>> = c.instrs.iter().map(|i| i.shape.clone()).collect();
    let mut on_stack = vec![false; n];
    for start in 0..n {
        if shapes[start].is_some() {
            continue;
        }
        // (instruction, how many of its operands have been looked at)
        let mut stack = vec![(start, 0usize)];
        on_stack[start] = true;
        while let Some(&mut (k, ref mut next)) = stack.last_mut() {
            if let Some(&o) = operands[k].get(*next) {
                *next += 1;
                if shapes[o.index()].is_some() {
                    continue;
                }
                if on_stack[o.index()] {
                    let i = &c.instrs[k];
                    return fail(
                        i.name.pos,
                        format!(
                            "cannot infer the shape of `{}`: it depends on itself",
                            display_name(i)
                        ),
                    );
                }
                on_stack[o.index()] = true;
                stack.push((o.index(), 0));
                continue;
            }
            let i = &c.instrs[k];
            let ops: Vec<&Shape> = operands[k]
                .iter()
                .filter_map(|o| shapes[o.index()].as_ref())
                .collect();
            match infer_shape(i.opcode, &i.attrs, &ops) {
                Some(s) => shapes[k] = Some(s),
                None => {
                    return fail(
                        i.name.pos,
                        format!(
                            "cannot infer the shape of `{}` ({}); write it explicitly",
                            display_name(i),
                            i.opcode
                        ),
                    )
                }
            }
            on_stack[k] = false;
            stack.pop();
        }
    }
    Ok(shapes.into_iter().flatten().collect())
}

/// The result shape of the few ops XLA's text may leave unshaped.
fn infer_shape(op: Opcode, attrs: &Attrs, ops: &[&Shape]) -> Option<Shape> {
    use super::opcode::Category;
    match op {
        Opcode::Tuple => Some(Shape::Tuple(ops.iter().map(|s| (*s).clone()).collect())),
        Opcode::While | Opcode::Copy | Opcode::OptimizationBarrier => {
            ops.first().map(|s| (*s).clone())
        }
        Opcode::GetTupleElement => ops
            .first()?
            .as_tuple()?
            .get(usize::try_from(attrs.index?).ok()?)
            .cloned(),
        Opcode::Select | Opcode::Clamp => ops.get(1).map(|s| (*s).clone()),
        Opcode::Compare => {
            let a = ops.first()?.as_array()?;
            Some(Shape::Array(ArrayShape {
                dtype: ElementType::Pred,
                ..a.clone()
            }))
        }
        Opcode::Reduce => {
            let dims = attrs.dimensions.as_ref()?;
            let half = ops.len() / 2;
            if half == 0 || half * 2 != ops.len() {
                return None;
            }
            let results: Option<Vec<Shape>> = (0..half)
                .map(|k| {
                    let input = ops[k].as_array()?;
                    let init = ops[half + k].as_array()?;
                    let kept: Vec<i64> = input
                        .dims
                        .iter()
                        .enumerate()
                        .filter(|(d, _)| !dims.contains(&(*d as i64)))
                        .map(|(_, &s)| s)
                        .collect();
                    Some(Shape::array(init.dtype, kept))
                })
                .collect();
            let mut results = results?;
            if results.len() == 1 {
                results.pop()
            } else {
                Some(Shape::Tuple(results))
            }
        }
        _ if matches!(
            op.category(),
            Category::ElementwiseUnary | Category::ElementwiseBinary
        ) && op != Opcode::IsFinite =>
        {
            ops.first().map(|s| (*s).clone())
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
