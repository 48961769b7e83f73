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
        // the arguments flushed (at the module's boundary), and the
        // arguments and constants flushed (a constant read like an
        // argument: XLA folds or loads it); either may be what ran
        let args = flush_subnormal_inputs(c.inputs, c.numerics);
        let module = flush_subnormal_constants(c.module, c.numerics);
        let mut out = Vec::new();
        if let Some(a) = &args {
            out.extend(c.eval(c.module, a).map(Evidence::Outputs));
        }
        if let Some(m) = &module {
            out.extend(
                c.eval(m, args.as_deref().unwrap_or(c.inputs))
                    .map(Evidence::Outputs),
            );
        }
        out
    }
}
