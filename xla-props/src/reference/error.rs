//! Why an evaluation failed: [`EvalError`] (public, located at an
//! instruction) and `OpError` (a kernel's failure before the instruction
//! it happened at is known). Every file of the evaluator uses them; they
//! use nothing of the evaluator.

use crate::hlo::{ArrayShape, CompId, Instruction, Opcode};
use crate::literal::LiteralError;

/// Why an evaluation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The op (or this use of it: complex types, parse-only ops) is not evaluated.
    #[error("unsupported {opcode}: {reason}")]
    Unsupported {
        /// The opcode.
        opcode: Opcode,
        /// Why.
        reason: String,
    },
    /// While loops ran more iterations, in total, than the fuel limit.
    #[error("while loop `{instruction}` ran out of fuel after {limit} iterations in total")]
    FuelExhausted {
        /// The while instruction that was running.
        instruction: String,
        /// The limit in force.
        limit: u64,
    },
    /// The arguments do not match the entry computation's parameters.
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// The module is malformed at this instruction.
    #[error("invalid instruction `{instruction}`: {message}")]
    Invalid {
        /// The instruction's name.
        instruction: String,
        /// What is wrong.
        message: String,
    },
}

/// A kernel's failure, before the instruction it happened at is known.
#[derive(Debug)]
pub(crate) enum OpError {
    /// The module is malformed.
    Invalid(String),
    /// Not evaluated by the reference.
    Unsupported(String),
    /// A failure inside a called computation (already attributed).
    Nested(EvalError),
}

impl From<LiteralError> for OpError {
    fn from(e: LiteralError) -> Self {
        OpError::Invalid(e.to_string())
    }
}

impl From<EvalError> for OpError {
    fn from(e: EvalError) -> Self {
        OpError::Nested(e)
    }
}

impl OpError {
    pub(crate) fn at_name(self, name: &str) -> EvalError {
        match self {
            OpError::Invalid(message) => EvalError::Invalid {
                instruction: name.to_string(),
                message,
            },
            OpError::Unsupported(reason) => EvalError::Invalid {
                instruction: name.to_string(),
                message: format!("unsupported: {reason}"),
            },
            OpError::Nested(e) => e,
        }
    }

    pub(crate) fn at(self, ins: &Instruction) -> EvalError {
        match self {
            OpError::Invalid(message) => EvalError::Invalid {
                instruction: ins.name.clone(),
                message,
            },
            OpError::Unsupported(reason) => EvalError::Unsupported {
                opcode: ins.opcode,
                reason,
            },
            OpError::Nested(e) => e,
        }
    }
}

/// The instruction's array shape.
pub(crate) fn out(ins: &Instruction) -> Result<&ArrayShape, OpError> {
    ins.shape.as_array().ok_or_else(|| {
        OpError::Invalid(format!(
            "{} must have an array shape, not {}",
            ins.opcode, ins.shape
        ))
    })
}

/// A malformed module's error.
pub(crate) fn bad(msg: impl Into<String>) -> OpError {
    OpError::Invalid(msg.into())
}

/// The instruction's `to_apply` computation.
pub(crate) fn to_apply(ins: &Instruction) -> Result<CompId, OpError> {
    ins.attrs
        .to_apply
        .ok_or_else(|| bad(format!("{} without to_apply", ins.opcode)))
}
