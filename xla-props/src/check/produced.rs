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
    /// A failure (an error or a panic), described.
    Failed(String),
    /// The side cannot run this program (an op or dtype it lacks).
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

    /// The outputs, owned, when it ran.
    pub fn into_outputs(self) -> Option<Vec<Literal>> {
        match self {
            Produced::Ok(v) => Some(v),
            _ => None,
        }
    }
}

/// Both sides' outputs, or the verdict on two outcomes of which at least
/// one is not outputs.
pub(super) fn both_outputs<'p>(
    expected: &'p Produced,
    actual: &'p Produced,
) -> Result<(&'p [Literal], &'p [Literal]), Verdict> {
    Err(match (expected, actual) {
        (Produced::Unsupported(why), _) => Verdict::Skipped {
            reason: format!("the reference does not support this: {why}"),
        },
        (_, Produced::Unsupported(why)) => Verdict::Skipped {
            reason: format!("the backend does not support this: {why}"),
        },
        (Produced::Failed(e), Produced::Failed(a)) if e == a => {
            Verdict::BothFailedAlike { error: e.clone() }
        }
        (Produced::Failed(e), Produced::Failed(a)) => Verdict::BothFailedDifferently {
            expected_error: e.clone(),
            actual_error: a.clone(),
        },
        (Produced::Failed(e), Produced::Ok(_)) => Verdict::OnlyOneFailed {
            failed: Side::Reference,
            error: e.clone(),
        },
        (Produced::Ok(_), Produced::Failed(a)) => Verdict::OnlyOneFailed {
            failed: Side::Backend,
            error: a.clone(),
        },
        (Produced::Ok(e), Produced::Ok(a)) => return Ok((e, a)),
    })
}
