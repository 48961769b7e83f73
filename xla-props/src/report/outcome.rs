//! How a case ended, and the counts over cases: the one outcome type, from a
//! property's body (pass, fail, skip) through the runner (which adds expected
//! failures, unexpected passes and rejections) to the `--json` results and
//! everything that reads them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a case ended. `F` is what a failure carries: in a run, the typed
/// failure (`property::Failure`, with its verdict; `property::Outcome` names
/// that type); read back from the `--json` results, nothing (`()`).
///
/// The JSON writes it as two fields: `outcome` (`passed`, `failed` or
/// `skipped`, what it counts as) and `kind` (`xpass`, `xfail` or `rejected`;
/// absent when `outcome` says it all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<F> {
    /// The property holds.
    Pass,
    /// The property does not hold.
    Fail(F),
    /// The case does not apply (unsupported op or dtype, a known limitation), with the reason.
    Skip(String),
    /// It passed although declared an expected failure (counted as passed).
    XPass,
    /// It failed as declared by an expected-failure limitation or a known
    /// bug (counted as skipped).
    XFail(F),
    /// It failed because the backend rejected or crashed on a module the
    /// reference runs (a compile error, a crash, a timeout): no values were
    /// judged, so it is not reported as wrong values (counted as failed).
    Rejected(F),
}

impl<F> Outcome<F> {
    /// Lowercase name: `pass`, `fail`, `skip`, `xpass`, `xfail`, `rejected`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Skip(_) => "skip",
            Outcome::XPass => "xpass",
            Outcome::XFail(_) => "xfail",
            Outcome::Rejected(_) => "rejected",
        }
    }

    /// What it counts as, as the JSON's `outcome` writes it: `passed`,
    /// `failed` or `skipped`.
    pub fn status_name(&self) -> &'static str {
        if self.is_failed() {
            "failed"
        } else if self.is_passed() {
            "passed"
        } else {
            "skipped"
        }
    }

    /// The JSON's `kind`: the name, when `outcome` does not say it all.
    pub fn kind_name(&self) -> Option<&'static str> {
        match self {
            Outcome::Pass | Outcome::Fail(_) | Outcome::Skip(_) => None,
            _ => Some(self.name()),
        }
    }

    /// Counted as passed (a pass or an unexpected pass).
    pub fn is_passed(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::XPass)
    }

    /// Counted as failed (a failure or a rejection).
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Fail(_) | Outcome::Rejected(_))
    }

    /// Counted as skipped (a skip or an expected failure).
    pub fn is_skipped(&self) -> bool {
        matches!(self, Outcome::Skip(_) | Outcome::XFail(_))
    }

    /// The failure it carries (failures, rejections and expected failures).
    pub fn failure(&self) -> Option<&F> {
        match self {
            Outcome::Fail(f) | Outcome::XFail(f) | Outcome::Rejected(f) => Some(f),
            _ => None,
        }
    }

    /// The same outcome without its failure's payload (what the JSON keeps).
    pub fn bare(&self) -> Outcome<()> {
        match self {
            Outcome::Pass => Outcome::Pass,
            Outcome::Fail(_) => Outcome::Fail(()),
            Outcome::Skip(why) => Outcome::Skip(why.clone()),
            Outcome::XPass => Outcome::XPass,
            Outcome::XFail(_) => Outcome::XFail(()),
            Outcome::Rejected(_) => Outcome::Rejected(()),
        }
    }
}

impl Outcome<()> {
    /// The outcome the JSON's `outcome` and `kind` fields name (`None` when
    /// they name none, or disagree).
    ///
    /// ```
    /// use xla_props::report::Outcome;
    /// assert_eq!(Outcome::from_names("skipped", Some("xfail")), Some(Outcome::XFail(())));
    /// assert_eq!(Outcome::from_names("failed", None), Some(Outcome::Fail(())));
    /// assert_eq!(Outcome::from_names("passed", Some("rejected")), None);
    /// ```
    pub fn from_names(status: &str, kind: Option<&str>) -> Option<Outcome<()>> {
        let o = match (status, kind) {
            ("passed", None) => Outcome::Pass,
            ("failed", None) => Outcome::Fail(()),
            ("skipped", None) => Outcome::Skip(String::new()),
            (_, Some("xpass")) => Outcome::XPass,
            (_, Some("xfail")) => Outcome::XFail(()),
            (_, Some("rejected")) => Outcome::Rejected(()),
            // an unknown kind from a newer runner: what `outcome` counts it as
            (s, Some(_)) => return Outcome::from_names(s, None),
            _ => return None,
        };
        (o.status_name() == status).then_some(o)
    }
}

/// The JSON's `outcome` field: what the outcome counts as.
pub(super) fn serialize_status<S: Serializer>(
    o: &Option<Outcome<()>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    o.as_ref().map(Outcome::status_name).serialize(s)
}

/// The JSON's `outcome` field, read as the outcome it counts as (`kind`
/// refines it: see `RunResults::parse`).
pub(super) fn deserialize_status<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Outcome<()>>, D::Error> {
    let Some(name) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    Outcome::from_names(&name, None)
        .map(Some)
        .ok_or_else(|| serde::de::Error::unknown_variant(&name, &["passed", "failed", "skipped"]))
}

/// Passed, failed and skipped counts (and, in a run, how many cases the
/// filters left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases that passed.
    pub passed: u64,
    /// Cases that failed.
    pub failed: u64,
    /// Cases that were skipped (expected failures included).
    pub skipped: u64,
    /// Cases the filters left out (a run's; zero in a report).
    pub filtered_out: u64,
}

impl Counts {
    /// Counts one more case.
    pub fn add<F>(&mut self, o: &Outcome<F>) {
        if o.is_failed() {
            self.failed += 1;
        } else if o.is_passed() {
            self.passed += 1;
        } else {
            self.skipped += 1;
        }
    }

    /// All cases that ran (or were skipped), not those filtered out.
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_names_itself_back() {
        let all: [Outcome<()>; 6] = [
            Outcome::Pass,
            Outcome::Fail(()),
            Outcome::Skip(String::new()),
            Outcome::XPass,
            Outcome::XFail(()),
            Outcome::Rejected(()),
        ];
        let mut c = Counts::default();
        for o in &all {
            assert_eq!(
                Outcome::from_names(o.status_name(), o.kind_name()).as_ref(),
                Some(o)
            );
            c.add(o);
        }
        assert_eq!((c.passed, c.failed, c.skipped, c.total()), (2, 2, 2, 6));
        assert_eq!(Outcome::<()>::Rejected(()).status_name(), "failed");
        assert_eq!(Outcome::<()>::XFail(()).status_name(), "skipped");
        assert_eq!(Outcome::from_names("bogus", None), None);
    }
}
