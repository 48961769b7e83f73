//! The faithful form ([`print_module`]): one function per computation, names
//! and attributes carried, so reading it back gives the same module.

use super::lower::Lowerer;
use super::types::{array_attr, invalid, tensor_type, unsupported, LowerError, Val};
use crate::hlo::{CompId, InstrId, Instruction, Module, Opcode, Shape};
use std::fmt::Write as _;

/// Prints a module as StableHLO in the faithful form: reading it back
/// ([`super::super::parse_stablehlo`]) gives the same module, so HLO -> StableHLO
/// -> HLO is the identity where the module's instructions each have one
/// StableHLO operation (see `docs/stablehlo.md` for the exceptions).
///
/// Unlike [`lower_module`](super::lower_module) (the form backends compile, whose entry takes and
/// returns array leaves), every computation is a function named after it
/// (the entry public, the others private), in module order, with tuple
/// parameters and results kept; its instructions are written in their
/// order, unreachable ones included, each with its name as the location
/// `loc("name")` (as XLA's own HLO -> MHLO import does). Calls are
/// `func.call`s, fusions `func.call`s with `xla.fusion_kind`; a reduction's
/// or sort's region forwards its arguments to its computation's function,
/// so the computation keeps its name and stays shared. What StableHLO has no
/// field for is carried in discardable `xla.*` attributes: layouts
/// (`xla.shape = "f32[2,3]{0,1}"`), XLA's verbatim attributes (`metadata`,
/// `sharding`, ... as `xla.hlo.metadata = "..."`, also on functions and the
/// module), where a computation's parameters stand among its instructions
/// (`xla.parameter_positions`).
///
/// ```
/// use xla_props::hlo::{parse_module, stablehlo::{parse_stablehlo, print_module}};
/// let hlo = "HloModule m\n\nENTRY e {\n  c = f32[] constant(1)\n  p = f32[2]{0} parameter(0)\n  \
///            b = f32[2]{0} broadcast(c), dimensions={}\n  dead = f32[2]{0} negate(p)\n  \
///            ROOT a.7 = f32[2]{0} add(p, b)\n}\n";
/// let m = parse_module(hlo).unwrap();
/// let text = print_module(&m).unwrap();
/// assert!(text.contains("loc(\"a.7\")"));
/// let back = parse_stablehlo(&text).unwrap().remove(0);
/// assert_eq!(back.to_string(), m.to_string());
/// ```
pub fn print_module(module: &Module) -> Result<String, LowerError> {
    if module.entry.index() >= module.computations.len() {
        return Err(LowerError::Invalid("entry computation out of range".into()));
    }
    let mut l = Lowerer {
        module,
        next: 0,
        depth: 0,
        faithful: true,
        manual: false,
        regions: 0,
        annotated: false,
        current: None,
        grid: super::lower::grid_of(module, None),
    };
    let mut out = format!("module {}", symbol(&module.name));
    let attrs = carried_attrs(&module.attrs);
    if !attrs.is_empty() {
        let _ = write!(out, " attributes {{{}}}", attrs.join(", "));
    }
    out.push_str(" {\n");
    for k in 0..module.computations.len() {
        l.function(CompId(k as u32), &mut out)?;
    }
    out.push_str("}\n");
    Ok(out)
}

/// `@name`, quoted where MLIR's bare identifiers do not reach.
pub(super) fn symbol(name: &str) -> String {
    let bare = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'));
    if bare {
        format!("@{name}")
    } else {
        format!("@{}", quote(name))
    }
}

/// An MLIR string literal.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out.push('"');
    out
}

/// XLA's verbatim attributes as `xla.hlo.NAME = "value"`.
pub(super) fn carried_attrs(attrs: &[(String, String)]) -> Vec<String> {
    attrs
        .iter()
        .map(|(k, v)| format!("{} = {}", quote(&format!("xla.hlo.{k}")), quote(v)))
        .collect()
}

/// What an instruction carries besides its name: its layouts and XLA's verbatim attributes.
pub(super) fn instruction_extras(instr: &Instruction) -> Vec<String> {
    let mut extras = Vec::new();
    if instr
        .shape
        .leaves()
        .iter()
        .any(|leaf| leaf.layout.is_some())
    {
        extras.push(format!("xla.shape = {}", quote(&instr.shape.to_string())));
    }
    // StableHLO always has the group counts; HLO may leave a count of 1 out
    // or write it: which ones it wrote
    let a = &instr.attrs;
    let explicit: Vec<&str> = [
        ("feature", a.feature_group_count),
        ("batch", a.batch_group_count),
    ]
    .iter()
    .filter(|(_, n)| *n == Some(1))
    .map(|(k, _)| *k)
    .collect();
    if instr.opcode == Opcode::Convolution && !explicit.is_empty() {
        extras.push(format!(
            "xla.explicit_group_counts = {}",
            quote(&explicit.join(","))
        ));
    }
    // a dot's algorithm is written as `#stablehlo.dot_algorithm`, not carried
    let carried: Vec<(String, String)> = instr
        .attrs
        .other
        .iter()
        .filter(|(k, _)| !(instr.opcode == Opcode::Dot && k == "algorithm"))
        .cloned()
        .collect();
    extras.extend(carried_attrs(&carried));
    extras
}

