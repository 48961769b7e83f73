//! The real-model corpus (`tests/data/models/`, exported by
//! `scripts/gen-model-corpus.sh`: flax linen and nnx, equinox and haiku
//! models, each a forward pass and an optax train step, before and after
//! XLA:CPU optimization) judged by `xla-props compare` on the interpreter,
//! xla-cpu and iree-cpu.
//!
//! Every module gets a verdict on every backend. On the interpreter every
//! one is meant to agree (a pair that does not is listed as `open`: a gap of
//! the judge, not of the interpreter). On the compilers each agrees, or is listed in
//! `tests/data/models/TRIAGE.tsv` with the text its output shows and the
//! finding (docs/findings.md, "Real models") whose reproducer explains it;
//! a listed pair whose output no longer shows that text fails, so entries
//! leave when fixed. No verdict anywhere says the enclosure is unbounded,
//! and the reference's outputs are finite on the default inputs.
//!
//! The debug run (the README's test command) judges the forward passes on
//! the interpreter; the whole matrix is `--ignored`, run in release by CI
//! (`.ci/run`), two modules at a time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/models");

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

/// Every `XLA_PROPS_MODEL_STRIDE`-th module (default 1: all), for runs that
/// must fit a CI budget on a compiler (each module is one compile).
fn stride() -> usize {
    std::env::var("XLA_PROPS_MODEL_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1usize)
        .max(1)
}

fn modules(filter: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut files =
        xla_props::skip::files_in(DATA, "hlo").unwrap_or_else(|e| panic!("{DATA}: {e}"));
    files.retain(|p| filter(&p.file_name().unwrap().to_string_lossy()));
    assert!(!files.is_empty(), "{DATA} has no modules");
    files
}

/// One triaged (module, backend) pair.
struct Triage {
    file: String,
    backend: String,
    exit: i32,
    shows: String,
}

fn triage() -> Vec<Triage> {
    let text = std::fs::read_to_string(Path::new(DATA).join("TRIAGE.tsv")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(
                f.len() >= 5,
                "TRIAGE.tsv: a row needs file, backend, exit, shows, why: {l}"
            );
            Triage {
                file: f[0].into(),
                backend: f[1].into(),
                exit: f[2]
                    .parse()
                    .unwrap_or_else(|_| panic!("TRIAGE.tsv: bad exit in {l}")),
                shows: f[3].into(),
            }
        })
        .collect()
}

/// Whether `backend` can run here; without it and without `CI`, the test
/// skips with a message (under `CI` a missing backend is a failure).
fn available(backend: &str) -> bool {
    let out = xla_props()
        .arg("backends")
        .output()
        .expect("xla-props backends");
    let text = String::from_utf8_lossy(&out.stdout);
    let ok = text
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>()[..] == [backend, "available"]);
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but `{backend}` is unavailable"
        );
        eprintln!("skipped: `{backend}` is not installed (scripts/fetch-xla-plugin.sh, scripts/fetch-iree.sh)");
    }
    ok
}

