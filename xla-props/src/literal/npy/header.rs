//! The `.npy` header: the Python dict literal it is written in (`{'descr':
//! '<f4', 'fortran_order': False, 'shape': (2, 3), }`), read by a small
//! parser of Python's literal syntax, and what its `descr` says.

use super::{header_err, Descr, Header, ML_DTYPES_NAMES};
use crate::hlo::ElementType;
use crate::literal::LiteralError;

/// Nesting limit for the header's Python literal (NumPy's own headers nest 3 deep).
const MAX_DEPTH: usize = 8;

pub(super) fn parse_header_dict(text: &str) -> Result<Header, LiteralError> {
    let mut p = PyParser {
        s: text.as_bytes(),
        pos: 0,
    };
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(header_err(format!(
            "unexpected text after the header dict at byte {}",
            p.pos
        )));
    }
    let Py::Dict(items) = v else {
        return Err(header_err("the header is not a dict"));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in items {
        match k {
            Py::Str(k) if k == "descr" => descr = Some(v),
            Py::Str(k) if k == "fortran_order" => fortran = Some(v),
            Py::Str(k) if k == "shape" => shape = Some(v),
            other => {
                return Err(header_err(format!(
                    "unexpected key {other} in the header dict"
                )))
            }
        }
    }
    let missing = |k: &str| header_err(format!("the header dict has no '{k}'"));
    let descr = descr.ok_or_else(|| missing("descr"))?;
    let fortran_order = match fortran.ok_or_else(|| missing("fortran_order"))? {
        Py::Bool(b) => b,
        other => {
            return Err(header_err(format!(
                "fortran_order is {other}, not True or False"
            )))
        }
    };
    let dims = match shape.ok_or_else(|| missing("shape"))? {
        Py::Tuple(items) => items
            .into_iter()
            .map(|d| match d {
                Py::Int(n) => i64::try_from(n)
                    .ok()
                    .filter(|&n| n >= 0)
                    .ok_or_else(|| header_err(format!("shape dimension {n} is out of range"))),
                other => Err(header_err(format!(
                    "shape dimension {other} is not an integer"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        other => return Err(header_err(format!("shape is {other}, not a tuple"))),
    };
    let descr_text = descr.to_string();
    let (descr, big_endian) = parse_descr(&descr)?;
    Ok(Header {
        descr,
        descr_text,
        big_endian,
        fortran_order,
        dims,
    })
}

/// Parses a descr: a typestr like `'<f4'`, or a one-field structured descr
/// `[('bfloat16', '|V2')]`. Returns the type and whether it is big-endian.
fn parse_descr(d: &Py) -> Result<(Descr, bool), LiteralError> {
    match d {
        Py::Str(s) => parse_typestr(s),
        Py::List(fields) => {
            let [Py::Tuple(field)] = fields.as_slice() else {
                return Err(header_err(format!(
                    "unsupported descr {d}: only one-field structured descrs are read"
                )));
            };
            let [Py::Str(name), Py::Str(typestr)] = field.as_slice() else {
                return Err(header_err(format!("unsupported descr {d}")));
            };
            let (inner, big) = parse_typestr(typestr)?;
            let named = ML_DTYPES_NAMES
                .iter()
                .find(|(n, _)| n == name)
                .map(|&(_, t)| t)
                .or_else(|| name.parse::<ElementType>().ok().filter(|t| !t.is_complex()));
            match named {
                Some(t) => {
                    let size = match inner {
                        Descr::Known(k) => k.byte_size(),
                        Descr::Opaque(n) => n,
                        Descr::Float8 => 1,
                    };
                    if size != t.byte_size() {
                        return Err(header_err(format!(
                            "descr {d}: {name} takes {} bytes, not {size}",
                            t.byte_size()
                        )));
                    }
                    Ok((Descr::Known(t), big))
                }
                None => Ok((inner, big)),
            }
        }
        other => Err(header_err(format!(
            "descr {other} is not a string or a list"
        ))),
    }
}

/// The element types `.npy` files hold natively (`b1`, `i1` to `i8`, `u1`
/// to `u8`, `f2` to `f8`); others are written as ml_dtypes' records.
pub(super) const NATIVE: [ElementType; 12] = {
    use ElementType::*;
    [Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, F32, F64]
};

/// The numpy kind letter of a [`NATIVE`] type: `b`, `i`, `u` or `f`.
pub(super) fn npy_kind(t: ElementType) -> char {
    match t {
        ElementType::Pred => 'b',
        t if t.is_float() => 'f',
        t if t.is_signed_int() => 'i',
        _ => 'u',
    }
}

fn parse_typestr(s: &str) -> Result<(Descr, bool), LiteralError> {
    let unsupported = || header_err(format!("unsupported descr '{s}'"));
    if s == "?" {
        return Ok((Descr::Known(ElementType::Pred), false));
    }
    let (order, rest) = match s.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &s[1..]),
        _ => ('|', s),
    };
    let mut chars = rest.chars();
    let kind = chars.next().ok_or_else(unsupported)?;
    let size: usize = chars.as_str().parse().map_err(|_| unsupported())?;
    let native = NATIVE
        .iter()
        .find(|&&t| npy_kind(t) == kind && t.byte_size() == size);
    let t = match (native, kind, size) {
        (Some(&t), _, _) => t,
        // ml_dtypes' float8_e5m2 reports itself as 'f1'
        (None, 'f', 1) => return Ok((Descr::Float8, false)),
        (None, 'V', 1 | 2 | 4 | 8) => return Ok((Descr::Opaque(size), false)),
        _ => return Err(unsupported()),
    };
    let big = match order {
        '>' => true,
        '=' => cfg!(target_endian = "big"),
        _ => false,
    };
    Ok((Descr::Known(t), big && t.byte_size() > 1))
}

/// The subset of Python literals that `.npy` headers use.
#[derive(Clone, Debug, PartialEq)]
enum Py {
    Str(String),
    Int(i128),
    Bool(bool),
    None,
    Tuple(Vec<Py>),
    List(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

impl std::fmt::Display for Py {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seq = |f: &mut std::fmt::Formatter<'_>, items: &[Py], open: &str, close: &str| {
            f.write_str(open)?;
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{x}")?;
            }
            if open == "(" && items.len() == 1 {
                f.write_str(",")?;
            }
            f.write_str(close)
        };
        match self {
            Py::Str(s) => write!(f, "'{s}'"),
            Py::Int(n) => write!(f, "{n}"),
            Py::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Py::None => f.write_str("None"),
            Py::Tuple(t) => seq(f, t, "(", ")"),
            Py::List(t) => seq(f, t, "[", "]"),
            Py::Dict(items) => {
                f.write_str("{")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

struct PyParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl PyParser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn err(&self, what: &str) -> LiteralError {
        header_err(format!("{what} at byte {} of the header dict", self.pos))
    }

    fn value(&mut self, depth: usize) -> Result<Py, LiteralError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        match self.peek() {
            None => Err(self.err("unexpected end")),
            Some(b'{') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        return Ok(Py::Dict(items));
                    }
                    let k = self.value(depth + 1)?;
                    if self.peek() != Some(b':') {
                        return Err(self.err("expected ':'"));
                    }
                    self.pos += 1;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(open @ (b'(' | b'[')) => {
                self.pos += 1;
                let close = if open == b'(' { b')' } else { b']' };
                let mut items = Vec::new();
                let mut trailing_comma = false;
                loop {
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        // (x) without a comma is just x in Python
                        if open == b'(' && items.len() == 1 && !trailing_comma {
                            return Ok(items.remove(0));
                        }
                        return Ok(if open == b'(' {
                            Py::Tuple(items)
                        } else {
                            Py::List(items)
                        });
                    }
                    items.push(self.value(depth + 1)?);
                    trailing_comma = false;
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            trailing_comma = true;
                        }
                        Some(c) if c == close => {}
                        _ => return Err(self.err("expected ',' or a closing bracket")),
                    }
                }
            }
            Some(q @ (b'\'' | b'"')) => {
                self.pos += 1;
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos] != q {
                    if self.s[self.pos] == b'\\' {
                        return Err(self.err("escapes in strings are not supported"));
                    }
                    self.pos += 1;
                }
                if self.pos >= self.s.len() {
                    return Err(self.err("unterminated string"));
                }
                let s = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                self.pos += 1;
                Ok(Py::Str(s))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => {
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                let n: i128 = text.parse().map_err(|_| {
                    header_err(format!("integer {text} is out of range or malformed"))
                })?;
                // Python 2 longs: 3L
                if matches!(self.s.get(self.pos), Some(b'L' | b'l')) {
                    self.pos += 1;
                }
                Ok(Py::Int(n))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphanumeric() {
                    self.pos += 1;
                }
                match &self.s[start..self.pos] {
                    b"True" => Ok(Py::Bool(true)),
                    b"False" => Ok(Py::Bool(false)),
                    b"None" => Ok(Py::None),
                    _ => {
                        self.pos = start;
                        Err(self.err("unexpected name"))
                    }
                }
            }
            Some(_) => Err(self.err("unexpected character")),
        }
    }
}
