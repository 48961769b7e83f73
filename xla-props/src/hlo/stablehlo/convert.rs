//! From the syntax tree to the IR: one computation per `func.func`, one per
//! region; multi-result ops become tuple-shaped instructions read through
//! `get-tuple-element`.
//!
//! Regions of `while`, `if` and `case` may use values of the enclosing scope
//! (MLIR allows it, HLO does not): those values are found syntactically and
//! passed in explicitly (appended to the loop state, or as the branch
//! operand). Other regions may only capture constants, which are copied in.

use std::collections::{HashMap, HashSet};

use super::chlo;
use super::dense::constant_data;
use super::syntax::{Attr, Func, ModuleDef, Op, Region, Type, ValueRef};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConvDims, DotDims, FftType,
    FusionKind, GatherDims, InstrId, Instruction, Module, PadDim, RngAlgorithm, ScatterDims,
    SliceDim, TransposeA, TriangularSolveOptions, WindowDim,
};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

pub(crate) type R<T> = Result<T, (usize, String)>;

pub(crate) fn err<T>(pos: usize, msg: impl Into<String>) -> R<T> {
    Err((pos, msg.into()))
}

/// Which check op a check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// `expect_eq`, `expect_eq_const`: exact IEEE equality.
    Eq,
    /// `expect_close`: within `max_ulp_difference` ULP (default 3).
    Close,
    /// `expect_almost_eq`, `expect_almost_eq_const`: within `tolerance` absolutely (default 1e-3).
    AlmostEq,
}

impl CheckKind {
    /// The check's name (`expect_eq`).
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Eq => "expect_eq",
            CheckKind::Close => "expect_close",
            CheckKind::AlmostEq => "expect_almost_eq",
        }
    }
}

/// One check op of a checked function, and where its values are among the
/// program's outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSpec {
    /// The kind.
    pub kind: CheckKind,
    /// 1-based line of the check op.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Output index (flattened) of the value checked.
    pub actual: usize,
    /// Output index of the expected value.
    pub expected: usize,
    /// `max_ulp_difference` of `expect_close`.
    pub max_ulp: Option<u64>,
    /// `tolerance` of `expect_almost_eq`.
    pub tolerance: Option<f64>,
}

/// A pending check: instruction ids in the checked function.
pub(crate) struct PendingCheck {
    pub pos: usize,
    pub kind: CheckKind,
    pub actual: InstrId,
    pub expected: InstrId,
    pub max_ulp: Option<u64>,
    pub tolerance: Option<f64>,
}

/// Builds one computation.
pub(crate) struct Builder {
    pub instrs: Vec<Instruction>,
    scope: HashMap<String, Vec<InstrId>>,
    params: usize,
    /// The `get-tuple-element`s the reader made to take a multi-result op's
    /// results apart; dropped from a function when nothing uses them.
    synthetic: Vec<InstrId>,
    /// Instructions an op's `loc("name")` named.
    located: HashSet<InstrId>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            instrs: Vec::new(),
            scope: HashMap::new(),
            params: 0,
            synthetic: Vec::new(),
            located: HashSet::new(),
        }
    }

    pub fn shape(&self, id: InstrId) -> &Shape {
        &self.instrs[id.index()].shape
    }

    /// The array shape of `id` (dims, dtype), or an error at `pos`.
    pub fn array(&self, id: InstrId, pos: usize) -> R<(Vec<i64>, ElementType)> {
        match self.shape(id) {
            Shape::Array(a) => Ok((a.dims.clone(), a.dtype)),
            s => err(pos, format!("expected a tensor operand, found {s}")),
        }
    }

    pub fn push(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        let id = InstrId(self.instrs.len() as u32);
        let mut i = Instruction::new(
            format!("{}.{}", opcode.name().replace('-', "_"), id.0),
            opcode,
            shape,
            operands,
        );
        i.attrs = attrs;
        self.instrs.push(i);
        id
    }

    fn param(&mut self, shape: Shape) -> InstrId {
        let n = self.params as i64;
        self.params += 1;
        self.push(
            Opcode::Parameter,
            shape,
            vec![],
            Attrs {
                parameter_number: Some(n),
                ..Attrs::default()
            },
        )
    }

    pub fn gte(&mut self, tuple: InstrId, k: usize) -> InstrId {
        let shape = match self.shape(tuple) {
            Shape::Tuple(t) => t[k].clone(),
            s => s.clone(),
        };
        self.push(
            Opcode::GetTupleElement,
            shape,
            vec![tuple],
            Attrs {
                index: Some(k as i64),
                ..Attrs::default()
            },
        )
    }

    pub fn tuple(&mut self, items: Vec<InstrId>) -> InstrId {
        let shape = Shape::Tuple(items.iter().map(|&i| self.shape(i).clone()).collect());
        self.push(Opcode::Tuple, shape, items, Attrs::default())
    }

    fn bind(&mut self, name: &str, ids: Vec<InstrId>) {
        self.scope.insert(name.to_string(), ids);
    }
}

pub(crate) fn shape_of(t: &Type) -> Shape {
    match t {
        Type::Tensor(dims, e) => Shape::array(*e, dims.clone()),
        Type::Token => Shape::Token,
        Type::Tuple(items) => Shape::Tuple(items.iter().map(shape_of).collect()),
    }
}

/// The conversion of one module.
pub(crate) struct Converter<'a> {
    def: &'a ModuleDef,
    funcs: HashMap<String, usize>,
    comps: Vec<Option<Computation>>,
    /// The function whose check ops become outputs (check mode), if any.
    check_entry: Option<usize>,
    pub checks: Vec<PendingCheck>,
    /// Leaves of the checked function's own results.
    pub result_leaves: usize,
}

