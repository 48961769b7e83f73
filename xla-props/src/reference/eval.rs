//! The evaluator state, the run loop, and the opcode dispatch.

use super::collective::{self, DeviceContext, PartitionerCall};
use super::error::out;
use super::spmd::on_device_threads;
use super::walk::from_leaves;
use super::{
    complex, contraction, control, conversion, elementwise, indexing, linalg, parallel, reduction,
    rng, shape_ops, sort, spmd, topk, Calls, EvalError, OpError,
};
use crate::hlo::{Category, CompId, Instruction, Module, Opcode, Shape};
use crate::literal::{Literal, Value};

/// Default total number of while-loop iterations one evaluation may run.
pub const DEFAULT_FUEL: u64 = 1_000_000;

/// Calls nested deeper than this are reported as invalid (a call cycle).
const MAX_CALL_DEPTH: usize = 64;

/// The values of one evaluation of a fused computation, given to the hook
/// set with [`Evaluator::on_fusion`].
#[derive(Debug)]
pub struct FusionValues<'a> {
    /// The fusion instruction's name in its caller.
    pub fusion: &'a str,
    /// The fused computation.
    pub computation: CompId,
    /// The value of every instruction of the fused computation, by [`InstrId`]
    /// (None for instructions the root does not reach and that failed to evaluate).
    pub values: &'a [Option<Value>],
}

type FusionHook<'h> = dyn FnMut(&FusionValues<'_>) + 'h;

/// Called with every instruction's result as it is computed (in every
/// computation, every time it runs), which it may change: the witness
/// runs' legal moves (`first_order::witness`).
pub(crate) type ResultHook<'h> = dyn FnMut(CompId, &Instruction, &[&Value], &mut Value) + 'h;

/// The reference evaluator, with its options.
///
/// ```
/// use xla_props::hlo::{Computation, ElementType, InstrId, Instruction, Module, CompId, Opcode, Shape};
/// use xla_props::literal::Literal;
/// use xla_props::reference::Evaluator;
/// let s = Shape::scalar(ElementType::F32);
/// let mut p = Instruction::new("p", Opcode::Parameter, s.clone(), vec![]);
/// p.attrs.parameter_number = Some(0);
/// let neg = Instruction::new("n", Opcode::Negate, s, vec![InstrId(0)]);
/// let comp = Computation { name: "main".into(), instructions: vec![p, neg], root: InstrId(1), other: vec![] };
/// let module = Module { name: "m".into(), attrs: vec![], computations: vec![comp], entry: CompId(0) };
/// let values = Evaluator::new().evaluate_all(&module, &[Literal::scalar(ElementType::F32, 2.0)]).unwrap();
/// assert_eq!(values[1].as_ref().unwrap().as_array().unwrap().get_f64(0), -2.0);
/// ```
pub struct Evaluator<'h> {
    fuel_limit: u64,
    hook: Option<Box<FusionHook<'h>>>,
    on_result: Option<Box<ResultHook<'h>>>,
}

impl Default for Evaluator<'_> {
    fn default() -> Self {
        Evaluator::new()
    }
}

impl<'h> Evaluator<'h> {
    /// An evaluator with the default fuel ([`DEFAULT_FUEL`]) and no hook.
    pub fn new() -> Self {
        Evaluator {
            fuel_limit: DEFAULT_FUEL,
            hook: None,
            on_result: None,
        }
    }

    /// Sets the total number of while-loop iterations one evaluation may run.
    pub fn with_fuel_limit(mut self, iterations: u64) -> Self {
        self.fuel_limit = iterations;
        self
    }

