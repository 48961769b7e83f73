//! The report as one self-contained HTML page: inline CSS, inline SVG, one
//! small inline script that records problems, and a Content-Security-Policy
//! that forbids every fetch, so the page cannot reach the network.
//!
//! The heatmap is an HTML table, not a plot: its cells must be in-page links
//! (`<a href="#fail-...">`) with tooltips, and plotters' SVG backend draws
//! shapes and text but has no hyperlink element. Histograms and the fusion
//! graph are drawn with plotters.

use std::fmt::Write as _;

use super::markup::escape;
use super::model::{CellKey, Comparison, RunModel};
use super::outcome::Outcome;
use super::plot;
use super::results::{Isolation, ReportError, RunMetadata, RunResults};

mod heatmap;
mod histograms;

use heatmap::heatmaps;
use histograms::histograms;

/// Failed cases listed per heatmap cell; the rest are counted, not listed,
/// so that a badly broken backend does not make a page of hundreds of MB.
pub const MAX_FAILURES_PER_CELL: usize = 50;
/// Ids listed per comparison category (new failures, fixed, no longer run).
const MAX_LISTED_IDS: usize = 200;

/// What to render and how to name it.
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// The page title.
    pub title: String,
    /// Where the results came from (shown in the metadata).
    pub results_name: String,
    /// Where the older results came from, when comparing.
    pub compare_name: Option<String>,
    /// A triage of the failures: each links to its group.
    pub triage: Option<super::triage::TriageLinks>,
}

/// An id fragment made of `[A-Za-z0-9_-]` only.
fn slug(s: &str) -> String {
    crate::hlo::rewrite::replace_other_chars(s, "_-", '-')
}

