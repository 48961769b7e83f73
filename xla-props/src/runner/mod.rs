//! The runner: libtest-mimic trials from case ids (nothing generated at list
//! time), filters, shards, and run events with their reporters (the
//! terminal's progress bar, the summary and failure groups, JUnit, JSON and
//! failure persistence).

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
mod signature;
mod summary;
mod table;
mod terminal;

pub use args::{ArgError, RunnerArgs, Shard};
pub use execute::execute;
pub use harness::{Harness, HarnessError, RunReport};
pub use identity::{CaseSelection, CaseSpaceHash, CaseSpaceId, ShardInfo};
pub use junit::merge_junit_files;
pub use merge::{merge_results, read_results, MergeError, MergeOptions};
pub use persist::{failures_dir, load_failed, sanitize, write_reproducer, CaseNote};
pub use signature::{dtype_family, group_of, FailureGroup};
pub use summary::{case_result, composition, family};
pub use terminal::{format_counts, result_line, TerminalReporter};