    /// Calls `hook` with the values inside every evaluated fused computation
    /// (at any depth, every time a fusion runs).
    pub fn on_fusion(mut self, hook: impl FnMut(&FusionValues<'_>) + 'h) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Calls `hook` with every instruction's result, which it may change
    /// (a single-device run only).
    pub(crate) fn on_result(
        mut self,
        hook: impl FnMut(CompId, &Instruction, &[&Value], &mut Value) + 'h,
    ) -> Self {
        self.on_result = Some(Box::new(hook));
        self
    }

    /// Evaluates the entry computation; returns its outputs, tuples flattened.
    ///
    /// `args` holds one literal per array of the entry parameters, in
    /// parameter order (a tuple parameter takes one literal per leaf).
    pub fn evaluate(
        &mut self,
        module: &Module,
        args: &[Literal],
    ) -> Result<Vec<Literal>, EvalError> {
        // a module on many devices takes and gives global arrays
        let program = spmd::DeviceProgram::multi(module).map_err(|e| EvalError::Invalid {
            instruction: module.name.clone(),
            message: e,
        })?;
        if let Some(program) = program {
            if self.hook.is_some() || self.on_result.is_some() {
                return Err(EvalError::Unsupported {
                    opcode: Opcode::Fusion,
                    reason: "looking inside fusions of a multi-device program".into(),
                });
            }
            return evaluate_global(&program, module, args, self.fuel_limit);
        }
        Ok(self.evaluate_values(module, args)?.into_flat())
    }

    /// Evaluates the entry computation as one device of a multi-device run.
    pub(crate) fn evaluate_on_device(
        &mut self,
        module: &Module,
        args: &[Literal],
        ctx: DeviceContext,
    ) -> Result<Vec<Literal>, EvalError> {
        let values = self.run_entry(module, args, Some(ctx))?;
        Ok(root_value(module, values)?.into_flat())
    }

    /// Evaluates the entry computation; returns its root value.
    pub fn evaluate_values(
        &mut self,
        module: &Module,
        args: &[Literal],
    ) -> Result<Value, EvalError> {
        let values = self.evaluate_all(module, args)?;
        root_value(module, values)
    }

    /// Evaluates the entry computation and returns the value of EVERY
    /// instruction in it, indexed by [`InstrId`].
    pub fn evaluate_all(
        &mut self,
        module: &Module,
        args: &[Literal],
    ) -> Result<Vec<Option<Value>>, EvalError> {
        self.run_entry(module, args, None)
    }

    fn run_entry(
        &mut self,
        module: &Module,
        args: &[Literal],
        spmd: Option<DeviceContext>,
    ) -> Result<Vec<Option<Value>>, EvalError> {
        // custom calls with a known meaning (XLA's TopK) as plain HLO
        let expanded = crate::hlo::expand_known_custom_calls(module);
        let module = expanded.as_ref().unwrap_or(module);
        let entry = module
            .computations
            .get(module.entry.index())
            .ok_or_else(|| invalid_module(module, "entry computation does not exist"))?;
        let params = entry.parameters();
        let leaves: usize = params
            .iter()
            .map(|&p| entry.instr(p).shape.leaves().len())
            .sum();
        if args.len() != leaves {
            return Err(EvalError::BadArguments(format!(
                "entry computation `{}` takes {} parameters ({leaves} arrays) but {} arguments were given",
                entry.name,
                params.len(),
                args.len()
            )));
        }
        let mut next = args.iter();
        let mut values = Vec::with_capacity(params.len());
        for (k, &p) in params.iter().enumerate() {
            let ins = entry.instr(p);
            values.push(argument_value(&ins.shape, &mut next, k, &ins.name)?);
        }
        let mut run = Run {
            module,
            fuel_left: self.fuel_limit,
            fuel_limit: self.fuel_limit,
            depth: 0,
            hook: self.hook.as_deref_mut(),
            on_result: self.on_result.as_deref_mut(),
            spmd,
        };
        run.computation(module.entry, values)
    }
}

/// Evaluates a multi-device program on global arguments with the reference.
pub fn evaluate_global(
    program: &spmd::DeviceProgram,
    module: &Module,
    global: &[Literal],
    fuel: u64,
) -> Result<Vec<Literal>, EvalError> {
    let per_device = program
        .cut(module, global)
        .map_err(EvalError::BadArguments)?;
    let outs = evaluate_devices(module, program, &per_device, fuel)?;
    program.assemble(outs).map_err(|e| EvalError::Invalid {
        instruction: module.name.clone(),
        message: e,
    })
}

/// Runs every device of `program` on its own arguments; returns each
/// device's outputs (tuples flattened). A device's failure fails the run
/// with that device's error (the others' "another device failed" are
/// dropped).
pub fn evaluate_devices(
    module: &Module,
    program: &spmd::DeviceProgram,
    per_device: &[Vec<Literal>],
    fuel: u64,
) -> Result<Vec<Vec<Literal>>, EvalError> {
    let grid = program.grid;
    if per_device.len() != grid.devices() {
        return Err(EvalError::BadArguments(format!(
            "{} devices' arguments for {} devices",
            per_device.len(),
            grid.devices()
        )));
    }
    let contexts = program.device_contexts();
    let run = |args: &Vec<Literal>, ctx| {
        Evaluator::new()
            .with_fuel_limit(fuel)
            .evaluate_on_device(module, args, ctx)
    };
    let results = on_device_threads(per_device, contexts, "device", run)
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|lost| {
                Err(EvalError::Invalid {
                    instruction: module.name.clone(),
                    message: lost.message("device", "a device's evaluation panicked"),
                })
            })
        })
        .collect();
    super::rendezvous::first_cause(results)
}

