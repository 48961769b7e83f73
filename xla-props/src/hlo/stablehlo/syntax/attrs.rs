//! Attributes: dictionaries, arrays, `dense<...>` literals, `#stablehlo.*`
//! attributes and convolution dimension labels.

use super::ast::{err, Attr, Dense, Scalar, R};
use super::cursor::Cursor;
use super::types::element_type_named;

impl Cursor<'_> {
    /// `{name = value, name, ...}`.
    pub(super) fn attr_dict(&mut self) -> R<Vec<(String, Attr)>> {
        self.enter()?;
        self.expect("{")?;
        let mut out = Vec::new();
        if !self.eat("}") {
            loop {
                self.skip_ws();
                let name = if self.peek() == Some(b'"') {
                    self.string()?
                } else {
                    self.expect_ident("an attribute name")?
                };
                let v = if self.eat("=") {
                    self.attr()?
                } else {
                    Attr::Unit
                };
                out.push((name, v));
                if self.eat("}") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.leave();
        Ok(out)
    }

    /// One attribute value, with an optional `: type` suffix dropped.
    pub(super) fn attr(&mut self) -> R<Attr> {
        self.enter()?;
        self.skip_ws();
        let pos = self.pos;
        let a = match self.peek() {
            None => return err(pos, "expected an attribute, found end of input"),
            Some(b'"') => Attr::Str(self.string()?),
            Some(b'@') => Attr::Symbol(self.sigil_name(b'@')?),
            Some(b'[') => {
                self.pos += 1;
                let items = self.list_until("]", |p| p.attr())?;
                Attr::List(items)
            }
            Some(b'{') => Attr::Dict(self.attr_dict()?),
            Some(b'#') => self.hash_attr()?,
            Some(b) if b.is_ascii_digit() || b == b'-' || b == b'+' => match self.number()? {
                Scalar::Int(v) => Attr::Int(v),
                Scalar::Float(v) => Attr::Float(v),
                Scalar::Hex(v) => Attr::Int(v as i128),
                _ => return err(pos, "bad number"),
            },
            Some(_) => {
                if self.eat("dense") {
                    self.dense()?
                } else if self.eat("array") {
                    self.array_attr()?
                } else if self.rest_starts("tensor<") {
                    Attr::Type(self.ty()?)
                } else {
                    match self.ident() {
                        Some(w) if w == "true" => Attr::Bool(true),
                        Some(w) if w == "false" => Attr::Bool(false),
                        Some(w) if w == "unit" => Attr::Unit,
                        Some(w) => Attr::Word(w),
                        None => {
                            let found = self.describe_next();
                            return err(pos, format!("expected an attribute, found {found}"));
                        }
                    }
                }
            }
        };
        // `42 : i64`, `1.0 : f32`: the scalar type suffix does not matter here
        if matches!(a, Attr::Int(_) | Attr::Float(_) | Attr::Bool(_)) {
            let save = self.pos;
            if self.eat(":") {
                match self.ident() {
                    Some(t) if element_type_named(&t).is_some() || t == "index" => {}
                    _ => self.pos = save,
                }
            }
        }
        self.leave();
        Ok(a)
    }

    pub(super) fn array_attr(&mut self) -> R<Attr> {
        self.expect("<")?;
        let pos = self.pos;
        let et = self.expect_ident("an element type")?;
        if !matches!(et.as_str(), "i64" | "i32" | "i1") {
            return err(pos, format!("unsupported array element type `{et}`"));
        }
        let mut out = Vec::new();
        if self.eat(":") {
            loop {
                self.skip_ws();
                if et == "i1" {
                    match self.ident().as_deref() {
                        Some("true") => out.push(1),
                        Some("false") => out.push(0),
                        _ => return err(self.pos, "expected `true` or `false`"),
                    }
                } else {
                    out.push(self.int()?);
                }
                if self.eat(">") {
                    break;
                }
                self.expect(",")?;
            }
        } else {
            self.expect(">")?;
        }
        Ok(Attr::Array(out))
    }

    pub(super) fn dense(&mut self) -> R<Attr> {
        self.expect("<")?;
        self.skip_ws();
        let d = if self.eat(">") {
            Dense::Empty
        } else {
            let d = if self.peek() == Some(b'"') {
                let pos = self.pos;
                let s = self.string()?;
                let hex = s
                    .strip_prefix("0x")
                    .ok_or((pos, "a dense string must be a 0x hex blob".to_string()))?;
                // Digits are checked as ASCII bytes first: slicing the text
                // by byte pairs would split a multi-byte character (a panic,
                // found by the fuzzer), and `from_str_radix` takes a sign.
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return err(pos, "bad hex digit in a dense blob");
                }
                if hex.len() % 2 != 0 {
                    return err(pos, "odd number of hex digits in a dense blob");
                }
                let bytes = (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| (pos, "bad hex digit in a dense blob".to_string()))?;
                Dense::Blob(bytes)
            } else if self.peek() == Some(b'[') {
                let mut flat = Vec::new();
                let mut dims = Vec::new();
                self.dense_list(0, &mut flat, &mut dims)?;
                Dense::List(flat, dims.into_iter().map(|d| d.unwrap_or(0)).collect())
            } else {
                Dense::Splat(self.dense_scalar()?)
            };
            self.expect(">")?;
            d
        };
        self.expect(":")?;
        let t = self.ty()?;
        Ok(Attr::Dense(d, t))
    }

    pub(super) fn dense_list(
        &mut self,
        level: usize,
        flat: &mut Vec<Scalar>,
        dims: &mut Vec<Option<usize>>,
    ) -> R<()> {
        self.enter()?;
        let pos = self.pos;
        self.expect("[")?;
        if dims.len() <= level {
            dims.resize(level + 1, None);
        }
        let mut n = 0;
        let mut nested = None;
        if !self.eat("]") {
            loop {
                self.skip_ws();
                let is_list = self.peek() == Some(b'[');
                if *nested.get_or_insert(is_list) != is_list {
                    return err(self.pos, "ragged dense list");
                }
                if is_list {
                    self.dense_list(level + 1, flat, dims)?;
                } else {
                    if dims.len() > level + 1 {
                        return err(self.pos, "ragged dense list");
                    }
                    flat.push(self.dense_scalar()?);
                }
                n += 1;
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        match dims[level] {
            None => dims[level] = Some(n),
            Some(m) if m != n => return err(pos, "ragged dense list"),
            Some(_) => {}
        }
        self.leave();
        Ok(())
    }

    pub(super) fn dense_scalar(&mut self) -> R<Scalar> {
        self.skip_ws();
        if self.eat("true") {
            return Ok(Scalar::Bool(true));
        }
        if self.eat("false") {
            return Ok(Scalar::Bool(false));
        }
        if self.eat("(") {
            let re = self.dense_scalar()?;
            self.expect(",")?;
            let im = self.dense_scalar()?;
            self.expect(")")?;
            return Ok(Scalar::Complex(Box::new(re), Box::new(im)));
        }
        self.number()
    }

    /// `#stablehlo<kind VALUE>`, `#stablehlo.kind<fields>`, `#stablehlo.conv<...>`.
    pub(super) fn hash_attr(&mut self) -> R<Attr> {
        let pos = self.pos;
        self.pos += 1; // '#'
        let name = self.expect_ident("an attribute dialect")?;
        if name == "stablehlo" || name == "chlo" || name == "mhlo" {
            self.expect("<")?;
            let kind = self.expect_ident("an enum kind")?;
            let value = self.expect_ident("an enum value")?;
            self.expect(">")?;
            return Ok(Attr::Enum(kind, value));
        }
        let Some(kind) = name
            .strip_prefix("stablehlo.")
            .or_else(|| name.strip_prefix("chlo."))
        else {
            return err(pos, format!("unknown attribute `#{name}`"));
        };
        let kind = kind.to_string();
        self.expect("<")?;
        if kind == "conv" {
            self.skip_ws();
            if self.peek() == Some(b'[') {
                let labels = self.conv_labels()?;
                self.expect(">")?;
                return Ok(labels);
            }
            return err(
                self.pos,
                "only the `[b, 0, f]x[...]->[...]` form of #stablehlo.conv is supported",
            );
        }
        Ok(Attr::Struct(kind, self.struct_fields()?))
    }

    /// `name = value, ... >` after the `<` of a struct attribute.
    pub(super) fn struct_fields(&mut self) -> R<Vec<(String, Attr)>> {
        let mut fields = Vec::new();
        if !self.eat(">") {
            loop {
                let f = self.expect_ident("a field name")?;
                self.expect("=")?;
                let v = self.attr()?;
                fields.push((f, v));
                if self.eat(">") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(fields)
    }

    /// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
    pub(super) fn conv_labels(&mut self) -> R<Attr> {
        let mut lists = Vec::new();
        for k in 0..3 {
            self.expect("[")?;
            let mut l = Vec::new();
            if !self.eat("]") {
                loop {
                    self.skip_ws();
                    let start = self.pos;
                    while self.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
                        self.pos += 1;
                    }
                    if start == self.pos {
                        return err(start, "expected a dimension label");
                    }
                    l.push(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned());
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            lists.push(l);
            match k {
                0 => self.expect("x")?,
                1 => self.expect("->")?,
                _ => {}
            }
        }
        Ok(Attr::ConvLabels(lists))
    }

    // ---- operations ----
}
