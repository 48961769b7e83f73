//! The pinned IREE tools (`scripts/fetch-iree.sh`) and how they are run:
//! each call is its own process with a timeout, so a crash or a hang inside
//! IREE fails that call only.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::error::IreeError;

/// The IREE release the backend is pinned to (the wheels' version).
pub const IREE_VERSION: &str = "3.13.0";

/// `iree-compile` flags: StableHLO input, the local llvm-cpu target for a
/// generic x86-64 cpu (no host-specific features, so results do not depend
/// on the machine), IREE's own linker, and f64 kept as f64 (IREE demotes
/// f64 to f32 by default, which would make every f64 case a demotion test).
pub const COMPILE_FLAGS: &[&str] = &[
    "--iree-input-type=stablehlo",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
    "--iree-input-demote-f64-to-f32=false",
];

/// The three tools, in one directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IreeTools {
    /// The directory that holds them.
    pub dir: PathBuf,
}

/// The files the backend needs in the tools directory.
const FILES: &[&str] = &[
    "iree-compile",
    "iree-lld",
    "iree-run-module",
    "libIREECompiler.so",
];

impl IreeTools {
    /// Finds the tools: `IREE_TOOLS_DIR`, else `$IREE_CACHE/3.13.0`, else
    /// `.cache/iree/3.13.0` in the current directory, an ancestor, or this
    /// workspace; `Err(reason)` when none has them all.
    ///
    /// ```
    /// use xla_props::backend::iree::IreeTools;
    /// match IreeTools::locate() {
    ///     Ok(t) => assert!(t.dir.join("iree-compile").exists()),
    ///     Err(why) => assert!(why.contains("fetch-iree.sh"), "{why}"),
    /// }
    /// ```
    pub fn locate() -> Result<IreeTools, String> {
        if let Some(dir) = std::env::var_os("IREE_TOOLS_DIR") {
            let dir = PathBuf::from(dir);
            return IreeTools::at(&dir)
                .map_err(|missing| format!("IREE_TOOLS_DIR={} lacks {missing}", dir.display()));
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(c) = std::env::var_os("IREE_CACHE") {
            dirs.push(PathBuf::from(c).join(IREE_VERSION));
        }
        if let Ok(cwd) = std::env::current_dir() {
            dirs.extend(
                cwd.ancestors()
                    .map(|a| a.join(".cache/iree").join(IREE_VERSION)),
            );
        }
        dirs.push(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../.cache/iree")
                .join(IREE_VERSION),
        );
        dirs.iter().find_map(|d| IreeTools::at(d).ok()).ok_or_else(|| {
            format!(
                "the iree {IREE_VERSION} tools (iree-compile, iree-lld, iree-run-module) were not found \
                 in .cache/iree/{IREE_VERSION}; run scripts/fetch-iree.sh or set IREE_TOOLS_DIR"
            )
        })
    }

    /// The tools in `dir`, or the first file it lacks.
    pub fn at(dir: &Path) -> Result<IreeTools, String> {
        match FILES.iter().find(|f| !dir.join(f).is_file()) {
            Some(missing) => Err((*missing).to_string()),
            None => Ok(IreeTools {
                dir: dir.to_path_buf(),
            }),
        }
    }

    fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `iree-compile` of `mlir` into `out` (a `.vmfb`), with [`COMPILE_FLAGS`].
    pub fn compile(&self, mlir: &Path, out: &Path, timeout: Duration) -> Result<(), IreeError> {
        let mut cmd = Command::new(self.tool("iree-compile"));
        cmd.args(COMPILE_FLAGS)
            .arg(format!(
                "--iree-llvmcpu-embedded-linker-path={}",
                self.tool("iree-lld").display()
            ))
            .arg(mlir)
            .arg("-o")
            .arg(out);
        let logs = out.with_extension("compile");
        run_tool("iree-compile", &mut cmd, &logs, timeout).map_err(|e| match e {
            ToolFailure::Failed(msg) => compile_failure(msg),
            ToolFailure::Other(e) => e,
        })
    }

    /// `iree-run-module` of `@main` in `vmfb`: `inputs` are `(type, file)`
    /// pairs (`2x3xf32`, a raw little-endian file), `outputs` the files it
    /// writes, raw, one per result.
    pub fn run(
        &self,
        vmfb: &Path,
        inputs: &[(String, PathBuf)],
        outputs: &[PathBuf],
        timeout: Duration,
    ) -> Result<(), IreeError> {
        let mut cmd = Command::new(self.tool("iree-run-module"));
        cmd.arg(format!("--module={}", vmfb.display()))
            .arg("--device=local-task")
            .arg("--function=main");
        for (ty, file) in inputs {
            cmd.arg(format!("--input={ty}=@{}", file.display()));
        }
        for file in outputs {
            cmd.arg(format!("--output=@{}", file.display()));
        }
        let logs = vmfb.with_extension("run");
        run_tool("iree-run-module", &mut cmd, &logs, timeout).map_err(|e| match e {
            ToolFailure::Failed(msg) => IreeError::Execute(msg),
            ToolFailure::Other(e) => e,
        })
    }

    /// `iree-compile --version`, first line.
    pub fn compiler_version(&self) -> Option<String> {
        let out = Command::new(self.tool("iree-compile"))
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    }
}

/// A compile's diagnostics (`iree-compile`'s stderr, or the compile
/// worker's) as an error: a missing lowering is `CannotLower` (a skip, with
/// the line it names), anything else `Compile`.
pub(crate) fn compile_failure(msg: String) -> IreeError {
    match cannot_legalize(&msg).or_else(|| cannot_link(&msg)) {
        Some(what) => IreeError::CannotLower {
            what,
            line: super::error::error_line(&msg),
        },
        None => IreeError::Compile(msg),
    }
}

/// The first error line of `text` and its tail, the part of a compiler's
/// diagnostics an error keeps.
pub(crate) fn summarize(text: &str) -> String {
    let first = text.lines().find(|l| l.contains("error:")).unwrap_or("");
    let rest = tail(text, 3000);
    if first.is_empty() || rest.starts_with(first.trim()) {
        rest
    } else {
        format!("{}\n...\n{rest}", first.trim())
    }
}

enum ToolFailure {
    /// Exited with a non-zero status: its message.
    Failed(String),
    /// Crashed, timed out, or could not start.
    Other(IreeError),
}

/// Runs `cmd` with its output in `logs.{out,err}`; kills it after `timeout`.
fn run_tool(
    tool: &'static str,
    cmd: &mut Command,
    logs: &Path,
    timeout: Duration,
) -> Result<(), ToolFailure> {
    let io = |e: std::io::Error| ToolFailure::Other(IreeError::Io(format!("{tool}: {e}")));
    let err_path = logs.with_extension("err");
    let stdout = std::fs::File::create(logs.with_extension("out")).map_err(io)?;
    let stderr = std::fs::File::create(&err_path).map_err(io)?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(io)?;
    let status = wait(&mut child, timeout).map_err(io)?;
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ToolFailure::Other(IreeError::Timeout {
            tool,
            seconds: timeout.as_secs_f64(),
        }));
    };
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&err_path).unwrap_or_default();
    // the first error names the culprit; the tail has the notes after it
    let message = summarize(&text);
    if status.code().is_none() {
        return Err(ToolFailure::Other(IreeError::Crashed {
            tool,
            status: status.to_string(),
            stderr: message,
        }));
    }
    Err(ToolFailure::Failed(message))
}

