//! `triage.md`: the groups in a table, then each group's members.

use std::fmt::Write;

use super::group::Triage;

/// Members listed per group in `triage.md` (all are in `triage.json`).
pub const MAX_MEMBERS_LISTED: usize = 20;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The markdown report of a triage.
pub fn markdown(t: &Triage) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Triage on `{}`\n", t.backend);
    let _ = writeln!(
        s,
        "{} failures analysed in {:.1} s: {} in {} group(s), {} in none; {} not triaged.\n",
        t.failures,
        t.seconds,
        t.grouped,
        t.groups.len(),
        t.ungrouped.len(),
        t.not_triaged.len()
    );
    if !t.groups.is_empty() {
        s.push_str("| group | failures | culprit op | dtype | operand forms | mismatch | pass | known bug | representative | instructions |\n");
        s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }
    for g in &t.groups {
        let c = &g.cause;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            g.id,
            g.count,
            cell(&c.opcode),
            cell(&c.dtype),
            cell(&c.operand_forms.join(", ")),
            cell(&c.mismatch),
            cell(&c.pass),
            c.known_bug.as_deref().unwrap_or(""),
            if g.representative.is_empty() {
                String::new()
            } else {
                format!("[{0}]({0})", g.representative)
            },
            g.representative_instructions
        );
    }
    for g in &t.groups {
        let _ = writeln!(s, "\n## {}: {}\n", g.id, cell(&g.title));
        let details: Vec<String> = g
            .details
            .iter()
            .map(|(d, n)| format!("{d} ({n})"))
            .collect();
        let _ = writeln!(s, "By culprit dtype and kind: {}.\n", details.join("; "));
        for m in g.members.iter().take(MAX_MEMBERS_LISTED) {
            let _ = writeln!(s, "- `{}`: {}", m.name, cell(&m.conclusion));
        }
        if g.members.len() > MAX_MEMBERS_LISTED {
            let _ = writeln!(
                s,
                "- and {} more (all in triage.json)",
                g.members.len() - MAX_MEMBERS_LISTED
            );
        }
    }
    if !t.ungrouped.is_empty() {
        s.push_str("\n## In no group\n\n");
        for m in &t.ungrouped {
            let _ = writeln!(s, "- `{}`: {}", m.name, cell(&m.conclusion));
        }
    }
    if !t.not_triaged.is_empty() {
        s.push_str("\n## Not triaged\n\n");
        for n in &t.not_triaged {
            let _ = writeln!(s, "- `{}` ({}): {}", n.name, n.source, cell(&n.why));
        }
    }
    s
}
