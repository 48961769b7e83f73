//! The in-process compiler, isolated: a worker process that holds one
//! compiler session (`embed`) and compiles the modules its parent sends.
//!
//! Started as `xla-props __iree-compile-worker LIB LINKER` (the test harness
//! binaries serve it too). Frames (`xla::protocol`'s): a request is the
//! StableHLO text; a reply is a tag byte and its payload: `R` ready (the
//! compiler's revision), `O` the `.vmfb`, `E` the diagnostics of a failed
//! compile (with what the compiler's child processes, `iree-lld`, wrote to
//! stderr during it), `U` the library could not be loaded. A crash or a hang
//! kills that worker only: its compile fails as `iree-compile crashed` or
//! timed out, and the next compile starts a fresh worker.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::time::Duration;

use super::embed::Compiler;
use super::error::IreeError;
use crate::backend::xla::protocol::{
    exit_code, protocol_stdout, read_frame, write_frame, WorkerPipes,
};

/// The argument that selects the compile worker in a binary.
pub const COMPILE_WORKER_ARG: &str = "__iree-compile-worker";

/// The name a module's text has in diagnostics (`module.mlir:LINE:COL`), as
/// with `iree-compile` (the error line mapping reads it).
const SOURCE_NAME: &str = "module.mlir";

/// Bytes of a worker's stderr kept for a crash report.
const STDERR_TAIL: usize = 4096;

/// Idle workers kept for the next compiles; more are stopped.
const MAX_IDLE: usize = 4;

/// How long a worker may take to load the library.
const STARTUP: Duration = Duration::from_secs(120);

/// Runs the compile worker if `args` (without the program name) ask for it;
/// `None` otherwise. The value is the process's exit code.
pub fn main_if_compile_worker(args: &[String]) -> Option<i32> {
    if args.first().map(String::as_str) != Some(COMPILE_WORKER_ARG) {
        return None;
    }
    let [lib, linker] = match args.get(1..3) {
        Some([a, b]) => [a.clone(), b.clone()],
        _ => {
            eprintln!("usage: xla-props {COMPILE_WORKER_ARG} LIBIREECOMPILER LINKER");
            return Some(2);
        }
    };
    let served = serve(Path::new(&lib), Path::new(&linker));
    Some(exit_code("iree compile worker", served))
}

fn reply(out: &mut impl Write, tag: u8, payload: &[u8]) -> io::Result<()> {
    let mut frame = Vec::with_capacity(payload.len() + 1);
    frame.push(tag);
    frame.extend_from_slice(payload);
    write_frame(out, &frame)
}

fn serve(lib: &Path, linker: &Path) -> io::Result<()> {
    let mut out = BufWriter::new(protocol_stdout()?);
    let mut input = BufReader::new(io::stdin().lock());
    let mut compiler = match Compiler::load(lib, linker) {
        Ok(c) => c,
        Err(why) => return reply(&mut out, b'U', why.as_bytes()),
    };
    reply(&mut out, b'R', compiler.revision().as_bytes())?;
    // what child processes (iree-lld) write to stderr during a compile
    let path = std::env::temp_dir().join(format!("xla-props-iree-stderr-{}", std::process::id()));
    let mut captured = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    // unlinked at once: the descriptor stays, nothing is left behind
    let _ = std::fs::remove_file(&path);
    while let Some(frame) = read_frame(&mut input)? {
        let mlir = String::from_utf8_lossy(&frame);
        let saved = redirect_stderr(&captured)?;
        let result = compiler.compile(SOURCE_NAME, &mlir);
        restore_stderr(saved)?;
        let mut stderr = String::new();
        captured.seek(io::SeekFrom::Start(0))?;
        captured.read_to_string(&mut stderr)?;
        captured.set_len(0)?;
        captured.seek(io::SeekFrom::Start(0))?;
        match result {
            Ok(vmfb) => reply(&mut out, b'O', &vmfb)?,
            Err(d) => {
                let text = format!("{}\n{}", d.0, stderr.trim());
                reply(&mut out, b'E', text.trim().as_bytes())?
            }
        }
    }
    Ok(())
}

/// Points fd 2 at `file`; the saved descriptor to restore.
fn redirect_stderr(file: &File) -> io::Result<i32> {
    // SAFETY: dup/dup2 of the process's own stderr.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 || libc::dup2(file.as_raw_fd(), 2) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(saved)
    }
}

