//! The `interpreter` backend itself: its options and the `Backend` impl.

use super::engine::Compiled;
use super::numerics::interpreter_numerics;
use crate::backend::api::{Backend, Executable};
use crate::backend::error::BackendError;
use crate::check::Numerics;
use crate::hlo::Module;

/// The default limit on the iterations of one `while` loop.
pub const DEFAULT_WHILE_LIMIT: u64 = 1_000_000;

/// The interpreter backend.
///
/// ```
/// use xla_props::backend::{Backend, Interpreter};
/// let b = Interpreter::default();
/// assert_eq!(b.name(), "interpreter");
/// assert!(!b.numerics().is_exact());
/// let strict = Interpreter::with_while_limit(10);
/// assert_eq!(strict.while_limit(), 10);
/// ```
#[derive(Clone, Debug)]
pub struct Interpreter {
    while_limit: u64,
}

impl Default for Interpreter {
    fn default() -> Interpreter {
        Interpreter {
            while_limit: DEFAULT_WHILE_LIMIT,
        }
    }
}

impl Interpreter {
    /// An interpreter whose `while` loops fail after `limit` iterations.
    pub fn with_while_limit(limit: u64) -> Interpreter {
        Interpreter { while_limit: limit }
    }
    /// The `while` iteration limit.
    pub fn while_limit(&self) -> u64 {
        self.while_limit
    }
}

impl Backend for Interpreter {
    fn name(&self) -> &str {
        "interpreter"
    }
    fn numerics(&self) -> Numerics {
        interpreter_numerics()
    }
    fn version(&self) -> Option<String> {
        Some(crate::backend::builtin_version())
    }
    /// As many as one run starts (each device a thread).
    fn devices(&self) -> usize {
        crate::hlo::collective::MAX_DEVICES
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        // custom calls with a known meaning (XLA's TopK) as plain HLO
        let expanded = crate::hlo::expand_known_custom_calls(module);
        let module = expanded.as_ref().unwrap_or(module);
        if let Some(t) = module.extended_type() {
            return Err(BackendError::Unsupported {
                what: format!("element type {t} (the interpreter does not evaluate it)"),
            });
        }
        // a module on many devices takes and gives global arrays
        if let Some(program) =
            crate::reference::spmd::DeviceProgram::multi(module).map_err(BackendError::Compile)?
        {
            return Ok(Box::new(super::devices::MultiDevice::new(
                program,
                module,
                self.while_limit,
            )?));
        }
        Ok(Box::new(Compiled::new(module, self.while_limit)?))
    }
}