/// The in-page anchor of a cell's failures.
pub fn cell_anchor(key: &CellKey) -> String {
    format!("fail-{}-{}-{}", slug(&key.0), slug(&key.1), slug(&key.2))
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top}
th{background:#f5f5f5;text-align:left}
code{font:12px ui-monospace,monospace;word-break:break-all}
.totals span{display:inline-block;padding:2px 8px;border-radius:3px;margin-right:6px}
.passed{background:#c8e6c9}.failed{background:#ffcdd2}.skipped{background:#e0e0e0}
table.heatmap td.cell,table.heatmap td.nocell{width:46px;height:22px;text-align:center;padding:0;font-size:12px}
table.heatmap th{font-weight:normal;font-size:12px}
td.cell a{display:block;color:inherit;text-decoration:none;line-height:22px}
td.cell.pass{background:#66bb6a}td.cell.partpass{background:#c5e1a5}
td.cell.skip{background:#bdbdbd}sup.why{font-size:70%}td.cell.fail{background:#e53935;color:#fff;font-weight:bold}
td.cell.partfail{background:#ef9a9a;font-weight:bold}
td.cell.new{outline:3px solid #6a1b9a;outline-offset:-3px}td.cell.fixed{outline:3px dashed #2e7d32;outline-offset:-3px}
td.nocell{background:#fafafa}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;font-size:12px;border:1px solid #ddd}
tr.group td{background:#fafafa;font-weight:bold}
tr.new td:first-child{border-left:4px solid #6a1b9a}
.badge{font-size:11px;padding:0 4px;border-radius:3px;background:#6a1b9a;color:#fff;margin-left:4px}
.figs{display:flex;flex-wrap:wrap;gap:8px}
figure{margin:0;border:1px solid #eee}figcaption{font-size:12px;padding:2px 6px;color:#555}
figure.ulp-hist{width:380px}
details{margin:6px 0}summary{cursor:pointer}
#console-errors{color:#b71c1c;white-space:pre-wrap}
:target{outline:2px solid #ff9800}
"#;

/// Records script errors, blocked fetches and `console.error` calls into
/// `#console-errors`, so a test (or a reader) can see them in the page itself.
const RECORDER: &str = r#"(function(){var log=[];
function show(){var e=document.getElementById('console-errors');if(e){e.textContent=log.join('\n');e.hidden=log.length===0;}}
function rec(m){log.push(String(m));show();}
window.addEventListener('error',function(ev){var t=ev.target;rec('error: '+(ev.message||(t&&(t.src||t.href))||'a resource failed to load'));},true);
window.addEventListener('unhandledrejection',function(ev){rec('unhandled rejection: '+ev.reason);});
document.addEventListener('securitypolicyviolation',function(ev){rec('blocked by the page policy: '+ev.blockedURI);});
var ce=console.error;console.error=function(){rec('console.error: '+Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments);};
document.addEventListener('DOMContentLoaded',function(){show();document.body.setAttribute('data-rendered','yes');});})();"#;

/// Renders the report page.
///
/// ```
/// use xla_props::report::{render_html, ReportOptions, RunResults};
/// let run = RunResults::parse(r#"{"cases": [
///   {"id": "vs_reference::add::f32::f32[2]{0}::uniform::buggy", "outcome": "failed",
///    "verdict": "mismatch", "rerun": "cargo test --exact 'x'",
///    "message": "backend: buggy\nverdict: mismatch"}]}"#, "run").unwrap();
/// let html = render_html(&run, None, &[], &ReportOptions::default()).unwrap();
/// assert!(html.contains(r##"href="#fail-buggy-add-f32""##));
/// assert!(html.contains("cargo test --exact"));
/// ```
pub fn render_html(
    run: &RunResults,
    old: Option<&RunResults>,
    extra_isolations: &[Isolation],
    options: &ReportOptions,
) -> Result<String, ReportError> {
    let model = RunModel::new(run);
    let cmp = old.map(|o| Comparison::new(o, run));
    let title = if options.title.is_empty() {
        "xla-props report"
    } else {
        options.title.as_str()
    };
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n\
         <title>{}</title>\n<script>{RECORDER}</script>\n<style>{STYLE}</style>\n</head><body>\n",
        escape(title)
    );
    let _ = writeln!(h, "<h1>{}</h1>", escape(title));
    let t = model.totals;
    let _ = writeln!(
        h,
        "<p class=\"totals\" id=\"totals\"><span class=\"passed\">{} passed</span>\
         <span class=\"failed\">{} failed</span><span class=\"skipped\">{} skipped</span>\
         {} cases on {} backend(s)</p>",
        t.passed,
        t.failed,
        t.skipped,
        t.total(),
        model.backends.len()
    );
    let _ = writeln!(h, "<pre id=\"console-errors\" hidden></pre>");
    metadata(&mut h, run, &model, options);
    heatmaps(&mut h, &model, cmp.as_ref());
    if let (Some(c), Some(old)) = (&cmp, old) {
        comparison(&mut h, c, old, run, options);
    }
    failures(&mut h, run, &model, cmp.as_ref(), options);
    super::triage::triage_section(&mut h, options.triage.as_ref());
    legal_differences(&mut h, run, &model);
    histograms(&mut h, &model)?;
    let isolations: Vec<&Isolation> = run.isolations.iter().chain(extra_isolations).collect();
    isolation_section(&mut h, &isolations)?;
    h.push_str("</body></html>\n");
    Ok(h)
}

/// Elements accepted per legal difference (the judge's reasons), per backend.
fn legal_differences(h: &mut String, run: &RunResults, model: &RunModel) {
    let _ = writeln!(h, "<h2 id=\"legal\">Legal differences</h2>");
    let mut counts: std::collections::BTreeMap<&str, std::collections::BTreeMap<&str, u64>> =
        std::collections::BTreeMap::new();
    for c in &run.cases {
        for (reason, n) in &c.legal {
            *counts
                .entry(reason.as_str())
                .or_default()
                .entry(c.backend())
                .or_insert(0) += n;
        }
    }
    if counts.is_empty() {
        h.push_str(
            "<p>No element was accepted by a legal difference (every compared element \
             was exact, or the results carry no <code>legal</code> counts).</p>\n",
        );
        return;
    }
    h.push_str(
        "<p>Elements that differ from the exact reference but that the judge accepted, \
         by the reason that accepted them (the registry of legal differences, \
         <code>docs/numerics.md</code>).</p>\n<table id=\"legal-table\"><tr><th>reason</th>",
    );
    for b in &model.backends {
        let _ = write!(h, "<th>{}</th>", escape(b));
    }
    h.push_str("</tr>\n");
    for (reason, per) in &counts {
        let _ = write!(h, "<tr><td><code>{}</code></td>", escape(reason));
        for b in &model.backends {
            let _ = write!(h, "<td>{}</td>", per.get(b.as_str()).copied().unwrap_or(0));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

fn row(h: &mut String, key: &str, value: &str) {
    let _ = writeln!(h, "<tr><th>{}</th><td>{value}</td></tr>", escape(key));
}

const NOT_RECORDED: &str = "<i>not recorded in the results</i>";

fn metadata(h: &mut String, run: &RunResults, model: &RunModel, options: &ReportOptions) {
    let _ = writeln!(h, "<h2 id=\"run\">Run</h2>\n<table id=\"metadata\">");
    let meta = run.metadata.clone().unwrap_or_default();
    if !options.results_name.is_empty() {
        row(
            h,
            "results",
            &format!("<code>{}</code>", escape(&options.results_name)),
        );
    }
    let mut backends = String::new();
    for b in &model.backends {
        let info = meta.backends.iter().find(|i| &i.name == b);
        let _ = write!(backends, "<code>{}</code>", escape(b));
        match info.and_then(|i| i.version.as_deref()) {
            Some(v) => {
                let _ = write!(backends, " {}", escape(v));
            }
            None => backends.push_str(" <i>(version not recorded)</i>"),
        }
        if info.and_then(|i| i.role.as_deref()) == Some("under test and reference") {
            backends.push_str(" <i>(also the reference)</i>");
        }
        backends.push_str("<br>");
    }
    for i in &meta.backends {
        if !model.backends.contains(&i.name) {
            let why = match (i.available, &i.reason) {
                (Some(false), Some(r)) => format!("unavailable: {}", escape(r)),
                (Some(false), None) => "unavailable".into(),
                _ if i.role.as_deref() == Some("reference") => "the reference".into(),
                _ => "no cases".into(),
            };
            let _ = write!(
                backends,
                "<code>{}</code> {} <i>({why})</i><br>",
                escape(&i.name),
                escape(i.version.as_deref().unwrap_or(""))
            );
        }
    }
    row(h, "backends", &backends);
    let or_missing = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.to_string());
    row(h, "seed", &or_missing(meta.seed.map(|s| s.to_string())));
    let dirty = match meta.git_dirty {
        Some(true) => " <i>(with uncommitted changes to tracked files)</i>",
        Some(false) => " (clean)",
        None => "",
    };
    row(
        h,
        "git revision",
        &or_missing(
            meta.git_revision
                .as_deref()
                .map(|g| format!("<code>{}</code>{dirty}", escape(g))),
        ),
    );
    let duration = match meta.duration_ms {
        Some(ms) => format!("{:.1} s", ms as f64 / 1000.0),
        None if model.case_time_us > 0 => format!(
            "{:.1} s <i>(sum of case times; the run's wall time is not recorded)</i>",
            model.case_time_us as f64 / 1e6
        ),
        None => NOT_RECORDED.to_string(),
    };
    row(h, "duration", &duration);
    if let Some(s) = &meta.started_at {
        row(h, "started", &escape(s));
    }
    if let Some(c) = &meta.command {
        row(h, "command", &format!("<code>{}</code>", escape(c)));
    }
    match (&meta.host, meta.cores) {
        (Some(host), Some(n)) => row(h, "host", &format!("{}, {n} cores", escape(host))),
        (Some(host), None) => row(h, "host", &escape(host)),
        (None, Some(n)) => row(h, "host", &format!("{n} cores")),
        (None, None) => {}
    }
    let (xfail, xpass) = run
        .cases
        .iter()
        .fold((0, 0), |(f, p), c| match c.outcome() {
            Outcome::XFail(()) => (f + 1, p),
            Outcome::XPass => (f, p + 1),
            _ => (f, p),
        });
    if xfail + xpass > 0 {
        row(
            h,
            "expected failures",
            &format!(
                "{xfail} failed as declared (counted as skipped), {xpass} passed although \
                 declared to fail (counted as passed)"
            ),
        );
    }
    other_rows(h, &meta);
    h.push_str("</table>\n");
}

/// The run's identity (case space, shard, xla-props version) and anything
/// else its metadata holds, by key.
fn other_rows(h: &mut String, meta: &RunMetadata) {
    let json = |v: Option<String>| v.filter(|t| !t.is_empty());
    let identity = [
        (
            "case_space",
            json(
                meta.case_space
                    .as_ref()
                    .and_then(|c| serde_json::to_string(c).ok()),
            ),
        ),
        (
            "shard",
            json(
                meta.shard
                    .as_ref()
                    .and_then(|c| serde_json::to_string(c).ok()),
            ),
        ),
        ("xla_props", meta.xla_props.clone()),
    ];
    let extra = meta.extra.iter().map(|(k, v)| {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (k.as_str(), Some(text))
    });
    let mut rows: Vec<(&str, Option<String>)> = identity.into_iter().chain(extra).collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    for (k, text) in rows {
        if let Some(text) = text {
            row(h, k, &format!("<code>{}</code>", escape(&text)));
        }
    }
}

fn id_list(
    h: &mut String,
    ids: &std::collections::BTreeSet<String>,
    link: Option<&std::collections::HashMap<&str, usize>>,
) {
    h.push_str("<ul>\n");
    for id in ids.iter().take(MAX_LISTED_IDS) {
        let index = link.and_then(|r| r.get(id.as_str()));
        match index {
            Some(i) => {
                let _ = writeln!(
                    h,
                    "<li><a href=\"#case-{i}\"><code>{}</code></a></li>",
                    escape(id)
                );
            }
            None => {
                let _ = writeln!(h, "<li><code>{}</code></li>", escape(id));
            }
        }
    }
    if ids.len() > MAX_LISTED_IDS {
        let _ = writeln!(h, "<li>and {} more</li>", ids.len() - MAX_LISTED_IDS);
    }
    h.push_str("</ul>\n");
}

fn comparison(
    h: &mut String,
    c: &Comparison,
    old: &RunResults,
    run: &RunResults,
    options: &ReportOptions,
) {
    let _ = writeln!(h, "<h2 id=\"compare\">Compared with an earlier run</h2>");
    let o = c.old_totals;
    let _ = writeln!(
        h,
        "<p>Earlier run <code>{}</code>: {} passed, {} failed, {} skipped ({} cases).</p>",
        escape(options.compare_name.as_deref().unwrap_or("(earlier)")),
        o.passed,
        o.failed,
        o.skipped,
        old.cases.len()
    );
    let _ = writeln!(
        h,
        "<table id=\"compare-summary\"><tr><th>new failures</th><td>{}</td></tr>\
         <tr><th>fixed (failed, now pass)</th><td>{}</td></tr>\
         <tr><th>failed before, not run or skipped now</th><td>{}</td></tr>\
         <tr><th>still failing</th><td>{}</td></tr>\
         <tr><th>cells whose max ULP changed</th><td>{}</td></tr></table>",
        c.new_failures.len(),
        c.fixed.len(),
        c.no_longer_run.len(),
        c.still_failing,
        c.ulp_changes.len()
    );
    if !c.new_failures.is_empty() {
        let _ = writeln!(h, "<h3>New failures</h3>");
        let index: std::collections::HashMap<&str, usize> = run
            .cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        id_list(h, &c.new_failures, Some(&index));
    }
    if !c.fixed.is_empty() {
        let _ = writeln!(h, "<h3>Fixed</h3>");
        id_list(h, &c.fixed, None);
    }
    if !c.no_longer_run.is_empty() {
        let _ = writeln!(h, "<h3>Failed before, not run or skipped now</h3>");
        id_list(h, &c.no_longer_run, None);
    }
    if !c.ulp_changes.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Changed ULP maxima</h3>\n<table id=\"ulp-changes\">\
             <tr><th>backend</th><th>op</th><th>dtype</th><th>before</th><th>now</th></tr>"
        );
        for u in &c.ulp_changes {
            let arrow = if u.new > u.old { "worse" } else { "better" };
            let _ = writeln!(
                h,
                "<tr class=\"{arrow}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({arrow})</td></tr>",
                escape(&u.key.0),
                escape(&u.key.1),
                escape(&u.key.2),
                u.old,
                u.new
            );
        }
        h.push_str("</table>\n");
    }
}

fn failures(
    h: &mut String,
    run: &RunResults,
    model: &RunModel,
    cmp: Option<&Comparison>,
    options: &ReportOptions,
) {
    let _ = writeln!(h, "<h2 id=\"failures\">Failures</h2>");
    if model.totals.failed == 0 {
        h.push_str("<p>No case failed.</p>\n");
        return;
    }
    h.push_str(
        "<table id=\"failure-table\">\n<tr><th>case</th><th>backend</th><th>verdict</th>\
         <th>worst mismatch</th><th>max ulp</th><th>reproduce</th></tr>\n",
    );
    for backend in &model.backends {
        for (key, cell) in model.cells.iter().filter(|(k, _)| &k.0 == backend) {
            if cell.failures.is_empty() {
                continue;
            }
            let _ = writeln!(
                h,
                "<tr class=\"group\" id=\"{}\"><td colspan=\"6\">{} · {} · {}: {} failed</td></tr>",
                cell_anchor(key),
                escape(&key.0),
                escape(&key.1),
                escape(&key.2),
                cell.failures.len()
            );
            for &i in cell.failures.iter().take(MAX_FAILURES_PER_CELL) {
                let c = &run.cases[i];
                debug_assert!(c.outcome().is_failed());
                let new = cmp.is_some_and(|x| x.new_failures.contains(&c.id));
                let reproduce = match (c.rerun(), c.reproducer()) {
                    (Some(r), Some(d)) => format!(
                        "<code>{}</code><br>reproducer: <code>{}</code>",
                        escape(r),
                        escape(d)
                    ),
                    (Some(r), None) => format!("<code>{}</code>", escape(r)),
                    (None, Some(d)) => format!("reproducer: <code>{}</code>", escape(d)),
                    (None, None) => NOT_RECORDED.to_string(),
                };
                let _ = writeln!(
                    h,
                    "<tr class=\"failure{}\" id=\"case-{i}\"><td><code>{}</code>{}{}</td><td>{}</td>\
                     <td>{}</td><td><code>{}</code></td><td>{}</td><td>{reproduce}</td></tr>",
                    if new { " new" } else { "" },
                    escape(&c.id),
                    if new {
                        "<span class=\"badge\">new</span>"
                    } else {
                        ""
                    },
                    super::triage::group_link(options.triage.as_ref(), &c.id),
                    escape(c.backend()),
                    escape(c.verdict().unwrap_or("")),
                    escape(c.worst_mismatch.as_deref().unwrap_or("")),
                    c.max_ulp.map(|u| u.to_string()).unwrap_or_default(),
                );
            }
            if cell.failures.len() > MAX_FAILURES_PER_CELL {
                let _ = writeln!(
                    h,
                    "<tr><td colspan=\"6\">and {} more failures here (all are in the results file)</td></tr>",
                    cell.failures.len() - MAX_FAILURES_PER_CELL
                );
            }
        }
    }
    h.push_str("</table>\n");
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not recorded",
    }
}

fn isolation_section(h: &mut String, isolations: &[&Isolation]) -> Result<(), ReportError> {
    if isolations.is_empty() {
        return Ok(());
    }
    let _ = writeln!(h, "<h2 id=\"isolation\">Isolation</h2>");
    for (n, iso) in isolations.iter().enumerate() {
        let c = &iso.culprit;
        let _ = writeln!(
            h,
            "<div class=\"isolation\" id=\"isolation-{n}\"><h3>{}</h3><table>",
            escape(iso.case.as_deref().unwrap_or("isolated disagreement"))
        );
        let opt = |v: &Option<String>| {
            v.as_deref()
                .map(|s| format!("<code>{}</code>", escape(s)))
                .unwrap_or_else(|| NOT_RECORDED.to_string())
        };
        if let Some(b) = &iso.backend {
            row(h, "backend", &format!("<code>{}</code>", escape(b)));
        }
        row(h, "computation", &opt(&c.computation));
        row(h, "culprit fusion", &opt(&c.fusion));
        row(h, "diverging instruction", &opt(&c.instruction));
        row(h, "disagrees on its own (local)", yes_no(iso.local));
        row(h, "vanishes when split", yes_no(iso.vanishes_when_split));
        if let Some(r) = &iso.reproducer {
            row(h, "reproducer", &format!("<code>{}</code>", escape(r)));
        }
        for (k, v) in &iso.extra {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            row(h, k, &format!("<code>{}</code>", escape(&text)));
        }
        h.push_str("</table>\n");
        match plot::fusion_graph_svg(iso)? {
            Some(svg) => {
                let _ = writeln!(
                    h,
                    "<figure class=\"fusion-graph\">{svg}<figcaption>the culprit fusion; \
                     operands above users; the diverging instruction in red</figcaption></figure>"
                );
            }
            None if iso.nodes.len() > plot::MAX_DRAWN_NODES => {
                let _ = writeln!(
                    h,
                    "<p>The fusion has {} instructions, too many to draw.</p>",
                    iso.nodes.len()
                );
            }
            None => h.push_str("<p>The report carries no graph of the fusion.</p>\n"),
        }
        h.push_str("</div>\n");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn anchors_are_plain() {
        let key = ("mutant:drop-f16".to_string(), "add".into(), "f16".into());
        assert_eq!(cell_anchor(&key), "fail-mutant-drop-f16-add-f16");
    }
}
