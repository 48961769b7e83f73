//! Emitter mutations: the entry computation runs one instruction at a time on
//! the base backend, and the instructions a mutation targets are computed by
//! its kernel instead (usually from the base's own result for that
//! instruction, or from the base run on altered operands).

use std::collections::HashMap;

use super::ctx::{Base, Ctx, Res};
use super::kernels;
use super::mutation::Mutation;
use crate::backend::api::Backend;
use crate::backend::error::BackendError;
use crate::backend::interpreter::nth;
use crate::hlo::{CompId, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape};
use crate::literal::{Literal, Value};

/// Runs a module with one mutation's kernels in place of the base's code for the targeted instructions.
pub(crate) struct Stepper<'a> {
    pub base: &'a dyn Backend,
    pub module: &'a Module,
    pub mutation: Mutation,
}

pub(crate) fn float(t: ElementType) -> bool {
    t.is_float()
}

fn dtype(shape: &Shape) -> Option<ElementType> {
    shape.as_array().map(|a| a.dtype)
}

fn reducer_root(module: &Module, instr: &Instruction) -> Option<Opcode> {
    let c = module.computations.get(instr.attrs.to_apply?.index())?;
    Some(c.instr(c.root).opcode)
}

/// True when `mutation` replaces how `instr` (in `comp`) is computed.
pub(crate) fn targets(
    mutation: Mutation,
    module: &Module,
    comp: &Computation,
    instr: &Instruction,
) -> bool {
    let t = dtype(&instr.shape);
    let is_f = t.is_some_and(float);
    let is_int = t.is_some_and(|t| t.is_integer());
    let operand_t = |k: usize| {
        instr
            .operands
            .get(k)
            .and_then(|o| comp.instructions.get(o.index()))
            .and_then(|o| dtype(&o.shape))
    };
    use Mutation as M;
    use Opcode as O;
    match (mutation, instr.opcode) {
        (M::ExpLowPrecision | M::ApproxExpDeclared, O::Exponential) => is_f,
        (M::DotBf16Accumulate, O::Dot) => t == Some(ElementType::Bf16),
        (M::MaxMinDropNan, O::Maximum | O::Minimum) => is_f,
        (M::CompareNanEqual, O::Compare) => {
            operand_t(0).is_some_and(float)
                && instr.attrs.direction == Some(crate::hlo::ComparisonDirection::Eq)
        }
        (M::IntAddSaturates, O::Add) => is_int,
        (M::SliceLimitOffByOne, O::Slice) => true,
        (M::ReduceIgnoresInit, O::Reduce) => instr.operands.len() == 2,
        (M::ReduceWindowIgnoresPadding, O::ReduceWindow) => {
            instr.operands.len() == 2
                && instr.attrs.window.as_ref().is_some_and(|w| {
                    w.iter().any(|d| d.pad_low > 0 || d.pad_high > 0)
                        && w.iter()
                            .all(|d| d.pad_low >= 0 && d.pad_high >= 0 && d.base_dilation == 1)
                })
        }
        (M::DynamicSliceNoClamp, O::DynamicSlice) => true,
        (M::SortUnstable, O::Sort) => true,
        (M::ConcatOffsetWrong, O::Concatenate) => instr.operands.len() >= 2,
        (M::IntDivideByZeroZero, O::Divide) => is_int,
        (M::ConvertFloatIntWraps, O::Convert) => is_int && operand_t(0).is_some_and(float),
        (M::Bf16ConvertTruncates, O::Convert) => {
            t == Some(ElementType::Bf16)
                && matches!(operand_t(0), Some(ElementType::F32 | ElementType::F64))
        }
        (M::GatherNoClamp, O::Gather) => true,
        (M::ScatterDropsDuplicates, O::Scatter) => {
            instr.operands.len() == 3 && reducer_root(module, instr) == Some(O::Add)
        }
        (M::DotBatchContractSwap, O::Dot) => instr
            .attrs
            .dot_dims
            .as_ref()
            .is_some_and(|d| !d.lhs_batch.is_empty() && !d.lhs_contracting.is_empty()),
        (M::ConvIgnoresFeatureGroups, O::Convolution) => {
            instr.attrs.feature_group_count.is_some_and(|g| g > 1)
        }
        (M::FmaContraction, O::Add) => {
            is_f && instr.operands.iter().any(|o| {
                comp.instructions
                    .get(o.index())
                    .is_some_and(|i| i.opcode == O::Multiply)
            })
        }
        (M::PairwiseReduction | M::ReverseOrderReduction, O::Reduce) => {
            is_f && instr.operands.len() == 2 && reducer_root(module, instr) == Some(O::Add)
        }
        (M::ReciprocalDivide, O::Divide) => is_f,
        (
            M::BroadcastConstantMisreadsOther
            | M::DynamicSliceConstantStartOffByOne
            | M::UnsignedStartIndexAsSigned
            | M::DotSquareRhsContractingAsZero
            | M::DivideOfQuotientReassociated,
            _,
        ) => super::form_bugs::targets(mutation, comp, instr),
        _ => {
            let dims: Vec<Vec<i64>> = instr
                .operands
                .iter()
                .filter_map(|o| comp.instructions.get(o.index()))
                .map(|o| o.shape.as_array().map_or(vec![], |a| a.dims.clone()))
                .collect();
            super::config_bugs::targets(mutation, instr, &dims)
        }
    }
}

