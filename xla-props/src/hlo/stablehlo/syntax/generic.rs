//! Operations: results, the name, and the generic form
//! (`"stablehlo.add"(%a, %b) {...} : (...) -> ...`); operand lists and trailing types.

use super::ast::{Op, Type, ValueRef, R};
use super::cursor::Cursor;

impl Cursor<'_> {
    pub(super) fn op(&mut self) -> R<Op> {
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
    pub(super) fn generic(&mut self, op: &mut Op) -> R<()> {
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
            let regions = self.list_until(")", |p| p.region_body(Vec::new()))?;
            op.regions.extend(regions);
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        self.expect(":")?;
        self.expect("(")?;
        // the operand types: read for the syntax, the operands carry theirs
        self.list_until(")", |p| p.ty())?;
        self.expect("->")?;
        op.result_types = self.result_types()?;
        Ok(())
    }

    pub(super) fn result_types(&mut self) -> R<Vec<Type>> {
        if self.eat("(") {
            let out = self.list_until(")", |p| p.ty())?;
            Ok(out)
        } else {
            Ok(vec![self.ty()?])
        }
    }

    /// Value references separated by commas up to `close` (eaten).
    pub(super) fn operand_list_until(&mut self, close: &str) -> R<Vec<ValueRef>> {
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
    pub(super) fn operands(&mut self) -> R<Vec<ValueRef>> {
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
    pub(super) fn trailing_types(&mut self, op: &Op) -> R<Vec<Type>> {
        self.expect(":")?;
        self.skip_ws();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            self.list_until(")", |p| p.ty())?;
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
}
