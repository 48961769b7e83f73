//! The converter: one computation per `func.func`, value scopes, and the
//! dispatch of one op to its family.

use std::collections::HashMap;

use super::attrs::attr_ints;
use super::check::PendingCheck;
use super::helpers::{
    annotate, broadcast_scalars, drop_instructions, elementwise, hlo_attrs, named_result,
    place_parameters, whole_tuple,
};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, CompId, Computation, InstrId, Module};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{emit, err, shape_of, Builder, R};
use crate::hlo::stablehlo::chlo;
use crate::hlo::stablehlo::syntax::{Func, ModuleDef, Op, Region, ValueRef};

/// The conversion of one module.
pub(crate) struct Converter<'a> {
    pub(super) def: &'a ModuleDef,
    pub(super) funcs: HashMap<String, usize>,
    pub(super) comps: Vec<Option<Computation>>,
    /// The function whose check ops become outputs (check mode), if any.
    pub(super) check_entry: Option<usize>,
    pub checks: Vec<PendingCheck>,
    /// Leaves of the checked function's own results.
    pub result_leaves: usize,
}

/// Most nested function calls followed while converting (guards recursion).
pub(super) const MAX_REGIONS: usize = 10_000;

/// One StableHLO operation being converted: the op, its name without the
/// `stablehlo.` prefix, the builders of the scopes around it, and whether
/// `check.*` ops are kept.
pub(super) struct OpSite<'a> {
    pub op: &'a Op,
    pub short: &'a str,
    pub outers: &'a [&'a Builder],
    pub checked: bool,
}

/// What an op family's conversion gives: the results, or `None` for an
/// operation that is not the family's.
pub(super) type Converted = R<Option<Vec<InstrId>>>;