/// Most nested function calls followed while converting (guards recursion).
const MAX_REGIONS: usize = 10_000;

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

    fn new_comp(&mut self, c: Computation) -> R<CompId> {
        if self.comps.len() >= MAX_REGIONS {
            return err(0, "too many regions");
        }
        self.comps.push(Some(c));
        Ok(CompId(self.comps.len() as u32 - 1))
    }

    fn func(&mut self, f: &Func, checked: bool) -> R<Computation> {
        let mut b = Builder::new();
        for (name, t) in &f.args {
            let p = b.param(shape_of(t));
            b.bind(name, vec![p]);
        }
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
    fn body(
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
                annotate(
                    &mut b.instrs[t.index()],
                    op.loc.as_deref(),
                    &op.attrs,
                    op.pos,
                )?;
                if op.loc.is_some() {
                    b.located.insert(t);
                }
                b.bind(&op.results[0].0, vec![t]);
                continue;
            }
            let before = b.instrs.len();
            let ids = self.op(op, b, outers, checked)?;
            if let Some(id) = named_result(b, &ids, before) {
                annotate(
                    &mut b.instrs[id.index()],
                    op.loc.as_deref(),
                    &op.attrs,
                    op.pos,
                )?;
                if op.loc.is_some() {
                    b.located.insert(id);
                }
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

    fn operands(&self, op: &Op, b: &mut Builder, outers: &[&Builder]) -> R<Vec<InstrId>> {
        op.operands
            .iter()
            .map(|v| self.lookup(v, b, outers))
            .collect()
    }

    /// A region as a computation with one parameter per block argument.
    fn region_comp(
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
        for (arg, t) in &region.args {
            let p = inner.param(shape_of(t));
            inner.bind(arg, vec![p]);
        }
        let mut os: Vec<&Builder> = outers.to_vec();
        os.push(b);
        let results = self.body(region, &mut inner, &os, false)?;
        let root = if results.len() == 1 {
            results[0]
        } else {
            inner.tuple(results)
        };
        self.new_comp(Computation {
            name: format!("{name}_{}", self.comps.len()),
            instructions: inner.instrs,
            root,
            other: vec![],
        })
    }

    /// The branches of an `if`/`case` as the printer writes an HLO
    /// conditional: each region only calls one function on one value of the
    /// enclosing scope and returns its result (a tuple result taken apart by
    /// `get_tuple_element` 0, 1, ... first). The functions and the values.
    fn forwarding_branches(
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
                    return Ok(None);
                }
                names.push((g.results[0].0.clone(), None));
            }
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
    fn forwarding_while(&self, op: &Op, b: &mut Builder, init: &[InstrId]) -> Option<Vec<InstrId>> {
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
    fn packing_call(&self, region: &Region) -> Option<CompId> {
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
    fn forwarding_call(&self, region: &Region) -> Option<CompId> {
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
        (n == 1 && returned == names).then_some(CompId(k as u32))
    }

    /// A region whose parameter is one tuple: `carried` block arguments, then
    /// `captured` values of the enclosing scope; returns the computation and
    /// its results (before any pass-through is appended).
    #[expect(
        clippy::too_many_arguments,
        reason = "the region, its parameter layout and its scope chain"
    )]
    fn tuple_region(
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
        let root = if results.len() == 1 && !pass_through {
            results[0]
        } else {
            inner.tuple(results)
        };
        self.new_comp(Computation {
            name: format!("{name}_{}", self.comps.len()),
            instructions: inner.instrs,
            root,
            other: vec![],
        })
    }

    /// Values a region uses but does not define (not constants: those are copied),
    /// with their shapes and ids in `b`.
    fn captures(
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

    fn results(
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

    fn op(
        &mut self,
        op: &Op,
        b: &mut Builder,
        outers: &[&Builder],
        checked: bool,
    ) -> R<Vec<InstrId>> {
        let pos = op.pos;
        let name = op.name.as_str();
        if let Some(code) = elementwise(name) {
            let ops = self.operands(op, b, outers)?;
            let ops = match code {
                Opcode::Select | Opcode::Clamp => broadcast_scalars(b, op, ops)?,
                _ => ops,
            };
            return self.results(op, b, code, ops, Attrs::default());
        }
        if let Some(kind) = name.strip_prefix("chlo.") {
            let ops = self.operands(op, b, outers)?;
            return chlo::decompose(kind, op, b, ops, &mut |c| self.new_comp(c));
        }
        if let Some(kind) = name.strip_prefix("check.") {
            return self.check_op(op, kind, b, outers, checked);
        }
        let mut a = Attrs::default();
        let short = name.strip_prefix("stablehlo.").unwrap_or(name);
        match short {
            "constant" => {
                let Some(Attr::Dense(d, t)) = op.attr("value") else {
                    return err(pos, "a constant needs `value = dense<...>`");
                };
                let Type::Tensor(dims, e) = t else {
                    return err(pos, "a constant must be a tensor");
                };
                a.constant = Some(constant_data(d, dims, *e, pos)?);
                let s = shape_of(t);
                Ok(vec![b.push(Opcode::Constant, s, vec![], a)])
            }
            "iota" => {
                a.iota_dimension = Some(int_attr(op, "iota_dimension")?);
                self.results(op, b, Opcode::Iota, vec![], a)
            }
            "compare" => {
                let ops = self.operands(op, b, outers)?;
                let dir = enum_attr(op, "comparison_direction")?
                    .ok_or((pos, "compare needs a direction".to_string()))?;
                a.direction = Some(
                    ComparisonDirection::from_name(&dir)
                        .ok_or((pos, format!("unknown comparison direction `{dir}`")))?,
                );
                if let Some(t) = enum_attr(op, "compare_type")? {
                    a.comparison_type = Some(
                        ComparisonType::from_name(&t)
                            .ok_or((pos, format!("unknown comparison type `{t}`")))?,
                    );
                }
                self.results(op, b, Opcode::Compare, ops, a)
            }
            "reduce_precision" => {
                let ops = self.operands(op, b, outers)?;
                if let Some(f) = op.attr("format") {
                    let Attr::Word(w) = f else {
                        return err(pos, "bad reduce_precision format");
                    };
                    let (e, m) = w
                        .strip_prefix('e')
                        .and_then(|r| r.split_once('m'))
                        .and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)))
                        .ok_or((pos, format!("bad reduce_precision format `{w}`")))?;
                    a.exponent_bits = Some(e);
                    a.mantissa_bits = Some(m);
                } else {
                    a.exponent_bits = Some(int_attr(op, "exponent_bits")?);
                    a.mantissa_bits = Some(int_attr(op, "mantissa_bits")?);
                }
                self.results(op, b, Opcode::ReducePrecision, ops, a)
            }
            "broadcast_in_dim" => {
                let ops = self.operands(op, b, outers)?;
                let dims = ints_attr(op, "broadcast_dimensions")?;
                let out = one_result(op)?;
                let [x] = ops[..] else {
                    return err(pos, "broadcast_in_dim takes one operand");
                };
                Ok(vec![broadcast_in_dim(b, x, &dims, out, pos)?])
            }
            "transpose" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "permutation")?);
                self.results(op, b, Opcode::Transpose, ops, a)
            }
            "reverse" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                self.results(op, b, Opcode::Reverse, ops, a)
            }
            "concatenate" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(vec![int_attr(op, "dimension")?]);
                self.results(op, b, Opcode::Concatenate, ops, a)
            }
            "slice" => {
                let ops = self.operands(op, b, outers)?;
                let s = ints_attr(op, "start_indices")?;
                let l = ints_attr(op, "limit_indices")?;
                let st = ints_attr(op, "strides")
                    .or_else(|_| Ok::<_, (usize, String)>(vec![1; s.len()]))?;
                if s.len() != l.len() || s.len() != st.len() {
                    return err(pos, "slice attributes differ in length");
                }
                a.slice = Some(
                    (0..s.len())
                        .map(|k| SliceDim {
                            start: s[k],
                            limit: l[k],
                            stride: st[k],
                        })
                        .collect(),
                );
                self.results(op, b, Opcode::Slice, ops, a)
            }
            "pad" => {
                let ops = self.operands(op, b, outers)?;
                let lo = ints_attr(op, "edge_padding_low")?;
                let hi = ints_attr(op, "edge_padding_high")?;
                let int = ints_attr(op, "interior_padding")?;
                if lo.len() != hi.len() || lo.len() != int.len() {
                    return err(pos, "pad attributes differ in length");
                }
                a.padding = Some(
                    (0..lo.len())
                        .map(|k| PadDim {
                            low: lo[k],
                            high: hi[k],
                            interior: int[k],
                        })
                        .collect(),
                );
                self.results(op, b, Opcode::Pad, ops, a)
            }
            "dynamic_slice" => {
                let ops = self.operands(op, b, outers)?;
                a.dynamic_slice_sizes = Some(ints_attr(op, "slice_sizes")?);
                self.results(op, b, Opcode::DynamicSlice, ops, a)
            }
            "dynamic_update_slice" => {
                let ops = self.operands(op, b, outers)?;
                self.results(op, b, Opcode::DynamicUpdateSlice, ops, a)
            }
            "gather" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "dimension_numbers", "gather")?;
                a.gather_dims = Some(GatherDims {
                    offset_dims: field_ints(&f, "offset_dims", pos)?,
                    collapsed_slice_dims: field_ints(&f, "collapsed_slice_dims", pos)?,
                    start_index_map: field_ints(&f, "start_index_map", pos)?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    operand_batching_dims: field_ints(&f, "operand_batching_dims", pos)?,
                    start_indices_batching_dims: field_ints(
                        &f,
                        "start_indices_batching_dims",
                        pos,
                    )?,
                    slice_sizes: ints_attr(op, "slice_sizes")?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                self.results(op, b, Opcode::Gather, ops, a)
            }
            "scatter" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "scatter_dimension_numbers", "scatter")?;
                a.scatter_dims = Some(ScatterDims {
                    update_window_dims: field_ints(&f, "update_window_dims", pos)?,
                    inserted_window_dims: field_ints(&f, "inserted_window_dims", pos)?,
                    scatter_dims_to_operand_dims: field_ints(
                        &f,
                        "scatter_dims_to_operand_dims",
                        pos,
                    )?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    input_batching_dims: field_ints(&f, "input_batching_dims", pos)?,
                    scatter_indices_batching_dims: field_ints(
                        &f,
                        "scatter_indices_batching_dims",
                        pos,
                    )?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                a.unique_indices = bool_attr(op, "unique_indices")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::Scatter, ops, a)
            }
            "reduce" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(match op.attr("applies") {
                    Some(Attr::Word(w)) => self.applies_comp(op, w, b, &ops)?,
                    _ => self.region_comp(op, 0, outers, b, "reducer")?,
                });
                self.results(op, b, Opcode::Reduce, ops, a)
            }
            "reduce_window" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, true)?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "window_fn")?);
                self.results(op, b, Opcode::ReduceWindow, ops, a)
            }
            "select_and_scatter" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, false)?);
                a.select = Some(self.region_comp(op, 0, outers, b, "select_fn")?);
                a.scatter = Some(self.region_comp(op, 1, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::SelectAndScatter, ops, a)
            }
            "sort" => {
                let ops = self.operands(op, b, outers)?;
                let rank = match ops.first() {
                    Some(&x) => b.array(x, pos)?.0.len() as i64,
                    None => return err(pos, "sort needs an operand"),
                };
                let d = opt_int_attr(op, "dimension")?.unwrap_or(-1);
                a.dimensions = Some(vec![if d < 0 { d + rank } else { d }]);
                a.is_stable = bool_attr(op, "is_stable")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "comparator")?);
                self.results(op, b, Opcode::Sort, ops, a)
            }
            "map" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "map_fn")?);
                self.results(op, b, Opcode::Map, ops, a)
            }
            "dot_general" | "dot" => {
                let ops = self.operands(op, b, outers)?;
                let d = if short == "dot" {
                    let [l, _] = ops[..] else {
                        return err(pos, "dot takes two operands");
                    };
                    let lr = b.array(l, pos)?.0.len() as i64;
                    DotDims {
                        lhs_contracting: vec![lr - 1],
                        rhs_contracting: vec![0],
                        ..DotDims::default()
                    }
                } else if let Some(f) = struct_attr_opt(op, "dot_dimension_numbers", "dot")? {
                    DotDims {
                        lhs_batch: field_ints(&f, "lhs_batching_dimensions", pos)?,
                        rhs_batch: field_ints(&f, "rhs_batching_dimensions", pos)?,
                        lhs_contracting: field_ints(&f, "lhs_contracting_dimensions", pos)?,
                        rhs_contracting: field_ints(&f, "rhs_contracting_dimensions", pos)?,
                    }
                } else {
                    DotDims {
                        lhs_batch: opt_ints_attr(op, "lhs_batching_dimensions")?
                            .unwrap_or_default(),
                        rhs_batch: opt_ints_attr(op, "rhs_batching_dimensions")?
                            .unwrap_or_default(),
                        lhs_contracting: opt_ints_attr(op, "lhs_contracting_dimensions")?
                            .unwrap_or_default(),
                        rhs_contracting: opt_ints_attr(op, "rhs_contracting_dimensions")?
                            .unwrap_or_default(),
                    }
                };
                a.dot_dims = Some(d);
                a.precision = precision(op)?;
                if op.attr("algorithm").is_some() {
                    return err(pos, "dot algorithms are not supported");
                }
                self.results(op, b, Opcode::Dot, ops, a)
            }
            "convolution" => {
                let ops = self.operands(op, b, outers)?;
                let Some(Attr::ConvLabels(l)) = op.attr("dimension_numbers") else {
                    return err(
                        pos,
                        "convolution needs dimension numbers `[b, 0, f]x[0, i, o]->[b, 0, f]`",
                    );
                };
                a.conv_dims = Some(conv_dims(l, pos)?);
                let spatial = l[0].len().saturating_sub(2);
                let strides =
                    opt_ints_attr(op, "window_strides")?.unwrap_or_else(|| vec![1; spatial]);
                let pads = opt_padding(op, "padding")?.unwrap_or_else(|| vec![(0, 0); spatial]);
                let lhs = opt_ints_attr(op, "lhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rhs = opt_ints_attr(op, "rhs_dilation")?.unwrap_or_else(|| vec![1; spatial]);
                let rev = opt_ints_attr(op, "window_reversal")?.unwrap_or_else(|| vec![0; spatial]);
                let Some(&kernel) = ops.get(1) else {
                    return err(pos, "convolution takes two operands");
                };
                let kdims = b.array(kernel, pos)?.0;
                let cd = a
                    .conv_dims
                    .as_ref()
                    .map(|c| c.kernel_spatial.clone())
                    .unwrap_or_default();
                if [strides.len(), pads.len(), lhs.len(), rhs.len(), rev.len()]
                    .iter()
                    .any(|&n| n != spatial)
                {
                    return err(
                        pos,
                        "convolution window attributes differ from the spatial rank",
                    );
                }
                let mut w = Vec::new();
                for k in 0..spatial {
                    let size = usize::try_from(cd[k])
                        .ok()
                        .and_then(|d| kdims.get(d))
                        .copied()
                        .unwrap_or(1);
                    w.push(WindowDim {
                        size,
                        stride: strides[k],
                        pad_low: pads[k].0,
                        pad_high: pads[k].1,
                        base_dilation: lhs[k],
                        window_dilation: rhs[k],
                        reversal: rev[k] != 0,
                    });
                }
                a.window = (spatial > 0).then_some(w);
                // a count of 1 is the default HLO leaves out
                a.feature_group_count =
                    opt_int_attr(op, "feature_group_count")?.filter(|&n| n != 1);
                a.batch_group_count = opt_int_attr(op, "batch_group_count")?.filter(|&n| n != 1);
                a.precision = precision(op)?;
                self.results(op, b, Opcode::Convolution, ops, a)
            }
            "while" => self.while_op(op, b, outers),
            "if" | "case" => self.cond_op(op, short, b, outers),
            "optimization_barrier" => self.operands(op, b, outers),
            "tuple" => {
                let ops = self.operands(op, b, outers)?;
                Ok(vec![b.tuple(ops)])
            }
            "get_tuple_element" => {
                let ops = self.operands(op, b, outers)?;
                let k = int_attr(op, "index")?;
                let [t] = ops[..] else {
                    return err(pos, "get_tuple_element takes one operand");
                };
                let n = b.shape(t).as_tuple().map_or(0, |t| t.len());
                if k < 0 || k as usize >= n {
                    return err(pos, format!("tuple index {k} out of range"));
                }
                Ok(vec![b.gte(t, k as usize)])
            }
            "func.call" => {
                let ops = self.operands(op, b, outers)?;
                let Some(Attr::Symbol(callee)) = op.attr("callee") else {
                    return err(pos, "call needs a callee");
                };
                let k = *self
                    .funcs
                    .get(callee)
                    .ok_or((pos, format!("call of undefined function `@{callee}`")))?;
                let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
                if let Some(kind) = op.attr("xla.fusion_kind") {
                    // an HLO fusion, written as a call of its fused computation
                    let kind = match kind {
                        Attr::Str(s) => FusionKind::from_name(s),
                        _ => None,
                    }
                    .ok_or((pos, "`xla.fusion_kind` must be \"kLoop\", \"kInput\", \"kOutput\" or \"kCustom\"".to_string()))?;
                    if shapes.len() != 1 {
                        return err(pos, "a fusion call has one result");
                    }
                    a.calls = vec![CompId(k as u32)];
                    a.fusion_kind = Some(kind);
                    return Ok(vec![b.push(Opcode::Fusion, shapes[0].clone(), ops, a)]);
                }
                a.to_apply = Some(CompId(k as u32));
                if shapes.len() == 1 {
                    return Ok(vec![b.push(Opcode::Call, shapes[0].clone(), ops, a)]);
                }
                let call = b.push(Opcode::Call, Shape::Tuple(shapes.clone()), ops, a);
                Ok((0..shapes.len()).map(|k| b.gte(call, k)).collect())
            }
            "custom_call" => {
                let target = match op.attr("call_target_name") {
                    Some(Attr::Str(s)) => s.clone(),
                    _ => return err(pos, "custom_call needs a target"),
                };
                if let Some(kind) = target.strip_prefix("check.") {
                    return self.check_op(op, kind, b, outers, checked);
                }
                let ops = self.operands(op, b, outers)?;
                a.custom_call_target = Some(target);
                self.results(op, b, Opcode::CustomCall, ops, a)
            }
            // parse-only ops with attributes, kept as HLO text spells them
            "fft" => {
                let ops = self.operands(op, b, outers)?;
                let t = kind_enum_attr(op, "fft_type", "fft_type")?.ok_or((
                    pos,
                    "`stablehlo.fft` needs attribute `fft_type`".to_string(),
                ))?;
                a.fft_type = Some(FftType::from_name(&t).ok_or((
                    pos,
                    format!("unknown fft type `{t}` (FFT, IFFT, RFFT or IRFFT)"),
                ))?);
                a.fft_length = Some(ints_attr(op, "fft_length")?);
                self.results(op, b, Opcode::Fft, ops, a)
            }
            "triangular_solve" => {
                let ops = self.operands(op, b, outers)?;
                let t = kind_enum_attr(op, "transpose_a", "transpose")?.ok_or((
                    pos,
                    "`stablehlo.triangular_solve` needs attribute `transpose_a`".to_string(),
                ))?;
                let transpose_a = TransposeA::from_name(&t).ok_or((
                    pos,
                    format!("unknown transpose_a `{t}` (NO_TRANSPOSE, TRANSPOSE or ADJOINT)"),
                ))?;
                a.triangular_solve = Some(TriangularSolveOptions {
                    left_side: bool_attr(op, "left_side")?,
                    lower: bool_attr(op, "lower")?,
                    unit_diagonal: bool_attr(op, "unit_diagonal")?,
                    transpose_a: Some(transpose_a),
                });
                self.results(op, b, Opcode::TriangularSolve, ops, a)
            }
            "rng_bit_generator" => {
                let ops = self.operands(op, b, outers)?;
                // StableHLO's default is DEFAULT
                let r = kind_enum_attr(op, "rng_algorithm", "rng_algorithm")?
                    .unwrap_or_else(|| "DEFAULT".to_string());
                a.rng_algorithm = Some(rng_algorithm(&r).ok_or((
                    pos,
                    format!("unknown rng algorithm `{r}` (DEFAULT, THREE_FRY or PHILOX)"),
                ))?);
                if op.result_types.len() != 2 {
                    return err(
                        pos,
                        "`stablehlo.rng_bit_generator` has two results (state, output)",
                    );
                }
                self.results(op, b, Opcode::RngBitGenerator, ops, a)
            }
            "real" | "imag" | "complex" | "cholesky" | "after_all" | "replica_id"
            | "partition_id" => {
                let ops = self.operands(op, b, outers)?;
                let code = match short {
                    "real" => Opcode::Real,
                    "imag" => Opcode::Imag,
                    "complex" => Opcode::Complex,
                    "cholesky" => Opcode::Cholesky,
                    "after_all" => Opcode::AfterAll,
                    "replica_id" => Opcode::ReplicaId,
                    _ => Opcode::PartitionId,
                };
                self.results(op, b, code, ops, a)
            }
            _ => err(pos, format!("unknown operation `{name}`")),
        }
    }

    /// The reducer of `applies stablehlo.add`: `(a, b) -> add(a, b)` on the init's type.
    fn applies_comp(&mut self, op: &Op, w: &str, b: &Builder, ops: &[InstrId]) -> R<CompId> {
        let code = elementwise(w)
            .filter(|c| c.arity() == crate::hlo::Arity::Fixed(2))
            .ok_or((op.pos, format!("unknown reducer `{w}`")))?;
        let n = ops.len() / 2;
        if n != 1 {
            return err(op.pos, "`applies` takes one input");
        }
        let s = b.shape(ops[1]).clone();
        let mut inner = Builder::new();
        let x = inner.param(s.clone());
        let y = inner.param(s.clone());
        let root = inner.push(code, s, vec![x, y], Attrs::default());
        self.new_comp(Computation {
            name: format!(
                "{}_{}",
                w.trim_start_matches("stablehlo."),
                self.comps.len()
            ),
            instructions: inner.instrs,
            root,
            other: vec![],
        })
    }

    fn while_op(&mut self, op: &Op, b: &mut Builder, outers: &[&Builder]) -> R<Vec<InstrId>> {
        let init = self.operands(op, b, outers)?;
        if op.regions.len() != 2 {
            return err(op.pos, "while needs a cond and a body region");
        }
        if let Some(w) = self.forwarding_while(op, b, &init) {
            return Ok(w);
        }
        let carried: Vec<Shape> = init.iter().map(|&i| b.shape(i).clone()).collect();
        let caps = self.captures(&op.regions, b, outers)?;
        let cap_shapes: Vec<(String, Vec<Shape>)> = caps
            .iter()
            .map(|(n, ids)| (n.clone(), ids.iter().map(|&i| b.shape(i).clone()).collect()))
            .collect();
        let cond = self.tuple_region(
            &op.regions[0],
            &carried,
            &cap_shapes,
            outers,
            b,
            "cond",
            false,
        )?;
        let body = self.tuple_region(
            &op.regions[1],
            &carried,
            &cap_shapes,
            outers,
            b,
            "body",
            true,
        )?;
        let mut state = init.clone();
        for (_, ids) in &caps {
            state.extend(ids.iter().copied());
        }
        let t = b.tuple(state);
        let shape = b.shape(t).clone();
        let w = b.push(
            Opcode::While,
            shape,
            vec![t],
            Attrs {
                condition: Some(cond),
                body: Some(body),
                ..Attrs::default()
            },
        );
        Ok((0..init.len()).map(|k| b.gte(w, k)).collect())
    }

    fn cond_op(
        &mut self,
        op: &Op,
        short: &str,
        b: &mut Builder,
        outers: &[&Builder],
    ) -> R<Vec<InstrId>> {
        let sel = self.operands(op, b, outers)?;
        let [sel] = sel[..] else {
            return err(op.pos, format!("{short} takes one operand"));
        };
        if short == "if" && op.regions.len() != 2 {
            return err(op.pos, "if needs two regions");
        }
        if let Some(forwarded) = self.forwarding_branches(op, b, outers)? {
            // each branch calls its computation's function on one value of
            // the enclosing scope: an HLO conditional of those computations
            let (comps, args): (Vec<CompId>, Vec<InstrId>) = forwarded.into_iter().unzip();
            let a = Attrs {
                branch_computations: comps,
                pred_branches: short == "if",
                ..Attrs::default()
            };
            let mut operands = vec![sel];
            operands.extend(args);
            let ids = self.results(op, b, Opcode::Conditional, operands, a)?;
            if ids.len() > 1 {
                b.synthetic.extend(ids.iter().copied());
            }
            return Ok(ids);
        }
        let caps = self.captures(&op.regions, b, outers)?;
        let cap_shapes: Vec<(String, Vec<Shape>)> = caps
            .iter()
            .map(|(n, ids)| (n.clone(), ids.iter().map(|&i| b.shape(i).clone()).collect()))
            .collect();
        let mut branches = Vec::new();
        for r in &op.regions {
            branches.push(self.tuple_region(r, &[], &cap_shapes, outers, b, "branch", false)?);
        }
        let mut items = Vec::new();
        for (_, ids) in &caps {
            items.extend(ids.iter().copied());
        }
        let mut operands = vec![sel];
        for _ in &branches {
            let t = b.tuple(items.clone());
            operands.push(t);
        }
        let a = Attrs {
            branch_computations: branches,
            pred_branches: short == "if",
            ..Attrs::default()
        };
        self.results(op, b, Opcode::Conditional, operands, a)
    }

    fn check_op(
        &mut self,
        op: &Op,
        kind: &str,
        b: &mut Builder,
        outers: &[&Builder],
        checked: bool,
    ) -> R<Vec<InstrId>> {
        let pos = op.pos;
        let (ck, is_const) = match kind {
            "expect_eq" => (CheckKind::Eq, false),
            "expect_eq_const" => (CheckKind::Eq, true),
            "expect_close" => (CheckKind::Close, false),
            "expect_almost_eq" => (CheckKind::AlmostEq, false),
            "expect_almost_eq_const" => (CheckKind::AlmostEq, true),
            _ => return err(pos, format!("unknown check `check.{kind}`")),
        };
        let ops = self.operands(op, b, outers)?;
        let (actual, expected) = match (is_const, &ops[..]) {
            (false, [x, y]) => (*x, *y),
            (true, [x]) => {
                let Some(Attr::Dense(d, t)) = op.attr("value") else {
                    return err(pos, format!("check.{kind} needs a dense value"));
                };
                let Type::Tensor(dims, e) = t else {
                    return err(pos, "a check value must be a tensor");
                };
                let data = constant_data(d, dims, *e, pos)?;
                let c = b.push(
                    Opcode::Constant,
                    shape_of(t),
                    vec![],
                    Attrs {
                        constant: Some(data),
                        ..Attrs::default()
                    },
                );
                (*x, c)
            }
            _ => return err(pos, format!("check.{kind}: wrong number of operands")),
        };
        let max_ulp = match op.attr("max_ulp_difference") {
            Some(Attr::Int(v)) => {
                Some(u64::try_from(*v).map_err(|_| (pos, "bad max_ulp_difference".to_string()))?)
            }
            _ => None,
        };
        let tolerance = match op.attr("tolerance") {
            Some(Attr::Float(v)) => Some(*v),
            Some(Attr::Int(v)) => Some(*v as f64),
            _ => None,
        };
        if checked {
            self.checks.push(PendingCheck {
                pos,
                kind: ck,
                actual,
                expected,
                max_ulp,
                tolerance,
            });
        }
        Ok(Vec::new())
    }
}

