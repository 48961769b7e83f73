//! What the report reads: the runner's `--json` output, plus optional run
//! metadata and isolation reports. Every field beyond a case's `id` and
//! `outcome` is optional, so the report works with older and newer runners.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::identity::{CaseSpaceId, ShardInfo};
use super::outcome::{deserialize_status, serialize_status, Counts, Outcome};

/// Why a results file could not be read. The message is one lowercase line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

/// One bucket of a ULP histogram, as the comparator writes it:
/// `{"ulp": "3-4", "count": 12}` (labels `0`, `1`, `2`, `3-4`, `5-8`, ...,
/// `>2^31`, `nan/inf/sign`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramBucket {
    /// The bucket's label.
    pub ulp: String,
    /// Elements in it.
    pub count: u64,
}

/// One case of the run (one object of the runner's `cases` array): what
/// the runner writes and what `report`, `merge` and triage read. Every field
/// beyond `id` and `outcome` is optional; empty ones are not written, so
/// that a run of 468k cases stays small.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseResult {
    /// The case name, `property::op::dtype::shape::variant::backend`.
    pub id: String,
    /// The property (else taken from the id). This and the next four are
    /// read only: derived from the id (or `families`), never written.
    #[serde(skip_serializing)]
    pub property: Option<String>,
    /// The op (else taken from the id).
    #[serde(skip_serializing)]
    pub op: Option<String>,
    /// The dtype (else taken from the id).
    #[serde(skip_serializing)]
    pub dtype: Option<String>,
    /// The op family, used to order the heatmap rows.
    #[serde(skip_serializing)]
    pub family: Option<String>,
    /// The backend (else taken from the id).
    #[serde(skip_serializing)]
    pub backend: Option<String>,
    /// How it ended (`None` only in invalid input; `parse` rejects it).
    /// Written as `outcome` (what it counts as) and `kind` (`xfail`,
    /// `xpass`, `rejected`; absent when `outcome` says it all).
    #[serde(
        serialize_with = "serialize_status",
        deserialize_with = "deserialize_status"
    )]
    pub outcome: Option<Outcome<()>>,
    /// The JSON's `kind`, as read or as written (see `outcome`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    /// One line: what failed (failures and expected failures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The largest ULP distance the checker saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ulp: Option<u64>,
    /// Elements the judge accepted per legal difference, by reason name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub legal: BTreeMap<String, u64>,
    /// What the case was judged against: the property's tolerance and the
    /// backend's declared budget for the op and dtype, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The worst mismatch, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_mismatch: Option<String>,
    /// ULP distances over every compared element: read as a list of
    /// buckets or a map from bucket label to count; written as the map
    /// (`{"0": 30, "3-4": 2}`), buckets in order.
    #[serde(
        deserialize_with = "histogram",
        serialize_with = "histogram_map",
        skip_serializing_if = "no_histogram"
    )]
    pub ulp_histogram: Option<Vec<HistogramBucket>>,
    /// A command that reruns this case (failures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
    /// The reproducer directory (failures whose module was captured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    /// The failure report or the skip reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Wall time of the case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
}

fn no_histogram(h: &Option<Vec<HistogramBucket>>) -> bool {
    h.as_ref().is_none_or(Vec::is_empty)
}

fn histogram_map<S: serde::Serializer>(
    h: &Option<Vec<HistogramBucket>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let buckets = h.as_deref().unwrap_or_default();
    let mut map = s.serialize_map(Some(buckets.len()))?;
    for b in buckets {
        map.serialize_entry(&b.ulp, &b.count)?;
    }
    map.end()
}

/// `ulp_histogram` as a list of buckets or a map from label to count.
#[derive(Deserialize)]
#[serde(untagged)]
enum HistogramForm {
    List(Vec<HistogramBucket>),
    Map(BTreeMap<String, u64>),
}

