//! What one side of a comparison produced (`Produced`): the one type for
//! "one side's result", whoever ran it (`backend::run_module`,
//! `backend::run_reference`), and the failure half of the one pair
//! classifier (`Judge::judge`).

use super::verdict::{Side, Verdict};
use crate::literal::Literal;

/// What one side of a comparison produced.
///
/// ```
/// use xla_props::check::Produced;
/// let failed = Produced::Failed("division by zero".into());
/// assert!(failed.outputs().is_none());
/// assert!(Produced::Ok(vec![]).outputs().is_some());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Produced {
    /// The outputs, tuples flattened.
    Ok(Vec<Literal>),
    /// A failure, described: the reference's error, or a backend's error
    /// other than a compile or execution error.
    Failed(String),
    /// A backend's compile or execution error: its whole text (`error`)
    /// and the backend's own `message` in it, which a known bug's
    /// `BugModel::Rejects` matches (`Verdict::KnownRejection`).
    Errored {
        /// The backend's own message.
        message: String,
        /// The whole error, as reported.
        error: String,
    },
    /// The side panicked (a broken binding or evaluator, never a legal
    /// outcome): a failure whatever the other side did.
    Panicked(String),
    /// The side cannot run this program (an op or dtype it lacks, or the
    /// backend cannot run here at all).
    Unsupported(String),
}

impl Produced {
    /// The outputs, when it ran.
    pub fn outputs(&self) -> Option<&[Literal]> {
        match self {
            Produced::Ok(v) => Some(v),
            _ => None,
        }
    }

    /// The failure's text, when it failed (an error or a panic).
    pub fn failure(&self) -> Option<String> {
        match self {
            Produced::Failed(e) | Produced::Errored { error: e, .. } => Some(e.clone()),
            Produced::Panicked(p) => Some(format!("panicked: {p}")),
            Produced::Ok(_) | Produced::Unsupported(_) => None,
        }
    }

    /// The outputs, owned, when it ran.
    pub fn into_outputs(self) -> Option<Vec<Literal>> {
        match self {
            Produced::Ok(v) => Some(v),
            _ => None,
        }
    }
}

/// Both sides' outputs, or the verdict on two outcomes of which at least
/// one is not outputs: a side that cannot run the program is a skip, a
/// panic fails whatever the other side did, both failing alike is an
/// agreement.
pub(super) fn both_outputs<'p>(
    expected: &'p Produced,
    actual: &'p Produced,
) -> Result<(&'p [Literal], &'p [Literal]), Verdict> {
    let (e, a) = match (expected, actual) {
        (Produced::Ok(e), Produced::Ok(a)) => return Ok((e, a)),
        (Produced::Unsupported(why), _) => {
            return Err(Verdict::Skipped {
                reason: format!("the reference does not support this: {why}"),
            })
        }
        (_, Produced::Unsupported(why)) => {
            return Err(Verdict::Skipped {
                reason: format!("the backend does not support this: {why}"),
            })
        }
        (Produced::Panicked(_), _) => (expected.failure(), None),
        (_, Produced::Panicked(_)) => (None, actual.failure()),
        _ => (expected.failure(), actual.failure()),
    };
    Err(match (e, a) {
        (Some(e), Some(a)) if e == a => Verdict::BothFailedAlike { error: e },
        (Some(e), Some(a)) => Verdict::BothFailedDifferently {
            expected_error: e,
            actual_error: a,
        },
        (Some(e), None) => Verdict::OnlyOneFailed {
            failed: Side::Reference,
            error: e,
        },
        (None, a) => Verdict::OnlyOneFailed {
            failed: Side::Backend,
            error: a.unwrap_or_default(),
        },
    })
}