/// The instruction an op's `loc` and `xla.*` attributes describe: its one
/// new result, or the one new tuple its results are elements of.
fn named_result(b: &Builder, ids: &[InstrId], before: usize) -> Option<InstrId> {
    let fresh = |id: &InstrId| id.index() >= before && id.index() < b.instrs.len();
    match ids {
        [id] => fresh(id).then_some(*id),
        [first, ..] => {
            let of = |id: &InstrId| {
                let i = &b.instrs[id.index()];
                (i.opcode == Opcode::GetTupleElement && i.operands.len() == 1)
                    .then(|| i.operands[0])
            };
            let t = of(first)?;
            (ids.iter().all(|id| fresh(id) && of(id) == Some(t)) && fresh(&t)).then_some(t)
        }
        [] => None,
    }
}

/// The HLO attributes the printer carries verbatim, `xla.hlo.NAME = "value"`.
fn hlo_attrs(attrs: &[(String, Attr)]) -> Vec<(String, String)> {
    attrs
        .iter()
        .filter_map(|(k, v)| match (k.strip_prefix("xla.hlo."), v) {
            (Some(name), Attr::Str(s)) if !name.is_empty() => Some((name.to_string(), s.clone())),
            _ => None,
        })
        .collect()
}

/// Restores what the printer carries for one HLO instruction: its name
/// (`loc("name")`), its shape with layouts (`xla.shape = "f32[2,3]{0,1}"`,
/// the same dims and types as the op's) and its verbatim attributes.
fn annotate(i: &mut Instruction, loc: Option<&str>, attrs: &[(String, Attr)], pos: usize) -> R<()> {
    if let Some(name) = loc.filter(|n| !n.is_empty()) {
        i.name = name.to_string();
    }
    if let Some((_, a)) = attrs.iter().find(|(k, _)| k == "xla.shape") {
        let shape = match a {
            Attr::Str(s) => crate::hlo::parser::parse_shape_text(s),
            _ => None,
        }
        .ok_or((
            pos,
            "`xla.shape` must be an HLO shape in a string".to_string(),
        ))?;
        if shape.to_string() != with_layouts(&i.shape, &shape).to_string() {
            return err(
                pos,
                format!("`xla.shape` {shape} does not match the type {}", i.shape),
            );
        }
        i.shape = shape;
    }
    // group counts of 1 the HLO text wrote explicitly
    if let Some((_, a)) = attrs.iter().find(|(k, _)| k == "xla.explicit_group_counts") {
        let bad = || {
            (
                pos,
                "`xla.explicit_group_counts` is \"feature\", \"batch\" or both, on a convolution"
                    .to_string(),
            )
        };
        let (Attr::Str(list), Opcode::Convolution) = (a, i.opcode) else {
            return Err(bad());
        };
        for k in list.split(',') {
            let count = match k {
                "feature" => &mut i.attrs.feature_group_count,
                "batch" => &mut i.attrs.batch_group_count,
                _ => return Err(bad()),
            };
            if count.is_none() {
                *count = Some(1);
            }
        }
    }
    // an HLO op StableHLO has no op for, written as the equivalent reshape
    match attrs.iter().find(|(k, _)| k == "xla.hlo_opcode") {
        None => {}
        Some((_, Attr::Str(o))) if i.opcode == Opcode::Reshape && o == "copy" => {
            i.opcode = Opcode::Copy;
        }
        Some((_, Attr::Str(o))) if i.opcode == Opcode::Reshape && o == "bitcast" => {
            i.opcode = Opcode::Bitcast;
        }
        Some(_) => {
            return err(
                pos,
                "`xla.hlo_opcode` is \"copy\" or \"bitcast\", on a reshape",
            )
        }
    }
    i.attrs.other.extend(hlo_attrs(attrs));
    Ok(())
}

