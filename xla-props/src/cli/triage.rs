//! `xla-props triage INPUT... --backend B --out DIR`: from many failures to a few bugs.

use std::io::Write;
use std::path::PathBuf;

use super::args::{BackendArgs, OutDirArgs, SeedArgs};
use super::CliError;
use crate::triage::{collect, triage, TriageOptions};

/// Arguments of `xla-props triage`.
#[derive(clap::Args, Debug)]
pub struct TriageArgs {
    /// Reproducers (`.hlotest`), a run's `--json` results (its failed cases
    /// on the backend, through the reproducers the runner wrote), plain
    /// modules (`.hlo`, `.mlir`), or directories holding them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The backend under test.
    #[command(flatten)]
    pub tested: BackendArgs,
    /// Where the results go.
    #[command(flatten)]
    pub output: OutDirArgs,
    /// The seed of generated inputs.
    #[command(flatten)]
    pub generated: SeedArgs,
    /// Do not bisect the compiler's passes (done by default where the
    /// backend can disable them, as XLA's).
    #[arg(long)]
    pub no_bisect_passes: bool,
    /// Failures analysed at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
}

fn say(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(line).and_then(|()| out.write_all(b"\n"));
}

/// Runs the command: exit 0 when no group was found (nothing fails, or
/// nothing could be analysed), 1 when groups were found, 2 on bad input.
pub(crate) fn run(args: &TriageArgs) -> Result<u8, CliError> {
    let backend = crate::backend::create(&args.tested.backend)
        .map_err(|e| CliError::input(format!("xla-props triage: {e}")))?;
    let (failures, not_triaged) = collect(&args.inputs, backend.name())
        .map_err(|e| CliError::input(format!("xla-props triage: {e}")))?;
    let options = TriageOptions {
        seed: args.generated.seed,
        bisect_passes: !args.no_bisect_passes,
        work_dir: args.output.out.join("passes-dump"),
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let inputs: Vec<String> = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let quiet = args.quiet;
    let progress = move |done: usize, total: usize| {
        if !quiet {
            eprint!("\rtriage: {done}/{total} analysed");
            if done == total {
                eprintln!();
            }
        }
    };
    let t = triage(
        &failures,
        not_triaged,
        backend.as_ref(),
        &inputs,
        &options,
        &args.output.out,
        &progress,
    )
    .map_err(|e| {
        CliError::input(format!(
            "cannot write to {}: {e}",
            args.output.out.display()
        ))
    })?;
    say(format_args!(
        "{} failures: {} in {} group(s), {} in none, {} not triaged",
        t.failures,
        t.grouped,
        t.groups.len(),
        t.ungrouped.len(),
        t.not_triaged.len()
    ));
    for g in &t.groups {
        let rep = if g.representative.is_empty() {
            "no member isolated".to_string()
        } else {
            format!(
                "{} ({} instructions)",
                args.output.out.join(&g.representative).display(),
                g.representative_instructions
            )
        };
        say(format_args!(
            "{}: {} failures: {} -> {rep}",
            g.id, g.count, g.title
        ));
    }
    say(format_args!(
        "report: {}",
        args.output.out.join("triage.md").display()
    ));
    Ok(if t.groups.is_empty() { 0 } else { 1 })
}
