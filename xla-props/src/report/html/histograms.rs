//! The ULP-distance histograms, one per op and dtype with a bar per
//! backend, drawn with plotters.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use super::slug;
use crate::report::markup::escape;
use crate::report::model::RunModel;
use crate::report::plot;
use crate::report::results::ReportError;

/// Colours of the backends' bars, in the run's backend order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1e, 0x88, 0xe5),
    RGBColor(0xfb, 0x8c, 0x00),
    RGBColor(0x8e, 0x24, 0xaa),
    RGBColor(0x43, 0xa0, 0x47),
    RGBColor(0xe5, 0x39, 0x35),
    RGBColor(0x6d, 0x4c, 0x41),
    RGBColor(0x00, 0x89, 0x7b),
    RGBColor(0x75, 0x75, 0x75),
];

pub(super) fn histograms(h: &mut String, model: &RunModel) -> Result<(), ReportError> {
    let _ = writeln!(h, "<h2 id=\"ulp\">ULP error by op and dtype</h2>");
    if model.ulp.is_empty() {
        h.push_str(
            "<p>No case in these results reported a ULP distance (the runner's \
             <code>max_ulp</code> or <code>ulp_histogram</code>).</p>\n",
        );
        return Ok(());
    }
    h.push_str(
        "<p>Per element when the results carry the comparator's histogram, else the \
         largest distance of each case; counts on a log axis; one colour per backend. \
         Every property that compared floats contributes (exhaustive sweeps, \
         vs_reference cases, ...): the caption says how many cases and elements each gave.</p>\n",
    );
    let color_of = |backend: &str| {
        let i = model
            .backends
            .iter()
            .position(|b| b == backend)
            .unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let mut exact = Vec::new();
    for op in &model.ops {
        let groups: Vec<_> = model
            .ulp
            .iter()
            .filter(|((o, _), d)| o == op && !d.is_exact())
            .collect();
        for ((o, d), u) in model.ulp.iter().filter(|((o, _), _)| o == op) {
            if u.is_exact() {
                exact.push(format!("{o} {d}"));
            }
        }
        if groups.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<details open><summary><code>{}</code></summary><div class=\"figs\">",
            escape(op)
        );
        for ((o, d), u) in groups {
            // per element only when every backend's cases carry histograms
            let per_element =
                !u.elements.is_empty() && u.by_backend.iter().all(|(_, b)| !b.elements.is_empty());
            let pick = |x: &crate::report::model::UlpDistribution| -> Vec<(String, u64)> {
                if per_element {
                    x.elements.clone()
                } else {
                    x.case_max.clone()
                }
            };
            let labels: Vec<String> = pick(u).into_iter().map(|b| b.0).collect();
            let series: Vec<plot::Series> = u
                .by_backend
                .iter()
                .map(|(b, x)| plot::Series {
                    name: b,
                    counts: pick(x).into_iter().map(|b| b.1).collect(),
                    color: color_of(b),
                })
                .collect();
            let what = if per_element {
                "ulp per element"
            } else {
                "max ulp per case"
            };
            let svg = plot::ulp_histogram_svg(&format!("{o} {d}: {what}"), &labels, &series)?;
            let sources: Vec<String> = u
                .properties
                .iter()
                .map(|(p, (cases, elements))| {
                    if *elements > 0 {
                        format!("{p}: {cases} cases, {elements} elements")
                    } else {
                        format!("{p}: {cases} cases")
                    }
                })
                .collect();
            let maxima: Vec<String> = u
                .by_backend
                .iter()
                .map(|(b, x)| format!("{b} max {} ulp{}", x.max_ulp, accepted_by(x)))
                .collect();
            let _ = writeln!(
                h,
                "<figure class=\"ulp-hist\" id=\"ulp-{}-{}\">{svg}<figcaption>{} {}: {}<br>{}</figcaption></figure>",
                slug(o),
                slug(d),
                escape(o),
                escape(d),
                escape(&maxima.join(", ")),
                escape(&sources.join("; "))
            );
        }
        h.push_str("</div></details>\n");
    }
    if !exact.is_empty() {
        let _ = writeln!(
            h,
            "<p id=\"ulp-exact\">Exact (0 ulp) in every case: {}.</p>",
            escape(&exact.join(", "))
        );
    }
    Ok(())
}

/// Why a backend's nonzero ULP distances were accepted, for a histogram's
/// caption: the declared budgets and tolerances, the legal differences, and
/// the cases that failed (not accepted).
fn accepted_by(x: &crate::report::model::UlpDistribution) -> String {
    if x.max_ulp == 0 && x.accepted_by.is_empty() {
        return String::new();
    }
    let mut parts: Vec<String> = x
        .accepted_by
        .iter()
        .map(|(why, n)| match why.strip_prefix("legal: ") {
            Some(reason) => format!("{reason}, {n} elements"),
            None => format!("{why}, {n} cases"),
        })
        .collect();
    if x.unexplained > 0 {
        parts.push(format!(
            "not recorded in these results, {} cases",
            x.unexplained
        ));
    }
    let mut out = String::new();
    if !parts.is_empty() {
        out = format!(" (accepted by: {})", parts.join("; "));
    }
    if x.failed > 0 {
        out.push_str(&format!(" ({} failed cases, not accepted)", x.failed));
    }
    out
}