/// The tuple-shaped instruction a `stablehlo.tuple` op rebuilds: its
/// operands are `%r#0`, ..., `%r#n-1`, every result of one op, which the
/// reader took apart with `get-tuple-element`s of that instruction.
fn whole_tuple(op: &Op, b: &Builder) -> Option<InstrId> {
    if op.name != "stablehlo.tuple" || op.results.len() != 1 || op.results[0].1 != 1 {
        return None;
    }
    let first = op.operands.first()?;
    let parts = b.scope.get(&first.name)?;
    let in_order = op.operands.len() == parts.len()
        && parts.len() > 1
        && op
            .operands
            .iter()
            .enumerate()
            .all(|(k, v)| v.name == first.name && v.index == Some(k));
    if !in_order {
        return None;
    }
    let t = match b.instrs.get(parts[0].index()) {
        Some(g) if g.opcode == Opcode::GetTupleElement && g.operands.len() == 1 => g.operands[0],
        _ => return None,
    };
    let all = parts.iter().enumerate().all(|(k, p)| {
        b.synthetic.contains(p)
            && b.instrs.get(p.index()).is_some_and(|g| {
                g.opcode == Opcode::GetTupleElement
                    && g.operands == [t]
                    && g.attrs.index == Some(k as i64)
            })
    });
    let arity = b.instrs.get(t.index())?.shape.as_tuple()?.len();
    (all && arity == parts.len()).then_some(t)
}

