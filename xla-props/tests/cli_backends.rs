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
    let xla = text
        .lines()
        .find(|l| l.starts_with("xla-cpu "))
        .expect("an xla-cpu line");
    assert!(xla.contains("unavailable: not built yet"), "{text}");
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
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("backend `xla-cpu` is unavailable"), "{err}");
}
