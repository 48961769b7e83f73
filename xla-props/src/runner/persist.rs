//! Failure persistence: reproducers (`.hlotest` files, with their inputs)
//! under `target/xla-props/failures/`, and the
//! list of failing cases that run first next time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::events::{CaseFinished, Reporter, RunEvent};
use crate::filetest::{Inputs, JudgeMode, Reproducer};
use crate::hlo::Module;
use crate::literal::element_text;
use crate::literal::Literal;

/// Where failures are written: `$XLA_PROPS_FAILURES_DIR`, else
/// `<target>/xla-props/failures` for the `target` directory holding the test
/// binary, else `target/xla-props/failures`.
pub fn failures_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XLA_PROPS_FAILURES_DIR") {
        return PathBuf::from(d);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            exe.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "target"))
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("xla-props").join("failures")
}

/// A file-system-safe directory name for a case name.
pub fn sanitize(name: &str) -> String {
    crate::hlo::rewrite::replace_other_chars(name, "-_.", '_')
}

/// What a reproducer says of its case.
pub struct CaseNote<'a> {
    /// The case name.
    pub name: &'a str,
    /// The backend it failed on.
    pub backend: &'a str,
    /// One line: what failed (the verdict's first line).
    pub summary: &'a str,
    /// The failure's report, as printed.
    pub report: &'a str,
}

/// Writes a reproducer for a failing case into `case_dir`:
/// `reproducer.hlotest` (the module, run on the backend with the inputs as
/// `input*.npy` beside it, expected to agree with the reference: a
/// regression test that fails while the bug is there), the inputs as text
/// too, the case name and the report.
pub fn write_reproducer(
    case_dir: &Path,
    note: &CaseNote<'_>,
    module: &Module,
    inputs: &[Literal],
) -> Result<(), String> {
    let CaseNote {
        name,
        backend,
        summary,
        report,
    } = *note;
    std::fs::create_dir_all(case_dir)
        .map_err(|e| format!("failed to create {}: {e}", case_dir.display()))?;
    let write = |file: &str, text: String| {
        std::fs::write(case_dir.join(file), text)
            .map_err(|e| format!("failed to write {}: {e}", case_dir.join(file).display()))
    };
    write("case.txt", format!("{name}\n"))?;
    for (i, lit) in inputs.iter().enumerate() {
        let values: Vec<String> = (0..lit.element_count())
            .map(|k| element_text(lit, k))
            .collect();
        write(
            &format!("input{i}.txt"),
            format!("{}\n{}\n", lit.shape(), values.join("\n")),
        )?;
        let npy = case_dir.join(format!("input{i}.npy"));
        lit.write_npy_file(&npy)
            .map_err(|e| format!("failed to write {}: {e}", npy.display()))?;
    }
    let text = Reproducer {
        comments: vec![
            format!("case {name} failed on {backend}: {summary}"),
            "expects agreement with the reference: it fails while the bug is there".into(),
        ],
        backends: vec![backend.to_string()],
        tolerance: JudgeMode::Default,
        inputs: Inputs::Files(
            (0..inputs.len())
                .map(|i| PathBuf::from(format!("input{i}.npy")))
                .collect(),
        ),
        args: &[],
        expect: "agree".into(),
        expect_for: vec![],
        module,
    }
    .text();
    write("reproducer.hlotest", text)?;
    write("report.txt", format!("{report}\n"))?;
    Ok(())
}

const LAST_FAILED: &str = "last-failed.txt";

/// The case names that failed last time.
pub fn load_failed(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join(LAST_FAILED))
        .map(|s| {
            s.lines()
                .map(str::to_string)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Persistence: each failure's reproducer as it happens, and at the end the
/// failing list (the old one, less the cases that ran and passed, plus the
/// new failures), which runs first next time.
pub struct Persistence {
    dir: PathBuf,
    previous: BTreeSet<String>,
    ran_ok: Vec<String>,
    failed: Vec<String>,
}

impl Persistence {
    /// Writes under `dir`; `previous` is the failing list the run started with.
    pub fn new(dir: PathBuf, previous: BTreeSet<String>) -> Persistence {
        Persistence {
            dir,
            previous,
            ran_ok: Vec::new(),
            failed: Vec::new(),
        }
    }

    fn case(&mut self, c: &CaseFinished) -> Result<(), String> {
        if !c.outcome.is_failed() {
            if !self.previous.is_empty() {
                let name = c.id.to_string();
                if self.previous.contains(&name) {
                    self.ran_ok.push(name);
                }
            }
            return Ok(());
        }
        let name = c.id.to_string();
        self.failed.push(name.clone());
        let (Some(a), Some(f)) = (&c.artifacts, c.outcome.failure()) else {
            return Ok(());
        };
        let verdict = f.verdict.as_ref().map(|v| v.to_string());
        let summary = match &verdict {
            Some(v) => v.lines().next().unwrap_or(""),
            None => f.summary.as_str(),
        };
        let note = CaseNote {
            name: &name,
            backend: c.id.backend.name(),
            summary,
            report: c.message.as_deref().unwrap_or(""),
        };
        write_reproducer(&a.dir, &note, &a.module, &a.inputs)
            .map_err(|e| format!("{name}: reproducer not written: {e}"))
    }
}

impl Reporter for Persistence {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::CaseFinished(c) => self.case(c),
            RunEvent::Finished { .. } => store_failed(
                &self.dir,
                std::mem::take(&mut self.previous),
                self.ran_ok.drain(..),
                self.failed.drain(..),
            ),
            RunEvent::Started { .. } => Ok(()),
        }
    }
}

/// Records the failing set: the old one, less cases that ran and passed, plus new failures.
pub fn store_failed(
    dir: &Path,
    mut previous: BTreeSet<String>,
    ran_ok: impl Iterator<Item = String>,
    failed: impl Iterator<Item = String>,
) -> Result<(), String> {
    for n in ran_ok {
        previous.remove(&n);
    }
    previous.extend(failed);
    if previous.is_empty() && !dir.join(LAST_FAILED).exists() {
        return Ok(());
    }
    let text: String = previous.iter().map(|n| format!("{n}\n")).collect();
    super::summary::write_file(&dir.join(LAST_FAILED), text.as_bytes())
}
