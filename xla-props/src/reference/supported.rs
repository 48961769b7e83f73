//! Which ops and instructions the reference evaluates (beyond what the
//! opcode table's parse-only flag says).

use super::{collective, parallel};

/// Whether the reference evaluates `op` although the opcode table lists it
/// as parse-only (the complex ops `real`, `imag`, `complex`, `fft`,
/// `rng-bit-generator` and `triangular-solve`: they join no property's op
/// group; and the collectives and device ids, on a multi-device
/// evaluation, [`spmd`](super::spmd)).
pub fn evaluates(op: crate::hlo::Opcode) -> bool {
    use crate::hlo::Opcode as O;
    !op.is_parse_only()
        || matches!(
            op,
            O::Real | O::Imag | O::Complex | O::Fft | O::RngBitGenerator | O::TriangularSolve
        )
        || collective::is_collective_opcode(op)
        || collective::is_collective_done(op)
}

/// Whether the reference evaluates this instruction: [`evaluates`] its
/// opcode, or it is a collective (with its `-done`), replica-id,
/// partition-id, one of the SPMD partitioner's custom calls, a token op
/// (after-all, infeed, outfeed, send, recv and their `-done`), or the
/// StableHLO interpreter's run_parallel.
pub fn evaluates_instruction(ins: &crate::hlo::Instruction) -> bool {
    use crate::hlo::Opcode as O;
    evaluates(ins.opcode)
        || collective::is_multi_device(ins)
        || collective::is_collective_done(ins.opcode)
        || collective::partitioner_call(ins).is_some()
        || parallel::is_run_parallel(ins)
        || matches!(
            ins.opcode,
            O::AfterAll | O::Infeed | O::Outfeed | O::Send | O::SendDone | O::Recv | O::RecvDone
        )
}
