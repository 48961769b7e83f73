//! The runner fixture: a harness over the fixture properties only, with a
//! buggy backend on purpose. tests/runner.rs drives it with
//! `XLA_PROPS_FIXTURE=1`; run by `cargo test` or nextest without that
//! variable it has no tests (its failures are the point, not a regression).

mod support;

fn main() -> std::process::ExitCode {
    if std::env::var_os("XLA_PROPS_FIXTURE").is_none() {
        let args = libtest_mimic::Arguments::from_args();
        return libtest_mimic::run(&args, Vec::new()).exit_code();
    }
    support::harness(std::env::args()).run()
}
