//! Running a `.hlotest` on a backend, checking the expectation, blessing.

use std::path::Path;
use std::sync::Mutex;

use super::expect::{short_version, Expectation};
use super::format::{HloTest, JudgeMode};
use crate::backend::Backend;
use crate::check::{Judge, Policy, Produced, Verdict};
use crate::isolate::{Oracle, Tested};

/// The environment variable that makes failing expectations rewrite themselves.
pub const BLESS_ENV: &str = "XLA_PROPS_BLESS";

/// Serializes blessing: trials of one file on several backends run in parallel.
static BLESS_LOCK: Mutex<()> = Mutex::new(());

/// What a backend did on a test.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The outcome, in the terms of an expectation (whole messages).
    pub outcome: Expectation,
    /// The verdict itself.
    pub verdict: Verdict,
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

/// Runs `test` on `backend` against the exact reference, with the backend's
/// numerics and known bugs (a mismatch or a compile error they explain is
/// `Verdict::KnownBug` / `Verdict::KnownRejection`).
pub fn observe(test: &HloTest, backend: &dyn Backend) -> Result<Observation, String> {
    let args = test.arguments()?;
    let tested = Tested::new(backend);
    let module = &test.module;
    // the one judge; `tolerance=exact` forbids every tolerance and elided rounding
    let strict = matches!(test.tolerance, JudgeMode::Exact);
    let expected = Oracle::Exact.run(module, &args);
    let actual = Produced::from(tested.run(module, &args));
    let eval = |m: &crate::hlo::Module, a: &[crate::literal::Literal]| {
        crate::reference::evaluate(m, a).ok()
    };
    let verdict = Judge::new(&tested.numerics(), backend.known_bugs(), Policy::Reference)
        .strict_rounding(strict)
        .judge(module, &args, &expected, &actual, &eval);
    Ok(Observation {
        outcome: Expectation::observed(&verdict),
        detail: verdict.to_string(),
        verdict,
    })
}

/// Runs `test` on `backend` and checks its expectation for the backend's
/// version; with `XLA_PROPS_BLESS=1` a failing (or missing) expectation is
/// rewritten in the file.
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
    run_file_at(test, backend, backend.version())
}

