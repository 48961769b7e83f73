//! What a run tells its reporters: the runner emits events, reporters (the
//! terminal's progress bar here; JUnit, JSON and persistence read the
//! records at the end) consume them, joined only by data.

use std::time::Duration;

/// How one case ended, as the runner's executor saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseEnd {
    /// It passed.
    Passed,
    /// It was skipped or expected to fail (libtest's "ignored"), with why.
    Ignored(Option<String>),
    /// It failed, with the failure report.
    Failed(String),
}

/// One event of a run.
#[derive(Clone, Debug)]
pub enum RunEvent<'a> {
    /// The run starts: `total` cases selected, `filtered_out` not.
    Started {
        /// Cases to run.
        total: usize,
        /// Cases the filters left out.
        filtered_out: usize,
    },
    /// One case finished.
    CaseFinished {
        /// Its name.
        name: &'a str,
        /// How it ended.
        end: &'a CaseEnd,
        /// Its wall time.
        duration: Duration,
    },
    /// Every case finished.
    Finished {
        /// Counts of the run.
        counts: Counts,
        /// Wall time of the run.
        elapsed: Duration,
    },
}

/// Counts of a run so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases passed.
    pub passed: u64,
    /// Cases failed.
    pub failed: u64,
    /// Cases ignored (skipped or expected failures).
    pub ignored: u64,
    /// Cases the filters left out.
    pub filtered_out: u64,
}

impl Counts {
    /// Counts one more case.
    pub fn add(&mut self, end: &CaseEnd) {
        match end {
            CaseEnd::Passed => self.passed += 1,
            CaseEnd::Ignored(_) => self.ignored += 1,
            CaseEnd::Failed(_) => self.failed += 1,
        }
    }
}

/// Consumes a run's events (called from the executor's threads in turn).
pub trait Reporter: Send {
    /// One event.
    fn event(&mut self, event: &RunEvent<'_>);
}
