//! The JAX corpus (`tests/data/jax/`, dumped by `scripts/gen-jax-corpus.sh`
//! before and after XLA:CPU optimization) end to end through the built
//! binary: every dump parses, and `xla-props compare --deep` runs on each
//! module on the interpreter and on xla-cpu (the PJRT plugin; without it
//! and without `CI` set, the xla-cpu half skips with a message; with `CI`
//! set a missing plugin is a failure).
//!
//! Every (module, backend) either agrees, as a whole and instruction by
//! instruction, or is listed in `TRIAGED` with the exact text its output
//! shows and the triage from `docs/findings.md` ("The JAX corpus"). A listed
//! pair whose output no longer shows that text fails the test, so an entry
//! is removed once it is fixed (most are expected to go when the inputs,
//! topk and bitcast work lands).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use xla_props::backend::xla::{XlaBackend, XlaPlugin};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/jax");

/// Which backends a triage entry is for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum On {
    XlaCpu,
}

impl On {
    fn covers(self, backend: &str) -> bool {
        match self {
            On::XlaCpu => backend == "xla-cpu",
        }
    }
}

/// Why a module does not (yet) agree.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// A finding: a difference no declared numerics explain, with its
    /// reproducer in docs/findings.md.
    Finding,
}

struct Triage {
    file: &'static str,
    on: On,
    kind: Kind,
    /// Text the output of `compare --deep` shows (the exact error).
    shows: &'static str,
    why: &'static str,
}

// quantize_int8.after on xla-cpu: listed under the first inputs (XLA:CPU's
// divide by a broadcast scale is not correctly rounded, masked at the
// output by the rounding to int8), gone under the role-based inputs (issue
// 33), and back under the one input generator (issue 32, SplitMix64): seed
// 0's x now has max |x| = 60.616478, so the scale s = 0.4772951 and
// XLA:CPU's quotients are x * (1/s) in all 32 elements, 20 of them 1 ulp
// from x / s (measured: the fusion's output beside x and max |x| on
// xla-cpu). The outputs still agree (the known bug's model covers the
// divide; the int8 rounding masks it); the deep check's local unit, judged
// without known-bug models, departs. The finding keeps its own reproducer,
// docs/repro/divide-by-broadcast (docs/findings.md).
//
// With extracted units keeping their constant operands (fourteenth
// session), `compare --deep` shows the same finding inside two
// unoptimized modules: a divide by a broadcast constant (a softmax scale,
// an average pool's 1/9) that XLA:CPU computes as `x * (1/c)`; the outputs
// agree within their bounds, the unit departs by 1 ulp.
const TRIAGED: &[Triage] = &[
    Triage {
        file: "attention.before.hlo",
        on: On::XlaCpu,
        kind: Kind::Finding,
        shows: "local disagreement: `div.7` (divide) [values]",
        why: "XLA:CPU divides by a broadcast constant as x * (1/c), 1 ulp low: known bug xla-cpu/divide-as-reciprocal (docs/repro/divide-by-broadcast); the deep check's local units are judged without known-bug models",
    },
    Triage {
        file: "avg_pool.before.hlo",
        on: On::XlaCpu,
        kind: Kind::Finding,
        shows: "local disagreement: `div.3` (divide) [values]",
        why: "XLA:CPU divides by a broadcast constant as x * (1/c), 1 ulp low: known bug xla-cpu/divide-as-reciprocal (docs/repro/divide-by-broadcast); the deep check's local units are judged without known-bug models",
    },
    Triage {
        file: "quantize_int8.after.hlo",
        on: On::XlaCpu,
        kind: Kind::Finding,
        shows: "local disagreement: fusion `broadcast_divide_fusion` (computation `fused_computation.2`): `div.1` (divide)",
        why: "XLA:CPU divides by the broadcast scale max|x|/127 as x * (1/s), 1 ulp from x / s in 20 of 32 elements on seed 0's inputs: known bug xla-cpu/divide-as-reciprocal (docs/repro/divide-by-broadcast); the outputs agree, the deep check's local units are judged without known-bug models",
    },
];

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

fn dumps() -> Vec<PathBuf> {
    xla_props::skip::files_in(DATA, "hlo").unwrap_or_else(|e| panic!("{DATA}: {e}"))
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().to_string()
}