impl<'a> OpSite<'a> {
    /// `op` in the scopes `outers`.
    pub(super) fn new(op: &'a Op, outers: &'a [&'a Builder], checked: bool) -> OpSite<'a> {
        let name = op.name.as_str();
        OpSite {
            op,
            short: name.strip_prefix("stablehlo.").unwrap_or(name),
            outers,
            checked,
        }
    }
}

impl<'a> Converter<'a> {
    pub fn new(def: &'a ModuleDef, check_entry: Option<usize>) -> R<Converter<'a>> {
        let mut funcs = HashMap::new();
        for (k, f) in def.funcs.iter().enumerate() {
            if funcs.insert(f.name.clone(), k).is_some() {
                return err(f.pos, format!("function `@{}` is defined twice", f.name));
            }
        }
        Ok(Converter {
            def,
            funcs,
            comps: vec![None; def.funcs.len()],
            check_entry,
            checks: Vec::new(),
            result_leaves: 0,
        })
    }

    /// Converts every function; `entry` is the index of the entry function.
    pub fn module(mut self, entry: usize) -> R<(Module, Vec<PendingCheck>, usize)> {
        for k in 0..self.def.funcs.len() {
            let f = &self.def.funcs[k];
            let c = self.func(f, Some(k) == self.check_entry)?;
            self.comps[k] = Some(c);
        }
        let computations: Vec<Computation> = self.comps.into_iter().flatten().collect();
        let module = Module {
            name: self.def.name.clone().unwrap_or_else(|| "module".into()),
            attrs: hlo_attrs(&self.def.attrs),
            computations,
            entry: CompId(entry as u32),
        };
        Ok((module, self.checks, self.result_leaves))
    }

    pub(super) fn new_comp(&mut self, c: Computation) -> R<CompId> {
        if self.comps.len() >= MAX_REGIONS {
            return err(0, "too many regions");
        }
        self.comps.push(Some(c));
        Ok(CompId(self.comps.len() as u32 - 1))
    }

    pub(super) fn func(&mut self, f: &Func, checked: bool) -> R<Computation> {
        let mut b = Builder::new();
        b.bind_params(&f.args);
        let results = self.body(&f.body, &mut b, &[], checked)?;
        if results.len() != f.results.len() {
            return err(
                f.pos,
                format!(
                    "`@{}` returns {} values, its signature says {}",
                    f.name,
                    results.len(),
                    f.results.len()
                ),
            );
        }
        let mut outs = results.clone();
        if checked {
            self.result_leaves = results.iter().map(|&r| b.shape(r).leaves().len()).sum();
            let mut leaves = self.result_leaves;
            let pending: Vec<(usize, usize)> = self
                .checks
                .iter()
                .map(|c| (c.actual.index(), c.expected.index()))
                .collect();
            for (a, e) in pending {
                outs.push(InstrId(a as u32));
                outs.push(InstrId(e as u32));
                leaves += 2;
            }
            let _ = leaves;
        }
        let root = if outs.len() == 1 && !checked {
            outs[0]
        } else {
            b.tuple(outs)
        };
        // what the printer carries for HLO: parameter names (`loc`),
        // layouts and verbatim attributes, where the parameters stood
        for (k, (attrs, loc)) in f.arg_attrs.iter().enumerate() {
            annotate(&mut b.instrs[k], loc.as_deref(), attrs, f.pos)?;
        }
        let unused: Vec<InstrId> = b
            .synthetic
            .iter()
            .copied()
            .filter(|&g| g != root && !b.instrs.iter().any(|i| i.operands.contains(&g)))
            .collect();
        let mut comp = Computation {
            name: f.name.clone(),
            instructions: b.instrs,
            root,
            other: hlo_attrs(&f.attrs),
        };
        drop_instructions(&mut comp, &unused);
        if let Some(a) = f.attrs.iter().find(|(k, _)| k == "xla.parameter_positions") {
            let positions = attr_ints(&a.1).ok_or((
                f.pos,
                "`xla.parameter_positions` must be an array".to_string(),
            ))?;
            // positions that do not fit the instructions read (an op the
            // printer wrote as several) leave the parameters first
            place_parameters(&mut comp, f.args.len(), &positions);
        }
        Ok(comp)
    }

    /// Converts a region's ops into `b`; returns the values its terminator returns.
    pub(super) fn body(
        &mut self,
        region: &Region,
        b: &mut Builder,
        outers: &[&Builder],
        checked: bool,
    ) -> R<Vec<InstrId>> {
        for op in &region.ops {
            if op.name == "func.return" || op.name == "stablehlo.return" {
                return op
                    .operands
                    .iter()
                    .map(|v| self.lookup(v, b, outers))
                    .collect();
            }
            if let Some(t) = whole_tuple(op, b) {
                // `stablehlo.tuple` of all results of one multi-result op,
                // in order: the op's own tuple value (as the printer writes
                // a tuple-shaped HLO instruction)
                annotate_op(b, t, op)?;
                b.bind(&op.results[0].0, vec![t]);
                continue;
            }
            let before = b.instrs.len();
            let ids = self.op(&OpSite::new(op, outers, checked), b)?;
            if ids.len() == op.result_types.len() {
                for (&id, t) in ids.iter().zip(&op.result_types) {
                    b.note_type(id, t);
                }
            }
            if let Some(id) = named_result(b, &ids, before) {
                annotate_op(b, id, op)?;
            }
            if ids.len() != op.result_count() {
                return err(
                    op.pos,
                    format!(
                        "`{}` has {} results, the text names {}",
                        op.name,
                        ids.len(),
                        op.result_count()
                    ),
                );
            }
            let mut it = ids.into_iter();
            for (name, n) in &op.results {
                let group: Vec<InstrId> = it.by_ref().take(*n).collect();
                b.bind(name, group);
            }
        }
        err(region.pos, "a region without a terminator (`return`)")
    }

    /// The value `%name#k`: from this scope, or a constant copied from an enclosing one.
    pub(crate) fn lookup(&self, v: &ValueRef, b: &mut Builder, outers: &[&Builder]) -> R<InstrId> {
        let pick = |ids: &Vec<InstrId>| -> R<InstrId> {
            match v.index {
                None if ids.len() == 1 => Ok(ids[0]),
                None => err(
                    v.pos,
                    format!("`%{}` has {} results; name one with `#`", v.name, ids.len()),
                ),
                Some(k) => ids
                    .get(k)
                    .copied()
                    .ok_or((v.pos, format!("`%{}` has no result #{k}", v.name))),
            }
        };
        if let Some(ids) = b.scope.get(&v.name) {
            return pick(ids);
        }
        for outer in outers.iter().rev() {
            if let Some(ids) = outer.scope.get(&v.name) {
                let id = pick(ids)?;
                let i = &outer.instrs[id.index()];
                if i.opcode != Opcode::Constant {
                    return err(
                        v.pos,
                        format!(
                            "this region uses `%{}` of the enclosing scope; only constants can be captured here",
                            v.name
                        ),
                    );
                }
                let copy = b.push(Opcode::Constant, i.shape.clone(), vec![], i.attrs.clone());
                return Ok(copy);
            }
        }
        err(v.pos, format!("undefined value `%{}`", v.name))
    }

    pub(super) fn operands(
        &self,
        op: &Op,
        b: &mut Builder,
        outers: &[&Builder],
    ) -> R<Vec<InstrId>> {
        op.operands
            .iter()
            .map(|v| self.lookup(v, b, outers))
            .collect()
    }

    pub(super) fn results(
        &self,
        op: &Op,
        b: &mut Builder,
        opcode: Opcode,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> R<Vec<InstrId>> {
        let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
        Ok(emit(b, opcode, shapes, operands, attrs))
    }

    pub(super) fn op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers) = (site.op, site.outers);
        let name = op.name.as_str();
        if Self::is_quantized(op, b) {
            return self.quant_op(site, b);
        }
        if let Some(code) = elementwise(name) {
            let ops = self.operands(op, b, outers)?;
            let ops = match code {
                Opcode::Select | Opcode::Clamp => broadcast_scalars(b, op, ops)?,
                Opcode::Convert => real_part_of_complex(b, op, ops),
                _ => ops,
            };
            return self.results(op, b, code, ops, Attrs::default());
        }
        if name == "chlo.scan" {
            return self.scan(site, b);
        }
        if let Some(kind) = name.strip_prefix("chlo.") {
            let ops = self.operands(op, b, outers)?;
            return chlo::decompose(kind, op, b, ops, &mut |c| self.new_comp(c));
        }
        if let Some(kind) = name.strip_prefix("check.") {
            return self.check_op(site, kind, b);
        }
        // each family converts its own operations and passes on the others
        let families: [fn(&mut Self, &OpSite, &mut Builder) -> Converted; 6] = [
            Self::data_op,
            Self::shape_op,
            Self::indexing_op,
            Self::contraction_op,
            Self::collective_op,
            Self::dynamic_op,
        ];
        for family in families {
            if let Some(ids) = family(self, site, b)? {
                return Ok(ids);
            }
        }
        self.control_op(site, b)
    }
}

/// The operands of a `convert`, where a complex operand converted to a real
/// type is replaced by its real part: the spec ignores the imaginary part
/// there, and HLO's convert has no complex-to-real form.
fn real_part_of_complex(b: &mut Builder, op: &Op, ops: Vec<InstrId>) -> Vec<InstrId> {
    let to_real = op
        .result_types
        .first()
        .map(shape_of)
        .is_some_and(|s| match s {
            Shape::Array(a) => !a.dtype.is_complex(),
            _ => false,
        });
    let [x] = ops[..] else { return ops };
    let Some(Shape::Array(a)) = b.instrs.get(x.index()).map(|i| i.shape.clone()) else {
        return ops;
    };
    let component = match a.dtype {
        ElementType::C64 => ElementType::F32,
        ElementType::C128 => ElementType::F64,
        _ => return ops,
    };
    if !to_real {
        return ops;
    }
    let re = Shape::array(component, a.dims.clone());
    vec![b.push(Opcode::Real, re, vec![x], Attrs::default())]
}

/// Puts `op`'s location and extra attributes on instruction `id` (and
/// records that it has a location).
fn annotate_op(b: &mut Builder, id: InstrId, op: &Op) -> R<()> {
    annotate(
        &mut b.instrs[id.index()],
        op.loc.as_deref(),
        &op.attrs,
        op.pos,
    )?;
    if op.loc.is_some() {
        b.located.insert(id);
    }
    Ok(())
}
