//! Judging results: what a backend promises about its numerics (and, later,
//! the comparator and its verdicts).

mod numerics;

pub use numerics::{Approximation, ErrorBudget, Numerics};
