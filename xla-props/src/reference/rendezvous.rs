//! Where the devices of one multi-device evaluation meet: each device runs
//! on its own thread, and a collective is an exchange of values among its
//! group ([`Rendezvous::exchange`]). A device that fails, or a set of
//! devices that can never meet again (a deadlock: every running device
//! waits and no exchange is complete), ends the exchange for every device
//! with an error, never a hang.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// An exchange's identity: the instruction, how many times this device ran
/// it before, and the group (its first device's flattened id).
type Key = (String, u64, usize);

struct Slot<T> {
    values: Vec<Option<T>>,
    filled: usize,
    taken: usize,
}

struct State<T> {
    slots: HashMap<Key, Slot<T>>,
    running: usize,
    waiting: usize,
    failed: Option<String>,
}

/// The meeting point of `devices` threads.
pub struct Rendezvous<T> {
    state: Mutex<State<T>>,
    cv: Condvar,
}

/// How long one wait may last before the exchange is declared stuck (a
/// safety net: deadlocks are detected without it).
const STUCK: Duration = Duration::from_secs(600);

impl<T: Clone> Rendezvous<T> {
    /// A rendezvous of `devices` running devices.
    pub fn new(devices: usize) -> Self {
        Rendezvous {
            state: Mutex::new(State {
                slots: HashMap::new(),
                running: devices,
                waiting: 0,
                failed: None,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts `value` at position `pos` of a group of `size` devices meeting
    /// at `(instruction, occurrence, group)`, waits for the others, and
    /// returns every member's value in group order.
    pub fn exchange(
        &self,
        instruction: &str,
        occurrence: u64,
        group: usize,
        size: usize,
        pos: usize,
        value: T,
    ) -> Result<Vec<T>, String> {
        let key: Key = (instruction.to_string(), occurrence, group);
        let mut st = self.lock();
        {
            let slot = st.slots.entry(key.clone()).or_insert_with(|| Slot {
                values: vec![None; size],
                filled: 0,
                taken: 0,
            });
            if slot.values.len() != size || pos >= size || slot.values[pos].is_some() {
                let msg = format!(
                    "`{instruction}`: devices disagree about its group (size {size}, position {pos})"
                );
                st.failed.get_or_insert(msg.clone());
                self.cv.notify_all();
                return Err(msg);
            }
            slot.values[pos] = Some(value);
            slot.filled += 1;
        }
        self.cv.notify_all();
        st.waiting += 1;
        loop {
            let complete = st.slots.get(&key).is_some_and(|s| s.filled == size);
            if complete {
                st.waiting -= 1;
                let slot = st.slots.get_mut(&key).expect("checked above");
                let out: Vec<T> = slot.values.iter().flatten().cloned().collect();
                slot.taken += 1;
                if slot.taken == size {
                    st.slots.remove(&key);
                }
                self.cv.notify_all();
                return Ok(out);
            }
            if let Some(f) = st.failed.clone() {
                st.waiting -= 1;
                return Err(format!("another device failed: {f}"));
            }
            let stuck =
                st.waiting == st.running && st.slots.values().all(|s| s.filled < s.values.len());
            if stuck {
                let missing = st.slots.get(&key).map_or(0, |s| size - s.filled);
                let msg = format!(
                    "`{instruction}` waits for {missing} device(s) of its group that will never reach it (the devices took different paths)"
                );
                st.failed = Some(msg.clone());
                st.waiting -= 1;
                self.cv.notify_all();
                return Err(msg);
            }
            let (next, timeout) = self
                .cv
                .wait_timeout(st, STUCK)
                .unwrap_or_else(|e| e.into_inner());
            st = next;
            if timeout.timed_out() {
                let msg = format!("`{instruction}` waited {} s for its group", STUCK.as_secs());
                st.failed.get_or_insert(msg.clone());
                st.waiting -= 1;
                self.cv.notify_all();
                return Err(msg);
            }
        }
    }

    /// A device stops (with its failure, if it failed).
    pub fn leave(&self, failure: Option<String>) {
        let mut st = self.lock();
        st.running = st.running.saturating_sub(1);
        if let Some(f) = failure {
            st.failed.get_or_insert(f);
        }
        self.cv.notify_all();
    }
}

/// The devices' results in order, or the error that caused the run to fail:
/// a device's own error before the "another device failed" echoes the
/// rendezvous hands the others.
pub fn first_cause<T, E: std::fmt::Display>(results: Vec<Result<T, E>>) -> Result<Vec<T>, E> {
    let mut outs = Vec::with_capacity(results.len());
    let mut echo = None;
    for r in results {
        match r {
            Ok(o) => outs.push(o),
            Err(e) if e.to_string().contains("another device failed") => {
                echo.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    match echo {
        Some(e) => Err(e),
        None => Ok(outs),
    }
}

/// Why a device's (or process's) thread gave no result.
#[derive(Debug)]
pub enum ThreadLost {
    /// The thread panicked.
    Panicked,
    /// The thread could not be started.
    NotStarted(std::io::Error),
}

impl ThreadLost {
    /// The message: `panicked` for a panic, else why a `who` thread (a
    /// device, a process) could not be started.
    pub fn message(&self, who: &str, panicked: &str) -> String {
        match self {
            ThreadLost::Panicked => panicked.to_string(),
            ThreadLost::NotStarted(e) => format!("cannot start a {who} thread: {e}"),
        }
    }
}

/// Runs `run(d, item)` for every item on its own scoped thread named
/// `{name}-{d}` (with a 64 MiB stack, as deep programs need) and returns the
/// threads' results in item order. `not_started(d, error)` is told at once
/// when a thread cannot be started (so that the others need not wait for it).
pub fn on_threads<I: Send, T: Send>(
    items: impl IntoIterator<Item = I>,
    name: &str,
    run: impl Fn(usize, I) -> T + Sync,
    not_started: impl Fn(usize, &std::io::Error),
) -> Vec<Result<T, ThreadLost>> {
    let run = &run;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .into_iter()
            .enumerate()
            .map(|(d, item)| {
                let h = std::thread::Builder::new()
                    .name(format!("{name}-{d}"))
                    .stack_size(64 << 20)
                    .spawn_scoped(s, move || run(d, item));
                if let Err(e) = &h {
                    not_started(d, e);
                }
                h
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().map_err(|_| ThreadLost::Panicked),
                Err(e) => Err(ThreadLost::NotStarted(e)),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_meet_and_strays_are_reported() {
        let r = Rendezvous::<u32>::new(3);
        let out = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3u32)
                .map(|d| {
                    let r = &r;
                    s.spawn(move || {
                        let got = r.exchange("x", 0, 0, 3, d as usize, d * 10);
                        r.leave(None);
                        got
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        for o in out {
            assert_eq!(o.unwrap(), vec![0, 10, 20]);
        }
        // device 1 never comes: detected, not a hang
        let r = Rendezvous::<u32>::new(2);
        let out = std::thread::scope(|s| {
            let a = s.spawn(|| r.exchange("y", 0, 0, 2, 0, 1));
            let b = s.spawn(|| {
                r.leave(None);
            });
            b.join().unwrap();
            a.join().unwrap()
        });
        assert!(out.unwrap_err().contains("never reach it"));
    }
}
