//! The interpreter's engine: a compiled module (a plan per computation:
//! evaluation order, when each value dies, constants, recognized reducers
//! and comparators), the run loop, and the opcode dispatch. The op families
//! live in their own files; `reduce.rs` extends [`Compiled`] with the ops
//! that call computations.

use std::collections::HashMap;

use super::elem::{err, Res, ValRef};
use crate::backend::api::{Executable, FusionProbe, ProbedValue};
use crate::backend::error::BackendError;
use crate::hlo::{
    ArrayShape, CompId, ComparisonDirection, ComparisonType, ConstantData, InstrId, Instruction,
    Module, Opcode, Shape,
};
use crate::literal::{Literal, Value};
use crate::reference::collective::{self, DeviceContext};
use crate::reference::from_leaves;

/// How a called computation combines two scalars, when it is that simple.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reducer {
    /// `root = op(p0, p1)` (or `op(p1, p0)` for a commutative op).
    Binary(Opcode),
    /// `root = p1` (scatter's overwrite).
    TakeSecond,
    /// Anything else: run the computation.
    Generic,
}

/// A comparator that is one `compare(p0, p1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SimpleCompare {
    pub direction: ComparisonDirection,
    pub total_order: bool,
}

/// The per-computation plan: evaluation order and when each value dies.
pub(super) struct CompPlan {
    order: Vec<InstrId>,
    /// After evaluating `order[k]`, drop these values.
    drops: Vec<Vec<InstrId>>,
    /// Parameter instruction of each parameter number.
    params: Vec<InstrId>,
    /// Constant values, by instruction index.
    constants: Vec<Option<Value>>,
    reducer: Reducer,
    compare: Option<SimpleCompare>,
}

/// A compiled module: the plan of every computation.
pub(crate) struct Compiled {
    pub(super) module: Module,
    comps: Vec<CompPlan>,
    while_limit: u64,
    /// Fusion instructions by name: (computation, instruction).
    fusions: HashMap<String, (CompId, InstrId)>,
    /// This device, when the module runs on many.
    device: Option<std::sync::Mutex<DeviceContext>>,
}

pub(super) fn compile_err<T>(msg: impl Into<String>) -> Result<T, BackendError> {
    Err(BackendError::Compile(msg.into()))
}

pub(super) fn constant_value(data: &ConstantData, shape: &Shape) -> Result<Value, String> {
    match (data, shape) {
        (ConstantData::Tuple(ds), Shape::Tuple(ss)) if ds.len() == ss.len() => Ok(Value::Tuple(
            ds.iter()
                .zip(ss)
                .map(|(d, s)| constant_value(d, s))
                .collect::<Result<_, _>>()?,
        )),
        (_, Shape::Array(a)) => {
            let plain = ArrayShape::new(a.dtype, a.dims.clone());
            let lit = match data {
                ConstantData::Float(v) => Literal::from_f64s(&plain, v),
                ConstantData::Int(v) => Literal::from_i128s(&plain, v),
                ConstantData::Pred(v) => {
                    Literal::from_i128s(&plain, &v.iter().map(|&b| b as i128).collect::<Vec<_>>())
                }
                ConstantData::Complex(v) => complex_constant(&plain, v),
                _ => return Err(format!("constant does not match its shape {shape}")),
            }
            .map_err(|e| e.to_string())?;
            Ok(Value::Array(lit.with_layout(a.layout.clone())))
        }
        _ => Err(format!("constant does not match its shape {shape}")),
    }
}

/// A complex constant from its `(re, im)` pairs, each part rounded once.
fn complex_constant(
    s: &ArrayShape,
    v: &[(f64, f64)],
) -> Result<Literal, crate::literal::LiteralError> {
    let plane = crate::literal::plane_shape(s);
    if plane.dtype == s.dtype {
        return Err(crate::literal::LiteralError::Other(format!(
            "a complex constant of type {}",
            s.dtype
        )));
    }
    let re: Vec<f64> = v.iter().map(|c| c.0).collect();
    let im: Vec<f64> = v.iter().map(|c| c.1).collect();
    Literal::from_planes(
        &Literal::from_f64s(&plane, &re)?,
        &Literal::from_f64s(&plane, &im)?,
    )
}