/// The MLIR type of an HLO shape: `tensor<...>`, or `tuple<...>` of them.
pub(super) fn mlir_type(s: &Shape) -> Result<String, LowerError> {
    match s {
        Shape::Array(a) => tensor_type(a),
        Shape::Tuple(items) => Ok(format!(
            "tuple<{}>",
            items
                .iter()
                .map(mlir_type)
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        )),
        Shape::Token => unsupported("token values"),
    }
}

/// Writes `extras` into the attribute dictionary of the last operation in
/// `text` and its location after it.
pub(super) fn annotate_last(text: &mut String, start: usize, extras: &[String], name: &str) {
    if !extras.is_empty() {
        if let Some(at) = text[start..].rfind(" : (").map(|k| start + k) {
            if text[..at].ends_with('}') {
                text.insert_str(at - 1, &format!(", {}", extras.join(", ")));
            } else {
                text.insert_str(at, &format!(" {{{}}}", extras.join(", ")));
            }
        }
    }
    if text.ends_with('\n') {
        text.pop();
    }
    let _ = writeln!(text, " loc({})", quote(name));
}

impl Lowerer<'_> {
    /// One computation as a function of the faithful form.
    pub(super) fn function(&mut self, cid: CompId, out: &mut String) -> Result<(), LowerError> {
        let c = self.comp_checked(cid)?;
        let params = c.parameters();
        let mut values: Vec<Option<Val>> = vec![None; c.instructions.len()];
        let mut arg_decls = Vec::new();
        for (k, &pid) in params.iter().enumerate() {
            let instr = c.instr(pid);
            if instr.attrs.parameter_number != Some(k as i64) {
                return invalid(format!(
                    "parameters of {} are not numbered 0..n (at {})",
                    c.name, instr.name
                ));
            }
            let v = Val {
                name: format!("%arg{k}"),
                ty: mlir_type(&instr.shape)?,
            };
            let extras = instruction_extras(instr);
            let attrs = if extras.is_empty() {
                String::new()
            } else {
                format!(" {{{}}}", extras.join(", "))
            };
            arg_decls.push(format!(
                "{}: {}{attrs} loc({})",
                v.name,
                v.ty,
                quote(&instr.name)
            ));
            values[pid.index()] = Some(v);
        }
        // text order when every operand comes before its use, else post order
        let in_order = c.instructions.iter().enumerate().all(|(k, i)| {
            i.operands.iter().all(|o| {
                o.index() < k
                    || c.instructions
                        .get(o.index())
                        .is_some_and(|p| p.opcode == Opcode::Parameter)
            })
        });
        let order: Vec<InstrId> = if in_order {
            (0..c.instructions.len() as u32).map(InstrId).collect()
        } else {
            c.post_order()
                .ok_or_else(|| LowerError::Invalid(format!("cycle in computation {}", c.name)))?
        };
        let mut body = String::new();
        for id in order {
            let instr = c.instr(id);
            if instr.opcode == Opcode::Parameter {
                continue;
            }
            let operands: Vec<Val> = instr
                .operands
                .iter()
                .map(|o| {
                    values.get(o.index()).cloned().flatten().ok_or_else(|| {
                        LowerError::Invalid(format!("operand of {} is undefined", instr.name))
                    })
                })
                .collect::<Result<_, _>>()?;
            let start = body.len();
            let v = self
                .faithful_instruction(c, instr, &operands, &mut body, 2)
                .map_err(|e| e.at(instr))?;
            if body.len() > start {
                annotate_last(&mut body, start, &instruction_extras(instr), &instr.name);
            }
            values[id.index()] = Some(v);
        }
        let root = values
            .get(c.root.index())
            .cloned()
            .flatten()
            .ok_or_else(|| LowerError::Invalid(format!("root of {} is undefined", c.name)))?;
        let entry = cid == self.module.entry;
        let mut attrs = carried_attrs(&c.other);
        let positions: Vec<i64> = params.iter().map(|p| i64::from(p.0)).collect();
        if positions.iter().enumerate().any(|(k, &p)| p != k as i64) {
            attrs.push(format!(
                "xla.parameter_positions = {}",
                array_attr(&positions)
            ));
        }
        let _ = write!(
            out,
            "  func.func {} {}({}) -> {}",
            if entry { "public" } else { "private" },
            symbol(&c.name),
            arg_decls.join(", "),
            root.ty
        );
        if !attrs.is_empty() {
            let _ = write!(out, " attributes {{{}}}", attrs.join(", "));
        }
        out.push_str(" {\n");
        out.push_str(&body);
        let _ = writeln!(
            out,
            "    \"func.return\"({}) : ({}) -> ()\n  }}",
            root.name, root.ty
        );
        Ok(())
    }
}
