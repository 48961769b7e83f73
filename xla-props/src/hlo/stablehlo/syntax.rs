//! The StableHLO MLIR text syntax: a cursor over the bytes that reads
//! modules, functions, operations (pretty and generic form), types and
//! attributes into a small syntax tree ([`ModuleDef`], [`Op`], [`Attr`]).
//!
//! Every pretty form is read into the generic shape (operands, named
//! attributes, regions, result types) so one converter (`convert.rs`) builds
//! the IR from both forms. Positions are byte offsets into the whole file;
//! errors become `LINE:COL: message` through [`ParseError`].

use crate::hlo::dtype::ElementType;
use crate::hlo::parser::ParseError;

/// Regions, lists and types nested deeper than this are rejected (guards the stack).
pub const MAX_DEPTH: usize = 64;

/// A value type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Type {
    /// `tensor<2x3xf32>`.
    Tensor(Vec<i64>, ElementType),
    /// `!stablehlo.token`.
    Token,
    /// `tuple<...>`.
    Tuple(Vec<Type>),
}

/// One scalar inside a `dense<...>`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Int(i128),
    Float(f64),
    /// A hexadecimal literal: raw bits of a float, or an integer.
    Hex(u128),
    Bool(bool),
    Complex(Box<Scalar>, Box<Scalar>),
}

/// The payload of a `dense<...>` attribute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dense {
    /// `dense<"0x...">`: little-endian bytes.
    Blob(Vec<u8>),
    /// A (possibly nested) list, flattened; `dims` are the nesting lengths.
    List(Vec<Scalar>, Vec<usize>),
    /// One value for every element.
    Splat(Scalar),
    /// `dense<>`.
    Empty,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Attr {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Unit,
    /// `array<i64: 1, 2>` (booleans as 0/1).
    Array(Vec<i64>),
    Dense(Dense, Type),
    List(Vec<Attr>),
    Symbol(String),
    /// A bare word of the pretty form (`EQ`, `FLOAT`, `e5m10`, `THREE_FRY`).
    Word(String),
    /// `#stablehlo<comparison_direction EQ>`: (kind, value).
    Enum(String, String),
    /// `#stablehlo.gather<offset_dims = [1], ...>`: (kind, fields).
    Struct(String, Vec<(String, Attr)>),
    /// `#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>` or its pretty form: three label lists.
    ConvLabels(Vec<Vec<String>>),
    Dict(Vec<(String, Attr)>),
    Type(Type),
}

/// A use of an SSA value: `%name` or `%name#k`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ValueRef {
    pub name: String,
    pub index: Option<usize>,
    pub pos: usize,
}

/// A block of a region: arguments and operations.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Region {
    pub args: Vec<(String, Type)>,
    pub ops: Vec<Op>,
    pub pos: usize,
}

/// One operation, in generic shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Op {
    pub pos: usize,
    /// `stablehlo.add`, `func.return`, `chlo.erf`, `check.expect_eq`, ...
    pub name: String,
    /// Result groups: `%0:2` is `("0", 2)`; `%a, %b` is two groups of 1.
    pub results: Vec<(String, usize)>,
    pub operands: Vec<ValueRef>,
    pub attrs: Vec<(String, Attr)>,
    pub regions: Vec<Region>,
    pub result_types: Vec<Type>,
    /// The name of a trailing `loc("name")` (the HLO instruction name the
    /// printer writes there); None without one or for other locations.
    pub loc: Option<String>,
}

impl Op {
    /// The attribute `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// How many results the text declares.
    pub fn result_count(&self) -> usize {
        self.results.iter().map(|(_, n)| n).sum()
    }
}

/// A function argument's attribute dictionary and its `loc("name")`.
pub(crate) type ArgAttrs = (Vec<(String, Attr)>, Option<String>);

