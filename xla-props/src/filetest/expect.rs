//! What a `.hlotest` expects of a backend (`// expect:` and
//! `// expect@BACKEND[VERSION]:` lines), what a backend was observed to do in
//! the same terms, and when the one satisfies the other.
//!
//! ```text
//! agree                      the backend agrees with the reference
//! mismatch KIND              it disagrees (KIND: values, non-finite, shape, backend-failed, ...)
//! known-bug ID[,ID]          it disagrees (or rejects the module) exactly as these known bugs say
//! rejected "SUBSTRING"       it fails to compile or run a module the reference runs
//! skip "SUBSTRING"           it cannot express the module (an op, dtype, device count)
//! ```

use crate::check::MismatchKind;
use crate::check::Verdict;

/// The expected (or observed) outcome on one backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// The backend agrees with the reference.
    Agree,
    /// A disagreement of this kind (explained by a known bug or not).
    Mismatch(MismatchKind),
    /// A disagreement, or a rejection, that exactly these known bugs of the
    /// backend explain (ids, sorted).
    KnownBug(Vec<String>),
    /// The backend failed on a module the reference runs; its error contains
    /// this text (observed: the whole error).
    Rejected(String),
    /// The case is skipped (an unsupported op, dtype or device count); the
    /// reason contains this text (observed: the whole reason).
    Skip(String),
}

impl Expectation {
    /// The outcome of a verdict, in the terms of an expectation (the observed
    /// side: whole messages, every bug id).
    pub fn observed(verdict: &Verdict) -> Expectation {
        let ids = |bugs: &[crate::check::KnownBugNote]| {
            let mut ids: Vec<String> = bugs.iter().map(|b| b.id.clone()).collect();
            ids.sort();
            ids.dedup();
            ids
        };
        match verdict {
            Verdict::Skipped { reason } => Expectation::Skip(reason.clone()),
            Verdict::KnownBug { bugs, .. } | Verdict::KnownRejection { bugs, .. } => {
                Expectation::KnownBug(ids(bugs))
            }
            Verdict::OnlyOneFailed {
                failed: crate::check::Side::Backend,
                error,
            } => Expectation::Rejected(error.clone()),
            v => match v.kind() {
                Some(k) => Expectation::Mismatch(k),
                None => Expectation::Agree,
            },
        }
    }

    /// True when the observed `verdict` satisfies this expectation. A
    /// `mismatch KIND` holds for any disagreement of that kind, explained by a
    /// known bug or not (`mismatch backend-failed`: any rejection); the other
    /// forms must match exactly (bug ids as a set, messages by substring).
    pub fn holds_for(&self, verdict: &Verdict) -> bool {
        let observed = Expectation::observed(verdict);
        match (self, &observed) {
            (Expectation::Mismatch(k), _) => verdict.kind() == Some(*k),
            (Expectation::Rejected(want), Expectation::Rejected(got))
            | (Expectation::Skip(want), Expectation::Skip(got)) => got.contains(want.as_str()),
            (want, got) => want == got,
        }
    }

    /// The expectation to record for what was observed: messages cut to a
    /// short excerpt that does not name a file or a process (`XLA_PROPS_BLESS`).
    pub fn blessed(self) -> Expectation {
        match self {
            Expectation::Rejected(m) => Expectation::Rejected(excerpt(&m)),
            Expectation::Skip(m) => Expectation::Skip(excerpt(&m)),
            e => e,
        }
    }
}

/// A stable excerpt of an error message: its first line, without the
/// judge's and the backend's prefixes and from the last `error: ` on (tools
/// prefix their diagnostics with a file and a line), up to 60 characters,
/// before any quote or path, cut at a word.
fn excerpt(message: &str) -> String {
    const PREFIXES: [&str; 4] = [
        "the backend does not support this: ",
        "unsupported: ",
        "compile error: ",
        "execution error: ",
    ];
    let mut line = message.lines().next().unwrap_or("").trim();
    line = line.rsplit_once("error: ").map_or(line, |(_, r)| r);
    while let Some(p) = PREFIXES.iter().find(|p| line.starts_with(**p)) {
        line = &line[p.len()..];
    }
    let mut out = String::new();
    for c in line.chars() {
        if c == '"' || (c == '/' && out.ends_with(' ')) || out.chars().count() >= 60 {
            break;
        }
        out.push(c);
    }
    let out = out.trim_end();
    // cut at a word boundary so a count or a name is never half kept
    match out.rsplit_once(' ') {
        Some((head, _)) if out.len() < line.len() && head.len() >= 12 => {
            head.trim_end().to_string()
        }
        _ => out.to_string(),
    }
}

