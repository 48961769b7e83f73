//! Writing an isolation's results: `reproducer.hlotest` (with its inputs
//! inline, or as `.npy` files beside it when large), `report.md` and
//! `report.json`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::session::{Isolated, Report};
use crate::hlo::Module;
use crate::literal::Literal;

/// Arguments with more elements than this go to `.npy` files beside the reproducer.
pub const MAX_INLINE_ELEMENTS: usize = 4096;

/// Writes `dir/reproducer.hlotest`, `dir/report.md` and `dir/report.json`;
/// sets `report.reproducer` to the reproducer's path and returns it.
/// `agree_on` names backends on which the reproducer is expected to agree
/// (a known-good backend, so the file also guards against a false alarm).
pub fn write_results(
    isolated: &mut Isolated,
    dir: &Path,
    agree_on: &[String],
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("reproducer.hlotest");
    let text = reproducer_text(isolated, dir, agree_on)?;
    std::fs::write(&path, text)?;
    isolated.report.reproducer = Some(path.display().to_string());
    let json = serde_json::to_string_pretty(&isolated.report)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    std::fs::write(dir.join("report.json"), json + "\n")?;
    std::fs::write(dir.join("report.md"), markdown(&isolated.report, isolated))?;
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
    let (inputs, args) = if large {
        let mut names = Vec::new();
        for (k, a) in case.args.iter().enumerate() {
            let name = format!("reproducer.arg{k}.npy");
            a.write_npy_file(dir.join(&name))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            names.push(name);
        }
        (format!("npy:{}", names.join(",")), Vec::new())
    } else {
        (
            "inline".to_string(),
            case.args.iter().map(render_arg).collect(),
        )
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
    Ok(render(
        &comment,
        &backends,
        &inputs,
        &format!("mismatch {}", r.mismatch),
        &expect_for,
        &args,
        &case.module,
    ))
}

fn markdown(r: &Report, isolated: &Isolated) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# isolation of `{}` on `{}`\n", r.module, r.backend);
    let _ = writeln!(s, "- reference: `{}`, input seed {}", r.reference, r.seed);
    let _ = writeln!(s, "- whole module: {}", r.verdict);
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

/// Renders one argument as the text of an inline `// arg:` line of a
/// `.hlotest` file (without the prefix): `f32[2] 1.5 -2.0`. Floats print
/// as the shortest f64 text that reads back to the same value.
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::isolate::render_arg;
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

/// Renders a `.hlotest` file.
pub(crate) fn render(
    comment: &[String],
    backends: &[String],
    inputs: &str,
    expect: &str,
    expect_for: &[(String, String)],
    args: &[String],
    module: &Module,
) -> String {
    let mut s = String::new();
    for c in comment {
        s.push_str(&format!("// {c}\n"));
    }
    s.push_str(&format!(
        "// run: backends={} tolerance=default inputs={inputs}\n",
        backends.join(",")
    ));
    s.push_str(&format!("// expect: {expect}\n"));
    for (b, e) in expect_for {
        s.push_str(&format!("// expect@{b}: {e}\n"));
    }
    for a in args {
        s.push_str(&format!("// arg: {a}\n"));
    }
    s.push_str(&crate::hlo::print_module(module));
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}
