//! `Harness`: collects properties, expands them into named cases per backend,
//! and runs them through libtest-mimic.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use libtest_mimic::Arguments;

use super::events::{Reporter, Reporters, RunEvent};
use super::signature;
use super::terminal::TerminalReporter;

use super::ahead;
use super::args::RunnerArgs;
use super::batch;
use super::case::{self, run_case, RunState};
use super::identity;
use super::junit;
use super::metadata::{backend_versions, rerun_prefix, RunStart};
use super::persist;
use super::summary;
use crate::backend::{available_backends, Backend, ReferenceBackend, Unavailable};
use crate::property::{registry, BackendId, CaseId, CaseSpace, ReferenceCache, SpaceFilter};
use crate::report::Counts;

/// The harness: a builder over backends, then `run`.
///
/// It runs the properties declared with `#[xla_property]` in the crates
/// linked into the test target, except xla-props' own built-in ones, which
/// join on request ([`Harness::with_builtins`]: the conformance suite).
///
/// ```no_run
/// // tests/my_props.rs, with `harness = false` in Cargo.toml
/// use xla_props::backend::Unavailable;
/// fn main() -> std::process::ExitCode {
///     xla_props::Harness::from_args()
///         .backend(Unavailable::new("my-compiler", "not installed here"))
///         .run()
/// }
/// ```
pub struct Harness {
    args: Vec<String>,
    env: Box<EnvLookup>,
    backends: Vec<Arc<dyn Backend>>,
    reference: Option<Arc<dyn Backend>>,
    builtins: bool,
    failures_dir: Option<PathBuf>,
}

/// The result of a harness run, for callers that want more than an exit code.
#[derive(Debug)]
pub struct RunReport {
    /// libtest-mimic's conclusion.
    pub conclusion: libtest_mimic::Conclusion,
    /// Counts from the runner's own records (match the conclusion's counts).
    pub totals: Counts,
    /// Reference results computed (each shared by every backend of the case).
    pub reference_runs: u64,
}

impl RunReport {
    /// The report of a run that ran no case (a listing, a composition).
    fn nothing_run() -> RunReport {
        RunReport {
            conclusion: libtest_mimic::Conclusion {
                num_filtered_out: 0,
                num_passed: 0,
                num_failed: 0,
                num_ignored: 0,
                num_measured: 0,
            },
            totals: Counts::default(),
            reference_runs: 0,
        }
    }
}

/// Why the harness could not start.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct HarnessError(pub String);

/// Looks up an environment variable.
type EnvLookup = dyn Fn(&str) -> Option<String>;

impl Harness {
    /// A harness reading the process's command line and environment.
    ///
    /// A harness binary also serves the XLA backend's crash-isolated worker
    /// processes (and iree-cpu's compile workers): started as `BINARY
    /// __xla-worker ...` (`__iree-compile-worker ...`) it runs the worker loop
    /// and exits, so no separately built `xla-props` binary is needed.
    pub fn from_args() -> Harness {
        let rest: Vec<String> = std::env::args().skip(1).collect();
        if let Some(code) = crate::backend::xla::worker::main_if_worker(&rest) {
            std::process::exit(code);
        }
        if let Some(code) = crate::backend::iree::compile_worker::main_if_compile_worker(&rest) {
            std::process::exit(code);
        }
        crate::backend::xla::current_exe_serves_worker();
        Harness::from_iter(std::env::args(), |k| std::env::var(k).ok())
    }

    /// A harness over explicit arguments (the first is the program name) and environment.
    pub fn from_iter(
        args: impl IntoIterator<Item = String>,
        env: impl Fn(&str) -> Option<String> + 'static,
    ) -> Harness {
        Harness {
            args: args.into_iter().collect(),
            env: Box::new(env),
            backends: Vec::new(),
            reference: None,
            builtins: false,
            failures_dir: None,
        }
    }

    /// Adds a backend under test.
    pub fn backend(mut self, backend: impl Backend + 'static) -> Harness {
        self.backends.push(Arc::new(backend));
        self
    }

