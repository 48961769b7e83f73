//! The runner's own executor for the terminal: runs the selected cases on a
//! pool of threads and hands each end to a [`Reporter`] as it happens (libtest
//! prints a line per case; this prints what a person needs).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::events::{CaseEnd, Counts, Reporter, RunEvent};

/// Runs `run` on every case of `cases` with `threads` threads, reporting to
/// `reporter`; returns the counts and the wall time.
pub fn execute<C: Sync>(
    cases: &[C],
    name: impl Fn(&C) -> String + Sync,
    run: impl Fn(&C) -> CaseEnd + Sync,
    threads: usize,
    filtered_out: usize,
    reporter: &mut dyn Reporter,
) -> (Counts, Duration) {
    let start = Instant::now();
    reporter.event(&RunEvent::Started {
        total: cases.len(),
        filtered_out,
    });
    let next = AtomicUsize::new(0);
    let shared = Mutex::new((
        reporter,
        Counts {
            filtered_out: filtered_out as u64,
            ..Counts::default()
        },
    ));
    let worker = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(case) = cases.get(k) else { break };
        let began = Instant::now();
        let end = catch_unwind(AssertUnwindSafe(|| run(case)))
            .unwrap_or_else(|p| CaseEnd::Failed(format!("panicked: {}", panic_text(p.as_ref()))));
        let duration = began.elapsed();
        let name = name(case);
        let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
        let (reporter, counts) = &mut *guard;
        counts.add(&end);
        reporter.event(&RunEvent::CaseFinished {
            name: &name,
            end: &end,
            duration,
        });
    };
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(cases.len().max(1)) {
            s.spawn(worker);
        }
    });
    let (reporter, counts) = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    let elapsed = start.elapsed();
    reporter.event(&RunEvent::Finished { counts, elapsed });
    (counts, elapsed)
}

pub(super) use crate::backend::panic_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Vec<String>);

    impl Reporter for Collect {
        fn event(&mut self, e: &RunEvent<'_>) {
            self.0.push(match e {
                RunEvent::Started { total, .. } => format!("start {total}"),
                RunEvent::CaseFinished { name, end, .. } => format!("{name} {end:?}"),
                RunEvent::Finished { counts, .. } => format!("done {}", counts.failed),
            });
        }
    }

    #[test]
    fn every_case_is_reported_once_and_a_panic_is_a_failure() {
        let cases: Vec<u32> = (0..50).collect();
        let mut r = Collect::default();
        let (counts, _) = execute(
            &cases,
            |c| format!("case{c}"),
            |&c| match c % 10 {
                3 => panic!("boom"),
                5 => CaseEnd::Ignored(None),
                _ => CaseEnd::Passed,
            },
            4,
            2,
            &mut r,
        );
        assert_eq!((counts.passed, counts.failed, counts.ignored), (40, 5, 5));
        assert_eq!(counts.filtered_out, 2);
        assert_eq!(r.0.first().unwrap(), "start 50");
        assert_eq!(r.0.last().unwrap(), "done 5");
        assert_eq!(r.0.len(), 52);
        assert!(r.0.iter().any(|l| l == "case13 Failed(\"panicked: boom\")"));
    }
}
