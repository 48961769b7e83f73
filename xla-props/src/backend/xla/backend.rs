//! `XlaBackend`: the `Backend` for XLA through a PJRT plugin in a worker process.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::config::DeclaredBackend;
use super::error::XlaError;
use super::host::{host_args, outputs_of};
use super::lower::{lower_module, LowerError, Lowered};
use super::pjrt::HostArray;
use super::plugin::{Profile, XlaPlugin};
use super::process::{find_worker_program, Worker};
use super::protocol::{Request, Response};
use crate::backend::{Backend, BackendError, BackendTraits, BatchRequest, Executable};
use crate::check::{KnownBug, Numerics};
use crate::hlo::collective::DeviceGrid;
use crate::hlo::Module;
use crate::literal::Literal;

/// Default per-call timeout (compile or execute).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Time allowed for the worker to start and load the plugin.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

fn timeout_from_env() -> Duration {
    std::env::var("XLA_PROPS_XLA_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// Compile-cache counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Compiles answered from the cache.
    pub hits: u64,
    /// Compiles that went to XLA.
    pub misses: u64,
    /// Worker restarts after a crash or timeout.
    pub restarts: u64,
    /// Batched modules compiled by `execute_many` (each counted in `misses` too).
    pub batches: u64,
    /// Distinct modules those batches held.
    pub batched_modules: u64,
}

impl CacheStats {
    /// hits / (hits + misses), or 0 when nothing was compiled.
    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// One worker process and what it has compiled.
pub(super) struct State {
    worker: Option<Worker>,
    /// Bumped whenever a worker dies; executables of older generations are gone.
    generation: u64,
    /// MLIR text -> (executable id, generation).
    cache: HashMap<String, (u64, u64)>,
}

pub(super) struct Shared {
    pub(super) name: String,
    profile: Profile,
    setup: Result<(PathBuf, PathBuf), String>,
    /// How many devices the workers' client has, once a worker was asked.
    pub(super) devices: OnceLock<usize>,
    /// A small pool of workers; a call takes any idle one.
    slots: Vec<Mutex<State>>,
    next_slot: AtomicUsize,
    /// Module texts compiled so far (for the hit rate; executables live per worker).
    pub(super) seen: Mutex<HashSet<String>>,
    pub(super) hits: AtomicU64,
    pub(super) misses: AtomicU64,
    restarts: AtomicU64,
    batches: AtomicU64,
    batched_modules: AtomicU64,
}

/// XLA through a PJRT C API plugin, crash-isolated in a worker process.
///
/// Without the plugin the backend still exists and says why it is unavailable:
///
/// ```
/// use xla_props::backend::xla::{XlaBackend, XlaPlugin};
/// let b = XlaBackend::with_plugin_path(XlaPlugin::Cpu, "/nonexistent/plugin.so".into());
/// assert!(b.availability().is_err());
/// ```
pub struct XlaBackend {
    pub(super) shared: Arc<Shared>,
    pub(super) timeout: Duration,
}

/// The process-wide worker pools of [`XlaBackend::new`], one per plugin.
static POOLS: OnceLock<Mutex<HashMap<&'static str, Arc<Shared>>>> = OnceLock::new();

impl XlaBackend {
    /// The backend's version text. Loads the plugin in a worker when none is
    /// running yet; a plugin that cannot be found or loaded is described as such.
    pub(crate) fn version_text(&self) -> String {
        let revision = self.revision_text();
        let Some(path) = self.plugin_path() else {
            return match self.availability() {
                Err(why) => format!("unavailable: {why}{revision}"),
                Ok(()) => format!("unavailable: no plugin{revision}"),
            };
        };
        let file = super::version::describe_file(path);
        match self.describe() {
            Ok(d) => format!("{d}{revision}; plugin {file}"),
            Err(e) => format!("plugin {file}{revision}; could not be loaded: {e}"),
        }
    }

    /// The XLA revision its plugin was built from, as recorded with the pin.
    pub fn revision(&self) -> Option<&'static str> {
        self.shared.profile.revision
    }

    /// `; xla revision R (recorded with the pin)`, or nothing.
    fn revision_text(&self) -> String {
        self.revision()
            .map(|r| format!("; xla revision {r} (recorded with the pin)"))
            .unwrap_or_default()
    }

    /// The backend for a pinned plugin, located through its env var or the
    /// cache. Every backend made this way for the same plugin shares one pool
    /// of worker processes and one compile cache in this process.
    pub fn new(plugin: XlaPlugin) -> XlaBackend {
        let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
        let mut pools = pools.lock().unwrap_or_else(|p| p.into_inner());
        let shared = pools
            .entry(plugin.backend_name())
            .or_insert_with(|| {
                Self::build(
                    plugin.backend_name(),
                    Profile::pinned(plugin),
                    plugin.locate(),
                )
                .shared
            })
            .clone();
        XlaBackend {
            shared,
            timeout: timeout_from_env(),
        }
    }

    /// Like [`XlaBackend::new`], but with its own worker pool and cache
    /// (counters and restarts are this backend's alone).
    pub fn isolated(plugin: XlaPlugin) -> XlaBackend {
        Self::build(
            plugin.backend_name(),
            Profile::pinned(plugin),
            plugin.locate(),
        )
    }

    /// A backend declared in a file (`xla-props.toml` or the built-in file),
    /// with the same worker pool, batching and metadata as `xla-cpu`. Every
    /// backend made this way for the same name shares one pool in this process.
    pub fn declared(d: &DeclaredBackend) -> XlaBackend {
        let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
        let mut pools = pools.lock().unwrap_or_else(|p| p.into_inner());
        let shared = pools
            .entry(d.name)
            .or_insert_with(|| Self::build(d.name, Profile::declared(d), d.plugin.locate()).shared)
            .clone();
        XlaBackend {
            shared,
            timeout: timeout_from_env(),
        }
    }

    /// `xla-cpu`.
    pub fn cpu() -> XlaBackend {
        Self::new(XlaPlugin::Cpu)
    }

    /// `xla-cpu-0.81`.
    pub fn cpu_0_81() -> XlaBackend {
        Self::new(XlaPlugin::Cpu081)
    }

    /// `xla-gpu` (unavailable without an NVIDIA GPU and jax's CUDA plugin).
    pub fn gpu() -> XlaBackend {
        Self::new(XlaPlugin::Gpu)
    }

    /// The backend for `plugin`'s name with an explicit plugin path.
    pub fn with_plugin_path(plugin: XlaPlugin, path: PathBuf) -> XlaBackend {
        let located = if path.is_file() {
            Ok(path)
        } else {
            Err(format!("pjrt plugin {} does not exist", path.display()))
        };
        Self::build(plugin.backend_name(), Profile::pinned(plugin), located)
    }

    fn build(name: &str, profile: Profile, plugin: Result<PathBuf, String>) -> XlaBackend {
        let setup = plugin.and_then(|p| find_worker_program().map(|w| (w, p)));
        // Worker processes: one per core up to 4, or XLA_PROPS_XLA_WORKERS.
        let workers = std::env::var("XLA_PROPS_XLA_WORKERS")
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
                    .min(4)
            })
            .max(1);
        XlaBackend {
            timeout: timeout_from_env(),
            shared: Arc::new(Shared {
                name: name.to_string(),
                profile,
                setup,
                devices: OnceLock::new(),
                slots: (0..workers)
                    .map(|_| {
                        Mutex::new(State {
                            worker: None,
                            generation: 0,
                            cache: HashMap::new(),
                        })
                    })
                    .collect(),
                next_slot: AtomicUsize::new(0),
                seen: Mutex::new(HashSet::new()),
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                restarts: AtomicU64::new(0),
                batches: AtomicU64::new(0),
                batched_modules: AtomicU64::new(0),
            }),
        }
    }

    /// A one-off copy of this backend (its own workers, no shared cache)
    /// whose workers run with `flags` after its own XLA flags (or the
    /// caller's `XLA_FLAGS` when it declares none): XLA reads its flags once
    /// per process, so a probe with other debug options needs its own worker.
    pub(crate) fn with_extra_xla_flags(&self, flags: &[String]) -> XlaBackend {
        let mut profile = self.shared.profile.clone();
        let own = profile
            .worker_env
            .iter()
            .position(|(k, _)| k == "XLA_FLAGS");
        let mut all: Vec<String> = match own {
            Some(i) => vec![profile.worker_env.remove(i).1],
            None => std::env::var("XLA_FLAGS").ok().into_iter().collect(),
        };
        all.extend(flags.iter().cloned());
        profile
            .worker_env
            .push(("XLA_FLAGS".to_string(), all.join(" ")));
        let setup = self.shared.setup.clone().map(|(_, p)| p);
        Self::build(&self.shared.name, profile, setup).with_timeout(self.timeout)
    }

    /// Sets the per-call timeout (compile or execute); a call past it kills the worker.
    /// It applies to this backend and its executables only.
    pub fn with_timeout(self, timeout: Duration) -> XlaBackend {
        XlaBackend { timeout, ..self }
    }

    /// `Ok` when the plugin and the worker binary were found (loading is
    /// checked when the worker starts), else the reason it is unavailable.
    pub fn availability(&self) -> Result<(), String> {
        self.shared.setup.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// The plugin file this backend loads, when it was found.
    pub fn plugin_path(&self) -> Option<&std::path::Path> {
        self.shared.setup.as_ref().ok().map(|(_, p)| p.as_path())
    }

    /// Starts the worker if needed and returns its description of the plugin
    /// (PJRT API version, XLA and StableHLO versions).
    pub fn describe(&self) -> Result<String, XlaError> {
        let mut state = self.shared.lock();
        self.shared.worker(&mut state)?;
        Ok(state
            .worker
            .as_ref()
            .map(|w| w.description.clone())
            .unwrap_or_default())
    }

    /// Compile-cache and restart counters.
    pub fn cache_stats(&self) -> CacheStats {
        CacheStats {
            hits: self.shared.hits.load(Ordering::Relaxed),
            misses: self.shared.misses.load(Ordering::Relaxed),
            restarts: self.shared.restarts.load(Ordering::Relaxed),
            batches: self.shared.batches.load(Ordering::Relaxed),
            batched_modules: self.shared.batched_modules.load(Ordering::Relaxed),
        }
    }

    /// Lowers and compiles a module, returning the typed error.
    pub fn compile_module(&self, module: &Module) -> Result<XlaExecutable, XlaError> {
        let lowered = lower_module(module)?;
        self.compile_lowered(lowered)
    }

    /// Compiles already-lowered StableHLO text.
    pub fn compile_lowered(&self, lowered: Lowered) -> Result<XlaExecutable, XlaError> {
        self.shared
            .compile_counted(&lowered.mlir, DeviceGrid::ONE, self.timeout)?;
        Ok(XlaExecutable {
            timeout: self.timeout,
            shared: Arc::clone(&self.shared),
            lowered: Arc::new(lowered),
        })
    }

    /// Runs many small independent cases as ONE module (one compile), each
    /// case a module and its arguments; returns each case's outputs. A failure
    /// fails the whole batch: rerun its cases one by one to find the culprit,
    /// and confirm any batched disagreement unbatched before reporting it.
    pub fn run_batch(
        &self,
        cases: &[(&Module, &[Literal])],
    ) -> Result<Vec<Vec<Literal>>, XlaError> {
        let modules: Vec<&Module> = cases.iter().map(|(m, _)| *m).collect();
        let batch = super::batch::batch_modules(&modules);
        let exe = self.compile_module(&batch.module)?;
        let args: Vec<Literal> = cases.iter().flat_map(|(_, a)| a.iter().cloned()).collect();
        let outputs = exe.run(&args)?;
        batch
            .split(&outputs)
            .ok_or_else(|| XlaError::Output("batched outputs do not split back into cases".into()))
    }

    /// How many worker processes this backend runs calls on at once.
    pub fn workers(&self) -> usize {
        self.shared.slots.len()
    }

    /// Compiles `lowered` (a batch of `modules` modules) once in ONE worker,
    /// runs it on every argument list there, and frees it: a batch is used
    /// once, so it does not stay in the worker's memory.
    pub(super) fn run_rows(
        &self,
        lowered: &Lowered,
        modules: usize,
        rows: &[Vec<&Literal>],
    ) -> Result<Vec<Vec<Literal>>, XlaError> {
        let host: Vec<Vec<HostArray>> = rows
            .iter()
            .map(|r| host_args(lowered, r))
            .collect::<Result<_, _>>()?;
        self.shared.misses.fetch_add(1, Ordering::Relaxed);
        self.shared.batches.fetch_add(1, Ordering::Relaxed);
        self.shared
            .batched_modules
            .fetch_add(modules as u64, Ordering::Relaxed);
        let mut state = self.shared.lock();
        let exe_id = self
            .shared
            .compiled(&mut state, &lowered.mlir, self.timeout)?;
        let mut out = Vec::with_capacity(host.len());
        for args in host {
            let outputs = self
                .shared
                .execute(&mut state, exe_id, args, self.timeout)?;
            out.push(outputs_of(lowered, outputs)?);
        }
        self.shared.release(&mut state, &lowered.mlir, self.timeout);
        Ok(out)
    }

    /// Debug hook: asks the worker to compile with EMPTY compile options, which
    /// makes XLA abort the worker process (`replica_count > 0`). Used to test
    /// crash isolation.
    #[doc(hidden)]
    pub fn debug_compile_without_options(&self, mlir: &str) -> Result<(), XlaError> {
        let mut state = self.shared.lock();
        let request = Request::DebugCompileWithoutOptions {
            mlir: mlir.to_string(),
        };
        match self
            .shared
            .call(&mut state, &request, "compiling", self.timeout)?
        {
            Response::Ok => Ok(()),
            Response::Error(e) => Err(XlaError::Compile(e)),
            other => Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
        }
    }

    /// Debug hook: makes the worker sleep, to test the per-call timeout.
    #[doc(hidden)]
    pub fn debug_sleep(&self, millis: u64) -> Result<(), XlaError> {
        let mut state = self.shared.lock();
        match self.shared.call(
            &mut state,
            &Request::DebugSleep { millis },
            "sleeping",
            self.timeout,
        )? {
            Response::Ok => Ok(()),
            other => Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
        }
    }
}

