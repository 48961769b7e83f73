//! The `xla-props` command-line tool (see `xla_props::cli`).

fn main() -> std::process::ExitCode {
    // Hidden worker mode for the XLA backend's crash-isolated PJRT process.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = xla_props::backend::xla::worker::main_if_worker(&args) {
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if let Some(code) = xla_props::backend::iree::compile_worker::main_if_compile_worker(&args) {
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    xla_props::cli::main()
}
