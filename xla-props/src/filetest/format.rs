//! The `.hlotest` format: directives in `//` comments (which HLO text
//! ignores), then the module.
//!
//! - `// run: backends=A,B tolerance=default|exact inputs=seed:N|inline|npy:F1,F2
//!   distribution=NAME` (`distribution=` only with `inputs=seed:N`; default `uniform`)
//! - `// expect: agree`, `// expect: mismatch KIND` (KIND: `values`,
//!   `non-finite`, `shape`, `backend-failed`, ...), `// expect: known-bug ID[,ID]`,
//!   `// expect: rejected "TEXT"` or `// expect: skip ["TEXT"]` (see `expect.rs`)
//! - `// expect@BACKEND: ...` overrides the expectation for one backend, and
//!   `// expect@BACKEND[VERSION]: ...` for one version of it (a word of the
//!   backend's version text, e.g. `iree-cpu[3.13.0]`, `xla-cpu[0.115]`)
//! - `// arg: f32[2,2] 1 2 3 4.5` one inline argument per line, in parameter order

use std::path::{Path, PathBuf};

use super::expect::{
    parse_backend_key, split_expect_line, version_matches, BackendExpectation, Expectation,
};
use crate::hlo::{parse_module, verify, ArrayShape, ElementType, Module};
use crate::inputs::Distribution;
use crate::literal::Literal;

/// Why a `.hlotest` file is malformed.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TestFileError {
    /// The file (or `<text>`).
    pub file: String,
    /// The line, 1-based (0 when the whole file is concerned).
    pub line: usize,
    /// What is wrong, lowercase.
    pub message: String,
}

/// Where a test's arguments come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Inputs {
    /// Legal inputs generated with this seed.
    Seed(u64),
    /// The `// arg:` lines.
    Inline,
    /// `.npy` (or raw) files, relative to the test file.
    Files(Vec<PathBuf>),
}

/// How results are judged: the `tolerance=` directive (`default`, `exact`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeMode {
    /// The comparator with the default spec of the module (what isolation uses).
    Default,
    /// Bit-exact (NaN by class).
    Exact,
}

/// A parsed `.hlotest` file.
///
/// ```
/// use xla_props::filetest::{Expectation, HloTest, Inputs};
/// let text = "// run: backends=interpreter inputs=inline\n\
///             // expect: agree\n\
///             // arg: f32[2] 1.5 -2\n\
///             HloModule m\n\
///             ENTRY main { p = f32[2] parameter(0) ROOT n = f32[2] negate(p) }\n";
/// let t = HloTest::parse(text, None).unwrap();
/// assert_eq!(t.backends, vec!["interpreter".to_string()]);
/// assert_eq!(t.inputs, Inputs::Inline);
/// assert_eq!(t.expectation("interpreter"), Expectation::Agree);
/// assert_eq!(t.args[0].to_f64_vec(), vec![1.5, -2.0]);
/// ```
#[derive(Clone, Debug)]
pub struct HloTest {
    /// The file, when read from one.
    pub path: Option<PathBuf>,
    /// The backends it runs on.
    pub backends: Vec<String>,
    /// How results are judged.
    pub tolerance: JudgeMode,
    /// Where the arguments come from.
    pub inputs: Inputs,
    /// The expectation for every backend without its own.
    pub expect: Expectation,
    /// Per-backend (and per-version) expectations.
    pub expect_for: Vec<BackendExpectation>,
    /// The distribution of generated inputs (`inputs=seed:N`).
    pub distribution: Distribution,
    /// Inline arguments (`// arg:` lines).
    pub args: Vec<Literal>,
    /// The module.
    pub module: Module,
    /// The file's text.
    pub text: String,
}

/// What a test file's `// run:` lines set.
struct RunOptions {
    backends: Option<Vec<String>>,
    tolerance: JudgeMode,
    inputs: Inputs,
    distribution: Option<Distribution>,
}

impl RunOptions {
    /// Reads the `key=value` words of one `// run:` line.
    fn read(&mut self, rest: &str) -> Result<(), String> {
        for word in rest.split_whitespace() {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, found `{word}`"))?;
            match key {
                "backends" => {
                    self.backends = Some(
                        value
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect::<Vec<_>>(),
                    )
                }
                "tolerance" => {
                    self.tolerance = match value {
                        "default" => JudgeMode::Default,
                        "exact" => JudgeMode::Exact,
                        _ => return Err(format!("unknown tolerance `{value}` (default, exact)")),
                    }
                }
                "inputs" => self.inputs = parse_inputs(value)?,
                "distribution" => {
                    let d = value
                        .parse::<Distribution>()
                        .map_err(|m| format!("unknown distribution `{value}`: {m}"))?;
                    self.distribution = Some(d);
                }
                _ => return Err(format!("unknown run option `{key}`")),
            }
        }
        Ok(())
    }
}

