//! Running a `.hlotest` on a backend, checking the expectation, blessing.

use std::path::Path;
use std::sync::Mutex;

use super::format::{Expectation, HloTest, JudgeMode};
use crate::backend::Backend;
use crate::check::Verdict;
use crate::isolate::{MismatchKind, Oracle, Tested};

/// The environment variable that makes failing expectations rewrite themselves.
pub const BLESS_ENV: &str = "XLA_PROPS_BLESS";

/// Serializes blessing: trials of one file on several backends run in parallel.
static BLESS_LOCK: Mutex<()> = Mutex::new(());

/// What a backend did on a test.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The outcome, in the terms of an expectation.
    pub outcome: Expectation,
    /// The verdict, in words.
    pub detail: String,
}

/// The result of one trial (file x backend).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrialResult {
    /// The expectation held.
    Pass,
    /// The expectation did not hold and was rewritten (`XLA_PROPS_BLESS=1`).
    Blessed,
    /// It did not hold: why.
    Fail(String),
}

/// Runs `test` on `backend` against the exact reference.
pub fn observe(test: &HloTest, backend: &dyn Backend) -> Result<Observation, String> {
    let args = test.arguments()?;
    let oracle = Oracle::Exact;
    let tested = Tested::new(backend);
    // the one judge; `tolerance=exact` forbids every tolerance and elided rounding
    let strict = matches!(test.tolerance, JudgeMode::Exact);
    let verdict = crate::isolate::judge::judge_results_with(
        &test.module,
        &args,
        oracle.run(&test.module, &args),
        tested.run(&test.module, &args),
        &tested.numerics(),
        strict,
    );
    let outcome = match &verdict {
        Verdict::Skipped { .. } => Expectation::Skip,
        v => match MismatchKind::of(v) {
            Some(k) => Expectation::Mismatch(k),
            None => Expectation::Agree,
        },
    };
    Ok(Observation {
        outcome,
        detail: verdict.to_string(),
    })
}

