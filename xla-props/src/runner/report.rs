//! Reports built from the records of a run: the end-of-run table, JUnit, JSON,
//! and the case-space composition (`--summary`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::hlo::Category;
use crate::property::{BackendId, CaseId, CaseSpace};

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseStatus {
    /// The property held.
    Passed,
    /// The property failed (or an expected failure passed).
    Failed,
    /// Not applicable, unsupported, a skip limitation, or an expected failure.
    Skipped,
}

impl CaseStatus {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Failed => "failed",
            CaseStatus::Skipped => "skipped",
        }
    }
}

/// What the runner remembers of one executed case.
#[derive(Clone, Debug)]
pub struct CaseRecord {
    /// The case.
    pub id: CaseId,
    /// How it ended.
    pub status: CaseStatus,
    /// The failure report or the skip reason.
    pub message: Option<String>,
    /// The largest ULP distance seen by the checker.
    pub max_ulp: Option<u64>,
    /// The worst mismatch, as text.
    pub worst_mismatch: Option<String>,
    /// Wall time of the case.
    pub duration: Duration,
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

/// Totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Passed cases.
    pub passed: u64,
    /// Failed cases.
    pub failed: u64,
    /// Skipped (ignored) cases.
    pub skipped: u64,
}

impl Totals {
    fn add(&mut self, s: CaseStatus) {
        match s {
            CaseStatus::Passed => self.passed += 1,
            CaseStatus::Failed => self.failed += 1,
            CaseStatus::Skipped => self.skipped += 1,
        }
    }
}

/// Totals over records.
pub fn totals(records: &[CaseRecord]) -> Totals {
    let mut t = Totals::default();
    records.iter().for_each(|r| t.add(r.status));
    t
}

/// The end-of-run table: backend × op family, passed / failed / skipped.
pub fn summary_table(records: &[CaseRecord]) -> String {
    let mut cells: BTreeMap<(&'static str, &'static str), Totals> = BTreeMap::new();
    for r in records {
        cells
            .entry((r.id.backend.name(), family(&r.id)))
            .or_default()
            .add(r.status);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nxla-props summary\n{:<16} {:<20} {:>9} {:>9} {:>9}",
        "backend", "family", "passed", "failed", "skipped"
    );
    for ((b, f), t) in &cells {
        let _ = writeln!(
            out,
            "{b:<16} {f:<20} {:>9} {:>9} {:>9}",
            t.passed, t.failed, t.skipped
        );
    }
    let t = totals(records);
    let _ = writeln!(
        out,
        "{:<16} {:<20} {:>9} {:>9} {:>9}",
        "total", "", t.passed, t.failed, t.skipped
    );
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

/// Writes a JUnit XML report (one test suite per property).
pub fn write_junit(path: &Path, records: &[CaseRecord]) -> Result<(), String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for r in records {
        let prop = r.id.key.spec().name;
        let suite = suites.entry(prop).or_insert_with(|| TestSuite::new(prop));
        let status = match r.status {
            CaseStatus::Passed => TestCaseStatus::success(),
            CaseStatus::Failed => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                if let Some(m) = &r.message {
                    s.set_description(m.as_str());
                    s.set_message(m.lines().next().unwrap_or(""));
                }
                s
            }
            CaseStatus::Skipped => {
                let mut s = TestCaseStatus::skipped();
                if let Some(m) = &r.message {
                    s.set_message(m.as_str());
                }
                s
            }
        };
        let mut tc = TestCase::new(r.id.to_string(), status);
        tc.set_classname(format!("{}::{}", prop, r.id.key.op));
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

/// Writes the JSON report: totals and one object per case.
pub fn write_json(path: &Path, records: &[CaseRecord]) -> Result<(), String> {
    let t = totals(records);
    let cases: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id.to_string(),
                "property": r.id.key.spec().name,
                "op": r.id.key.op.name(),
                "dtype": r.id.key.dtype.name(),
                "family": family(&r.id),
                "backend": r.id.backend.name(),
                "outcome": r.status.name(),
                "message": r.message,
                "max_ulp": r.max_ulp,
                "worst_mismatch": r.worst_mismatch,
                "duration_us": r.duration.as_micros() as u64,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "passed": t.passed, "failed": t.failed, "skipped": t.skipped,
        "cases": cases,
    });
    let text = serde_json::to_string(&doc)
        .map_err(|e| format!("failed to serialize the json report: {e}"))?;
    write_file(path, text.as_bytes())
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("failed to write {}: {e}", path.display()))
}
