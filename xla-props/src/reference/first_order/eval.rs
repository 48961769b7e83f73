//! The run: values and radii per instruction, control flow, and the
//! bounds of the entry's outputs.

use super::super::control::branch_index;
use super::super::interval::{widen_abs, Allowances, Bounds};
use super::super::spmd::on_device_threads;
use super::super::walk::{callee, entry_values, operand_values, refuse_complex, take_argument};
use super::super::{EvalError, OpError, Run};
use super::dual::{f64_instruction, f64_literal, param_dual, Dual};
use crate::hlo::{CompId, ComparisonDirection, Instruction, Module, Opcode};
use crate::literal::{Literal, Value};

/// The entry outputs' reference values and radii (tuples flattened): every
/// value a backend within the declared numerics can compute for element
/// `i` of output `k` lies within `radii[k][i]` of `values[k]`'s element
/// (an infinite radius bounds nothing).
#[derive(Clone, Debug)]
pub struct FirstOrder {
    /// The reference's values.
    pub values: Vec<Literal>,
    /// The radii, per output and element.
    pub radii: Vec<Vec<f64>>,
}

/// The first-order bound of every entry output of `module` on `args`
/// under `allowances`, as the reference's values and their radii.
///
/// ```
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::reference::{first_order_bounds, Allowances};
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  s = f32[3] sine(x)\n  ROOT y = f32[3] multiply(s, s)\n}\n").unwrap();
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![3]), &[0.5, 1.0, 2.0]).unwrap();
/// let b = first_order_bounds(&m, &[x], &Allowances::default()).unwrap();
/// // two roundings, a few ULP wide, never unbounded
/// for i in 0..3 {
///     assert!(b[0].is_bounded(i));
///     assert!(b[0].hi.get_f64(i) - b[0].lo.get_f64(i) < 1e-6);
/// }
/// ```
pub fn first_order_bounds(
    module: &Module,
    args: &[Literal],
    allowances: &Allowances,
) -> Result<Vec<Bounds>, EvalError> {
    let fo = FirstOrder::of(module, args, allowances)?;
    Ok(fo
        .values
        .iter()
        .zip(&fo.radii)
        .map(|(v, r)| bounds_of(v, r))
        .collect())
}

impl FirstOrder {
    /// Evaluates `module` on `args` with radii (see [`first_order_bounds`]).
    pub fn of(
        module: &Module,
        args: &[Literal],
        allowances: &Allowances,
    ) -> Result<FirstOrder, EvalError> {
        Self::with_local(module, args, allowances, &|_, _| None)
    }

    /// As [`FirstOrder::of`], with the local error of some entry
    /// instructions given by `local(name, value)` (a measured error per
    /// element, used instead of the declared numerics' rounding and
    /// budget), e.g. each unit's error measured on the reference's own
    /// operands.
    pub fn with_local(
        module: &Module,
        args: &[Literal],
        allowances: &Allowances,
        local: &dyn Fn(&str, &Literal) -> Option<Vec<f64>>,
    ) -> Result<FirstOrder, EvalError> {
        let expanded = crate::hlo::expand_known_custom_calls(module);
        let module = expanded.as_ref().unwrap_or(module);
        // complex values have no radii (a radius per element is real)
        refuse_complex(module, "first-order bounds")?;
        // a module on many devices: each device bounded on its own thread
        // (measured local errors are not carried across devices)
        let program = crate::reference::spmd::DeviceProgram::multi(module).map_err(|e| {
            EvalError::Invalid {
                instruction: module.name.clone(),
                message: e,
            }
        })?;
        if let Some(program) = program {
            return on_devices(&program, module, args, allowances);
        }
        let aux = aux_module();
        let values = entry_values(module, args, param_dual)?;
        Radii::entry(Run::new(module), &aux, module, allowances, local, values)
    }
}

