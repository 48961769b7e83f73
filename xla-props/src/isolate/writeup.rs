//! Writing an isolation's report: `report.md` and `report.json` (its
//! `reproducer.hlotest` is printed by `filetest`, which owns the format).

use std::fmt::Write as _;
use std::path::Path;

use super::session::{Isolated, Report};

/// Writes `dir/report.json` and `dir/report.md` (the reproducer beside them
/// is `filetest`'s: `filetest::write_isolation_results` writes all three).
pub fn write_report_files(isolated: &Isolated, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(&isolated.report)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    std::fs::write(dir.join("report.json"), json + "\n")?;
    std::fs::write(dir.join("report.md"), markdown(&isolated.report, isolated))
}

fn markdown(r: &Report, isolated: &Isolated) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# isolation of `{}` on `{}`\n", r.module, r.backend);
    let _ = writeln!(s, "- reference: `{}`, input seed {}", r.reference, r.seed);
    let _ = writeln!(s, "- whole module: {}", r.verdict);
    if let Some(c) = &r.certificate {
        let _ = writeln!(s, "- {c}");
        let _ = writeln!(
            s,
            "- the reproducer is the smallest region around that output that departs when compiled whole"
        );
    }
    if r.output_agrees {
        let _ = writeln!(
            s,
            "- the output agrees: the disagreement is masked downstream, seen only instruction by instruction"
        );
    }
    let _ = writeln!(
        s,
        "- culprit: `{}` ({}) in computation `{}`{}",
        r.culprit.instruction,
        r.culprit.opcode,
        r.culprit.computation,
        r.culprit
            .fusion
            .as_deref()
            .map_or(String::new(), |f| format!(", inside fusion `{f}`"))
    );
    if !r.culprit.operands.is_empty() {
        let _ = writeln!(s, "- its operands: {}", r.culprit.operands.join(", "));
    }
    let _ = writeln!(
        s,
        "- local: {} ({})",
        r.local,
        if r.local {
            "it disagrees on the reference values of its operands"
        } else {
            "it disagrees only when upstream errors feed it"
        }
    );
    if let Some(m) = r.inside {
        let _ = writeln!(
            s,
            "- looked inside the fusion by: {}",
            match m {
                super::inside::InsideMethod::Probe => "the backend's fusion probe",
                super::inside::InsideMethod::MovedRoot => "moving the fusion's root (kept whole)",
            }
        );
    }
    let _ = writeln!(
        s,
        "- vanishes when the fusion is split: {}",
        r.vanishes_when_split
    );
    let _ = writeln!(s, "- mismatch kind: {}", r.mismatch);
    let _ = writeln!(s, "- culprit verdict: {}", r.culprit_verdict);
    let _ = writeln!(
        s,
        "- {} instructions, {} candidates; {} backend runs in {:.2} s",
        r.instructions, r.candidates, r.backend_runs, r.seconds
    );
    let _ = writeln!(
        s,
        "- reproducer: {} instructions after {} reductions{}",
        r.reproducer_instructions,
        r.reductions.len(),
        r.reproducer
            .as_deref()
            .map_or(String::new(), |p| format!(", in `{p}`"))
    );
    if !r.reductions.is_empty() {
        let passes: Vec<&str> = r.reductions.iter().map(|x| x.pass.as_str()).collect();
        let _ = writeln!(s, "- reductions: {}", passes.join(", "));
    }
    local_disagreements_markdown(&mut s, &r.local_disagreements);
    let _ = writeln!(
        s,
        "\n## reproducer\n\n```\n{}```",
        crate::hlo::print_module(&isolated.reproducer.module)
    );
    s
}

/// The table of local disagreements (every top-level instruction that
/// disagrees on the reference values of its operands).
pub(crate) fn local_disagreements_markdown(s: &mut String, list: &[super::LocalDisagreement]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## local disagreements ({})\n\n| top-level | fusion computation | first diverging instruction | mismatch | fingerprints differ |\n| --- | --- | --- | --- | --- |",
        list.len()
    );
    for d in list {
        let _ = writeln!(
            s,
            "| `{}` | {} | `{}` ({}) | {} | {} |",
            d.top_level,
            d.location
                .fusion
                .as_ref()
                .map_or("-".to_string(), |_| format!("`{}`", d.location.computation)),
            d.location.instruction,
            d.location.opcode,
            d.mismatch,
            d.fingerprint_differs
        );
    }
}
