//! `Backend::version` of the XLA backend, for a run's records: the plugin
//! file (path, size, sha256) and what the plugin says of itself (PJRT C API
//! version, XLA and StableHLO versions).

use std::path::Path;
use std::process::{Command, Stdio};

/// `PATH (N bytes, sha256 HEX)`; the hash is left out where `sha256sum` is missing.
pub(crate) fn describe_file(path: &Path) -> String {
    let size = std::fs::metadata(path)
        .map(|m| format!("{} bytes", m.len()))
        .unwrap_or_else(|e| format!("unreadable: {e}"));
    match sha256(path) {
        Some(h) => format!("{} ({size}, sha256 {h})", path.display()),
        None => format!("{} ({size})", path.display()),
    }
}

/// The file's sha256 by coreutils' `sha256sum` (native speed on a 200 MB
/// plugin, and no hashing crate to build), or `None` without it.
fn sha256(path: &Path) -> Option<String> {
    let out = Command::new("sha256sum")
        .arg("--")
        .arg(path)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?;
    let hex = text.split_whitespace().next()?;
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| hex.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::xla::{XlaBackend, XlaPlugin};
    use crate::backend::Backend;

    #[test]
    fn a_file_is_described_by_size_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plugin.so");
        std::fs::write(&p, b"abc").unwrap();
        let d = describe_file(&p);
        assert!(d.starts_with(&format!("{} (3 bytes", p.display())), "{d}");
        if sha256(&p).is_some() {
            // sha256("abc")
            assert!(
                d.ends_with(
                    "sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad)"
                ),
                "{d}"
            );
        }
    }

    #[test]
    fn a_missing_plugin_says_why() {
        let b = XlaBackend::with_plugin_path(XlaPlugin::Cpu, "/nonexistent/plugin.so".into());
        let v = b.version().unwrap();
        assert!(v.starts_with("unavailable: "), "{v}");
        assert!(v.contains("/nonexistent/plugin.so"), "{v}");
        // the revision recorded with the pin, which runs' records carry
        assert!(
            v.contains("xla revision openxla/xla@91888df6ce85102c30220e41d952065925e10886"),
            "{v}"
        );
    }
}