impl<'a> Stepper<'a> {
    /// True when some instruction reachable from computation `c` is targeted.
    pub fn touches(&self, c: CompId) -> bool {
        self.touches_depth(c, 0)
    }

    fn touches_depth(&self, c: CompId, depth: usize) -> bool {
        let Some(comp) = self.module.computations.get(c.index()) else {
            return false;
        };
        depth < 16
            && comp.instructions.iter().any(|i| {
                targets(self.mutation, self.module, comp, i)
                    || (i.opcode == Opcode::Fusion
                        && i.attrs
                            .calls
                            .iter()
                            .any(|&f| self.touches_depth(f, depth + 1)))
            })
    }

    /// Runs the entry computation on `args`; outputs flattened.
    pub fn run(&self, args: &[Literal]) -> Res<Vec<Literal>> {
        let args = args.iter().cloned().map(Value::Array).collect();
        Ok(self.eval(self.module.entry, args, 0)?.into_flat())
    }

    fn eval(&self, c: CompId, args: Vec<Value>, depth: usize) -> Res<Value> {
        let comp =
            self.module.computations.get(c.index()).ok_or_else(|| {
                BackendError::Compile("a computation index is out of range".into())
            })?;
        let order = comp.post_order().ok_or_else(|| {
            BackendError::Compile(format!("computation `{}` has a cycle", comp.name))
        })?;
        let mut values: HashMap<InstrId, Value> = HashMap::new();
        for id in order {
            let instr = comp.instr(id);
            let operands: Vec<Value> = instr
                .operands
                .iter()
                .map(|o| values.get(o).cloned())
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    BackendError::Compile(format!("`{}` uses a missing operand", instr.name))
                })?;
            let v = match instr.opcode {
                Opcode::Parameter => {
                    let n = instr.attrs.parameter_number.unwrap_or(0);
                    nth(&args, n).cloned().ok_or_else(|| {
                        BackendError::BadArguments(format!("no argument for parameter {n}"))
                    })?
                }
                Opcode::Tuple => Value::Tuple(operands),
                Opcode::GetTupleElement => {
                    let k = instr.attrs.index.unwrap_or(0);
                    operands
                        .first()
                        .and_then(Value::as_tuple)
                        .and_then(|t| nth(t, k))
                        .cloned()
                        .ok_or_else(|| {
                            BackendError::Compile(format!("`{}`: bad tuple index", instr.name))
                        })?
                }
                Opcode::Fusion
                    if depth < 16 && instr.attrs.calls.iter().any(|&f| self.touches(f)) =>
                {
                    self.eval(instr.attrs.calls[0], operands, depth + 1)?
                }
                _ if targets(self.mutation, self.module, comp, instr) => {
                    let arrays = arrays(&operands, instr)?;
                    let ctx = Ctx {
                        stepper: self,
                        comp,
                        instr,
                        operands: &arrays,
                        values: &values,
                    };
                    kernels::apply(self.mutation, &ctx)?
                }
                _ => self.single(instr, &operands, None)?,
            };
            values.insert(id, v);
        }
        values
            .remove(&comp.root)
            .ok_or_else(|| BackendError::Compile("the root has no value".into()))
    }
}

impl Base for Stepper<'_> {
    fn module(&self) -> &Module {
        self.module
    }

    /// Runs one instruction on the base backend, on these operand values;
    /// `extra` is a computation appended to the module (its id replaces `to_apply`).
    fn single(
        &self,
        instr: &Instruction,
        operands: &[Value],
        extra: Option<Computation>,
    ) -> Res<Value> {
        let arrays = arrays(operands, instr)?;
        let mut m = self.module.clone();
        let mut step = instr.clone();
        if let Some(extra) = extra {
            m.computations.push(extra);
            step.attrs.to_apply = Some(CompId(m.computations.len() as u32 - 1));
        }
        let mut instructions = Vec::with_capacity(arrays.len() + 1);
        for (k, a) in arrays.iter().enumerate() {
            let mut p = Instruction::new(
                format!("mutant.step.p{k}"),
                Opcode::Parameter,
                Shape::Array(a.shape()),
                vec![],
            );
            p.attrs.parameter_number = Some(k as i64);
            instructions.push(p);
        }
        step.operands = (0..arrays.len() as u32).map(InstrId).collect();
        step.name = format!("mutant.step.{}", instr.name);
        instructions.push(step);
        m.computations.push(Computation {
            name: "mutant.step".to_string(),
            root: InstrId(arrays.len() as u32),
            instructions,
            other: vec![],
        });
        m.entry = CompId(m.computations.len() as u32 - 1);
        let out = self.base.compile(&m)?.execute(&arrays)?;
        Ok(match &instr.shape {
            Shape::Tuple(_) => Value::Tuple(out.into_iter().map(Value::Array).collect()),
            _ => Value::Array(
                out.into_iter()
                    .next()
                    .ok_or_else(|| BackendError::Execute("the base returned no output".into()))?,
            ),
        })
    }
}

fn arrays(operands: &[Value], instr: &Instruction) -> Res<Vec<Literal>> {
    operands
        .iter()
        .map(|v| v.as_array().cloned())
        .collect::<Option<_>>()
        .ok_or_else(|| {
            BackendError::unsupported(format!(
                "mutant: tuple operands of `{}` ({})",
                instr.name,
                instr.opcode.name()
            ))
        })
}
