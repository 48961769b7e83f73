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

mod common;

use std::path::{Path, PathBuf};

use common::Stopped;
use xla_props::backend::xla::XlaBackend;
use xla_props::backend::Backend;
use xla_props::check::Produced;
use xla_props::hlo::load_module_file;

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
    let runs = match common::against_reference(backend, &module) {
        Ok(runs) => runs,
        Err(Stopped::Inputs(e)) => return Outcome::Disagree(format!("no legal inputs: {e}")),
        Err(Stopped::Reference(e)) => {
            return Outcome::Disagree(format!("the reference failed: {e}"))
        }
        Err(Stopped::Backend(e)) if e.is_unsupported() => return Outcome::NotRun(e.to_string()),
        Err(Stopped::Backend(e)) => {
            return Outcome::Disagree(format!("{} failed: {e}", backend.name()))
        }
    };
    let verdict = xla_props::cli::judge_compare(
        &module,
        &runs.args,
        &Produced::Ok(runs.expected),
        &Produced::Ok(runs.actual),
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
    let outcomes = common::on_every_core(&files, |path| compare(backend, path));
    let (mut agree, mut skipped, mut bad) = (0, Vec::new(), Vec::new());
    for (i, outcome) in outcomes.into_iter().enumerate() {
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
    common::assert_none(
        &bad,
        &format!("spmd modules ({which}) do not agree with the reference on xla-cpu"),
    );
    (agree, skipped.len(), have)
}

/// Judges the files whose names contain `which` on xla-cpu (skipping
/// without it): at least `least` of them agree or are skipped for too few
/// devices, and none is skipped with all 8.
fn all_agree(which: &str, least: usize) {
    let Some(backend) = common::xla_cpu() else {
        return;
    };
    let (agree, skipped, have) = judge(&backend, which);
    assert!(agree + skipped >= least, "only {} modules", agree + skipped);
    if have >= 8 {
        assert_eq!(skipped, 0);
    }
}

/// Every partitioned module (`*.partitioned*.hlo`: 63 files on 4 or 8
/// devices) runs on xla-cpu's host devices and agrees.
#[test]
fn partitioned_modules_agree_on_xla_cpu() {
    all_agree(".partitioned", 60);
}

/// Every annotated module (`*.annotated.hlo`: 55 files) is partitioned by
/// XLA on the devices its shardings name and agrees: the shard_map ones
/// with their manual regions, the others (sharding annotations only)
/// against their one-device meaning on the reference.
#[test]
fn annotated_modules_agree_on_xla_cpu() {
    all_agree(".annotated", 55);
}

/// Every Shardy-form module (`*.sdy.hlo`: 55 files, JAX's default form) is
/// rewritten into GSPMD's form (`hlo::sdy_gspmd`), partitioned by XLA and
/// agrees; a partial-manual shard_map (none in the corpus yet) would be the
/// only skip besides too few devices, and `judge` fails on any other.
#[test]
fn sdy_modules_agree_on_xla_cpu() {
    all_agree(".sdy.", 55);
}
