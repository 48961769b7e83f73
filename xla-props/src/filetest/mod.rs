//! `.hlotest` files: an HLO module plus directive comments, run on every
//! backend they name and judged against the reference; the format isolation
//! writes its reproducers in, so a found bug becomes a regression test by
//! copying one file. `XLA_PROPS_BLESS=1` rewrites expectations.
//!
//! ```text
//! // run: backends=interpreter tolerance=default inputs=seed:7
//! // expect: agree
//! HloModule m
//! ENTRY main { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }
//! ```

mod expect;
mod format;
mod print;
mod run;

pub use expect::{short_version, version_matches, BackendExpectation, Expectation};
pub use format::{HloTest, Inputs, JudgeMode, TestFileError};
pub use print::{render_arg, write_isolation_results, Reproducer, MAX_INLINE_ELEMENTS};
pub use run::{bless, observe, run_file_at, run_file_on, Observation, TrialResult, BLESS_ENV};
