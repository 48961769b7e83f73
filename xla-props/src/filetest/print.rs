//! Printing `.hlotest` files, the one reproducer format (`format.rs` reads
//! them): the runner's failures, isolation and the fuzzer all write theirs
//! through [`Reproducer`].

use std::path::{Path, PathBuf};

use super::format::{Inputs, JudgeMode};
use crate::hlo::Module;
use crate::isolate::{write_report_files, Isolated};
use crate::literal::Literal;

/// Arguments with more elements than this go to `.npy` files beside the reproducer.
pub const MAX_INLINE_ELEMENTS: usize = 4096;

/// A reproducer to print as a `.hlotest` file.
///
/// ```
/// use xla_props::filetest::{HloTest, Inputs, JudgeMode, Reproducer};
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n").unwrap();
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2]), &[1.5, -2.0]).unwrap();
/// let text = Reproducer {
///     comments: vec!["a note".into()],
///     backends: vec!["interpreter".into()],
///     tolerance: JudgeMode::Default,
///     inputs: Inputs::Inline,
///     args: &[x],
///     expect: "agree".into(),
///     expect_for: vec![],
///     module: &m,
/// }
/// .text();
/// let back = HloTest::parse(&text, None).unwrap();
/// assert_eq!(back.args[0].to_f64_vec(), vec![1.5, -2.0]);
/// assert_eq!(back.module, m);
/// ```
#[derive(Clone, Debug)]
pub struct Reproducer<'a> {
    /// Comment lines first (each printed as `// LINE`).
    pub comments: Vec<String>,
    /// The backends it runs on.
    pub backends: Vec<String>,
    /// How results are judged.
    pub tolerance: JudgeMode,
    /// Where the arguments come from.
    pub inputs: Inputs,
    /// The arguments printed inline (`// arg:` lines; with `Inputs::Inline`).
    pub args: &'a [Literal],
    /// The expectation for every backend without its own (`agree`,
    /// `mismatch KIND`, `skip`).
    pub expect: String,
    /// Per-backend expectations.
    pub expect_for: Vec<(String, String)>,
    /// The module.
    pub module: &'a Module,
}

impl Reproducer<'_> {
    /// The file's text.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for c in &self.comments {
            s.push_str(&format!("// {c}\n"));
        }
        let tolerance = match self.tolerance {
            JudgeMode::Default => "default",
            JudgeMode::Exact => "exact",
        };
        s.push_str(&format!(
            "// run: backends={} tolerance={tolerance} inputs={}\n",
            self.backends.join(","),
            inputs_text(&self.inputs)
        ));
        s.push_str(&format!("// expect: {}\n", self.expect));
        for (b, e) in &self.expect_for {
            s.push_str(&format!("// expect@{b}: {e}\n"));
        }
        for a in self.args {
            s.push_str(&format!("// arg: {}\n", render_arg(a)));
        }
        s.push_str(&crate::hlo::print_module(self.module));
        if !s.ends_with('\n') {
            s.push('\n');
        }
        s
    }
}

/// The `inputs=` value of a run directive.
fn inputs_text(inputs: &Inputs) -> String {
    match inputs {
        Inputs::Seed(n) => format!("seed:{n}"),
        Inputs::Inline => "inline".to_string(),
        Inputs::Files(files) => {
            let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            format!("npy:{}", names.join(","))
        }
    }
}

/// Renders one argument as the text of an inline `// arg:` line of a
/// `.hlotest` file (without the prefix): `f32[2] 1.5 -2.0`. Floats print
/// as the shortest f64 text that reads back to the same value.
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::filetest::render_arg;
/// use xla_props::literal::Literal;
/// let l = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2]), &[1.5, -2.0]).unwrap();
/// assert_eq!(render_arg(&l), "f32[2] 1.5 -2.0");
/// ```
pub fn render_arg(lit: &Literal) -> String {
    let dims: Vec<String> = lit.dims().iter().map(|d| d.to_string()).collect();
    let mut s = format!("{}[{}]", lit.dtype().name(), dims.join(","));
    for i in 0..lit.element_count() {
        s.push(' ');
        if lit.dtype().is_float() {
            s.push_str(&format!("{:?}", lit.get_f64(i)));
        } else {
            s.push_str(&lit.get_i128(i).to_string());
        }
    }
    s
}

/// Writes an isolation's results into `dir`: `reproducer.hlotest` (its
/// arguments inline, or as `.npy` files beside it when large), then
/// `report.json` and `report.md`; sets `report.reproducer` to the
/// reproducer's path and returns it. `agree_on` names backends on which the
/// reproducer is expected to agree (a known-good backend, so the file also
/// guards against a false alarm).
pub fn write_isolation_results(
    isolated: &mut Isolated,
    dir: &Path,
    agree_on: &[String],
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("reproducer.hlotest");
    let text = reproducer_text(isolated, dir, agree_on)?;
    std::fs::write(&path, text)?;
    isolated.report.reproducer = Some(path.display().to_string());
    write_report_files(isolated, dir)?;
    Ok(path)
}

/// The text of the reproducer file (writes `.npy` files into `dir` for large arguments).
fn reproducer_text(
    isolated: &Isolated,
    dir: &Path,
    agree_on: &[String],
) -> std::io::Result<String> {
    let r = &isolated.report;
    let case = &isolated.reproducer;
    let large = case
        .args
        .iter()
        .any(|a| a.element_count() > MAX_INLINE_ELEMENTS);
    let inline = !large;
    let inputs = if large {
        let mut names = Vec::new();
        for (k, a) in case.args.iter().enumerate() {
            let name = format!("reproducer.arg{k}.npy");
            a.write_npy_file(dir.join(&name))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            names.push(PathBuf::from(name));
        }
        Inputs::Files(names)
    } else {
        Inputs::Inline
    };
    let mut backends = vec![r.backend.clone()];
    backends.extend(agree_on.iter().filter(|b| **b != r.backend).cloned());
    let expect_for: Vec<(String, String)> = agree_on
        .iter()
        .filter(|b| **b != r.backend)
        .map(|b| (b.clone(), "agree".to_string()))
        .collect();
    let fusion = r
        .culprit
        .fusion
        .as_deref()
        .map_or(String::new(), |f| format!(" in fusion {f}"));
    let comment = vec![
        format!(
            "reproducer from `xla-props isolate` of module {} on {} (seed {})",
            r.module, r.backend, r.seed
        ),
        format!(
            "culprit: {} ({}){fusion}; {}{}",
            r.culprit.instruction,
            r.culprit.opcode,
            if r.local {
                "local"
            } else {
                "needs upstream errors"
            },
            if r.vanishes_when_split {
                "; vanishes when the fusion is split"
            } else {
                ""
            }
        ),
    ];
    Ok(Reproducer {
        comments: comment,
        backends,
        tolerance: JudgeMode::Default,
        inputs,
        args: if inline { &case.args } else { &[] },
        expect: format!("mismatch {}", r.mismatch),
        expect_for,
        module: &case.module,
    }
    .text())
}
