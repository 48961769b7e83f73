//! Modules, computations and instructions: the text's structure, up to the
//! attributes.

use std::collections::HashSet;

use super::attrs::is_typed;
use super::error::{fail, PResult};
use super::lexer::{Parser, MAX_OPERAND_NESTING};
use super::pending::{NameRef, PendingComp, PendingInstr};
use super::resolve::resolve;
use crate::hlo::ir::{Attrs, Module};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

/// The tables newer XLA prints between the header and the computations.
pub(super) const STACK_FRAME_TABLES: &[&str] =
    &["FileNames", "FunctionNames", "FileLocations", "StackFrames"];
impl<'a> Parser<'a> {
    pub(super) fn module(&mut self) -> PResult<Module> {
        self.skip_ws()?;
        if !self.eat_keyword("HloModule")? {
            return fail(
                self.pos,
                format!("expected `HloModule`, found {}", self.found()),
            );
        }
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
            let entry_pos = self.pos;
            let is_entry = self.eat_keyword("ENTRY")?;
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
    pub(super) fn skip_tables(&mut self) -> PResult<()> {
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

    pub(super) fn computation(&mut self) -> PResult<PendingComp> {
        let name = self.name("a computation name")?;
        self.skip_ws()?;
        if self.peek() == Some(b'(') {
            // signature: (p: shape, ...) -> shape; the parameters say the same
            self.pos += 1;
            self.list_until(b')', |p| {
                p.name("a parameter name")?;
                p.expect(b':')?;
                p.shape()
            })?;
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
    pub(super) fn computation_body(&mut self, name: NameRef) -> PResult<PendingComp> {
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
            let is_root = self.eat_keyword("ROOT")?;
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

    pub(super) fn instruction(&mut self) -> PResult<PendingInstr> {
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
    pub(super) fn instruction_body(
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
            _ => operands = self.list_until(b')', Self::operand)?,
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
            } else if crate::hlo::opcode::accepts_attribute(opcode, attr) {
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
    pub(super) fn operand(&mut self) -> PResult<NameRef> {
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
}