pub(super) fn classify_reducer(comp: &crate::hlo::Computation) -> Reducer {
    let params = comp.parameters();
    if params.len() != 2 {
        return Reducer::Generic;
    }
    let root = comp.instr(comp.root);
    if comp.root == params[1] {
        return Reducer::TakeSecond;
    }
    let commutative = crate::reference::reduction::commutative(root.opcode);
    let scalar = |id: InstrId| {
        comp.instr(id)
            .shape
            .as_array()
            .is_some_and(|a| a.dims.is_empty())
    };
    if commutative
        && root.operands.len() == 2
        && scalar(params[0])
        && scalar(params[1])
        && comp.instr(params[0]).shape.compatible(&root.shape)
        && comp.instr(params[1]).shape.compatible(&root.shape)
        && (root.operands == [params[0], params[1]] || root.operands == [params[1], params[0]])
    {
        return Reducer::Binary(root.opcode);
    }
    Reducer::Generic
}

pub(super) fn classify_compare(comp: &crate::hlo::Computation) -> Option<SimpleCompare> {
    let params = comp.parameters();
    let root = comp.instr(comp.root);
    if root.opcode != Opcode::Compare || params.len() < 2 || root.operands != [params[0], params[1]]
    {
        return None;
    }
    Some(SimpleCompare {
        direction: root.attrs.direction?,
        total_order: root.attrs.comparison_type == Some(ComparisonType::TotalOrder),
    })
}

impl Compiled {
    pub(super) fn new(module: &Module, while_limit: u64) -> Result<Compiled, BackendError> {
        let ncomp = module.computations.len();
        if module.entry.index() >= ncomp {
            return compile_err("the entry computation does not exist");
        }
        let mut comps = Vec::with_capacity(ncomp);
        let mut fusions = HashMap::new();
        for (ci, comp) in module.computations.iter().enumerate() {
            let n = comp.instructions.len();
            if comp.root.index() >= n {
                return compile_err(format!(
                    "computation `{}` has no root instruction",
                    comp.name
                ));
            }
            check_instructions(comp, ncomp)?;
            let order = comp.post_order().ok_or_else(|| {
                BackendError::Compile(format!("computation `{}` has a cycle", comp.name))
            })?;
            for (k, ins) in comp.instructions.iter().enumerate() {
                if ins.opcode == Opcode::Fusion {
                    fusions.insert(ins.name.clone(), (CompId(ci as u32), InstrId(k as u32)));
                }
            }
            // last use of each value
            let mut last = vec![usize::MAX; n];
            for (pos, &id) in order.iter().enumerate() {
                for o in &comp.instr(id).operands {
                    last[o.index()] = pos;
                }
                if last[id.index()] == usize::MAX {
                    last[id.index()] = pos;
                }
            }
            let mut drops = vec![Vec::new(); order.len()];
            for (pos, &id) in order.iter().enumerate() {
                let l = last[id.index()].max(pos);
                if id != comp.root {
                    drops[l].push(id);
                }
            }
            let params = comp.parameters();
            for (k, &p) in params.iter().enumerate() {
                if comp.instr(p).attrs.parameter_number != Some(k as i64) {
                    return compile_err(format!(
                        "computation `{}`: parameter numbers are not 0..{}",
                        comp.name,
                        params.len()
                    ));
                }
            }
            let mut constants = vec![None; n];
            for (k, ins) in comp.instructions.iter().enumerate() {
                if ins.opcode == Opcode::Constant {
                    let data = ins.attrs.constant.as_ref().ok_or_else(|| {
                        BackendError::Compile(format!("constant `{}` has no value", ins.name))
                    })?;
                    constants[k] = Some(constant_value(data, &ins.shape).map_err(|e| {
                        BackendError::Compile(format!("constant `{}`: {e}", ins.name))
                    })?);
                }
            }
            comps.push(CompPlan {
                order,
                drops,
                params,
                constants,
                reducer: classify_reducer(comp),
                compare: classify_compare(comp),
            });
        }
        check_call_graph(module)?;
        Ok(Compiled {
            module: module.clone(),
            comps,
            while_limit,
            fusions,
            device: None,
        })
    }

