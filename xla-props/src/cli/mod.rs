//! The `xla-props` command line: argument parsing only; the work is in the library.
//!
//! Exit codes: 0 success (or agreement), 1 disagreement, 2 error (bad input,
//! unknown backend, missing plugin), 3 (`compare`) the backend rejected or
//! crashed on a module the reference runs.

#[macro_use]
mod say;

mod args;
mod backends;
mod bisect;
mod check;
mod compare;
mod deep;
mod eval;
mod fuzz;
mod isolate;
mod merge;
mod triage;

pub use args::{
    ArgFilesArgs, BackendArgs, CaseBackendArgs, JudgingArgs, ModuleArgs, ModuleOrCaseArgs,
    ModuleRunArgs, OutDirArgs, OutputShardingArgs, ReferenceArgs, SeedArgs,
};
pub use backends::backends_listing;
pub use bisect::BisectArgs;
pub use check::CheckArgs;
pub use compare::{exit_code, judge_compare, CompareArgs};
pub use eval::{eval_module, read_arguments, summarize, EvalArgs};
pub use fuzz::FuzzArgs;
pub use isolate::IsolateArgs;
pub use merge::MergeArgs;
pub use triage::TriageArgs;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// A failure to report to the user: one line, and an exit code.
#[derive(Debug)]
pub struct CliError {
    /// The message (may span lines when it quotes source with a caret).
    pub message: String,
    /// The process exit code.
    pub code: u8,
}

impl CliError {
    /// A usage or input error (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 2,
        }
    }
}

/// Property tests for XLA-like tensor compilers.
#[derive(Parser, Debug)]
#[command(name = "xla-props", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse an HLO (`.hlo`) or StableHLO (`.mlir`) file; print it as canonical HLO text or StableHLO.
    Parse(ParseArgs),
    /// Generate legal inputs, run the reference and a backend, judge with the tolerance model;
    /// exit 0 agree, 1 the values disagree, 2 error or not judged, 3 the backend rejected or
    /// crashed on the module (compile error, crash, timeout).
    Compare(CompareArgs),
    /// Run an HLO module on a backend with given arguments; write or summarize the outputs.
    Eval(EvalArgs),
    /// List the backends this build knows and whether each is available.
    Backends(BackendsArgs),
    /// Run a StableHLO file's own check ops; exit 0 all pass, 1 a check fails, 2 error.
    Check(CheckArgs),
    /// Grow random programs, judge a backend against the reference, write minimized reproducers.
    Fuzz(FuzzArgs),
    /// Render a run's `--json` results as one self-contained HTML page (several shards' results are merged first).
    Report(ReportArgs),
    /// From a disagreeing module down to the culprit fusion and instruction; writes a reproducer and a report.
    Isolate(IsolateArgs),
    /// Which compiler pass introduced a disagreement: bisects XLA's HLO passes (`xla_disable_hlo_passes`), one compile per probe.
    BisectPasses(BisectArgs),
    /// Merge a sharded run's `--json` results (or JUnit files) into the run's; refuses shards of different runs, missing or duplicated cases.
    Merge(MergeArgs),
    /// From many failures to a few bugs: isolates each (reproducers, a run's failed cases,
    /// modules), groups them by root cause, writes one minimized reproducer per group.
    Triage(TriageArgs),
}

/// Arguments of `xla-props backends`.
#[derive(clap::Args, Debug)]
pub struct BackendsArgs {
    /// Also each backend's version: a plugin's own attributes (PJRT API,
    /// StableHLO), the XLA revision recorded with its pin, its file and sha256.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Arguments of `xla-props parse`.
#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// The module.
    #[command(flatten)]
    pub module: ModuleArgs,
    /// What to print: `hlo` (canonical HLO text) or `stablehlo` (MLIR text).
    #[arg(long, default_value = "hlo", value_parser = ["hlo", "stablehlo"])]
    pub emit: String,
}