fn histogram<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<HistogramBucket>>, D::Error> {
    Ok(match Option::<HistogramForm>::deserialize(d)? {
        None => None,
        Some(HistogramForm::List(v)) => Some(v),
        Some(HistogramForm::Map(m)) => Some(
            m.into_iter()
                .map(|(ulp, count)| HistogramBucket { ulp, count })
                .collect(),
        ),
    })
}

/// The part of a case name at `index` (0 property, 1 op, 2 dtype, last backend).
fn id_part(id: &str, index: usize) -> Option<&str> {
    let parts: Vec<&str> = id.split("::").collect();
    if parts.len() < 4 {
        return None;
    }
    if index == usize::MAX {
        parts.last().copied()
    } else {
        parts.get(index).copied()
    }
}

impl CaseResult {
    /// A case of `outcome` with nothing else known yet (what the runner
    /// fills in).
    pub fn new(id: String, outcome: Outcome<()>) -> CaseResult {
        CaseResult {
            id,
            kind: outcome.kind_name().map(str::to_string),
            outcome: Some(outcome),
            ..CaseResult::default()
        }
    }

    /// Sets the property, op, dtype and backend the runner left out from the
    /// id, once, so the accessors need not split the id again.
    fn fill_from_id(&mut self) {
        let parts: Vec<&str> = self.id.split("::").collect();
        if parts.len() < 4 {
            return;
        }
        let fill = |f: &mut Option<String>, v: &str| {
            if f.is_none() {
                *f = Some(v.to_string());
            }
        };
        fill(&mut self.property, parts[0]);
        fill(&mut self.op, parts[1]);
        fill(&mut self.dtype, parts[2]);
        fill(&mut self.backend, parts[parts.len() - 1]);
    }

    /// The property, from the field or the id.
    pub fn property(&self) -> &str {
        self.property
            .as_deref()
            .or_else(|| id_part(&self.id, 0))
            .unwrap_or("unknown")
    }

    /// The op, from the field or the id.
    pub fn op(&self) -> &str {
        self.op
            .as_deref()
            .or_else(|| id_part(&self.id, 1))
            .unwrap_or("unknown")
    }

    /// The dtype, from the field or the id.
    pub fn dtype(&self) -> &str {
        self.dtype
            .as_deref()
            .or_else(|| id_part(&self.id, 2))
            .unwrap_or("unknown")
    }

    /// The backend, from the field or the id.
    pub fn backend(&self) -> &str {
        self.backend
            .as_deref()
            .or_else(|| id_part(&self.id, usize::MAX))
            .unwrap_or("unknown")
    }

    /// How it ended (`parse` guarantees it is present).
    pub fn outcome(&self) -> &Outcome<()> {
        const SKIPPED: &Outcome<()> = &Outcome::Skip(String::new());
        self.outcome.as_ref().unwrap_or(SKIPPED)
    }

    /// The verdict: the field, else the message's first line.
    pub fn verdict(&self) -> Option<&str> {
        self.verdict
            .as_deref()
            .or_else(|| self.message.as_deref().and_then(|m| m.lines().next()))
    }

    /// The command that reruns this case.
    pub fn rerun(&self) -> Option<&str> {
        self.rerun.as_deref()
    }

    /// The reproducer directory.
    pub fn reproducer(&self) -> Option<&str> {
        self.reproducer.as_deref()
    }
}

/// A backend of a run, with its version and its part in the run: what the
/// runner writes in its metadata and the report reads (the one record of a
/// run's backend; the registry's entries are `backend::KnownBackend`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackendInfo {
    /// The backend's name.
    pub name: String,
    /// Its version, when it declares one (for `xla-cpu`, the PJRT plugin's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether it could run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    /// Why not, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its part in the run: `under test`, `reference`, or `under test and reference`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// `backends` as a list of objects or as a map from name to version.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum BackendList {
    List(Vec<BackendInfo>),
    Map(BTreeMap<String, Option<String>>),
}