    /// Runs computation `cid` on `args`; with `trace`, records every value.
    pub(crate) fn run<'a>(
        &'a self,
        cid: CompId,
        args: &[ValRef<'a>],
        mut trace: Option<&mut Vec<ProbedValue>>,
    ) -> Res<Value> {
        enum Slot<'a> {
            Owned(Value),
            Borrowed(ValRef<'a>),
        }
        impl Slot<'_> {
            fn view(&self) -> ValRef<'_> {
                match self {
                    Slot::Owned(v) => ValRef::of(v),
                    Slot::Borrowed(r) => *r,
                }
            }
        }
        let plan = &self.comps[cid.index()];
        let comp = self.module.comp(cid);
        if args.len() != plan.params.len() {
            return err(format!(
                "computation `{}` takes {} arguments, got {}",
                comp.name,
                plan.params.len(),
                args.len()
            ));
        }
        let mut env: Vec<Option<Slot<'a>>> = (0..comp.instructions.len()).map(|_| None).collect();
        for (k, &p) in plan.params.iter().enumerate() {
            env[p.index()] = Some(Slot::Borrowed(args[k]));
        }
        for (pos, &id) in plan.order.iter().enumerate() {
            let ins = comp.instr(id);
            match ins.opcode {
                Opcode::Parameter => {}
                Opcode::Constant => {
                    if let Some(v) = &plan.constants[id.index()] {
                        env[id.index()] = Some(Slot::Borrowed(ValRef::of(v)));
                    }
                }
                _ => {
                    // refuse results over the literal size budget before allocating anything
                    match &ins.shape {
                        Shape::Array(a) if a.dims.is_empty() => {}
                        s => {
                            for leaf in s.leaves() {
                                crate::literal::check_size(leaf).map_err(|e| {
                                    BackendError::Execute(format!("in `{}`: {e}", ins.name))
                                })?;
                            }
                        }
                    }
                    let ops: Vec<ValRef<'_>> = ins
                        .operands
                        .iter()
                        .map(|o| match &env[o.index()] {
                            Some(s) => Ok(s.view()),
                            None => err(format!("`{}`: operand has no value", ins.name)),
                        })
                        .collect::<Res<_>>()?;
                    let v = self
                        .eval(cid, ins, &ops)
                        .map_err(|e| in_instruction(e, &ins.name))?;
                    drop(ops);
                    let v = check_declared(v, ins)?;
                    env[id.index()] = Some(Slot::Owned(v));
                }
            }
            if let Some(t) = trace.as_deref_mut() {
                if let Some(s) = &env[id.index()] {
                    t.push(ProbedValue {
                        instruction: ins.name.clone(),
                        shape: ins.shape.clone(),
                        value: s.view().to_value(),
                    });
                }
            }
            for d in &plan.drops[pos] {
                env[d.index()] = None;
            }
        }
        match env[comp.root.index()].take() {
            Some(Slot::Owned(v)) => Ok(v),
            Some(Slot::Borrowed(r)) => Ok(r.to_value()),
            None => err(format!("computation `{}`: root has no value", comp.name)),
        }
    }

    /// Runs a called computation on scalar literals and returns its flattened result.
    pub(crate) fn call_scalars(&self, cid: CompId, args: &[Literal]) -> Res<Vec<Literal>> {
        let refs: Vec<ValRef<'_>> = args.iter().map(ValRef::Array).collect();
        Ok(self.run(cid, &refs, None)?.into_flat())
    }

    /// This device's context, in a multi-device run.
    pub(super) fn device(&self) -> Option<&std::sync::Mutex<DeviceContext>> {
        self.device.as_ref()
    }

    pub(super) fn set_device(&mut self, ctx: DeviceContext) {
        self.device = Some(std::sync::Mutex::new(ctx));
    }

    pub(super) fn reducer(&self, cid: CompId) -> Reducer {
        self.comps[cid.index()].reducer
    }

    pub(super) fn simple_compare(&self, cid: CompId) -> Option<SimpleCompare> {
        self.comps[cid.index()].compare
    }

    pub(super) fn run_while(&self, cond: CompId, body: CompId, ops: &[ValRef<'_>]) -> Res<Value> {
        let Some(&init) = ops.first() else {
            return err("while: missing operand");
        };
        let mut state = init.to_value();
        let mut n = 0u64;
        loop {
            let c = self.run(cond, &[ValRef::of(&state)], None)?;
            let go = match &c {
                Value::Array(l)
                    if l.element_count() == 1 && l.dtype() == crate::hlo::ElementType::Pred =>
                {
                    l.get_bits(0) != 0
                }
                _ => return err("while: condition did not return a pred scalar"),
            };
            if !go {
                return Ok(state);
            }
            if n >= self.while_limit {
                return err(format!(
                    "while loop exceeded the iteration limit of {}",
                    self.while_limit
                ));
            }
            state = self.run(body, &[ValRef::of(&state)], None)?;
            n += 1;
        }
    }

    pub(super) fn conditional(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let branches = &ins.attrs.branch_computations;
        if branches.is_empty() || ops.len() != branches.len() + 1 {
            return err("conditional: branch computations do not match the operands");
        }
        let sel = ops[0].array("conditional")?;
        if sel.element_count() != 1 {
            return err("conditional: selector is not a scalar");
        }
        let k = if sel.dtype() == crate::hlo::ElementType::Pred {
            if sel.get_bits(0) != 0 {
                0
            } else {
                1
            }
        } else {
            let i = sel.get_i128(0);
            // out-of-range indices run the last branch
            if i < 0 || i as usize >= branches.len() {
                branches.len() - 1
            } else {
                i as usize
            }
        };
        let Some(&b) = branches.get(k) else {
            return err("conditional: a pred selector needs two branches");
        };
        self.run(b, &ops[k + 1..k + 2], None)
    }

    fn entry_params(&self) -> Vec<&Instruction> {
        let entry = self.module.entry_computation();
        self.comps[self.module.entry.index()]
            .params
            .iter()
            .map(|&p| entry.instr(p))
            .collect()
    }
}

