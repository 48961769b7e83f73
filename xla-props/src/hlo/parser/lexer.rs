//! The parser's state and its lexical layer: whitespace and comments,
//! punctuation, identifiers, names, literals, strings, nesting depth, raw
//! attribute values, and lists of integers and names.

use super::error::{fail, PResult};
use super::pending::{NameRef, PendingComp, PendingInstr};

/// How deeply tuple shapes, tuple constants and array literals may nest.
pub const MAX_NESTING: usize = 200;

/// How deeply instructions may nest inside operand lists
/// (`add(f32[] negate(f32[] parameter(0)), ...)`); each level costs far more
/// stack than a level of a shape or a literal.
pub const MAX_OPERAND_NESTING: usize = 32;

/// The most elements a single-value constant of an array shape
/// (`f32[9] constant(0)`) may expand to.
pub const MAX_SPLAT_ELEMENTS: u64 = 1 << 20;

pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
    pub(super) depth: usize,
    /// Nested operand instructions of the instruction being read, in the
    /// order they must precede it.
    pub(super) nested: Vec<PendingInstr>,
    /// How many nested instructions have been read (for unique temporary names).
    pub(super) nested_count: usize,
    /// How deeply the instruction being read is nested in operand lists.
    pub(super) operand_depth: usize,
    /// Computations written inline in an attribute (`to_apply={ ... }`),
    /// named by the parser, waiting to join the module before their user's
    /// computation.
    pub(super) inline: Vec<PendingComp>,
    /// How many inline computations have been read (for unique names).
    pub(super) inline_total: usize,
}

pub(super) fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    pub(super) fn new(text: &'a str) -> Parser<'a> {
        Parser {
            src: text,
            b: text.as_bytes(),
            pos: 0,
            depth: 0,
            nested: Vec::new(),
            inline: Vec::new(),
            inline_total: 0,
            nested_count: 0,
            operand_depth: 0,
        }
    }

    // ---------------------------------------------------------------- lexing

    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos.checked_add(k)?).copied()
    }

    /// Skips whitespace and `//`, `/* */` comments.
    pub(super) fn skip_ws(&mut self) -> PResult<()> {
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
    pub(super) fn found(&self) -> String {
        match self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "end of file".to_string(),
            Some(c) if c.is_ascii_graphic() => format!("`{c}`"),
            Some(c) => format!("{c:?}"),
        }
    }

    pub(super) fn expect(&mut self, c: u8) -> PResult<()> {
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
    pub(super) fn eat(&mut self, c: u8) -> PResult<bool> {
        self.skip_ws()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An identifier at the cursor (no whitespace skipping), possibly empty.
    pub(super) fn raw_ident(&mut self) -> &'a str {
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
    pub(super) fn ident(&mut self, what: &str) -> PResult<(&'a str, usize)> {
        self.skip_ws()?;
        let start = self.pos;
        let s = self.raw_ident();
        if s.is_empty() {
            return fail(start, format!("expected {what}, found {}", self.found()));
        }
        Ok((s, start))
    }

    /// A name, with an optional `%` prefix (dropped).
    pub(super) fn name(&mut self, what: &str) -> PResult<NameRef> {
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

    /// True, `kw` read, when the identifier at the cursor (after whitespace)
    /// is `kw`.
    pub(super) fn eat_keyword(&mut self, kw: &str) -> PResult<bool> {
        self.skip_ws()?;
        let rest = &self.b[self.pos..];
        let at = rest.starts_with(kw.as_bytes())
            && !matches!(rest.get(kw.len()), Some(&c) if is_ident_byte(c));
        if at {
            self.pos += kw.len();
        }
        Ok(at)
    }

    /// An unsigned decimal integer that fits in u64.
    pub(super) fn u64_lit(&mut self, what: &str) -> PResult<u64> {
        self.skip_ws()?;
        let start = self.pos;
        let Some(v) = self.decimal().and_then(|v| u64::try_from(v).ok()) else {
            return fail(start, format!("{what} is too large"));
        };
        if self.pos == start {
            return fail(start, format!("expected {what}, found {}", self.found()));
        }
        Ok(v)
    }

    /// The decimal digits at the cursor as a number (0 when there are none),
    /// or `None` when they overflow `u128`.
    pub(super) fn decimal(&mut self) -> Option<u128> {
        let mut v: u128 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v.checked_mul(10)?.checked_add(u128::from(c - b'0'))?;
            self.pos += 1;
        }
        Some(v)
    }

    /// A signed decimal integer that fits in i64.
    pub(super) fn i64_lit(&mut self, what: &str) -> PResult<i64> {
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

    pub(super) fn nest(&mut self, pos: usize) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return fail(pos, format!("nesting deeper than {MAX_NESTING} levels"));
        }
        Ok(())
    }

    pub(super) fn unnest(&mut self) {
        self.depth -= 1;
    }

    /// Scans a string literal at the cursor (which is at `"`); returns its
    /// text between the quotes, escapes as written.
    pub(super) fn string(&mut self) -> PResult<&'a str> {
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
    pub(super) fn raw_value(&mut self) -> PResult<String> {
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
        let mut text = self.src[start..self.pos].to_string();
        // replica groups over a mesh: `mesh['a'=2,'b'=4] {'b'}`, one value
        if text.starts_with("mesh[") && text.ends_with(']') {
            let save = self.pos;
            self.skip_ws()?;
            if self.peek() == Some(b'{') {
                text.push(' ');
                text.push_str(&self.raw_value()?);
            } else {
                self.pos = save;
            }
        }
        Ok(text)
    }

    /// `name=value` pairs after a `,`, verbatim.
    pub(super) fn raw_attr_list(&mut self) -> PResult<Vec<(String, String)>> {
        let mut out = Vec::new();
        while self.eat(b',')? {
            let (name, _) = self.ident("an attribute name")?;
            self.expect(b'=')?;
            out.push((name.to_string(), self.raw_value()?));
        }
        Ok(out)
    }

    // ---------------------------------------------------------------- shapes

    /// `{item, item, ...}` (possibly empty), each item read by `item`.
    pub(super) fn braced_list<T>(
        &mut self,
        item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect(b'{')?;
        self.list_until(b'}', item)
    }

    /// `item, item, ...` (possibly empty) up to and including `close`, its
    /// opening bracket already read; each item read by `item`.
    pub(super) fn list_until<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        if self.eat(close)? {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(b',')? {
                continue;
            }
            self.expect(close)?;
            return Ok(out);
        }
    }

    pub(super) fn int_list(&mut self) -> PResult<Vec<i64>> {
        self.braced_list(|p| p.i64_lit("an integer"))
    }

    pub(super) fn bool_value(&mut self) -> PResult<bool> {
        let (w, at) = self.ident("`true` or `false`")?;
        match w {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => fail(at, format!("expected `true` or `false`, found `{w}`")),
        }
    }

    pub(super) fn name_list(&mut self) -> PResult<Vec<NameRef>> {
        self.braced_list(|p| p.name("a computation name"))
    }

    /// The name of a called computation.
    pub(super) fn comp_ref(&mut self) -> PResult<NameRef> {
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
    pub(super) fn one_or_more_names(&mut self) -> PResult<Vec<NameRef>> {
        self.skip_ws()?;
        if self.peek() == Some(b'{') {
            self.name_list()
        } else {
            Ok(vec![self.comp_ref()?])
        }
    }
}
