//! What a run tells its reporters: `run_case` emits one typed
//! [`CaseFinished`] per case (in libtest and terminal mode alike), the
//! harness the start and the end; reporters (the terminal's progress, the
//! summary, failure groups, JUnit, JSON, persistence) consume them, joined
//! only by data.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use crate::check::{HistogramBucket, LegalReason};
use crate::hlo::Module;
use crate::literal::Literal;
use crate::property::{CaseId, Outcome};
use crate::report::{Counts, RunMetadata};

/// What the checker measured over a case's comparisons.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// The largest ULP distance seen.
    pub max_ulp: Option<u64>,
    /// Elements the judge accepted by each legal difference (empty: none).
    pub legal: BTreeMap<LegalReason, u64>,
    /// What its ULP distances were judged against: the property's tolerance
    /// and the backend's declared budget for the op and dtype.
    pub budget: Option<String>,
    /// The worst mismatch, as text.
    pub worst_mismatch: Option<String>,
    /// ULP distances of every compared float element (non-empty buckets, in
    /// order); kept only when the run writes `--json`.
    pub ulp_histogram: Option<Vec<HistogramBucket>>,
}

/// The program a failing case ran, for its reproducer.
#[derive(Clone, Debug)]
pub struct Artifacts {
    /// Where the reproducer goes (the message names it).
    pub dir: PathBuf,
    /// The module.
    pub module: Module,
    /// Its inputs.
    pub inputs: Vec<Literal>,
}

/// One finished case: everything a reporter reads of it.
#[derive(Clone, Debug)]
pub struct CaseFinished {
    /// The case (its name is its `Display`).
    pub id: CaseId,
    /// How it ended; a failure carries its typed verdict.
    pub outcome: Outcome,
    /// What libtest prints: a failure's report (backend, verdict, rerun
    /// line, reproducer), a skip's or expected failure's reason, a note.
    pub message: Option<String>,
    /// What the checker measured.
    pub measured: Measured,
    /// The command that reruns this case (failures).
    pub rerun: Option<String>,
    /// The failing program, for its reproducer (failures whose module was captured).
    pub artifacts: Option<Artifacts>,
    /// Wall time of the case.
    pub duration: Duration,
}

impl CaseFinished {
    /// A case that ended as `outcome`, with `message` and nothing measured.
    pub fn new(id: CaseId, outcome: Outcome, message: Option<String>) -> CaseFinished {
        CaseFinished {
            id,
            outcome,
            message,
            measured: Measured::default(),
            rerun: None,
            artifacts: None,
            duration: Duration::ZERO,
        }
    }
}

/// One event of a run.
#[derive(Clone, Copy, Debug)]
pub enum RunEvent<'a> {
    /// The run starts: `total` cases selected, `filtered_out` not (terminal mode).
    Started {
        /// Cases to run.
        total: usize,
        /// Cases the filters left out.
        filtered_out: usize,
    },
    /// One case finished.
    CaseFinished(&'a CaseFinished),
    /// Every case finished.
    Finished {
        /// Counts of the run.
        counts: Counts,
        /// Wall time of the run.
        elapsed: Duration,
        /// The run's metadata, when a report records it (`--json`, `--junit`).
        metadata: Option<&'a RunMetadata>,
    },
}

/// Consumes a run's events (called from the runner's threads in turn). An
/// error (a report that could not be written) is printed as a warning.
pub trait Reporter: Send {
    /// One event.
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String>;
}

/// Every reporter of a run, in order, and the run's counts.
#[derive(Default)]
pub struct Reporters {
    list: Vec<Box<dyn Reporter>>,
    counts: Counts,
}

impl Reporters {
    /// Reporters that get every event in this order.
    pub fn new(list: Vec<Box<dyn Reporter>>) -> Reporters {
        Reporters {
            list,
            counts: Counts::default(),
        }
    }

    /// Tells every reporter; counts finished cases.
    pub fn event(&mut self, event: &RunEvent<'_>) {
        match event {
            RunEvent::CaseFinished(c) => self.counts.add(&c.outcome),
            RunEvent::Started { filtered_out, .. } => {
                self.counts.filtered_out = *filtered_out as u64
            }
            RunEvent::Finished { .. } => {}
        }
        for r in &mut self.list {
            if let Err(e) = r.event(event) {
                eprintln!("warning: {e}");
            }
        }
    }

    /// The counts of the cases finished so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }
}

/// Reporters shared by the runner's threads.
pub type SharedReporters = Mutex<Reporters>;