/// A `func.func`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Func {
    pub pos: usize,
    pub name: String,
    pub public: bool,
    pub args: Vec<(String, Type)>,
    /// Per argument: its attribute dictionary and its `loc("name")`.
    pub arg_attrs: Vec<ArgAttrs>,
    pub results: Vec<Type>,
    /// `attributes {...}`.
    pub attrs: Vec<(String, Attr)>,
    pub body: Region,
}

/// A `module { ... }` (or the functions of a file without one).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ModuleDef {
    pub pos: usize,
    pub name: Option<String>,
    /// `module @name attributes {...}`.
    pub attrs: Vec<(String, Attr)>,
    pub funcs: Vec<Func>,
}

type R<T> = Result<T, (usize, String)>;

fn err<T>(pos: usize, msg: impl Into<String>) -> R<T> {
    Err((pos, msg.into()))
}

/// Splits a file at MLIR's `// -----` lines and parses each part as a module.
pub(crate) fn parse_file(text: &str) -> Result<Vec<ModuleDef>, ParseError> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end().starts_with("// -----") {
            parts.push((start, offset));
            start = offset + line.len();
        }
        offset += line.len();
    }
    parts.push((start, text.len()));
    let mut modules = Vec::new();
    for (a, b) in parts {
        let mut c = Cursor {
            s: text.as_bytes(),
            pos: a,
            end: b,
            depth: 0,
        };
        c.skip_ws();
        if c.pos >= c.end {
            continue; // an empty part (a trailing separator)
        }
        let m = c
            .module()
            .map_err(|(pos, msg)| ParseError::at(text, pos, msg))?;
        modules.push(m);
    }
    if modules.is_empty() {
        return Err(ParseError::at(text, 0, "no module in the file".into()));
    }
    Ok(modules)
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    end: usize,
    depth: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'-')
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.s[self.pos])
    }

    fn rest_starts(&self, t: &str) -> bool {
        self.s[self.pos..self.end].starts_with(t.as_bytes())
    }

    fn skip_ws(&mut self) {
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
    fn eat(&mut self, t: &str) -> bool {
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

    fn expect(&mut self, t: &str) -> R<()> {
        if self.eat(t) {
            Ok(())
        } else {
            let found = self.describe_next();
            err(self.pos, format!("expected `{t}`, found {found}"))
        }
    }

    fn describe_next(&mut self) -> String {
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

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(self.pos, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A bare identifier (letters, digits, `_ . $ -`), or None.
    fn ident(&mut self) -> Option<String> {
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

    fn expect_ident(&mut self, what: &str) -> R<String> {
        match self.ident() {
            Some(s) => Ok(s),
            None => {
                let found = self.describe_next();
                err(self.pos, format!("expected {what}, found {found}"))
            }
        }
    }

    /// `%name` (after a `%` or `@` sigil): letters, digits, `_ $ .`.
    fn sigil_name(&mut self, sigil: u8) -> R<String> {
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

    fn value_ref(&mut self) -> R<ValueRef> {
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

    fn usize(&mut self) -> R<usize> {
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

    fn string(&mut self) -> R<String> {
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
    fn number(&mut self) -> R<Scalar> {
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

    fn int(&mut self) -> R<i64> {
        let pos = self.pos;
        match self.number()? {
            Scalar::Int(v) => i64::try_from(v).map_err(|_| (pos, "integer out of range".into())),
            Scalar::Hex(v) => i64::try_from(v).map_err(|_| (pos, "integer out of range".into())),
            _ => err(pos, "expected an integer"),
        }
    }

    /// `[1, 2, 3]`.
    fn int_list(&mut self) -> R<Vec<i64>> {
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

    fn module(&mut self) -> R<ModuleDef> {
        self.loc_aliases()?;
        let pos = self.pos;
        if self.eat("module") {
            self.skip_ws();
            let name = if self.peek() == Some(b'@') {
                Some(self.sigil_name(b'@')?)
            } else {
                None
            };
            let attrs = if self.eat("attributes") {
                self.attr_dict()?
            } else {
                Vec::new()
            };
            self.expect("{")?;
            let mut funcs = Vec::new();
            while !self.eat("}") {
                funcs.push(self.func()?);
            }
            self.loc()?;
            self.loc_aliases()?;
            if self.pos < self.end {
                let found = self.describe_next();
                return err(self.pos, format!("unexpected {found} after the module"));
            }
            Ok(ModuleDef {
                pos,
                name,
                attrs,
                funcs,
            })
        } else {
            let mut funcs = Vec::new();
            loop {
                self.loc_aliases()?;
                if self.pos >= self.end {
                    break;
                }
                funcs.push(self.func()?);
            }
            Ok(ModuleDef {
                pos,
                name: None,
                attrs: Vec::new(),
                funcs,
            })
        }
    }

    fn func(&mut self) -> R<Func> {
        self.skip_ws();
        let pos = self.pos;
        if !self.eat("func.func") {
            let found = self.describe_next();
            return err(self.pos, format!("expected `func.func`, found {found}"));
        }
        let mut public = true;
        if self.eat("private") {
            public = false;
        } else if self.eat("public") || self.eat("nested") {
        }
        let name = self.sigil_name(b'@')?;
        self.expect("(")?;
        let mut args = Vec::new();
        let mut arg_attrs = Vec::new();
        if !self.eat(")") {
            loop {
                let v = self.value_ref()?;
                self.expect(":")?;
                let t = self.ty()?;
                self.skip_ws();
                let attrs = if self.peek() == Some(b'{') {
                    self.attr_dict()?
                } else {
                    Vec::new()
                };
                arg_attrs.push((attrs, self.loc()?));
                args.push((v.name, t));
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut results = Vec::new();
        if self.eat("->") {
            if self.eat("(") {
                if !self.eat(")") {
                    loop {
                        results.push(self.ty()?);
                        self.skip_ws();
                        if self.peek() == Some(b'{') {
                            self.attr_dict()?;
                        }
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
            } else {
                results.push(self.ty()?);
            }
        }
        let attrs = if self.eat("attributes") {
            self.attr_dict()?
        } else {
            Vec::new()
        };
        let body = self.region_body(Vec::new())?;
        self.loc()?;
        Ok(Func {
            pos,
            name,
            public,
            args,
            arg_attrs,
            results,
            attrs,
            body,
        })
    }

    /// An optional trailing location: `loc("name")` gives the name (also
    /// from `loc("name"(...))`, a name with a file location); any other
    /// location (`loc(unknown)`, `loc(#loc3)`, `loc(callsite(...))`, a file
    /// location) is skipped and gives None.
    fn loc(&mut self) -> R<Option<String>> {
        self.skip_ws();
        if !self.rest_starts("loc(") {
            return Ok(None);
        }
        self.pos += "loc(".len();
        self.skip_ws();
        let name = if self.peek() == Some(b'"') {
            let n = self.string()?;
            self.skip_ws();
            // `"name"(child)` names a location; `"file":line:col` is a file location
            (self.peek() != Some(b':')).then_some(n)
        } else {
            None
        };
        self.skip_balanced(b')')?;
        Ok(name)
    }

    /// Skips to and past the `close` that ends the current nesting, over
    /// strings and nested brackets.
    fn skip_balanced(&mut self, close: u8) -> R<()> {
        let start = self.pos;
        let mut stack = vec![close];
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'(' => stack.push(b')'),
                b'[' => stack.push(b']'),
                b'{' => stack.push(b'}'),
                b')' | b']' | b'}' => {
                    if stack.pop() != Some(b) {
                        return err(self.pos, format!("unbalanced `{}`", b as char));
                    }
                    if stack.is_empty() {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        err(start, "unclosed location")
    }

    /// Location alias definitions (`#loc3 = loc(...)`) outside the module: skipped.
    fn loc_aliases(&mut self) -> R<()> {
        loop {
            self.skip_ws();
            if self.peek() != Some(b'#') {
                return Ok(());
            }
            self.pos += 1;
            self.expect_ident("a location alias")?;
            self.expect("=")?;
            self.skip_ws();
            if !self.rest_starts("loc(") {
                let found = self.describe_next();
                return err(
                    self.pos,
                    format!("expected `loc(` in an alias, found {found}"),
                );
            }
            self.loc()?;
        }
    }

    /// `{ [^bb0(args):] ops }`; `args` are block arguments the pretty form gave outside.
    fn region_body(&mut self, mut args: Vec<(String, Type)>) -> R<Region> {
        self.enter()?;
        self.skip_ws();
        let pos = self.pos;
        self.expect("{")?;
        self.skip_ws();
        if self.peek() == Some(b'^') {
            self.pos += 1;
            self.expect_ident("a block label")?;
            if self.eat("(") && !self.eat(")") {
                loop {
                    let v = self.value_ref()?;
                    self.expect(":")?;
                    let t = self.ty()?;
                    self.loc()?;
                    args.push((v.name, t));
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect(":")?;
        }
        let mut ops = Vec::new();
        while !self.eat("}") {
            self.skip_ws();
            if self.pos >= self.end {
                return err(pos, "unclosed `{`");
            }
            if self.peek() == Some(b'^') {
                return err(self.pos, "regions of more than one block are not supported");
            }
            ops.push(self.op()?);
        }
        self.leave();
        Ok(Region { args, ops, pos })
    }

    // ---- types ----

    fn ty(&mut self) -> R<Type> {
        self.enter()?;
        self.skip_ws();
        let pos = self.pos;
        let t = if self.eat("tensor") {
            self.expect("<")?;
            let mut dims = Vec::new();
            loop {
                self.skip_ws();
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    let d = self.usize()?;
                    dims.push(
                        i64::try_from(d).map_err(|_| (pos, "dimension too large".to_string()))?,
                    );
                    if self.peek() != Some(b'x') {
                        return err(self.pos, "expected `x` after a dimension");
                    }
                    self.pos += 1;
                } else if self.peek() == Some(b'?') {
                    return err(self.pos, "dynamic dimensions are not supported");
                } else {
                    break;
                }
            }
            let e = self.element_type()?;
            self.skip_ws();
            if self.peek() == Some(b',') {
                return err(self.pos, "tensor encodings are not supported");
            }
            self.expect(">")?;
            Type::Tensor(dims, e)
        } else if self.eat("!stablehlo.token") {
            Type::Token
        } else if self.eat("tuple") {
            self.expect("<")?;
            let mut items = Vec::new();
            if !self.eat(">") {
                loop {
                    items.push(self.ty()?);
                    if self.eat(">") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            Type::Tuple(items)
        } else {
            // a scalar type used bare (e.g. in `: i64` after attributes) is not a value type
            let found = self.describe_next();
            return err(pos, format!("expected a tensor type, found {found}"));
        };
        self.leave();
        Ok(t)
    }

    fn element_type(&mut self) -> R<ElementType> {
        self.skip_ws();
        let pos = self.pos;
        if self.eat("complex") {
            self.expect("<")?;
            let inner = self.element_type()?;
            self.expect(">")?;
            return match inner {
                ElementType::F32 => Ok(ElementType::C64),
                ElementType::F64 => Ok(ElementType::C128),
                t => err(pos, format!("unsupported element type complex<{t}>")),
            };
        }
        let name = self.expect_ident("an element type")?;
        element_type_named(&name).ok_or((pos, format!("unsupported element type `{name}`")))
    }

    // ---- attributes ----

    /// `{name = value, name, ...}`.
    fn attr_dict(&mut self) -> R<Vec<(String, Attr)>> {
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
    fn attr(&mut self) -> R<Attr> {
        self.enter()?;
        self.skip_ws();
        let pos = self.pos;
        let a = match self.peek() {
            None => return err(pos, "expected an attribute, found end of input"),
            Some(b'"') => Attr::Str(self.string()?),
            Some(b'@') => Attr::Symbol(self.sigil_name(b'@')?),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.attr()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
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

    fn array_attr(&mut self) -> R<Attr> {
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

    fn dense(&mut self) -> R<Attr> {
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

    fn dense_list(
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

    fn dense_scalar(&mut self) -> R<Scalar> {
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
    fn hash_attr(&mut self) -> R<Attr> {
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
        Ok(Attr::Struct(kind, fields))
    }

    /// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
    fn conv_labels(&mut self) -> R<Attr> {
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

    fn op(&mut self) -> R<Op> {
        self.skip_ws();
        let pos = self.pos;
        let mut results = Vec::new();
        if self.peek() == Some(b'%') {
            loop {
                let v = self.sigil_name(b'%')?;
                let n = if self.peek() == Some(b':') {
                    self.pos += 1;
                    self.usize()?
                } else {
                    1
                };
                results.push((v, n));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        self.skip_ws();
        let mut op = Op {
            pos: self.pos,
            name: String::new(),
            results,
            operands: Vec::new(),
            attrs: Vec::new(),
            regions: Vec::new(),
            result_types: Vec::new(),
            loc: None,
        };
        if self.peek() == Some(b'"') {
            op.name = self.string()?;
            self.generic(&mut op)?;
        } else {
            let name_pos = self.pos;
            let name = self.expect_ident("an operation")?;
            op.name = match name.as_str() {
                "return" => "func.return".into(),
                "call" => "func.call".into(),
                _ => name,
            };
            self.pretty(&mut op, name_pos)?;
        }
        let _ = pos;
        op.loc = self.loc()?;
        Ok(op)
    }

    /// `(%a, %b) <{props}> ({regions}) {attrs} : (T, T) -> T`.
    fn generic(&mut self, op: &mut Op) -> R<()> {
        self.expect("(")?;
        op.operands = self.operand_list_until(")")?;
        self.skip_ws();
        if self.rest_starts("<{") {
            self.pos += 1;
            op.attrs.extend(self.attr_dict()?);
            self.expect(">")?;
        }
        self.skip_ws();
        if self.rest_starts("({") {
            self.pos += 1;
            loop {
                op.regions.push(self.region_body(Vec::new())?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        self.expect(":")?;
        self.expect("(")?;
        let mut operand_types = Vec::new();
        if !self.eat(")") {
            loop {
                operand_types.push(self.ty()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.expect("->")?;
        op.result_types = self.result_types()?;
        Ok(())
    }

    fn result_types(&mut self) -> R<Vec<Type>> {
        if self.eat("(") {
            let mut out = Vec::new();
            if !self.eat(")") {
                loop {
                    out.push(self.ty()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            Ok(out)
        } else {
            Ok(vec![self.ty()?])
        }
    }

    /// Value references separated by commas up to `close` (eaten).
    fn operand_list_until(&mut self, close: &str) -> R<Vec<ValueRef>> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(self.value_ref()?);
            if self.eat(close) {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    /// Operands `%a, %b, ...` (stops before anything that is not `%`).
    fn operands(&mut self) -> R<Vec<ValueRef>> {
        let mut out = Vec::new();
        self.skip_ws();
        if self.peek() != Some(b'%') {
            return Ok(out);
        }
        loop {
            out.push(self.value_ref()?);
            let save = self.pos;
            if self.eat(",") {
                self.skip_ws();
                if self.peek() == Some(b'%') {
                    continue;
                }
                self.pos = save;
            }
            return Ok(out);
        }
    }

    /// `: T`, `: T, T`, or `: (T, T) -> T`. Returns the result types.
    fn trailing_types(&mut self, op: &Op) -> R<Vec<Type>> {
        self.expect(":")?;
        self.skip_ws();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            if !self.eat(")") {
                loop {
                    self.ty()?;
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect("->")?;
            return self.result_types();
        }
        let mut types = vec![self.ty()?];
        // a function type with one bare input: `T -> (T, T)`
        if self.eat("->") {
            return self.result_types();
        }
        while self.eat(",") {
            types.push(self.ty()?);
        }
        // `T, T -> T`: a function type with bare inputs
        if self.eat("->") {
            return self.result_types();
        }
        let n = op.result_count();
        if n > 1 && types.len() == n {
            Ok(types)
        } else {
            Ok(vec![types.pop().unwrap_or(Type::Token)])
        }
    }

    /// `name = value` pairs of the pretty form, separated by commas.
    fn keyword_attr(&mut self, op: &mut Op, key: &str, generic: &str) -> R<()> {
        self.expect(key)?;
        self.expect("=")?;
        let v = self.attr()?;
        op.attrs.push((generic.into(), v));
        Ok(())
    }

    fn pretty(&mut self, op: &mut Op, name_pos: usize) -> R<()> {
        let name = op.name.clone();
        let short = name
            .strip_prefix("stablehlo.")
            .or_else(|| name.strip_prefix("chlo."))
            .unwrap_or(&name)
            .to_string();
        match name.as_str() {
            "func.return" | "stablehlo.return" => {
                op.operands = self.operands()?;
                if !op.operands.is_empty() {
                    self.expect(":")?;
                    loop {
                        self.ty()?;
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                return Ok(());
            }
            "func.call" => {
                let callee = self.sigil_name(b'@')?;
                op.attrs.push(("callee".into(), Attr::Symbol(callee)));
                self.expect("(")?;
                op.operands = self.operand_list_until(")")?;
                self.expect(":")?;
                self.expect("(")?;
                if !self.eat(")") {
                    loop {
                        self.ty()?;
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                self.expect("->")?;
                op.result_types = self.result_types()?;
                return Ok(());
            }
            "stablehlo.custom_call" => {
                let target = self.sigil_name(b'@')?;
                op.attrs
                    .push(("call_target_name".into(), Attr::Str(target)));
                self.expect("(")?;
                op.operands = self.operand_list_until(")")?;
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    op.attrs.extend(self.attr_dict()?);
                }
                op.result_types = self.trailing_types(op)?;
                return Ok(());
            }
            _ => {}
        }
        if let Some(kind) = name.strip_prefix("check.") {
            // `check.expect_eq %a, %b : T` or `check.expect_eq(%a, %b) : T`;
            // `_const` forms take a dense attribute as their second operand.
            let paren = self.eat("(");
            op.operands.push(self.value_ref()?);
            if kind.ends_with("_const") {
                self.expect(",")?;
                let d = self.attr()?;
                op.attrs.push(("value".into(), d));
            } else if self.eat(",") {
                op.operands.push(self.value_ref()?);
            }
            while self.eat(",") {
                let k = self.expect_ident("an attribute name")?;
                self.expect("=")?;
                let v = self.attr()?;
                op.attrs.push((k, v));
            }
            if paren {
                self.expect(")")?;
            }
            self.skip_ws();
            if self.peek() == Some(b'{') {
                op.attrs.extend(self.attr_dict()?);
            }
            if self.eat(":") {
                loop {
                    self.ty()?;
                    if !self.eat(",") {
                        break;
                    }
                }
            }
            return Ok(());
        }
        match short.as_str() {
            "constant" => {
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    op.attrs.extend(self.attr_dict()?);
                }
                let v = self.attr()?;
                let t = match &v {
                    Attr::Dense(_, t) => t.clone(),
                    _ => return err(name_pos, "a constant needs a dense value"),
                };
                op.attrs.push(("value".into(), v));
                op.result_types = vec![t];
                return Ok(());
            }
            "iota" => {
                self.keyword_attr(op, "dim", "iota_dimension")?;
            }
            "compare" => {
                let dir = self.expect_ident("a comparison direction")?;
                op.attrs.push((
                    "comparison_direction".into(),
                    Attr::Enum("comparison_direction".into(), dir),
                ));
                self.expect(",")?;
                op.operands = self.operands()?;
                if self.eat(",") {
                    let t = self.expect_ident("a comparison type")?;
                    op.attrs.push((
                        "compare_type".into(),
                        Attr::Enum("comparison_type".into(), t),
                    ));
                }
            }
            "reduce" => return self.pretty_reduce(op),
            "while" => return self.pretty_while(op),
            "convolution" => {
                self.expect("(")?;
                op.operands = self.operand_list_until(")")?;
                self.expect("dim_numbers")?;
                self.expect("=")?;
                let labels = self.conv_labels()?;
                op.attrs.push(("dimension_numbers".into(), labels));
                if self.eat(",") {
                    self.expect("window")?;
                    self.expect("=")?;
                    let w = self.attr_dict()?;
                    for (k, v) in w {
                        let g = match k.as_str() {
                            "stride" => "window_strides",
                            "pad" => "padding",
                            "lhs_dilate" => "lhs_dilation",
                            "rhs_dilate" => "rhs_dilation",
                            "reverse" => "window_reversal",
                            _ => return err(self.pos, format!("unknown window field `{k}`")),
                        };
                        op.attrs.push((g.into(), v));
                    }
                }
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    op.attrs.extend(self.attr_dict()?);
                }
            }
            "top_k" => {
                self.expect("(")?;
                op.operands.push(self.value_ref()?);
                self.expect(",")?;
                self.keyword_attr(op, "k", "k")?;
                if self.eat(",") {
                    self.keyword_attr(op, "largest", "largest")?;
                }
                self.expect(")")?;
            }
            "if" | "case" | "sort" | "scatter" | "gather" | "reduce_window"
            | "select_and_scatter" | "map" => {
                return err(
                    name_pos,
                    format!("the pretty form of `{name}` is not supported; use the generic form"),
                );
            }
            _ => {
                op.operands = self.operands()?;
                // keyword attributes after the operands: `, dims = [..]`, `low = [..]`
                self.skip_ws();
                if short == "slice" && self.peek() == Some(b'[') {
                    self.slice_ranges(op)?;
                }
                while self.eat(",") {
                    self.pretty_keyword(op, &short)?;
                }
            }
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        op.result_types = self.trailing_types(op)?;
        Ok(())
    }

    /// `[0:1, 2:4:2]` of a pretty slice.
    fn slice_ranges(&mut self, op: &mut Op) -> R<()> {
        self.expect("[")?;
        let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        if !self.eat("]") {
            loop {
                starts.push(self.int()?);
                self.expect(":")?;
                limits.push(self.int()?);
                strides.push(if self.eat(":") { self.int()? } else { 1 });
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        op.attrs.push(("start_indices".into(), Attr::Array(starts)));
        op.attrs.push(("limit_indices".into(), Attr::Array(limits)));
        op.attrs.push(("strides".into(), Attr::Array(strides)));
        Ok(())
    }

    fn pretty_keyword(&mut self, op: &mut Op, short: &str) -> R<()> {
        self.skip_ws();
        let pos = self.pos;
        let key = self.expect_ident("an attribute keyword")?;
        self.expect("=")?;
        let generic = match (short, key.as_str()) {
            (_, "dims") if short == "broadcast_in_dim" => "broadcast_dimensions",
            ("transpose", "dims") => "permutation",
            ("reverse", "dims") => "dimensions",
            ("concatenate", "dim") => "dimension",
            ("pad", "low") => "edge_padding_low",
            ("pad", "high") => "edge_padding_high",
            ("pad", "interior") => "interior_padding",
            ("dynamic_slice", "sizes") => "slice_sizes",
            ("reduce_precision", "format") => "format",
            ("rng_bit_generator", "algorithm") => "rng_algorithm",
            ("fft", "type") => "fft_type",
            ("fft", "length") => "fft_length",
            ("dot_general", "batching_dims") | ("dot_general", "contracting_dims") => {
                let lhs = self.int_list()?;
                self.expect("x")?;
                let rhs = self.int_list()?;
                let (l, r) = if key == "batching_dims" {
                    ("lhs_batching_dimensions", "rhs_batching_dimensions")
                } else {
                    ("lhs_contracting_dimensions", "rhs_contracting_dimensions")
                };
                op.attrs.push((l.into(), Attr::Array(lhs)));
                op.attrs.push((r.into(), Attr::Array(rhs)));
                return Ok(());
            }
            ("dot_general", "precision") => "precision_config",
            ("dot_general", "algorithm") => "algorithm",
            _ => return err(pos, format!("unknown attribute `{key}` of `{}`", op.name)),
        };
        let v = self.attr()?;
        op.attrs.push((generic.into(), v));
        Ok(())
    }

    /// `stablehlo.reduce(%a init: %b), ... across dimensions = [0] : types`
    /// then `applies stablehlo.add` or `reducer(%x: T, %y: T) ... { body }`.
    fn pretty_reduce(&mut self, op: &mut Op) -> R<()> {
        let mut inputs = Vec::new();
        let mut inits = Vec::new();
        loop {
            self.expect("(")?;
            inputs.push(self.value_ref()?);
            self.expect("init")?;
            self.expect(":")?;
            inits.push(self.value_ref()?);
            self.expect(")")?;
            if !self.eat(",") {
                break;
            }
        }
        op.operands = inputs;
        op.operands.extend(inits);
        let applies = if self.eat("applies") {
            Some(self.expect_ident("a reducer operation")?)
        } else {
            None
        };
        self.expect("across")?;
        self.expect("dimensions")?;
        self.expect("=")?;
        let dims = self.int_list()?;
        op.attrs.push(("dimensions".into(), Attr::Array(dims)));
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        op.result_types = self.trailing_types(op)?;
        match applies {
            Some(name) => {
                op.attrs.push(("applies".into(), Attr::Word(name)));
            }
            None => {
                self.expect("reducer")?;
                let mut pairs = Vec::new();
                while self.eat("(") {
                    let a = self.value_ref()?;
                    self.expect(":")?;
                    let at = self.ty()?;
                    self.expect(",")?;
                    let b = self.value_ref()?;
                    self.expect(":")?;
                    let bt = self.ty()?;
                    self.expect(")")?;
                    pairs.push(((a.name, at), (b.name, bt)));
                }
                let mut args: Vec<(String, Type)> = pairs.iter().map(|p| p.0.clone()).collect();
                args.extend(pairs.into_iter().map(|p| p.1));
                op.regions.push(self.region_body(args)?);
            }
        }
        Ok(())
    }

    /// `stablehlo.while(%iterArg = %x, ...) : T, T cond { ... } do { ... }`.
    fn pretty_while(&mut self, op: &mut Op) -> R<()> {
        self.expect("(")?;
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                let a = self.value_ref()?;
                self.expect("=")?;
                op.operands.push(self.value_ref()?);
                args.push(a.name);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        let mut types = Vec::new();
        if self.eat(":") {
            loop {
                types.push(self.ty()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        if types.len() != args.len() {
            return err(op.pos, "while: one type per loop-carried value expected");
        }
        let block: Vec<(String, Type)> = args.into_iter().zip(types.iter().cloned()).collect();
        self.expect("cond")?;
        op.regions.push(self.region_body(block.clone())?);
        self.expect("do")?;
        op.regions.push(self.region_body(block)?);
        op.result_types = types;
        Ok(())
    }
}

/// The IR element type for an MLIR element type name (`f32`, `ui8`, `i1`).
pub(crate) fn element_type_named(name: &str) -> Option<ElementType> {
    use ElementType as E;
    Some(match name {
        "i1" => E::Pred,
        "i4" | "si4" => E::S4,
        "i8" | "si8" => E::S8,
        "i16" | "si16" => E::S16,
        "i32" | "si32" => E::S32,
        "i64" | "si64" => E::S64,
        "ui4" => E::U4,
        "ui8" => E::U8,
        "ui16" => E::U16,
        "ui32" => E::U32,
        "ui64" => E::U64,
        "f16" => E::F16,
        "bf16" => E::Bf16,
        "f32" => E::F32,
        "f64" => E::F64,
        "f8E4M3FN" => E::F8E4M3Fn,
        "f8E5M2" => E::F8E5M2,
        _ => return None,
    })
}
