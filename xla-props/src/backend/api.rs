//! The backend contract: `Backend::compile` once, `Executable::execute` many
//! times; and the optional extensions a backend may offer (a probe inside
//! fusions, control over its compiler's passes).

use std::path::{Path, PathBuf};

use super::error::BackendError;
use crate::check::{KnownBug, Numerics};
use crate::hlo::{Module, Shape};
use crate::literal::{Literal, Value};

/// A compiler under test.
///
/// ```
/// use xla_props::backend::{Backend, Interpreter};
/// use xla_props::hlo::{ElementType, Instruction, Module, Computation, InstrId, CompId, Opcode, Shape};
/// use xla_props::literal::Literal;
///
/// // y = p0 + p0, f32[2]
/// let s = Shape::array(ElementType::F32, vec![2]);
/// let mut p = Instruction::new("p0", Opcode::Parameter, s.clone(), vec![]);
/// p.attrs.parameter_number = Some(0);
/// let add = Instruction::new("y", Opcode::Add, s.clone(), vec![InstrId(0), InstrId(0)]);
/// let module = Module {
///     name: "m".into(),
///     attrs: vec![],
///     computations: vec![Computation { name: "main".into(), instructions: vec![p, add], root: InstrId(1), other: vec![] }],
///     entry: CompId(0),
/// };
/// let backend = Interpreter::default();
/// let exe = backend.compile(&module).unwrap();
/// let x = Literal::from_f64s(s.as_array().unwrap(), &[1.5, -2.0]).unwrap();
/// let out = exe.execute(&[x]).unwrap();
/// assert_eq!(out[0].to_f64_vec(), vec![3.0, -4.0]);
/// ```
pub trait Backend: Send + Sync {
    /// Stable short name used in case names and filters, e.g. "interpreter", "xla-cpu".
    fn name(&self) -> &str;
    /// The numerics this backend promises (ftz per dtype, approximate functions, excess precision).
    fn numerics(&self) -> Numerics {
        Numerics::exact()
    }
    /// Compile once; `BackendError::Unsupported` (an op or dtype it lacks) makes the case a skip, not a failure.
    ///
    /// A module on many devices (a partitioned module's `num_partitions` /
    /// `replica_count`, or collectives) compiles to an executable that takes
    /// the GLOBAL arguments and gives the GLOBAL outputs
    /// ([`crate::reference::spmd::DeviceProgram`]); one that needs more than
    /// [`Backend::devices`] devices is `BackendError::Unsupported`, saying
    /// how many it needs and how many the backend has.
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError>;
    /// How many devices a multi-device program may use on this backend
    /// (replicas × partitions; default 1: one-device programs only).
    fn devices(&self) -> usize {
        1
    }
    /// The bugs this backend is known to have, each with a model of its wrong
    /// results: a mismatch they explain is reported as an expected failure
    /// (`xfail`), not as a new failure (default: none).
    fn known_bugs(&self) -> &[KnownBug] {
        &[]
    }
    /// What the runner and the properties need to know about the backend
    /// beyond its numerics: one struct of facts, not one method each
    /// (default: none of them).
    fn traits(&self) -> BackendTraits {
        BackendTraits::default()
    }
    /// What the backend is, for a run's records (`--json` metadata): its
    /// version, the plugin it loaded, ... (default: not declared).
    fn version(&self) -> Option<String> {
        None
    }
    /// Its compiler's named passes, when they can be disabled and dumped one
    /// by one (XLA's HLO passes), for `bisect-passes` (default: none).
    fn pass_control(&self) -> Option<&dyn PassControl> {
        None
    }
    /// Runs every request's module on each of its argument lists and returns
    /// one entry per argument list: the outputs, or `None` where they could
    /// not be computed in bulk (the runner then runs that case directly, which
    /// reports the error). `progress` is called with a number of argument
    /// lists done. The default compiles and executes each request on its own.
    ///
    /// Results computed in bulk are a fast path, not the verdict: a case that
    /// fails on them is run again directly before it is reported.
    ///
    /// ```
    /// use xla_props::backend::{Backend, BatchRequest, Interpreter};
    /// use xla_props::hlo::{ElementType, Instruction, Module, Computation, InstrId, CompId, Opcode, Shape};
    /// use xla_props::literal::Literal;
    /// let s = Shape::array(ElementType::F32, vec![2]);
    /// let mut p = Instruction::new("p0", Opcode::Parameter, s.clone(), vec![]);
    /// p.attrs.parameter_number = Some(0);
    /// let neg = Instruction::new("y", Opcode::Negate, s.clone(), vec![InstrId(0)]);
    /// let module = Module {
    ///     name: "m".into(),
    ///     attrs: vec![],
    ///     computations: vec![Computation { name: "main".into(), instructions: vec![p, neg], root: InstrId(1), other: vec![] }],
    ///     entry: CompId(0),
    /// };
    /// let a = [Literal::from_f64s(s.as_array().unwrap(), &[1.0, 2.0]).unwrap()];
    /// let b = [Literal::from_f64s(s.as_array().unwrap(), &[3.0, 4.0]).unwrap()];
    /// let interp = Interpreter::default();
    /// assert!(!interp.traits().prefers_batching);
    /// let out = interp.execute_many(&[BatchRequest { module: &module, args: vec![&a, &b] }], &|_| {});
    /// assert_eq!(out[0][1].as_ref().unwrap()[0].to_f64_vec(), vec![-3.0, -4.0]);
    /// ```
    fn execute_many(
        &self,
        requests: &[BatchRequest<'_>],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<Vec<Option<Vec<Literal>>>> {
        requests
            .iter()
            .map(|r| {
                let exe = self.compile(r.module).ok();
                let out = r
                    .args
                    .iter()
                    .map(|a| exe.as_ref().and_then(|e| e.execute(a).ok()))
                    .collect();
                progress(r.args.len());
                out
            })
            .collect()
    }
}

/// Facts about a backend that shared mechanisms act on (the runner's
/// batching and module-aligned shards, properties that feed reductions).
///
/// ```
/// use xla_props::backend::{Backend, BackendTraits, Interpreter};
/// assert_eq!(Interpreter::default().traits(), BackendTraits::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackendTraits {
    /// Many small independent modules run much faster handed over together
    /// (one compile for many, as XLA): the runner collects a run's requests
    /// first and gives them to [`Backend::execute_many`]; otherwise it calls
    /// `compile`/`execute` per case.
    pub prefers_batching: bool,
    /// A reduction's init value must be an identity of its computation (XLA:
    /// "the result is undefined" otherwise), so properties that feed other
    /// init values skip.
    pub requires_identity_reduce_init: bool,
    /// Its cases follow `XLA_PROPS_XLA_SHARD`: shards aligned on modules (a
    /// module's cases stay together), for compiling backends that batch.
    pub module_aligned_shards: bool,
    /// It runs only when named (`--backend`, `XLA_PROPS_BACKENDS`): a real
    /// compiler, whose full suite takes minutes to hours, is not part of a
    /// plain `cargo test`.
    pub only_when_named: bool,
}