fn backend_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<BackendInfo>, D::Error> {
    Ok(match Option::<BackendList>::deserialize(d)? {
        None => Vec::new(),
        Some(BackendList::List(v)) => v,
        Some(BackendList::Map(m)) => m
            .into_iter()
            .map(|(name, version)| BackendInfo {
                name,
                version,
                ..BackendInfo::default()
            })
            .collect(),
    })
}

/// What the run says about itself (the top-level `metadata` object), as
/// the runner writes it and the report, `merge` and triage read it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunMetadata {
    /// The backends under test, then the reference.
    #[serde(deserialize_with = "backend_list")]
    pub backends: Vec<BackendInfo>,
    /// The input seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The git revision of the code under test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// Whether tracked files differed from that revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_dirty: Option<bool>,
    /// When the run started (RFC 3339 in UTC, from the runner).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Wall time of the whole run, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The command line of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The machine the run ran on: host name, OS and architecture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Cores available to the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u64>,
    /// The xla-props version that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xla_props: Option<String>,
    /// The shard this process ran; absent for a whole run (and a merged one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The case space the unsharded run selects: shards of one run share it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_space: Option<CaseSpaceId>,
    /// Anything else (a merged run's `shards` and `mixed`); shown as key/value rows.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Where isolation put the blame.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Culprit {
    /// The computation holding the culprit.
    pub computation: Option<String>,
    /// The culprit fusion instruction.
    pub fusion: Option<String>,
    /// The first diverging instruction inside it.
    pub instruction: Option<String>,
}

/// A node of the culprit fusion's graph: a name, or an object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GraphNode {
    /// Just the instruction's name.
    Name(String),
    /// The instruction's name and, optionally, its opcode.
    Detailed {
        /// The instruction's name.
        name: String,
        /// Its opcode.
        #[serde(default)]
        opcode: Option<String>,
    },
}

impl GraphNode {
    /// The instruction's name.
    pub fn name(&self) -> &str {
        match self {
            GraphNode::Name(n) | GraphNode::Detailed { name: n, .. } => n,
        }
    }

    /// The instruction's opcode, when given.
    pub fn opcode(&self) -> Option<&str> {
        match self {
            GraphNode::Name(_) => None,
            GraphNode::Detailed { opcode, .. } => opcode.as_deref(),
        }
    }
}

/// An edge of the culprit fusion's graph (operand to user): `["a", "b"]` or `{"from": "a", "to": "b"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GraphEdge {
    /// `[from, to]`.
    Pair(String, String),
    /// `{"from", "to"}`.
    Named {
        /// The operand.
        from: String,
        /// Its user.
        to: String,
    },
}

impl GraphEdge {
    /// (operand, user).
    pub fn ends(&self) -> (&str, &str) {
        match self {
            GraphEdge::Pair(a, b) | GraphEdge::Named { from: a, to: b } => (a, b),
        }
    }
}

/// One isolation report: the `isolations` array's objects, or the
/// `report.json` that `xla-props isolate` writes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Isolation {
    /// The case or module that was isolated.
    pub case: Option<String>,
    /// The backend that disagreed.
    pub backend: Option<String>,
    /// Where the blame landed.
    pub culprit: Culprit,
    /// The culprit fusion's instructions.
    pub nodes: Vec<GraphNode>,
    /// Operand-to-user edges between them.
    pub edges: Vec<GraphEdge>,
    /// Whether the culprit fusion alone, on its captured inputs, still disagrees.
    pub local: Option<bool>,
    /// Whether splitting the fusion makes the disagreement vanish.
    pub vanishes_when_split: Option<bool>,
    /// The reproducer's path.
    pub reproducer: Option<String>,
    /// Anything else; shown as key/value rows.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A run's results: the runner's `--json` document, as written and read.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunResults {
    /// Cases that passed (written by the runner; readers count `cases`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<u64>,
    /// Cases that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    /// Cases that were skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// Elements accepted per legal difference over the run, by reason name.
    pub legal: BTreeMap<String, u64>,
    /// What the run says about itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<RunMetadata>,
    /// The family of each op (orders the heatmap rows), for cases without a `family`.
    pub families: BTreeMap<String, String>,
    /// Every case, by name.
    pub cases: Vec<CaseResult>,
    /// Isolation reports of this run's failures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub isolations: Vec<Isolation>,
}

