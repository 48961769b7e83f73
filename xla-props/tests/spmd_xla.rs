//! The multi-device corpus (`tests/data/spmd/`) on xla-cpu: every
//! partitioned module (XLA's dump after the SPMD partitioner) runs on the
//! plugin's host devices, and every annotated module (JAX's program before
//! it, with `sharding=` attributes) is partitioned by XLA itself; both take
//! the global arguments and give the global outputs, and must agree with
//! the reference's multi-device evaluation, judged as `xla-props compare
//! FILE --backend xla-cpu` judges (seed 0, uniform inputs, xla-cpu's
//! declared numerics and known bugs).
//!
//! Without the plugin the tests skip, unless `CI` is set. A module that
//! needs more devices than the backend has (`XLA_PROPS_XLA_DEVICES` below
//! 8) is skipped with that reason; any other skip, a failure or a
//! disagreement fails the test, with its details.

use std::path::{Path, PathBuf};

use xla_props::backend::xla::{XlaBackend, XlaPlugin};
use xla_props::backend::Backend;
use xla_props::check::Produced;
use xla_props::hlo::load_module_file;
use xla_props::inputs::{generate_inputs, Distribution};

const SPMD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/spmd");

/// One module's outcome.
enum Outcome {
    Agree,
    /// Not run (unsupported), with the reason.
    NotRun(String),
    Disagree(String),
}

/// What `xla-props compare FILE --backend xla-cpu` comes to on one module.
fn compare(backend: &dyn Backend, path: &Path) -> Outcome {
    let module = match load_module_file(path) {
        Ok(m) => m,
        Err(e) => return Outcome::Disagree(format!("does not load: {e}")),
    };
    let inputs = match generate_inputs(&module, Distribution::Uniform, 0) {
        Ok(i) => i,
        Err(e) => return Outcome::Disagree(format!("no legal inputs: {e}")),
    };
    let expected = match xla_props::reference::evaluate(&module, &inputs.args) {
        Ok(v) => v,
        Err(e) => return Outcome::Disagree(format!("the reference failed: {e}")),
    };
    let actual = match backend
        .compile(&module)
        .and_then(|exe| exe.execute(&inputs.args))
    {
        Ok(v) => v,
        Err(e) if e.is_unsupported() => return Outcome::NotRun(e.to_string()),
        Err(e) => return Outcome::Disagree(format!("{} failed: {e}", backend.name())),
    };
    let verdict = xla_props::cli::judge_compare(
        &module,
        &inputs.args,
        &Produced::Ok(expected.clone()),
        &Produced::Ok(actual.clone()),
        &backend.numerics(),
        backend.known_bugs(),
        true,
        false,
    );
    if verdict.is_agreement() {
        Outcome::Agree
    } else {
        Outcome::Disagree(verdict.to_string())
    }
}

/// The devices the manifest says `file` runs on.
fn manifest_devices(manifest: &str, file: &str) -> Option<usize> {
    manifest
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&file))
        .and_then(|f| f.get(1)?.parse().ok())
}

/// The backend, or `None` (the test skips) without the plugin outside CI.
fn xla_cpu() -> Option<XlaBackend> {
    let backend = XlaBackend::new(XlaPlugin::Cpu);
    xla_props::skip::backend_available("xla-cpu", backend.availability()).then_some(backend)
}

/// Judges the corpus files whose names contain `which`; fails on a
/// disagreement, a failure, or a skip other than too few devices (or a
/// partial-manual shard_map), with the details. Returns (agree, skipped, devices the backend has).
fn judge(backend: &XlaBackend, which: &str) -> (usize, usize, usize) {
    let manifest = std::fs::read_to_string(Path::new(SPMD).join("MANIFEST.tsv"))
        .expect("tests/data/spmd/MANIFEST.tsv");
    let mut files: Vec<PathBuf> = std::fs::read_dir(SPMD)
        .expect("tests/data/spmd")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(which) && n.ends_with(".hlo"))
        })
        .collect();
    files.sort();
    let have = backend.devices();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut outcomes: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(i) else { break done };
                        done.push((i, compare(backend, path)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("an spmd worker thread panicked"))
            .collect()
    });
    outcomes.sort_by_key(|(i, _)| *i);
    let (mut agree, mut skipped, mut bad) = (0, Vec::new(), Vec::new());
    for (i, outcome) in outcomes {
        let name = files[i].file_name().unwrap().to_string_lossy().to_string();
        let needs = manifest_devices(&manifest, &name)
            .unwrap_or_else(|| panic!("{name} is not in MANIFEST.tsv"));
        match outcome {
            Outcome::Agree => agree += 1,
            Outcome::NotRun(why) if needs > have && why.contains("devices") => {
                skipped.push(format!("{name}: {why}"))
            }
            // a partial-manual shard_map has no GSPMD form here
            Outcome::NotRun(why) if why.contains("partial-manual") => {
                skipped.push(format!("{name}: {why}"))
            }
            Outcome::NotRun(why) => bad.push(format!("{name}: not run: {why}")),
            Outcome::Disagree(what) => bad.push(format!("{name}: {what}")),
        }
    }
    eprintln!(
        "spmd corpus ({which}) on xla-cpu ({have} devices): {agree} agree, {} skipped (too few \
         devices or partial-manual), {} disagree or fail",
        skipped.len(),
        bad.len()
    );
    for s in &skipped {
        eprintln!("  skipped: {s}");
    }
    assert!(
        bad.is_empty(),
        "{} spmd modules ({which}) do not agree with the reference on xla-cpu:\n{}",
        bad.len(),
        bad.join("\n")
    );
    (agree, skipped.len(), have)
}

/// Every partitioned module (`*.partitioned*.hlo`: 63 files on 4 or 8
/// devices) runs on xla-cpu's host devices and agrees.
#[test]
fn partitioned_modules_agree_on_xla_cpu() {
    let Some(backend) = xla_cpu() else { return };
    let (agree, skipped, have) = judge(&backend, ".partitioned");
    assert!(agree + skipped >= 60, "only {} modules", agree + skipped);
    if have >= 8 {
        assert_eq!(skipped, 0);
    }
}

/// Every annotated module (`*.annotated.hlo`: 55 files) is partitioned by
/// XLA on the devices its shardings name and agrees: the shard_map ones
/// with their manual regions, the others (sharding annotations only)
/// against their one-device meaning on the reference.
#[test]
fn annotated_modules_agree_on_xla_cpu() {
    let Some(backend) = xla_cpu() else { return };
    let (agree, skipped, have) = judge(&backend, ".annotated");
    assert!(agree + skipped >= 55, "only {} modules", agree + skipped);
    if have >= 8 {
        assert_eq!(skipped, 0);
    }
}

/// Every Shardy-form module (`*.sdy.hlo`: 55 files, JAX's default form) is
/// rewritten into GSPMD's form (`hlo::sdy_gspmd`), partitioned by XLA and
/// agrees; a partial-manual shard_map (none in the corpus yet) would be the
/// only skip besides too few devices, and `judge` fails on any other.
#[test]
fn sdy_modules_agree_on_xla_cpu() {
    let Some(backend) = xla_cpu() else { return };
    let (agree, skipped, have) = judge(&backend, ".sdy.");
    assert!(agree + skipped >= 55, "only {} modules", agree + skipped);
    if have >= 8 {
        assert_eq!(skipped, 0);
    }
}
