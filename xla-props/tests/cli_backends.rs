//! `xla-props backends` and `xla-props eval` through the built binary.

use std::process::Command;

fn xla_props() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
}

#[test]
fn backends_lists_availability() {
    let out = xla_props().arg("backends").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let interp = text
        .lines()
        .find(|l| l.starts_with("interpreter "))
        .expect("an interpreter line");
    assert!(
        interp.ends_with("available") && !interp.contains("unavailable"),
        "{text}"
    );
    for name in ["xla-cpu ", "xla-cpu-0.81 ", "xla-gpu ", "iree-cpu "] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("a {name}line in {text}"));
        assert!(
            line.ends_with(" available") || line.contains("unavailable: "),
            "{text}"
        );
    }
}

#[test]
fn backends_verbose_names_each_plugins_xla_revision() {
    // with or without the plugin here: the revision is recorded with the pin
    let out = xla_props()
        .args(["backends", "--verbose"])
        .env("XLA_PJRT_PLUGIN", "/nonexistent/plugin.so")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let block = |name: &str| -> String {
        let start = text
            .find(&format!("\n{name} "))
            .map(|i| i + 1)
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        let mut lines = text[start..].lines();
        let first = lines.next().unwrap_or_default();
        std::iter::once(first)
            .chain(lines.take_while(|l| l.starts_with(' ')))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cpu = block("xla-cpu");
    assert!(
        cpu.contains("xla revision: openxla/xla@91888df6ce85102c30220e41d952065925e10886"),
        "{text}"
    );
    assert!(
        block("xla-cpu-0.81").contains("xla revision: not recorded by its wheel"),
        "{text}"
    );
    // the interpreter has a version, no revision
    let interp = block("interpreter");
    assert!(interp.contains("version: "), "{text}");
    assert!(!interp.contains("xla revision"), "{text}");
    // without --verbose, neither
    let plain = xla_props().arg("backends").output().unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("revision"));
}

#[test]
fn backends_says_why_xla_cpu_is_unavailable() {
    let out = xla_props()
        .arg("backends")
        .env("XLA_PJRT_PLUGIN", "/nonexistent/plugin.so")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let xla = text
        .lines()
        .find(|l| l.starts_with("xla-cpu "))
        .expect("an xla-cpu line");
    assert!(
        xla.contains("unavailable: XLA_PJRT_PLUGIN=/nonexistent/plugin.so is not a file"),
        "{text}"
    );
}

#[test]
fn backends_says_why_iree_cpu_is_unavailable() {
    let out = xla_props()
        .arg("backends")
        .env("IREE_TOOLS_DIR", "/nonexistent/iree")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let iree = text
        .lines()
        .find(|l| l.starts_with("iree-cpu "))
        .expect("an iree-cpu line");
    assert!(
        iree.contains("unavailable: IREE_TOOLS_DIR=/nonexistent/iree lacks iree-compile"),
        "{text}"
    );
}

#[test]
fn eval_with_an_unknown_backend_exits_2_and_lists_backends() {
    let out = xla_props()
        .args(["eval", "no-such-file.hlo", "--backend", "warp-drive"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown backend `warp-drive`"), "{err}");
    assert!(
        err.contains("interpreter") && err.contains("xla-cpu"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn eval_with_an_unavailable_backend_exits_2_and_says_why() {
    let out = xla_props()
        .args(["eval", "no-such-file.hlo", "--backend", "xla-cpu"])
        .env("XLA_PJRT_PLUGIN", "/nonexistent/plugin.so")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("backend `xla-cpu` is unavailable"), "{err}");
}
