//! Runs every `.hlotest` file under `tests/hlo/` and `docs/repro/` (every
//! reproducer is a test) on each backend it names: one trial per file x
//! backend, named `DIR/FILE::BACKEND` (DIR relative to the workspace). Each
//! trial checks the file's expectation for that backend at its installed
//! version. A backend that is not available here (xla-cpu without its
//! plugin, iree-cpu without its tools: `scripts/fetch-*.sh`) is ignored with
//! the reason, unless `CI` is set: CI fetches them, so there a missing one
//! fails. `XLA_PROPS_BLESS=1` rewrites expectations that do not hold.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use xla_props::backend::Backend;
use xla_props::backend::BackendError;
use xla_props::filetest::{run_file_at, HloTest, TrialResult};

/// Where `.hlotest` files live, relative to the workspace.
const ROOTS: [&str; 2] = ["tests/hlo", "docs/repro"];

/// Backends CI installs (their absence there is a failure, not a skip).
const INSTALLED_IN_CI: [&str; 3] = ["xla-cpu", "xla-cpu-0.81", "iree-cpu"];

/// Each backend's version text, asked once per backend name (an XLA
/// backend's hashes its 200 MB plugin file).
static VERSIONS: Mutex<Vec<(String, Option<String>)>> = Mutex::new(Vec::new());

fn version_of(backend: &dyn Backend) -> Option<String> {
    let mut known = VERSIONS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, v)) = known.iter().find(|(n, _)| n == backend.name()) {
        return v.clone();
    }
    let v = backend.version();
    known.push((backend.name().to_string(), v.clone()));
    v
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else if p.extension().is_some_and(|x| x == "hlotest") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The trial of `test` on `backend`.
fn trial(name: String, test: HloTest, backend: String) -> Trial {
    Trial::ignorable_test(name, move || {
        // built-in backends, mutants and the buggy:BUG@COMPUTATION wrappers
        let b = match xla_props::backend::create(&backend) {
            Ok(b) => b,
            Err(BackendError::Unavailable { reason, .. })
                if std::env::var_os("CI").is_some() && INSTALLED_IN_CI.contains(&&*backend) =>
            {
                return Err(Failed::from(format!(
                    "{backend} must be available in CI: {reason}"
                )))
            }
            Err(e) => return Ok(Completion::ignored_with(e.to_string())),
        };
        match run_file_at(&test, b.as_ref(), version_of(b.as_ref())) {
            TrialResult::Pass | TrialResult::Blessed => Ok(Completion::Completed),
            TrialResult::Fail(m) => Err(Failed::from(m)),
        }
    })
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trials = Vec::new();
    for root in ROOTS {
        for path in files(&workspace.join(root)) {
            let name = path
                .strip_prefix(workspace)
                .unwrap_or(&path)
                .display()
                .to_string();
            let test = match HloTest::load(&path) {
                Ok(t) => t,
                Err(e) => {
                    // a malformed file is a failing trial, not a crash of the harness
                    let message = e.to_string();
                    trials.push(Trial::test(name, move || Err(Failed::from(message))));
                    continue;
                }
            };
            for backend in test.backends.clone() {
                trials.push(trial(format!("{name}::{backend}"), test.clone(), backend));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
