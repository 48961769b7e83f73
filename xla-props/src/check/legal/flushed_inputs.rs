//! Flushed inputs: a backend that flushes subnormal inputs of a type may
//! read a subnormal argument as the zero of its sign.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{flush_subnormal_constants, flush_subnormal_inputs, LegalReason};

pub(crate) struct FlushedInputs;

impl LegalDifference for FlushedInputs {
    fn reason(&self) -> LegalReason {
        LegalReason::FlushedInputs
    }
    fn summary(&self) -> &'static str {
        "the reference's result on the arguments and constants with subnormals of a flushed input type (`Numerics::flush_inputs`) made zero"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        !s.numerics.flush_inputs.is_empty() && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        // arguments, and constants (read like arguments: XLA folds or loads them)
        let args = flush_subnormal_inputs(c.inputs, c.numerics);
        let module = flush_subnormal_constants(c.module, c.numerics);
        if args.is_none() && module.is_none() {
            return Vec::new();
        }
        c.eval(
            module.as_ref().unwrap_or(c.module),
            args.as_deref().unwrap_or(c.inputs),
        )
        .map(Evidence::Outputs)
        .into_iter()
        .collect()
    }
}
