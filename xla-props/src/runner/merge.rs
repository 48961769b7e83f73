//! Shards back into one run: the checks that the shards' reports belong to
//! one run and cover it exactly (shared by the JSON and JUnit merges), and
//! the merge of `--json` results.
//!
//! The merged JSON equals the unsharded run's, apart from timings and hosts:
//! each case's `duration_us`, and the metadata's `started_at` (the earliest
//! shard's), `duration_ms` (the longest shard's), `host` (the shards'
//! distinct hosts), `cores` (their sum), and `shards` (one entry per shard
//! file: its shard, host, start, duration and command), which only a merged
//! run has. The shards' `shard` field is dropped. Cases are ordered by name,
//! as the runner writes them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::identity::{CaseSpaceHash, CaseSpaceId, ShardInfo};
use crate::report::{RunMetadata, RunResults};

/// Why shards could not be merged: every problem found, one per line, with
/// the cases it concerns.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

/// What a merge tolerates.
#[derive(Clone, Copy, Debug, Default)]
pub struct MergeOptions {
    /// Merge shards of different seeds, git revisions or backend versions
    /// (the merged metadata lists each under `mixed`).
    pub allow_mixed: bool,
}

/// At most this many case names are quoted per problem.
const NAMES_SHOWN: usize = 20;

/// What identifies the run a shard's report belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunIdentity {
    /// The input seed, as text.
    pub seed: Option<String>,
    /// The git revision, `+dirty` when tracked files were modified.
    pub revision: Option<String>,
    /// Each backend and its role: `name (role)`.
    pub backends: Vec<String>,
    /// Each backend and its version: `name version`.
    pub versions: Vec<String>,
    /// The shard.
    pub shard: Option<ShardInfo>,
    /// The case space.
    pub case_space: Option<CaseSpaceId>,
}

/// One shard's report, as much of it as the merge checks.
pub(crate) struct ShardView {
    /// The file, for messages.
    pub origin: String,
    /// The run it says it belongs to.
    pub identity: RunIdentity,
    /// Its cases' names.
    pub names: Vec<String>,
}

/// What differs between shards that were merged anyway (`--allow-mixed`):
/// `seed`, `git_revision` or `backend_versions` -> the distinct values.
pub(crate) type Mixed = BTreeMap<&'static str, BTreeSet<String>>;

/// `names` quoted one per line, at most [`NAMES_SHOWN`], then how many more.
fn quote(names: &[String]) -> String {
    let mut out = String::new();
    for n in names.iter().take(NAMES_SHOWN) {
        out.push_str(&format!("\n    {n}"));
    }
    if names.len() > NAMES_SHOWN {
        out.push_str(&format!("\n    ... and {} more", names.len() - NAMES_SHOWN));
    }
    out
}

