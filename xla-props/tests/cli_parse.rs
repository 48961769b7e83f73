//! `xla-props parse FILE` through the built binary: canonical output on
//! success; `FILE:LINE:COL: message`, the line and a caret, and exit code 2
//! on bad input.

use std::path::Path;
use std::process::{Command, Output};

fn parse_file(path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xla-props"))
        .arg("parse")
        .arg(path)
        .output()
        .expect("run xla-props")
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn prints_canonical_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "ok.hlo",
        b"HloModule m, is_scheduled=true\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(f32[2]{0} %p)\n}\n",
    );
    let out = parse_file(&path);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "HloModule m, is_scheduled=true\n\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n"
    );
    assert!(out.stderr.is_empty());
}

/// `parse DIR/NAME` on `bytes` written there (None: no such file), which
/// must exit 2 and print nothing: the path as the message shows it, and the
/// message.
fn rejected(name: &str, bytes: Option<&[u8]>) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = match bytes {
        Some(bytes) => write(&dir, name, bytes),
        None => dir.path().join(name),
    };
    let out = parse_file(&path);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    (path.display().to_string(), stderr(&out))
}

#[test]
fn unknown_opcode_exits_2_with_location_and_caret() {
    let (path, err) = rejected(
        "bad.hlo",
        Some(b"HloModule m\nENTRY e {\n  ROOT x = f32[] frob()\n}\n"),
    );
    let want = format!(
        "{path}:3:18: unknown opcode `frob`\n  ROOT x = f32[] frob()\n                 ^\n"
    );
    assert_eq!(err, want);
}

#[test]
fn undefined_operand_points_at_the_operand() {
    let (path, err) = rejected(
        "undef.hlo",
        Some(
            b"HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, q)\n}\n",
        ),
    );
    let first = err.lines().next().unwrap();
    assert_eq!(
        first,
        format!("{path}:5:25: instruction `a` uses undefined operand `q`")
    );
}

#[test]
fn invalid_utf8_exits_2_at_the_first_bad_byte() {
    let (path, err) = rejected(
        "bin.hlo",
        Some(b"HloModule m\nENTRY e {\n  ab\xc3\x28 = \n}\n"),
    );
    assert!(
        err.starts_with(&format!("{path}:3:5: invalid utf-8 byte 0xc3\n")),
        "{err}"
    );
}

#[test]
fn empty_file_exits_2() {
    let (path, err) = rejected("empty.hlo", Some(b""));
    assert!(
        err.starts_with(&format!(
            "{path}:1:1: expected `HloModule`, found end of file"
        )),
        "{err}"
    );
}

#[test]
fn deep_nesting_exits_2_without_crashing() {
    let src = format!(
        "HloModule m\nENTRY e {{\n  ROOT t = {}\n}}\n",
        "(".repeat(1_000_000)
    );
    let (path, err) = rejected("deep.hlo", Some(src.as_bytes()));
    assert!(
        err.starts_with(&format!("{path}:3:212: nesting deeper than 200 levels")),
        "{err}"
    );
}

#[test]
fn unreadable_file_exits_2() {
    let (path, err) = rejected("missing.hlo", None);
    assert!(err.starts_with(&format!("{path}: cannot read: ")), "{err}");
}

#[test]
fn shape_mismatch_exits_2_naming_the_instruction() {
    let (path, err) = rejected(
        "bad_shape.hlo",
        Some(b"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT wrong = f32[3] negate(p)\n}\n"),
    );
    // FILE:LINE:COL of the instruction's definition: line 4, `wrong` at column 8
    assert!(err.starts_with(&format!("{path}:4:8: ")), "{err}");
    assert!(err.contains("'wrong'"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn a_verifier_error_in_a_called_computation_is_located_there() {
    // `x` is defined in both computations; the bad one is the callee's
    let (path, err) = rejected(
        "bad_callee.hlo",
        Some(
            b"HloModule m\n\nf {\n  x = f32[2] parameter(0)\n  ROOT %y = f32[2] add(x, x, x)\n}\n\n\
          ENTRY e {\n  x.0 = f32[2] parameter(0)\n  ROOT c = f32[2] call(x.0), to_apply=f\n}\n",
        ),
    );
    assert!(err.starts_with(&format!("{path}:5:8: ")), "{err}");
    assert!(err.contains("'y'"), "{err}");
}
