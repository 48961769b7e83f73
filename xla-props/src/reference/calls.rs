//! What a kernel may ask of the evaluation it runs in. The op-family files
//! see the run loop (`eval::Run`) only through this trait, so the loop
//! depends on the families and never the other way round.

use super::{EvalError, OpError};
use crate::hlo::{CompId, Instruction, Module};
use crate::literal::Value;

/// Calls into the running evaluation: computations (reducers, comparators,
/// loop bodies, branches, fusions), while-loop fuel, and the real-typed
/// semantics (complex values are evaluated through them part by part).
pub(crate) trait Calls {
    /// The module being evaluated.
    fn module(&self) -> &Module;
    /// Calls computation `id` on `args`; returns its root value.
    fn call(&mut self, id: CompId, args: Vec<Value>) -> Result<Value, EvalError>;
    /// Calls a fused computation, reporting its inner values to the hook.
    fn call_fusion(
        &mut self,
        id: CompId,
        args: Vec<Value>,
        fusion: &str,
    ) -> Result<Value, EvalError>;
    /// Takes one unit of while-loop fuel.
    fn burn_fuel(&mut self, ins: &Instruction) -> Result<(), EvalError>;
    /// The semantics of real-typed instructions.
    fn dispatch_real(&mut self, ins: &Instruction, ops: &[&Value]) -> Result<Value, OpError>;
}
