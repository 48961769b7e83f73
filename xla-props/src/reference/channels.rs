//! The point-to-point ops: `send`/`recv` pairs matched by channel, and
//! their `-done` ops.
//!
//! A send and a recv meet when they name the same `channel_id`: the n-th
//! send on a channel (on whichever device) meets the n-th recv on it, as
//! the StableHLO interpreter's channels do. The send waits for its recv.

use super::collective::{u32_scalar, DeviceContext};
use crate::hlo::collective::verbatim;
use crate::hlo::{Instruction, Opcode};
use crate::literal::Value;

/// The channel a send or recv names.
fn channel(ins: &Instruction) -> Result<i64, String> {
    verbatim(ins, "channel_id")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .ok_or_else(|| format!("`{}` names no channel_id", ins.name))
}

/// send: `(data, u32[] context, token)` once its recv has the data; recv:
/// `(data, u32[] context, token)` with the data of the matching send.
pub(crate) fn send_recv(
    ctx: &mut DeviceContext,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, String> {
    let key = format!("channel {}", channel(ins)?);
    let context = u32_scalar(0)?;
    match ins.opcode {
        Opcode::Send => {
            let [data, _token] = ops else {
                return Err(format!("`{}`: send takes data and a token", ins.name));
            };
            ctx.meet((&key, &format!("{key} send")), 0, 2, 0, (*data).clone())?;
            Ok(Value::Tuple(vec![(*data).clone(), context, Value::Token]))
        }
        Opcode::Recv => {
            let mut got = ctx.meet((&key, &format!("{key} recv")), 0, 2, 1, Value::Token)?;
            if got.len() != 2 {
                return Err(format!("`{}`: a malformed exchange", ins.name));
            }
            let data = got.swap_remove(0);
            Ok(Value::Tuple(vec![data, context, Value::Token]))
        }
        op => Err(format!("{op} is not send or recv")),
    }
}

/// send-done: the token; recv-done: `(data, token)`.
pub(crate) fn send_recv_done(ins: &Instruction, started: &Value) -> Result<Value, String> {
    match (ins.opcode, started) {
        (Opcode::SendDone, Value::Tuple(items)) if items.len() == 3 => Ok(Value::Token),
        (Opcode::RecvDone, Value::Tuple(items)) if items.len() == 3 => {
            Ok(Value::Tuple(vec![items[0].clone(), Value::Token]))
        }
        _ => Err(format!(
            "`{}`: its operand is not a started send or recv",
            ins.name
        )),
    }
}
