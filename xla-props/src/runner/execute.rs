//! The runner's own executor for the terminal: runs the selected cases on a
//! pool of threads (each case tells the run's reporters how it ended, as it
//! happens: libtest prints a line per case; the terminal reporter prints what
//! a person needs).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `run` on every case of `cases` with `threads` threads; a panic in
/// `run` (outside a property's own guard) goes to `on_panic` with its text.
pub fn execute<C: Sync>(
    cases: &[C],
    run: impl Fn(&C) + Sync,
    on_panic: impl Fn(&C, String) + Sync,
    threads: usize,
) {
    let next = AtomicUsize::new(0);
    let worker = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(case) = cases.get(k) else { break };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| run(case))) {
            on_panic(case, panic_text(p.as_ref()));
        }
    };
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(cases.len().max(1)) {
            s.spawn(worker);
        }
    });
}

pub(super) use crate::backend::panic_text;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_case_runs_once_and_a_panic_is_handed_on() {
        let cases: Vec<u32> = (0..50).collect();
        let ran = Mutex::new(Vec::new());
        let panics = Mutex::new(Vec::new());
        execute(
            &cases,
            |&c| {
                if c % 10 == 3 {
                    panic!("boom {c}");
                }
                ran.lock().unwrap().push(c);
            },
            |&c, text| panics.lock().unwrap().push((c, text)),
            4,
        );
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran.len(), 45);
        assert!(!ran.contains(&13));
        let mut panics = panics.into_inner().unwrap();
        panics.sort();
        assert_eq!(panics.len(), 5);
        assert_eq!(panics[1], (13, "boom 13".to_string()));
    }
}
