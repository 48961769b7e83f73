//! The conformance suite: every built-in property on the reference and the
//! interpreter, plus any other backend of the registry that is available here.
//!
//! `cargo test --release --test conformance` runs it; every libtest flag
//! works, plus `--op`, `--dtype`, `--backend`, `--shard K/N`, `--seed`,
//! `--junit`, `--json` and `--summary` (see the README).

use xla_props::backend::Interpreter;
use xla_props::backend::ReferenceBackend;

fn main() -> std::process::ExitCode {
    xla_props::Harness::from_args()
        .with_builtins()
        .backend(ReferenceBackend::default())
        .backend(Interpreter::default())
        .available_backends()
        .run()
}
