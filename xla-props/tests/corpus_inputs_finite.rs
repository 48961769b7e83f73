//! The default inputs are ones a model can run on: on every module of the
//! real-model corpus (`tests/data/models/`: flax, equinox and haiku forward
//! passes and optax train steps) and of the JAX corpus (`tests/data/jax/`),
//! the inputs `xla-props compare` draws by default (uniform, seed 0) give
//! the exact reference finite outputs, every element of every output.
//!
//! The models directory is skipped with a message where it is absent; with
//! `CI` set, a models directory that holds no module fails the test.

use std::path::{Path, PathBuf};

use xla_props::hlo::load_module_file;
use xla_props::inputs::{generate_inputs, Distribution};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// The `.hlo` files of `dir`, sorted; None when it does not exist.
fn modules(dir: &Path) -> Option<Vec<PathBuf>> {
    xla_props::skip::files_in(dir, "hlo").ok()
}

/// Why the reference's outputs on the default inputs are not all finite
/// (None: they are).
fn check(path: &Path) -> Option<String> {
    let module = match load_module_file(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("does not load: {e}")),
    };
    let inputs = match generate_inputs(&module, Distribution::Uniform, 0) {
        Ok(i) => i,
        Err(e) => return Some(format!("no inputs: {e}")),
    };
    let outputs = match xla_props::reference::evaluate(&module, &inputs.args) {
        Ok(o) => o,
        Err(e) => return Some(format!("the reference fails: {e}")),
    };
    let mut bad = 0usize;
    let mut total = 0usize;
    for o in &outputs {
        total += o.element_count();
        bad += (0..o.element_count())
            .filter(|&i| !o.get_f64(i).is_finite())
            .count();
    }
    (bad > 0).then(|| {
        format!(
            "{bad} of {total} output elements are not finite; notes: {:?}",
            inputs.notes
        )
    })
}

/// Checks every module, on as many threads as the machine has; returns
/// (modules checked, failures).
fn check_all(files: &[PathBuf]) -> (usize, Vec<String>) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(f) = files.get(k) else { break };
                if let Some(why) = check(f) {
                    let name = f.file_name().unwrap_or_default().to_string_lossy();
                    failures.lock().unwrap().push(format!("{name}: {why}"));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    (files.len(), failures)
}

#[test]
fn reference_outputs_are_finite_on_every_model_with_the_default_inputs() {
    let dir = Path::new(ROOT).join("models");
    let Some(files) = modules(&dir) else {
        eprintln!(
            "skipping: {} does not exist (the real-model corpus is not in this checkout)",
            dir.display()
        );
        return;
    };
    if files.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} holds no .hlo module",
            dir.display()
        );
        eprintln!("skipping: {} holds no .hlo module", dir.display());
        return;
    }
    let (n, failures) = check_all(&files);
    eprintln!(
        "models: {n} modules, {} with non-finite outputs",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn reference_outputs_are_finite_on_every_jax_program_with_the_default_inputs() {
    let dir = Path::new(ROOT).join("jax");
    let files = modules(&dir).unwrap_or_default();
    assert!(
        files.len() >= 80,
        "{}: {} modules",
        dir.display(),
        files.len()
    );
    let (n, failures) = check_all(&files);
    eprintln!(
        "jax: {n} modules, {} with non-finite outputs",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
