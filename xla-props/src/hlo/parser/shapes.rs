//! Shapes, layouts and constant literals (nested arrays, splats, floats).

use super::error::{fail, PResult};
use super::lexer::{is_ident_byte, Parser, MAX_SPLAT_ELEMENTS};
use crate::hlo::dtype::{ElementType, TypeKind};
use crate::hlo::ir::ConstantData;
use crate::hlo::shape::{ArrayShape, Layout, Shape};

impl Parser<'_> {
    pub(super) fn shape(&mut self) -> PResult<Shape> {
        self.skip_ws()?;
        let start = self.pos;
        if self.peek() == Some(b'(') {
            self.nest(start)?;
            self.pos += 1;
            let elems = self.list_until(b')', Self::shape)?;
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
        let dims = self.list_until(b']', |p| {
            p.skip_ws()?;
            if matches!(p.peek(), Some(b'<' | b'?')) {
                return fail(p.pos, "dynamic dimensions are not supported");
            }
            let at = p.pos;
            let d = p.u64_lit("a dimension size")?;
            i64::try_from(d).or_else(|_| fail(at, "dimension size is too large"))
        })?;
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

    pub(super) fn layout(&mut self) -> PResult<Layout> {
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

    pub(super) fn constant(&mut self, shape: &Shape) -> PResult<ConstantData> {
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
    pub(super) fn try_element_shape(&mut self, elem: &Shape) -> PResult<Option<Shape>> {
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
    pub(super) fn nested(&mut self, a: &ArrayShape, level: usize, sink: &mut Sink) -> PResult<()> {
        self.skip_ws()?;
        let open = self.pos;
        self.nest(open)?;
        let want = a.dims[level];
        let mut count: i64 = 0;
        let last = level + 1 == a.dims.len();
        self.braced_list(|p| {
            if count == want {
                p.skip_ws()?;
                return fail(
                    p.pos,
                    format!(
                        "too many elements in dimension {level} of the constant (expected {want})"
                    ),
                );
            }
            if last {
                p.element(a.dtype, sink)?;
            } else {
                p.nested(a, level + 1, sink)?;
            }
            count += 1;
            Ok(())
        })?;
        if count != want {
            return fail(
                open,
                format!("dimension {level} of the constant has {count} elements, expected {want}"),
            );
        }
        self.unnest();
        Ok(())
    }

    pub(super) fn element(&mut self, dtype: ElementType, sink: &mut Sink) -> PResult<()> {
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
                let Some(x) = self.decimal().and_then(|x| i128::try_from(x).ok()) else {
                    return fail(at, format!("integer is out of range for {dtype}"));
                };
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
    pub(super) fn float(&mut self) -> PResult<f64> {
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
pub(super) enum Sink {
    Pred(Vec<bool>),
    Int(Vec<i128>),
    Float(Vec<f64>),
    Complex(Vec<(f64, f64)>),
}

impl Sink {
    pub(super) fn new(dtype: ElementType) -> Sink {
        match dtype.kind() {
            TypeKind::Pred => Sink::Pred(Vec::new()),
            TypeKind::Signed | TypeKind::Unsigned => Sink::Int(Vec::new()),
            TypeKind::Complex => Sink::Complex(Vec::new()),
            _ => Sink::Float(Vec::new()),
        }
    }
    /// Repeats the one element read so far `count` times.
    pub(super) fn splat(&mut self, count: usize) {
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
    pub(super) fn finish(self) -> ConstantData {
        match self {
            Sink::Pred(v) => ConstantData::Pred(v),
            Sink::Int(v) => ConstantData::Int(v),
            Sink::Float(v) => ConstantData::Float(v),
            Sink::Complex(v) => ConstantData::Complex(v),
        }
    }
}