    /// Adds a shared backend under test.
    pub fn backend_arc(mut self, backend: Arc<dyn Backend>) -> Harness {
        self.backends.push(backend);
        self
    }

    /// Adds every backend of the built-in registry that is available here and
    /// not added yet (by name).
    ///
    /// XLA and IREE backends (`xla-*`, `iree-*`) compile every case (about
    /// 0.1 s each), so the whole default suite on them takes hours: they are added only when
    /// `--backend` or `XLA_PROPS_BACKENDS` names them.
    /// A backend that is named but unavailable here (no plugin) joins as
    /// [`Unavailable`]: its cases are skipped with the reason.
    pub fn available_backends(mut self) -> Harness {
        for info in crate::backend::known_backends() {
            if let crate::backend::Availability::Unavailable(why) = info.availability {
                if self.names_backend(info.name)
                    && !self.backends.iter().any(|x| x.name() == info.name)
                {
                    eprintln!("note: backend {} is unavailable: {why}", info.name);
                    let b = Unavailable::new(info.name, why).with_traits(info.traits);
                    self.backends.push(Arc::new(b));
                }
            }
        }
        // real compilers (built in or declared in a file) join only when named
        for b in available_backends() {
            if b.traits().only_when_named && !self.names_backend(b.name()) {
                continue;
            }
            if !self.backends.iter().any(|x| x.name() == b.name()) {
                self.backends.push(Arc::from(b));
            }
        }
        self
    }

    /// True when `--backend` or `XLA_PROPS_BACKENDS` names `backend`.
    fn names_backend(&self, backend: &str) -> bool {
        let mut lists: Vec<String> = (self.env)("XLA_PROPS_BACKENDS").into_iter().collect();
        let mut args = self.args.iter();
        while let Some(a) = args.next() {
            if a == "--backend" {
                lists.extend(args.next().cloned());
            } else if let Some(v) = a.strip_prefix("--backend=") {
                lists.push(v.to_string());
            }
        }
        lists
            .iter()
            .flat_map(|l| l.split(','))
            .any(|n| n.trim() == backend)
    }

    /// Sets the reference (the oracle); the default is [`ReferenceBackend`], the exact evaluator.
    pub fn reference(mut self, reference: impl Backend + 'static) -> Harness {
        self.reference = Some(Arc::new(reference));
        self
    }

    /// Also runs xla-props' built-in properties (`vs_reference`,
    /// `layout_invariance`, ...: about 248,000 cases per backend), as the
    /// conformance suite does.
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     xla_props::Harness::from_args()
    ///         .with_builtins()
    ///         .backend(xla_props::backend::Interpreter::default())
    ///         .run()
    /// }
    /// ```
    pub fn with_builtins(mut self) -> Harness {
        self.builtins = true;
        self
    }

    /// Runs only properties declared outside the xla-props library (the default).
    pub fn without_builtins(mut self) -> Harness {
        self.builtins = false;
        self
    }

    /// Writes reproducers and the failing list under `dir` instead of `target/xla-props/failures`.
    pub fn failures_dir(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.failures_dir = Some(dir.into());
        self
    }

    /// Runs and returns the process exit code (0 all passed, 101 failures, 2 bad arguments).
    pub fn run(self) -> ExitCode {
        match self.run_to_report() {
            Ok(r) => r.conclusion.exit_code(),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        }
    }

