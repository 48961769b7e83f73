//! The README: two screens, the two set-up commands next to each other (and
//! the test command is the one CI runs), nothing a user does not have, and a
//! quickstart that is the example crate's own text and works as written:
//! `examples/user-crate/` is built and run, and the quickstart is followed
//! to the letter into a new crate (both with cargo, on this repository's
//! target directory so that xla-props is built once).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

const MAIN_JOB: &str = "cargo test --release --test conformance";
const TEST_COMMAND: &str = "cargo test --workspace -- -q";

/// The fenced blocks of `text` after the heading `section`, as (language, body).
fn blocks(text: &str, section: &str) -> Vec<(String, String)> {
    let start = text
        .find(section)
        .unwrap_or_else(|| panic!("no {section:?} in the README"));
    let rest = &text[start + section.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    let mut out = Vec::new();
    let mut lines = rest[..end].lines();
    while let Some(l) = lines.next() {
        if let Some(lang) = l.strip_prefix("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            out.push((lang.to_string(), body.join("\n") + "\n"));
        }
    }
    out
}

/// The line numbers (1-based) of the lines that are exactly `line`.
fn line_numbers(text: &str, line: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == line)
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn the_readme_is_two_screens_with_the_two_commands_next_to_each_other() {
    let text = readme();
    let lines = text.lines().count();
    assert!(lines <= 120, "the README has {lines} lines (at most 120)");
    let main = line_numbers(&text, MAIN_JOB);
    let tests = line_numbers(&text, TEST_COMMAND);
    assert_eq!(main.len(), 1, "the main job's command, alone on its line");
    assert_eq!(tests.len(), 1, "the test command, alone on its line");
    let apart = main[0].abs_diff(tests[0]);
    assert!(apart <= 15, "the two commands are {apart} lines apart");
    for section in [
        "## The two set-up commands",
        "## Quickstart",
        "## Read more",
    ] {
        assert!(text.contains(section), "no {section:?} section");
    }
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == TEST_COMMAND),
        ".ci/run does not run `{TEST_COMMAND}`"
    );
}

#[test]
fn the_readme_refers_to_nothing_a_user_does_not_have() {
    let text = readme();
    for absent in ["../shared", "shared notes", "DESIGN.md"] {
        assert!(!text.contains(absent), "the README mentions {absent:?}");
    }
    assert!(text.contains("cargo install --locked"));
    // every docs/ file it names exists
    for word in text.split(|c: char| c.is_whitespace() || "`(),;:".contains(c)) {
        if word.starts_with("docs/") || word.starts_with("examples/") {
            let path = root().join(word.trim_end_matches('.'));
            assert!(path.exists(), "the README names {word}, which is absent");
        }
    }
}

/// The quickstart's three blocks: the Cargo.toml lines, tests/my_props.rs,
/// the command. Shared with tests/quickstart.rs.
fn quickstart() -> (String, String, String) {
    let b = blocks(&readme(), "## Quickstart");
    assert_eq!(
        b.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        ["toml", "rust", "sh"],
        "the quickstart's blocks"
    );
    (b[0].1.clone(), b[1].1.clone(), b[2].1.clone())
}

#[test]
fn the_quickstart_is_the_example_crates_text() {
    let (toml, rust, _) = quickstart();
    let example = root().join("examples/user-crate");
    let file = |p: &str| std::fs::read_to_string(example.join(p)).unwrap();
    assert_eq!(
        rust,
        file("tests/my_props.rs"),
        "README vs tests/my_props.rs"
    );
    // the manifest from [dev-dependencies] on, but for the dependency's path
    let manifest = file("Cargo.toml");
    let tail = &manifest[manifest.find("[dev-dependencies]").unwrap()..];
    let dependency = |l: &&str| l.starts_with("xla-props = { path = ");
    let keep = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !dependency(l))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        keep(&toml),
        keep(tail),
        "README vs examples/user-crate/Cargo.toml"
    );
    assert_eq!(toml.lines().filter(dependency).count(), 1);
    assert!(Path::new(&example).join("Cargo.lock").is_file());
}

/// The target directory the running tests were built in (shared, so the
/// nested builds reuse its dependencies).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// `cargo ARGS` in `dir`, on the shared target directory, with none of the
/// runner's environment twins of the outer run.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never");
    for var in [
        "XLA_PROPS_OPS",
        "XLA_PROPS_DTYPES",
        "XLA_PROPS_BACKENDS",
        "XLA_PROPS_SHARD",
        "XLA_PROPS_JSON",
        "XLA_PROPS_JUNIT",
        "XLA_PROPS_PROGRESS",
    ] {
        cmd.env_remove(var);
    }
    cmd.output().expect("cargo runs")
}