/// The first-order bounds of a multi-device `module` on global `args`.
fn on_devices(
    program: &crate::reference::spmd::DeviceProgram,
    module: &Module,
    args: &[Literal],
    allowances: &Allowances,
) -> Result<FirstOrder, EvalError> {
    let per_device = program.cut(module, args).map_err(EvalError::BadArguments)?;
    let contexts = program.device_contexts();
    let aux = aux_module();
    let run = |args: &Vec<Literal>, ctx| {
        one_device(module, &aux, args, allowances, Run::on_device(module, ctx))
    };
    let results = on_device_threads(&per_device, contexts, "first-order-device", run)
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|lost| {
                Err(invalid(
                    module,
                    &lost.message("device", "a device panicked"),
                ))
            })
        });
    let mut values = Vec::new();
    let mut radii = Vec::new();
    for r in results {
        let fo = r?;
        let rs = fo
            .values
            .iter()
            .zip(&fo.radii)
            .map(|(v, r)| f64_literal(v, r).map_err(|e| e.at_name(&module.name)))
            .collect::<Result<Vec<_>, _>>()?;
        values.push(fo.values);
        radii.push(rs);
    }
    let values = program.assemble(values).map_err(|e| invalid(module, &e))?;
    let radii = program
        .assemble(radii)
        .map_err(|e| invalid(module, &e))?
        .iter()
        .map(|l| (0..l.element_count()).map(|i| l.get_f64(i)).collect())
        .collect();
    Ok(FirstOrder { values, radii })
}

fn invalid(module: &Module, message: &str) -> EvalError {
    EvalError::Invalid {
        instruction: module.name.clone(),
        message: message.to_string(),
    }
}

fn one_device(
    module: &Module,
    aux: &Module,
    args: &[Literal],
    allowances: &Allowances,
    run: Run<'_, '_>,
) -> Result<FirstOrder, EvalError> {
    let entry = module.entry_computation();
    let mut next = args.iter();
    let mut values = Vec::new();
    for p in entry.parameters() {
        values.push(param_dual(&entry.instr(p).shape, &mut next).ok_or_else(|| {
            EvalError::BadArguments("the arguments do not fit the entry parameters".into())
        })?);
    }
    Radii::entry(run, aux, module, allowances, &|_, _| None, values)
}

/// The f64 reducers the radii are summed with (a module of its own, so the
/// user's module is never changed).
pub(super) fn aux_module() -> Module {
    const TEXT: &str = "HloModule first_order_aux\n\
        add_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = f64[] add(a, b)\n}\n\
        max_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = f64[] maximum(a, b)\n}\n\
        mul_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = f64[] multiply(a, b)\n}\n\
        assign_f64 {\n  a = f64[] parameter(0)\n  ROOT b = f64[] parameter(1)\n}\n\
        ge_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=GE\n}\n\
        gt_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=GT\n}\n\
        le_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=LE\n}\n\
        lt_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=LT\n}\n\
        ENTRY e {\n  a = f64[] parameter(0)\n  ROOT r = f64[] copy(a)\n}\n";
    crate::hlo::parse_module(TEXT).expect("the auxiliary module parses")
}

/// The comparison a select computation (a select-and-scatter's) makes of
/// its first parameter with its second: `GE`, `GT`, `LE` or `LT` (a
/// comparison written the other way round is turned), None for any other.
pub(super) fn select_comparison(module: &Module, c: CompId) -> Option<ComparisonDirection> {
    use ComparisonDirection as D;
    let comp = module.computations.get(c.index())?;
    let root = comp.instr(comp.root);
    if root.opcode != Opcode::Compare || root.operands.len() != 2 {
        return None;
    }
    let number = |k: usize| {
        let o = comp.instr(root.operands[k]);
        (o.opcode == Opcode::Parameter).then_some(o.attrs.parameter_number)?
    };
    let swapped = match (number(0), number(1)) {
        (Some(0), Some(1)) => false,
        (Some(1), Some(0)) => true,
        _ => return None,
    };
    let d = root.attrs.direction?;
    let turned = match (d, swapped) {
        (d, false) => d,
        (D::Ge, true) => D::Le,
        (D::Gt, true) => D::Lt,
        (D::Le, true) => D::Ge,
        (D::Lt, true) => D::Gt,
        _ => return None,
    };
    matches!(turned, D::Ge | D::Gt | D::Le | D::Lt).then_some(turned)
}

/// The reducers of the auxiliary module.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum AuxReducer {
    Add,
    Max,
    Mul,
    Assign,
}

pub(super) struct Radii<'a, 'r> {
    pub(super) run: Run<'a, 'r>,
    pub(super) aux: &'a Module,
    pub(super) module: &'a Module,
    pub(super) allow: &'a Allowances,
    pub(super) depth: usize,
    /// How many fusions the evaluation is inside.
    pub(super) fused: usize,
    pub(super) local: &'a dyn Fn(&str, &Literal) -> Option<Vec<f64>>,
}

