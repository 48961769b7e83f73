//! Compile results kept for the rest of a run, by the exact StableHLO text
//! compiled, so that a module is compiled at most once in a run.
//!
//! - Errors: a compile error the batcher (`xla::many`) attributed to one
//!   module of a failed batch (its first error's line lies in that module's
//!   part of the batch, or the module failed alone), and the compile error of
//!   a module compiled directly. Every case of such a module used to compile
//!   it again alone (about 0.5 s each, docs/perf.md) to get the same error.
//! - Executables: a module compiled directly (a case whose module was left
//!   out of the batches, or a failure confirmed unbatched) serves the other
//!   cases of the same module; the last [`KEPT_EXECUTABLES`] are kept.
//!
//! Only what a compile gives again for the same text is kept: compile
//! errors, link errors and compiler crashes. A timeout, an I/O error or a
//! run's failure (an `iree-run-module` crash is one argument list's) is
//! never kept.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::error::IreeError;

/// How many directly compiled executables are kept (each holds a `.vmfb`
/// in its scratch directory). A case's modules are compiled in order and a
/// module's cases run one after the other, so a few suffice.
pub(crate) const KEPT_EXECUTABLES: usize = 64;

/// See the module docs; `E` is the executable (the backend's
/// `IreeExecutable`).
pub(crate) struct Kept<E> {
    inner: Mutex<Inner<E>>,
    /// Compiles answered from what is kept.
    hits: AtomicU64,
}

impl<E> Default for Kept<E> {
    fn default() -> Kept<E> {
        Kept {
            inner: Mutex::new(Inner {
                errors: HashMap::new(),
                executables: HashMap::new(),
                order: VecDeque::new(),
            }),
            hits: AtomicU64::new(0),
        }
    }
}

struct Inner<E> {
    errors: HashMap<String, IreeError>,
    executables: HashMap<String, Arc<E>>,
    /// The executables' keys, oldest first.
    order: VecDeque<String>,
}

/// A kept compile result.
pub(crate) enum Hit<E> {
    Error(IreeError),
    Executable(Arc<E>),
}

/// True for an error that compiling the same text again gives again.
pub(crate) fn is_kept_kind(e: &IreeError) -> bool {
    matches!(
        e,
        IreeError::Compile(_)
            | IreeError::CannotLower { .. }
            | IreeError::Crashed {
                tool: "iree-compile",
                ..
            }
    )
}

/// The error `e` of a batch with its first location moved from the batch's
/// `line` to the module's own `own` line (`module.mlir:LINE:`), as a compile
/// of the module alone names it.
pub(crate) fn relocated(e: &IreeError, line: usize, own: usize) -> IreeError {
    let from = format!("module.mlir:{line}:");
    let to = format!("module.mlir:{own}:");
    match e {
        IreeError::Compile(m) => IreeError::Compile(m.replacen(&from, &to, 1)),
        IreeError::CannotLower {
            what,
            line: Some(l),
        } if *l == line => IreeError::CannotLower {
            what: what.clone(),
            line: Some(own),
        },
        other => other.clone(),
    }
}

impl<E> Kept<E> {
    fn with<T>(&self, f: impl FnOnce(&mut Inner<E>) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// What is kept for `mlir` (counted as a hit).
    pub(crate) fn get(&self, mlir: &str) -> Option<Hit<E>> {
        let hit = self.with(|k| {
            if let Some(e) = k.errors.get(mlir) {
                return Some(Hit::Error(e.clone()));
            }
            k.executables.get(mlir).cloned().map(Hit::Executable)
        });
        if hit.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    /// Keeps the error of compiling `mlir`, when it is one a compile gives
    /// again ([`is_kept_kind`]); true when kept.
    pub(crate) fn keep_error(&self, mlir: &str, e: &IreeError) -> bool {
        if !is_kept_kind(e) {
            return false;
        }
        self.with(|k| {
            k.errors
                .entry(mlir.to_string())
                .or_insert_with(|| e.clone());
        });
        true
    }

    /// Keeps the executable compiled from `mlir`, dropping the oldest one
    /// past [`KEPT_EXECUTABLES`].
    pub(crate) fn keep_executable(&self, mlir: &str, exe: Arc<E>) {
        self.with(|k| {
            if k.executables.insert(mlir.to_string(), exe).is_none() {
                k.order.push_back(mlir.to_string());
            }
            while k.order.len() > KEPT_EXECUTABLES {
                if let Some(old) = k.order.pop_front() {
                    k.executables.remove(&old);
                }
            }
        });
    }

    /// Compiles answered from what is kept, and how many errors are kept.
    pub(crate) fn counts(&self) -> (u64, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.with(|k| k.errors.len()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_a_compile_gives_again_are_kept() {
        let kept = Kept::<()>::default();
        let compile = IreeError::Compile("module.mlir:9:3: error: no".into());
        assert!(kept.keep_error("a", &compile));
        assert!(kept.keep_error(
            "b",
            &IreeError::Crashed {
                tool: "iree-compile",
                status: "signal: 8 (SIGFPE)".into(),
                stderr: String::new(),
            }
        ));
        for (text, e) in [
            (
                "c",
                IreeError::Crashed {
                    tool: "iree-run-module",
                    status: "signal: 11 (SIGSEGV)".into(),
                    stderr: String::new(),
                },
            ),
            (
                "d",
                IreeError::Timeout {
                    tool: "iree-compile",
                    seconds: 120.0,
                },
            ),
            ("e", IreeError::Execute("bad".into())),
            ("f", IreeError::Io("disk".into())),
        ] {
            assert!(!kept.keep_error(text, &e), "{e}");
            assert!(kept.get(text).is_none());
        }
        assert!(matches!(kept.get("a"), Some(Hit::Error(e)) if e == compile));
        assert!(kept.get("other").is_none());
        assert_eq!(kept.counts(), (1, 2));
    }

    #[test]
    fn the_oldest_executables_go_past_the_limit() {
        let kept = Kept::<usize>::default();
        for i in 0..KEPT_EXECUTABLES + 2 {
            kept.keep_executable(&format!("m{i}"), Arc::new(i));
        }
        assert!(kept.get("m0").is_none() && kept.get("m1").is_none());
        assert!(matches!(kept.get("m2"), Some(Hit::Executable(e)) if *e == 2));
        let last = format!("m{}", KEPT_EXECUTABLES + 1);
        assert!(matches!(kept.get(&last), Some(Hit::Executable(e)) if *e == KEPT_EXECUTABLES + 1));
        assert_eq!(kept.counts(), (2, 0));
    }

    #[test]
    fn a_batch_location_is_moved_to_the_modules_own_line() {
        let e = IreeError::Compile(
            "/tmp/s/module.mlir:57:10: error: 'linalg.generic' op bad\n\
             /tmp/s/module.mlir:57:10: note: see current operation"
                .into(),
        );
        let own = relocated(&e, 57, 4);
        assert_eq!(own.mlir_line(), Some(4));
        assert!(
            own.to_string().contains("module.mlir:4:10: error:"),
            "{own}"
        );
        let skip = IreeError::CannotLower {
            what: "why".into(),
            line: Some(57),
        };
        assert_eq!(relocated(&skip, 57, 4).mlir_line(), Some(4));
        let run = IreeError::Execute("module.mlir:57:".into());
        assert_eq!(relocated(&run, 57, 4), run);
    }
}
