//! The JAX harness corpus (`tests/data/harnesses/`, dumped by
//! `scripts/gen-harness-corpus.sh` from JAX's own primitive test harnesses,
//! before and after XLA:CPU optimization): every dump parses (or is a listed
//! parse gap), the corpus has the groups it was built for, and, in an
//! ignored test, `xla-props compare` runs on every module on the
//! interpreter and on xla-cpu and reports one line per module and counts
//! per (group, backend, exit code). The ignored test fails only when our
//! tool crashes (a panic, exit 101, or a signal): disagreements, unsupported
//! modules and backend rejections are for triage (the counts are in
//! `tests/data/harnesses/README.md`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use xla_props::backend::xla::{XlaBackend, XlaPlugin};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/harnesses");

/// Dumps that do not parse because of a genuine parser gap: (file, the text
/// the parse error shows). A listed dump that parses, or fails with other
/// text, fails the test, so an entry is removed once the gap is closed.
/// Empty at the corpus's creation: all 380 dumps parse.
const KNOWN_PARSE_GAPS: &[(&str, &str)] = &[];

/// Groups the corpus was built for: each must have at least one harness.
const REQUIRED_GROUPS: &[&str] = &[
    // complex arithmetic
    "add",
    "mul",
    "div",
    "exp",
    "log",
    "sqrt",
    "conj",
    "real",
    "imag",
    "complex",
    "integer_pow",
    "dot_general",
    "reduce_sum",
    "cumsum",
    // random bits and linear algebra
    "rng_bit_generator",
    "triangular_solve",
    // decomposed special functions
    "lgamma",
    "digamma",
    "igamma",
    "igammac",
    "erf_inv",
    "bessel_i0e",
    "bessel_i1e",
    "polygamma",
    "zeta",
    "random_gamma_grad",
    "erf",
    "erfc",
    "atan2",
    "tan",
    // ordering
    "sort",
    "top_k",
];

/// One MANIFEST.tsv row.
struct Entry {
    group: String,
    dtype: String,
}

/// MANIFEST.tsv: harness file name -> its group and dtype.
fn manifest() -> BTreeMap<String, Entry> {
    let path = format!("{DATA}/MANIFEST.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("name\tgroup\tdtype\tfullname\tsource"),
        "{path}: header"
    );
    lines
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 5, "{path}: {l}");
            let entry = Entry {
                group: cols[1].to_string(),
                dtype: cols[2].to_string(),
            };
            (cols[0].to_string(), entry)
        })
        .collect()
}

fn dumps() -> Vec<PathBuf> {
    xla_props::skip::files_in(DATA, "hlo").unwrap_or_else(|e| panic!("{DATA}: {e}"))
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().to_string()
}

/// The harness a dump belongs to: its file name without `.before.hlo`/`.after.hlo`.
fn harness_of(file: &str) -> &str {
    file.strip_suffix(".before.hlo")
        .or_else(|| file.strip_suffix(".after.hlo"))
        .unwrap_or_else(|| panic!("{file}: neither .before.hlo nor .after.hlo"))
}

#[test]
fn the_corpus_has_every_required_group_before_and_after_optimization() {
    let m = manifest();
    let files: BTreeSet<String> = dumps().iter().map(|p| file_name(p)).collect();
    assert!(files.len() >= 100, "only {} modules", files.len());
    for name in m.keys() {
        for stage in ["before", "after"] {
            let f = format!("{name}.{stage}.hlo");
            assert!(
                files.contains(&f),
                "MANIFEST names {name}, but {f} is missing"
            );
        }
    }
    for f in &files {
        assert!(m.contains_key(harness_of(f)), "{f} has no MANIFEST.tsv row");
    }
    let groups: BTreeSet<&str> = m.values().map(|e| e.group.as_str()).collect();
    for g in REQUIRED_GROUPS {
        assert!(groups.contains(g), "no harness of group `{g}`");
    }
    let dtypes: BTreeSet<&str> = m.values().map(|e| e.dtype.as_str()).collect();
    for d in ["complex64", "complex128", "float32", "float64"] {
        assert!(dtypes.contains(d), "no harness of dtype {d}");
    }
}

