//! The summary's failure groups (op, dtype family, backend, the verdict's
//! kind), so that 300 failures from one bug read as one row of the
//! summary. A group is coarser than a failure's signature
//! (`check::FailureSignature`, the culprit and the mismatch kind), which
//! only isolation finds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::events::{CaseFinished, Reporter, RunEvent};
use super::table::{render, Align};
use crate::check::{Side, Verdict};
use crate::hlo::ElementType;

/// Which group of the summary a failed case is in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FailureGroup {
    /// The op.
    pub op: String,
    /// `float`, `f8`, `signed`, `unsigned`, `pred` or `complex`.
    pub dtype_family: &'static str,
    /// The backend.
    pub backend: String,
    /// What kind of failure: the verdict's kind in words (`mismatch`, `only
    /// the backend failed`, `shape mismatch`, ...), or a failure's own first
    /// clause when it has no verdict (`panicked`).
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

/// The group of a failed case, from its typed failure: the verdict's kind
/// (its variant; a mismatch's side that failed), else, for a failure with no
/// verdict (a panic, a property's own message), the first clause its
/// summary was written with.
pub fn group_of(c: &CaseFinished) -> FailureGroup {
    let kind = match c.outcome.failure() {
        Some(f) => match &f.verdict {
            Some(v) => verdict_kind(v).to_string(),
            None => first_clause(&f.summary).to_string(),
        },
        None => "failed".to_string(),
    };
    FailureGroup {
        op: c.id.key.op.to_string(),
        dtype_family: dtype_family(c.id.key.dtype),
        backend: c.id.backend.name().to_string(),
        kind,
    }
}

/// What kind of failure a verdict is, in the words its report starts with.
fn verdict_kind(v: &Verdict) -> &'static str {
    match v {
        Verdict::Agree(_) => "agree",
        Verdict::Mismatch(_) => "mismatch",
        Verdict::ShapeMismatch { .. } => "shape mismatch",
        Verdict::OnlyOneFailed {
            failed: Side::Backend,
            ..
        } => "only the backend failed",
        Verdict::OnlyOneFailed {
            failed: Side::Reference,
            ..
        } => "only the reference failed (a gap in xla-props, ours to fix, not a backend bug)",
        Verdict::BothFailedAlike { .. } => "both failed alike",
        Verdict::BothFailedDifferently { .. } => "both failed differently",
        Verdict::KnownBug { .. } | Verdict::KnownRejection { .. } => "known bug",
        Verdict::Skipped { .. } => "skipped",
    }
}

/// The first clause of a summary a property wrote (`panicked: boom` -> `panicked`).
fn first_clause(summary: &str) -> &str {
    let clause = summary.split([':', '\n']).next().unwrap_or("").trim();
    if clause.is_empty() {
        "failed"
    } else {
        clause
    }
}

/// The summary's failure groups: most frequent first, one example case each
/// (nothing when nothing failed).
#[derive(Default)]
pub struct FailureGroups {
    groups: BTreeMap<FailureGroup, (u64, String)>,
}

impl Reporter for FailureGroups {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::CaseFinished(c) if c.outcome.is_failed() => {
                let g = self
                    .groups
                    .entry(group_of(c))
                    .or_insert_with(|| (0, c.id.to_string()));
                g.0 += 1;
            }
            RunEvent::Finished { .. } => print!("{}", self.table()),
            _ => {}
        }
        Ok(())
    }
}

impl FailureGroups {
    /// The failures by group, as the summary prints them (empty when nothing failed).
    pub fn table(&self) -> String {
        if self.groups.is_empty() {
            return String::new();
        }
        let mut rows: Vec<_> = self.groups.iter().collect();
        rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
        let mut out = String::new();
        let _ = writeln!(out, "\nfailures by signature ({} signatures)", rows.len());
        let cells: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(s, (n, example))| {
                vec![
                    n.to_string(),
                    s.op.clone(),
                    s.dtype_family.to_string(),
                    s.backend.clone(),
                    s.kind.clone(),
                    example.clone(),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::{CaseId, Failure, Outcome};

    fn failed(backend: &str, failure: Failure) -> CaseFinished {
        let id: CaseId = format!("vs_reference::add::f32::f32[7]{{0}}::uniform::{backend}")
            .parse()
            .expect("a case name");
        CaseFinished::new(id, Outcome::Fail(Box::new(failure)), None)
    }

    #[test]
    fn the_signature_table_fits_a_long_backend_name() {
        let backend = "xla-cpu-declared-long";
        assert_eq!(backend.len(), 21);
        let r = failed(
            backend,
            Failure {
                summary: format!("{backend} vs reference: the words do not matter"),
                verdict: Some(Verdict::ShapeMismatch {
                    detail: "mismatch: of words".into(),
                }),
            },
        );
        let mut groups = FailureGroups::default();
        groups.event(&RunEvent::CaseFinished(&r)).unwrap();
        let text = groups.table();
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let (header, row) = (lines[1], lines[2]);
        // every column starts where its header does
        for (h, cell) in [
            ("backend", backend),
            ("kind", "shape mismatch"),
            ("example", "vs_reference::"),
        ] {
            assert_eq!(header.find(h), row.find(cell), "{h}:\n{text}");
        }
        assert!(
            row.contains(&format!("{backend}  shape mismatch")),
            "{text}"
        );
    }

    #[test]
    fn a_group_comes_from_the_typed_verdict() {
        let rejected = failed(
            "b",
            Failure {
                summary: "b vs reference: mismatch: misleading words".into(),
                verdict: Some(Verdict::OnlyOneFailed {
                    failed: Side::Backend,
                    error: "mismatch: in the error text".into(),
                }),
            },
        );
        assert_eq!(group_of(&rejected).kind, "only the backend failed");
        let panic = failed(
            "b",
            Failure {
                summary: "panicked: boom".into(),
                verdict: None,
            },
        );
        assert_eq!(group_of(&panic).kind, "panicked");
        assert_eq!(group_of(&panic).dtype_family, "float");
    }
}
