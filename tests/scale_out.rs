//! The Kubernetes Indexed Job recipe (docs/scale-out.md), on this machine:
//! the conformance suite as 4 shard processes, each started with the pod
//! command of `examples/k8s/suite-job.yaml` and its own
//! `JOB_COMPLETION_INDEX`, then the merge command of `merge-job.yaml`. The
//! merged run must equal one unsharded run apart from timings and hosts,
//! and a missing or a duplicated shard must be refused with its cases named.
//! One op and dtype (`XLA_PROPS_OPS`, `XLA_PROPS_DTYPES`) keep it to seconds.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The subset of the suite the shards run.
const FILTER: [(&str, &str); 2] = [("XLA_PROPS_OPS", "negate"), ("XLA_PROPS_DTYPES", "f32")];

/// Variables of the developer's environment that would change the run.
const CLEARED: &[&str] = &[
    "XLA_PROPS_BACKENDS",
    "XLA_PROPS_SHARD",
    "XLA_PROPS_SHARDS",
    "JOB_COMPLETION_INDEX",
    "XLA_PROPS_SEED",
    "XLA_PROPS_JSON",
    "XLA_PROPS_JUNIT",
    "XLA_PROPS_XLA_SHARD",
    "XML_OUTPUT_FILE",
    "TEST_SHARD_INDEX",
    "TEST_TOTAL_SHARDS",
    "TEST_SHARD_STATUS_FILE",
    "TESTBRIDGE_TEST_ONLY",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `xla-props` tool, built for the running test's profile.
fn xla_props_tool() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let release =
        std::env::current_exe().is_ok_and(|e| e.components().any(|c| c.as_os_str() == "release"));
    let mut args = vec!["build", "-p", "xla-props", "--bin", "xla-props"];
    args.extend(["--message-format=json", "-q"]);
    if release {
        args.push("--release");
    }
    let out = Command::new(cargo)
        .args(&args)
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["target"]["name"] == "xla-props" && v["executable"].is_string())
        .and_then(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the xla-props executable")
}

/// The pod command of a manifest in `examples/k8s/` (its folded `- >-` argument).
fn pod_command(manifest: &str) -> String {
    let text = std::fs::read_to_string(root().join("examples/k8s").join(manifest)).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "- >-")
        .skip(1)
        .take_while(|l| !l.trim().is_empty() && !l.trim_end().ends_with(':'))
        .map(str::trim)
        .collect();
    assert!(!lines.is_empty(), "{manifest} has a `- >-` command");
    lines.join(" ")
}

/// The value of an `env` entry of a manifest.
fn pod_env(manifest: &str, name: &str) -> String {
    let text = std::fs::read_to_string(root().join("examples/k8s").join(manifest)).unwrap();
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {name}"));
    lines.next();
    let value = lines.next().and_then(|l| l.trim().strip_prefix("value:"));
    value
        .unwrap_or_else(|| panic!("{manifest} sets {name}"))
        .trim()
        .trim_matches('"')
        .to_string()
}

/// Runs a manifest's command in `sh`, `/results` being `results`, with the
/// suite binary as `conformance` and the tool as `xla-props` on the PATH.
fn pod(manifest: &str, results: &Path, bin: &Path, env: &[(&str, String)]) -> Output {
    std::fs::create_dir_all(results).unwrap();
    let command = pod_command(manifest).replace("/results", &results.display().to_string());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(&command).current_dir(root());
    for v in CLEARED {
        cmd.env_remove(v);
    }
    cmd.env("PATH", path)
        .envs(FILTER)
        .env("XLA_PROPS_PROGRESS", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("sh runs")
}

/// Four shards, as the Indexed Job runs them, and one unsharded run.
struct Runs {
    _dir: tempfile::TempDir,
    /// The shards' results folder (the shared volume).
    results: PathBuf,
    /// The unsharded run's.
    whole: PathBuf,
    /// `conformance` and `xla-props`.
    bin: PathBuf,
    shards: usize,
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(support::test_binary("conformance"), bin.join("conformance"))
            .unwrap();
        std::os::unix::fs::symlink(xla_props_tool(), bin.join("xla-props")).unwrap();
        let shards: usize = pod_env("suite-job.yaml", "XLA_PROPS_SHARDS")
            .parse()
            .unwrap();
        assert_eq!(shards, 4, "the manifest's shard count");
        let results = dir.path().join("results");
        let children: Vec<_> = (0..shards)
            .map(|i| {
                let env = [
                    ("JOB_COMPLETION_INDEX", i.to_string()),
                    ("XLA_PROPS_SHARDS", shards.to_string()),
                ];
                let (results, bin) = (results.clone(), bin.clone());
                std::thread::spawn(move || pod("suite-job.yaml", &results, &bin, &env))
            })
            .collect();
        let whole = dir.path().join("whole");
        // an index without XLA_PROPS_SHARDS does not shard: the whole run
        let unsharded = pod(
            "suite-job.yaml",
            &whole,
            &bin,
            &[("JOB_COMPLETION_INDEX", "all".into())],
        );
        for (i, c) in children.into_iter().enumerate() {
            let out = c.join().unwrap();
            assert!(out.status.success(), "shard {i}: {}", text(&out));
        }
        assert!(unsharded.status.success(), "{}", text(&unsharded));
        Runs {
            _dir: dir,
            results,
            whole,
            bin,
            shards,
        }
    })
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A results document without what may differ between a run and its merged
/// shards (docs/scale-out.md): timings and hosts.
fn without_timings_and_hosts(mut v: Value) -> Value {
    for c in v["cases"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("duration_us");
    }
    let meta = v["metadata"].as_object_mut().unwrap();
    for k in ["started_at", "duration_ms", "host", "cores", "shards"] {
        meta.remove(k);
    }
    v
}

