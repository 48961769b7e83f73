//! The check ops' description: what a `check.expect_*` op asks of a result.

use crate::hlo::ir::InstrId;

/// Which check op a check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// `expect_eq`, `expect_eq_const`: exact IEEE equality.
    Eq,
    /// `expect_close`: within `max_ulp_difference` ULP (default 3).
    Close,
    /// `expect_almost_eq`, `expect_almost_eq_const`: within `tolerance` absolutely (default 1e-3).
    AlmostEq,
}

impl CheckKind {
    /// The check's name (`expect_eq`).
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Eq => "expect_eq",
            CheckKind::Close => "expect_close",
            CheckKind::AlmostEq => "expect_almost_eq",
        }
    }
}

/// One check op of a checked function, and where its values are among the
/// program's outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSpec {
    /// The kind.
    pub kind: CheckKind,
    /// 1-based line of the check op.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Output index (flattened) of the value checked.
    pub actual: usize,
    /// Output index of the expected value.
    pub expected: usize,
    /// `max_ulp_difference` of `expect_close`.
    pub max_ulp: Option<u64>,
    /// `tolerance` of `expect_almost_eq`.
    pub tolerance: Option<f64>,
}

/// A pending check: instruction ids in the checked function.
pub(crate) struct PendingCheck {
    pub pos: usize,
    pub kind: CheckKind,
    pub actual: InstrId,
    pub expected: InstrId,
    pub max_ulp: Option<u64>,
    pub tolerance: Option<f64>,
}