/// Builds the value of entry parameter `k` from the next arguments: one
/// literal per array leaf of its shape (tuple parameters take their leaves in order).
fn argument_value<'l>(
    shape: &Shape,
    next: &mut impl Iterator<Item = &'l Literal>,
    k: usize,
    name: &str,
) -> Result<Value, EvalError> {
    let missing = || EvalError::BadArguments(format!("parameter {k} (`{name}`) has no argument"));
    from_leaves(shape, next, &missing, &mut |want, arg| {
        if !arg.shape().compatible(want) {
            return Err(EvalError::BadArguments(format!(
                "parameter {k} (`{name}`) expects {want} but the argument is {}",
                arg.shape()
            )));
        }
        Ok(Value::Array(arg.clone()))
    })
}

/// Evaluates `module` on `args` (one literal per entry parameter array, see
/// [`Evaluator::evaluate`]) with default options; returns the entry outputs,
/// tuples flattened.
///
/// ```
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::reference::evaluate;
/// let module = parse_module(
///     "HloModule m\nENTRY main {\n  a = f16[3] parameter(0)\n  b = f16[3] parameter(1)\n  ROOT s = f16[3] add(a, b)\n}\n",
/// )
/// .unwrap();
/// // f16 adds, computed exactly and rounded once to nearest even
/// let shape = ArrayShape::new(ElementType::F16, vec![3]);
/// let x = Literal::from_f64s(&shape, &[1.0, 65504.0, 65504.0]).unwrap();
/// let y = Literal::from_f64s(&shape, &[2f64.powi(-11), 8.0, 16.0]).unwrap();
/// let out = evaluate(&module, &[x, y]).unwrap();
/// assert_eq!(out[0].get_f64(0), 1.0); // 1 + 2^-11 is a tie: to even
/// assert_eq!(out[0].get_f64(1), 65504.0); // below the overflow tie
/// assert_eq!(out[0].get_f64(2), f64::INFINITY); // 65520 is the tie with 2^16: overflows
/// ```
pub fn evaluate(module: &Module, args: &[Literal]) -> Result<Vec<Literal>, EvalError> {
    Evaluator::new().evaluate(module, args)
}

/// Evaluates `module` on `args` with default options; returns the root value.
pub fn evaluate_values(module: &Module, args: &[Literal]) -> Result<Value, EvalError> {
    Evaluator::new().evaluate_values(module, args)
}

/// The entry root's value out of the values of every entry instruction.
fn root_value(module: &Module, mut values: Vec<Option<Value>>) -> Result<Value, EvalError> {
    let root = module.entry_computation().root.index();
    values
        .get_mut(root)
        .and_then(Option::take)
        .ok_or_else(|| invalid_module(module, "entry root has no value"))
}

