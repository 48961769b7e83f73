//! Flushed outputs: a backend that flushes subnormal results of a type may
//! write a subnormal result as the zero of its sign.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::LegalReason;

pub(crate) struct FlushedOutputs;

impl LegalDifference for FlushedOutputs {
    fn reason(&self) -> LegalReason {
        LegalReason::FlushedSubnormalOutput
    }
    fn summary(&self) -> &'static str {
        "a subnormal result written as the zero of its sign, for the types `Numerics::flush_outputs` names"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        !s.numerics.flush_outputs.is_empty()
    }
    fn cheap(&self) -> bool {
        true
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        vec![Evidence::FlushOutputs(&c.numerics.flush_outputs)]
    }
}