/// Arguments of `xla-props report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The runner's `--json` output; several (a run's shards) are merged as `xla-props merge` does.
    #[arg(required = true)]
    pub results: Vec<std::path::PathBuf>,
    /// Where to write the HTML page.
    #[arg(short = 'o', long = "out", default_value = "report.html")]
    pub out: std::path::PathBuf,
    /// An earlier run's results: marks new failures, fixed cases and changed ULP maxima.
    #[arg(long)]
    pub compare: Option<std::path::PathBuf>,
    /// An isolation report (`report.json` of `xla-props isolate`) to include; repeatable.
    #[arg(long = "isolation")]
    pub isolations: Vec<std::path::PathBuf>,
    /// With several results: merge shards of different seeds, revisions or backend versions.
    #[arg(long)]
    pub allow_mixed: bool,
    /// A triage (`triage.json` of `xla-props triage`): each failure links to its group.
    #[arg(long)]
    pub triage: Option<std::path::PathBuf>,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parse(args) => run_parse(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Eval(args) => eval::run_eval(&args),
        Command::Backends(args) => backends::run_backends(&args),
        Command::Check(args) => check::run(&args),
        Command::Fuzz(args) => fuzz::run(&args),
        Command::Report(args) => run_report(&args),
        Command::Isolate(args) => isolate::run_isolate(&args),
        Command::BisectPasses(args) => bisect::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Triage(args) => triage::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("{}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// `xla-props report`: one results file as it is; several merged first.
fn run_report(args: &ReportArgs) -> Result<u8, CliError> {
    let (run, name) = match args.results.as_slice() {
        [one] => (
            crate::report::RunResults::load(one),
            one.display().to_string(),
        ),
        many => {
            let merged = merge::merged_results(many, args.allow_mixed)?;
            let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            let name = format!("{} shards merged: {}", many.len(), names.join(", "));
            (Ok(merged), name)
        }
    };
    let run = run.map_err(|e| CliError::input(e.0))?;
    let compare = args.compare.as_deref();
    let triage = args
        .triage
        .as_deref()
        .map(crate::report::TriageLinks::load)
        .transpose()
        .map_err(|e| CliError::input(e.0))?;
    crate::report::write_report_of(run, &name, &args.out, compare, &args.isolations, triage)
        .map(|()| 0)
        .map_err(|e| CliError::input(e.0))
}

/// Sets the entry root's `sharding=` from `--output-sharding` (one per
/// output; several become a tuple sharding). Each is checked.
fn set_output_shardings(module: &mut crate::hlo::Module, texts: &[String]) -> Result<(), CliError> {
    if texts.is_empty() {
        return Ok(());
    }
    for t in texts {
        crate::hlo::sharding::Sharding::parse(t)
            .map_err(|e| CliError::input(format!("--output-sharding: {e}")))?;
    }
    let outputs = module.outputs().len();
    if texts.len() != 1 && texts.len() != outputs {
        return Err(CliError::input(format!(
            "--output-sharding: {} given for {outputs} outputs",
            texts.len()
        )));
    }
    let value = if texts.len() == 1 && outputs == 1 {
        texts[0].clone()
    } else if texts.len() == 1 {
        format!("{{{}}}", vec![texts[0].as_str(); outputs].join(", "))
    } else {
        format!("{{{}}}", texts.join(", "))
    };
    let entry = module.entry;
    let comp = &mut module.computations[entry.index()];
    let root = comp.root.index();
    let attrs = &mut comp.instructions[root].attrs.other;
    attrs.retain(|(k, _)| k != "sharding");
    attrs.push(("sharding".into(), value));
    Ok(())
}

fn run_parse(args: &ParseArgs) -> Result<u8, CliError> {
    let file = args.module.name();
    let module = args.module.load()?;
    let text = if args.emit == "stablehlo" {
        crate::hlo::stablehlo::print_module(&module)
            .map_err(|e| CliError::input(format!("{file}: {e}")))?
    } else {
        module.to_string()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // a closed pipe (`| head`) is the reader's choice, not an error
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::input(format!("{file}: cannot write output: {e}")))
        }
        _ => Ok(0),
    }
}
