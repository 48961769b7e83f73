//! Runs every `.hlotest` file under `tests/hlo/` on each backend it names:
//! one trial per file x backend, named `FILE::BACKEND`. A backend that is not
//! available here is ignored with the reason. `XLA_PROPS_BLESS=1` rewrites
//! expectations that do not hold.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use xla_props::filetest::{run_file_on, HloTest, TrialResult};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else if p.extension().is_some_and(|x| x == "hlotest") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("hlo");
    let mut trials = Vec::new();
    for path in files(&root) {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let test = match HloTest::load(&path) {
            Ok(t) => t,
            Err(e) => {
                // a malformed file is a failing trial, not a crash of the harness
                let message = e.to_string();
                trials.push(Trial::test(name, move || Err(Failed::from(message))));
                continue;
            }
        };
        for backend in test.backends.clone() {
            let test = test.clone();
            let trial_name = format!("{name}::{backend}");
            trials.push(Trial::ignorable_test(trial_name, move || {
                // built-in backends, and the buggy:BUG@COMPUTATION test wrappers
                let b = match xla_props::isolate::testing::create(&backend) {
                    Ok(b) => b,
                    Err(e) => return Ok(Completion::ignored_with(e.to_string())),
                };
                match run_file_on(&test, b.as_ref()) {
                    TrialResult::Pass | TrialResult::Blessed => Ok(Completion::Completed),
                    TrialResult::Fail(m) => Err(Failed::from(m)),
                }
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
