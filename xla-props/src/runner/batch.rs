//! Batching for backends that run many small modules faster together (XLA:
//! one compile of a merged module instead of one per case).
//!
//! Once per run, when the first case of such a backend runs (inside libtest's
//! run, so its timing counts it), [`prepass`] runs every selected case body of such
//! a backend against a [`Recorder`], a stand-in that captures each (module,
//! arguments) request and answers zeros of the module's result shapes (so a
//! body that runs several modules goes on). The requests, deduplicated, go to
//! [`Backend::execute_many`] in one call; its answers are kept in a [`Store`]
//! keyed by (module fingerprint, arguments fingerprint). The libtest pass then
//! runs the case through [`Stored`], which answers from the store and falls
//! back to the backend itself on a miss.
//!
//! A stored result is a fast path, not the verdict: a case that fails while
//! it used stored results runs again directly (see [`confirm_note`]).
//!
//! `XLA_PROPS_BATCH=0` turns batching off.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::args::{ArgError, Shard};
use crate::backend::{Backend, BackendError, BackendTraits, BatchRequest, Executable};
use crate::check::Numerics;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::property::{BackendId, CaseContext, CaseId, LimitationKind, ReferenceCache};

/// A 128-bit fingerprint (two independent 64-bit hashes).
type Fp = u128;

/// Hashes text written through `fmt::Write` into two hashers, without
/// building the string.
struct TwoHashers(DefaultHasher, DefaultHasher);

impl TwoHashers {
    fn new() -> TwoHashers {
        let (mut a, mut b) = (DefaultHasher::new(), DefaultHasher::new());
        0xa5u8.hash(&mut a);
        0x5au8.hash(&mut b);
        TwoHashers(a, b)
    }
    fn finish(&self) -> Fp {
        ((self.0.finish() as u128) << 64) | self.1.finish() as u128
    }
}

impl std::fmt::Write for TwoHashers {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        self.1.write(s.as_bytes());
        Ok(())
    }
}

impl Hasher for TwoHashers {
    fn finish(&self) -> u64 {
        self.0.finish()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }
}

/// The fingerprint of a module: of its canonical HLO text.
pub(crate) fn module_fingerprint(module: &Module) -> Fp {
    let mut h = TwoHashers::new();
    let _ = write!(h, "{module}");
    h.finish()
}

/// The fingerprint of an argument list: dtypes, dimensions, layouts, bits.
pub(crate) fn args_fingerprint(args: &[Literal]) -> Fp {
    let mut h = TwoHashers::new();
    args.len().hash(&mut h);
    for a in args {
        a.dtype().hash(&mut h);
        a.dims().hash(&mut h);
        a.layout().hash(&mut h);
        for i in 0..a.element_count() {
            a.get_bits(i).hash(&mut h);
        }
    }
    h.finish()
}

/// One recorded module and its distinct argument lists.
struct Recorded {
    module: Module,
    args: Vec<(Fp, Vec<Literal>)>,
    seen: HashSet<Fp>,
}

/// What the recorder has captured.
#[derive(Default)]
struct Recording {
    modules: Mutex<HashMap<Fp, Recorded>>,
}

/// The stand-in backend of the pre-pass: records requests, answers zeros.
struct Recorder {
    name: String,
    numerics: Numerics,
    identity_init: bool,
    recording: Arc<Recording>,
}

struct RecordingExe {
    fp: Fp,
    zeros: Vec<Literal>,
    recording: Arc<Recording>,
}

impl Backend for Recorder {
    fn name(&self) -> &str {
        &self.name
    }
    fn numerics(&self) -> Numerics {
        self.numerics.clone()
    }
    fn traits(&self) -> BackendTraits {
        BackendTraits {
            requires_identity_reduce_init: self.identity_init,
            ..BackendTraits::default()
        }
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let zeros = module
            .result_shape()
            .leaves()
            .into_iter()
            .map(Literal::zeros)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BackendError::Compile(e.to_string()))?;
        let fp = module_fingerprint(module);
        self.recording
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(fp)
            .or_insert_with(|| Recorded {
                module: module.clone(),
                args: Vec::new(),
                seen: HashSet::new(),
            });
        Ok(Box::new(RecordingExe {
            fp,
            zeros,
            recording: self.recording.clone(),
        }))
    }
}