impl<'a, 'r> Radii<'a, 'r> {
    /// The bounds of `module`'s entry on `values` (its parameters, with
    /// their radii), outside any call or fusion.
    fn entry(
        run: Run<'a, 'r>,
        aux: &'a Module,
        module: &'a Module,
        allow: &'a Allowances,
        local: &'a dyn Fn(&str, &Literal) -> Option<Vec<f64>>,
        values: Vec<Dual>,
    ) -> Result<FirstOrder, EvalError> {
        let mut cx = Radii {
            run,
            aux,
            module,
            allow,
            depth: 0,
            fused: 0,
            local,
        };
        let root = cx.computation(module.entry, values)?;
        let mut out = FirstOrder {
            values: Vec::new(),
            radii: Vec::new(),
        };
        root.flatten_into(&mut out.values, &mut out.radii);
        Ok(out)
    }

    pub(super) fn computation(&mut self, id: CompId, args: Vec<Dual>) -> Result<Dual, EvalError> {
        if self.depth >= 64 {
            return Err(EvalError::Invalid {
                instruction: String::new(),
                message: "calls nest too deep".into(),
            });
        }
        let module = self.module;
        let comp = module
            .computations
            .get(id.index())
            .ok_or_else(|| EvalError::Invalid {
                instruction: String::new(),
                message: format!("computation #{} does not exist", id.0),
            })?;
        let order = comp.post_order().ok_or_else(|| EvalError::Invalid {
            instruction: comp.name.clone(),
            message: "a cycle or a dangling operand".into(),
        })?;
        let mut args: Vec<Option<Dual>> = args.into_iter().map(Some).collect();
        let mut values: Vec<Option<Dual>> = vec![None; comp.instructions.len()];
        self.depth += 1;
        for id in order {
            let ins = comp.instr(id);
            let at = |message| EvalError::Invalid {
                instruction: ins.name.clone(),
                message,
            };
            let v = if ins.opcode == Opcode::Parameter {
                take_argument(ins, &mut args).map_err(at)?
            } else {
                let ops = operand_values(ins, &values).map_err(at)?;
                let top = self.depth == 1;
                let d = self.instruction(ins, &ops, top)?;
                self.steady_compare(comp, ins, &values, d)
            };
            if debug_enabled() {
                if let Dual::Array(l, r) = &v {
                    let (k, w) = r.iter().enumerate().fold((0, 0.0f64), |(k, w), (i, &x)| {
                        if x > w || x.is_nan() {
                            (i, x)
                        } else {
                            (k, w)
                        }
                    });
                    let val = if l.element_count() > 0 {
                        l.get_f64(k)
                    } else {
                        0.0
                    };
                    eprintln!(
                        "{:>3} {:<40} {:<16} radius {w:.3e} at value {val:.3e}",
                        self.depth,
                        ins.name,
                        ins.opcode.name()
                    );
                }
            }
            values[id.index()] = Some(v);
        }
        self.depth -= 1;
        values
            .get_mut(comp.root.index())
            .and_then(Option::take)
            .ok_or_else(|| EvalError::Invalid {
                instruction: comp.name.clone(),
                message: "root has no value".into(),
            })
    }

    fn instruction(
        &mut self,
        ins: &Instruction,
        ops: &[&Dual],
        top: bool,
    ) -> Result<Dual, EvalError> {
        use Opcode as O;
        let d = match ins.opcode {
            O::Tuple => Dual::Tuple(ops.iter().map(|o| (*o).clone()).collect()),
            O::GetTupleElement => match (ops.first(), ins.attrs.index) {
                (Some(Dual::Tuple(t)), Some(k)) => usize::try_from(k)
                    .ok()
                    .and_then(|k| t.get(k))
                    .cloned()
                    .ok_or_else(|| OpError::Invalid("tuple index out of range".into()).at(ins))?,
                _ => {
                    return Err(OpError::Invalid("get-tuple-element of a non-tuple".into()).at(ins))
                }
            },
            O::Fusion | O::Call => self.call(ins, ops)?,
            _ if crate::reference::collective::is_multi_device(ins)
                || crate::reference::collective::partitioner_call(ins).is_some() =>
            {
                self.multi_device(ins, ops).map_err(|e| e.at(ins))?
            }
            op if crate::reference::collective::is_collective_done(op) => match (op, ops.first()) {
                (O::AllReduceDone, Some(d)) => (*d).clone(),
                (_, Some(Dual::Tuple(t))) if t.len() >= 2 => t[1].clone(),
                _ => {
                    return Err(OpError::Invalid("not a started collective".into()).at(ins));
                }
            },
            O::While => self.while_loop(ins, ops)?,
            O::Conditional => self.conditional(ins, ops)?,
            _ => {
                let vals: Vec<Value> = ops.iter().map(|o| o.value()).collect();
                let refs: Vec<&Value> = vals.iter().collect();
                let v = self.run.step_op(ins, &refs).map_err(|e| e.at(ins))?;
                match v {
                    Value::Array(l) => {
                        let r = self.radius(ins, ops, &l).map_err(|e| e.at(ins))?;
                        Dual::Array(l, r)
                    }
                    other => self.tuple_result(ins, ops, other),
                }
            }
        };
        if !top {
            return Ok(d);
        }
        // a measured local error replaces the declared one (the caller's
        // certificate): the operands' radii carried through, plus it
        Ok(match d {
            Dual::Array(l, mut r) => {
                if let Some(m) = (self.local)(&ins.name, &l) {
                    if m.len() == r.len() {
                        let carried = self.carried_only(ins, ops, &l);
                        for (i, x) in r.iter_mut().enumerate() {
                            *x = carried.get(i).copied().unwrap_or(*x) + m[i];
                        }
                    }
                }
                Dual::Array(l, r)
            }
            d => d,
        })
    }

