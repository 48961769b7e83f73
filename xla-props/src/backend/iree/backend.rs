//! `IreeBackend`: the `Backend` for IREE's llvm-cpu target.
//!
//! A module is lowered to StableHLO (the printer the XLA backend uses),
//! compiled into a `.vmfb` (by IREE's compiler library in a compile worker,
//! `compile_worker`, or by an `iree-compile` process) and run by
//! `iree-run-module` with raw little-endian files in and out. Every call
//! runs in another process than the test run's, so a crash or a hang inside
//! IREE fails one call: in the suite
//! a batch that fails is retried without the module its compile error points
//! at (or split and retried down to one module when the error names no line;
//! `xla::many`), and that module's cases then run directly and report it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::canonical::canonicalize;
use super::compile_worker::CompilePool;
use super::error::IreeError;
use super::kept::{relocated, Hit, Kept};
use super::numerics::{iree_cpu_numerics, unsupported_in};
use super::packing::{is_binding_limit, pack_parameters, Packing};
use super::tools::{compile_failure, summarize, IreeTools, Scratch, IREE_VERSION};
use crate::backend::xla::many::{self, RowRunner};
use crate::backend::{Backend, BackendError, BackendTraits, BatchRequest, Executable};
use crate::check::{KnownBug, Numerics};
use crate::hlo::stablehlo::{lower_module, mlir_element_type, LowerError, Lowered};
use crate::hlo::{ArrayShape, Module};
use crate::literal::Literal;

/// Default per-call timeout (one compile, or one run).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Modules per batch by default: `iree-compile` takes about 0.4 s for
/// anything and about 45 ms per distinct op on top, superlinear past a few
/// hundred ops (docs/perf.md); `XLA_PROPS_IREE_BATCH` overrides.
const DEFAULT_BATCH: usize = 32;

/// Counters of a backend's calls.
#[derive(Debug, Default)]
struct Stats {
    compiles: AtomicU64,
    runs: AtomicU64,
    failed_compiles: AtomicU64,
    /// Set once `execute_many` ran: the run's totals are printed on drop.
    batched: std::sync::atomic::AtomicBool,
}

/// IREE (llvm-cpu, generic x86-64) as a compiler under test.
///
/// ```
/// use xla_props::backend::iree::IreeBackend;
/// use xla_props::backend::Backend;
/// let b = IreeBackend::new();
/// assert_eq!(b.name(), "iree-cpu");
/// if let Err(why) = b.availability() {
///     assert!(why.contains("fetch-iree.sh") || why.contains("IREE_TOOLS_DIR"), "{why}");
/// }
/// ```
pub struct IreeBackend {
    tools: Result<IreeTools, String>,
    timeout: Duration,
    workers: usize,
    stats: Arc<Stats>,
    /// The in-process compiler's workers; `None`: one `iree-compile`
    /// process per compile ([`compiler_choice`]).
    library: Option<Arc<CompilePool>>,
    /// Compile results kept by StableHLO text (`kept`).
    kept: Kept<IreeExecutable>,
}

/// How modules are compiled: `XLA_PROPS_IREE_COMPILER=process` runs one
/// `iree-compile` per compile; otherwise (`library`, the default) the
/// tools' `libIREECompiler.so` compiles in a worker process that keeps one
/// session (`compile_worker`), when the library and a binary serving the
/// worker are found (else the process path, with the reason in `version`).
fn compiler_choice(tools: &Result<IreeTools, String>) -> Result<Arc<CompilePool>, String> {
    let wanted = std::env::var("XLA_PROPS_IREE_COMPILER").unwrap_or_default();
    match wanted.trim() {
        "" | "library" => {}
        "process" => return Err("XLA_PROPS_IREE_COMPILER=process".into()),
        other => {
            return Err(format!(
                "XLA_PROPS_IREE_COMPILER={other} is neither `library` nor `process`"
            ))
        }
    }
    let tools = tools.as_ref().map_err(String::clone)?;
    let lib = tools.dir.join("libIREECompiler.so");
    if !lib.is_file() {
        return Err(format!("{} is missing", lib.display()));
    }
    let program = crate::backend::xla::find_worker_program()?;
    Ok(Arc::new(CompilePool::new(
        program,
        lib,
        tools.dir.join("iree-lld"),
    )))
}

