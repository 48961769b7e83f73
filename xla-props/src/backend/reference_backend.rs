//! The `reference` backend: the exact evaluator, usable wherever a backend is.

use std::sync::Arc;

use super::api::{Backend, Executable};
use super::error::BackendError;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::reference::{EvalError, Evaluator, DEFAULT_FUEL};

/// The exact reference evaluator as a backend (numerics: exact).
///
/// ```
/// use xla_props::backend::{Backend, ReferenceBackend};
/// use xla_props::hlo::{parse_module, ElementType};
/// use xla_props::literal::Literal;
/// let m = parse_module("HloModule m\nENTRY e {\n  p = f16[] parameter(0)\n  ROOT r = f16[] sqrt(p)\n}\n").unwrap();
/// let exe = ReferenceBackend::default().compile(&m).unwrap();
/// let out = exe.execute(&[Literal::scalar(ElementType::F16, 2.0)]).unwrap();
/// assert_eq!(out[0].get_f64(0), 1.4140625); // sqrt(2) rounded once to f16
/// ```
#[derive(Clone, Debug)]
pub struct ReferenceBackend {
    fuel: u64,
}

impl Default for ReferenceBackend {
    fn default() -> Self {
        ReferenceBackend { fuel: DEFAULT_FUEL }
    }
}

impl ReferenceBackend {
    /// The same backend with another while-loop fuel limit (total iterations).
    pub fn with_fuel_limit(fuel: u64) -> Self {
        ReferenceBackend { fuel }
    }
}

struct ReferenceExecutable {
    module: Arc<Module>,
    fuel: u64,
}

impl Backend for ReferenceBackend {
    fn name(&self) -> &str {
        "reference"
    }

    fn version(&self) -> Option<String> {
        Some(crate::backend::builtin_version())
    }

    /// As many as one evaluation runs (each device a thread).
    fn devices(&self) -> usize {
        crate::hlo::collective::MAX_DEVICES
    }

    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        if let Some(op) = module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .find(|i| i.opcode.is_parse_only() && !crate::reference::evaluates_instruction(i))
        {
            return Err(BackendError::unsupported(format!(
                "the reference does not evaluate `{}` (instruction '{}')",
                op.opcode, op.name
            )));
        }
        Ok(Box::new(ReferenceExecutable {
            module: Arc::new(module.clone()),
            fuel: self.fuel,
        }))
    }
}

impl Executable for ReferenceExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        Evaluator::new()
            .with_fuel_limit(self.fuel)
            .evaluate(&self.module, args)
            .map_err(to_backend_error)
    }
}

/// Maps an evaluator error onto the backend error a case reports.
pub(crate) fn to_backend_error(e: EvalError) -> BackendError {
    match e {
        EvalError::Unsupported { .. } => BackendError::unsupported(e.to_string()),
        EvalError::BadArguments(m) => BackendError::BadArguments(m),
        other => BackendError::Execute(other.to_string()),
    }
}
