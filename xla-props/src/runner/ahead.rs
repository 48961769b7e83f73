//! Cases computed ahead of libtest's printer.
//!
//! libtest-mimic's own pool sends every finished trial through a channel to
//! the printing thread, which sleeps between messages: one futex wake and two
//! context switches per case. With a few microseconds of work per case (the
//! suite on the reference and the interpreter) that cost more than the cases
//! did (10.6 s wall on 2 threads against 6.5 s on one, measured; docs/perf.md).
//! Here a pool of workers runs the selected cases in order, in claims sized to
//! about [`CLAIM_TARGET`] of work each, and wakes the consumer once per claim;
//! libtest then runs on one thread and each trial takes its case's result.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Completion, Conclusion, Failed, Trial};

use super::execute::panic_text;

/// About how long one claim of cases runs before its worker wakes the consumer.
pub const CLAIM_TARGET: Duration = Duration::from_millis(5);
/// The most cases one claim takes.
const MAX_CLAIM: usize = 512;

/// Results computed ahead, taken by index in any order.
pub struct Ahead<R> {
    slots: Vec<Mutex<Option<R>>>,
    next: AtomicUsize,
    gate: Mutex<()>,
    ready: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<R: Send + 'static> Ahead<R> {
    /// Starts `threads` workers computing `run(0..n)`; a panic in `run` becomes
    /// `on_panic(message)`. Join the handles after every result is taken.
    pub fn start(
        n: usize,
        threads: usize,
        run: impl Fn(usize) -> R + Send + Sync + 'static,
        on_panic: impl Fn(String) -> R + Send + Sync + 'static,
    ) -> (Arc<Ahead<R>>, Vec<JoinHandle<()>>) {
        let ahead = Arc::new(Ahead {
            slots: (0..n).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            gate: Mutex::new(()),
            ready: Condvar::new(),
        });
        let work = Arc::new((run, on_panic));
        let handles = (0..threads.max(1).min(n.max(1)))
            .map(|_| {
                let (ahead, work) = (ahead.clone(), work.clone());
                std::thread::spawn(move || ahead.work(&work.0, &work.1))
            })
            .collect();
        (ahead, handles)
    }

    fn work(&self, run: &dyn Fn(usize) -> R, on_panic: &dyn Fn(String) -> R) {
        let mut claim = 1usize;
        loop {
            let first = self.next.fetch_add(claim, Ordering::Relaxed);
            if first >= self.slots.len() {
                break;
            }
            let end = (first + claim).min(self.slots.len());
            let began = Instant::now();
            for i in first..end {
                let r = catch_unwind(AssertUnwindSafe(|| run(i)))
                    .unwrap_or_else(|p| on_panic(panic_text(p.as_ref())));
                *lock(&self.slots[i]) = Some(r);
            }
            // the consumer checks its slot under the gate before it sleeps
            drop(lock(&self.gate));
            self.ready.notify_all();
            // size the next claim to about CLAIM_TARGET of work
            let per_case = began.elapsed() / (end - first) as u32;
            claim = if per_case.is_zero() {
                MAX_CLAIM
            } else {
                (CLAIM_TARGET.as_nanos() / per_case.as_nanos().max(1)).clamp(1, MAX_CLAIM as u128)
                    as usize
            };
        }
    }

    /// The result of case `i`, waiting for it; each index is taken once.
    pub fn take(&self, i: usize) -> Option<R> {
        let slot = self.slots.get(i)?;
        loop {
            if let Some(r) = lock(slot).take() {
                return Some(r);
            }
            let gate = lock(&self.gate);
            if lock(slot).is_some() {
                continue;
            }
            drop(self.ready.wait(gate));
        }
    }
}

/// Runs `cases` (each a name and what `run` needs) as libtest trials. With
/// more than one thread the cases that `selected` keeps (libtest's filters)
/// are computed ahead and libtest prints from one thread; otherwise each
/// trial runs its case itself, on libtest's pool.
pub fn run_trials<C: Send + Sync + 'static>(
    cases: Vec<(String, C)>,
    libtest: &Arguments,
    selected: impl Fn(&str) -> bool,
    run: impl Fn(&C) -> Result<Completion, Failed> + Send + Sync + 'static,
) -> Conclusion {
    let threads = libtest
        .test_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let run = Arc::new(run);
    if threads <= 1 || libtest.list || libtest.bench || libtest.ignored {
        let trials = cases
            .into_iter()
            .map(|(name, c)| {
                let run = run.clone();
                Trial::ignorable_test(name, move || run(&c))
            })
            .collect();
        return libtest_mimic::run(libtest, trials);
    }
    let (chosen, rest): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .enumerate()
        .partition(|(_, (name, _))| selected(name));
    // the chosen cases keep their order among themselves; the rest are
    // trials libtest filters out (their names still count as filtered)
    let order: Vec<(usize, String)> = chosen.iter().map(|(i, (n, _))| (*i, n.clone())).collect();
    let inputs: Vec<C> = chosen.into_iter().map(|(_, (_, c))| c).collect();
    let on_worker = run.clone();
    let (ahead, workers) = Ahead::start(
        inputs.len(),
        threads,
        move |k| on_worker(&inputs[k]),
        |msg| Err(Failed::from(format!("panicked: {msg}"))),
    );
    let mut trials: Vec<(usize, Trial)> = order
        .into_iter()
        .enumerate()
        .map(|(k, (i, name))| {
            let ahead = ahead.clone();
            let trial = Trial::ignorable_test(name, move || {
                ahead
                    .take(k)
                    .unwrap_or_else(|| Err(Failed::from("no result was computed for this case")))
            });
            (i, trial)
        })
        .collect();
    trials.extend(rest.into_iter().map(|(i, (name, c))| {
        let run = run.clone();
        (i, Trial::ignorable_test(name, move || run(&c)))
    }));
    trials.sort_by_key(|(i, _)| *i);
    let mut one_thread = libtest.clone();
    one_thread.test_threads = Some(1);
    let conclusion = libtest_mimic::run(&one_thread, trials.into_iter().map(|t| t.1).collect());
    drop(ahead);
    for w in workers {
        let _ = w.join();
    }
    conclusion
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_arrives_in_its_slot_and_a_panic_is_mapped() {
        let (ahead, handles) = Ahead::start(
            2_000,
            3,
            |i| {
                if i == 777 {
                    panic!("boom at {i}");
                }
                if i % 500 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(i * 2)
            },
            Err,
        );
        for i in (0..2_000).rev() {
            let r = ahead.take(i).expect("in range");
            if i == 777 {
                assert_eq!(r, Err("boom at 777".to_string()));
            } else {
                assert_eq!(r, Ok(i * 2));
            }
        }
        assert!(ahead.take(2_000).is_none());
        for h in handles {
            h.join().expect("workers do not panic");
        }
    }

    #[test]
    fn no_cases_no_work() {
        let (ahead, handles) = Ahead::<u8>::start(0, 4, |_| 1, |_| 0);
        assert!(ahead.take(0).is_none());
        for h in handles {
            h.join().expect("joins");
        }
    }
}
