//! The summary's failure groups (op, dtype family, backend, the verdict's
//! first words), so that 300 failures from one bug read as one row of the
//! summary. A group is coarser than a failure's signature
//! (`check::FailureSignature`, the culprit and the mismatch kind), which
//! only isolation finds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::report::CaseRecord;
use super::table::{render, Align};
use crate::hlo::ElementType;
use crate::report::CaseStatus;

/// Which group of the summary a failed case is in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FailureGroup {
    /// The op.
    pub op: String,
    /// `float`, `f8`, `signed`, `unsigned`, `pred` or `complex`.
    pub dtype_family: &'static str,
    /// The backend.
    pub backend: String,
    /// What kind of failure: the verdict's first words (`mismatch`, `only the
    /// backend failed`, `shape mismatch`, `panicked`, ...).
    pub kind: String,
}

/// The family of a dtype, for groups.
pub fn dtype_family(t: ElementType) -> &'static str {
    if t.is_complex() {
        "complex"
    } else if t.is_float() && t.to_string().starts_with("f8") {
        "f8"
    } else if t.is_float() {
        "float"
    } else if t.is_signed_int() {
        "signed"
    } else if t.is_unsigned_int() {
        "unsigned"
    } else {
        "pred"
    }
}

/// The group of a failed case.
pub fn group_of(r: &CaseRecord) -> FailureGroup {
    let verdict = r
        .verdict
        .as_deref()
        .or(r.message.as_deref())
        .unwrap_or("failed");
    // `backend vs reference: mismatch: ...` -> `mismatch`
    let mut parts = verdict.split([':', '\n']).map(str::trim);
    let mut kind = parts.next().unwrap_or("failed");
    if kind.contains(" vs ") {
        kind = parts.next().filter(|k| !k.is_empty()).unwrap_or(kind);
    }
    let kind = kind.to_string();
    FailureGroup {
        op: r.id.key.op.to_string(),
        dtype_family: dtype_family(r.id.key.dtype),
        backend: r.id.backend.name().to_string(),
        kind,
    }
}

/// The failures by signature, most frequent first, with one example case
/// each (empty when nothing failed).
pub fn failure_groups(records: &[CaseRecord]) -> String {
    let mut groups: BTreeMap<FailureGroup, (u64, String)> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == CaseStatus::Failed) {
        let g = groups
            .entry(group_of(r))
            .or_insert_with(|| (0, r.id.to_string()));
        g.0 += 1;
    }
    if groups.is_empty() {
        return String::new();
    }
    let mut rows: Vec<_> = groups.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::new();
    let _ = writeln!(out, "\nfailures by signature ({} signatures)", rows.len());
    let cells: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(s, (n, example))| {
            vec![
                n.to_string(),
                s.op,
                s.dtype_family.to_string(),
                s.backend,
                s.kind,
                example,
            ]
        })
        .collect();
    out.push_str(&render(
        &[
            ("cases", Align::Right),
            ("op", Align::Left),
            ("dtypes", Align::Left),
            ("backend", Align::Left),
            ("kind", Align::Left),
            ("example", Align::Left),
        ],
        &cells,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::CaseId;
    use crate::runner::CaseKind;

    #[test]
    fn the_signature_table_fits_a_long_backend_name() {
        let backend = "xla-cpu-declared-long";
        assert_eq!(backend.len(), 21);
        let id: CaseId = format!("vs_reference::add::f32::f32[7]{{0}}::uniform::{backend}")
            .parse()
            .expect("a case name");
        let mut r = CaseRecord::new(id, CaseKind::Fail);
        r.verdict = Some(format!("{backend} vs reference: mismatch: 1 of 7"));
        let text = failure_groups(&[r]);
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let (header, row) = (lines[1], lines[2]);
        // every column starts where its header does
        for (h, cell) in [
            ("backend", backend),
            ("kind", "mismatch"),
            ("example", "vs_reference::"),
        ] {
            assert_eq!(header.find(h), row.find(cell), "{h}:\n{text}");
        }
        assert!(row.contains(&format!("{backend}  mismatch")), "{text}");
    }
}
