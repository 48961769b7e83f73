//! `xla-props fuzz`: random well-typed programs with legal inputs, judged
//! against the reference; one minimized `.hlotest` per failure signature.

use std::path::PathBuf;
use std::time::Duration;

use super::CliError;
use crate::programs::{fuzz, FuzzOptions};

/// Arguments of `xla-props fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    /// The backend under test.
    #[arg(long)]
    pub backend: String,
    /// How long to run, in seconds.
    #[arg(long)]
    pub time: u64,
    /// The run seed (program `i` is grown from a seed derived from it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where reproducers are written.
    #[arg(long)]
    pub out: PathBuf,
    /// At most this many steps per program.
    #[arg(long, default_value_t = 8)]
    pub max_ops: usize,
}

/// Runs the command; exit 0 when nothing disagreed, 1 when failures were found, 2 on error.
pub fn run(args: &FuzzArgs) -> Result<u8, CliError> {
    let backend = crate::backend::create(&args.backend)
        .map_err(|e| CliError::input(format!("xla-props fuzz: {e}")))?;
    let options = FuzzOptions {
        seed: args.seed,
        max_ops: args.max_ops.max(1),
        ..FuzzOptions::new(Duration::from_secs(args.time), &args.out)
    };
    let report = fuzz(backend.as_ref(), &args.backend, &options, &mut |p| {
        eprintln!("{p}")
    })
    .map_err(|e| CliError::input(format!("xla-props fuzz: {e}")))?;
    for (signature, path) in &report.found {
        println!("{signature}: {}", path.display());
    }
    println!("{}", report.progress);
    Ok(if report.progress.failures == 0 { 0 } else { 1 })
}
