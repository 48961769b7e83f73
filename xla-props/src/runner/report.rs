//! Reports built from the records of a run: the end-of-run table, JUnit, JSON,
//! and the case-space composition (`--summary`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::metadata::RunMetadata;
use super::table::{render, Align};
use crate::check::{HistogramBucket, LegalReason, Side, Verdict};
use crate::hlo::Category;
use crate::property::{BackendId, CaseContext, CaseId, CaseSpace, Tolerance};
use crate::report::{CaseStatus, Counts};

/// How a case ended, finer than [`CaseStatus`]: expected failures and
/// unexpected passes are told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaseKind {
    /// Passed.
    Pass,
    /// Passed although declared an expected failure (counted as passed).
    XPass,
    /// Failed.
    Fail,
    /// Skipped: not applicable, unsupported, or a skip limitation.
    Skip,
    /// Failed as declared by an expected-failure limitation (counted as skipped).
    XFail,
    /// Failed because the backend rejected or crashed on a module the
    /// reference runs (a compile error, a crash, a timeout): no values were
    /// judged, so it is not reported as wrong values (counted as failed).
    Rejected,
}

impl CaseKind {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            CaseKind::Pass => "pass",
            CaseKind::XPass => "xpass",
            CaseKind::Fail => "fail",
            CaseKind::Skip => "skip",
            CaseKind::XFail => "xfail",
            CaseKind::Rejected => "rejected",
        }
    }

    /// The status it counts as.
    pub fn status(self) -> CaseStatus {
        match self {
            CaseKind::Pass | CaseKind::XPass => CaseStatus::Passed,
            CaseKind::Fail | CaseKind::Rejected => CaseStatus::Failed,
            CaseKind::Skip | CaseKind::XFail => CaseStatus::Skipped,
        }
    }

    /// How a failed case with this verdict is reported: the backend
    /// rejecting or crashing on a module the reference runs is
    /// [`CaseKind::Rejected`], not a value mismatch.
    pub fn of_failure(verdict: Option<&Verdict>) -> CaseKind {
        match verdict {
            Some(Verdict::OnlyOneFailed {
                failed: Side::Backend,
                ..
            }) => CaseKind::Rejected,
            _ => CaseKind::Fail,
        }
    }

    /// True when the status alone says it (so the JSON leaves `kind` out).
    fn implied_by_status(self) -> bool {
        matches!(self, CaseKind::Pass | CaseKind::Fail | CaseKind::Skip)
    }
}

/// What the runner remembers of one executed case.
#[derive(Clone, Debug)]
pub struct CaseRecord {
    /// The case.
    pub id: CaseId,
    /// How it ended.
    pub status: CaseStatus,
    /// How it ended, telling expected failures and unexpected passes apart.
    pub kind: CaseKind,
    /// The failure report or the skip reason.
    pub message: Option<String>,
    /// One line: what failed (failures and expected failures).
    pub verdict: Option<String>,
    /// The largest ULP distance seen by the checker.
    pub max_ulp: Option<u64>,
    /// Elements the judge accepted by each legal difference (empty: none).
    pub legal: BTreeMap<LegalReason, u64>,
    /// What its ULP distances were judged against: the property's tolerance
    /// and the backend's declared budget for the op and dtype.
    pub budget: Option<String>,
    /// The worst mismatch, as text.
    pub worst_mismatch: Option<String>,
    /// ULP distances of every compared float element (non-empty buckets, in
    /// order); kept only when the run writes `--json`.
    pub ulp_histogram: Option<Vec<HistogramBucket>>,
    /// The command that reruns this case (failures).
    pub rerun: Option<String>,
    /// The directory of its reproducer (failures whose module was captured).
    pub reproducer: Option<PathBuf>,
    /// Wall time of the case.
    pub duration: Duration,
}

impl CaseRecord {
    /// A record of `kind` with nothing else known yet.
    pub fn new(id: CaseId, kind: CaseKind) -> CaseRecord {
        CaseRecord {
            id,
            status: kind.status(),
            kind,
            message: None,
            verdict: None,
            max_ulp: None,
            legal: BTreeMap::new(),
            budget: None,
            worst_mismatch: None,
            ulp_histogram: None,
            rerun: None,
            reproducer: None,
            duration: Duration::ZERO,
        }
    }

    /// A skipped case with its reason.
    pub fn skipped(id: CaseId, why: &str) -> CaseRecord {
        CaseRecord {
            message: Some(why.to_string()),
            ..CaseRecord::new(id, CaseKind::Skip)
        }
    }
}

/// The op family shown in tables.
pub fn family(id: &CaseId) -> &'static str {
    match id.key.op.category() {
        Category::ElementwiseUnary | Category::ElementwiseBinary => {
            if id.key.op.category() == Category::ElementwiseUnary {
                "elementwise-unary"
            } else {
                "elementwise-binary"
            }
        }
        c => c.name(),
    }
}

/// Counts over records.
pub fn totals(records: &[CaseRecord]) -> Counts {
    let mut t = Counts::default();
    records.iter().for_each(|r| t.add(r.status));
    t
}