impl std::fmt::Display for Expectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expectation::Agree => f.write_str("agree"),
            Expectation::Mismatch(k) => write!(f, "mismatch {k}"),
            Expectation::KnownBug(ids) => write!(f, "known-bug {}", ids.join(",")),
            Expectation::Rejected(m) if m.is_empty() => f.write_str("rejected"),
            Expectation::Rejected(m) => write!(f, "rejected \"{m}\""),
            Expectation::Skip(m) if m.is_empty() => f.write_str("skip"),
            Expectation::Skip(m) => write!(f, "skip \"{m}\""),
        }
    }
}

impl std::str::FromStr for Expectation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (word, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
        let rest = rest.trim();
        match word {
            "agree" if rest.is_empty() => Ok(Expectation::Agree),
            "mismatch" if rest.is_empty() => Ok(Expectation::Mismatch(MismatchKind::Values)),
            "mismatch" => rest.parse().map(Expectation::Mismatch),
            "known-bug" => {
                let mut ids: Vec<String> = rest
                    .split(',')
                    .map(str::trim)
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .collect();
                if ids.is_empty() || ids.iter().any(|id| id.contains(char::is_whitespace)) {
                    return Err(format!(
                        "`known-bug` needs bug ids separated by commas, found `{rest}`"
                    ));
                }
                ids.sort();
                ids.dedup();
                Ok(Expectation::KnownBug(ids))
            }
            "rejected" => quoted(rest).map(Expectation::Rejected),
            "skip" => quoted(rest).map(Expectation::Skip),
            _ => Err(format!(
                "unknown expectation `{s}` (expected `agree`, `mismatch KIND`, \
                 `known-bug ID`, `rejected \"TEXT\"` or `skip`)"
            )),
        }
    }
}

/// The text of an optional `"..."` (empty: any message).
fn quoted(rest: &str) -> Result<String, String> {
    if rest.is_empty() {
        return Ok(String::new());
    }
    rest.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .map(str::to_string)
        .ok_or_else(|| format!("expected a quoted message like \"TEXT\", found `{rest}`"))
}

/// One `// expect@BACKEND[VERSION]: ...` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendExpectation {
    /// The backend's name.
    pub backend: String,
    /// The version it is pinned to (a word of `Backend::version`), if any.
    pub version: Option<String>,
    /// What it expects there.
    pub expect: Expectation,
}

/// Splits the rest of an `expect@` line into the backend key and the
/// expectation, at the first `: ` (backend names may hold `:`, never `: `;
/// messages may hold both).
pub(crate) fn split_expect_line(rest: &str) -> Option<(&str, &str)> {
    match rest.find(": ") {
        Some(k) => Some((&rest[..k], &rest[k + 2..])),
        None => rest.rsplit_once(':'),
    }
}

/// Splits `BACKEND[VERSION]` (backend names may hold `:` and `@`, never `[`).
pub(crate) fn parse_backend_key(key: &str) -> Result<(String, Option<String>), String> {
    let key = key.trim();
    match key.split_once('[') {
        None if key.is_empty() => Err("expected `expect@BACKEND: ...`".into()),
        None => Ok((key.to_string(), None)),
        Some((b, v)) => {
            let v = v
                .strip_suffix(']')
                .filter(|v| !v.is_empty() && !v.contains(['[', ']']))
                .ok_or_else(|| format!("bad version pin in `{key}` (expected BACKEND[VERSION])"))?;
            if b.is_empty() {
                return Err(format!("no backend before the version pin in `{key}`"));
            }
            Ok((b.to_string(), Some(v.trim().to_string())))
        }
    }
}

/// The words of a backend's version text, a pin matches one of them.
fn version_words(version: &str) -> impl Iterator<Item = &str> {
    version
        .split(|c: char| c.is_whitespace() || ",;()=".contains(c))
        .filter(|w| !w.is_empty())
}