impl Default for IreeBackend {
    fn default() -> IreeBackend {
        IreeBackend::new()
    }
}

fn env_number(var: &str) -> Option<f64> {
    std::env::var(var)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|n| *n > 0.0)
}

impl IreeBackend {
    /// The backend with the tools [`IreeTools::locate`] finds;
    /// `XLA_PROPS_IREE_TIMEOUT_SECS` (default 120) bounds each call and
    /// `XLA_PROPS_IREE_WORKERS` (default one per core, at most 4) the batches
    /// run at once.
    pub fn new() -> IreeBackend {
        IreeBackend::with_tools(IreeTools::locate())
    }

    /// The backend with these tools (or the reason there are none).
    pub fn with_tools(tools: Result<IreeTools, String>) -> IreeBackend {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let library = compiler_choice(&tools).ok();
        IreeBackend {
            library,
            tools,
            timeout: env_number("XLA_PROPS_IREE_TIMEOUT_SECS")
                .map(Duration::from_secs_f64)
                .unwrap_or(DEFAULT_TIMEOUT),
            workers: env_number("XLA_PROPS_IREE_WORKERS").map_or(cores.min(4), |n| n as usize),
            stats: Arc::default(),
            kept: Kept::default(),
        }
    }

    /// The same backend with another per-call timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> IreeBackend {
        self.timeout = timeout;
        self
    }

    /// The same backend compiling with one `iree-compile` process per
    /// compile (`false`) or in a compile worker (`true`, when found).
    pub fn with_library(mut self, library: bool) -> IreeBackend {
        self.library = if library {
            compiler_choice(&self.tools).ok()
        } else {
            None
        };
        self
    }

    /// True when compiles go through the in-process compiler's workers.
    pub fn compiles_in_process(&self) -> bool {
        self.library.is_some()
    }

    /// Compile workers started so far (0 on the process path).
    pub fn compile_workers_started(&self) -> u64 {
        self.library.as_ref().map_or(0, |p| p.started())
    }

    /// Compiles so far, and how many of them failed.
    pub fn compile_counts(&self) -> (u64, u64) {
        (
            self.stats.compiles.load(Ordering::Relaxed),
            self.stats.failed_compiles.load(Ordering::Relaxed),
        )
    }

    /// `Err(reason)` when the tools are missing.
    pub fn availability(&self) -> Result<(), String> {
        self.tools.as_ref().map(|_| ()).map_err(String::clone)
    }

    fn tools(&self) -> Result<&IreeTools, IreeError> {
        self.tools
            .as_ref()
            .map_err(|why| IreeError::Unavailable(why.clone()))
    }

    /// Compiles answered from results kept earlier in the run (a module's
    /// compile error that a failed batch attributed to it, or a module
    /// compiled directly before), and how many compile errors are kept.
    pub fn kept_counts(&self) -> (u64, usize) {
        self.kept.counts()
    }

    /// Lowers, checks the declared unsupported features, and compiles.
    pub fn compile_module(&self, module: &Module) -> Result<IreeExecutable, IreeError> {
        let (module, lowered) = self.prepare(module)?;
        let mut exe = self.compile_lowered(lowered)?;
        exe.source = Some(module);
        Ok(exe)
    }

    /// [`IreeBackend::compile_module`], answered from the results kept for
    /// its StableHLO text when there are some, else compiled and kept.
    fn compile_kept(&self, module: &Module) -> Result<Arc<IreeExecutable>, IreeError> {
        let (module, lowered) = self.prepare(module)?;
        match self.kept.get(&lowered.mlir) {
            Some(Hit::Error(e)) => return Err(e),
            Some(Hit::Executable(exe)) => return Ok(exe),
            None => {}
        }
        let mlir = lowered.mlir.clone();
        match self.compile_lowered(lowered) {
            Ok(mut exe) => {
                exe.source = Some(module);
                let exe = Arc::new(exe);
                self.kept.keep_executable(&mlir, exe.clone());
                Ok(exe)
            }
            Err(e) => {
                self.kept.keep_error(&mlir, &e);
                Err(e)
            }
        }
    }

    /// The canonical form of `module` and its lowering; `Err` for what
    /// IREE is declared not to support or the lowering cannot express.
    fn prepare(&self, module: &Module) -> Result<(Module, Lowered), IreeError> {
        if let Some(why) = unsupported_in(module) {
            return Err(IreeError::Unsupported(why));
        }
        // one device (`Backend::devices`): no collectives, no device ids
        if !matches!(
            crate::reference::spmd::DeviceProgram::multi(module),
            Ok(None)
        ) {
            return Err(IreeError::Unsupported(
                "iree-cpu runs one-device programs: this module has collectives, device ids or \
                 a device count above 1"
                    .into(),
            ));
        }
        let module = canonicalize(module).map_err(IreeError::Unsupported)?;
        let lowered = lower_module(&module)?;
        Ok((module.into_owned(), lowered))
    }

    /// Compiles StableHLO text with `iree-compile`.
    pub fn compile_lowered(&self, lowered: Lowered) -> Result<IreeExecutable, IreeError> {
        let compiler = Compiler {
            tools: self.tools()?,
            library: self.library.as_ref(),
            timeout: self.timeout,
            stats: &self.stats,
        };
        compiler.compile(lowered)
    }
}

