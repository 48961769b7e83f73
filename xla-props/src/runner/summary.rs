//! Reporters of a run's events: the end-of-run table and the `--json`
//! results (in `report`'s schema); and the case-space composition (`--summary`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::events::{CaseFinished, Reporter, RunEvent};
use super::table::{render, Align};
use crate::check::LegalReason;
use crate::hlo::Category;
use crate::property::{BackendId, CaseContext, CaseId, CaseSpace, Tolerance};
use crate::report::{CaseResult, Counts, HistogramBucket, RunResults};

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

/// The end-of-run table (backend × op family, passed / failed / skipped)
/// and the elements each legal difference accepted.
#[derive(Default)]
pub struct SummaryReporter {
    cells: BTreeMap<(&'static str, &'static str), Counts>,
    legal: BTreeMap<LegalReason, u64>,
}

impl Reporter for SummaryReporter {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::CaseFinished(c) => {
                self.cells
                    .entry((c.id.backend.name(), family(&c.id)))
                    .or_default()
                    .add(&c.outcome);
                for (reason, n) in &c.measured.legal {
                    *self.legal.entry(*reason).or_insert(0) += n;
                }
            }
            RunEvent::Finished { .. } if !self.cells.is_empty() => print!("{}", self.table()),
            _ => {}
        }
        Ok(())
    }
}

impl SummaryReporter {
    /// The table, and the elements accepted per legal difference.
    pub fn table(&self) -> String {
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
        let mut rows: Vec<Vec<String>> =
            self.cells.iter().map(|((b, f), t)| row(b, f, t)).collect();
        let mut total = Counts::default();
        for t in self.cells.values() {
            total.passed += t.passed;
            total.failed += t.failed;
            total.skipped += t.skipped;
        }
        rows.push(row("total", "", &total));
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
        if !self.legal.is_empty() {
            let _ = writeln!(out, "\nelements accepted by a legal difference, by reason");
            for (reason, n) in &self.legal {
                let _ = writeln!(out, "  {:<30} {n:>12}", reason.name());
            }
        }
        out
    }
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

/// The `--json` report: one [`CaseResult`] per case (the schema `report`
/// declares and reads), written with the totals, the families of the ops and
/// the run's metadata when the run ends.
pub struct JsonReporter {
    path: PathBuf,
    cases: Vec<CaseResult>,
    families: BTreeMap<String, String>,
}

impl JsonReporter {
    /// Writes to `path` when the run ends.
    pub fn new(path: PathBuf) -> JsonReporter {
        JsonReporter {
            path,
            cases: Vec::new(),
            families: BTreeMap::new(),
        }
    }
}

/// A finished case as the JSON records it.
pub fn case_result(c: &CaseFinished) -> CaseResult {
    let m = &c.measured;
    let mut r = CaseResult::new(c.id.to_string(), c.outcome.bare());
    r.verdict = c.outcome.failure().map(|f| f.summary.clone());
    r.max_ulp = m.max_ulp;
    r.legal = m
        .legal
        .iter()
        .map(|(k, v)| (k.name().to_string(), *v))
        .collect();
    r.budget = m.budget.clone();
    r.worst_mismatch = m.worst_mismatch.clone();
    r.ulp_histogram = m.ulp_histogram.as_ref().map(|h| {
        h.iter()
            .map(|b| HistogramBucket {
                ulp: b.ulp.clone(),
                count: b.count,
            })
            .collect()
    });
    r.rerun = c.rerun.clone();
    r.reproducer = c.artifacts.as_ref().map(|a| a.dir.display().to_string());
    r.message = c.message.clone();
    r.duration_us = Some(c.duration.as_micros() as u64);
    r
}

impl Reporter for JsonReporter {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::CaseFinished(c) => {
                let op = c.id.key.op.name();
                if !self.families.contains_key(op) {
                    self.families
                        .insert(op.to_string(), family(&c.id).to_string());
                }
                self.cases.push(case_result(c));
                Ok(())
            }
            RunEvent::Finished { metadata, .. } => {
                let cases = std::mem::take(&mut self.cases);
                let families = std::mem::take(&mut self.families);
                let doc = RunResults::of_cases(cases, families, metadata.cloned());
                write_json(&self.path, &doc)
            }
            RunEvent::Started { .. } => Ok(()),
        }
    }
}

/// Writes a results document as JSON.
pub fn write_json(path: &Path, doc: &RunResults) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    let file = std::fs::File::create(path)
        .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut out, doc)
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
    use super::*;
    use crate::check::{Side, Verdict};
    use crate::property::{Failure, Outcome};

    fn id() -> CaseId {
        "vs_reference::add::f32::f32[7]{0}::uniform::interpreter"
            .parse()
            .expect("a case name")
    }

    #[test]
    fn a_backend_rejection_is_written_as_its_own_kind() {
        let rejected = Verdict::OnlyOneFailed {
            failed: Side::Backend,
            error: "compile error: iree-compile: x".into(),
        };
        let failure = Box::new(Failure {
            summary: "only the backend failed".into(),
            verdict: Some(rejected),
        });
        let c = CaseFinished::new(id(), Outcome::Rejected(failure), Some("m".into()));
        let json = serde_json::to_value(case_result(&c)).unwrap();
        assert_eq!(json["outcome"], "failed");
        assert_eq!(json["kind"], "rejected");
        assert_eq!(json["verdict"], "only the backend failed");
        let plain = CaseFinished::new(id(), Outcome::fail("x"), None);
        let json = serde_json::to_value(case_result(&plain)).unwrap();
        assert!(json.get("kind").is_none(), "{json}");
    }

    #[test]
    fn the_summary_and_json_count_elements_per_legal_reason() {
        let mut a = CaseFinished::new(id(), Outcome::Pass, None);
        a.measured.legal.insert(LegalReason::Reassociation, 4);
        a.measured.legal.insert(LegalReason::PropagatedBound, 1);
        let mut b = CaseFinished::new(id(), Outcome::Pass, None);
        b.measured.legal.insert(LegalReason::PropagatedBound, 2);
        let mut summary = SummaryReporter::default();
        for c in [&a, &b] {
            summary.event(&RunEvent::CaseFinished(c)).unwrap();
        }
        let table = summary.table();
        assert!(
            table.contains("elements accepted by a legal difference"),
            "{table}"
        );
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with("propagated-bound"))
            .expect("a propagated-bound line");
        assert!(line.trim_end().ends_with(" 3"), "{line}");
        let json = serde_json::to_value(case_result(&a)).unwrap();
        assert_eq!(json["legal"]["reassociation"], 4);
        let plain = CaseFinished::new(id(), Outcome::Pass, None);
        let json = serde_json::to_value(case_result(&plain)).unwrap();
        assert!(json.get("legal").is_none());
        let doc = RunResults::of_cases(
            vec![case_result(&a), case_result(&b)],
            BTreeMap::new(),
            None,
        );
        assert_eq!(doc.legal["propagated-bound"], 3);
        assert_eq!(doc.passed, Some(2));
    }
}
