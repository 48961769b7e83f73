//! The `xla-props` command-line tool.

fn main() -> std::process::ExitCode {
    eprintln!("xla-props: no commands yet");
    std::process::ExitCode::from(2)
}