    /// Runs and returns the report.
    pub fn run_to_report(self) -> Result<RunReport, HarnessError> {
        if let Some(e) = crate::backend::config_error() {
            return Err(HarnessError(e.to_string()));
        }
        let command_args = self.args.get(1..).unwrap_or_default().to_vec();
        let (ours, rest) =
            RunnerArgs::split(self.args, &self.env).map_err(|e| HarnessError(e.0))?;
        let mut start = (ours.json.is_some() || ours.junit.is_some())
            .then(|| RunStart::now(&rerun_prefix(), &command_args, &*self.env));
        let mut libtest = Arguments::from_iter(rest);
        if libtest.filter.is_none() {
            libtest.filter = ours.test_only.clone();
        }
        let self_reference_is_default = self.reference.is_none();
        let reference: Arc<dyn Backend> = self
            .reference
            .unwrap_or_else(|| Arc::new(ReferenceBackend::default()));
        let mut all_backends = self.backends;
        if all_backends.is_empty() {
            all_backends.push(reference.clone());
        }
        let mut ours = ours;
        let backends = select_backends(all_backends, &mut ours.backends)?;
        let filter = SpaceFilter {
            ops: ours.ops.clone(),
            dtypes: ours.dtypes.clone(),
        };
        let spaces = case_spaces(self.builtins, &filter)?;
        if ours.summary {
            let ids: Vec<BackendId> = backends.iter().map(|b| b.0).collect();
            return Ok(print_summary(&spaces, &ids));
        }
        if ours.shard.is_some() {
            if let Some(f) = &ours.shard_status_file {
                let _ = std::fs::write(f, b"");
            }
        }
        let xla_shard =
            batch::xla_shard((self.env)("XLA_PROPS_XLA_SHARD")).map_err(|e| HarnessError(e.0))?;
        // (listing records nothing: no case space to hash)
        if let Some(s) = start.as_mut().filter(|_| !libtest.list) {
            let named: Vec<(&str, bool)> = (backends.iter())
                .map(|b| (b.1.name(), b.1.traits().module_aligned_shards))
                .collect();
            let selection = identity::selection_of(&spaces, &named, &ours, &libtest, xla_shard);
            let ids: Vec<BackendId> = backends.iter().map(|b| b.0).collect();
            s.identify(selection, &spaces, &ids, ours.shard)
                .map_err(HarnessError)?;
            s.histograms = ours.json.is_some();
        }
        let failures_dir = self.failures_dir.unwrap_or_else(persist::failures_dir);
        let previous = if libtest.list {
            BTreeSet::new()
        } else {
            persist::load_failed(&failures_dir)
        };
        let reporters = reporters(&libtest, &ours, &failures_dir, &previous);
        let state = Arc::new(RunState {
            direct_reference: self_reference_is_default,
            numerics: backends.iter().map(|b| Arc::new(b.1.numerics())).collect(),
            backends: backends.clone(),
            reference,
            cache: ReferenceCache::new(),
            reporters: Mutex::new(reporters),
            seed: ours.seed,
            failures_dir,
            rerun_prefix: rerun_prefix(),
            start,
            batched: std::sync::OnceLock::new(),
            to_batch: std::sync::OnceLock::new(),
        });
        // backends whose cases follow XLA_PROPS_XLA_SHARD (their traits)
        let module_aligned: HashSet<BackendId> = backends
            .iter()
            .filter(|b| b.1.traits().module_aligned_shards)
            .map(|b| b.0)
            .collect();
        let keep = |id: &CaseId, name: &str| {
            (filter.ops.is_empty() || filter.ops.contains(&id.key.op))
                && (filter.dtypes.is_empty() || filter.dtypes.contains(&id.key.dtype))
                && ours.shard.is_none_or(|s| s.contains(name))
                && batch::in_xla_shard(xla_shard, module_aligned.contains(&id.backend), name)
        };
        if libtest.list && libtest.logfile.is_none() {
            // listing 460k names through a line-buffered stdout costs a syscall a line;
            // print the same `NAME: test` lines libtest does, buffered, building no trial
            return list_cases(&spaces, &backends, &libtest, ours.shard);
        }
        let batch_on = batch::enabled((self.env)("XLA_PROPS_BATCH"));
        // the selected cases of backends that prefer batching, for `batch::prepass`
        let batching: Vec<BackendId> = backends
            .iter()
            .filter(|b| batch_on && b.1.traits().prefers_batching && !libtest.ignored)
            .map(|b| b.0)
            .collect();
        let in_shard = |id: &CaseId, name: &str| {
            ours.shard.is_none_or(|s| s.contains(name))
                && batch::in_xla_shard(xla_shard, module_aligned.contains(&id.backend), name)
        };
        let selection = Selection {
            spaces: &spaces,
            backends: &backends,
            libtest: &libtest,
            batching: &batching,
            previous: &previous,
        };
        let (trials, to_batch) = selection.trials(&keep, &in_shard);
        if !to_batch.is_empty() {
            let backends = to_batch.iter().map(|i| i.backend).collect();
            let _ = state.to_batch.set((to_batch, backends));
        }
        finish(trials, &libtest, &state)
    }
}