impl RunResults {
    /// The document of `cases` (sorted here by name, as every report lists
    /// them): their totals and legal differences, the families of their ops.
    pub fn of_cases(
        mut cases: Vec<CaseResult>,
        families: BTreeMap<String, String>,
        metadata: Option<RunMetadata>,
    ) -> RunResults {
        cases.sort_by(|a, b| a.id.cmp(&b.id));
        let mut totals = Counts::default();
        let mut legal = BTreeMap::new();
        for c in &cases {
            totals.add(c.outcome());
            for (reason, n) in &c.legal {
                *legal.entry(reason.clone()).or_insert(0) += n;
            }
        }
        RunResults {
            passed: Some(totals.passed),
            failed: Some(totals.failed),
            skipped: Some(totals.skipped),
            legal,
            metadata,
            families,
            cases,
            isolations: Vec::new(),
        }
    }

    /// Parses a results document; `origin` names it in error messages.
    ///
    /// ```
    /// use xla_props::report::RunResults;
    /// let r = RunResults::parse(
    ///     r#"{"cases": [{"id": "vs_reference::add::f32::f32[2]{0}::uniform::interpreter", "outcome": "passed"}]}"#,
    ///     "results.json",
    /// ).unwrap();
    /// assert_eq!(r.cases[0].op(), "add");
    /// assert_eq!(r.cases[0].backend(), "interpreter");
    /// assert!(RunResults::parse("{", "results.json").is_err());
    /// ```
    pub fn parse(text: &str, origin: &str) -> Result<RunResults, ReportError> {
        // serde would also take a JSON array, field by field
        if !text.trim_start().starts_with('{') {
            return Err(ReportError(format!(
                "{origin}: not a results file: expected a json object"
            )));
        }
        let mut doc: RunResults = serde_json::from_str(text)
            .map_err(|e| ReportError(format!("{origin}: not a results file: {e}")))?;
        for (i, c) in doc.cases.iter_mut().enumerate() {
            if c.id.is_empty() {
                return Err(ReportError(format!("{origin}: case {i} has no `id`")));
            }
            let Some(status) = c.outcome.as_ref().map(Outcome::status_name) else {
                return Err(ReportError(format!(
                    "{origin}: case {i} (`{}`) has no `outcome`",
                    c.id
                )));
            };
            // `kind` refines `outcome`; a skip's reason is its message
            let refined = Outcome::from_names(status, c.kind.as_deref()).ok_or_else(|| {
                ReportError(format!(
                    "{origin}: case {i} (`{}`): kind `{}` is not a way to be {status}",
                    c.id,
                    c.kind.as_deref().unwrap_or("")
                ))
            })?;
            c.kind = refined.kind_name().map(str::to_string);
            c.outcome = Some(match refined {
                Outcome::Skip(_) => Outcome::Skip(c.message.clone().unwrap_or_default()),
                o => o,
            });
            c.fill_from_id();
            if c.family.is_none() {
                c.family = doc.families.get(c.op()).cloned();
            }
        }
        Ok(doc)
    }

    /// Reads and parses a results file.
    pub fn load(path: &Path) -> Result<RunResults, ReportError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReportError(format!("{origin}: cannot read: {e}")))?;
        RunResults::parse(&text, &origin)
    }
}

impl Isolation {
    /// Reads an isolation report (`report.json` of `xla-props isolate`).
    pub fn load(path: &Path) -> Result<Isolation, ReportError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReportError(format!("{origin}: cannot read: {e}")))?;
        if !text.trim_start().starts_with('{') {
            return Err(ReportError(format!(
                "{origin}: not an isolation report: expected a json object"
            )));
        }
        serde_json::from_str(&text)
            .map_err(|e| ReportError(format!("{origin}: not an isolation report: {e}")))
    }
}