/// Removes `dead` instructions (nothing uses them) from `c`, renumbering the rest.
fn drop_instructions(c: &mut Computation, dead: &[InstrId]) {
    if dead.is_empty() {
        return;
    }
    let mut new_index = vec![None; c.instructions.len()];
    let mut kept = Vec::with_capacity(c.instructions.len());
    for (k, i) in std::mem::take(&mut c.instructions).into_iter().enumerate() {
        if dead.contains(&InstrId(k as u32)) {
            continue;
        }
        new_index[k] = Some(InstrId(kept.len() as u32));
        kept.push(i);
    }
    for i in &mut kept {
        for o in &mut i.operands {
            if let Some(Some(n)) = new_index.get(o.index()) {
                *o = *n;
            }
        }
    }
    if let Some(Some(n)) = new_index.get(c.root.index()) {
        c.root = *n;
    }
    c.instructions = kept;
}

/// `s` with the layouts of `like` where the structure matches (for comparing
/// an `xla.shape` with the op's type).
fn with_layouts(s: &Shape, like: &Shape) -> Shape {
    match (s, like) {
        (Shape::Array(a), Shape::Array(l)) => {
            let mut a = a.clone();
            a.layout = l.layout.clone();
            Shape::Array(a)
        }
        (Shape::Tuple(a), Shape::Tuple(l)) if a.len() == l.len() => {
            Shape::Tuple(a.iter().zip(l).map(|(x, y)| with_layouts(x, y)).collect())
        }
        _ => s.clone(),
    }
}