    /// The radius an instruction carries from its operands alone, without
    /// its own rounding (for a measured local error to add to).
    fn carried_only(&mut self, ins: &Instruction, ops: &[&Dual], l: &Literal) -> Vec<f64> {
        if ops.iter().all(|o| o.is_exact()) {
            return vec![0.0; l.element_count()];
        }
        let quiet = Allowances {
            budgets: Default::default(),
            ..self.allow.clone()
        };
        let mut cx = Radii {
            run: Run::new(self.module),
            aux: self.aux,
            module: self.module,
            allow: &quiet,
            depth: self.depth,
            fused: self.fused,
            local: self.local,
        };
        match ins.opcode {
            Opcode::Fusion | Opcode::Call => cx.call(ins, ops).ok(),
            _ => cx
                .radius(ins, ops, l)
                .ok()
                .map(|r| Dual::Array(l.clone(), r)),
        }
        .and_then(|d| d.array().map(|(_, r)| r.to_vec()))
        .unwrap_or_else(|| vec![f64::INFINITY; l.element_count()])
    }

    /// An op with a tuple result other than the structural ones (variadic
    /// reduce and sort, top-k, rng-bit-generator, ...): exact on exact
    /// operands when the op only selects or compares (or is exact integer
    /// arithmetic), unbounded otherwise.
    fn tuple_result(&mut self, ins: &Instruction, ops: &[&Dual], v: Value) -> Dual {
        let selects_only = match ins.opcode {
            Opcode::Sort | Opcode::TopK | Opcode::RngBitGenerator => true,
            Opcode::Reduce | Opcode::ReduceWindow => {
                ins.attrs.to_apply.is_some_and(|c| self.selects_only(c))
            }
            _ => false,
        };
        if selects_only && ops.iter().all(|o| o.is_exact()) {
            return Dual::exact(v);
        }
        let radii = v.as_tuple().filter(|_| selects_only).and_then(|outs| {
            let parts: Option<Vec<_>> = ops.iter().map(|o| o.array()).collect();
            let outs: Option<Vec<&Literal>> = outs.iter().map(Value::as_array).collect();
            self.selecting_reduction(ins, &parts?, &outs?)
        });
        match (radii, v) {
            (Some(radii), Value::Tuple(outs)) => Dual::Tuple(
                outs.into_iter()
                    .zip(radii)
                    .map(|(v, r)| match v {
                        Value::Array(l) => Dual::Array(l, r),
                        other => Dual::unbounded(other),
                    })
                    .collect(),
            ),
            (_, v) => Dual::unbounded(v),
        }
    }

    /// Whether a computation only compares and selects (an argmax reducer),
    /// so that on exact operands its result is exact in any order.
    pub(super) fn selects_only(&self, c: CompId) -> bool {
        use Opcode as O;
        self.module.computations.get(c.index()).is_some_and(|comp| {
            comp.instructions.iter().all(|i| {
                matches!(
                    i.opcode,
                    O::Parameter
                        | O::Compare
                        | O::Select
                        | O::Tuple
                        | O::GetTupleElement
                        | O::Maximum
                        | O::Minimum
                        | O::And
                        | O::Or
                        | O::Not
                        | O::Constant
                )
            })
        })
    }