/// [`run_file_on`] with the backend's version text given (a runner asks each
/// backend once: an XLA backend's hashes its plugin file).
pub fn run_file_at(test: &HloTest, backend: &dyn Backend, version: Option<String>) -> TrialResult {
    let want = test.expectation_at(backend.name(), version.as_deref());
    let obs = match observe(test, backend) {
        Ok(o) => o,
        Err(e) => return TrialResult::Fail(format!("cannot run: {e}")),
    };
    if want.as_ref().is_some_and(|w| w.holds_for(&obs.verdict)) {
        return TrialResult::Pass;
    }
    let blessing = std::env::var(BLESS_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    if blessing {
        if let Some(path) = &test.path {
            let observed = obs.outcome.clone().blessed();
            return match bless(path, backend.name(), version.as_deref(), &observed) {
                Ok(()) => TrialResult::Blessed,
                Err(e) => TrialResult::Fail(format!("cannot bless {}: {e}", path.display())),
            };
        }
    }
    let name = backend.name();
    TrialResult::Fail(match want {
        Some(want) => format!(
            "expected `{want}` on {name}, got `{}`: {}",
            obs.outcome.clone().blessed(),
            obs.detail
        ),
        None => format!(
            "no expectation for {name} at its version ({}); got `{}`: {} \
             (run with {BLESS_ENV}=1 to record it)",
            version
                .as_deref()
                .and_then(short_version)
                .unwrap_or_else(|| "unknown".into()),
            obs.outcome.clone().blessed(),
            obs.detail
        ),
    })
}

/// Rewrites the expectation of `backend` (at `version`, its version text)
/// in the file at `path` to `observed`: the line that applies to that
/// version when there is one (a pinned line, the backend's own line, or the
/// common `// expect:` line when the file runs on that backend only);
/// else a new `// expect@BACKEND[V]:` line (pinned when the file pins this
/// backend's versions) after the common one.
pub fn bless(
    path: &Path,
    backend: &str,
    version: Option<&str>,
    observed: &Expectation,
) -> std::io::Result<()> {
    let _guard = BLESS_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let text = std::fs::read_to_string(path)?;
    let test = HloTest::parse(&text, Some(path))
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    let own: Vec<_> = test
        .expect_for
        .iter()
        .filter(|x| x.backend == backend)
        .collect();
    let pinned = own.iter().find(|x| {
        x.version
            .as_deref()
            .is_some_and(|p| version.is_some_and(|v| super::expect::version_matches(p, v)))
    });
    let unpinned = own.iter().find(|x| x.version.is_none());
    let pins = !own.is_empty() && unpinned.is_none();
    // the key of the line to rewrite, or None: the common line
    let key = match (pinned, unpinned) {
        (Some(x), _) => Some(format!("{backend}[{}]", x.version.as_deref().unwrap_or(""))),
        (None, Some(_)) => Some(backend.to_string()),
        (None, None) => None,
    };
    let only = test.backends.len() == 1 && test.backends[0] == backend;
    let new_key = match version.and_then(short_version) {
        Some(v) if pins => format!("{backend}[{v}]"),
        _ => backend.to_string(),
    };
    let mut out = String::new();
    let mut done = false;
    for line in text.lines() {
        let comment = line.trim_start().strip_prefix("//").map(str::trim_start);
        let line_key = comment
            .and_then(|b| b.strip_prefix("expect@"))
            .and_then(super::expect::split_expect_line)
            .map(|(k, _)| k.trim());
        let is_common = comment.is_some_and(|b| b.starts_with("expect:"));
        if !done && key.is_some() && line_key == key.as_deref() {
            out.push_str(&format!(
                "// expect@{}: {observed}\n",
                key.as_deref().unwrap_or("")
            ));
            done = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if !done && key.is_none() && is_common {
            if only && !pins {
                out.truncate(out.len() - line.len() - 1);
                out.push_str(&format!("// expect: {observed}\n"));
            } else {
                out.push_str(&format!("// expect@{new_key}: {observed}\n"));
            }
            done = true;
        }
    }
    std::fs::write(path, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendError, Interpreter};
    use crate::check::MismatchKind;

    const NEG: &str =
        "HloModule m\nENTRY main { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }\n";

    /// `NEG` under `directives`, written as `neg.hlotest` in a fresh
    /// directory (which lives as long as the returned guard).
    fn neg_file(directives: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("neg.hlotest");
        std::fs::write(&path, format!("{directives}{NEG}")).unwrap();
        (dir, path)
    }

    #[test]
    fn a_wrong_expectation_fails_and_bless_rewrites_it() {
        let (_dir, path) =
            neg_file("// run: backends=interpreter inputs=seed:1\n// expect: mismatch values\n");
        let t = HloTest::load(&path).unwrap();
        match run_file_on(&t, &Interpreter::default()) {
            TrialResult::Fail(m) => assert!(m.contains("expected `mismatch values`"), "{m}"),
            other => panic!("expected a failure, got {other:?}"),
        }
        bless(&path, "interpreter", None, &Expectation::Agree).unwrap();
        let t = HloTest::load(&path).unwrap();
        assert_eq!(t.expect, Expectation::Agree);
        assert_eq!(run_file_on(&t, &Interpreter::default()), TrialResult::Pass);
    }

    #[test]
    fn bless_adds_a_per_backend_line_when_others_share_the_file() {
        let (_dir, path) = neg_file("// run: backends=interpreter,xla-cpu\n// expect: agree\n");
        bless(
            &path,
            "interpreter",
            None,
            &Expectation::Skip(String::new()),
        )
        .unwrap();
        let t = HloTest::load(&path).unwrap();
        assert_eq!(t.expect, Expectation::Agree);
        assert_eq!(
            t.expectation("interpreter"),
            Expectation::Skip(String::new())
        );
        assert_eq!(t.expectation("xla-cpu"), Expectation::Agree);
    }

    /// The interpreter under another name and version.
    struct Versioned(&'static str, &'static str);
    impl Backend for Versioned {
        fn name(&self) -> &str {
            self.0
        }
        fn version(&self) -> Option<String> {
            Some(format!("toy compiler {} (built today)", self.1))
        }
        fn compile(
            &self,
            module: &crate::hlo::Module,
        ) -> Result<Box<dyn crate::backend::Executable>, BackendError> {
            Interpreter::default().compile(module)
        }
    }

    #[test]
    fn a_pinned_expectation_applies_to_its_version_only() {
        let (_dir, path) = neg_file(
            "// run: backends=interpreter,toy inputs=seed:1\n// expect: agree\n\
             // expect@toy[1.2]: mismatch values\n",
        );
        let t = HloTest::load(&path).unwrap();
        // 1.2's expectation does not hold (the toy agrees)
        match run_file_on(&t, &Versioned("toy", "1.2")) {
            TrialResult::Fail(m) => assert!(m.contains("expected `mismatch values`"), "{m}"),
            other => panic!("expected a failure, got {other:?}"),
        }
        // 1.3 has none: a failure that names the version
        match run_file_on(&t, &Versioned("toy", "1.3")) {
            TrialResult::Fail(m) => assert!(
                m.contains("no expectation for toy at its version (1.3)"),
                "{m}"
            ),
            other => panic!("expected a failure, got {other:?}"),
        }
        assert_eq!(run_file_on(&t, &Interpreter::default()), TrialResult::Pass);
        // blessing 1.3 adds its own pinned line and leaves 1.2's
        bless(
            &path,
            "toy",
            Some("toy compiler 1.3 (built today)"),
            &Expectation::Agree,
        )
        .unwrap();
        let t = HloTest::load(&path).unwrap();
        assert_eq!(
            t.expectation_at("toy", Some("toy 1.3")),
            Some(Expectation::Agree)
        );
        assert_eq!(
            t.expectation_at("toy", Some("toy 1.2")),
            Some(Expectation::Mismatch(MismatchKind::Values))
        );
        assert_eq!(run_file_on(&t, &Versioned("toy", "1.3")), TrialResult::Pass);
        // and blessing 1.2 rewrites its line in place
        bless(&path, "toy", Some("toy 1.2"), &Expectation::Agree).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("// expect@toy[1.2]: agree\n")
                && text.contains("// expect@toy[1.3]: agree\n")
                && !text.contains("mismatch"),
            "{text}"
        );
    }

    /// A backend that rejects every module.
    struct Rejecting;
    impl Backend for Rejecting {
        fn name(&self) -> &str {
            "rejecting"
        }
        fn compile(
            &self,
            _: &crate::hlo::Module,
        ) -> Result<Box<dyn crate::backend::Executable>, BackendError> {
            Err(BackendError::Compile(
                "tool: /tmp/m.mlir:3:5: error: binding count 41 > 32".into(),
            ))
        }
    }

    #[test]
    fn a_rejection_is_judged_by_its_message_and_blessed_as_an_excerpt() {
        let (_dir, path) = neg_file(
            "// run: backends=rejecting inputs=seed:1\n// expect: rejected \"binding count\"\n",
        );
        let t = HloTest::load(&path).unwrap();
        assert_eq!(run_file_on(&t, &Rejecting), TrialResult::Pass);
        let obs = observe(&t, &Rejecting).unwrap();
        bless(&path, "rejecting", None, &obs.outcome.blessed()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("// expect: rejected \"binding count 41 > 32\"\n"),
            "{text}"
        );
        let t = HloTest::parse(&text.replace("41 > 32", "9 > 8"), None).unwrap();
        match run_file_on(&t, &Rejecting) {
            TrialResult::Fail(m) => assert!(
                m.contains("expected `rejected \"binding count 9 > 8\"`"),
                "{m}"
            ),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn malformed_directives_name_the_line() {
        let is = |e: &str, want: &str| e == want;
        let starts = |e: &str, want: &str| e.starts_with(want);
        let contains = |e: &str, want: &str| e.contains(want);
        type Says = fn(&str, &str) -> bool;
        let cases: [(String, Says, &str); 6] = [
            (
                format!("// run: backends=interpreter flavor=x\n// expect: agree\n{NEG}"),
                is,
                "<text>:1: unknown run option `flavor`",
            ),
            (
                format!("// run: backends=interpreter\n// expect: maybe\n{NEG}"),
                starts,
                "<text>:2: unknown expectation `maybe`",
            ),
            (
                "// run: backends=interpreter\n// expect: agree\nHloModule m\nENTRY main { p = f32[4] parameter(0) ROOT n = f32[4] negat(p) }\n".to_string(),
                starts,
                "<text>:4: column ",
            ),
            (
                format!("// run: backends=interpreter\n// expect: agree\n// expect@a[1: agree\n{NEG}"),
                starts,
                "<text>:3: bad version pin",
            ),
            (
                format!("// run: backends=interpreter inputs=inline distribution=edge\n// expect: agree\n{NEG}"),
                contains,
                "`distribution=` needs generated inputs",
            ),
            (NEG.to_string(), contains, "missing `// run: backends=...`"),
        ];
        for (text, says, want) in cases {
            let e = HloTest::parse(&text, None).unwrap_err().to_string();
            assert!(says(&e, want), "{e}, expected {want:?}");
        }
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