/// Every instruction of `comp` is one the interpreter runs, with as many
/// operands as its opcode takes, all of them in `comp`, calling computations
/// that exist.
fn check_instructions(comp: &crate::hlo::Computation, ncomp: usize) -> Result<(), BackendError> {
    let n = comp.instructions.len();
    for ins in &comp.instructions {
        let spmd = collective::is_spmd_instruction(ins);
        if ins.opcode.is_parse_only() && !evaluated_parse_only(ins.opcode) && !spmd {
            return Err(BackendError::unsupported(format!(
                "opcode `{}`",
                ins.opcode
            )));
        }
        if !ins.opcode.arity().accepts(ins.operands.len()) {
            return compile_err(format!(
                "`{}` ({}) has {} operands",
                ins.name,
                ins.opcode,
                ins.operands.len()
            ));
        }
        if ins.operands.iter().any(|o| o.index() >= n) {
            return compile_err(format!("`{}` refers to a missing operand", ins.name));
        }
        if ins.called_computations().iter().any(|c| c.index() >= ncomp) {
            return compile_err(format!("`{}` calls a missing computation", ins.name));
        }
    }
    Ok(())
}

/// The call graph must be acyclic (or evaluation would recurse forever).
fn check_call_graph(module: &Module) -> Result<(), BackendError> {
    let ncomp = module.computations.len();
    let mut state = vec![0u8; ncomp];
    fn visit(m: &Module, c: usize, state: &mut [u8]) -> Result<(), BackendError> {
        match state[c] {
            1 => {
                return compile_err(format!(
                    "computation `{}` calls itself",
                    m.computations[c].name
                ))
            }
            2 => return Ok(()),
            _ => {}
        }
        state[c] = 1;
        for ins in &m.computations[c].instructions {
            for callee in ins.called_computations() {
                visit(m, callee.index(), state)?;
            }
        }
        state[c] = 2;
        Ok(())
    }
    for c in 0..ncomp {
        visit(module, c, &mut state)?;
    }
    Ok(())
}

pub(super) fn in_instruction(e: BackendError, name: &str) -> BackendError {
    match e {
        BackendError::Execute(m) if !m.starts_with("in `") => {
            BackendError::Execute(format!("in `{name}`: {m}"))
        }
        other => other,
    }
}

