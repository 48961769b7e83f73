//! `xla-props check FILE.mlir [--backend B]`: runs every argument-free public
//! function of every module in the file and reports each check op.
//!
//! Exit 0 when every check holds, 1 when one fails, 2 when the file cannot
//! be read or a program cannot run (unsupported op, backend error) and none failed.

use std::path::PathBuf;

use super::CliError;
use crate::backend::create;
use crate::filetest::stablehlo_checks::{run_check_program, ProgramOutcome};

/// Arguments of `xla-props check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The StableHLO MLIR file (`.mlir`; `// -----` separates modules).
    pub file: PathBuf,
    /// The backend to run on (see `xla-props backends`).
    #[arg(long, default_value = "reference")]
    pub backend: String,
}

/// Runs the command; returns the exit code.
pub fn run(args: &CheckArgs) -> Result<u8, CliError> {
    let file = args.file.display().to_string();
    let bytes = std::fs::read(&args.file)
        .map_err(|e| CliError::input(format!("{file}: cannot read: {e}")))?;
    let programs = crate::hlo::load_check_programs(&file, &bytes)
        .map_err(|e| CliError::input(e.to_string()))?;
    let backend = create(&args.backend).map_err(|e| CliError::input(e.to_string()))?;
    let (mut passed, mut failed, mut errors) = (0usize, 0usize, 0usize);
    for p in &programs {
        match run_check_program(backend.as_ref(), p) {
            ProgramOutcome::Ran(results) => {
                for r in results {
                    let s = &r.spec;
                    let at = format!(
                        "{file}:{}:{}: @{} check.{}",
                        s.line,
                        s.col,
                        p.function,
                        s.kind.name()
                    );
                    match r.verdict {
                        Ok(pass) => {
                            passed += 1;
                            println!(
                                "{at}: ok (max {} ULP, max abs {:e})",
                                pass.max_ulp, pass.max_abs
                            );
                        }
                        Err(f) => {
                            failed += 1;
                            let where_ = f
                                .index
                                .map_or("shape".to_string(), |i| format!("element {i}"));
                            println!(
                                "{at}: FAILED at {where_}: saw {}, expected {} ({}); {} elements fail",
                                f.seen, f.expected, f.distance, f.failing
                            );
                        }
                    }
                }
            }
            ProgramOutcome::Unsupported(what) => {
                errors += 1;
                println!(
                    "{file}: @{}: unsupported on {}: {what}",
                    p.function, args.backend
                );
            }
            ProgramOutcome::Error(e) => {
                errors += 1;
                println!("{file}: @{}: error on {}: {e}", p.function, args.backend);
            }
        }
    }
    println!(
        "{passed} passed, {failed} failed, {errors} not run ({} functions)",
        programs.len()
    );
    Ok(if failed > 0 {
        1
    } else if errors > 0 {
        2
    } else {
        0
    })
}