fn invalid_module(module: &Module, message: &str) -> EvalError {
    EvalError::Invalid {
        instruction: module.name.clone(),
        message: message.to_string(),
    }
}

/// One evaluation in progress: fuel, call depth, and the hook.
pub(crate) struct Run<'a, 'h> {
    pub(crate) module: &'a Module,
    fuel_left: u64,
    pub(super) fuel_limit: u64,
    depth: usize,
    hook: Option<&'a mut FusionHook<'h>>,
    on_result: Option<&'a mut ResultHook<'h>>,
    /// This device, in a multi-device run.
    pub(super) spmd: Option<DeviceContext>,
}

impl<'a> Run<'a, '_> {
    /// A run of `module` with the default fuel and no hook (for evaluating
    /// single instructions, e.g. by the interval evaluator).
    pub(crate) fn new(module: &'a Module) -> Self {
        Run {
            module,
            fuel_left: DEFAULT_FUEL,
            fuel_limit: DEFAULT_FUEL,
            depth: 0,
            hook: None,
            on_result: None,
            spmd: None,
        }
    }

    /// A run of `module` as one device of a multi-device run (for the
    /// first-order evaluator's values).
    pub(crate) fn on_device(module: &'a Module, ctx: DeviceContext) -> Self {
        let mut run = Run::new(module);
        run.spmd = Some(ctx);
        run
    }

    /// The same run with `fuel` while-loop iterations.
    pub(crate) fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel_left = fuel;
        self.fuel_limit = fuel;
        self
    }

    /// Takes this run's device context out (to lend it to a kernel).
    pub(crate) fn take_device(&mut self) -> Option<DeviceContext> {
        self.spmd.take()
    }

    /// Gives the device context back.
    pub(crate) fn put_device(&mut self, ctx: DeviceContext) {
        self.spmd = Some(ctx);
    }

    /// Evaluates one instruction on operand values (its kernel only; the
    /// result is checked against the instruction's shape).
    pub(crate) fn step_op(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, OpError> {
        if !ins.opcode.arity().accepts(ops.len()) {
            return Err(OpError::Invalid(format!(
                "{} cannot take {} operands",
                ins.opcode,
                ops.len()
            )));
        }
        let v = self.dispatch(ins, ops)?;
        if !v.shape().compatible(&ins.shape) {
            return Err(OpError::Invalid(format!(
                "computed a {} but the instruction says {}",
                v.shape(),
                ins.shape
            )));
        }
        Ok(with_layouts(v, &ins.shape))
    }
}

impl Run<'_, '_> {
    /// Evaluates computation `id` on `args`; returns every instruction's value.
    fn computation(
        &mut self,
        id: CompId,
        args: Vec<Value>,
    ) -> Result<Vec<Option<Value>>, EvalError> {
        let comp_id = id;
        let module = self.module;
        let comp = module.computations.get(id.index()).ok_or_else(|| {
            invalid_module(module, &format!("computation #{} does not exist", id.0))
        })?;
        let order = comp.post_order().ok_or_else(|| EvalError::Invalid {
            instruction: comp.name.clone(),
            message: "the computation has a cycle or a dangling operand".into(),
        })?;
        if comp.root.index() >= comp.instructions.len() {
            return Err(EvalError::Invalid {
                instruction: comp.name.clone(),
                message: "root does not exist".into(),
            });
        }
        let mut args: Vec<Option<Value>> = args.into_iter().map(Some).collect();
        let mut values: Vec<Option<Value>> = vec![None; comp.instructions.len()];
        for id in order {
            let ins = comp.instr(id);
            let v = if ins.opcode == Opcode::Parameter {
                parameter(ins, &mut args)?
            } else {
                let ops = ins
                    .operands
                    .iter()
                    .map(|o| values.get(o.index()).and_then(Option::as_ref))
                    .collect::<Option<Vec<&Value>>>()
                    .ok_or_else(|| EvalError::Invalid {
                        instruction: ins.name.clone(),
                        message: "an operand has no value".into(),
                    })?;
                let mut v = self.step(ins, &ops)?;
                if let Some(hook) = self.on_result.as_deref_mut() {
                    hook(comp_id, ins, &ops, &mut v);
                }
                v
            };
            values[id.index()] = Some(v);
        }
        Ok(values)
    }

