//! The ops of a run that meet another device: collectives, replica and
//! partition ids, the partitioner's calls, run_parallel, the token ops and
//! the infeed. (The run of the devices themselves, one thread each, is
//! `evaluate_devices` in `eval.rs`.)

use super::collective::{self, DeviceContext};
use super::eval::Run;
use super::{channels, parallel, reduction, OpError};
use crate::hlo::{CompId, Instruction, Opcode, Shape};
use crate::literal::{Literal, Value};

impl Run<'_, '_> {
    /// A collective, replica-id, partition-id or partitioner call: needs
    /// the other devices of a multi-device run.
    pub(super) fn multi_device(
        &mut self,
        ins: &Instruction,
        ops: &[&Value],
    ) -> Result<Value, OpError> {
        let Some(mut ctx) = self.spmd.take() else {
            return Err(OpError::Unsupported(format!(
                "{} runs on many devices: evaluate the whole module (Evaluator::evaluate)",
                ins.opcode
            )));
        };
        let mut reduce =
            |i: &Instruction, xs: &[&Literal]| reduction::exact_group_reduce(self, i, xs);
        let r = collective::step(&mut ctx, ins, ops, &mut reduce);
        self.spmd = Some(ctx);
        r.map_err(OpError::Invalid)
    }
}

impl Run<'_, '_> {
    /// The StableHLO interpreter's run_parallel: a grid of programs, each
    /// run as one device.
    pub(super) fn run_parallel(
        &mut self,
        ins: &Instruction,
        ops: &[&Value],
    ) -> Result<Value, OpError> {
        let (module, fuel) = (self.module, self.fuel_limit);
        let process = |program: CompId, args: Vec<Value>, ctx: DeviceContext| {
            Run::on_device(module, ctx)
                .with_fuel(fuel)
                .call(program, args)
        };
        parallel::run_parallel(module, ins, ops, &process)
    }

    /// after-all, outfeed (its data goes nowhere), infeed, send, recv and
    /// their `-done`.
    pub(super) fn token_op(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, OpError> {
        use Opcode as O;
        match ins.opcode {
            O::AfterAll | O::Outfeed => Ok(Value::Token),
            O::Infeed => self.infeed(ins),
            O::Send | O::Recv => {
                let ctx = self.spmd.as_mut().ok_or_else(|| {
                    OpError::Unsupported(format!(
                        "{} meets another device: run it in interpreter.run_parallel",
                        ins.opcode
                    ))
                })?;
                channels::send_recv(ctx, ins, ops).map_err(OpError::Invalid)
            }
            O::SendDone | O::RecvDone => {
                channels::send_recv_done(ins, ops[0]).map_err(OpError::Invalid)
            }
            op => Err(OpError::Invalid(format!("{op} is not a token op"))),
        }
    }

    /// infeed: `(data, token)`, the data taken from the run's infeed queue
    /// (one array per array of the data).
    fn infeed(&mut self, ins: &Instruction) -> Result<Value, OpError> {
        let no_queue = || {
            OpError::Unsupported(format!(
                "`{}` reads the infeed, and nothing feeds this run (run it in interpreter.run_parallel with `infeed=`)",
                ins.name
            ))
        };
        let ctx = self.spmd.as_ref().ok_or_else(no_queue)?;
        let Shape::Tuple(parts) = &ins.shape else {
            return Err(OpError::Invalid("infeed gives (data, token)".into()));
        };
        let [data, Shape::Token] = &parts[..] else {
            return Err(OpError::Invalid("infeed gives (data, token)".into()));
        };
        let mut take = |s: &Shape| -> Result<Value, OpError> {
            let l = ctx.pop_infeed().ok_or_else(|| {
                OpError::Invalid(format!("`{}`: the infeed queue is empty", ins.name))
            })?;
            if !Shape::Array(l.shape()).compatible(s) {
                return Err(OpError::Invalid(format!(
                    "`{}` reads {s} but the infeed holds {}",
                    ins.name,
                    l.shape()
                )));
            }
            Ok(Value::Array(l))
        };
        let value = match data {
            Shape::Tuple(items) => {
                Value::Tuple(items.iter().map(&mut take).collect::<Result<_, _>>()?)
            }
            s => take(s)?,
        };
        Ok(Value::Tuple(vec![value, Value::Token]))
    }
}
