//! What the report reads: the runner's `--json` output, plus optional run
//! metadata and isolation reports. Every field beyond a case's `id` and
//! `outcome` is optional, so the report works with older and newer runners.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// Why a results file could not be read. The message is one lowercase line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

/// How a case ended, as the runner writes it (`"passed"`, `"failed"`, `"skipped"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseStatus {
    /// The property held.
    Passed,
    /// The property failed (or an expected failure passed).
    Failed,
    /// Not applicable, unsupported, a skip limitation, or an expected failure.
    Skipped,
}

impl CaseStatus {
    /// Lowercase name, as the runner writes it.
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Failed => "failed",
            CaseStatus::Skipped => "skipped",
        }
    }
}

/// One bucket of a ULP histogram, as the comparator writes it:
/// `{"ulp": "3-4", "count": 12}` (labels `0`, `1`, `2`, `3-4`, `5-8`, ...,
/// `>2^31`, `nan/inf/sign`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct HistogramBucket {
    /// The bucket's label.
    pub ulp: String,
    /// Elements in it.
    pub count: u64,
}

/// One case of the run (one object of the runner's `cases` array).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CaseResult {
    /// The case name, `property::op::dtype::shape::variant::backend`.
    pub id: String,
    /// The property (else taken from the id).
    pub property: Option<String>,
    /// The op (else taken from the id).
    pub op: Option<String>,
    /// The dtype (else taken from the id).
    pub dtype: Option<String>,
    /// The op family, used to order the heatmap rows.
    pub family: Option<String>,
    /// The backend (else taken from the id).
    pub backend: Option<String>,
    /// How it ended (`None` only in invalid input; `load` rejects it).
    pub outcome: Option<CaseStatus>,
    /// The failure report or the skip reason.
    pub message: Option<String>,
    /// The largest ULP distance the checker saw.
    pub max_ulp: Option<u64>,
    /// Elements the judge accepted per legal difference, by reason name.
    pub legal: std::collections::BTreeMap<String, u64>,
    /// What the case was judged against: the property's tolerance and the
    /// backend's declared budget for the op and dtype, as text.
    pub budget: Option<String>,
    /// The worst mismatch, as text.
    pub worst_mismatch: Option<String>,
    /// Wall time of the case.
    pub duration_us: Option<u64>,
    /// The verdict, as text (else the message's `verdict:` line).
    pub verdict: Option<String>,
    /// A command that reruns this case (else the message's `rerun:` line).
    pub rerun: Option<String>,
    /// The reproducer directory (else the message's `reproducer:` line).
    pub reproducer: Option<String>,
    /// ULP distances over every compared element: a list of buckets, or a
    /// map from bucket label to count (`{"0": 30, "3-4": 2}`, what the runner writes).
    #[serde(deserialize_with = "histogram")]
    pub ulp_histogram: Option<Vec<HistogramBucket>>,
    /// `xfail` (an expected failure, counted as skipped) or `xpass` (an
    /// expected failure that passed); absent when the outcome says it all.
    pub kind: Option<String>,
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

/// The first line of `message` that starts with `key: `, without the key.
fn message_line<'a>(message: Option<&'a str>, key: &str) -> Option<&'a str> {
    message?.lines().find_map(|l| {
        l.trim_start()
            .strip_prefix(key)
            .and_then(|r| r.strip_prefix(": "))
    })
}

impl CaseResult {
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

    /// The outcome (`load` guarantees it is present).
    pub fn outcome(&self) -> CaseStatus {
        self.outcome.unwrap_or(CaseStatus::Skipped)
    }

    /// The verdict: the field, else the message's `verdict:` line, else its first line.
    pub fn verdict(&self) -> Option<&str> {
        self.verdict
            .as_deref()
            .or_else(|| message_line(self.message.as_deref(), "verdict"))
            .or_else(|| self.message.as_deref().and_then(|m| m.lines().next()))
    }

    /// The command that reruns this case: the field, else the message's `rerun:` line.
    pub fn rerun(&self) -> Option<&str> {
        self.rerun
            .as_deref()
            .or_else(|| message_line(self.message.as_deref(), "rerun"))
    }

    /// The reproducer directory: the field, else the message's `reproducer:` line.
    pub fn reproducer(&self) -> Option<&str> {
        self.reproducer
            .as_deref()
            .or_else(|| message_line(self.message.as_deref(), "reproducer"))
    }
}

/// A backend named in the metadata, with its version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct BackendInfo {
    /// The backend's name.
    pub name: String,
    /// Its version (for `xla-cpu`, the PJRT plugin's).
    pub version: Option<String>,
    /// Whether it could run.
    pub available: Option<bool>,
    /// Why not, when it could not.
    pub reason: Option<String>,
    /// Its part in the run: `under test` or `reference`.
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

/// What the run says about itself (the top-level `metadata` object).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RunMetadata {
    /// The backends and their versions.
    #[serde(deserialize_with = "backend_list")]
    pub backends: Vec<BackendInfo>,
    /// The input seed.
    pub seed: Option<u64>,
    /// The git revision of the code under test.
    pub git_revision: Option<String>,
    /// Whether tracked files differed from that revision.
    pub git_dirty: Option<bool>,
    /// The machine the run ran on.
    pub host: Option<String>,
    /// Cores available to the run.
    pub cores: Option<u64>,
    /// Wall time of the whole run, in milliseconds.
    pub duration_ms: Option<u64>,
    /// When the run started (any text, e.g. RFC 3339).
    pub started_at: Option<String>,
    /// The command line of the run.
    pub command: Option<String>,
    /// Anything else; shown as key/value rows.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Where isolation put the blame.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
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
#[derive(Clone, Debug, Default, Deserialize)]
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

/// A run's results: the runner's `--json` document.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RunResults {
    /// Every case.
    pub cases: Vec<CaseResult>,
    /// What the run says about itself.
    pub metadata: Option<RunMetadata>,
    /// Isolation reports of this run's failures.
    pub isolations: Vec<Isolation>,
    /// The family of each op (orders the heatmap rows), for cases without a `family`.
    pub families: BTreeMap<String, String>,
}

impl RunResults {
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
            if c.outcome.is_none() {
                return Err(ReportError(format!(
                    "{origin}: case {i} (`{}`) has no `outcome`",
                    c.id
                )));
            }
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