    /// Calls computation `id` on `args`; returns its root value.
    pub(crate) fn call(&mut self, id: CompId, args: Vec<Value>) -> Result<Value, EvalError> {
        self.call_traced(id, args, None)
    }

    fn call_traced(
        &mut self,
        id: CompId,
        args: Vec<Value>,
        fusion: Option<&str>,
    ) -> Result<Value, EvalError> {
        if self.depth >= MAX_CALL_DEPTH {
            return Err(invalid_module(
                self.module,
                "calls nest too deep (a call cycle?)",
            ));
        }
        self.depth += 1;
        let values = self.computation(id, args);
        self.depth -= 1;
        let mut values = values?;
        if let (Some(name), Some(hook)) = (fusion, self.hook.as_deref_mut()) {
            hook(&FusionValues {
                fusion: name,
                computation: id,
                values: &values,
            });
        }
        let root = self.module.comp(id).root.index();
        values
            .get_mut(root)
            .and_then(Option::take)
            .ok_or_else(|| invalid_module(self.module, "root has no value"))
    }

    /// Calls a fused computation, reporting its inner values to the hook.
    pub(crate) fn call_fusion(
        &mut self,
        id: CompId,
        args: Vec<Value>,
        fusion: &str,
    ) -> Result<Value, EvalError> {
        self.call_traced(id, args, Some(fusion))
    }

    /// Takes one unit of while-loop fuel.
    pub(crate) fn burn_fuel(&mut self, ins: &Instruction) -> Result<(), EvalError> {
        if self.fuel_left == 0 {
            return Err(EvalError::FuelExhausted {
                instruction: ins.name.clone(),
                limit: self.fuel_limit,
            });
        }
        self.fuel_left -= 1;
        Ok(())
    }