/// The case spaces of the registered properties under `filter` (xla-props'
/// own built-ins only when `builtins`).
fn case_spaces(builtins: bool, filter: &SpaceFilter) -> Result<Vec<CaseSpace>, HarnessError> {
    if !builtins && registry().iter().all(|s| s.is_builtin()) {
        return Err(HarnessError(NO_PROPERTIES.to_string()));
    }
    let mut spaces = Vec::new();
    for (i, spec) in registry().iter().enumerate() {
        if !builtins && spec.is_builtin() {
            continue;
        }
        spaces
            .push(CaseSpace::new(i as u16, spec, filter).map_err(|e| HarnessError(e.to_string()))?);
    }
    Ok(spaces)
}

/// `--summary`: the case space's composition and class coverage, printed;
/// nothing runs.
fn print_summary(spaces: &[CaseSpace], ids: &[BackendId]) -> RunReport {
    print!("{}", summary::composition(spaces, ids));
    print!(
        "{}",
        crate::property::coverage_text(&crate::property::class_coverage(spaces))
    );
    RunReport::nothing_run()
}

/// Why a harness without built-ins has nothing to run.
const NO_PROPERTIES: &str = "no properties to run: this test target links no \
     #[xla_property] of its own (declare one in it, or add xla-props' built-in \
     properties with Harness::with_builtins())";

/// A backend selected for the run, with its interned id.
type Registered = (BackendId, Arc<dyn Backend>);

/// Registers the mutants asked for by name (`mutant:NAME@interpreter` is the
/// same backend as `mutant:NAME`), checks every name in `--backend`, and
/// keeps the backends it names (all of them when it names none).
fn select_backends(
    mut all: Vec<Arc<dyn Backend>>,
    names: &mut [String],
) -> Result<Vec<Registered>, HarnessError> {
    for b in names.iter_mut() {
        if b.starts_with("mutant:") {
            let m = crate::backend::create(b).map_err(|e| HarnessError(e.to_string()))?;
            *b = m.name().to_string();
            if !all.iter().any(|x| x.name() == b) {
                all.push(Arc::from(m));
            }
        }
    }
    for b in names.iter() {
        if !all.iter().any(|x| x.name() == b) {
            let known: Vec<&str> = all.iter().map(|x| x.name()).collect();
            return Err(HarnessError(format!(
                "unknown backend `{b}` in --backend (known: {})",
                known.join(", ")
            )));
        }
    }
    Ok(all
        .into_iter()
        .filter(|b| names.is_empty() || names.iter().any(|n| n == b.name()))
        .map(|b| (BackendId::intern(b.name()), b))
        .collect())
}

/// What decides which cases become trials.
struct Selection<'a> {
    spaces: &'a [CaseSpace],
    backends: &'a [Registered],
    libtest: &'a Arguments,
    /// Backends whose selected cases go to the batching pre-pass.
    batching: &'a [BackendId],
    /// Cases that failed last time (they run first).
    previous: &'a BTreeSet<String>,
}