/// Runs `test` on `backend` and checks its expectation; with
/// `XLA_PROPS_BLESS=1` a failing expectation is rewritten in the file.
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::filetest::{run_file_on, HloTest, TrialResult};
/// let text = "// run: backends=interpreter inputs=seed:3\n// expect: agree\n\
///             HloModule m\nENTRY main { p = f32[8] parameter(0) ROOT a = f32[8] add(p, p) }\n";
/// let t = HloTest::parse(text, None).unwrap();
/// assert_eq!(run_file_on(&t, &Interpreter::default()), TrialResult::Pass);
/// ```
pub fn run_file_on(test: &HloTest, backend: &dyn Backend) -> TrialResult {
    let obs = match observe(test, backend) {
        Ok(o) => o,
        Err(e) => return TrialResult::Fail(format!("cannot run: {e}")),
    };
    let want = test.expectation(backend.name());
    if obs.outcome == want {
        return TrialResult::Pass;
    }
    let blessing = std::env::var(BLESS_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    if blessing {
        if let Some(path) = &test.path {
            return match bless(path, backend.name(), obs.outcome) {
                Ok(()) => TrialResult::Blessed,
                Err(e) => TrialResult::Fail(format!("cannot bless {}: {e}", path.display())),
            };
        }
    }
    TrialResult::Fail(format!(
        "expected `{want}` on {}, got `{}`: {}",
        backend.name(),
        obs.outcome,
        obs.detail
    ))
}

/// Rewrites the expectation of `backend` in the file at `path` to `observed`:
/// its `// expect@BACKEND:` line when there is one, the common `// expect:`
/// line when the file runs on that backend only, else a new
/// `// expect@BACKEND:` line after the common one.
pub fn bless(path: &Path, backend: &str, observed: Expectation) -> std::io::Result<()> {
    let _guard = BLESS_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let text = std::fs::read_to_string(path)?;
    let test = HloTest::parse(&text, Some(path))
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    let own = format!("expect@{backend}:");
    let has_own = text.lines().any(|l| {
        l.trim_start()
            .trim_start_matches("//")
            .trim_start()
            .starts_with(&own)
    });
    let only = test.backends.len() == 1 && test.backends[0] == backend;
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start().trim_start_matches("//").trim_start();
        if line.trim_start().starts_with("//") && has_own && body.starts_with(&own) {
            out.push_str(&format!("// expect@{backend}: {observed}\n"));
        } else if line.trim_start().starts_with("//") && !has_own && body.starts_with("expect:") {
            if only {
                out.push_str(&format!("// expect: {observed}\n"));
            } else {
                out.push_str(line);
                out.push('\n');
                out.push_str(&format!("// expect@{backend}: {observed}\n"));
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::write(path, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Interpreter;

    const NEG: &str =
        "HloModule m\nENTRY main { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }\n";

    #[test]
    fn a_wrong_expectation_fails_and_bless_rewrites_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("neg.hlotest");
        let text = format!(
            "// run: backends=interpreter inputs=seed:1\n// expect: mismatch values\n{NEG}"
        );
        std::fs::write(&path, &text).unwrap();
        let t = HloTest::load(&path).unwrap();
        match run_file_on(&t, &Interpreter::default()) {
            TrialResult::Fail(m) => assert!(m.contains("expected `mismatch values`"), "{m}"),
            other => panic!("expected a failure, got {other:?}"),
        }
        bless(&path, "interpreter", Expectation::Agree).unwrap();
        let t = HloTest::load(&path).unwrap();
        assert_eq!(t.expect, Expectation::Agree);
        assert_eq!(run_file_on(&t, &Interpreter::default()), TrialResult::Pass);
    }

    #[test]
    fn bless_adds_a_per_backend_line_when_others_share_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("neg.hlotest");
        let text = format!("// run: backends=interpreter,xla-cpu\n// expect: agree\n{NEG}");
        std::fs::write(&path, &text).unwrap();
        bless(&path, "interpreter", Expectation::Skip).unwrap();
        let t = HloTest::load(&path).unwrap();
        assert_eq!(t.expect, Expectation::Agree);
        assert_eq!(t.expectation("interpreter"), Expectation::Skip);
        assert_eq!(t.expectation("xla-cpu"), Expectation::Agree);
    }

    #[test]
    fn malformed_directives_name_the_line() {
        let e = HloTest::parse(
            &format!("// run: backends=interpreter flavor=x\n// expect: agree\n{NEG}"),
            None,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "<text>:1: unknown run option `flavor`");
        let e = HloTest::parse(
            &format!("// run: backends=interpreter\n// expect: maybe\n{NEG}"),
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("<text>:2: unknown expectation `maybe`"),
            "{e}"
        );
        let e = HloTest::parse(NEG, None).unwrap_err();
        assert!(
            e.to_string().contains("missing `// run: backends=...`"),
            "{e}"
        );
    }

    #[test]
    fn inline_arguments_round_trip_through_render() {
        use crate::hlo::{ArrayShape, ElementType};
        use crate::literal::Literal;
        let lit = Literal::from_f64s(
            &ArrayShape::new(ElementType::F16, vec![2, 2]),
            &[1.5, -0.0, 65504.0, 2f64.powi(-24)],
        )
        .unwrap();
        let line = crate::filetest::render_arg(&lit);
        let text = format!("// run: backends=interpreter inputs=inline\n// expect: agree\n// arg: {line}\nHloModule m\nENTRY main {{ p = f16[2,2] parameter(0) ROOT n = f16[2,2] negate(p) }}\n");
        let t = HloTest::parse(&text, None).unwrap();
        assert_eq!(t.args[0].to_bits_vec(), lit.to_bits_vec());
    }

    #[test]
    fn the_rng_and_triangular_solve_examples_agree_on_the_interpreter() {
        for (name, text) in [
            (
                "rng_bit_generator",
                include_str!("../../../tests/hlo/rng_bit_generator.hlotest"),
            ),
            (
                "triangular_solve",
                include_str!("../../../tests/hlo/triangular_solve.hlotest"),
            ),
        ] {
            let t = HloTest::parse(text, None).unwrap();
            assert_eq!(
                run_file_on(&t, &Interpreter::default()),
                TrialResult::Pass,
                "{name}"
            );
            // the values themselves, not only the judge's verdict (which
            // bounds nothing for a triangular solve)
            let (m, args) = (&t.module, t.arguments().unwrap());
            let reference = crate::reference::evaluate(m, &args).unwrap();
            let ours = Interpreter::default()
                .compile(m)
                .unwrap()
                .execute(&args)
                .unwrap();
            assert_eq!(ours.len(), reference.len());
            for (o, r) in ours.iter().zip(&reference) {
                for (x, y) in o.to_f64_vec().iter().zip(r.to_f64_vec()) {
                    assert!(
                        (x - y).abs() <= 1e-5 * y.abs().max(1.0),
                        "{name}: {x} vs {y}"
                    );
                }
            }
        }
    }
}