impl Executable for RecordingExe {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let afp = args_fingerprint(args);
        let mut modules = self
            .recording
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(r) = modules.get_mut(&self.fp) {
            if r.seen.insert(afp) {
                r.args.push((afp, args.to_vec()));
            }
        }
        Ok(self.zeros.clone())
    }
}

/// Results computed in bulk, by (module, arguments) fingerprint.
#[derive(Default)]
pub(super) struct Store {
    modules: HashSet<Fp>,
    results: HashMap<(Fp, Fp), Vec<Literal>>,
}

/// A backend answering from a [`Store`], and directly on a miss. One per case,
/// so that it can say whether the case used stored results.
pub(super) struct Stored {
    inner: Arc<dyn Backend>,
    store: Arc<Store>,
    hits: Arc<AtomicU64>,
}

impl Stored {
    /// How many executions were answered from the store.
    pub(super) fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}

struct StoredExe {
    fp: Fp,
    module: Module,
    inner: Arc<dyn Backend>,
    direct: OnceLock<Result<Box<dyn Executable>, BackendError>>,
    store: Arc<Store>,
    hits: Arc<AtomicU64>,
}

impl Backend for Stored {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn numerics(&self) -> Numerics {
        self.inner.numerics()
    }
    fn known_bugs(&self) -> &[crate::check::KnownBug] {
        self.inner.known_bugs()
    }
    fn traits(&self) -> BackendTraits {
        self.inner.traits()
    }
    fn devices(&self) -> usize {
        self.inner.devices()
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let fp = module_fingerprint(module);
        if !self.store.modules.contains(&fp) {
            return self.inner.compile(module);
        }
        Ok(Box::new(StoredExe {
            fp,
            module: module.clone(),
            inner: self.inner.clone(),
            direct: OnceLock::new(),
            store: self.store.clone(),
            hits: self.hits.clone(),
        }))
    }
}

impl Executable for StoredExe {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        if let Some(out) = self.store.results.get(&(self.fp, args_fingerprint(args))) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(out.clone());
        }
        match self.direct.get_or_init(|| self.inner.compile(&self.module)) {
            Ok(exe) => exe.execute(args),
            Err(e) => Err(e.clone()),
        }
    }
}

/// What the pre-pass computed, per backend slot of the run.
#[derive(Default)]
pub(super) struct Prepared {
    stores: HashMap<usize, Arc<Store>>,
}

impl Prepared {
    /// The backend a case of `slot` runs on: answering from the store when
    /// the pre-pass made one for it.
    pub(super) fn backend(&self, slot: usize, inner: &Arc<dyn Backend>) -> Option<Stored> {
        self.stores.get(&slot).map(|store| Stored {
            inner: inner.clone(),
            store: store.clone(),
            hits: Arc::new(AtomicU64::new(0)),
        })
    }
}

/// True unless `XLA_PROPS_BATCH` is `0` (its value is given).
pub(super) fn enabled(setting: Option<String>) -> bool {
    setting.is_none_or(|v| v.trim() != "0")
}

/// `XLA_PROPS_XLA_SHARD=K/N`: only a shard of the cases of the compiling
/// backends (`xla-*`, `iree-*`) runs, the other backends run everything. Cases are sharded by
/// `property::op::dtype::shape`, so the cases that share a module (they
/// differ in their inputs) stay together and a shard costs about 1/N of the
/// compiles. CI uses it to keep XLA inside its time.
pub(super) fn xla_shard(setting: Option<String>) -> Result<Option<Shard>, ArgError> {
    match setting.filter(|s| !s.trim().is_empty()) {
        None => Ok(None),
        Some(s) => Shard::parse(&s)
            .map(Some)
            .map_err(|e| ArgError(format!("XLA_PROPS_XLA_SHARD: {}", e.0))),
    }
}

/// True when the case belongs to the module-aligned shard (always, for a
/// backend without `module_aligned_shards`).
pub(super) fn in_xla_shard(shard: Option<Shard>, module_aligned: bool, name: &str) -> bool {
    let Some(shard) = shard else {
        return true;
    };
    if !module_aligned {
        return true;
    }
    // the name without its variant and backend
    let module_part = name.rsplitn(3, "::").last().unwrap_or(name);
    shard.contains(module_part)
}

