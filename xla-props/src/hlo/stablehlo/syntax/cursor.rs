//! The cursor over the file's bytes: whitespace and comments, punctuation,
//! identifiers, names, value references, strings, numbers, nesting depth.

use super::ast::{err, Scalar, ValueRef, R};

/// Regions, lists and types nested deeper than this are rejected (guards the stack).
pub const MAX_DEPTH: usize = 64;

pub(super) struct Cursor<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
    pub(super) end: usize,
    pub(super) depth: usize,
}

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'-')
}

impl<'a> Cursor<'a> {
    /// Items separated by `,` up to `close` (the opening bracket already
    /// read; possibly no item), each read by `item`.
    pub(super) fn list_until<T>(
        &mut self,
        close: &str,
        mut item: impl FnMut(&mut Self) -> R<T>,
    ) -> R<Vec<T>> {
        let mut out = Vec::new();
        if !self.eat(close) {
            loop {
                out.push(item(self)?);
                if self.eat(close) {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(out)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.s[self.pos])
    }

    pub(super) fn rest_starts(&self, t: &str) -> bool {
        self.s[self.pos..self.end].starts_with(t.as_bytes())
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.rest_starts("//") {
                while let Some(b) = self.peek() {
                    if b == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Skips whitespace, then eats `t` if it is next.
    pub(super) fn eat(&mut self, t: &str) -> bool {
        self.skip_ws();
        if self.rest_starts(t) {
            // a word must not continue into an identifier (`dims` vs `dimsx`)
            let word = t.bytes().last().is_some_and(is_ident);
            let next = self.s.get(self.pos + t.len()).copied();
            if word && self.pos + t.len() < self.end && next.is_some_and(is_ident) {
                return false;
            }
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, t: &str) -> R<()> {
        if self.eat(t) {
            Ok(())
        } else {
            let found = self.describe_next();
            err(self.pos, format!("expected `{t}`, found {found}"))
        }
    }

    pub(super) fn describe_next(&mut self) -> String {
        self.skip_ws();
        if self.pos >= self.end {
            return "end of input".into();
        }
        let mut e = self.pos;
        while e < self.end && e - self.pos < 24 && !self.s[e].is_ascii_whitespace() {
            e += 1;
        }
        if e == self.pos {
            e += 1;
        }
        format!("`{}`", String::from_utf8_lossy(&self.s[self.pos..e]))
    }

    pub(super) fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(self.pos, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A bare identifier (letters, digits, `_ . $ -`), or None.
    pub(super) fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        while self.peek().is_some_and(is_ident) {
            // `->` ends an identifier
            if self.peek() == Some(b'-') && self.s.get(self.pos + 1) == Some(&b'>') {
                break;
            }
            self.pos += 1;
        }
        Some(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    pub(super) fn expect_ident(&mut self, what: &str) -> R<String> {
        match self.ident() {
            Some(s) => Ok(s),
            None => {
                let found = self.describe_next();
                err(self.pos, format!("expected {what}, found {found}"))
            }
        }
    }

    /// `%name` (after a `%` or `@` sigil): letters, digits, `_ $ .`.
    pub(super) fn sigil_name(&mut self, sigil: u8) -> R<String> {
        self.skip_ws();
        if self.peek() != Some(sigil) {
            let found = self.describe_next();
            return err(
                self.pos,
                format!("expected `{}`-name, found {found}", sigil as char),
            );
        }
        self.pos += 1;
        if sigil == b'@' && self.peek() == Some(b'"') {
            return self.string();
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-'))
        {
            self.pos += 1;
        }
        if start == self.pos {
            return err(start, "empty name");
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    pub(super) fn value_ref(&mut self) -> R<ValueRef> {
        self.skip_ws();
        let pos = self.pos;
        let name = self.sigil_name(b'%')?;
        let index = if self.peek() == Some(b'#') {
            self.pos += 1;
            Some(self.usize()?)
        } else {
            None
        };
        Ok(ValueRef { name, index, pos })
    }

    pub(super) fn usize(&mut self) -> R<usize> {
        self.skip_ws();
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or((start, "expected a number".to_string()))
    }

    pub(super) fn string(&mut self) -> R<String> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() != Some(b'"') {
            let found = self.describe_next();
            return err(self.pos, format!("expected a string, found {found}"));
        }
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return err(start, "unterminated string"),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'n') => out.push(b'\n'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(h) if h.is_ascii_hexdigit() => {
                            let hex = self.s.get(self.pos..self.pos + 2).unwrap_or(&[]);
                            let v = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or((self.pos, "bad escape in string".to_string()))?;
                            out.push(v);
                            self.pos += 1;
                        }
                        _ => return err(self.pos, "bad escape in string"),
                    }
                    self.pos += 1;
                }
                Some(b) => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// An integer, float or hexadecimal literal.
    pub(super) fn number(&mut self) -> R<Scalar> {
        self.skip_ws();
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if neg || self.peek() == Some(b'+') {
            self.pos += 1;
        }
        if self.rest_starts("0x") || self.rest_starts("0X") {
            self.pos += 2;
            let hs = self.pos;
            while self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let text = std::str::from_utf8(&self.s[hs..self.pos]).unwrap_or("");
            let v = u128::from_str_radix(text, 16)
                .map_err(|_| (start, "bad hexadecimal literal".to_string()))?;
            if neg {
                return Ok(Scalar::Int(
                    -(i128::try_from(v)
                        .map_err(|_| (start, "hexadecimal literal out of range".to_string()))?),
                ));
            }
            return Ok(Scalar::Hex(v));
        }
        for word in ["inf", "nan"] {
            if self.rest_starts(word) {
                self.pos += 3;
                let v = if word == "inf" {
                    f64::INFINITY
                } else {
                    f64::NAN
                };
                return Ok(Scalar::Float(if neg { -v } else { v }));
            }
        }
        let mut float = false;
        while let Some(b) = self.peek() {
            if b.is_ascii_digit() {
                self.pos += 1;
            } else if b == b'.' || b == b'e' || b == b'E' {
                float = true;
                self.pos += 1;
                if matches!(b, b'e' | b'E') && matches!(self.peek(), Some(b'+' | b'-')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if text.is_empty() || text == "-" || text == "+" {
            self.pos = start;
            let found = self.describe_next();
            return err(start, format!("expected a number, found {found}"));
        }
        if float {
            text.parse::<f64>()
                .map(Scalar::Float)
                .map_err(|_| (start, format!("bad float literal `{text}`")))
        } else {
            text.parse::<i128>()
                .map(Scalar::Int)
                .map_err(|_| (start, format!("bad integer literal `{text}`")))
        }
    }

    pub(super) fn int(&mut self) -> R<i64> {
        let pos = self.pos;
        match self.number()? {
            Scalar::Int(v) => i64::try_from(v).map_err(|_| (pos, "integer out of range".into())),
            Scalar::Hex(v) => i64::try_from(v).map_err(|_| (pos, "integer out of range".into())),
            _ => err(pos, "expected an integer"),
        }
    }

    /// `[1, 2, 3]`.
    pub(super) fn int_list(&mut self) -> R<Vec<i64>> {
        self.expect("[")?;
        let mut out = Vec::new();
        if self.eat("]") {
            return Ok(out);
        }
        loop {
            out.push(self.int()?);
            if self.eat("]") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    // ---- module and functions ----
}