/// Moves a function's parameters (its first `n` instructions) to the
/// instruction positions the printer recorded, keeping every other
/// instruction's relative order.
fn place_parameters(c: &mut Computation, n: usize, positions: &[i64]) -> bool {
    let total = c.instructions.len();
    if positions.len() != n || n > total {
        return false;
    }
    let mut order: Vec<Option<usize>> = vec![None; total];
    for (k, &p) in positions.iter().enumerate() {
        let Some(p) = usize::try_from(p)
            .ok()
            .filter(|&p| p < total && order[p].is_none())
        else {
            return false;
        };
        order[p] = Some(k);
    }
    let mut rest = n..total;
    let Some(order) = order
        .into_iter()
        .map(|o| o.or_else(|| rest.next()))
        .collect::<Option<Vec<usize>>>()
    else {
        return false;
    };
    let mut new_index = vec![0u32; total];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new as u32;
    }
    let mut moved: Vec<Instruction> = order.iter().map(|&o| c.instructions[o].clone()).collect();
    for i in &mut moved {
        for op in &mut i.operands {
            if let Some(&k) = new_index.get(op.index()) {
                *op = InstrId(k);
            }
        }
    }
    c.instructions = moved;
    if let Some(&k) = new_index.get(c.root.index()) {
        c.root = InstrId(k);
    }
    true
}

fn outer_is_constant(outers: &[&Builder], name: &str) -> bool {
    for o in outers.iter().rev() {
        if let Some(ids) = o.scope.get(name) {
            return ids.len() == 1 && o.instrs[ids[0].index()].opcode == Opcode::Constant;
        }
    }
    false
}

/// Values used in `r` (and its nested regions) that it does not define, in first-use order.
fn free_vars(
    r: &Region,
    defined: &mut HashSet<String>,
    out: &mut Vec<ValueRef>,
    seen: &mut HashSet<String>,
) {
    let mut local = defined.clone();
    for (a, _) in &r.args {
        local.insert(a.clone());
    }
    for op in &r.ops {
        for v in &op.operands {
            if !local.contains(&v.name) && seen.insert(v.name.clone()) {
                out.push(ValueRef {
                    name: v.name.clone(),
                    index: None,
                    pos: v.pos,
                });
            }
        }
        for sub in &op.regions {
            free_vars(sub, &mut local.clone(), out, seen);
        }
        for (n, _) in &op.results {
            local.insert(n.clone());
        }
    }
}

/// Emits one instruction of `shapes.len()` results (a tuple when several).
pub(crate) fn emit(
    b: &mut Builder,
    opcode: Opcode,
    shapes: Vec<Shape>,
    operands: Vec<InstrId>,
    attrs: Attrs,
) -> Vec<InstrId> {
    if shapes.len() == 1 {
        return vec![b.push(opcode, shapes[0].clone(), operands, attrs)];
    }
    let n = shapes.len();
    let t = b.push(opcode, Shape::Tuple(shapes), operands, attrs);
    let parts: Vec<InstrId> = (0..n).map(|k| b.gte(t, k)).collect();
    b.synthetic.extend(parts.iter().copied());
    parts
}