/// What the pre-pass needs of the run.
pub(super) struct PrepassInput<'a> {
    /// The run's backends, by slot.
    pub backends: &'a [(BackendId, Arc<dyn Backend>)],
    /// Each slot's numerics.
    pub numerics: &'a [Arc<Numerics>],
    /// The reference backend.
    pub reference: &'a Arc<dyn Backend>,
    /// True when the reference is the built-in evaluator.
    pub direct_reference: bool,
    /// The run's seed.
    pub seed: u64,
}

/// A progress bar on stderr, only when stderr is a terminal.
fn progress_bar(len: u64, what: String) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta})",
    ) {
        bar.set_style(style);
    }
    bar.set_message(what);
    Some(bar)
}

/// Records the bodies of `ids` (cases of backends that prefer batching),
/// runs the requests in bulk and returns the stores. Prints one line per
/// backend to stderr: cases, requests, distinct modules, time.
pub(super) fn prepass(input: &PrepassInput<'_>, ids: &[CaseId]) -> Prepared {
    let mut prepared = Prepared::default();
    for (slot, (bid, backend)) in input.backends.iter().enumerate() {
        let mine: Vec<CaseId> = ids.iter().copied().filter(|i| i.backend == *bid).collect();
        if mine.is_empty() || !backend.traits().prefers_batching {
            continue;
        }
        let start = Instant::now();
        let recording = Arc::new(Recording::default());
        let recorder = Recorder {
            name: backend.name().to_string(),
            numerics: (*input.numerics[slot]).clone(),
            identity_init: backend.traits().requires_identity_reduce_init,
            recording: recording.clone(),
        };
        record(input, slot, &recorder, &mine);
        let recorded =
            std::mem::take(&mut *recording.modules.lock().unwrap_or_else(|p| p.into_inner()));
        let recorded: Vec<(Fp, Recorded)> = recorded.into_iter().collect();
        let requests: Vec<BatchRequest<'_>> = recorded
            .iter()
            .map(|(_, r)| BatchRequest {
                module: &r.module,
                args: r.args.iter().map(|(_, a)| a.as_slice()).collect(),
            })
            .collect();
        let total: usize = requests.iter().map(|r| r.args.len()).sum();
        let recorded_in = start.elapsed();
        let bar = progress_bar(total as u64, format!("{}: batched", backend.name()));
        let answers = backend.execute_many(&requests, &|n| {
            if let Some(b) = &bar {
                b.inc(n as u64);
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let mut store = Store::default();
        let mut answered = 0usize;
        for ((fp, r), outs) in recorded.iter().zip(answers) {
            store.modules.insert(*fp);
            for ((afp, _), out) in r.args.iter().zip(outs) {
                if let Some(out) = out {
                    answered += 1;
                    store.results.insert((*fp, *afp), out);
                }
            }
        }
        eprintln!(
            "{}: batched {} cases: {} requests over {} distinct modules, {} answered in bulk \
             (recorded in {:.1} s, total {:.1} s)",
            backend.name(),
            mine.len(),
            total,
            recorded.len(),
            answered,
            recorded_in.as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
        prepared.stores.insert(slot, Arc::new(store));
    }
    prepared
}

/// Runs the case bodies against the recorder, on every core.
fn record(input: &PrepassInput<'_>, slot: usize, recorder: &Recorder, ids: &[CaseId]) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(ids.len().max(1));
    let next = AtomicUsize::new(0);
    let bar = progress_bar(ids.len() as u64, format!("{}: recording", recorder.name));
    const CHUNK: usize = 256;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let from = next.fetch_add(CHUNK, Ordering::Relaxed);
                if from >= ids.len() {
                    break;
                }
                let chunk = &ids[from..(from + CHUNK).min(ids.len())];
                let cache = ReferenceCache::new();
                for &id in chunk {
                    let spec = id.key.spec();
                    let skipped = spec
                        .limitation(id.key.op, id.key.dtype, id.backend.name())
                        .is_some_and(|l| l.kind == LimitationKind::Skip);
                    if skipped {
                        continue;
                    }
                    let mut ctx = CaseContext::new(
                        id,
                        recorder,
                        input.reference.as_ref(),
                        &cache,
                        1,
                        input.seed,
                    )
                    .with_numerics(input.numerics[slot].clone())
                    .with_direct_reference(input.direct_reference);
                    let _ = catch_unwind(AssertUnwindSafe(|| (spec.body)(&mut ctx)));
                }
                if let Some(b) = &bar {
                    b.inc(chunk.len() as u64);
                }
            });
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
}

/// The note a case gets when it failed on stored (batched) results and
/// passed (or was skipped) when run again directly.
pub(super) fn confirm_note(batched: &str) -> String {
    let first = batched.lines().next().unwrap_or("");
    format!(
        "failed on batched results ({first}) but passed unbatched: reported as the unbatched run"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Interpreter;
    use crate::runner::Harness;
    use std::sync::atomic::AtomicBool;

    /// The interpreter, preferring batching; `execute_many` may lie.
    #[derive(Default)]
    struct Batching {
        interp: Interpreter,
        /// Answers in bulk wrongly (every output negated).
        wrong: bool,
        /// Answers nothing in bulk.
        refuse: bool,
        /// Takes this long to answer in bulk.
        delay: std::time::Duration,
        many_calls: AtomicU64,
        direct_compiles: AtomicU64,
        in_bulk: AtomicBool,
    }

    impl Backend for Batching {
        fn name(&self) -> &str {
            "batching"
        }
        fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
            if !self.in_bulk.load(Ordering::Relaxed) {
                self.direct_compiles.fetch_add(1, Ordering::Relaxed);
            }
            self.interp.compile(module)
        }
        fn traits(&self) -> BackendTraits {
            BackendTraits {
                prefers_batching: true,
                ..BackendTraits::default()
            }
        }
        fn execute_many(
            &self,
            requests: &[BatchRequest<'_>],
            progress: &(dyn Fn(usize) + Sync),
        ) -> Vec<Vec<Option<Vec<Literal>>>> {
            self.many_calls.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(self.delay);
            if self.refuse {
                return requests.iter().map(|r| vec![None; r.args.len()]).collect();
            }
            self.in_bulk.store(true, Ordering::Relaxed);
            let mut out = self.interp.execute_many(requests, progress);
            self.in_bulk.store(false, Ordering::Relaxed);
            if self.wrong {
                for o in out.iter_mut().flatten().flatten().flatten() {
                    let shape = o.shape();
                    let v: Vec<f64> = o.to_f64_vec().iter().map(|x| -x - 1.0).collect();
                    *o = Literal::from_f64s(&shape, &v).unwrap_or_else(|_| o.clone());
                }
            }
            out
        }
    }

    /// Runs the harness on `backend`: its report, its `--json` results and
    /// libtest's lines (written to a log, not among this test's output).
    fn run(
        backend: Arc<Batching>,
        env: &[(&str, &str)],
    ) -> (crate::runner::RunReport, serde_json::Value, String) {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let log = dir.path().join("libtest.log");
        let args = vec![
            "prog",
            "--op",
            "negate,add",
            "--dtype",
            "f32",
            "--backend",
            "batching",
            "-q",
            "--test-threads",
            "2",
            "--logfile",
        ]
        .into_iter()
        .map(|s| s.to_string())
        .chain([log.display().to_string(), "--json".into()])
        .chain([json.display().to_string()])
        .collect::<Vec<_>>();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let report = Harness::from_iter(args, move |k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
        .with_builtins()
        .backend_arc(backend)
        .failures_dir(dir.path().join("failures"))
        .run_to_report()
        .unwrap();
        let text = std::fs::read_to_string(&json).unwrap();
        let log = std::fs::read_to_string(&log).unwrap();
        (report, serde_json::from_str(&text).unwrap(), log)
    }

    /// A batching backend, `set` on the default one.
    fn batching(set: impl FnOnce(&mut Batching)) -> Arc<Batching> {
        let mut b = Batching::default();
        set(&mut b);
        Arc::new(b)
    }

    fn messages(json: &serde_json::Value) -> Vec<String> {
        let cases = json
            .as_array()
            .cloned()
            .or_else(|| json["cases"].as_array().cloned())
            .unwrap_or_default();
        cases
            .iter()
            .filter_map(|c| c["message"].as_str().map(str::to_string))
            .collect()
    }

    #[test]
    fn a_batching_backend_answers_from_the_store_without_direct_compiles() {
        let b = Arc::new(Batching::default());
        let (report, _, _) = run(b.clone(), &[]);
        assert!(report.totals.passed > 50, "{:?}", report.totals);
        assert_eq!(report.totals.failed, 0);
        assert_eq!(b.many_calls.load(Ordering::Relaxed), 1);
        assert_eq!(
            b.direct_compiles.load(Ordering::Relaxed),
            0,
            "every request was answered in bulk"
        );
    }

    #[test]
    fn a_failure_on_batched_results_is_rerun_unbatched_before_it_is_reported() {
        let b = batching(|b| b.wrong = true);
        let (report, json, _) = run(b.clone(), &[]);
        assert_eq!(
            report.totals.failed, 0,
            "the direct runs pass: {:?}",
            report.totals
        );
        assert!(b.direct_compiles.load(Ordering::Relaxed) > 0);
        let notes = messages(&json);
        assert!(
            notes
                .iter()
                .any(|m| m.contains("failed on batched results") && m.contains("passed unbatched")),
            "{notes:?}"
        );
    }

    #[test]
    fn libtests_time_includes_the_batched_pre_pass() {
        let b = batching(|b| b.delay = std::time::Duration::from_millis(1500));
        let (report, _, log) = run(b.clone(), &[]);
        assert_eq!(report.totals.failed, 0);
        assert_eq!(b.many_calls.load(Ordering::Relaxed), 1);
        let line = log
            .lines()
            .find(|l| l.starts_with("test result:"))
            .unwrap_or_else(|| panic!("no result line in {log}"));
        let secs: f64 = line
            .rsplit_once("finished in ")
            .and_then(|(_, t)| t.trim().strip_suffix('s'))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no time in {line}"));
        assert!(secs >= 1.5, "the 1.5 s pre-pass is not counted: {line}");
    }

    #[test]
    fn unanswered_requests_run_directly_and_batching_can_be_turned_off() {
        let refused = batching(|b| b.refuse = true);
        let (report, _, _) = run(refused.clone(), &[]);
        assert_eq!(report.totals.failed, 0);
        assert!(report.totals.passed > 50);
        assert!(refused.direct_compiles.load(Ordering::Relaxed) > 0);
        let off = Arc::new(Batching::default());
        let (report, _, _) = run(off.clone(), &[("XLA_PROPS_BATCH", "0")]);
        assert_eq!(report.totals.failed, 0);
        assert_eq!(off.many_calls.load(Ordering::Relaxed), 0, "no pre-pass");
    }

    #[test]
    fn the_xla_shard_keeps_a_modules_cases_together_and_leaves_other_backends_alone() {
        assert_eq!(xla_shard(None).unwrap(), None);
        assert!(xla_shard(Some("0/3".into())).is_err());
        let shard = xla_shard(Some("2/7".into())).unwrap();
        let name =
            |dist: &str, b: &str| format!("vs_reference::add::f32::f32[7]{{0}}::{dist}::{b}");
        let kept: Vec<bool> = ["uniform", "special", "mixed"]
            .iter()
            .map(|d| in_xla_shard(shard, true, &name(d, "xla-cpu")))
            .collect();
        assert!(kept.iter().all(|&k| k == kept[0]), "{kept:?}");
        // a backend without module-aligned shards keeps every case
        assert!((1..=50).all(|n| {
            let nm = format!("vs_reference::add::f32::f32[{n}]{{0}}::uniform::interpreter");
            in_xla_shard(shard, false, &nm)
        }));
        // over many shapes, about 1/7 of the xla cases are kept
        let kept = (1..=700)
            .filter(|n| {
                let nm = format!("vs_reference::add::f32::f32[{n}]{{0}}::uniform::xla-cpu");
                in_xla_shard(shard, true, &nm)
            })
            .count();
        assert!((50..150).contains(&kept), "{kept}");
    }

    #[test]
    fn fingerprints_tell_layouts_and_bits_apart() {
        let s = crate::hlo::ArrayShape::new(crate::hlo::ElementType::F32, vec![2, 2]);
        let a = Literal::from_f64s(&s, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let b = Literal::from_f64s(&s, &[1.0, 2.0, 3.0, -4.0]).unwrap();
        let c = a.clone().with_layout(Some(crate::hlo::Layout {
            minor_to_major: vec![0, 1],
            extra: None,
        }));
        let fa = args_fingerprint(std::slice::from_ref(&a));
        assert_eq!(fa, args_fingerprint(std::slice::from_ref(&a.clone())));
        assert_ne!(fa, args_fingerprint(&[b]));
        assert_ne!(fa, args_fingerprint(&[c]));
        assert_ne!(fa, args_fingerprint(&[a.clone(), a]));
    }
}
