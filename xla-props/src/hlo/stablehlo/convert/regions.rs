//! Regions: the computations of `while`/`if`/`case`/`map`/... bodies, the
//! captured outer values they are given, and forwarding shortcuts.

use std::collections::HashSet;

use super::attrs::attr_ints;
use super::converter::Converter;
use super::helpers::{free_vars, outer_is_constant};
use crate::hlo::ir::{Attrs, CompId, InstrId};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{err, Builder, R};
use crate::hlo::stablehlo::syntax::{Attr, Op, Region, Type};

impl Converter<'_> {
    /// A region as a computation with one parameter per block argument.
    pub(super) fn region_comp(
        &mut self,
        op: &Op,
        k: usize,
        outers: &[&Builder],
        b: &Builder,
        name: &str,
    ) -> R<CompId> {
        let region = op
            .regions
            .get(k)
            .ok_or((op.pos, format!("`{}` needs region {k}", op.name)))?;
        if let Some(callee) = self.forwarding_call(region) {
            return Ok(callee);
        }
        let mut inner = Builder::new();
        inner.bind_params(&region.args);
        let mut os: Vec<&Builder> = outers.to_vec();
        os.push(b);
        let results = self.body(region, &mut inner, &os, false)?;
        self.region_computation(name, inner, results, false)
    }

    /// The branches of an `if`/`case` as the printer writes an HLO
    /// conditional: each region only calls one function on one value of the
    /// enclosing scope and returns its result (a tuple result taken apart by
    /// `get_tuple_element` 0, 1, ... first). The functions and the values.
    pub(super) fn forwarding_branches(
        &self,
        op: &Op,
        b: &mut Builder,
        outers: &[&Builder],
    ) -> R<Option<Vec<(CompId, InstrId)>>> {
        let mut out = Vec::new();
        for r in &op.regions {
            let Some((call, rest)) = r.ops.split_first() else {
                return Ok(None);
            };
            let Some(Attr::Symbol(callee)) = call.attr("callee") else {
                return Ok(None);
            };
            let Some(&k) = self.funcs.get(callee) else {
                return Ok(None);
            };
            let ok = r.args.is_empty()
                && call.name == "func.call"
                && call.attr("xla.fusion_kind").is_none()
                && call.operands.len() == 1
                && self.def.funcs[k].args.len() == 1
                && call.results.len() == 1
                && call.results[0].1 == 1;
            if !ok {
                return Ok(None);
            }
            let Some((ret, unpack)) = rest.split_last() else {
                return Ok(None);
            };
            let result = &call.results[0].0;
            let Some(mut names) = unpacked_names(unpack, result) else {
                return Ok(None);
            };
            if unpack.is_empty() {
                names.push((result.clone(), None));
            }
            let returned: Vec<(String, Option<usize>)> = ret
                .operands
                .iter()
                .map(|v| (v.name.clone(), v.index))
                .collect();
            if ret.name != "stablehlo.return" || returned != names {
                return Ok(None);
            }
            let arg = self.lookup(&call.operands[0], b, outers)?;
            out.push((CompId(k as u32), arg));
        }
        Ok(Some(out))
    }

    /// A while loop whose regions only forward to the functions of an HLO
    /// while's condition and body (as the printer writes them): one HLO
    /// while of those computations, on the tuple the operands were taken
    /// from (when they are that tuple's elements, in order) or on the one
    /// array operand. None for any other while.
    pub(super) fn forwarding_while(
        &self,
        op: &Op,
        b: &mut Builder,
        init: &[InstrId],
    ) -> Option<Vec<InstrId>> {
        let (mut free, mut seen) = (Vec::new(), HashSet::new());
        for r in &op.regions {
            free_vars(r, &mut HashSet::new(), &mut free, &mut seen);
        }
        if !free.is_empty() {
            return None;
        }
        let attrs = |cond: CompId, body: CompId| Attrs {
            condition: Some(cond),
            body: Some(body),
            ..Attrs::default()
        };
        if let [x] = init {
            let cond = self.forwarding_call(&op.regions[0]);
            let body = self.forwarding_call(&op.regions[1]);
            if let (Some(c), Some(bd)) = (cond, body) {
                if b.shape(*x).as_array().is_some() {
                    let shape = b.shape(*x).clone();
                    return Some(vec![b.push(Opcode::While, shape, vec![*x], attrs(c, bd))]);
                }
            }
        }
        let cond = self.packing_call(&op.regions[0])?;
        let body = self.packing_call(&op.regions[1])?;
        // the operands taken apart from one tuple (by unnamed ops), in order: that tuple
        let from = init.first().and_then(|g| {
            let g = b.instrs.get(g.index())?;
            (g.opcode == Opcode::GetTupleElement && g.operands.len() == 1).then(|| g.operands[0])
        });
        let whole = from.filter(|&t| {
            b.shape(t).as_tuple().is_some_and(|e| e.len() == init.len())
                && init.iter().enumerate().all(|(k, g)| {
                    !b.located.contains(g)
                        && b.instrs.get(g.index()).is_some_and(|i| {
                            i.opcode == Opcode::GetTupleElement
                                && i.operands == [t]
                                && i.attrs.index == Some(k as i64)
                        })
                })
        });
        let state = match whole {
            Some(t) => {
                b.synthetic.extend(init.iter().copied());
                t
            }
            None => b.tuple(init.to_vec()),
        };
        let shape = b.shape(state).clone();
        let w = b.push(Opcode::While, shape, vec![state], attrs(cond, body));
        let parts: Vec<InstrId> = (0..init.len()).map(|k| b.gte(w, k)).collect();
        b.synthetic.extend(parts.iter().copied());
        Some(parts)
    }

    /// The function a region forwards its arguments to as one tuple:
    /// `stablehlo.tuple` of the block arguments in order, one `func.call` of
    /// a function with that one tuple parameter, and its result returned (a
    /// tuple result taken apart by `get_tuple_element` 0, 1, ... first).
    pub(super) fn packing_call(&self, region: &Region) -> Option<CompId> {
        let [tuple, call, rest @ ..] = region.ops.as_slice() else {
            return None;
        };
        let packs = tuple.name == "stablehlo.tuple"
            && tuple.results.len() == 1
            && tuple.results[0].1 == 1
            && tuple.operands.len() == region.args.len()
            && tuple
                .operands
                .iter()
                .zip(&region.args)
                .all(|(v, (a, _))| v.index.is_none() && v.name == *a);
        let Some(Attr::Symbol(callee)) = call.attr("callee") else {
            return None;
        };
        let &k = self.funcs.get(callee)?;
        let f = &self.def.funcs[k];
        let arg_types: Vec<Type> = region.args.iter().map(|(_, t)| t.clone()).collect();
        let calls = call.name == "func.call"
            && call.attr("xla.fusion_kind").is_none()
            && call.operands.len() == 1
            && call.operands[0].name == tuple.results[0].0
            && call.operands[0].index.is_none()
            && call.results.len() == 1
            && call.results[0].1 == 1
            && f.args.len() == 1
            && f.args[0].1 == Type::Tuple(arg_types);
        if !(packs && calls) {
            return None;
        }
        let (ret, unpack) = rest.split_last()?;
        if ret.name != "stablehlo.return" {
            return None;
        }
        let result = &call.results[0].0;
        let returned: Vec<(String, Option<usize>)> = ret
            .operands
            .iter()
            .map(|v| (v.name.clone(), v.index))
            .collect();
        let mut names = unpacked_names(unpack, result)?;
        if unpack.is_empty() {
            names.push((result.clone(), None));
        }
        (returned == names).then_some(CompId(k as u32))
    }

    /// The function a region only forwards to: its block arguments passed
    /// in order to one `func.call` of a function with exactly those
    /// parameter types, and the call's results returned (a tuple result
    /// taken apart by `get_tuple_element` 0, 1, ... first). The printer
    /// writes an HLO computation's regions this way, so that the computation
    /// keeps its name and stays shared.
    pub(super) fn forwarding_call(&self, region: &Region) -> Option<CompId> {
        let (call, rest) = region.ops.split_first()?;
        let Some(Attr::Symbol(callee)) = call.attr("callee") else {
            return None;
        };
        let &k = self.funcs.get(callee)?;
        let f = &self.def.funcs[k];
        let args_forwarded = call.name == "func.call"
            && call.operands.len() == region.args.len()
            && call
                .operands
                .iter()
                .zip(&region.args)
                .all(|(v, (a, _))| v.index.is_none() && v.name == *a)
            && f.args.len() == region.args.len()
            && f.args.iter().zip(&region.args).all(|(x, y)| x.1 == y.1)
            && call.results.len() == 1
            && call.attr("xla.fusion_kind").is_none();
        if !args_forwarded {
            return None;
        }
        let (ret, unpack) = rest.split_last()?;
        if ret.name != "stablehlo.return" {
            return None;
        }
        let result = &call.results[0].0;
        let n = call.results[0].1;
        let returned: Vec<(String, Option<usize>)> = ret
            .operands
            .iter()
            .map(|v| (v.name.clone(), v.index))
            .collect();
        if unpack.is_empty() {
            let direct: Vec<(String, Option<usize>)> = if n == 1 {
                vec![(result.clone(), None)]
            } else {
                (0..n).map(|i| (result.clone(), Some(i))).collect()
            };
            return (returned == direct).then_some(CompId(k as u32));
        }
        // `%r = call`, `%a = get_tuple_element %r[0]`, ..., `return %a, ...`
        let names = unpacked_names(unpack, result)?;
        (n == 1 && returned == names).then_some(CompId(k as u32))
    }

    /// A region whose parameter is one tuple: `carried` block arguments, then
    /// `captured` values of the enclosing scope; returns the computation and
    /// its results (before any pass-through is appended).
    #[expect(
        clippy::too_many_arguments,
        reason = "the region, its parameter layout and its scope chain"
    )]
    pub(super) fn tuple_region(
        &mut self,
        region: &Region,
        carried: &[Shape],
        captured: &[(String, Vec<Shape>)],
        outers: &[&Builder],
        b: &Builder,
        name: &str,
        pass_through: bool,
    ) -> R<CompId> {
        let mut inner = Builder::new();
        let mut elems: Vec<Shape> = carried.to_vec();
        for (_, shapes) in captured {
            elems.extend(shapes.iter().cloned());
        }
        let p = inner.param(Shape::Tuple(elems));
        let mut k = 0;
        for (arg, _) in region.args.iter().zip(carried) {
            let g = inner.gte(p, k);
            inner.bind(&arg.0, vec![g]);
            k += 1;
        }
        let mut captured_ids = Vec::new();
        for (cname, shapes) in captured {
            let mut ids = Vec::new();
            for _ in shapes {
                ids.push(inner.gte(p, k));
                k += 1;
            }
            captured_ids.extend(ids.iter().copied());
            inner.bind(cname, ids);
        }
        let mut os: Vec<&Builder> = outers.to_vec();
        os.push(b);
        let mut results = self.body(region, &mut inner, &os, false)?;
        if pass_through {
            results.extend(captured_ids);
        }
        self.region_computation(name, inner, results, pass_through)
    }

    /// The computation of a converted region named after `name`: its one
    /// result, or a tuple of its results (always a tuple when `tupled`).
    fn region_computation(
        &mut self,
        name: &str,
        mut inner: Builder,
        results: Vec<InstrId>,
        tupled: bool,
    ) -> R<CompId> {
        let root = if results.len() == 1 && !tupled {
            results[0]
        } else {
            inner.tuple(results)
        };
        let name = format!("{name}_{}", self.comps.len());
        self.new_comp(inner.finish(name, root))
    }

    /// Values a region uses but does not define (not constants: those are copied),
    /// with their shapes and ids in `b`.
    pub(super) fn captures(
        &self,
        regions: &[Region],
        b: &mut Builder,
        outers: &[&Builder],
    ) -> R<Vec<(String, Vec<InstrId>)>> {
        let mut free = Vec::new();
        let mut seen = HashSet::new();
        for r in regions {
            free_vars(r, &mut HashSet::new(), &mut free, &mut seen);
        }
        let mut out = Vec::new();
        for v in free {
            let ids = if let Some(ids) = b.scope.get(&v.name) {
                ids.clone()
            } else {
                let mut found = None;
                for o in outers.iter().rev() {
                    if let Some(ids) = o.scope.get(&v.name) {
                        found = Some(ids.clone());
                        break;
                    }
                }
                match found {
                    Some(ids) if ids.len() == 1 && outer_is_constant(outers, &v.name) => continue,
                    Some(_) => {
                        // a capture two levels up: bring it in through this scope's lookup
                        let id = self.lookup(&v, b, outers)?;
                        vec![id]
                    }
                    None => return err(v.pos, format!("undefined value `%{}`", v.name)),
                }
            };
            if ids.len() == 1 && b.instrs[ids[0].index()].opcode == Opcode::Constant {
                continue;
            }
            out.push((v.name.clone(), ids));
        }
        Ok(out)
    }
}

/// The names `unpack` gives the elements of the tuple `result` when it is
/// `get_tuple_element` of element 0, 1, ... in order, one result each; None
/// otherwise.
fn unpacked_names(unpack: &[Op], result: &str) -> Option<Vec<(String, Option<usize>)>> {
    let mut names = Vec::new();
    for (i, g) in unpack.iter().enumerate() {
        let ok = g.name == "stablehlo.get_tuple_element"
            && g.operands.len() == 1
            && g.operands[0].name == *result
            && g.operands[0].index.is_none()
            && g.results.len() == 1
            && g.results[0].1 == 1
            && g.attr("index").and_then(attr_ints) == Some(vec![i as i64]);
        if !ok {
            return None;
        }
        names.push((g.results[0].0.clone(), None));
    }
    Some(names)
}
