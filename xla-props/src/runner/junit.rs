//! JUnit XML: the runner's report (one test suite per property, cases by
//! name, the run's identity as `xla-props.*` properties of every suite), and
//! the merge of a run's shards' JUnit files.
//!
//! The identity properties: `xla-props.seed`, `xla-props.git_revision`,
//! `xla-props.git_dirty` (when known), `xla-props.backends` (JSON, as the
//! `--json` metadata's `backends`), `xla-props.shard` (`K/N`, only a shard's)
//! and `xla-props.case_space` (JSON: hash, cases, selection).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::events::{Reporter, RunEvent};
use super::merge::{check_shards, identity_of, MergeError, MergeOptions, ShardView};
use super::summary::write_file;
use crate::report::{Outcome, RunMetadata, ShardInfo};

const PREFIX: &str = "xla-props.";

/// The identity properties of a run.
fn identity_properties(meta: &RunMetadata) -> Vec<Property> {
    let mut props = Vec::new();
    if let Some(seed) = meta.seed {
        props.push(("seed", seed.to_string()));
    }
    if let Some(r) = &meta.git_revision {
        props.push(("git_revision", r.clone()));
    }
    if let Some(d) = meta.git_dirty {
        props.push(("git_dirty", d.to_string()));
    }
    props.push(("backends", json(&meta.backends)));
    if let Some(s) = meta.shard {
        props.push(("shard", s.to_string()));
    }
    if let Some(c) = &meta.case_space {
        props.push(("case_space", json(c)));
    }
    props
        .into_iter()
        .map(|(k, v)| Property::new(format!("{PREFIX}{k}"), v))
        .collect()
}

/// `v` as a JSON string, for a property.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// One case as JUnit records it.
struct JunitCase {
    name: String,
    property: &'static str,
    classname: String,
    /// Counted as passed, failed or skipped, with the message.
    outcome: Outcome<()>,
    message: Option<String>,
    duration: Duration,
}

/// The `--junit` report: one test suite per property, cases by name, the
/// run's identity as properties of every suite; written when the run ends.
pub struct JunitReporter {
    path: PathBuf,
    cases: Vec<JunitCase>,
}

impl JunitReporter {
    /// Writes to `path` when the run ends.
    pub fn new(path: PathBuf) -> JunitReporter {
        JunitReporter {
            path,
            cases: Vec::new(),
        }
    }
}

impl Reporter for JunitReporter {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::CaseFinished(c) => {
                let property = c.id.key.spec().name;
                self.cases.push(JunitCase {
                    name: c.id.to_string(),
                    property,
                    classname: format!("{}::{}", property, c.id.key.op),
                    outcome: c.outcome.bare(),
                    message: c.message.clone(),
                    duration: c.duration,
                });
                Ok(())
            }
            RunEvent::Finished {
                metadata: Some(meta),
                ..
            } => {
                self.cases.sort_by(|a, b| a.name.cmp(&b.name));
                write_junit(&self.path, &self.cases, meta)
            }
            _ => Ok(()),
        }
    }
}

/// Writes a JUnit XML report (one test suite per property, cases in the
/// order given, the run's identity as properties of each suite).
fn write_junit(path: &Path, cases: &[JunitCase], meta: &RunMetadata) -> Result<(), String> {
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    let properties = identity_properties(meta);
    for r in cases {
        let suite = suites.entry(r.property).or_insert_with(|| {
            let mut s = TestSuite::new(r.property);
            s.add_properties(properties.iter().cloned());
            s
        });
        let status = if r.outcome.is_failed() {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            if let Some(m) = &r.message {
                s.set_description(m.as_str());
                s.set_message(m.lines().next().unwrap_or(""));
            }
            s
        } else if r.outcome.is_passed() {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::skipped();
            if let Some(m) = &r.message {
                s.set_message(m.as_str());
            }
            s
        };
        let mut tc = TestCase::new(r.name.as_str(), status);
        tc.set_classname(r.classname.as_str());
        tc.set_time(r.duration);
        suite.add_test_case(tc);
    }
    let mut report = Report::new("xla-props");
    report.add_test_suites(suites.into_values());
    let text = report
        .to_string()
        .map_err(|e| format!("failed to serialize the junit report: {e}"))?;
    write_file(path, text.as_bytes())
}

/// The metadata a JUnit report's first suite records (its identity, as
/// the `--json` metadata holds it).
fn junit_metadata(report: &Report) -> RunMetadata {
    let mut meta = RunMetadata::default();
    let mut seen = std::collections::BTreeSet::new();
    let props = report.test_suites.iter().flat_map(|s| s.properties.iter());
    for p in props {
        let Some(key) = p.name.as_str().strip_prefix(PREFIX) else {
            continue;
        };
        if !seen.insert(key) {
            continue;
        }
        let text = p.value.as_str();
        match key {
            "seed" => meta.seed = text.parse().ok(),
            "git_revision" => meta.git_revision = Some(text.to_string()),
            "git_dirty" => meta.git_dirty = text.parse().ok(),
            "backends" => meta.backends = serde_json::from_str(text).unwrap_or_default(),
            "case_space" => meta.case_space = serde_json::from_str(text).ok(),
            "shard" => meta.shard = super::args::Shard::parse(text).ok().map(ShardInfo::from),
            _ => {}
        }
    }
    meta
}

/// Merges a run's shards' JUnit files into the run's JUnit XML: the same
/// checks as [`super::merge_results`] (one run, covered exactly), suites by
/// name, cases by name, the shard property dropped.
pub fn merge_junit_files(paths: &[PathBuf], options: MergeOptions) -> Result<String, MergeError> {
    let mut reports = Vec::new();
    for p in paths {
        let origin = p.display().to_string();
        let text = std::fs::read_to_string(p)
            .map_err(|e| MergeError(format!("{origin}: cannot read: {e}")))?;
        let report = Report::deserialize_from_str(&text)
            .map_err(|e| MergeError(format!("{origin}: not a junit report: {e}")))?;
        reports.push((origin, report));
    }
    let views: Vec<ShardView> = reports
        .iter()
        .map(|(origin, r)| ShardView {
            origin: origin.clone(),
            identity: identity_of(&junit_metadata(r)),
            names: (r.test_suites.iter())
                .flat_map(|s| s.test_cases.iter().map(|c| c.name.as_str().to_string()))
                .collect(),
        })
        .collect();
    check_shards(&views, options)?;
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    let mut cases: BTreeMap<String, Vec<TestCase>> = BTreeMap::new();
    for (_, report) in reports {
        for mut suite in report.test_suites {
            let name = suite.name.as_str().to_string();
            cases
                .entry(name.clone())
                .or_default()
                .append(&mut suite.test_cases);
            let time = suite.time.unwrap_or_default();
            let merged = suites.entry(name).or_insert_with(|| {
                let mut s = TestSuite::new(suite.name.as_str());
                let shard = format!("{PREFIX}shard");
                s.properties = (suite.properties.into_iter())
                    .filter(|p| p.name.as_str() != shard)
                    .collect();
                s
            });
            merged.set_time(merged.time.unwrap_or_default() + time);
        }
    }
    let mut merged = Report::new("xla-props");
    for (name, mut suite) in suites {
        let mut list = cases.remove(&name).unwrap_or_default();
        list.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
        suite.add_test_cases(list);
        merged.add_test_suite(suite);
    }
    merged
        .to_string()
        .map_err(|e| MergeError(format!("failed to serialize the merged junit report: {e}")))
}
