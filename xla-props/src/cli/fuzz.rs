//! `xla-props fuzz`: random well-typed programs with legal inputs, judged
//! against the reference; one minimized `.hlotest` per failure signature.

use std::io::Write;
use std::time::Duration;

use super::args::{BackendArgs, OutDirArgs};
use super::CliError;
use crate::fuzz::{fuzz, FuzzOptions};
use crate::runner::Shard;

/// Arguments of `xla-props fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    /// The backend under test.
    #[command(flatten)]
    pub tested: BackendArgs,
    /// How long to run, in seconds.
    #[arg(long)]
    pub time: u64,
    /// The run seed (program `i` is grown from a seed derived from it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where the results go.
    #[command(flatten)]
    pub output: OutDirArgs,
    /// At most this many steps per program.
    #[arg(long, default_value_t = 8)]
    pub max_ops: usize,
    /// Stop after this many programs (whichever of this and `--time` comes first).
    #[arg(long)]
    pub programs: Option<u64>,
    /// Stop at the first failure (for detection measurements).
    #[arg(long)]
    pub stop_at_first_failure: bool,
    /// Run part K of N of the campaign (1-based): programs K-1, K-1+N, ...
    /// of the run, so N machines never grow the same program; their
    /// reproducers can share one `--out` directory. Else taken from
    /// `XLA_PROPS_SHARD`, Bazel's or a Kubernetes Indexed Job's variables,
    /// as the test runner does.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

/// The campaign's part: `--shard`, else the environment's (as the runner reads it).
fn shard(args: &FuzzArgs) -> Result<(u64, u64), CliError> {
    let shard = match &args.shard {
        Some(s) => Some(Shard::parse(s).map_err(|e| CliError::input(format!("--shard: {e}")))?),
        None => Shard::from_env(&|k: &str| std::env::var(k).ok())
            .map_err(|e| CliError::input(format!("xla-props fuzz: {e}")))?,
    };
    Ok(shard.map_or((0, 1), |s| (s.index, s.total)))
}

/// Writes a line; a closed pipe (`| head`) is the reader's choice, not a panic.
fn say(out: &mut dyn Write, line: std::fmt::Arguments<'_>) {
    let _ = out.write_fmt(line).and_then(|()| out.write_all(b"\n"));
}

/// Runs the command; exit 0 when nothing disagreed, 1 when failures were found, 2 on error.
pub fn run(args: &FuzzArgs) -> Result<u8, CliError> {
    let backend = crate::backend::create(&args.tested.backend)
        .map_err(|e| CliError::input(format!("xla-props fuzz: {e}")))?;
    let shard = shard(args)?;
    if shard.1 > 1 {
        eprintln!(
            "fuzz shard {}/{}: programs {}, {}, ... of seed {}'s run",
            shard.0 + 1,
            shard.1,
            shard.0,
            shard.0 + shard.1,
            args.seed
        );
    }
    let options = FuzzOptions {
        shard,
        seed: args.seed,
        max_ops: args.max_ops.max(1),
        max_programs: args.programs,
        stop_at_first_failure: args.stop_at_first_failure,
        ..FuzzOptions::new(Duration::from_secs(args.time), &args.output.out)
    };
    let report = fuzz(backend.as_ref(), &args.tested.backend, &options, &mut |p| {
        say(&mut std::io::stderr(), format_args!("{p}"))
    })
    .map_err(|e| CliError::input(format!("xla-props fuzz: {e}")))?;
    let mut out = std::io::stdout().lock();
    for (signature, path) in &report.found {
        say(&mut out, format_args!("{signature}: {}", path.display()));
    }
    if let (Some(t), Some(n)) = (report.first_failure, report.first_failure_program) {
        say(
            &mut out,
            format_args!("first failure: program {n}, after {:.3} s", t.as_secs_f64()),
        );
    }
    say(&mut out, format_args!("{}", report.progress));
    let _ = out.flush();
    Ok(if report.progress.failures == 0 { 0 } else { 1 })
}