impl Shared {
    /// Takes an idle worker slot, or waits for one. A panic while a slot was
    /// held leaves it consistent enough: at worst a dead worker, which the
    /// next call replaces.
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        let n = self.slots.len();
        let start = self.next_slot.fetch_add(1, Ordering::Relaxed) % n;
        for k in 0..n {
            match self.slots[(start + k) % n].try_lock() {
                Ok(g) => return g,
                Err(std::sync::TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        self.slots[start].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn worker<'s>(&self, state: &'s mut State) -> Result<&'s mut Worker, XlaError> {
        if state.worker.is_none() {
            let (program, plugin) = self.setup.clone().map_err(XlaError::Unavailable)?;
            state.worker = Some(Worker::spawn(
                &program,
                &plugin,
                &self.profile.worker_env,
                STARTUP_TIMEOUT,
            )?);
        }
        state
            .worker
            .as_mut()
            .ok_or_else(|| XlaError::Protocol("worker missing".into()))
    }

    /// Sends a request; a crash or timeout retires the worker (next call restarts it).
    pub(super) fn call(
        &self,
        state: &mut State,
        request: &Request,
        during: &'static str,
        timeout: Duration,
    ) -> Result<Response, XlaError> {
        let result = self.worker(state)?.call(request, during, timeout);
        if matches!(
            result,
            Err(XlaError::Crashed { .. } | XlaError::Timeout { .. } | XlaError::Protocol(_))
        ) {
            state.worker = None;
            state.generation += 1;
            state.cache.clear();
            self.restarts.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// Executes a compiled program in this slot's worker.
    fn execute(
        &self,
        state: &mut State,
        exe_id: u64,
        args: Vec<HostArray>,
        timeout: Duration,
    ) -> Result<Vec<HostArray>, XlaError> {
        let request = Request::Execute { exe_id, args };
        match self.call(state, &request, "executing", timeout)? {
            Response::Outputs(o) => Ok(o),
            Response::Error(e) => Err(XlaError::Execute(e)),
            other => Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
        }
    }

    /// Frees a compiled program in this slot's worker (a batch used once).
    fn release(&self, state: &mut State, mlir: &str, timeout: Duration) {
        if let Some((id, generation)) = state.cache.remove(mlir) {
            if generation == state.generation && state.worker.is_some() {
                let _ = self.call(
                    state,
                    &Request::Release { exe_id: id },
                    "releasing",
                    timeout,
                );
            }
        }
    }

    /// The executable id for `mlir` in this slot's live worker, compiling it
    /// there on a miss (after a restart, or in a worker that has not seen it).
    /// Compiles `mlir` for `grid` in a worker slot, counted as a hit when
    /// the text was compiled before and as a miss else (the hit rate).
    pub(super) fn compile_counted(
        &self,
        mlir: &str,
        grid: DeviceGrid,
        timeout: Duration,
    ) -> Result<(), XlaError> {
        let seen_before = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.contains(mlir)
        };
        let counter = if seen_before {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.lock();
        self.compiled_for(&mut state, mlir, grid, timeout)?;
        drop(state);
        if !seen_before {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(mlir.to_string());
        }
        Ok(())
    }

    fn compiled(&self, state: &mut State, mlir: &str, timeout: Duration) -> Result<u64, XlaError> {
        self.compiled_for(state, mlir, DeviceGrid::ONE, timeout)
    }

    /// [`Shared::compiled`] for a program on `grid`: one device compiles as
    /// ever, more compile for that grid (`Request::CompileDevices`). A
    /// multi-device program's text names its grid (its module attributes),
    /// so the text stays the cache key.
    pub(super) fn compiled_for(
        &self,
        state: &mut State,
        mlir: &str,
        grid: DeviceGrid,
        timeout: Duration,
    ) -> Result<u64, XlaError> {
        if let Some(&(id, generation)) = state.cache.get(mlir) {
            if generation == state.generation && state.worker.is_some() {
                return Ok(id);
            }
        }
        let mlir = mlir.to_string();
        let request = if grid.devices() == 1 {
            Request::Compile { mlir }
        } else {
            Request::CompileDevices {
                mlir,
                replicas: grid.replicas as u64,
                partitions: grid.partitions as u64,
            }
        };
        match self.call(state, &request, "compiling", timeout)? {
            Response::Compiled { exe_id, .. } => {
                let generation = state.generation;
                let mlir = match request {
                    Request::Compile { mlir } | Request::CompileDevices { mlir, .. } => mlir,
                    _ => String::new(),
                };
                state.cache.insert(mlir, (exe_id, generation));
                Ok(exe_id)
            }
            Response::Error(e) => Err(XlaError::Compile(e)),
            other => Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
        }
    }
}

impl Backend for XlaBackend {
    fn name(&self) -> &str {
        &self.shared.name
    }

    /// The PJRT API, XLA and StableHLO versions the plugin reports, and the plugin file.
    fn version(&self) -> Option<String> {
        Some(self.version_text())
    }

    /// The bugs its declaration (or the built-in file) lists, each with its
    /// model: for xla-cpu, those of docs/findings.md.
    fn known_bugs(&self) -> &[KnownBug] {
        self.shared.profile.known_bugs
    }

    /// What its declaration promises: for xla-cpu, what XLA CPU was measured
    /// to do (docs/numerics.md).
    fn numerics(&self) -> Numerics {
        self.shared.profile.numerics.clone()
    }

    /// What its client offers: the plugin's devices (for the CPU plugins,
    /// the `cpu_device_count` create option: 8 unless declared otherwise or
    /// set by `XLA_PROPS_XLA_DEVICES`), asked of a worker once; 1 when no
    /// worker can be started (the backend is unavailable then).
    fn devices(&self) -> usize {
        self.device_count().unwrap_or(1)
    }

    /// A module on one device compiles as itself; a module on many (a
    /// partitioned one's `num_partitions`/`replica_count`, or an annotated
    /// one with manual regions) compiles for its devices and takes global
    /// arguments ([`super::multi`]).
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        if let Some(exe) = self.compile_multi(module)? {
            return Ok(exe);
        }
        match self.compile_module(module) {
            Ok(exe) => Ok(Box::new(exe)),
            Err(e) => Err(to_backend_error(&self.shared.name, e)),
        }
    }

    /// XLA's HLO passes, disabled by name and dumped (`super::passes`).
    fn pass_control(&self) -> Option<&dyn crate::backend::PassControl> {
        Some(self)
    }

    /// Groups the requests by their StableHLO text and runs them as merged
    /// modules (`super::many`), one compile per batch, on every worker.
    /// XLA requires a reduction's init value to be an identity of its
    /// computation ("if violated the result is undefined", jax.lax.reduce).
    /// Every distinct module is an XLA compile (about 0.1 s); hundreds of
    /// them compile in one module at a few ms each (docs/perf.md), so it
    /// batches, and its shards keep a module's cases together.
    fn traits(&self) -> BackendTraits {
        BackendTraits::BATCHING_COMPILER
    }

    fn execute_many(
        &self,
        requests: &[BatchRequest<'_>],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<Vec<Option<Vec<Literal>>>> {
        super::many::execute_many(self, requests, progress)
    }
}

/// Maps the typed XLA error onto the backend contract's error: an
/// unavailable plugin and an op the lowering cannot express are skips,
/// everything else fails the case.
pub fn to_backend_error(backend: &str, e: XlaError) -> BackendError {
    match e {
        XlaError::Unavailable(reason) => BackendError::Unavailable {
            backend: backend.to_string(),
            reason,
        },
        XlaError::Lowering(LowerError::Unsupported(what)) => BackendError::Unsupported { what },
        XlaError::Lowering(e @ LowerError::Invalid(_)) => BackendError::Compile(e.to_string()),
        XlaError::Compile(m) => BackendError::Compile(m),
        XlaError::Signature(m) => BackendError::BadArguments(m),
        other => BackendError::Execute(other.to_string()),
    }
}

/// A module compiled by XLA. Survives worker restarts (it recompiles from its text).
pub struct XlaExecutable {
    timeout: Duration,
    shared: Arc<Shared>,
    lowered: Arc<Lowered>,
}

impl XlaExecutable {
    /// The StableHLO text XLA compiled.
    pub fn mlir(&self) -> &str {
        &self.lowered.mlir
    }

    /// Runs with arguments given as the entry's parameter leaves, returning
    /// the root's leaves; dtypes and shapes are checked both ways.
    pub fn run(&self, args: &[Literal]) -> Result<Vec<Literal>, XlaError> {
        let args: Vec<&Literal> = args.iter().collect();
        let host = host_args(&self.lowered, &args)?;
        let mut state = self.shared.lock();
        let exe_id = self
            .shared
            .compiled(&mut state, &self.lowered.mlir, self.timeout)?;
        let outputs = self
            .shared
            .execute(&mut state, exe_id, host, self.timeout)?;
        drop(state);
        outputs_of(&self.lowered, outputs)
    }
}

impl Executable for XlaExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        self.run(args)
            .map_err(|e| to_backend_error(&self.shared.name, e))
    }
}
