//! Files, modules, functions, locations and region bodies.

use super::ast::{err, Func, ModuleDef, Region, Type, R};
use super::cursor::Cursor;
use crate::hlo::parser::ParseError;

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
        let mut m = c
            .module()
            .map_err(|(pos, msg)| ParseError::at(text, pos, msg))?;
        super::probes::read_probes_in_loops(&mut m);
        modules.push(m);
    }
    if modules.is_empty() {
        return Err(ParseError::at(text, 0, "no module in the file".into()));
    }
    Ok(modules)
}
impl Cursor<'_> {
    pub(super) fn module(&mut self) -> R<ModuleDef> {
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

    pub(super) fn func(&mut self) -> R<Func> {
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
    pub(super) fn loc(&mut self) -> R<Option<String>> {
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
    pub(super) fn skip_balanced(&mut self, close: u8) -> R<()> {
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
    pub(super) fn loc_aliases(&mut self) -> R<()> {
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
    pub(super) fn region_body(&mut self, mut args: Vec<(String, Type)>) -> R<Region> {
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
}
