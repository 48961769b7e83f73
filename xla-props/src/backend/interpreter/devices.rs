//! Multi-device programs on the interpreter: one thread per device, each
//! with its own compiled copy of the module and its device's context. The
//! collectives' data movement (which devices meet, which chunk goes where)
//! is the spec's and shared with the reference
//! (`reference::collective::step`); the reduction is the interpreter's own:
//! a left fold in group order, rounding to the element type after every
//! step, as a simple CPU runtime reduces.

use super::elem::{Res, ValRef};
use super::elementwise;
use super::engine::{Compiled, Reducer};
use crate::backend::api::Executable;
use crate::backend::error::BackendError;
use crate::hlo::{Instruction, Module};
use crate::literal::Literal;
use crate::literal::Value;
use crate::reference::collective;
use crate::reference::collective::DeviceContext;
use crate::reference::rendezvous::first_cause;
use crate::reference::spmd::on_device_threads;
use crate::reference::spmd::DeviceProgram;

/// A compiled multi-device program: global arguments in, global outputs out.
pub(super) struct MultiDevice {
    program: DeviceProgram,
    module: Module,
    while_limit: u64,
}

impl MultiDevice {
    pub(super) fn new(
        program: DeviceProgram,
        module: &Module,
        while_limit: u64,
    ) -> Result<Self, BackendError> {
        // compile once to report a malformed module at compile time
        Compiled::new(module, while_limit)?;
        Ok(MultiDevice {
            program,
            module: module.clone(),
            while_limit,
        })
    }
}

impl Executable for MultiDevice {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let per_device = self
            .program
            .cut(&self.module, args)
            .map_err(BackendError::BadArguments)?;
        let contexts = self.program.device_contexts();
        let run = |args: &Vec<Literal>, ctx| {
            Compiled::new(&self.module, self.while_limit)
                .map(|c| c.on_device(ctx))
                .and_then(|c| c.execute(args))
        };
        let results = on_device_threads(&per_device, contexts, "interpreter-device", run)
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|lost| {
                    Err(BackendError::Execute(
                        lost.message("device", "a device's run panicked"),
                    ))
                })
            })
            .collect();
        let outs = first_cause(results)?;
        self.program.assemble(outs).map_err(BackendError::Execute)
    }
}

impl Compiled {
    /// This compiled module as one device of a multi-device run.
    pub(super) fn on_device(mut self, ctx: DeviceContext) -> Self {
        self.set_device(ctx);
        self
    }

    /// A collective, replica-id, partition-id or partitioner call.
    pub(super) fn multi_device(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let first = || {
            ops.first()
                .map(|r| r.to_value())
                .ok_or_else(|| BackendError::Execute(format!("{} without an operand", ins.opcode)))
        };
        if collective::partitioner_call(ins) == Some(collective::PartitionerCall::Sharding) {
            return first();
        }
        if collective::is_collective_done(ins.opcode) {
            return collective::collective_done(ins, &first()?).map_err(BackendError::Execute);
        }
        let Some(slot) = self.device() else {
            return Err(BackendError::unsupported(format!(
                "{} outside a multi-device run",
                ins.opcode
            )));
        };
        let mut ctx = slot.lock().unwrap_or_else(|e| e.into_inner());
        let vals: Vec<Value> = ops.iter().map(|r| r.to_value()).collect();
        let refs: Vec<&Value> = vals.iter().collect();
        let mut fold = |i: &Instruction, xs: &[&Literal]| group_fold(self, i, xs);
        collective::step(&mut ctx, ins, &refs, &mut fold).map_err(BackendError::Execute)
    }
}

/// A group's arrays folded left in group order by the reducer.
pub(super) fn group_fold(
    c: &Compiled,
    ins: &Instruction,
    xs: &[&Literal],
) -> Result<Literal, String> {
    let comp = ins.to_apply()?;
    let (first, rest) = xs.split_first().ok_or("an empty group")?;
    let mut acc: Literal = (*first).clone();
    match c.reducer(comp) {
        Reducer::Binary(op) => {
            for x in rest {
                acc = elementwise::binary(op, &acc, x).map_err(|e| e.to_string())?;
            }
        }
        _ => {
            for x in rest {
                let mut bits = Vec::with_capacity(acc.element_count());
                for i in 0..acc.element_count() {
                    let a = scalar_at(&acc, i)?;
                    let b = scalar_at(x, i)?;
                    let r = c.call_scalars(comp, &[a, b]).map_err(|e| e.to_string())?;
                    let r = r.first().ok_or("the reducer returned nothing")?;
                    bits.push(r.get_bits(0));
                }
                acc = Literal::from_bits(&acc.shape(), &bits).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(acc)
}

fn scalar_at(x: &Literal, i: usize) -> Result<Literal, String> {
    x.scalar_at(i).map_err(|e| e.to_string())
}