impl BackendTraits {
    /// None of them (the interpreter, the reference, a user's backend by default).
    pub const NONE: BackendTraits = BackendTraits {
        prefers_batching: false,
        requires_identity_reduce_init: false,
        module_aligned_shards: false,
        only_when_named: false,
    };
    /// A compiler with a costly compile per module and XLA's reduction
    /// semantics (xla-cpu, xla-gpu, declared XLA backends, iree-cpu).
    pub const BATCHING_COMPILER: BackendTraits = BackendTraits {
        prefers_batching: true,
        requires_identity_reduce_init: true,
        module_aligned_shards: true,
        only_when_named: true,
    };
}

/// One module and the argument lists to run it on, for [`Backend::execute_many`].
#[derive(Clone, Debug)]
pub struct BatchRequest<'a> {
    /// The module.
    pub module: &'a Module,
    /// Each argument list (the entry's parameter leaves in order).
    pub args: Vec<&'a [Literal]>,
}

/// The version of the backends built into xla-props (`Backend::version`).
pub fn builtin_version() -> String {
    format!("built into xla-props {}", env!("CARGO_PKG_VERSION"))
}

/// A compiled module, run many times.
///
/// ```
/// use xla_props::backend::{BackendError, Executable};
/// use xla_props::literal::Literal;
///
/// // A trivial executable that returns its arguments.
/// struct Echo;
/// impl Executable for Echo {
///     fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
///         Ok(args.to_vec())
///     }
/// }
/// assert!(Echo.probe().is_none());
/// ```
pub trait Executable: Send + Sync {
    /// Run many times. Returns the entry computation's outputs, tuples flattened.
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError>;
    /// A look inside fusions, for backends that can give one (default: none).
    fn probe(&self) -> Option<&dyn FusionProbe> {
        None
    }
}

/// The value of one instruction inside a fused computation, as the backend computed it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbedValue {
    /// The instruction's name in the fused computation.
    pub instruction: String,
    /// Its declared shape.
    pub shape: Shape,
    /// Its value, in its declared type.
    pub value: Value,
}

/// The optional extension of an [`Executable`] that returns the intermediate
/// values of a fused computation, so that isolation can look inside a fusion
/// without splitting it (splitting re-rounds intermediates to memory).
pub trait FusionProbe {
    /// Runs the fusion instruction named `fusion` (in any computation of the
    /// compiled module) on `operands`, its operand values, and returns every
    /// instruction of its fused computation with its value, operands before users.
    fn probe_fusion(
        &self,
        fusion: &str,
        operands: &[Value],
    ) -> Result<Vec<ProbedValue>, BackendError>;
}

// The optional extension of a backend whose compiler runs named passes
// that can be disabled one by one (XLA's HLO pass pipeline): what
// `xla-props bisect-passes` and `isolate` need to name the pass that
// introduced a disagreement.

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