/// Checks a computed value against the instruction's declared shape and attaches its layouts.
pub(super) fn check_declared(v: Value, ins: &Instruction) -> Res<Value> {
    let matches = match (&v, &ins.shape) {
        (Value::Array(l), Shape::Array(a)) => {
            l.dtype() == a.dtype
                && l.dims().len() == a.dims.len()
                && l.dims().iter().zip(&a.dims).all(|(&x, &y)| x as i64 == y)
        }
        _ => v.shape().compatible(&ins.shape),
    };
    if !matches {
        return err(format!(
            "in `{}`: computed {} but the instruction declares {}",
            ins.name,
            v.shape(),
            ins.shape
        ));
    }
    Ok(match (v, &ins.shape) {
        (Value::Array(l), Shape::Array(a)) if a.layout.is_some() => {
            Value::Array(l.with_layout(a.layout.clone()))
        }
        (v, _) => v,
    })
}

/// Checks one argument against its parameter.
pub(super) fn check_argument(
    k: usize,
    p: &Instruction,
    shape: &ArrayShape,
    arg: &Literal,
) -> Result<(), BackendError> {
    if arg.dtype() != shape.dtype
        || arg.dims().len() != shape.dims.len()
        || arg
            .dims()
            .iter()
            .zip(&shape.dims)
            .any(|(&a, &b)| a as i64 != b)
    {
        return Err(BackendError::BadArguments(format!(
            "parameter {k} (`{}`) expects {}, got {}",
            p.name,
            shape,
            arg.shape()
        )));
    }
    Ok(())
}

/// Builds a parameter's value from flat arguments (tuple parameters take one argument per leaf).
pub(super) fn build_param(
    shape: &Shape,
    args: &mut std::slice::Iter<'_, Literal>,
    k: usize,
    p: &Instruction,
) -> Result<Value, BackendError> {
    let missing =
        || BackendError::BadArguments(format!("parameter {k} (`{}`): missing argument", p.name));
    from_leaves(shape, args, &missing, &mut |a, arg| {
        check_argument(k, p, a, arg)?;
        Ok(Value::Array(arg.clone()))
    })
}

impl Executable for Compiled {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let params = self.entry_params();
        let leaves: usize = params.iter().map(|p| p.shape.leaves().len()).sum();
        if args.len() != leaves {
            return Err(BackendError::BadArguments(format!(
                "the entry computation takes {leaves} arguments, got {}",
                args.len()
            )));
        }
        let all_arrays = params.iter().all(|p| p.shape.as_array().is_some());
        let owned: Vec<Value>;
        let refs: Vec<ValRef<'_>> = if all_arrays {
            for (k, (p, arg)) in params.iter().zip(args).enumerate() {
                if let Some(s) = p.shape.as_array() {
                    check_argument(k, p, s, arg)?;
                }
            }
            args.iter().map(ValRef::Array).collect()
        } else {
            let mut it = args.iter();
            owned = params
                .iter()
                .enumerate()
                .map(|(k, p)| build_param(&p.shape, &mut it, k, p))
                .collect::<Result<_, _>>()?;
            owned.iter().map(ValRef::of).collect()
        };
        let out = self.run(self.module.entry, &refs, None)?;
        Ok(out.into_flat())
    }

    fn probe(&self) -> Option<&dyn FusionProbe> {
        Some(self)
    }
}

impl FusionProbe for Compiled {
    fn probe_fusion(
        &self,
        fusion: &str,
        operands: &[Value],
    ) -> Result<Vec<ProbedValue>, BackendError> {
        let &(cid, iid) = self.fusions.get(fusion).ok_or_else(|| {
            BackendError::Execute(format!("no fusion instruction named `{fusion}`"))
        })?;
        let ins = self.module.comp(cid).instr(iid);
        let callee = ins.attrs.calls.first().copied().ok_or_else(|| {
            BackendError::Execute(format!("fusion `{fusion}` calls no computation"))
        })?;
        let refs: Vec<ValRef<'_>> = operands.iter().map(ValRef::of).collect();
        let mut trace = Vec::new();
        self.run(callee, &refs, Some(&mut trace))?;
        Ok(trace)
    }
}

/// The parse-only ops (in the opcode table's sense: they join no property's
/// op group) that the interpreter runs all the same.
fn evaluated_parse_only(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RngBitGenerator
            | Opcode::TriangularSolve
            | Opcode::Real
            | Opcode::Imag
            | Opcode::Complex
    )
}
