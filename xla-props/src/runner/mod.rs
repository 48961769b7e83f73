//! The runner: libtest-mimic trials from case ids (nothing generated at list
//! time), filters, shards, reports (terminal, JUnit, JSON) and failure persistence.

mod args;
mod batch;
mod harness;
#[cfg(test)]
mod known_bug_tests;
mod metadata;
mod persist;
mod report;

pub use args::{ArgError, RunnerArgs, Shard};
pub use harness::{Harness, HarnessError, RunReport};
pub use metadata::{BackendVersion, RunMetadata};
pub use persist::{failures_dir, load_failed, sanitize, write_reproducer};
pub use report::{
    composition, family, summary_table, totals, CaseKind, CaseRecord, CaseStatus, Totals,
};