impl HloTest {
    /// Reads and parses a `.hlotest` file.
    pub fn load(path: &Path) -> Result<HloTest, TestFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| TestFileError {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
        HloTest::parse(&text, Some(path))
    }

    /// Parses the text of a `.hlotest` file.
    pub fn parse(text: &str, path: Option<&Path>) -> Result<HloTest, TestFileError> {
        let file = path.map_or("<text>".to_string(), |p| p.display().to_string());
        let err = |line: usize, message: String| TestFileError {
            file: file.clone(),
            line,
            message,
        };
        let mut run = RunOptions {
            backends: None,
            tolerance: JudgeMode::Default,
            inputs: Inputs::Seed(0),
            distribution: None,
        };
        let mut expect = None;
        let mut expect_for = Vec::new();
        let mut args = Vec::new();
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            let Some(body) = raw.trim_start().strip_prefix("//") else {
                continue;
            };
            let body = body.trim();
            if let Some(rest) = body.strip_prefix("run:") {
                run.read(rest).map_err(|m| err(line, m))?;
            } else if let Some(rest) = body.strip_prefix("expect:") {
                expect = Some(rest.parse().map_err(|m| err(line, m))?);
            } else if let Some(rest) = body.strip_prefix("expect@") {
                // backend names may contain ':' (`buggy:BUG@COMP`); expectations do not
                let (key, e) = split_expect_line(rest)
                    .ok_or_else(|| err(line, "expected `expect@BACKEND: ...`".into()))?;
                let (backend, version) = parse_backend_key(key).map_err(|m| err(line, m))?;
                let expect = e.parse().map_err(|m| err(line, m))?;
                if expect_for
                    .iter()
                    .any(|x: &BackendExpectation| x.backend == backend && x.version == version)
                {
                    return Err(err(
                        line,
                        format!("a second expectation for `{}`", key.trim()),
                    ));
                }
                expect_for.push(BackendExpectation {
                    backend,
                    version,
                    expect,
                });
            } else if let Some(rest) = body.strip_prefix("arg:") {
                args.push(parse_arg(rest).map_err(|m| err(line, m))?);
            }
        }
        let RunOptions {
            backends,
            tolerance,
            inputs,
            distribution,
        } = run;
        let backends = backends.ok_or_else(|| err(0, "missing `// run: backends=...`".into()))?;
        if backends.is_empty() {
            return Err(err(0, "`backends=` names no backend".into()));
        }
        let expect = expect.ok_or_else(|| err(0, "missing `// expect: ...`".into()))?;
        if distribution.is_some() && !matches!(inputs, Inputs::Seed(_)) {
            return Err(err(
                0,
                "`distribution=` needs generated inputs (`inputs=seed:N`)".into(),
            ));
        }
        let mut module = parse_module(text)
            .map_err(|e| err(e.line, format!("column {}: {}", e.col, e.message)))?;
        crate::hlo::uniquify_names(&mut module);
        verify(&module).map_err(|e| err(0, e.to_string()))?;
        if inputs == Inputs::Inline {
            let want = module.parameter_shapes().len();
            if args.len() != want {
                return Err(err(
                    0,
                    format!(
                        "the module takes {want} arguments but {} `// arg:` lines are given",
                        args.len()
                    ),
                ));
            }
        }
        Ok(HloTest {
            path: path.map(Path::to_path_buf),
            backends,
            tolerance,
            inputs,
            expect,
            expect_for,
            distribution: distribution.unwrap_or(Distribution::Uniform),
            args,
            module,
            text: text.to_string(),
        })
    }

    /// The expectation for `backend` whatever its version: its own
    /// unpinned line, else the common one.
    pub fn expectation(&self, backend: &str) -> Expectation {
        self.expect_for
            .iter()
            .find(|x| x.backend == backend && x.version.is_none())
            .map_or(self.expect.clone(), |x| x.expect.clone())
    }

    /// The expectation for `backend` at `version` (its version text): the
    /// line pinned to a word of it, else its own unpinned line, else the
    /// common one. `None` when the file pins versions of this backend but
    /// neither one of them nor an unpinned line applies: nothing is known of
    /// this version (`XLA_PROPS_BLESS=1` records it).
    pub fn expectation_at(&self, backend: &str, version: Option<&str>) -> Option<Expectation> {
        let own: Vec<&BackendExpectation> = self
            .expect_for
            .iter()
            .filter(|x| x.backend == backend)
            .collect();
        if let Some(pinned) = own.iter().find(|x| {
            x.version
                .as_deref()
                .is_some_and(|p| version.is_some_and(|v| version_matches(p, v)))
        }) {
            return Some(pinned.expect.clone());
        }
        if own.iter().any(|x| x.version.is_some()) && own.iter().all(|x| x.version.is_some()) {
            return None;
        }
        Some(self.expectation(backend))
    }

    /// The arguments, per the `inputs=` option.
    pub fn arguments(&self) -> Result<Vec<Literal>, String> {
        match &self.inputs {
            Inputs::Inline => Ok(self.args.clone()),
            Inputs::Seed(seed) => {
                crate::inputs::generate_inputs(&self.module, self.distribution, *seed)
                    .map(|g| g.args)
                    .map_err(|e| e.to_string())
            }
            Inputs::Files(files) => {
                let dir = self
                    .path
                    .as_deref()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new("."));
                let shapes = self.module.parameter_shapes();
                if shapes.len() != files.len() {
                    return Err(format!(
                        "the module takes {} arguments but {} files are named",
                        shapes.len(),
                        files.len()
                    ));
                }
                files
                    .iter()
                    .zip(shapes)
                    .map(|(f, s)| {
                        let s = s.as_array().ok_or_else(|| {
                            format!("parameter of shape {s} cannot be read from a file")
                        })?;
                        let plain = ArrayShape::new(s.dtype, s.dims.clone());
                        Literal::read_arg_file(dir.join(f), &plain).map_err(|e| e.to_string())
                    })
                    .collect()
            }
        }
    }
}

