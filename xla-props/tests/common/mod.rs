//! What several integration tests share (each uses part of it).
#![allow(dead_code)]

pub mod cli;

use std::path::{Path, PathBuf};

/// The 13 unary ops of the f16 oracle, `../shared/oracle/f16/<op>.bin`:
/// the correctly rounded result for each of the 65536 f16 bit patterns.
pub const F16_ORACLE_OPS: [&str; 13] = [
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "erf",
];

/// `../shared/oracle/f16` from the workspace root; None (the test skips,
/// or fails under CI) when it is missing.
pub fn f16_oracle_dir() -> Option<PathBuf> {
    xla_props::skip::needed_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/oracle/f16"
    ))
}

/// Whether f16 word `have` matches the oracle's `want` (a NaN by class).
pub fn f16_matches(want: u16, have: u16) -> bool {
    let is_nan = |w: u16| w & 0x7c00 == 0x7c00 && w & 0x3ff != 0;
    if is_nan(want) {
        is_nan(have)
    } else {
        want == have
    }
}

/// Little-endian u16 words.
pub fn f16_words(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Elements in all of a module's instructions (saturating).
pub fn total_elements(m: &xla_props::hlo::Module) -> u64 {
    m.computations
        .iter()
        .flat_map(|c| &c.instructions)
        .flat_map(|i| i.shape.leaves())
        .map(|a| a.element_count().unwrap_or(u64::MAX))
        .fold(0u64, u64::saturating_add)
}

/// Runs `check` on every item, two at a time; returns what it found wrong.
pub fn two_at_a_time<T: Sync>(
    items: &[T],
    check: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::Mutex::new(items.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(item) = next.lock().unwrap().next() else {
                    break;
                };
                if let Some(failure) = check(item) {
                    failures.lock().unwrap().push(failure);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// A harness command line for the built-in suite: `PROGRAM -q --logfile LOG
/// --op OPS --dtype DTYPES --backend BACKEND EXTRA... --json JSON`, libtest's
/// lines going to a log beside the JSON, not among the test's own.
pub fn suite_args(
    program: &str,
    ops: &str,
    dtypes: &str,
    backend: &str,
    extra: &[&str],
    json: &Path,
) -> Vec<String> {
    let log = json.with_extension("log");
    let mut args = vec![program, "-q", "--logfile", log.to_str().unwrap()];
    args.extend(["--op", ops, "--dtype", dtypes, "--backend", backend]);
    args.extend_from_slice(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    args.into_iter().map(String::from).collect()
}

/// Fails, listing them one a line, if there are any `problems`: "N WHAT:".
pub fn assert_none(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{} {what}:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// xla-cpu, or None (the test skips, or fails under CI) without its plugin.
pub fn xla_cpu() -> Option<xla_props::backend::xla::XlaBackend> {
    use xla_props::backend::xla::{XlaBackend, XlaPlugin};
    let backend = XlaBackend::new(XlaPlugin::Cpu);
    xla_props::skip::backend_available("xla-cpu", backend.availability()).then_some(backend)
}

/// Where running a module against the reference stopped.
pub enum Stopped {
    /// No legal inputs.
    Inputs(String),
    /// The reference failed.
    Reference(String),
    /// The backend failed to compile or run it.
    Backend(xla_props::backend::BackendError),
}

/// A module run on the reference and on a backend with the same inputs.
pub struct BothRuns {
    pub args: Vec<xla_props::literal::Literal>,
    pub expected: Vec<xla_props::literal::Literal>,
    pub actual: Vec<xla_props::literal::Literal>,
}

/// Runs `module` on the reference and on `backend`, with the generator's
/// legal uniform inputs of seed 0 (what `xla-props compare` does first).
pub fn against_reference(
    backend: &dyn xla_props::backend::Backend,
    module: &xla_props::hlo::Module,
) -> Result<BothRuns, Stopped> {
    use xla_props::inputs::{generate_inputs, Distribution};
    let args = generate_inputs(module, Distribution::Uniform, 0)
        .map_err(|e| Stopped::Inputs(e.to_string()))?
        .args;
    let expected = xla_props::reference::evaluate(module, &args)
        .map_err(|e| Stopped::Reference(e.to_string()))?;
    let actual = backend
        .compile(module)
        .and_then(|exe| exe.execute(&args))
        .map_err(Stopped::Backend)?;
    Ok(BothRuns {
        args,
        expected,
        actual,
    })
}

/// `f` of every item, on as many threads as the machine has cores (each
/// taking the next item in turn), in the items' order.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break done };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker thread panicked"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The random programs (10 instructions) of `seeds` that build and have
/// legal uniform inputs of their seed: (seed, program, arguments).
pub fn random_programs_with_inputs(
    seeds: std::ops::Range<u64>,
) -> impl Iterator<
    Item = (
        u64,
        xla_props::hlo::Module,
        Vec<xla_props::literal::Literal>,
    ),
> {
    use xla_props::inputs::{generate_inputs, Distribution};
    seeds.filter_map(|seed| {
        let m = xla_props::programs::random_program(seed, 10).ok()?;
        let inputs = generate_inputs(&m, Distribution::Uniform, seed).ok()?;
        Some((seed, m, inputs.args))
    })
}

/// Default HLO attributes changed by `f`.
pub fn with(f: impl FnOnce(&mut xla_props::hlo::Attrs)) -> xla_props::hlo::Attrs {
    let mut attrs = xla_props::hlo::Attrs::default();
    f(&mut attrs);
    attrs
}