/// Waits for the child, polling; `None` when it ran past `timeout`.
fn wait(child: &mut std::process::Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if start.elapsed() >= timeout {
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// IREE's own word that it lacks a lowering: `failed to legalize operation
/// 'OP' that was explicitly marked illegal: ... : (TYPES) -> TYPE`, as a
/// skip reason naming the operation and its types (SSA names dropped). Any
/// other compile error (a crash, a verifier error) stays a failure.
pub(crate) fn cannot_legalize(message: &str) -> Option<String> {
    let at = message.find("failed to legalize operation '")?;
    let rest = &message[at + "failed to legalize operation '".len()..];
    let op = &rest[..rest.find('\'')?];
    let line = rest.lines().next().unwrap_or("");
    let types = line
        .rfind(" : ")
        .map(|k| line[k + 3..].trim())
        .unwrap_or("");
    Some(format!(
        "iree-compile {IREE_VERSION} cannot legalize `{op}` for {types} (llvm-cpu)"
    ))
}

/// IREE's embedded executables link no C runtime: code generation that
/// lowers an op to a library call (`tanh`, `ceil`, `fmod`, `atan2` on f64;
/// `__truncsfbf2` for an integer to bf16 conversion) fails at link time with
/// `iree-lld: error: undefined symbol: NAME`. That is a lowering IREE does
/// not have for the target (docs/findings.md, "iree-cpu"), never a wrong
/// result, so it is a skip naming the symbol. Other link errors stay failures.
pub(crate) fn cannot_link(message: &str) -> Option<String> {
    const UNDEFINED: &str = "iree-lld: error: undefined symbol: ";
    let at = message.find(UNDEFINED)?;
    let symbol = message[at + UNDEFINED.len()..]
        .split(|c: char| c.is_whitespace())
        .next()
        .filter(|s| !s.is_empty())?;
    Some(format!(
        "iree-compile {IREE_VERSION} lowers it to a call of `{symbol}`, which the llvm-cpu \
         embedded executable does not provide (iree-lld: undefined symbol)"
    ))
}

/// The last `limit` bytes of `text` (on a character boundary), trimmed.
fn tail(text: &str, limit: usize) -> String {
    let text = text.trim();
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// A scratch directory for one compile and its runs, removed on drop.
#[derive(Debug)]
pub(crate) struct Scratch {
    pub(crate) dir: PathBuf,
}

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, IreeError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir()
            .join("xla-props-iree")
            .join(format!("{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| IreeError::Io(format!("{}: {e}", dir.display())))?;
        Ok(Scratch { dir })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_the_tools_names_what_it_lacks() {
        let s = Scratch::new().unwrap();
        assert_eq!(IreeTools::at(&s.dir).unwrap_err(), "iree-compile");
    }

    #[test]
    fn a_tool_that_hangs_is_killed_and_one_that_fails_reports_its_stderr() {
        let s = Scratch::new().unwrap();
        let logs = s.dir.join("x");
        let mut sleep = Command::new("sleep");
        sleep.arg("5");
        let t = Instant::now();
        match run_tool(
            "iree-run-module",
            &mut sleep,
            &logs,
            Duration::from_millis(100),
        ) {
            Err(ToolFailure::Other(IreeError::Timeout { tool, .. })) => {
                assert_eq!(tool, "iree-run-module")
            }
            _ => panic!("expected a timeout"),
        }
        assert!(t.elapsed() < Duration::from_secs(4));
        let mut fail = Command::new("sh");
        fail.args(["-c", "echo 'error: no such op' >&2; exit 1"]);
        match run_tool("iree-compile", &mut fail, &logs, Duration::from_secs(10)) {
            Err(ToolFailure::Failed(m)) => assert_eq!(m, "error: no such op"),
            _ => panic!("expected a failure"),
        }
        let mut crash = Command::new("sh");
        crash.args(["-c", "kill -SEGV $$"]);
        match run_tool("iree-compile", &mut crash, &logs, Duration::from_secs(10)) {
            Err(ToolFailure::Other(IreeError::Crashed { status, .. })) => {
                assert!(
                    status.contains("11") || status.contains("SIGSEGV"),
                    "{status}"
                )
            }
            _ => panic!("expected a crash"),
        }
    }

    #[test]
    fn a_legalization_failure_is_a_reason_and_other_errors_are_not() {
        let m = "m.mlir:4:10: error: failed to legalize operation 'math.absf' that was explicitly \
                 marked illegal: %52 = \"math.absf\"(%51) : (f8E4M3FN) -> f8E4M3FN\n    %1 = ...";
        assert_eq!(
            cannot_legalize(m).unwrap(),
            "iree-compile 3.13.0 cannot legalize `math.absf` for (f8E4M3FN) -> f8E4M3FN (llvm-cpu)"
        );
        assert!(
            cannot_legalize("m.mlir:1:1: error: 'stablehlo.add' op requires the same type")
                .is_none()
        );
    }

    #[test]
    fn an_undefined_runtime_symbol_is_a_reason_and_other_link_errors_are_not() {
        let m = "iree-compile: iree-lld: error: undefined symbol: tanh\n>>> referenced by x";
        let why = cannot_link(m).unwrap();
        assert!(why.contains("`tanh`") && why.contains("3.13.0"), "{why}");
        assert!(cannot_link("iree-lld: error: undefined symbol: ").is_none());
        assert!(cannot_link("iree-lld: error: duplicate symbol: tanh").is_none());
    }

    #[test]
    fn tails_keep_the_end_on_a_character_boundary() {
        assert_eq!(tail("  abc  ", 10), "abc");
        assert_eq!(tail("aéb", 2), "b");
    }
}