/// True when `pin` is one word of the backend's `version` text
/// (`3.13.0` of `iree 3.13.0 (...)`, `0.115` of `pjrt c api 0.115, ...`).
///
/// ```
/// use xla_props::filetest::version_matches;
/// assert!(version_matches("3.13.0", "iree 3.13.0 (iree-base-compiler)"));
/// assert!(!version_matches("0.11", "pjrt c api 0.115, xla_version=2"));
/// ```
pub fn version_matches(pin: &str, version: &str) -> bool {
    version_words(version).any(|w| w == pin)
}

/// The short version to pin a blessed expectation to: the first word of the
/// version text that is a dotted number (`3.13.0`, `0.115`).
pub fn short_version(version: &str) -> Option<String> {
    version_words(version)
        .find(|w| {
            w.contains('.')
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
                && w.starts_with(|c: char| c.is_ascii_digit())
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_prints_and_parses_back() {
        for text in [
            "agree",
            "mismatch values",
            "mismatch backend-failed",
            "known-bug iree-cpu/a,xla-cpu/b",
            "rejected \"binding count\"",
            "rejected",
            "skip",
            "skip \"select_and_scatter\"",
        ] {
            let e: Expectation = text.parse().unwrap();
            assert_eq!(e.to_string(), text);
        }
        assert_eq!(
            "known-bug b, a".parse::<Expectation>().unwrap(),
            Expectation::KnownBug(vec!["a".into(), "b".into()])
        );
        for bad in [
            "maybe",
            "agree now",
            "known-bug",
            "rejected binding",
            "skip \"x",
        ] {
            assert!(bad.parse::<Expectation>().is_err(), "{bad}");
        }
    }

    #[test]
    fn messages_match_by_substring_and_mismatch_by_kind() {
        let rejected = Verdict::OnlyOneFailed {
            failed: crate::check::Side::Backend,
            error: "compile error: iree-compile: binding count 41 > 32".into(),
        };
        assert!(Expectation::Rejected("binding count".into()).holds_for(&rejected));
        assert!(!Expectation::Rejected("verifier".into()).holds_for(&rejected));
        assert!(Expectation::Mismatch(MismatchKind::BackendFailed).holds_for(&rejected));
        let known = Verdict::KnownRejection {
            bugs: vec![crate::check::KnownBugNote {
                id: "iree-cpu/x".into(),
                summary: String::new(),
                documented: String::new(),
            }],
            error: "e".into(),
        };
        assert!(Expectation::KnownBug(vec!["iree-cpu/x".into()]).holds_for(&known));
        assert!(!Expectation::KnownBug(vec!["iree-cpu/y".into()]).holds_for(&known));
        assert!(!Expectation::Rejected(String::new()).holds_for(&known));
        let skip = Verdict::Skipped {
            reason: "needs 2 devices".into(),
        };
        assert!(Expectation::Skip(String::new()).holds_for(&skip));
        assert!(!Expectation::Agree.holds_for(&skip));
    }

    #[test]
    fn a_blessed_message_is_a_short_stable_excerpt() {
        let e = Expectation::Rejected(
            "compile error: iree-compile: /tmp/x/m.mlir:3:5: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2".into(),
        )
        .blessed();
        assert_eq!(
            e,
            Expectation::Rejected(
                "'linalg.generic' op inferred input/output operand #1 has".into()
            )
        );
    }

    #[test]
    fn pins_match_whole_version_words() {
        assert_eq!(
            parse_backend_key("iree-cpu[3.13.0]").unwrap(),
            ("iree-cpu".into(), Some("3.13.0".into()))
        );
        assert_eq!(
            parse_backend_key("buggy:bug@comp").unwrap(),
            ("buggy:bug@comp".into(), None)
        );
        assert!(parse_backend_key("iree-cpu[3.13.0").is_err());
        assert!(parse_backend_key("[1]").is_err());
        let v = "pjrt c api 0.115, xla_version=2, stablehlo_current_version=1.20.0";
        assert!(version_matches("0.115", v));
        assert!(!version_matches("0.11", v));
        assert_eq!(short_version(v).as_deref(), Some("0.115"));
        assert_eq!(
            short_version("iree 3.13.0 (iree-base-compiler)").as_deref(),
            Some("3.13.0")
        );
    }
}