/// What a compile needs.
struct Compiler<'a> {
    tools: &'a IreeTools,
    library: Option<&'a Arc<CompilePool>>,
    timeout: Duration,
    stats: &'a Arc<Stats>,
}

impl Compiler<'_> {
    fn compile(&self, lowered: Lowered) -> Result<IreeExecutable, IreeError> {
        compile_with(self, lowered)
    }
}

/// One compile of `lowered`, counted in `stats`: in a compile worker, or
/// (no library, or its worker cannot start) one `iree-compile` process.
fn compile_with(c: &Compiler<'_>, lowered: Lowered) -> Result<IreeExecutable, IreeError> {
    let (tools, timeout, stats) = (c.tools.clone(), c.timeout, c.stats);
    let scratch = Scratch::new()?;
    let vmfb = scratch.dir.join("module.vmfb");
    let io = |e: std::io::Error| IreeError::Io(e.to_string());
    stats.compiles.fetch_add(1, Ordering::Relaxed);
    let in_process = match c.library {
        Some(pool) => match pool.compile(&lowered.mlir, timeout) {
            Err(IreeError::Unavailable(why)) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!("iree-cpu: compiling with iree-compile processes: {why}")
                });
                None
            }
            Ok(Ok(bytes)) => Some(std::fs::write(&vmfb, bytes).map_err(io)),
            Ok(Err(diagnostics)) => Some(Err(compile_failure(summarize(&diagnostics)))),
            Err(e) => Some(Err(e)),
        },
        None => None,
    };
    let compiled = match in_process {
        Some(r) => r,
        None => {
            let mlir = scratch.dir.join("module.mlir");
            std::fs::write(&mlir, &lowered.mlir).map_err(io)?;
            tools.compile(&mlir, &vmfb, timeout)
        }
    };
    if let Err(e) = compiled {
        stats.failed_compiles.fetch_add(1, Ordering::Relaxed);
        return Err(e);
    }
    Ok(IreeExecutable {
        tools,
        library: c.library.cloned(),
        timeout,
        scratch,
        vmfb,
        lowered,
        stats: stats.clone(),
        next_run: AtomicU64::new(0),
        source: None,
        packed: OnceLock::new(),
    })
}

/// Maps the typed IREE error onto the backend contract's error: missing
/// tools, what the lowering cannot express and what IREE is declared not to
/// support are skips (with the reason); everything else fails the case.
pub fn to_backend_error(backend: &str, e: IreeError) -> BackendError {
    match e {
        IreeError::Unavailable(reason) => BackendError::Unavailable {
            backend: backend.to_string(),
            reason,
        },
        IreeError::Lowering(LowerError::Unsupported(what))
        | IreeError::Unsupported(what)
        | IreeError::CannotLower { what, .. } => BackendError::Unsupported { what },
        IreeError::Lowering(e @ LowerError::Invalid(_)) => BackendError::Compile(e.to_string()),
        IreeError::Compile(m) => BackendError::Compile(format!("iree-compile: {m}")),
        // the compiler dying on a module is a failed compile, not a run
        e @ IreeError::Crashed {
            tool: "iree-compile",
            ..
        } => BackendError::Compile(e.to_string()),
        IreeError::Signature(m) => BackendError::BadArguments(m),
        other => BackendError::Execute(other.to_string()),
    }
}