fn parse_inputs(value: &str) -> Result<Inputs, String> {
    if value == "inline" {
        return Ok(Inputs::Inline);
    }
    if let Some(seed) = value.strip_prefix("seed:") {
        return seed
            .parse()
            .map(Inputs::Seed)
            .map_err(|_| format!("bad seed `{seed}`"));
    }
    if let Some(files) = value.strip_prefix("npy:") {
        // `npy:` with no file: a module without parameters (older runners wrote it)
        return Ok(Inputs::Files(
            files
                .split(',')
                .filter(|f| !f.is_empty())
                .map(PathBuf::from)
                .collect(),
        ));
    }
    Err(format!(
        "unknown inputs `{value}` (seed:N, inline, npy:FILES)"
    ))
}

/// Parses `f32[2,3] v0 v1 ...` (row-major).
fn parse_arg(text: &str) -> Result<Literal, String> {
    let mut words = text.split_whitespace();
    let shape_text = words.next().ok_or("an `arg:` line needs a shape")?;
    let (dtype, dims) = shape_text
        .strip_suffix(']')
        .and_then(|s| s.split_once('['))
        .ok_or_else(|| format!("bad shape `{shape_text}` (expected like f32[2,3])"))?;
    let dtype: ElementType = dtype
        .parse()
        .map_err(|_| format!("unknown type `{dtype}`"))?;
    let dims: Vec<i64> = if dims.is_empty() {
        Vec::new()
    } else {
        dims.split(',')
            .map(|d| {
                d.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("bad dimension `{d}`"))
            })
            .collect::<Result<_, _>>()?
    };
    let shape = ArrayShape::new(dtype, dims);
    let values: Vec<&str> = words.collect();
    let lit = if dtype.is_float() {
        let v = values
            .iter()
            .map(|w| w.parse::<f64>().map_err(|_| format!("bad number `{w}`")))
            .collect::<Result<Vec<_>, _>>()?;
        Literal::from_f64s(&shape, &v)
    } else {
        let v = values
            .iter()
            .map(|w| match *w {
                "true" => Ok(1),
                "false" => Ok(0),
                _ => w.parse::<i128>().map_err(|_| format!("bad integer `{w}`")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Literal::from_i128s(&shape, &v)
    };
    lit.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_npy_files_is_no_arguments() {
        // the runner's reproducer of a case without parameters (an iota)
        let text = "// run: backends=interpreter tolerance=default inputs=npy:\n\
                    // expect: agree\n\
                    HloModule m\n\
                    ENTRY main { ROOT i = f32[2,3] iota(), iota_dimension=0 }\n";
        let t = HloTest::parse(text, None).unwrap();
        assert_eq!(t.inputs, Inputs::Files(vec![]));
        assert!(t.arguments().unwrap().is_empty());
        assert_eq!(
            parse_inputs("npy:a.npy,b.npy").unwrap(),
            Inputs::Files(vec!["a.npy".into(), "b.npy".into()])
        );
    }
}