impl Selection<'_> {
    /// The trials, and the cases to batch. `keep` is the whole selection
    /// (ops, dtypes, shards) of a case named on its own; `in_shard` the
    /// shards only (the spaces already hold only the selected ops and dtypes).
    fn trials(
        &self,
        keep: &dyn Fn(&CaseId, &str) -> bool,
        in_shard: &dyn Fn(&CaseId, &str) -> bool,
    ) -> (Vec<Pending>, Vec<CaseId>) {
        let (spaces, backends, libtest) = (self.spaces, self.backends, self.libtest);
        let (batching, previous) = (self.batching, self.previous);
        let mut trials = Vec::new();
        let mut to_batch = Vec::new();
        // `--exact NAME` (what nextest runs): build only that case.
        let exact = libtest
            .filter
            .as_deref()
            .filter(|_| libtest.exact)
            .and_then(|f| f.parse::<CaseId>().ok());
        if let Some(id) = exact {
            let known = backends.iter().any(|b| b.0 == id.backend)
                && spaces.iter().any(|s| s.property_index() == id.key.property);
            let name = id.to_string();
            if known && keep(&id, &name) {
                if batching.contains(&id.backend) {
                    to_batch.push(id);
                }
                trials.push(Pending { id, name, users: 1 });
            }
        } else {
            // reference results are shared by the backends of one case: the
            // backends of a key are adjacent, and the cache knows how many use it
            let mut first = Vec::new();
            let mut group: Vec<(CaseId, String)> = Vec::with_capacity(backends.len());
            for space in spaces {
                for key in space.iter() {
                    group.clear();
                    for &(b, _) in backends {
                        let id = key.on(b);
                        let name = id.to_string();
                        if in_shard(&id, &name) {
                            group.push((id, name));
                        }
                    }
                    let users = group.len();
                    for (id, name) in group.drain(..) {
                        if batching.contains(&id.backend) && selected_by_libtest(libtest, &name) {
                            to_batch.push(id);
                        }
                        let failed_before = !previous.is_empty() && previous.contains(&name);
                        let t = Pending { id, name, users };
                        if failed_before {
                            first.push(t);
                        } else {
                            trials.push(t);
                        }
                    }
                }
            }
            first.append(&mut trials);
            trials = first;
        }
        (trials, to_batch)
    }
}

/// libtest's name filter: FILTER (substring, or whole name with `--exact`) and `--skip`.
fn selected_by_libtest(args: &Arguments, name: &str) -> bool {
    super::identity::libtest_keeps(args.filter.as_deref(), &args.skip, args.exact, name)
}

fn list_cases(
    spaces: &[CaseSpace],
    backends: &[(BackendId, Arc<dyn Backend>)],
    args: &Arguments,
    shard: Option<super::args::Shard>,
) -> Result<RunReport, HarnessError> {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut name = String::new();
    let mut listed = 0u64;
    // no case carries libtest's static ignored flag, so `--ignored` lists nothing
    if !args.ignored {
        for space in spaces {
            for key in space.iter() {
                for &(b, _) in backends {
                    name.clear();
                    let _ = write!(name, "{}", key.on(b));
                    if shard.is_none_or(|s| s.contains(&name)) && selected_by_libtest(args, &name) {
                        listed += 1;
                        writeln!(out, "{name}: test")
                            .map_err(|e| HarnessError(format!("failed to write the list: {e}")))?;
                    }
                }
            }
        }
    }
    out.flush()
        .map_err(|e| HarnessError(format!("failed to write the list: {e}")))?;
    let _ = listed;
    Ok(RunReport::nothing_run())
}

/// The run's reporters, in the order they hear each event: the terminal's
/// progress (terminal mode), the summary table, the failure groups, JUnit
/// and JSON (when asked for), and persistence (reproducers, the failing list).
fn reporters(
    libtest: &Arguments,
    ours: &RunnerArgs,
    failures_dir: &std::path::Path,
    previous: &BTreeSet<String>,
) -> Reporters {
    let mut list: Vec<Box<dyn Reporter>> = Vec::new();
    if terminal_mode(libtest) {
        list.push(Box::new(TerminalReporter::new()));
    }
    list.push(Box::new(summary::SummaryReporter::default()));
    list.push(Box::new(signature::FailureGroups::default()));
    if let Some(p) = &ours.junit {
        list.push(Box::new(junit::JunitReporter::new(p.clone())));
    }
    if let Some(p) = &ours.json {
        list.push(Box::new(summary::JsonReporter::new(p.clone())));
    }
    list.push(Box::new(persist::Persistence::new(
        failures_dir.to_path_buf(),
        previous.clone(),
    )));
    Reporters::new(list)
}