impl Backend for IreeBackend {
    fn name(&self) -> &str {
        "iree-cpu"
    }

    /// What IREE's llvm-cpu target was measured to compute (docs/numerics.md).
    fn numerics(&self) -> Numerics {
        iree_cpu_numerics()
    }

    /// The IREE bugs of docs/findings.md that have an exact model.
    fn known_bugs(&self) -> &[KnownBug] {
        super::known_bugs::IREE_CPU_KNOWN_BUGS
    }

    fn version(&self) -> Option<String> {
        Some(match &self.tools {
            Err(why) => format!("unavailable: {why}"),
            Ok(t) => format!(
                "iree {IREE_VERSION} (iree-base-compiler, iree-base-runtime), llvm-cpu generic; {}; tools {}; {}",
                t.compiler_version().unwrap_or_else(|| "iree-compile --version failed".into()),
                t.dir.display(),
                match &self.library {
                    Some(_) => "compiled in process (libIREECompiler.so in a compile worker)".to_string(),
                    None => format!(
                        "compiled by iree-compile processes ({})",
                        compiler_choice(&self.tools).err().unwrap_or_default()
                    ),
                }
            ),
        })
    }

    /// Each distinct module compiles once in a run: its error or its
    /// executable is kept (`kept`).
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        match self.compile_kept(module) {
            Ok(exe) => Ok(Box::new(exe)),
            Err(e) => Err(to_backend_error(self.name(), e)),
        }
    }

    /// StableHLO leaves a reduction with a non-identity init value
    /// implementation-defined, and IREE splits reductions (the init value
    /// would be folded in more than once). Each compile is an `iree-compile`
    /// process (about 0.4 s of fixed cost): many modules share one, and its
    /// shards keep a module's cases together.
    fn traits(&self) -> BackendTraits {
        BackendTraits::BATCHING_COMPILER
    }

    fn execute_many(
        &self,
        requests: &[BatchRequest<'_>],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<Vec<Option<Vec<Literal>>>> {
        // what IREE is declared not to support, or cannot be given in a
        // form it compiles, is answered directly (a skip)
        let supported: Vec<usize> = (0..requests.len())
            .filter(|&i| unsupported_in(requests[i].module).is_none())
            .filter(|&i| canonicalize(requests[i].module).is_ok())
            .collect();
        // valid HLO that IREE rejects, rewritten into a form it compiles
        let canonical: Vec<Option<Module>> = supported
            .iter()
            .map(|&i| match canonicalize(requests[i].module) {
                Ok(std::borrow::Cow::Owned(m)) => Some(m),
                _ => None,
            })
            .collect();
        let subset: Vec<BatchRequest<'_>> = supported
            .iter()
            .zip(&canonical)
            .map(|(&i, c)| BatchRequest {
                module: c.as_ref().unwrap_or(requests[i].module),
                args: requests[i].args.clone(),
            })
            .collect();
        progress(
            requests.iter().map(|r| r.args.len()).sum::<usize>()
                - subset.iter().map(|r| r.args.len()).sum::<usize>(),
        );
        self.stats.batched.store(true, Ordering::Relaxed);
        let answered = many::execute_many(self, &subset, progress);
        let mut out: Vec<Vec<Option<Vec<Literal>>>> =
            requests.iter().map(|r| vec![None; r.args.len()]).collect();
        for (i, a) in supported.into_iter().zip(answered) {
            out[i] = a;
        }
        out
    }
}

/// The whole run's compiles, the batched ones and the direct ones together
/// (the batcher's line counts the batched phase only).
impl Drop for IreeBackend {
    fn drop(&mut self) {
        if !self.stats.batched.load(Ordering::Relaxed) {
            return;
        }
        let (hits, errors) = self.kept.counts();
        eprintln!(
            "{}: in the whole run {} compiles ({} failed), {} iree-run-module runs; {hits} \
             compiles answered from kept results ({errors} errors kept)",
            self.name(),
            self.stats.compiles.load(Ordering::Relaxed),
            self.stats.failed_compiles.load(Ordering::Relaxed),
            self.stats.runs.load(Ordering::Relaxed),
        );
    }
}