    /// The semantics: one line per opcode.
    fn step(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, EvalError> {
        if !ins.opcode.arity().accepts(ops.len()) {
            return Err(OpError::Invalid(format!(
                "{} cannot take {} operands",
                ins.opcode,
                ops.len()
            ))
            .at(ins));
        }
        let v = self.dispatch(ins, ops).map_err(|e| e.at(ins))?;
        check_result(ins, v)
    }

    fn dispatch(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, OpError> {
        if complex::applies(ins, ops) {
            return complex::dispatch(self, ins, ops);
        }
        self.dispatch_real(ins, ops)
    }

    /// The semantics of real-typed instructions (and of c64 values on the bit paths).
    pub(crate) fn dispatch_real(
        &mut self,
        ins: &Instruction,
        ops: &[&Value],
    ) -> Result<Value, OpError> {
        use Opcode as O;
        let a = |i: usize| arr(ops, i);
        match ins.opcode {
            O::Parameter => Err(OpError::Invalid("parameter evaluated as an op".into())),
            O::Constant => shape_ops::constant(ins),
            O::Iota => shape_ops::iota(out(ins)?, ins.attrs.iota_dimension).map(Value::Array),
            O::Tuple => Ok(Value::Tuple(ops.iter().map(|v| (*v).clone()).collect())),
            O::GetTupleElement => shape_ops::get_tuple_element(ops[0], ins.attrs.index),
            O::Copy => shape_ops::copy(ops[0], &ins.shape),
            O::Bitcast => shape_ops::bitcast(a(0)?, out(ins)?).map(Value::Array),
            _ if ins.opcode.category() == Category::ElementwiseUnary => {
                elementwise::unary(ins.opcode, a(0)?, out(ins)?).map(Value::Array)
            }
            _ if ins.opcode.category() == Category::ElementwiseBinary => {
                elementwise::binary(ins.opcode, a(0)?, a(1)?, out(ins)?).map(Value::Array)
            }
            O::Compare => {
                elementwise::compare(a(0)?, a(1)?, &ins.attrs, out(ins)?).map(Value::Array)
            }
            O::Select => elementwise::select(a(0)?, a(1)?, a(2)?, out(ins)?).map(Value::Array),
            O::Clamp => elementwise::clamp(a(0)?, a(1)?, a(2)?, out(ins)?).map(Value::Array),
            O::Convert => conversion::convert(a(0)?, out(ins)?).map(Value::Array),
            O::BitcastConvert => conversion::bitcast_convert(a(0)?, out(ins)?).map(Value::Array),
            O::ReducePrecision => {
                conversion::reduce_precision(a(0)?, &ins.attrs, out(ins)?).map(Value::Array)
            }
            O::Broadcast => shape_ops::broadcast(a(0)?, ins.attrs.dimensions.as_deref(), out(ins)?)
                .map(Value::Array),
            O::Reshape => shape_ops::reshape(a(0)?, out(ins)?).map(Value::Array),
            O::Transpose => shape_ops::transpose(a(0)?, ins.attrs.dimensions.as_deref(), out(ins)?)
                .map(Value::Array),
            O::Slice => {
                shape_ops::slice(a(0)?, ins.attrs.slice.as_deref(), out(ins)?).map(Value::Array)
            }
            O::Concatenate => {
                shape_ops::concatenate(&arrs(ops)?, ins.attrs.dimensions.as_deref(), out(ins)?)
                    .map(Value::Array)
            }
            O::Pad => shape_ops::pad(a(0)?, a(1)?, ins.attrs.padding.as_deref(), out(ins)?)
                .map(Value::Array),
            O::Reverse => shape_ops::reverse(a(0)?, ins.attrs.dimensions.as_deref(), out(ins)?)
                .map(Value::Array),
            O::DynamicSlice => {
                indexing::dynamic_slice(a(0)?, &arrs(&ops[1..])?, out(ins)?).map(Value::Array)
            }
            O::DynamicUpdateSlice => {
                indexing::dynamic_update_slice(a(0)?, a(1)?, &arrs(&ops[2..])?, out(ins)?)
                    .map(Value::Array)
            }
            O::Gather => indexing::gather(a(0)?, a(1)?, ins.attrs.gather_dims.as_ref(), out(ins)?)
                .map(Value::Array),
            O::Scatter => indexing::scatter(self, ins, &arrs(ops)?),
            O::Reduce => reduction::reduce(self, ins, &arrs(ops)?),
            O::ReduceWindow => reduction::reduce_window(self, ins, &arrs(ops)?),
            O::SelectAndScatter => {
                reduction::select_and_scatter(self, ins, &arrs(ops)?).map(Value::Array)
            }
            O::Sort => sort::sort(self, ins, &arrs(ops)?),
            O::TopK => topk::topk(ins, a(0)?),
            O::RngBitGenerator => rng::rng_bit_generator(ins, a(0)?),
            O::TriangularSolve => {
                linalg::triangular_solve(a(0)?, a(1)?, &ins.attrs, out(ins)?).map(Value::Array)
            }
            O::Map => reduction::map(self, ins, &arrs(ops)?).map(Value::Array),
            O::Dot => contraction::dot_with_algorithm(a(0)?, a(1)?, &ins.attrs, out(ins)?)
                .map(Value::Array),
            O::Convolution => {
                contraction::convolution(a(0)?, a(1)?, &ins.attrs, out(ins)?).map(Value::Array)
            }
            O::Fusion => control::fusion(self, ins, ops),
            O::Call => control::call(self, ins, ops),
            O::While => control::while_loop(self, ins, ops[0]),
            O::Conditional => control::conditional(self, ins, ops),
            O::CustomCall
                if collective::partitioner_call(ins) == Some(PartitionerCall::Sharding) =>
            {
                Ok(ops
                    .first()
                    .map(|v| (*v).clone())
                    .ok_or_else(|| OpError::Invalid("a Sharding call without an operand".into()))?)
            }
            _ if parallel::is_run_parallel(ins) => self.run_parallel(ins, ops),
            _ if collective::is_multi_device(ins) => self.multi_device(ins, ops),
            O::AfterAll
            | O::Outfeed
            | O::Infeed
            | O::Send
            | O::Recv
            | O::SendDone
            | O::RecvDone => self.token_op(ins, ops),
            op if collective::is_collective_done(op) => {
                collective::collective_done(ins, ops[0]).map_err(OpError::Invalid)
            }
            op => Err(OpError::Unsupported(format!(
                "{op} is parse-only: the reference does not evaluate it"
            ))),
        }
    }
}

/// Binds parameter `ins` to its argument.
fn parameter(ins: &Instruction, args: &mut [Option<Value>]) -> Result<Value, EvalError> {
    let bad = |message: String| EvalError::Invalid {
        instruction: ins.name.clone(),
        message,
    };
    let n = ins
        .attrs
        .parameter_number
        .ok_or_else(|| bad("parameter without a number".into()))?;
    // each argument is moved into its (single) parameter instruction
    let v = usize::try_from(n)
        .ok()
        .and_then(|k| args.get_mut(k))
        .and_then(Option::take)
        .ok_or_else(|| bad(format!("parameter {n} has no argument (or is bound twice)")))?;
    if !v.shape().compatible(&ins.shape) {
        return Err(bad(format!(
            "parameter {n} expects {} but got {}",
            ins.shape,
            v.shape()
        )));
    }
    Ok(with_layouts(v, &ins.shape))
}

/// Checks that a result matches its instruction's shape (up to layout) and
/// gives it the instruction's layouts.
fn check_result(ins: &Instruction, v: Value) -> Result<Value, EvalError> {
    if !v.shape().compatible(&ins.shape) {
        return Err(EvalError::Invalid {
            instruction: ins.name.clone(),
            message: format!(
                "computed a {} but the instruction says {}",
                v.shape(),
                ins.shape
            ),
        });
    }
    Ok(with_layouts(v, &ins.shape))
}

/// Sets every array's layout from `shape` (metadata only).
pub(crate) fn with_layouts(v: Value, shape: &Shape) -> Value {
    match (v, shape) {
        (Value::Array(l), Shape::Array(s)) => Value::Array(l.with_layout(s.layout.clone())),
        (Value::Tuple(t), Shape::Tuple(s)) if t.len() == s.len() => Value::Tuple(
            t.into_iter()
                .zip(s)
                .map(|(v, s)| with_layouts(v, s))
                .collect(),
        ),
        (v, _) => v,
    }
}

fn arr<'v>(ops: &[&'v Value], i: usize) -> Result<&'v Literal, OpError> {
    match ops.get(i) {
        Some(Value::Array(l)) => Ok(l),
        Some(v) => Err(OpError::Invalid(format!(
            "operand {i} must be an array, not {}",
            v.shape()
        ))),
        None => Err(OpError::Invalid(format!("missing operand {i}"))),
    }
}

fn arrs<'v>(ops: &[&'v Value]) -> Result<Vec<&'v Literal>, OpError> {
    (0..ops.len()).map(|i| arr(ops, i)).collect()
}

impl Calls for Run<'_, '_> {
    fn module(&self) -> &Module {
        self.module
    }
    fn call(&mut self, id: CompId, args: Vec<Value>) -> Result<Value, EvalError> {
        Run::call(self, id, args)
    }
    fn call_fusion(
        &mut self,
        id: CompId,
        args: Vec<Value>,
        fusion: &str,
    ) -> Result<Value, EvalError> {
        Run::call_fusion(self, id, args, fusion)
    }
    fn burn_fuel(&mut self, ins: &Instruction) -> Result<(), EvalError> {
        Run::burn_fuel(self, ins)
    }
    fn dispatch_real(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, OpError> {
        Run::dispatch_real(self, ins, ops)
    }
}
