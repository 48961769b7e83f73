//! The parent side of the worker: spawn, talk frames with a timeout, notice
//! crashes, and keep the tail of the worker's stderr for the error report.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use super::error::XlaError;
use super::protocol::{write_frame, Request, Response, WorkerPipes};
use super::worker::WORKER_ARG;

/// Bytes of worker stderr kept for error messages.
const STDERR_TAIL: usize = 4096;

/// A running worker process.
pub(crate) struct Worker {
    child: Child,
    pipes: WorkerPipes,
    /// What the worker said about its plugin when it started.
    pub description: String,
}

impl Worker {
    /// Starts `program __xla-worker --plugin PLUGIN` and waits for it to load the plugin.
    pub fn spawn(
        program: &Path,
        plugin: &Path,
        env: &[(String, String)],
        startup: Duration,
    ) -> Result<Worker, XlaError> {
        let mut child = Command::new(program)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg(WORKER_ARG)
            .arg("--plugin")
            .arg(plugin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                XlaError::Unavailable(format!(
                    "cannot start the xla worker {}: {e}",
                    program.display()
                ))
            })?;
        let Some(pipes) = WorkerPipes::take(&mut child, STDERR_TAIL) else {
            return Err(XlaError::Protocol("worker pipes were not created".into()));
        };
        let mut worker = Worker {
            child,
            pipes,
            description: String::new(),
        };
        match worker.receive("starting", startup)? {
            Response::Ready(d) => {
                worker.description = d;
                Ok(worker)
            }
            Response::Error(e) => Err(XlaError::Unavailable(e)),
            other => Err(XlaError::Protocol(format!(
                "unexpected startup reply {other:?}"
            ))),
        }
    }

    /// Sends a request and waits up to `timeout` for its reply. On a crash or a
    /// timeout the worker is dead: the caller must drop it.
    pub fn call(
        &mut self,
        request: &Request,
        during: &'static str,
        timeout: Duration,
    ) -> Result<Response, XlaError> {
        let payload = request.encode();
        if write_frame(&mut self.pipes.stdin, &payload)
            .and_then(|_| self.pipes.stdin.flush())
            .is_err()
        {
            return Err(self.crashed(during));
        }
        self.receive(during, timeout)
    }

    fn receive(&mut self, during: &'static str, timeout: Duration) -> Result<Response, XlaError> {
        match self.pipes.frames.recv_timeout(timeout) {
            Ok(Ok(Some(frame))) => Response::decode(&frame)
                .map_err(|e| XlaError::Protocol(format!("bad reply while {during}: {e}"))),
            Ok(Ok(None)) | Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                Err(self.crashed(during))
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(XlaError::Timeout {
                    during,
                    seconds: timeout.as_secs_f64(),
                })
            }
        }
    }

    fn crashed(&mut self, during: &'static str) -> XlaError {
        let status = match self.child.wait() {
            Ok(s) => describe_status(s),
            Err(e) => format!("unknown exit ({e})"),
        };
        // Give the stderr reader a moment to drain what the dying process wrote.
        std::thread::sleep(Duration::from_millis(50));
        XlaError::Crashed {
            during,
            status,
            stderr: self.stderr_tail(),
        }
    }

    /// What the worker last wrote to stderr: the fatal-log line (`F... Check
    /// failed: ...`) when there is one, else the last few lines.
    pub fn stderr_tail(&self) -> String {
        let bytes = self.pipes.stderr_bytes();
        summarize_stderr(&String::from_utf8_lossy(&bytes))
    }
}

/// Picks the informative lines out of a dying worker's stderr.
fn summarize_stderr(text: &str) -> String {
    // Skip glog's stack dump (`@ 0x...` frames, `*** ...` banners).
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("@ ") && !l.starts_with("***"))
        .collect();
    let is_fatal = |l: &str| {
        l.contains("Check failed")
            || (l.starts_with('F') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
    };
    match lines.iter().rposition(|l| is_fatal(l)) {
        Some(k) => lines[k..(k + 2).min(lines.len())].join(" | "),
        None => lines[lines.len().saturating_sub(4)..].join(" | "),
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(6)) => "signal 6 (abort)".into(),
        (None, Some(9)) => "signal 9 (killed)".into(),
        (None, Some(11)) => "signal 11 (segmentation fault)".into(),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown exit".into(),
    }
}

static CURRENT_EXE_SERVES_WORKER: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Declares that the running executable answers `__xla-worker` itself (the
/// test harness does), so workers are started from it rather than from a
/// separately built `xla-props` binary that may be missing or stale.
pub fn current_exe_serves_worker() {
    CURRENT_EXE_SERVES_WORKER.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Finds the binary that serves `__xla-worker`: `XLA_PROPS_WORKER`, the
/// running executable when it is `xla-props` or declared itself a worker host
/// ([`current_exe_serves_worker`]), or an `xla-props` beside the running
/// executable or one directory up (cargo's `target/<profile>/deps`).
pub fn find_worker_program() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("XLA_PROPS_WORKER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("XLA_PROPS_WORKER={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot locate the running executable: {e}"))?;
    if exe.file_stem().and_then(|s| s.to_str()) == Some("xla-props")
        || CURRENT_EXE_SERVES_WORKER.load(std::sync::atomic::Ordering::Relaxed)
    {
        return Ok(exe);
    }
    let mut dir = exe.parent();
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let candidate = d.join("xla-props");
        if candidate.is_file() {
            return Ok(candidate);
        }
        dir = d.parent();
    }
    Err(
        "the xla worker binary `xla-props` was not found next to this executable \
         (build it with `cargo build --bin xla-props`, or set XLA_PROPS_WORKER)"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::summarize_stderr;

    #[test]
    fn the_check_failure_line_is_kept() {
        let text = "WARNING: All log messages before absl::InitializeLog()\n\
            F0000 00:00:1 pjrt.cc:12] Check failed: replica_count > 0\n\
            *** Check failure stack trace: ***\n    @ 0x7f (unknown)\n";
        let s = summarize_stderr(text);
        assert!(s.starts_with("F0000"), "{s}");
        assert!(s.contains("replica_count > 0"), "{s}");
        assert!(!s.contains("0x7f"), "{s}");
        assert_eq!(summarize_stderr("a\nb\nc\nd\ne\n"), "b | c | d | e");
    }
}