/// The end-of-run table: backend × op family, passed / failed / skipped.
pub fn summary_table(records: &[CaseRecord]) -> String {
    let mut cells: BTreeMap<(&'static str, &'static str), Counts> = BTreeMap::new();
    for r in records {
        cells
            .entry((r.id.backend.name(), family(&r.id)))
            .or_default()
            .add(r.status);
    }
    let mut out = String::from("\nxla-props summary\n");
    let row = |b: &str, f: &str, t: &Counts| {
        vec![
            b.to_string(),
            f.to_string(),
            t.passed.to_string(),
            t.failed.to_string(),
            t.skipped.to_string(),
        ]
    };
    let mut rows: Vec<Vec<String>> = cells.iter().map(|((b, f), t)| row(b, f, t)).collect();
    rows.push(row("total", "", &totals(records)));
    out.push_str(&render(
        &[
            ("backend", Align::Left),
            ("family", Align::Left),
            ("passed", Align::Right),
            ("failed", Align::Right),
            ("skipped", Align::Right),
        ],
        &rows,
    ));
    let legal = legal_totals(records);
    if !legal.is_empty() {
        let _ = writeln!(out, "\nelements accepted by a legal difference, by reason");
        for (reason, n) in &legal {
            let _ = writeln!(out, "  {:<30} {n:>12}", reason.name());
        }
    }
    out
}

/// Elements accepted by each legal difference, over records.
pub fn legal_totals(records: &[CaseRecord]) -> BTreeMap<LegalReason, u64> {
    let mut out = BTreeMap::new();
    for (reason, n) in records.iter().flat_map(|r| r.legal.iter()) {
        *out.entry(*reason).or_insert(0) += n;
    }
    out
}

/// The case-space composition: per property, op family and dtype (counted per backend).
pub fn composition(spaces: &[CaseSpace], backends: &[BackendId]) -> String {
    let nb = backends.len() as u64;
    let mut out = String::new();
    let mut grand = 0u64;
    let _ = writeln!(
        out,
        "xla-props case space (backends: {})",
        backends
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for space in spaces {
        let comp = space.composition();
        let total: u64 = comp.iter().map(|c| c.2).sum();
        grand += total;
        let _ = writeln!(
            out,
            "\nproperty {}: {} cases per backend, {} in all",
            space.spec().name,
            total,
            total * nb
        );
        let mut fam: BTreeMap<&str, u64> = BTreeMap::new();
        let mut dt: BTreeMap<&str, u64> = BTreeMap::new();
        for (op, dtype, n) in &comp {
            let f = match op.category() {
                Category::ElementwiseUnary => "elementwise-unary",
                Category::ElementwiseBinary => "elementwise-binary",
                c => c.name(),
            };
            *fam.entry(f).or_default() += n;
            *dt.entry(dtype.name()).or_default() += n;
        }
        let _ = writeln!(out, "  by family:");
        for (f, n) in fam {
            let _ = writeln!(out, "    {f:<20} {n:>8}");
        }
        let _ = writeln!(out, "  by dtype:");
        for (d, n) in dt {
            let _ = writeln!(out, "    {d:<20} {n:>8}");
        }
    }
    let _ = writeln!(
        out,
        "\ntotal: {grand} cases per backend, {} executions",
        grand * nb
    );
    out
}

/// One case in the JSON report. The property, op, dtype, shape, variant and
/// backend are the parts of `id` (`property::op::dtype::shape::variant::backend`);
/// empty fields are left out, so that a run of 468k cases stays small.
#[derive(Serialize)]
struct JsonCase<'a> {
    id: String,
    outcome: &'static str,
    /// Only `xfail` and `xpass`: the others are what `outcome` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_ulp: Option<u64>,
    /// Elements accepted per legal difference, by reason name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    legal: BTreeMap<&'static str, u64>,
    /// What a ULP distance was judged against (tolerance, declared budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    worst_mismatch: Option<&'a str>,
    /// `{"0": 30, "3-4": 2}`: elements per ULP bucket, in bucket order.
    #[serde(skip_serializing_if = "Option::is_none")]
    ulp_histogram: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rerun: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reproducer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    duration_us: u64,
}