fn restore_stderr(saved: i32) -> io::Result<()> {
    // SAFETY: `saved` came from `redirect_stderr` and is closed once here.
    unsafe {
        let r = libc::dup2(saved, 2);
        libc::close(saved);
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A running compile worker.
struct Worker {
    child: Child,
    pipes: WorkerPipes,
}

/// Spawns `cmd`, retrying for up to a second while the program is "text
/// file busy": a file just written (a rebuilt worker binary, a test's
/// script) stays open for writing in any process another thread forked
/// before that child's exec closed it, and `exec` refuses it meanwhile.
fn spawn_retrying_busy(cmd: &mut Command) -> io::Result<Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

impl Worker {
    fn spawn(program: &Path, lib: &Path, linker: &Path) -> Result<Worker, IreeError> {
        let unavailable = |e: String| IreeError::Unavailable(e);
        let mut child = spawn_retrying_busy(
            Command::new(program)
                .arg(COMPILE_WORKER_ARG)
                .arg(lib)
                .arg(linker)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| {
            unavailable(format!(
                "cannot start the iree compile worker {}: {e}",
                program.display()
            ))
        })?;
        let Some(pipes) = WorkerPipes::take(&mut child, STDERR_TAIL) else {
            return Err(IreeError::Io(
                "compile worker pipes were not created".into(),
            ));
        };
        let mut worker = Worker { child, pipes };
        let started = worker.receive(STARTUP).map_err(|e| {
            unavailable(format!(
                "the iree compile worker {} did not start: {e}",
                program.display()
            ))
        })?;
        match started {
            (b'R', _) => Ok(worker),
            (b'U', why) => Err(unavailable(String::from_utf8_lossy(&why).into_owned())),
            (tag, _) => Err(IreeError::Io(format!(
                "compile worker started with reply {tag}"
            ))),
        }
    }

    /// One compile: the `.vmfb` or the diagnostics. On a crash or a timeout
    /// the worker is dead and must be dropped.
    fn compile(
        &mut self,
        mlir: &str,
        timeout: Duration,
    ) -> Result<Result<Vec<u8>, String>, IreeError> {
        if write_frame(&mut self.pipes.stdin, mlir.as_bytes()).is_err() {
            return Err(self.crashed());
        }
        match self.receive(timeout)? {
            (b'O', vmfb) => Ok(Ok(vmfb)),
            (b'E', text) => Ok(Err(String::from_utf8_lossy(&text).into_owned())),
            (tag, _) => Err(IreeError::Io(format!(
                "compile worker replied with tag {tag}"
            ))),
        }
    }

    fn receive(&mut self, timeout: Duration) -> Result<(u8, Vec<u8>), IreeError> {
        match self.pipes.frames.recv_timeout(timeout) {
            Ok(Ok(Some(mut frame))) if !frame.is_empty() => {
                let tag = frame.remove(0);
                Ok((tag, frame))
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(IreeError::Timeout {
                    tool: "iree-compile",
                    seconds: timeout.as_secs_f64(),
                })
            }
            _ => Err(self.crashed()),
        }
    }

    fn crashed(&mut self) -> IreeError {
        let status = match self.child.wait() {
            Ok(s) => s.to_string(),
            Err(e) => format!("unknown exit ({e})"),
        };
        // let the stderr reader drain what the dying process wrote
        std::thread::sleep(Duration::from_millis(50));
        let bytes = self.pipes.stderr_bytes();
        IreeError::Crashed {
            tool: "iree-compile",
            status,
            stderr: String::from_utf8_lossy(&bytes).trim().to_string(),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Compile workers for one backend: an idle one is reused, a dead one
/// replaced, one per compile running at once.
pub(crate) struct CompilePool {
    program: PathBuf,
    lib: PathBuf,
    linker: PathBuf,
    idle: Mutex<Vec<Worker>>,
    started: AtomicU64,
    /// Why no worker can start (the first failed start), once known.
    off: Mutex<Option<String>>,
}

impl CompilePool {
    /// Workers started from `program` with this library and linker.
    pub(crate) fn new(program: PathBuf, lib: PathBuf, linker: PathBuf) -> CompilePool {
        CompilePool {
            program,
            lib,
            linker,
            idle: Mutex::new(Vec::new()),
            started: AtomicU64::new(0),
            off: Mutex::new(None),
        }
    }

    /// Workers started so far (one more than the deaths, per compile at once).
    pub(crate) fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Compiles `mlir`: `Ok(Ok(vmfb))`, `Ok(Err(diagnostics))` for a module
    /// the compiler rejected, `Err` for a worker that crashed, hung or
    /// could not start (`IreeError::Unavailable`, then for good: the
    /// caller compiles another way).
    pub(crate) fn compile(
        &self,
        mlir: &str,
        timeout: Duration,
    ) -> Result<Result<Vec<u8>, String>, IreeError> {
        if let Some(why) = self.off.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Err(IreeError::Unavailable(why));
        }
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut worker = match idle {
            Some(w) => w,
            None => {
                self.started.fetch_add(1, Ordering::Relaxed);
                match Worker::spawn(&self.program, &self.lib, &self.linker) {
                    Ok(w) => w,
                    Err(e) => {
                        if let IreeError::Unavailable(why) = &e {
                            *self.off.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
                        }
                        return Err(e);
                    }
                }
            }
        };
        let result = worker.compile(mlir, timeout)?;
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // each worker holds a compiler session: a burst of compiles at once
        // (the direct runs of many test threads) does not keep them all
        if idle.len() < MAX_IDLE {
            idle.push(worker);
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::iree::tools::Scratch;

    /// A stand-in worker: a shell script run the way the pool runs workers.
    fn script(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("worker.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn pool(program: PathBuf) -> CompilePool {
        CompilePool::new(program, "lib.so".into(), "iree-lld".into())
    }

    #[test]
    fn a_worker_that_crashes_fails_that_compile_and_the_next_starts_afresh() {
        let s = Scratch::new().unwrap();
        // ready (a 1-byte frame `R`), then dies on its first request
        let p = pool(script(
            &s.dir,
            "printf '\\001\\000\\000\\000R'; head -c 4 >/dev/null; echo 'compiler fault' >&2; kill -SEGV $$",
        ));
        for n in 1..=2 {
            match p.compile("module {}", Duration::from_secs(30)) {
                Err(IreeError::Crashed {
                    tool,
                    status,
                    stderr,
                }) => {
                    assert_eq!(tool, "iree-compile");
                    assert!(
                        status.contains("11") || status.contains("SIGSEGV"),
                        "{status}"
                    );
                    assert!(stderr.contains("compiler fault"), "{stderr}");
                }
                other => panic!("expected a crash, got {other:?}"),
            }
            assert_eq!(p.started(), n);
        }
    }

    #[test]
    fn a_hung_worker_is_killed_and_a_failed_compile_keeps_its_worker() {
        let s = Scratch::new().unwrap();
        // ready, then replies `E` (diagnostics) to the first request and
        // hangs on the second
        let p = pool(script(
            &s.dir,
            "printf '\\001\\000\\000\\000R'; head -c 13 >/dev/null; \
             printf '\\005\\000\\000\\000Eoops'; exec sleep 30",
        ));
        assert_eq!(
            p.compile("module {}", Duration::from_secs(30)).unwrap(),
            Err("oops".to_string())
        );
        let t = std::time::Instant::now();
        match p.compile("module {}", Duration::from_millis(200)) {
            Err(IreeError::Timeout { tool, .. }) => assert_eq!(tool, "iree-compile"),
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(20));
        // one worker served both: the failed compile did not replace it
        assert_eq!(p.started(), 1);
    }

    #[test]
    fn a_worker_that_cannot_start_turns_the_pool_off() {
        let s = Scratch::new().unwrap();
        let p = pool(script(&s.dir, "echo 'no such library' >&2; exit 1"));
        for _ in 0..2 {
            match p.compile("module {}", Duration::from_secs(30)) {
                Err(IreeError::Unavailable(why)) => assert!(why.contains("did not start"), "{why}"),
                other => panic!("expected unavailable, got {other:?}"),
            }
        }
        assert_eq!(p.started(), 1);
        // a library that does not load is said so by the worker itself
        let p = pool(script(
            &s.dir,
            "printf '\\010\\000\\000\\000Umissing'; exec sleep 5",
        ));
        match p.compile("module {}", Duration::from_secs(30)) {
            Err(IreeError::Unavailable(why)) => assert_eq!(why, "missing"),
            other => panic!("expected unavailable, got {other:?}"),
        }
    }
}