    fn call(&mut self, ins: &Instruction, ops: &[&Dual]) -> Result<Dual, EvalError> {
        let comp =
            callee(ins).ok_or_else(|| OpError::Invalid("no called computation".into()).at(ins))?;
        let fusion = usize::from(ins.opcode == Opcode::Fusion);
        self.fused += fusion;
        let v = self.computation(comp, ops.iter().map(|o| (*o).clone()).collect());
        self.fused -= fusion;
        v
    }

    fn conditional(&mut self, ins: &Instruction, ops: &[&Dual]) -> Result<Dual, EvalError> {
        let branches = &ins.attrs.branch_computations;
        let Some((sel, r)) = ops.first().and_then(|o| o.array()) else {
            return Err(OpError::Invalid("conditional without a selector".into()).at(ins));
        };
        let b = branch_index(sel.dtype().is_pred(), sel.get_i128(0), branches.len());
        let (Some(&comp), Some(arg)) = (branches.get(b), ops.get(b + 1)) else {
            return Err(OpError::Invalid("conditional branch out of range".into()).at(ins));
        };
        let v = self.computation(comp, vec![(*arg).clone()])?;
        if r.first().is_none_or(|&x| x != 0.0) {
            // the other branches may run: their distance from this one
            let mut acc = v;
            for (j, &c) in branches.iter().enumerate() {
                if j == b {
                    continue;
                }
                let Some(a) = ops.get(j + 1) else { continue };
                let w = self.computation(c, vec![(*a).clone()])?;
                acc = acc.widest(&w);
            }
            return Ok(acc);
        }
        Ok(v)
    }

    /// Runs an op of the auxiliary module's kind on f64 literals: `ins`
    /// made f64, its reducer (if any) replaced by `reducer`.
    pub(super) fn f64_op(
        &mut self,
        ins: &Instruction,
        ops: &[Literal],
        reducer: Option<AuxReducer>,
    ) -> Result<Literal, OpError> {
        let mut i = f64_instruction(ins);
        let refs: Vec<Value> = ops.iter().cloned().map(Value::Array).collect();
        let refs: Vec<&Value> = refs.iter().collect();
        let v = match reducer {
            None => self.run.step_op(&i, &refs)?,
            Some(k) => {
                let name = match k {
                    AuxReducer::Add => "add_f64",
                    AuxReducer::Max => "max_f64",
                    AuxReducer::Mul => "mul_f64",
                    AuxReducer::Assign => "assign_f64",
                };
                let id = self
                    .aux
                    .computations
                    .iter()
                    .position(|c| c.name == name)
                    .map(|p| CompId(p as u32))
                    .ok_or_else(|| OpError::Invalid("no auxiliary reducer".into()))?;
                if i.attrs.to_apply.is_some() {
                    i.attrs.to_apply = Some(id);
                }
                if i.attrs.scatter.is_some() {
                    i.attrs.scatter = Some(id);
                }
                // a select-and-scatter's select: the same comparison in f64
                if let Some(sel) = i.attrs.select {
                    let name = select_comparison(self.module, sel)
                        .map(|d| match d {
                            ComparisonDirection::Ge => "ge_f64",
                            ComparisonDirection::Gt => "gt_f64",
                            ComparisonDirection::Le => "le_f64",
                            _ => "lt_f64",
                        })
                        .ok_or_else(|| OpError::Invalid("a select that is no comparison".into()))?;
                    i.attrs.select = self
                        .aux
                        .computations
                        .iter()
                        .position(|c| c.name == name)
                        .map(|p| CompId(p as u32));
                }
                Run::new(self.aux).step_op(&i, &refs)?
            }
        };
        match v {
            Value::Array(l) => Ok(l),
            _ => Err(OpError::Invalid("an f64 op gave a tuple".into())),
        }
    }
}

/// The bounds of one output from its value and radii.
pub(crate) fn bounds_of(v: &Literal, r: &[f64]) -> Bounds {
    let mut b = Bounds::point(v);
    let t = v.dtype();
    for (i, &x) in r.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        if !x.is_finite() {
            b.unbound(i);
            continue;
        }
        match t.float_format() {
            Some(fmt) => widen_abs(&mut b, i, &fmt, x),
            None => b.widen_int(i, x),
        }
    }
    b
}

/// `XLA_PROPS_DEBUG_FIRST_ORDER` is set: every instruction's widest radius
/// is printed (a diagnostic for where a bound grows).
pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("XLA_PROPS_DEBUG_FIRST_ORDER").is_some())
}
