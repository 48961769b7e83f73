//! The optional extension of a [`Backend`](super::Backend) whose compiler runs
//! named passes that can be disabled one by one (XLA's HLO pass pipeline):
//! what `xla-props bisect-passes` and `isolate` need to name the pass that
//! introduced a disagreement.

use std::path::{Path, PathBuf};

use super::{BackendError, Executable};
use crate::hlo::Module;

/// One step of the compiler's own dump: the module as it was right after
/// `pass` (in `pipeline`) changed it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PassStep {
    /// Position in the compile, from 0 (the dump's step number).
    pub step: u32,
    /// The pipeline the pass ran in.
    pub pipeline: String,
    /// The pass that just ran (`pipeline-start` for a pipeline's first state).
    pub pass: String,
    /// The pass that runs next (`pipeline-end` after the last).
    pub next: String,
    /// The dump file holding the module at this step.
    pub file: PathBuf,
}

impl PassStep {
    /// True for a state a real pass produced (not a pipeline's start).
    pub fn is_pass(&self) -> bool {
        self.pass != "pipeline-start"
    }
}

/// A compiler whose passes can be disabled by name and whose compile can be
/// dumped pass by pass.
///
/// ```
/// use xla_props::backend::{Backend, Interpreter};
/// // the interpreter runs no passes
/// assert!(Interpreter::default().pass_control().is_none());
/// ```
pub trait PassControl: Send + Sync {
    /// Compiles `module` with the passes named in `disabled` turned off; with
    /// `dump`, the compiler writes the module after every pass that changed
    /// it into that directory. Each call is one compile of its own.
    fn compile_with_passes(
        &self,
        module: &Module,
        disabled: &[String],
        dump: Option<&Path>,
    ) -> Result<Box<dyn Executable>, BackendError>;

    /// The steps of a dump written by [`PassControl::compile_with_passes`],
    /// in the order they ran.
    fn read_dump(&self, dir: &Path) -> Result<Vec<PassStep>, String>;
}
