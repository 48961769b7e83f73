//! What a run records about itself in its `--json` report: the seed, the git
//! revision of the code under test, when it started and how long it took, the
//! command line, the host, and each backend with its version.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::args::Shard;
use super::identity::{CaseSelection, CaseSpaceId, ShardInfo};
use crate::backend::Backend;
use crate::property::{BackendId, CaseSpace};
use crate::report::{BackendInfo, RunMetadata};

/// `backend`'s name and version, in `role` (the run's metadata's record of it).
fn backend_info(backend: &dyn Backend, role: &str) -> BackendInfo {
    BackendInfo {
        name: backend.name().to_string(),
        version: backend.version(),
        role: Some(role.to_string()),
        ..BackendInfo::default()
    }
}

/// Where a run's metadata comes from, gathered at the start of the run.
pub(crate) struct RunStart {
    /// When it started.
    pub at: SystemTime,
    /// The same moment, for the duration.
    pub instant: std::time::Instant,
    /// The command line, as a shell would take it.
    pub command: String,
    /// The git revision and dirty state at the start.
    pub git: (String, Option<bool>),
    /// Whether the run keeps ULP histograms (only `--json` writes them).
    pub histograms: bool,
    /// The shard this process runs.
    pub shard: Option<ShardInfo>,
    /// The case space of the unsharded run.
    pub case_space: Option<CaseSpaceId>,
}

impl RunStart {
    /// Now, for a run of `program` (the rerun prefix) with `args`, in the
    /// current directory's git checkout.
    pub fn now(program: &str, args: &[String], env: &dyn Fn(&str) -> Option<String>) -> RunStart {
        // a test binary of the release profile was built by `cargo test --release`
        let release = std::env::current_exe().is_ok_and(|e| {
            e.parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|p| p == "release")
        });
        let mut command = match program.strip_prefix("cargo test ") {
            Some(rest) if release => format!("cargo test --release {rest}"),
            _ => program.to_string(),
        };
        for a in args {
            command.push(' ');
            command.push_str(&shell_quote(a));
        }
        RunStart {
            at: SystemTime::now(),
            instant: std::time::Instant::now(),
            command,
            git: git_revision(Path::new("."), env),
            histograms: false,
            shard: None,
            case_space: None,
        }
    }

    /// Records the run's case space (what `selection` selects from `spaces`
    /// on `backends`) and its shard.
    pub fn identify(
        &mut self,
        selection: CaseSelection,
        spaces: &[CaseSpace],
        backends: &[BackendId],
        shard: Option<Shard>,
    ) -> Result<(), String> {
        self.case_space = Some(selection.identify(spaces, backends)?);
        self.shard = shard.map(ShardInfo::from);
        Ok(())
    }

    /// The metadata of the run that started here and ends now.
    pub fn finish(&self, seed: u64, backends: Vec<BackendInfo>) -> RunMetadata {
        RunMetadata {
            backends,
            seed: Some(seed),
            git_revision: Some(self.git.0.clone()),
            git_dirty: self.git.1,
            started_at: Some(rfc3339(self.at)),
            duration_ms: Some(self.instant.elapsed().as_millis() as u64),
            command: Some(self.command.clone()),
            host: Some(host()),
            cores: Some(std::thread::available_parallelism().map_or(1, |n| n.get()) as u64),
            xla_props: Some(env!("CARGO_PKG_VERSION").to_string()),
            shard: self.shard,
            case_space: self.case_space.clone(),
            extra: Default::default(),
        }
    }
}

/// The backends of a run: those under test, then the reference (one entry
/// when the reference is also under test).
pub(crate) fn backend_versions<'a>(
    under_test: impl Iterator<Item = &'a dyn Backend>,
    reference: &dyn Backend,
) -> Vec<BackendInfo> {
    let mut backends: Vec<BackendInfo> =
        under_test.map(|b| backend_info(b, "under test")).collect();
    match backends.iter_mut().find(|b| b.name == reference.name()) {
        Some(b) => b.role = Some("under test and reference".to_string()),
        None => backends.push(backend_info(reference, "reference")),
    }
    backends
}

/// How a case of this test binary reruns: `cargo test --test NAME --` for a
/// cargo test binary, else the binary's path.
pub(crate) fn rerun_prefix() -> String {
    let exe = std::env::current_exe().ok();
    // cargo test binaries live in target/<profile>/deps/<name>-<hash>
    if let Some(exe) = &exe {
        let in_deps = exe
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "deps");
        if let (true, Some(stem)) = (in_deps, exe.file_stem().and_then(|s| s.to_str())) {
            if let Some((name, hash)) = stem.rsplit_once('-') {
                if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                    return format!("cargo test --test {name} --");
                }
            }
        }
    }
    exe.map(|e| e.display().to_string())
        .unwrap_or_else(|| "<test binary>".to_string())
}

/// `a` quoted for a POSIX shell when it needs it.
pub(crate) fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// Runs git in `dir`; its trimmed stdout on success.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The revision of the checkout at `dir` and whether its tracked files are
/// modified; else `XLA_PROPS_GIT_REVISION` (at run time, then at build time);
/// else `unknown`.
pub(crate) fn git_revision(
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> (String, Option<bool>) {
    if let Some(rev) = git(dir, &["rev-parse", "HEAD"]).filter(|r| !r.is_empty()) {
        let dirty =
            git(dir, &["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
        return (rev, dirty);
    }
    let given = env("XLA_PROPS_GIT_REVISION")
        .or_else(|| option_env!("XLA_PROPS_GIT_REVISION").map(str::to_string))
        .filter(|r| !r.trim().is_empty());
    match given {
        Some(r) => (r.trim().to_string(), None),
        None => ("unknown".to_string(), None),
    }
}

/// `host-name (linux x86_64)`.
fn host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown host".to_string());
    format!(
        "{name} ({} {})",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // days since 1970-01-01 to a civil date (Howard Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        // checked with `date -u -d @SECONDS`: a leap day, a day in 2026, and 2100 (no leap day)
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            at(1_795_910_400 + 3 * 3600 + 25 * 60 + 7),
            "2026-11-29T03:25:07Z"
        );
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn arguments_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("--op"), "--op");
        assert_eq!(shell_quote("add,subtract"), "add,subtract");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("p::add::f32"), "p::add::f32");
    }

    #[test]
    fn git_revision_falls_back_to_the_environment_then_unknown() {
        let outside = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        let given = |k: &str| (k == "XLA_PROPS_GIT_REVISION").then(|| "abc123\n".to_string());
        if option_env!("XLA_PROPS_GIT_REVISION").is_none() {
            assert_eq!(
                git_revision(outside.path(), &none),
                ("unknown".into(), None)
            );
        }
        assert_eq!(
            git_revision(outside.path(), &given),
            ("abc123".into(), None)
        );
    }

    #[test]
    fn git_revision_of_a_repository_and_its_dirty_state() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let run = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(d)
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !run(&["init", "-q"]) {
            crate::skip::this_test("git is not installed");
            return;
        }
        std::fs::write(d.join("f"), "1").unwrap();
        assert!(run(&["add", "f"]));
        assert!(run(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x"
        ]));
        let none = |_: &str| None;
        let (rev, dirty) = git_revision(d, &none);
        assert_eq!(rev.len(), 40, "{rev}");
        assert!(rev.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(dirty, Some(false));
        std::fs::write(d.join("f"), "2").unwrap();
        assert_eq!(git_revision(d, &none), (rev, Some(true)));
    }
}