fn text(out: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The case lines of libtest's output that passed.
fn passed_cases(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| l.strip_suffix(" ... ok"))
        // libtest-mimic pads names to a column
        .map(|n| n.trim_end().to_string())
        .collect()
}

#[test]
fn the_example_crate_runs_its_property_and_no_builtin() {
    let out = cargo(
        &root().join("examples/user-crate"),
        &["test", "--locked", "--test", "my_props"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let cases = passed_cases(&out);
    // budget 20 per backend, on the reference and the interpreter
    assert_eq!(cases.len(), 40, "{}", text(&out));
    assert!(
        cases.iter().all(|c| c.starts_with("my_property::")),
        "{cases:?}"
    );
    assert!(cases.iter().any(|c| c.ends_with("::interpreter")));
}

/// A new crate made as the quickstart says, with its Cargo.toml lines
/// (`with_harness_stanza: false` leaves out the `[[test]]` table: the
/// mistake) and its test file.
fn new_crate(dir: &Path, with_harness_stanza: bool) -> PathBuf {
    let (toml, rust, _) = quickstart();
    let readme = readme();
    let new = "cargo new --lib my-compiler";
    assert!(
        readme.contains(&format!("`{new}`")),
        "the README says {new:?}"
    );
    let args: Vec<&str> = new.split_whitespace().skip(1).collect();
    let out = cargo(dir, &args);
    assert!(out.status.success(), "{}", text(&out));
    let krate = dir.join("my-compiler");
    // the README's placeholder path is this repository's xla-props/
    let placeholder = "/path/to/xla-props/xla-props";
    assert!(toml.contains(placeholder), "{toml}");
    let mut lines = toml.replace(placeholder, &root().join("xla-props").display().to_string());
    if !with_harness_stanza {
        lines = lines[..lines.find("[[test]]").unwrap()].to_string();
    }
    let manifest = krate.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push('\n');
    text.push_str(&lines);
    std::fs::write(&manifest, text).unwrap();
    std::fs::create_dir_all(krate.join("tests")).unwrap();
    std::fs::write(krate.join("tests/my_props.rs"), rust).unwrap();
    // the versions this repository builds with (no resolution, no download)
    std::fs::copy(
        root().join("examples/user-crate/Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();
    krate
}

/// The quickstart's run command, as its arguments to cargo.
fn run_command() -> Vec<String> {
    let (_, _, sh) = quickstart();
    let words: Vec<String> = sh.split_whitespace().map(str::to_string).collect();
    assert_eq!(words[0], "cargo", "{sh}");
    words[1..].to_vec()
}

#[test]
fn the_quickstart_followed_to_the_letter_runs_the_property() {
    let dir = tempfile::tempdir().unwrap();
    let krate = new_crate(dir.path(), true);
    let args = run_command();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cargo(&krate, &args);
    assert!(out.status.success(), "{}", text(&out));
    let cases = passed_cases(&out);
    assert_eq!(cases.len(), 40, "{}", text(&out));
    // the line the README shows is one of them
    let readme = readme();
    let shown = readme
        .split('`')
        .find(|s| s.starts_with("test my_property::"))
        .expect("the README shows a case line");
    let shown = shown
        .strip_prefix("test ")
        .unwrap()
        .strip_suffix(" ... ok")
        .unwrap();
    assert!(cases.iter().any(|c| c == shown), "{shown} not in {cases:?}");
}

#[test]
fn without_harness_false_a_failing_test_says_what_to_add() {
    let dir = tempfile::tempdir().unwrap();
    let krate = new_crate(dir.path(), false);
    let out = cargo(&krate, &["test", "--test", "my_props"]);
    assert!(!out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("test my_property_needs_harness_false ... FAILED"),
        "{}",
        text(&out)
    );
    for fix in [
        "the xla-props property `my_property` did not run",
        "[[test]]\nname = \"my_props\"\nharness = false",
        "xla_props::main!();",
    ] {
        assert!(stdout.contains(fix), "{fix:?} not in {}", text(&out));
    }
    assert!(!stdout.contains("running 0 tests"), "{}", text(&out));
}
