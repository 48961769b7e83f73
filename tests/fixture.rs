//! The runner fixture: a harness over the fixture properties only (driven by tests/runner.rs).

mod support;

fn main() -> std::process::ExitCode {
    support::harness(std::env::args()).run()
}
