//! `xla-props backends` and `xla-props eval` through the built binary.

mod common;

use common::cli::{fails_with, xla_props};

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
fn backends_says_why_a_plugin_is_unavailable() {
    // (variable, its value, the backend's line, why it is unavailable)
    for (var, value, line, why) in [
        (
            "XLA_PJRT_PLUGIN",
            "/nonexistent/plugin.so",
            "xla-cpu ",
            "unavailable: XLA_PJRT_PLUGIN=/nonexistent/plugin.so is not a file",
        ),
        (
            "IREE_TOOLS_DIR",
            "/nonexistent/iree",
            "iree-cpu ",
            "unavailable: IREE_TOOLS_DIR=/nonexistent/iree lacks iree-compile",
        ),
    ] {
        let out = xla_props()
            .arg("backends")
            .env(var, value)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let found = text
            .lines()
            .find(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("a {line}line in {text}"));
        assert!(found.contains(why), "{text}");
    }
}

#[test]
fn eval_with_an_unknown_backend_exits_2_and_lists_backends() {
    let out = xla_props()
        .args(["eval", "no-such-file.hlo", "--backend", "warp-drive"])
        .output()
        .unwrap();
    fails_with(
        &out,
        2,
        &["unknown backend `warp-drive`", "interpreter", "xla-cpu"],
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
    fails_with(&out, 2, &["backend `xla-cpu` is unavailable"]);
}