impl<'a> JsonCase<'a> {
    fn new(r: &'a CaseRecord) -> JsonCase<'a> {
        JsonCase {
            id: r.id.to_string(),
            outcome: r.status.name(),
            kind: (!r.kind.implied_by_status()).then(|| r.kind.name()),
            verdict: r.verdict.as_deref(),
            max_ulp: r.max_ulp,
            legal: r.legal.iter().map(|(k, v)| (k.name(), *v)).collect(),
            budget: r.budget.as_deref(),
            worst_mismatch: r.worst_mismatch.as_deref(),
            ulp_histogram: r.ulp_histogram.as_ref().filter(|h| !h.is_empty()).map(|h| {
                h.iter()
                    .map(|b| (b.ulp.clone(), serde_json::Value::from(b.count)))
                    .collect()
            }),
            rerun: r.rerun.as_deref(),
            reproducer: r.reproducer.as_ref().map(|p| p.display().to_string()),
            message: r.message.as_deref(),
            duration_us: r.duration.as_micros() as u64,
        }
    }
}

/// The JSON report: totals, the run's metadata, the family of each op, one object per case.
#[derive(Serialize)]
struct JsonReport<'a> {
    passed: u64,
    failed: u64,
    skipped: u64,
    /// Elements accepted per legal difference over the run, by reason name.
    legal: BTreeMap<&'static str, u64>,
    metadata: &'a RunMetadata,
    /// op name -> family (orders a report's rows).
    families: BTreeMap<&'static str, &'static str>,
    cases: Vec<JsonCase<'a>>,
}

/// Writes the JSON report: totals, the run's metadata and one object per case.
pub fn write_json(
    path: &Path,
    records: &[CaseRecord],
    metadata: &RunMetadata,
) -> Result<(), String> {
    let t = totals(records);
    let doc = JsonReport {
        passed: t.passed,
        failed: t.failed,
        skipped: t.skipped,
        legal: legal_totals(records)
            .into_iter()
            .map(|(k, v)| (k.name(), v))
            .collect(),
        metadata,
        families: records
            .iter()
            .map(|r| (r.id.key.op.name(), family(&r.id)))
            .collect(),
        cases: records.iter().map(JsonCase::new).collect(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    let file = std::fs::File::create(path)
        .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut out, &doc)
        .map_err(|e| format!("failed to write the json report {}: {e}", path.display()))?;
    std::io::Write::flush(&mut out).map_err(|e| format!("failed to write {}: {e}", path.display()))
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("failed to write {}: {e}", path.display()))
}

/// What a case's ULP distances were judged against, when it saw any: the
/// property's tolerance, and the backend's declared budget for the op and
/// dtype (an approximate function), for the report to say why a distance
/// was accepted.
pub(super) fn judged_against(ctx: &CaseContext<'_>) -> Option<String> {
    ctx.max_ulp.filter(|u| *u > 0)?;
    let (op, dtype) = (ctx.case.key.op, ctx.case.key.dtype);
    let tolerance = match ctx.spec.tolerance {
        Tolerance::Exact => "exact".to_string(),
        Tolerance::Ulp(n) => format!("ulp({n})"),
        Tolerance::Abs(x) => format!("abs({x})"),
        Tolerance::Rel(x) => format!("rel({x})"),
    };
    let mut text = format!("{} tolerance {tolerance}", ctx.spec.name);
    if let Some(b) = ctx.numerics().budget(op, dtype) {
        text.push_str(&format!("; declared budget {op} {dtype} {} ulp", b.ulp));
        if b.abs > 0.0 {
            text.push_str(&format!(" or {} absolute", b.abs));
        }
    }
    Some(text)
}

#[cfg(test)]
mod legal_tests {
    #[test]
    fn a_backend_rejection_is_its_own_failure_kind() {
        let rejected = Verdict::OnlyOneFailed {
            failed: Side::Backend,
            error: "compile error: iree-compile: x".into(),
        };
        let reference = Verdict::OnlyOneFailed {
            failed: Side::Reference,
            error: "x".into(),
        };
        assert_eq!(CaseKind::of_failure(Some(&rejected)), CaseKind::Rejected);
        assert_eq!(CaseKind::Rejected.status(), CaseStatus::Failed);
        assert_eq!(CaseKind::Rejected.name(), "rejected");
        assert!(!CaseKind::Rejected.implied_by_status(), "the JSON names it");
        assert_eq!(CaseKind::of_failure(Some(&reference)), CaseKind::Fail);
        assert_eq!(CaseKind::of_failure(None), CaseKind::Fail);
    }

    use super::*;

    #[test]
    fn the_summary_and_json_count_elements_per_legal_reason() {
        let id: CaseId = "vs_reference::add::f32::f32[7]{0}::uniform::interpreter"
            .parse()
            .expect("a case name");
        let mut a = CaseRecord::new(id, CaseKind::Pass);
        a.legal.insert(LegalReason::Reassociation, 4);
        a.legal.insert(LegalReason::PropagatedBound, 1);
        let mut b = CaseRecord::new(id, CaseKind::Pass);
        b.legal.insert(LegalReason::PropagatedBound, 2);
        let records = [a, b];
        let table = summary_table(&records);
        assert!(
            table.contains("elements accepted by a legal difference"),
            "{table}"
        );
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with("propagated-bound"))
            .expect("a propagated-bound line");
        assert!(line.trim_end().ends_with(" 3"), "{line}");
        let json = serde_json::to_value(JsonCase::new(&records[0])).unwrap();
        assert_eq!(json["legal"]["reassociation"], 4);
        let plain = CaseRecord::new(records[0].id, CaseKind::Pass);
        let json = serde_json::to_value(JsonCase::new(&plain)).unwrap();
        assert!(json.get("legal").is_none());
    }
}
