//! What a judgement is between ([`Policy`]) and how the judge asks the
//! reference for more ([`EvalFn`]): shared by the judge and the registry
//! of legal differences.

use crate::hlo::Module;
use crate::literal::Literal;

/// The reference, evaluating a (variant) program on (variant) inputs.
pub type EvalFn<'e> = dyn Fn(&Module, &[Literal]) -> Option<Vec<Literal>> + 'e;

/// What a judgement is between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The backend against the exact reference: the default error specs per
    /// (op, dtype) and every admissible legal difference apply.
    Reference,
    /// Two runs of the same backend (another layout, another fusion): only
    /// the tolerance and the backend's element rules and reassociation apply.
    Itself,
    /// One instruction of the backend against the reference applied to the
    /// backend's own operand values (the fuzzer's and isolation's local
    /// judgement): as `Reference`, without known bugs.
    Instruction,
}