impl RowRunner for IreeBackend {
    type Error = IreeError;
    fn ready(&self) -> bool {
        self.tools.is_ok()
    }
    fn workers(&self) -> usize {
        self.workers.max(1)
    }
    fn batch_size(&self) -> usize {
        many::batch_size("XLA_PROPS_IREE_BATCH", DEFAULT_BATCH)
    }
    fn is_unavailable(e: &IreeError) -> bool {
        matches!(e, IreeError::Unavailable(_))
    }
    fn output_error(message: String) -> IreeError {
        IreeError::Output(message)
    }
    /// The line of the batch's `module.mlir` that `iree-compile`'s first
    /// error names: the batcher drops that module instead of halving.
    fn error_line(e: &IreeError) -> Option<usize> {
        e.mlir_line()
    }
    /// `tanh` of `iree-lld: error: undefined symbol: tanh`.
    fn link_symbol(e: &IreeError) -> Option<String> {
        e.link_symbol()
    }
    /// A compile error (never a run's) kept for the module's direct compile.
    fn keep_failure(&self, mlir: &str, e: &IreeError, lines: Option<(usize, usize)>) {
        let e = match lines {
            Some((line, own)) => relocated(e, line, own),
            None => e.clone(),
        };
        self.kept.keep_error(mlir, &e);
    }
    /// One `iree-compile`, then one `iree-run-module` per argument list.
    fn run_rows(
        &self,
        lowered: &Lowered,
        _modules: usize,
        rows: &[Vec<&Literal>],
    ) -> Result<Vec<Vec<Literal>>, IreeError> {
        let exe = self.compile_lowered(lowered.clone())?;
        rows.iter().map(|r| exe.run(r)).collect()
    }
    fn stats_line(&self) -> String {
        let how = match &self.library {
            Some(pool) => format!(
                "compiles in process ({} compile workers started)",
                pool.started()
            ),
            None => "iree-compile runs".into(),
        };
        format!(
            "{} {how} ({} failed), {} iree-run-module runs, {} compile errors kept for the \
             direct runs",
            self.stats.compiles.load(Ordering::Relaxed),
            self.stats.failed_compiles.load(Ordering::Relaxed),
            self.stats.runs.load(Ordering::Relaxed),
            self.kept.counts().1
        )
    }
}

/// A module compiled by IREE: its `.vmfb` in a scratch directory that
/// lives as long as it does.
pub struct IreeExecutable {
    tools: IreeTools,
    library: Option<Arc<CompilePool>>,
    timeout: Duration,
    scratch: Scratch,
    vmfb: PathBuf,
    lowered: Lowered,
    stats: Arc<Stats>,
    next_run: AtomicU64,
    /// The module it was compiled from (the canonical form), for a rerun
    /// with packed parameters; `None` for StableHLO compiled as given.
    source: Option<Module>,
    /// Its packed twin, compiled on the first run the runtime refuses for
    /// too many bindings (`packing`).
    packed: OnceLock<Result<(Box<IreeExecutable>, Packing), IreeError>>,
}

/// `2x3xf32` (or `f32` for a scalar): `iree-run-module`'s type of an input.
fn input_type(a: &ArrayShape) -> Result<String, IreeError> {
    let mut s: String = a.dims.iter().map(|d| format!("{d}x")).collect();
    s.push_str(mlir_element_type(a.dtype)?);
    Ok(s)
}

fn to_bytes(l: &Literal) -> Vec<u8> {
    let width = l.dtype().byte_size();
    let mut bytes = Vec::with_capacity(l.element_count() * width);
    for i in 0..l.element_count() {
        bytes.extend_from_slice(&l.get_bits(i).to_le_bytes()[..width]);
    }
    bytes
}