fn one_result(op: &Op) -> R<(Vec<i64>, ElementType)> {
    match op.result_types.as_slice() {
        [Type::Tensor(d, e)] => Ok((d.clone(), *e)),
        _ => err(op.pos, format!("`{}` has one tensor result", op.name)),
    }
}

/// StableHLO's broadcast_in_dim may expand size-1 dimensions; HLO's
/// broadcast may not, so those are reshaped away first.
pub(crate) fn broadcast_in_dim(
    b: &mut Builder,
    x: InstrId,
    dims: &[i64],
    out: (Vec<i64>, ElementType),
    pos: usize,
) -> R<InstrId> {
    let (in_dims, dtype) = b.array(x, pos)?;
    if in_dims.len() != dims.len() {
        return err(
            pos,
            "broadcast_dimensions must name every operand dimension",
        );
    }
    let mut keep = Vec::new();
    let mut keep_dims = Vec::new();
    for (k, &d) in dims.iter().enumerate() {
        let target = usize::try_from(d).ok().and_then(|d| out.0.get(d)).copied();
        let Some(target) = target else {
            return err(pos, format!("broadcast dimension {d} out of range"));
        };
        if in_dims[k] == target {
            keep.push(in_dims[k]);
            keep_dims.push(d);
        } else if in_dims[k] != 1 {
            return err(
                pos,
                format!(
                    "cannot broadcast dimension of size {} to {target}",
                    in_dims[k]
                ),
            );
        }
    }
    let src = if keep.len() == in_dims.len() {
        x
    } else {
        b.push(
            Opcode::Reshape,
            Shape::array(dtype, keep),
            vec![x],
            Attrs::default(),
        )
    };
    if keep_dims.len() == out.0.len() && keep_dims.iter().enumerate().all(|(i, &d)| d == i as i64) {
        // an identity broadcast: keep it a broadcast so the text reads back the same
    }
    Ok(b.push(
        Opcode::Broadcast,
        Shape::array(out.1, out.0),
        vec![src],
        Attrs {
            dimensions: Some(keep_dims),
            ..Attrs::default()
        },
    ))
}

/// Select and clamp take scalar operands in StableHLO; HLO wants them broadcast.
fn broadcast_scalars(b: &mut Builder, op: &Op, ops: Vec<InstrId>) -> R<Vec<InstrId>> {
    let Some(Type::Tensor(dims, _)) = op.result_types.first() else {
        return Ok(ops);
    };
    if dims.is_empty() {
        return Ok(ops);
    }
    let mut out = Vec::new();
    for x in ops {
        let (d, e) = b.array(x, op.pos)?;
        if d.is_empty() {
            out.push(broadcast_in_dim(b, x, &[], (dims.clone(), e), op.pos)?);
        } else {
            out.push(x);
        }
    }
    Ok(out)
}

/// StableHLO op name -> elementwise HLO opcode.
pub(crate) fn elementwise(name: &str) -> Option<Opcode> {
    use Opcode as O;
    let short = name.strip_prefix("stablehlo.").unwrap_or(name);
    Some(match short {
        "abs" => O::Abs,
        "negate" => O::Negate,
        "sign" => O::Sign,
        "not" => O::Not,
        "ceil" => O::Ceil,
        "floor" => O::Floor,
        "round_nearest_afz" => O::RoundNearestAfz,
        "round_nearest_even" => O::RoundNearestEven,
        "exponential" => O::Exponential,
        "exponential_minus_one" => O::ExponentialMinusOne,
        "log" => O::Log,
        "log_plus_one" => O::LogPlusOne,
        "logistic" => O::Logistic,
        "sine" => O::Sine,
        "cosine" => O::Cosine,
        "tan" => O::Tan,
        "tanh" => O::Tanh,
        "sqrt" => O::Sqrt,
        "rsqrt" => O::Rsqrt,
        "cbrt" => O::Cbrt,
        "is_finite" => O::IsFinite,
        "popcnt" => O::Popcnt,
        "count_leading_zeros" => O::CountLeadingZeros,
        "add" => O::Add,
        "subtract" => O::Subtract,
        "multiply" => O::Multiply,
        "divide" => O::Divide,
        "remainder" => O::Remainder,
        "power" => O::Power,
        "maximum" => O::Maximum,
        "minimum" => O::Minimum,
        "atan2" => O::Atan2,
        "and" => O::And,
        "or" => O::Or,
        "xor" => O::Xor,
        "shift_left" => O::ShiftLeft,
        "shift_right_arithmetic" => O::ShiftRightArithmetic,
        "shift_right_logical" => O::ShiftRightLogical,
        "select" => O::Select,
        "clamp" => O::Clamp,
        "convert" => O::Convert,
        "bitcast_convert" => O::BitcastConvert,
        "reshape" => O::Reshape,
        _ => return None,
    })
}

// ---- attribute readers ----

fn attr_ints(a: &Attr) -> Option<Vec<i64>> {
    match a {
        Attr::Array(v) => Some(v.clone()),
        Attr::List(items) => items
            .iter()
            .map(|i| match i {
                Attr::Int(v) => i64::try_from(*v).ok(),
                Attr::Bool(b) => Some(*b as i64),
                _ => None,
            })
            .collect(),
        Attr::Dense(d, Type::Tensor(dims, _)) => {
            let data = constant_data(d, dims, ElementType::S64, 0).ok()?;
            match data {
                crate::hlo::ConstantData::Int(v) => {
                    v.iter().map(|&x| i64::try_from(x).ok()).collect()
                }
                _ => None,
            }
        }
        Attr::Int(v) => Some(vec![i64::try_from(*v).ok()?]),
        _ => None,
    }
}

fn opt_ints_attr(op: &Op, name: &str) -> R<Option<Vec<i64>>> {
    match op.attr(name) {
        None => Ok(None),
        Some(a) => attr_ints(a).map(Some).ok_or((
            op.pos,
            format!(
                "attribute `{name}` of `{}` must be a list of integers",
                op.name
            ),
        )),
    }
}

fn ints_attr(op: &Op, name: &str) -> R<Vec<i64>> {
    opt_ints_attr(op, name)?.ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

fn opt_int_attr(op: &Op, name: &str) -> R<Option<i64>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Int(v)) => i64::try_from(*v)
            .map(Some)
            .map_err(|_| (op.pos, format!("attribute `{name}` out of range"))),
        Some(_) => err(
            op.pos,
            format!("attribute `{name}` of `{}` must be an integer", op.name),
        ),
    }
}

fn int_attr(op: &Op, name: &str) -> R<i64> {
    opt_int_attr(op, name)?.ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

fn bool_attr(op: &Op, name: &str) -> R<bool> {
    match op.attr(name) {
        None => Ok(false),
        Some(Attr::Bool(b)) => Ok(*b),
        Some(Attr::Unit) => Ok(true),
        Some(_) => err(op.pos, format!("attribute `{name}` must be a boolean")),
    }
}

fn enum_attr(op: &Op, name: &str) -> R<Option<String>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Enum(_, v)) | Some(Attr::Word(v)) => Ok(Some(v.clone())),
        Some(_) => err(op.pos, format!("attribute `{name}` must be an enum")),
    }
}

