//! Writing a report: read a run's results (and an earlier run, isolation
//! reports and a triage), render the page, write it.

use std::path::{Path, PathBuf};

use super::graph::graph_from_module;
use super::html::{render_html, ReportOptions};
use super::results::{Isolation, ReportError, RunResults};
use super::triage::TriageLinks;

/// Reads `results` (and `compare`, and isolation reports), renders the page and writes it to `out`.
///
/// ```no_run
/// use std::path::Path;
/// xla_props::report::write_report(Path::new("results.json"), Path::new("report.html"), None, &[])
///     .unwrap();
/// ```
pub fn write_report(
    results: &Path,
    out: &Path,
    compare: Option<&Path>,
    isolations: &[PathBuf],
) -> Result<(), ReportError> {
    write_report_triaged(results, out, compare, isolations, None)
}

/// [`write_report`], with each failure linked to its group of a triage
/// (`triage.json` of `xla-props triage`).
pub fn write_report_triaged(
    results: &Path,
    out: &Path,
    compare: Option<&Path>,
    isolations: &[PathBuf],
    triage: Option<&Path>,
) -> Result<(), ReportError> {
    let triage = triage.map(TriageLinks::load).transpose()?;
    let run = RunResults::load(results)?;
    write_report_of(
        run,
        &results.display().to_string(),
        out,
        compare,
        isolations,
        triage,
    )
}

/// Renders `run` (read from `results_name`: a file, or the shards merged
/// into it) with `compare`, isolation reports and a triage's groups, and
/// writes the page to `out`.
pub fn write_report_of(
    run: RunResults,
    results_name: &str,
    out: &Path,
    compare: Option<&Path>,
    isolations: &[PathBuf],
    triage: Option<TriageLinks>,
) -> Result<(), ReportError> {
    let old = compare.map(RunResults::load).transpose()?;
    let mut extra = isolations
        .iter()
        .map(|p| Isolation::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    // `xla-props isolate`'s report names its module: draw the culprit's computation from it
    for (iso, path) in extra.iter_mut().zip(isolations) {
        let _ = graph_from_module(iso, path.parent());
    }
    let options = ReportOptions {
        title: "xla-props report".into(),
        results_name: results_name.to_string(),
        compare_name: compare.map(|p| p.display().to_string()),
        triage,
    };
    let page = render_html(&run, old.as_ref(), &extra, &options)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| ReportError(format!("failed to create {}: {e}", dir.display())))?;
    }
    std::fs::write(out, page)
        .map_err(|e| ReportError(format!("failed to write {}: {e}", out.display())))
}
