//! The heatmaps: one HTML table per backend (op by dtype), each cell a link
//! to its failures with a tooltip, and the comparison with an earlier run.

use std::fmt::Write as _;

use super::{cell_anchor, slug};
use crate::report::markup::escape;
use crate::report::model::{Cell, CellKey, Comparison, RunModel};

fn cell_class(cell: &Cell) -> &'static str {
    let c = cell.counts;
    match (c.failed, c.passed, c.skipped) {
        (f, 0, 0) if f > 0 => "fail",
        (f, _, _) if f > 0 => "partfail",
        (0, p, 0) if p > 0 => "pass",
        (0, p, _) if p > 0 => "partpass",
        _ => "skip",
    }
}

pub(super) fn heatmaps(h: &mut String, model: &RunModel, cmp: Option<&Comparison>) {
    let _ = writeln!(
        h,
        "<h2 id=\"heatmap\">Outcomes by op and dtype</h2>\n<p class=\"legend\">\
         <span style=\"background:#66bb6a\">all passed</span>\
         <span style=\"background:#c5e1a5\">passed, some skipped</span>\
         <span style=\"background:#ef9a9a\">some failed</span>\
         <span style=\"background:#e53935;color:#fff\">all failed</span>\
         <span style=\"background:#bdbdbd\">all skipped</span>\
         <span style=\"background:#fafafa\">no cases</span>{}\
         — a cell shows its failed count; click it for the failures.</p>",
        if cmp.is_some() {
            "<span style=\"outline:3px solid #6a1b9a\">new failure</span>\
             <span style=\"outline:3px dashed #2e7d32\">fixed case</span>"
        } else {
            ""
        }
    );
    for backend in &model.backends {
        heatmap(h, model, cmp, backend);
    }
}

/// One backend's heatmap, and under it why its skipped cases were skipped:
/// every cell with a skipped case carries the numbers of its reasons.
fn heatmap(h: &mut String, model: &RunModel, cmp: Option<&Comparison>, backend: &String) {
    let mut reasons: Vec<(&str, u64)> = Vec::new();
    {
        let ops = model.ops_of(backend);
        let dtypes: Vec<&String> = model
            .dtypes
            .iter()
            .filter(|d| {
                ops.iter().any(|op| {
                    model
                        .cells
                        .contains_key(&(backend.clone(), op.to_string(), d.to_string()))
                })
            })
            .collect();
        let _ = writeln!(
            h,
            "<h3>Backend <code>{}</code></h3>\n<table class=\"heatmap\" data-backend=\"{}\">\n<tr><th>op \\ dtype</th>",
            escape(backend),
            escape(backend)
        );
        for d in &dtypes {
            let _ = write!(h, "<th>{}</th>", escape(d));
        }
        h.push_str("</tr>\n");
        for op in ops {
            let _ = write!(h, "<tr><th>{}</th>", escape(op));
            for d in &dtypes {
                let key: CellKey = (backend.clone(), op.to_string(), d.to_string());
                let Some(cell) = model.cells.get(&key) else {
                    h.push_str("<td class=\"nocell\"></td>");
                    continue;
                };
                let c = cell.counts;
                let mut class = cell_class(cell).to_string();
                if let Some(cmp) = cmp {
                    if cmp.cells_with_new_failures.contains(&key) {
                        class.push_str(" new");
                    }
                    if cmp.cells_with_fixes.contains(&key) {
                        class.push_str(" fixed");
                    }
                }
                let ulp = cell
                    .max_ulp
                    .map(|u| format!(", max {u} ulp"))
                    .unwrap_or_default();
                let was = cmp
                    .and_then(|x| x.ulp_changes.iter().find(|u| u.key == key))
                    .map(|u| format!(" (was {} ulp)", u.old))
                    .unwrap_or_default();
                let tip = format!(
                    "{backend} {op} {d}: {} passed, {} failed, {} skipped{ulp}{was}",
                    c.passed, c.failed, c.skipped
                );
                let mut body = if c.failed > 0 {
                    format!("<a href=\"#{}\">{}</a>", cell_anchor(&key), c.failed)
                } else if c.passed > 0 {
                    "✓".to_string()
                } else {
                    "–".to_string()
                };
                let mut tip = tip;
                if !cell.skip_reasons.is_empty() {
                    let mut marks = Vec::new();
                    for (why, n) in &cell.skip_reasons {
                        let k = match reasons.iter().position(|r| r.0 == why.as_str()) {
                            Some(k) => k,
                            None => {
                                reasons.push((why.as_str(), 0));
                                reasons.len() - 1
                            }
                        };
                        reasons[k].1 += n;
                        marks.push(format!(
                            "<a href=\"#skip-{}-{}\">{}</a>",
                            slug(backend),
                            k + 1,
                            k + 1
                        ));
                        tip.push_str(&format!("; skipped ({n}): {why}"));
                    }
                    body.push_str(&format!("<sup class=\"why\">{}</sup>", marks.join(",")));
                }
                let _ = write!(
                    h,
                    "<td class=\"cell {class}\" title=\"{}\" data-passed=\"{}\" data-failed=\"{}\" data-skipped=\"{}\">{body}</td>",
                    escape(&tip),
                    c.passed,
                    c.failed,
                    c.skipped
                );
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    if !reasons.is_empty() {
        let _ = writeln!(
            h,
            "<ol class=\"skip-reasons\" data-backend=\"{}\"><b>Why cases were skipped</b> (the numbers in the cells)",
            escape(backend)
        );
        for (k, (why, n)) in reasons.iter().enumerate() {
            let _ = writeln!(
                h,
                "<li id=\"skip-{}-{}\">{} ({n} case{})</li>",
                slug(backend),
                k + 1,
                escape(why),
                if *n == 1 { "" } else { "s" }
            );
        }
        h.push_str("</ol>\n");
    }
}