#[test]
fn the_corpus_has_forty_programs_before_and_after_optimization() {
    let files: Vec<String> = dumps().iter().map(|p| name(p)).collect();
    let programs: Vec<&str> = files
        .iter()
        .filter_map(|f| f.strip_suffix(".before.hlo"))
        .collect();
    assert!(programs.len() >= 40, "{} programs", programs.len());
    for p in &programs {
        assert!(
            files.contains(&format!("{p}.after.hlo")),
            "{p}: no after dump"
        );
    }
    for required in [
        "mlp",
        "attention",
        "batched_matmul",
        "cross_entropy",
        "layer_norm",
        "rms_norm",
        "gelu_tanh",
        "gelu_erf",
        "softmax_f16",
        "softmax_bf16",
        "logsumexp",
        "conv2d",
        "depthwise_conv",
        "max_pool",
        "scan",
        "while_loop",
        "cond",
        "gather_negative",
        "scatter_add",
        "dynamic_slice_negative",
        "embedding_sum",
        "segment_sum",
        "sort",
        "argsort",
        "top_k",
        "cumsum",
        "quantize_int8",
        "quant_f16_residual",
        "integer_ops",
        "bitcast_f32_s32",
    ] {
        assert!(programs.contains(&required), "no program `{required}`");
    }
}

#[test]
fn every_jax_dump_parses() {
    let mut bad = Vec::new();
    for f in dumps() {
        let out = xla_props().arg("parse").arg(&f).output().unwrap();
        if !out.status.success() {
            bad.push(format!(
                "{}: {}",
                name(&f),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    common::assert_none(&bad, "dumps do not parse");
}

/// Runs `compare --deep` on every module; returns the failures.
fn check_backend(backend: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let (mut agree, mut triaged, mut failures) = (0, 0, Vec::new());
    for f in dumps() {
        let file = name(&f);
        let json = dir.path().join(format!("{file}.json"));
        let out = xla_props()
            .arg("compare")
            .arg(&f)
            .args(["--backend", backend, "--deep", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains("panicked"), "{file} on {backend}: {text}");
        let triage = TRIAGED
            .iter()
            .find(|t| t.file == file && t.on.covers(backend));
        match (out.status.code(), triage) {
            (Some(0), None) => {
                // agreement, as a whole and instruction by instruction
                let j: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
                assert_eq!(j["output_agrees"], true, "{file} on {backend}: {j}");
                assert_eq!(j["local_disagreements"], serde_json::json!([]), "{file}");
                agree += 1;
            }
            (Some(0), Some(t)) => failures.push(format!(
                "{file} on {backend} now agrees: remove its triage ({:?}: {})",
                t.kind, t.why
            )),
            (_, Some(t)) if text.contains(t.shows) => triaged += 1,
            (code, Some(t)) => failures.push(format!(
                "{file} on {backend} (exit {code:?}) no longer shows `{}` ({:?}); it says:\n  {}",
                t.shows,
                t.kind,
                text.trim().replace('\n', "\n  ")
            )),
            (code, None) => failures.push(format!(
                "{file} on {backend} (exit {code:?}) has no triage:\n  {}",
                text.trim().replace('\n', "\n  ")
            )),
        }
    }
    eprintln!(
        "jax corpus on {backend}: {agree} agree, {triaged} triaged, {} failures",
        failures.len()
    );
    assert!(agree >= 60, "only {agree} modules agree on {backend}");
    failures
}

#[test]
fn the_jax_corpus_agrees_on_the_interpreter_or_is_triaged() {
    let failures = check_backend("interpreter");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_jax_corpus_agrees_on_xla_cpu_or_is_triaged() {
    if !xla_props::skip::backend_available(
        "xla-cpu",
        XlaBackend::new(XlaPlugin::Cpu).availability(),
    ) {
        return;
    }
    let failures = check_backend("xla-cpu");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_triage_entry_names_a_dump() {
    let files: Vec<String> = dumps().iter().map(|p| name(p)).collect();
    for t in TRIAGED {
        assert!(
            files.contains(&t.file.to_string()),
            "{}: no such dump",
            t.file
        );
        assert!(!t.why.is_empty() && !t.shows.is_empty());
    }
}