/// An enum attribute of one kind: the pretty form's bare word, or
/// `#stablehlo<KIND VALUE>`; another kind, or another attribute, is an error.
fn kind_enum_attr(op: &Op, name: &str, kind: &str) -> R<Option<String>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Word(v)) => Ok(Some(v.clone())),
        Some(Attr::Enum(k, v)) if k == kind => Ok(Some(v.clone())),
        Some(_) => err(
            op.pos,
            format!(
                "attribute `{name}` of `{}` must be `#stablehlo<{kind} ...>`",
                op.name
            ),
        ),
    }
}

/// StableHLO's rng algorithm (`THREE_FRY`) as HLO's.
pub(crate) fn rng_algorithm(s: &str) -> Option<RngAlgorithm> {
    RngAlgorithm::ALL
        .into_iter()
        .find(|r| stablehlo_rng_algorithm(*r) == s)
}

/// HLO's rng algorithm as StableHLO spells it (`rng_three_fry` is `THREE_FRY`).
pub(crate) fn stablehlo_rng_algorithm(r: RngAlgorithm) -> &'static str {
    match r {
        RngAlgorithm::Default => "DEFAULT",
        RngAlgorithm::ThreeFry => "THREE_FRY",
        RngAlgorithm::Philox => "PHILOX",
    }
}

fn struct_attr_opt(op: &Op, name: &str, kind: &str) -> R<Option<Vec<(String, Attr)>>> {
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::Struct(k, f)) if k == kind => Ok(Some(f.clone())),
        Some(_) => err(
            op.pos,
            format!("attribute `{name}` must be a #stablehlo.{kind}"),
        ),
    }
}

fn struct_attr(op: &Op, name: &str, kind: &str) -> R<Vec<(String, Attr)>> {
    struct_attr_opt(op, name, kind)?
        .ok_or((op.pos, format!("`{}` needs attribute `{name}`", op.name)))
}

const KNOWN_FIELDS: &[&str] = &[
    "offset_dims",
    "collapsed_slice_dims",
    "start_index_map",
    "index_vector_dim",
    "operand_batching_dims",
    "start_indices_batching_dims",
    "update_window_dims",
    "inserted_window_dims",
    "scatter_dims_to_operand_dims",
    "input_batching_dims",
    "scatter_indices_batching_dims",
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
];

fn check_fields(f: &[(String, Attr)], pos: usize) -> R<()> {
    for (k, _) in f {
        if !KNOWN_FIELDS.contains(&k.as_str()) {
            return err(pos, format!("unknown dimension-number field `{k}`"));
        }
    }
    Ok(())
}

fn field_ints(f: &[(String, Attr)], name: &str, pos: usize) -> R<Vec<i64>> {
    check_fields(f, pos)?;
    match f.iter().find(|(k, _)| k == name) {
        None => Ok(Vec::new()),
        Some((_, a)) => {
            attr_ints(a).ok_or((pos, format!("field `{name}` must be a list of integers")))
        }
    }
}

fn field_int(f: &[(String, Attr)], name: &str, pos: usize) -> R<Option<i64>> {
    match f.iter().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, Attr::Int(v))) => Ok(i64::try_from(*v).ok()),
        Some(_) => err(pos, format!("field `{name}` must be an integer")),
    }
}

fn opt_padding(op: &Op, name: &str) -> R<Option<Vec<(i64, i64)>>> {
    let bad = || {
        (
            op.pos,
            format!("attribute `{name}` must be pairs of integers"),
        )
    };
    match op.attr(name) {
        None => Ok(None),
        Some(Attr::List(rows)) => rows
            .iter()
            .map(|r| match attr_ints(r).as_deref() {
                Some([lo, hi]) => Ok((*lo, *hi)),
                _ => Err(bad()),
            })
            .collect::<R<Vec<_>>>()
            .map(Some),
        Some(a) => {
            let v = attr_ints(a).ok_or_else(bad)?;
            if v.len() % 2 != 0 {
                return Err(bad());
            }
            Ok(Some(v.chunks(2).map(|c| (c[0], c[1])).collect()))
        }
    }
}

fn window(op: &Op, dilations: bool) -> R<Vec<WindowDim>> {
    let sizes = ints_attr(op, "window_dimensions")?;
    let n = sizes.len();
    let strides = opt_ints_attr(op, "window_strides")?.unwrap_or_else(|| vec![1; n]);
    let pads = opt_padding(op, "padding")?.unwrap_or_else(|| vec![(0, 0); n]);
    let (base, win) = if dilations {
        (
            opt_ints_attr(op, "base_dilations")?.unwrap_or_else(|| vec![1; n]),
            opt_ints_attr(op, "window_dilations")?.unwrap_or_else(|| vec![1; n]),
        )
    } else {
        (vec![1; n], vec![1; n])
    };
    if [strides.len(), pads.len(), base.len(), win.len()]
        .iter()
        .any(|&k| k != n)
    {
        return err(op.pos, "window attributes differ in length");
    }
    Ok((0..n)
        .map(|k| WindowDim {
            size: sizes[k],
            stride: strides[k],
            pad_low: pads[k].0,
            pad_high: pads[k].1,
            base_dilation: base[k],
            window_dilation: win[k],
            reversal: false,
        })
        .collect())
}

fn precision(op: &Op) -> R<Option<Vec<String>>> {
    match op.attr("precision_config") {
        None => Ok(None),
        Some(Attr::List(items)) => items
            .iter()
            .map(|i| match i {
                Attr::Enum(_, v) | Attr::Word(v) => match v.as_str() {
                    "DEFAULT" | "HIGH" | "HIGHEST" => Ok(v.to_ascii_lowercase()),
                    _ => err(op.pos, format!("unknown precision `{v}`")),
                },
                _ => err(op.pos, "precision_config must list precisions"),
            })
            .collect::<R<Vec<_>>>()
            .map(Some),
        Some(_) => err(op.pos, "precision_config must be a list"),
    }
}

fn conv_dims(l: &[Vec<String>], pos: usize) -> R<ConvDims> {
    let find = |list: &[String], label: &str| -> R<i64> {
        list.iter()
            .position(|s| s == label)
            .map(|k| k as i64)
            .ok_or((pos, format!("convolution dimension numbers lack `{label}`")))
    };
    let spatial = |list: &[String]| -> R<Vec<i64>> {
        let n = list.len().saturating_sub(2);
        (0..n).map(|k| find(list, &k.to_string())).collect()
    };
    if l.len() != 3 || l[0].len() != l[1].len() || l[0].len() != l[2].len() {
        return err(pos, "convolution dimension numbers differ in rank");
    }
    Ok(ConvDims {
        input_batch: find(&l[0], "b")?,
        input_feature: find(&l[0], "f")?,
        input_spatial: spatial(&l[0])?,
        kernel_input_feature: find(&l[1], "i")?,
        kernel_output_feature: find(&l[1], "o")?,
        kernel_spatial: spatial(&l[1])?,
        output_batch: find(&l[2], "b")?,
        output_feature: find(&l[2], "f")?,
        output_spatial: spatial(&l[2])?,
    })
}
