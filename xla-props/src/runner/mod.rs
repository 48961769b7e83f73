//! The runner: libtest-mimic trials from case ids (nothing generated at list
//! time), filters, shards, run events and their reporters (the terminal's
//! progress bar), reports (JUnit, JSON) and failure persistence.

mod ahead;
mod args;
mod batch;
mod case;
pub mod events;
mod execute;
mod harness;
mod identity;
mod junit;
#[cfg(test)]
mod known_bug_tests;
mod macros;
mod merge;
mod metadata;
mod persist;
mod report;
mod signature;
mod table;
mod terminal;

pub use args::{ArgError, RunnerArgs, Shard};
pub use execute::execute;
pub use harness::{Harness, HarnessError, RunReport};
pub use identity::{CaseSelection, CaseSpaceHash, CaseSpaceId, ShardInfo};
pub use junit::merge_junit_files;
pub use merge::{merge_results, read_results, MergeError, MergeOptions};
pub use metadata::{BackendVersion, RunMetadata};
pub use persist::{failures_dir, load_failed, sanitize, write_reproducer};
pub use report::{composition, family, summary_table, totals, CaseKind, CaseRecord};
pub use signature::{dtype_family, failure_groups, group_of, FailureGroup};
pub use terminal::{format_counts, result_line, TerminalReporter};
