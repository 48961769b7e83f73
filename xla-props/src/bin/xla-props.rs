//! The `xla-props` command-line tool (see `xla_props::cli`).

fn main() -> std::process::ExitCode {
    xla_props::cli::main()
}
