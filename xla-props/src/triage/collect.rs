//! What triage reads: reproducers (`.hlotest`), the failing cases of a run's
//! `--json` results (through the reproducers the runner persisted), and
//! plain modules (`.hlo`, `.mlir`); directories are walked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::filetest::HloTest;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::report::RunResults;

/// One failure to triage.
#[derive(Clone, Debug)]
pub struct Failure {
    /// Its name: the case name when known, else the file.
    pub name: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// The module.
    pub module: Module,
    /// Its own arguments (`None`: generated from the seed, for a plain module).
    pub args: Option<Vec<Literal>>,
}

/// A failure that could not be triaged, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotTriaged {
    /// The case name or file.
    pub name: String,
    /// Where it came from.
    pub source: String,
    /// Why (one lowercase line).
    pub why: String,
}

/// Why the inputs could not be read (a named file is missing or malformed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CollectError(pub String);

/// The failures named by `paths` for `backend`: every `.hlotest`, `.hlo`
/// and `.mlir` file, and every failed case on `backend` in a results
/// `.json` file (read from its persisted reproducer); directories are walked
/// (a `.json` found there that is not a results file is passed over). A
/// file reached twice counts once, under the case name when a run names it.
pub fn collect(
    paths: &[PathBuf],
    backend: &str,
) -> Result<(Vec<Failure>, Vec<NotTriaged>), CollectError> {
    let mut found = Found::default();
    for p in paths {
        if p.is_dir() {
            let mut files = Vec::new();
            walk(p, &mut files)
                .map_err(|e| CollectError(format!("cannot read {}: {e}", p.display())))?;
            files.sort();
            for f in files {
                found.file(&f, backend, false)?;
            }
        } else if p.is_file() {
            found.file(p, backend, true)?;
        } else {
            return Err(CollectError(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(found.finish())
}

#[derive(Default)]
struct Found {
    /// By canonical path: the case name (when a run names it) and the file.
    files: BTreeMap<PathBuf, (Option<String>, PathBuf)>,
    not_triaged: Vec<NotTriaged>,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if matches!(extension(&path), "hlotest" | "hlo" | "mlir" | "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn extension(p: &Path) -> &str {
    p.extension().and_then(|e| e.to_str()).unwrap_or("")
}

impl Found {
    fn add(&mut self, path: &Path, name: Option<String>) {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let slot = self.files.entry(key).or_insert((None, path.to_path_buf()));
        if name.is_some() {
            slot.0 = name;
        }
    }

    fn file(&mut self, path: &Path, backend: &str, named: bool) -> Result<(), CollectError> {
        match extension(path) {
            "hlotest" | "hlo" | "mlir" => {
                self.add(path, None);
                Ok(())
            }
            "json" => match RunResults::load(path) {
                Ok(run) => {
                    self.results(&run, path, backend);
                    Ok(())
                }
                Err(e) if named => Err(CollectError(e.0)),
                Err(_) => Ok(()),
            },
            other => Err(CollectError(format!(
                "{}: cannot triage a `.{other}` file (expected `.hlotest`, `.hlo`, `.mlir`, \
                 a results `.json` or a directory)",
                path.display()
            ))),
        }
    }

    /// The failed cases of a run on `backend`, by their reproducers.
    fn results(&mut self, run: &RunResults, path: &Path, backend: &str) {
        let base = path.parent().unwrap_or(Path::new("."));
        for case in &run.cases {
            if !case.outcome().is_failed() || case.backend() != backend {
                continue;
            }
            let reproducer = case.reproducer().map(|d| {
                let d = Path::new(d);
                let d = if d.exists() {
                    d.to_path_buf()
                } else {
                    base.join(d)
                };
                if extension(&d) == "hlotest" {
                    d
                } else {
                    d.join("reproducer.hlotest")
                }
            });
            match reproducer {
                Some(r) if r.is_file() => self.add(&r, Some(case.id.clone())),
                Some(r) => self.not_triaged.push(NotTriaged {
                    name: case.id.clone(),
                    source: path.display().to_string(),
                    why: format!("its reproducer {} is missing", r.display()),
                }),
                None => self.not_triaged.push(NotTriaged {
                    name: case.id.clone(),
                    source: path.display().to_string(),
                    why: "the run recorded no reproducer".into(),
                }),
            }
        }
    }

    fn finish(mut self) -> (Vec<Failure>, Vec<NotTriaged>) {
        let mut failures = Vec::new();
        for (name, path) in std::mem::take(&mut self.files).into_values() {
            let name = name
                .or_else(|| case_name_beside(&path))
                .unwrap_or_else(|| path.display().to_string());
            match read(&path) {
                Ok((module, args)) => failures.push(Failure {
                    name,
                    source: path,
                    module,
                    args,
                }),
                Err(why) => self.not_triaged.push(NotTriaged {
                    name,
                    source: path.display().to_string(),
                    why,
                }),
            }
        }
        failures.sort_by(|a, b| a.name.cmp(&b.name));
        (failures, self.not_triaged)
    }
}

/// The case name the runner writes beside a reproducer (`case.txt`).
fn case_name_beside(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path.parent()?.join("case.txt")).ok()?;
    let name = text.lines().next()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// A file's module and, for a `.hlotest`, its arguments.
fn read(path: &Path) -> Result<(Module, Option<Vec<Literal>>), String> {
    if extension(path) == "hlotest" {
        let test = HloTest::load(path).map_err(|e| e.to_string())?;
        let args = test
            .arguments()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok((test.module, Some(args)));
    }
    let module = crate::hlo::load_module_file(path).map_err(|e| e.to_string())?;
    Ok((module, None))
}