/// Checks that the shards are of one run (same case space, backends and
/// split; same seed, revision and backend versions unless mixing is
/// allowed) and cover it exactly. Returns what was mixed.
pub(crate) fn check_shards(
    views: &[ShardView],
    options: MergeOptions,
) -> Result<Mixed, MergeError> {
    let first = views
        .first()
        .ok_or_else(|| MergeError("nothing to merge: no shard files given".into()))?;
    let mut problems = Vec::new();
    let Some(space) = &first.identity.case_space else {
        return Err(MergeError(format!(
            "{}: no case-space identity in its metadata (not written by an xla-props \
             runner that records one): cannot check that the shards cover one run",
            first.origin
        )));
    };
    let mut mixed = Mixed::new();
    for v in views {
        let (a, b) = (&first.identity, &v.identity);
        let differs = |what: &str, x: &dyn std::fmt::Debug, y: &dyn std::fmt::Debug| {
            format!(
                "{} and {} are not shards of one run: {what} differ ({x:?} vs {y:?})",
                first.origin, v.origin
            )
        };
        match &b.case_space {
            None => problems.push(format!(
                "{}: no case-space identity in its metadata",
                v.origin
            )),
            Some(s) if s.hash != space.hash || s.cases != space.cases => {
                problems.push(differs(
                    "their case spaces (filters, properties or backends)",
                    &format!("{} cases, {}", space.cases, space.hash),
                    &format!("{} cases, {}", s.cases, s.hash),
                ));
            }
            Some(_) => {}
        }
        if a.backends != b.backends {
            problems.push(differs("their backends", &a.backends, &b.backends));
        }
        let total = |i: &RunIdentity| i.shard.map(|s| s.total);
        if total(a) != total(b) {
            problems.push(differs(
                "their splits (shard counts)",
                &a.shard.map(|s| s.to_string()),
                &b.shard.map(|s| s.to_string()),
            ));
        }
        let fields: [(&'static str, &Option<String>, &Option<String>); 2] = [
            ("seed", &a.seed, &b.seed),
            ("git_revision", &a.revision, &b.revision),
        ];
        for (what, x, y) in fields {
            if x != y {
                mixed.entry(what).or_default().extend(
                    [x, y]
                        .iter()
                        .map(|s| s.as_deref().unwrap_or("unknown").to_string()),
                );
            }
        }
        if a.versions != b.versions {
            let e = mixed.entry("backend_versions").or_default();
            e.insert(a.versions.join(", "));
            e.insert(b.versions.join(", "));
        }
    }
    if !options.allow_mixed {
        for (what, values) in &mixed {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            let what = match *what {
                "seed" => "seeds",
                "git_revision" => "git revisions",
                _ => "backend versions",
            };
            problems.push(format!(
                "refusing to merge shards of different {what} ({}); pass --allow-mixed to merge them anyway",
                values.join(" vs ")
            ));
        }
    }
    if problems.is_empty() {
        problems.extend(coverage_problems(views, space));
    }
    if problems.is_empty() {
        Ok(mixed)
    } else {
        Err(MergeError(format!(
            "cannot merge {} shard file(s):\n  {}",
            views.len(),
            problems.join("\n  ")
        )))
    }
}

/// The cases in more than one file, the shards given twice or not at all,
/// and the cases of the run in no file (named when this program can list
/// the run's case space).
fn coverage_problems(views: &[ShardView], space: &CaseSpaceId) -> Vec<String> {
    let mut problems = Vec::new();
    let mut by_shard: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for v in views {
        if let Some(s) = v.identity.shard {
            by_shard.entry(s.index).or_default().push(&v.origin);
        }
    }
    for (k, files) in &by_shard {
        if files.len() > 1 {
            problems.push(format!(
                "shard {k} is given {} times: {}",
                files.len(),
                files.join(", ")
            ));
        }
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut duplicated = Vec::new();
    for v in views {
        for n in &v.names {
            if let Some(other) = seen.insert(n, &v.origin) {
                duplicated.push(format!("{n} (in {other} and {})", v.origin));
            }
        }
    }
    duplicated.sort();
    if !duplicated.is_empty() {
        problems.push(format!(
            "{} case(s) are in more than one file:{}",
            duplicated.len(),
            quote(&duplicated)
        ));
    }
    if let Some(n) = views.iter().find_map(|v| v.identity.shard.map(|s| s.total)) {
        let absent: Vec<String> = (1..=n)
            .filter(|k| !by_shard.contains_key(k))
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !absent.is_empty() {
            problems.push(format!("shard(s) {} are missing", absent.join(", ")));
        }
    }
    let union = CaseSpaceHash::of(seen.keys().copied());
    if union.hex() == space.hash && union.count() == space.cases {
        return problems;
    }
    match space.selection.expected_names() {
        Ok(expected)
            if CaseSpaceHash::of(expected.iter().map(String::as_str)).hex() == space.hash =>
        {
            let missing: Vec<String> = expected
                .iter()
                .filter(|n| !seen.contains_key(n.as_str()))
                .cloned()
                .collect();
            let foreign: Vec<String> = seen
                .keys()
                .filter(|n| !expected.contains(**n))
                .map(|n| n.to_string())
                .collect();
            if !missing.is_empty() {
                problems.push(format!(
                    "{} case(s) of the run are in no file:{}",
                    missing.len(),
                    quote(&missing)
                ));
            }
            if !foreign.is_empty() {
                problems.push(format!(
                    "{} case(s) are not of the run's case space:{}",
                    foreign.len(),
                    quote(&foreign)
                ));
            }
        }
        listed => {
            let why = match listed {
                Err(e) => e,
                Ok(_) => "this xla-props lists a different case space".into(),
            };
            problems.push(format!(
                "the files hold {} distinct case(s) of the run's {}; the others are not named \
                 ({why}; `TEST_BINARY --list --format terse` with the run's filters lists them)",
                union.count(),
                space.cases
            ));
        }
    }
    problems
}

/// The identity a run's metadata records.
pub(crate) fn identity_of(meta: &RunMetadata) -> RunIdentity {
    let field = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_string());
    let dirty = meta.git_dirty == Some(true);
    RunIdentity {
        seed: meta.seed.map(|s| s.to_string()),
        revision: (meta.git_revision.clone()).map(|r| if dirty { r + "+dirty" } else { r }),
        backends: (meta.backends.iter())
            .map(|b| format!("{} ({})", b.name, field(&b.role)))
            .collect(),
        versions: (meta.backends.iter())
            .map(|b| format!("{} {}", b.name, field(&b.version)))
            .collect(),
        shard: meta.shard,
        case_space: meta.case_space.clone(),
    }
}

/// Reads `--json` results files.
pub fn read_results(paths: &[PathBuf]) -> Result<Vec<(String, RunResults)>, MergeError> {
    paths
        .iter()
        .map(|p| {
            let doc = RunResults::load(p).map_err(|e| MergeError(e.0))?;
            Ok((p.display().to_string(), doc))
        })
        .collect()
}

/// Merges the `--json` results of a run's shards (`(origin, document)`, as
/// [`read_results`] gives them) into the run's: checked to be one run and
/// to cover it exactly, cases ordered by name, totals recomputed.
///
/// ```
/// use xla_props::report::RunResults;
/// use xla_props::runner::{merge_results, MergeOptions};
/// let doc = RunResults::parse(
///     r#"{"cases": [{"id": "p::add::f32::f32[1]{0}::uniform::interpreter", "outcome": "passed"}],
///         "metadata": {"seed": 0}}"#,
///     "a.json",
/// )
/// .unwrap();
/// let e = merge_results(vec![("a.json".into(), doc)], MergeOptions::default()).unwrap_err();
/// assert!(e.0.contains("a.json: no case-space identity"), "{e}");
/// ```
pub fn merge_results(
    docs: Vec<(String, RunResults)>,
    options: MergeOptions,
) -> Result<RunResults, MergeError> {
    let views: Vec<ShardView> = docs
        .iter()
        .map(|(origin, doc)| ShardView {
            origin: origin.clone(),
            identity: identity_of(&doc.metadata.clone().unwrap_or_default()),
            names: doc.cases.iter().map(|c| c.id.clone()).collect(),
        })
        .collect();
    let mixed = check_shards(&views, options)?;
    let mut cases = Vec::new();
    let mut families = BTreeMap::new();
    let mut metas = Vec::new();
    let mut isolations = Vec::new();
    for (origin, doc) in docs {
        cases.extend(doc.cases);
        families.extend(doc.families);
        isolations.extend(doc.isolations);
        metas.push((origin, doc.metadata.unwrap_or_default()));
    }
    let mut merged = RunResults::of_cases(cases, families, Some(merged_metadata(metas, &mixed)));
    merged.isolations = isolations;
    Ok(merged)
}

/// The first shard's metadata without its shard; timings and hosts over all
/// shards; `shards` (one entry each); `mixed` when merged with `--allow-mixed`.
fn merged_metadata(metas: Vec<(String, RunMetadata)>, mixed: &Mixed) -> RunMetadata {
    let mut out = metas.first().map(|m| m.1.clone()).unwrap_or_default();
    out.shard = None;
    let all = || metas.iter().map(|(_, m)| m);
    out.started_at = all().filter_map(|m| m.started_at.clone()).min();
    out.duration_ms = all().filter_map(|m| m.duration_ms).max();
    let hosts: BTreeSet<&str> = all().filter_map(|m| m.host.as_deref()).collect();
    if !hosts.is_empty() {
        out.host = Some(hosts.into_iter().collect::<Vec<_>>().join(", "));
    }
    let cores: u64 = all().filter_map(|m| m.cores).sum();
    out.cores = (cores > 0).then_some(cores).or(out.cores);
    let shards: Vec<Value> = metas
        .iter()
        .map(|(origin, m)| {
            let mut s = Map::new();
            s.insert("file".into(), origin.as_str().into());
            if let Some(info) = m.shard {
                s.insert("shard".into(), info.to_string().into());
            }
            let fields = [
                ("host", m.host.clone().map(Value::from)),
                ("started_at", m.started_at.clone().map(Value::from)),
                ("duration_ms", m.duration_ms.map(Value::from)),
                ("command", m.command.clone().map(Value::from)),
            ];
            for (k, v) in fields {
                if let Some(v) = v {
                    s.insert(k.into(), v);
                }
            }
            Value::Object(s)
        })
        .collect();
    out.extra.insert("shards".into(), Value::Array(shards));
    if !mixed.is_empty() {
        out.extra.insert(
            "mixed".into(),
            serde_json::to_value(mixed).unwrap_or_default(),
        );
    }
    out
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