#[test]
fn every_harness_dump_parses_or_is_a_known_parse_gap() {
    let mut unexpected = Vec::new();
    let mut gaps = Vec::new();
    for f in dumps() {
        let file = file_name(&f);
        let text = std::fs::read_to_string(&f).unwrap();
        let known = KNOWN_PARSE_GAPS.iter().find(|(k, _)| *k == file);
        match (xla_props::hlo::parse_module(&text), known) {
            (Ok(_), None) => {}
            (Ok(_), Some(_)) => unexpected.push(format!(
                "{file} parses now: remove it from KNOWN_PARSE_GAPS"
            )),
            (Err(e), Some((_, shows))) if e.to_string().contains(shows) => {
                gaps.push(format!("{file}: {e}"))
            }
            (Err(e), _) => unexpected.push(format!("{file}: {e}")),
        }
    }
    for g in &gaps {
        eprintln!("known parse gap: {g}");
    }
    common::assert_none(&unexpected, "dumps");
    for (k, _) in KNOWN_PARSE_GAPS {
        assert!(
            Path::new(DATA).join(k).is_file(),
            "KNOWN_PARSE_GAPS names {k}: no such dump"
        );
    }
}

/// What `compare` printed first that is not about the inputs: the verdict
/// (or, when the command failed before judging, its first error line).
fn first_verdict_line(stdout: &str, stderr: &str) -> String {
    const PREAMBLE: &[&str] = &[
        "inputs:",
        "  parameter",
        "warning:",
        "note:",
        "reference produced",
        "trials:",
    ];
    stdout
        .lines()
        .find(|l| !l.trim().is_empty() && !PREAMBLE.iter().any(|p| l.starts_with(p)))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .to_string()
}

/// Runs `compare` on every module on `backend`; prints one line per module;
/// returns the count per (group, exit code) and the crashes.
fn run_backend(
    backend: &str,
    m: &BTreeMap<String, Entry>,
) -> (BTreeMap<(String, String), usize>, Vec<String>) {
    let mut counts = BTreeMap::new();
    let mut crashes = Vec::new();
    for f in dumps() {
        let file = file_name(&f);
        let group = m
            .get(harness_of(&file))
            .map_or("?".to_string(), |e| e.group.clone());
        let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
            .arg("compare")
            .arg(&f)
            .args(["--backend", backend])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out
            .status
            .code()
            .map_or_else(|| format!("signal ({})", out.status), |c| c.to_string());
        let line = first_verdict_line(&stdout, &stderr);
        println!("{file}\t{backend}\texit {code}\t{line}");
        if out.status.code().is_none_or(|c| c == 101) || stderr.contains("panicked") {
            crashes.push(format!(
                "{file} on {backend}: exit {code}\n{stdout}{stderr}"
            ));
        }
        *counts.entry((group, code)).or_insert(0) += 1;
    }
    (counts, crashes)
}

#[test]
#[ignore = "runs xla-props compare on ~380 modules on two backends (minutes); for triage"]
fn compare_runs_on_every_harness_module_without_crashing() {
    let m = manifest();
    let mut backends = vec!["interpreter"];
    if let Err(reason) = XlaBackend::new(XlaPlugin::Cpu).availability() {
        assert!(
            std::env::var_os("CI").is_none(),
            "xla-cpu must be available in CI: {reason}"
        );
        eprintln!("xla-cpu skipped: {reason}");
    } else {
        backends.push("xla-cpu");
    }
    let mut crashes = Vec::new();
    let mut summary = Vec::new();
    for backend in backends {
        let (counts, c) = run_backend(backend, &m);
        crashes.extend(c);
        let total: usize = counts.values().sum();
        assert_eq!(total, dumps().len(), "every module ran on {backend}");
        for ((group, code), n) in counts {
            summary.push(format!("{group}\t{backend}\texit {code}\t{n}"));
        }
    }
    println!("summary: group, backend, exit code, modules");
    for s in &summary {
        println!("{s}");
    }
    common::assert_none(&crashes, "crashes of xla-props");
}