/// Runs `compare` on every module, two at a time; returns the failures.
fn judge_all(files: &[PathBuf], backend: &str) -> Vec<String> {
    let triaged = triage();
    common::two_at_a_time(files, |file| {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("v.json");
        let out = xla_props()
            .args([
                "compare",
                file.to_str().unwrap(),
                "--backend",
                backend,
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let code = out.status.code().unwrap_or(-1);
        let mut problems = Vec::new();
        if stdout.contains("enclosure is unbounded") {
            problems.push("a verdict says the enclosure is unbounded".to_string());
        }
        if stdout.contains("predicted inf") {
            problems.push("a certificate rests on an unbounded prediction".to_string());
        }
        let nonfinite = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["reference_nonfinite_outputs"].as_u64());
        if nonfinite.is_some_and(|n| n > 0) {
            problems.push(format!(
                "the reference's outputs are not finite ({nonfinite:?} elements)"
            ));
        }
        let listed = triaged
            .iter()
            .find(|t| t.file == name && t.backend == backend);
        match (code, listed) {
            (0, None) => {}
            (c, Some(t)) if c == t.exit && stdout.contains(&t.shows) => {}
            (c, Some(t)) => problems.push(format!(
                "triaged as exit {} showing `{}`, but exit {c}",
                t.exit, t.shows
            )),
            (c, None) => problems.push(format!("exit {c}, not triaged")),
        }
        if problems.is_empty() {
            return None;
        }
        let head: String = stdout
            .lines()
            .filter(|l| !l.starts_with("  parameter"))
            .take(12)
            .collect::<Vec<_>>()
            .join("\n");
        Some(format!(
            "{name} on {backend}: {}\n{head}\n{}",
            problems.join("; "),
            stderr.lines().take(3).collect::<Vec<_>>().join("\n")
        ))
    })
}

fn check(files: &[PathBuf], backend: &str) {
    let failures = judge_all(files, backend);
    assert!(
        failures.is_empty(),
        "{} of {} modules on {backend}:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn forward_passes_agree_on_the_interpreter() {
    check(&modules(&|n| n.contains(".fwd.")), "interpreter");
}

#[test]
#[ignore = "the whole corpus: run in release by .ci/run"]
fn every_model_agrees_on_the_interpreter() {
    check(&modules(&|_| true), "interpreter");
}

/// Every `stride()`-th model of the corpus on `backend`, where it is available.
fn every_stride_th_model_agrees_or_is_triaged_on(backend: &str) {
    if available(backend) {
        let all = modules(&|_| true);
        check(
            &all.into_iter().step_by(stride()).collect::<Vec<_>>(),
            backend,
        );
    }
}

#[test]
#[ignore = "the whole corpus: run in release by .ci/run"]
fn every_model_agrees_or_is_triaged_on_xla_cpu() {
    every_stride_th_model_agrees_or_is_triaged_on("xla-cpu");
}

#[test]
#[ignore = "the whole corpus: run in release by .ci/run"]
fn every_model_agrees_or_is_triaged_on_iree_cpu() {
    every_stride_th_model_agrees_or_is_triaged_on("iree-cpu");
}

/// An optimized CNN train step (convolutions and group norms) whose
/// interpreter run departs beyond every carried bound (worst-case
/// first-order radii through its convolution gradients; large local errors
/// of legal reassociation) is certified by the backend's own run: every unit
/// legal on the operands it was given there. Before the own run, an
/// unbounded carried bound "explained" such a run (an unsound certificate:
/// `predicted inf`).
#[test]
fn a_deep_gradient_is_certified_by_the_backends_own_run() {
    // (eqx_cnn.train.after was this test's module until its max-pool
    // gradient got a first-order bound: it now agrees inside the bound
    // propagated through the graph, with no certificate needed)
    assert_certified_by_own_run(
        "eqx_resnet_groupnorm.train.after.hlo",
        "interpreter",
        "amplified: in the backend's own run",
    );
}

/// `compare` of corpus module `file` on `backend` agrees, and its
/// certificate, which says `says`, rests on the backend's own run (never on
/// an unbounded prediction), or witness runs reach every departing element
/// first (since 2026-12-05: legal runs of the program, never beyond a bound
/// of the same numerics; then no certificate is asked for).
fn assert_certified_by_own_run(file: &str, backend: &str, says: &str) {
    let file = Path::new(DATA).join(file);
    let out = xla_props()
        .args(["compare", file.to_str().unwrap(), "--backend", backend])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let witnessed = stdout
        .lines()
        .any(|l| l.starts_with("agree") && l.contains("reached by a run with every instruction"));
    assert!(stdout.contains(says) || witnessed, "{stdout}");
    assert!(!stdout.contains("predicted inf"), "{stdout}");
}

/// On xla-cpu, exposing every value of the equinox transformer's forward
/// pass changes its outputs (a layer norm's sum is ordered otherwise once
/// it is an output), so the own run is retried with the values of
/// reductions and contractions left unexposed, each judged inside the
/// units that read it: the 3 elements that depart by up to 111 ulp are a
/// composition of legal steps. Before, this was a `composition` mismatch
/// (the carried bound is unbounded after two attention layers).
#[test]
fn a_forward_pass_whose_sums_move_when_exposed_is_certified_with_them_hidden() {
    if !available("xla-cpu") {
        return;
    }
    assert_certified_by_own_run(
        "eqx_transformer.fwd.after.hlo",
        "xla-cpu",
        "amplified: in the backend's own run (every value exposed but",
    );
}

/// A bf16 causal LM's forward pass on iree-cpu: IREE keeps some bf16
/// values in f32 (per dispatch region), which its declared excess precision
/// allows, and no bound of that permission is finite this deep (each bf16
/// rounding is half an ulp of uncertainty, 17 % at a logit). Runs of the
/// program with each narrow value either rounded or kept in f32, aimed at
/// each departing element, reach every one of them: the verdict agrees,
/// with those elements `witnessed`. Before (2026-12-06) this was a
/// `composition` mismatch resting on an unbounded prediction.
#[test]
fn a_bf16_forward_pass_is_reached_by_runs_that_keep_values_in_f32_on_iree_cpu() {
    if !available("iree-cpu") {
        return;
    }
    assert_certified_by_own_run(
        "haiku_causal_lm.fwd.after.hlo",
        "iree-cpu",
        "reached by a run with every instruction",
    );
}

/// The equinox causal LM's forward pass on iree-cpu: runs that keep whole
/// instructions in f32 leave 8 departing elements short (2 even after
/// single flips and element blocks: 3,244 runs, 1-3 bf16 ulp short); runs
/// chosen element by element from each one's reverse pass reach them. The
/// verdict agrees, those elements `witnessed`. Before (2026-12-06) this was
/// a `composition` row of TRIAGE.tsv.
#[test]
fn a_bf16_forward_pass_needing_choices_per_element_is_reached_on_iree_cpu() {
    if !available("iree-cpu") {
        return;
    }
    assert_certified_by_own_run(
        "eqx_causal_lm.fwd.before.hlo",
        "iree-cpu",
        "reached by a run with every instruction",
    );
}

#[test]
fn every_triage_row_names_a_module_and_a_backend() {
    let names: Vec<String> = modules(&|_| true)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let text = std::fs::read_to_string(Path::new(DATA).join("TRIAGE.tsv")).unwrap_or_default();
    for t in triage() {
        assert!(
            names.contains(&t.file),
            "TRIAGE.tsv names `{}`, which is not in the corpus",
            t.file
        );
        assert!(
            ["interpreter", "xla-cpu", "iree-cpu"].contains(&t.backend.as_str()),
            "TRIAGE.tsv: `{}` on unknown backend `{}`",
            t.file,
            t.backend
        );
        // the interpreter is the judge's own yardstick: a pair there is an open gap, said so
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{}\t{}\t", t.file, t.backend)))
            .unwrap();
        if t.backend == "interpreter" {
            assert!(
                row.contains("\topen:"),
                "TRIAGE.tsv: an interpreter row must be an open gap: {row}"
            );
        }
    }
}