fn from_bytes(bytes: &[u8], expected: &ArrayShape, k: usize) -> Result<Literal, IreeError> {
    let width = expected.dtype.byte_size();
    let count: i64 = expected.dims.iter().product();
    if bytes.len() != count as usize * width {
        return Err(IreeError::Output(format!(
            "output {k} has {} bytes for {expected}",
            bytes.len()
        )));
    }
    let bits: Vec<u64> = bytes
        .chunks_exact(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    Literal::from_bits(expected, &bits).map_err(|e| IreeError::Output(e.to_string()))
}

impl IreeExecutable {
    /// The StableHLO text IREE compiled.
    pub fn mlir(&self) -> &str {
        &self.lowered.mlir
    }

    /// Runs with arguments given as the entry's parameter leaves, returning
    /// the root's leaves; dtypes and shapes are checked both ways. A run
    /// that `iree-run-module` refuses for a dispatch with too many bindings
    /// is rerun on the module with its parameters packed (`packing`: a
    /// declared IREE quirk, docs/findings.md).
    pub fn run(&self, args: &[&Literal]) -> Result<Vec<Literal>, IreeError> {
        match self.run_as_compiled(args) {
            Err(IreeError::Execute(m)) if is_binding_limit(&m) && self.source.is_some() => {
                let (exe, packing) = self
                    .packed
                    .get_or_init(|| self.compile_packed(IreeError::Execute(m)))
                    .as_ref()
                    .map_err(Clone::clone)?;
                let packed = packing.pack(args).map_err(IreeError::Signature)?;
                exe.run_as_compiled(&packed.iter().collect::<Vec<_>>())
            }
            other => other,
        }
    }

    /// The packed twin of this executable's module; `refused` when the
    /// module cannot be packed.
    fn compile_packed(
        &self,
        refused: IreeError,
    ) -> Result<(Box<IreeExecutable>, Packing), IreeError> {
        let Some(module) = &self.source else {
            return Err(refused);
        };
        let Some((packed, packing)) = pack_parameters(module) else {
            return Err(refused);
        };
        let compiler = Compiler {
            tools: &self.tools,
            library: self.library.as_ref(),
            timeout: self.timeout,
            stats: &self.stats,
        };
        let exe = compiler.compile(lower_module(&packed)?)?;
        Ok((Box::new(exe), packing))
    }

    fn run_as_compiled(&self, args: &[&Literal]) -> Result<Vec<Literal>, IreeError> {
        let params = &self.lowered.params;
        if args.len() != params.len() {
            return Err(IreeError::Signature(format!(
                "{} arguments given, the entry takes {}",
                args.len(),
                params.len()
            )));
        }
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        let dir = &self.scratch.dir;
        let io = |e: std::io::Error| IreeError::Io(e.to_string());
        let mut inputs = Vec::with_capacity(args.len());
        for (k, (arg, p)) in args.iter().zip(params).enumerate() {
            if !arg.shape().compatible(p) {
                return Err(IreeError::Signature(format!(
                    "argument {k} is {}, the entry expects {p}",
                    arg.shape()
                )));
            }
            let file = dir.join(format!("r{n}-in{k}.bin"));
            std::fs::write(&file, to_bytes(arg)).map_err(io)?;
            inputs.push((input_type(p)?, file));
        }
        let outputs: Vec<PathBuf> = (0..self.lowered.results.len())
            .map(|k| dir.join(format!("r{n}-out{k}.bin")))
            .collect();
        self.stats.runs.fetch_add(1, Ordering::Relaxed);
        let ran = self.tools.run(&self.vmfb, &inputs, &outputs, self.timeout);
        let result = ran.and_then(|()| {
            outputs
                .iter()
                .zip(&self.lowered.results)
                .enumerate()
                .map(|(k, (file, r))| from_bytes(&std::fs::read(file).map_err(io)?, r, k))
                .collect()
        });
        for f in inputs.iter().map(|(_, f)| f).chain(&outputs) {
            let _ = std::fs::remove_file(f);
        }
        result
    }
}

impl Executable for Arc<IreeExecutable> {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        self.as_ref().execute(args)
    }
}

impl Executable for IreeExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let args: Vec<&Literal> = args.iter().collect();
        self.run(&args).map_err(|e| to_backend_error("iree-cpu", e))
    }
}