/// Runs the trials (through libtest, or on the terminal), then tells every
/// reporter that the run ended.
fn finish(
    cases: Vec<Pending>,
    libtest: &Arguments,
    state: &Arc<RunState>,
) -> Result<RunReport, HarnessError> {
    let began = std::time::Instant::now();
    let (conclusion, closing) = if terminal_mode(libtest) {
        let (conclusion, line) = run_on_terminal(cases, libtest, state);
        (conclusion, Some(line))
    } else {
        let on_case = state.clone();
        let run = move |&(id, users): &(CaseId, usize)| run_case(&on_case, id, users);
        let cases = cases.into_iter().map(|c| (c.name, (c.id, c.users)));
        let selected = |name: &str| selected_by_libtest(libtest, name);
        (
            ahead::run_trials(cases.collect(), libtest, selected, run),
            None,
        )
    };
    if libtest.list {
        return Ok(RunReport {
            conclusion,
            totals: Counts::default(),
            reference_runs: 0,
        });
    }
    let metadata = state.start.as_ref().map(|start| {
        let under_test = state.backends.iter().map(|(_, b)| b.as_ref());
        let backends = backend_versions(under_test, state.reference.as_ref());
        start.finish(state.seed, backends)
    });
    let mut reporters = state.reporters.lock().unwrap_or_else(|e| e.into_inner());
    let counts = reporters.counts();
    reporters.event(&RunEvent::Finished {
        counts,
        elapsed: began.elapsed(),
        metadata: metadata.as_ref(),
    });
    if let Some(line) = closing {
        println!("\n{line}");
    }
    Ok(RunReport {
        conclusion,
        totals: counts,
        reference_runs: state.cache.computed(),
    })
}

/// A selected case, before it becomes a libtest trial or runs on the terminal.
struct Pending {
    id: CaseId,
    name: String,
    users: usize,
}

/// On a terminal, unless a format is asked for (`--format pretty` restores
/// libtest's lines, `-q`/`--format terse` its dots): a progress bar, the
/// failures as they happen and the summary. `XLA_PROPS_PROGRESS=1` forces
/// it, `=0` turns it off; output that is not a terminal stays libtest's.
fn terminal_mode(args: &Arguments) -> bool {
    use std::io::IsTerminal;
    if args.list || args.bench || args.format.is_some() || args.quiet || args.logfile.is_some() {
        return false;
    }
    match std::env::var("XLA_PROPS_PROGRESS").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => std::io::stdout().is_terminal(),
    }
}

/// Runs the cases libtest's filters select, reporting to the terminal;
/// returns libtest's conclusion and its closing line.
fn run_on_terminal(
    cases: Vec<Pending>,
    args: &Arguments,
    state: &Arc<RunState>,
) -> (libtest_mimic::Conclusion, String) {
    let total = cases.len();
    // no case carries libtest's static ignored flag, so `--ignored` runs none
    let selected: Vec<Pending> = cases
        .into_iter()
        .filter(|c| !args.ignored && selected_by_libtest(args, &c.name))
        .collect();
    let threads = args
        .test_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let filtered_out = total - selected.len();
    let started = RunEvent::Started {
        total: selected.len(),
        filtered_out,
    };
    state
        .reporters
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .event(&started);
    let began = std::time::Instant::now();
    super::execute::execute(
        &selected,
        |c| {
            // the reporters heard how it ended
            let _ = run_case(state, c.id, c.users);
        },
        |c, panic| state.report(&case::panicked(c.id, &panic)),
        threads,
    );
    let elapsed = began.elapsed();
    let counts = state
        .reporters
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .counts();
    let conclusion = libtest_mimic::Conclusion {
        num_filtered_out: counts.filtered_out,
        num_passed: counts.passed,
        num_failed: counts.failed,
        num_ignored: counts.skipped,
        num_measured: 0,
    };
    (conclusion, super::terminal::result_line(&counts, elapsed))
}