fn case_ids(v: &Value) -> Vec<String> {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// The test case names of a JUnit file, in order.
fn junit_cases(p: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(p).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| n.attribute("name").unwrap().to_string())
        .collect()
}

#[test]
fn four_indexed_job_shards_merge_into_the_unsharded_run() {
    let r = runs();
    let whole = read_json(&r.whole.join("shard-all.json"));
    let all = case_ids(&whole);
    assert!(all.len() >= 20, "{} cases", all.len());
    let hash = &whole["metadata"]["case_space"]["hash"];
    assert!(whole["metadata"].get("shard").is_none());
    let mut in_shards = 0;
    for i in 0..r.shards {
        let shard = read_json(&r.results.join(format!("shard-{i}.json")));
        let meta = &shard["metadata"];
        assert_eq!(meta["shard"]["index"], i + 1);
        assert_eq!(meta["shard"]["total"], r.shards);
        assert_eq!(&meta["case_space"]["hash"], hash, "shard {i}");
        let n = case_ids(&shard).len();
        assert!(n > 0 && n < all.len(), "shard {i} has {n} of {}", all.len());
        in_shards += n;
    }
    assert_eq!(in_shards, all.len());

    let out = pod("merge-job.yaml", &r.results, &r.bin, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let merged = read_json(&r.results.join("run.json"));
    assert_eq!(merged["metadata"]["shards"].as_array().unwrap().len(), 4);
    assert_eq!(
        without_timings_and_hosts(merged),
        without_timings_and_hosts(whole)
    );
    let merged_xml = junit_cases(&r.results.join("run.xml"));
    assert_eq!(merged_xml, junit_cases(&r.whole.join("shard-all.xml")));
    assert_eq!(merged_xml.len(), all.len());
    let page = std::fs::read_to_string(r.results.join("report.html")).unwrap();
    assert!(page.contains("<html"), "a report of the merged run");
}

/// `xla-props merge FILES -o OUT`.
fn merge(files: &[PathBuf], out: &Path) -> Output {
    Command::new(runs().bin.join("xla-props"))
        .arg("merge")
        .args(files)
        .arg("-o")
        .arg(out)
        .output()
        .expect("xla-props runs")
}

#[test]
fn a_missing_or_duplicated_shard_is_refused_naming_its_cases() {
    let r = runs();
    let shard = |i: usize, ext: &str| r.results.join(format!("shard-{i}.{ext}"));
    let lost = case_ids(&read_json(&shard(2, "json")));
    let dir = tempfile::tempdir().unwrap();
    for ext in ["json", "xml"] {
        let out = merge(
            &[shard(0, ext), shard(1, ext), shard(3, ext)],
            &dir.path().join(format!("run.{ext}")),
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("shard(s) 3/4 are missing"), "{said}");
        assert!(
            said.contains(&format!("{} case(s) of the run are in no file", lost.len())),
            "{said}"
        );
        for name in lost.iter().take(20) {
            assert!(said.contains(name.as_str()), "{name} is not named: {said}");
        }
        assert!(!dir.path().join(format!("run.{ext}")).exists());
    }
    let copy = dir.path().join("copy-of-shard-1.json");
    std::fs::copy(shard(1, "json"), &copy).unwrap();
    let mut files: Vec<PathBuf> = (0..4).map(|i| shard(i, "json")).collect();
    files.push(copy.clone());
    let out = merge(&files, &dir.path().join("run.json"));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("shard 2 is given 2 times"), "{said}");
    let doubled = case_ids(&read_json(&copy));
    assert!(
        said.contains(&format!(
            "{} case(s) are in more than one file",
            doubled.len()
        )),
        "{said}"
    );
    let first = &doubled[0];
    let both = format!(
        "{first} (in {} and {})",
        shard(1, "json").display(),
        copy.display()
    );
    assert!(said.contains(&both), "{said}");
}
