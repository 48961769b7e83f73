//! `.hlotest` files: an HLO module plus directive comments, run on every
//! backend they name and judged against the reference; the format isolation
//! writes its reproducers in, so a found bug becomes a regression test by
//! copying one file. Expectations are per backend and per backend version
//! (`agree`, `mismatch KIND`, `known-bug ID`, `rejected "TEXT"`, `skip`);
//! `XLA_PROPS_BLESS=1` rewrites them from what the backends do. Every
//! reproducer under `docs/repro/` is such a file (`tests/hlotest.rs`).
//!
//! ```text
//! // run: backends=interpreter,iree-cpu tolerance=default inputs=seed:7
//! // expect: agree
//! // expect@iree-cpu[3.13.0]: known-bug iree-cpu/sine-cosine-tan-inaccurate
//! HloModule m
//! ENTRY main { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }
//! ```

mod expect;
mod format;
mod print;
mod run;
/// StableHLO files that carry their own check ops (`check.expect_*`): run
/// on a backend and judged the way the StableHLO interpreter judges them.
pub mod stablehlo_checks;

pub use expect::{short_version, version_matches, BackendExpectation, Expectation};
pub use format::{HloTest, Inputs, JudgeMode, TestFileError};
pub use print::{render_arg, write_isolation_results, Reproducer, MAX_INLINE_ELEMENTS};
pub use run::{bless, observe, run_file_at, run_file_on, Observation, TrialResult, BLESS_ENV};
