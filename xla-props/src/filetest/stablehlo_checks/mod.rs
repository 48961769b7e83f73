//! Running a StableHLO file's own check ops (`check.expect_eq`, the
//! `@check.expect_*` custom calls of the JAX-generated testdata) on a backend,
//! and judging each check the way the StableHLO interpreter does.

mod compare;
mod run;

pub use compare::{
    judge_check, CheckFailure, CheckPass, DEFAULT_ALMOST_EQ_TOLERANCE, DEFAULT_MAX_ULP,
};
pub use run::{run_check_program, CheckResult, ProgramOutcome};
