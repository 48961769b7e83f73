//! `xla-props bisect-passes FILE --backend B [--arg PATH]... [--out DIR]`:
//! which of the compiler's passes introduced a disagreement.

use std::path::{Path, PathBuf};

use super::args::{JudgingArgs, ModuleRunArgs};
use super::CliError;
use crate::hlo::Module;
use crate::inputs::generate_inputs;
use crate::isolate::{bisect_passes, PassBisectOptions, PassBisection, PassVerdict, MAX_PROBES};
use crate::literal::Literal;

/// Arguments of `xla-props bisect-passes`.
#[derive(clap::Args, Debug)]
pub struct BisectArgs {
    /// The module, the backend and the inputs.
    #[command(flatten)]
    pub run: ModuleRunArgs,
    /// How inputs are drawn and the result judged.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// At most this many probes (each one compile).
    #[arg(long, default_value_t = MAX_PROBES)]
    pub max_probes: usize,
    /// Where to write report.md, report.json and the compiler's dump
    /// (default: `target/xla-props/bisect-passes/<file stem>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn inputs(module: &Module, args: &BisectArgs, file: &str) -> Result<Vec<Literal>, CliError> {
    if !args.run.arg_files.args.is_empty() {
        return super::read_arguments(module, &args.run.arg_files.args);
    }
    if let Some(own) = args.run.module.own_arguments()? {
        return Ok(own);
    }
    let distribution = args.judging.distribution("bisect-passes")?;
    Ok(
        generate_inputs(module, distribution, args.run.generated.seed)
            .map_err(|e| CliError::input(format!("{file}: failed to generate inputs: {e}")))?
            .args,
    )
}

/// Runs the command: exit 0 when passes are named, 1 when the disagreement
/// is not a pass's (or no conclusion), 2 on an error or when it agrees.
pub(crate) fn run(args: &BisectArgs) -> Result<u8, CliError> {
    let file = args.run.module.name();
    let module = args.run.module.load()?;
    let backend = crate::backend::create(&args.run.tested.backend)
        .map_err(|e| CliError::input(e.to_string()))?;
    let literals = inputs(&module, args, &file)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args.run.module.file.file_stem().unwrap_or_default();
        Path::new("target/xla-props/bisect-passes").join(stem)
    });
    let options = PassBisectOptions {
        strict_rounding: args.judging.strict_rounding,
        max_probes: args.max_probes,
        dump_dir: out.join("dump"),
    };
    let b = bisect_passes(&module, &literals, backend.as_ref(), &options)
        .map_err(|e| CliError::input(format!("{file}: {e}")))?;
    write_report(&b, &file, &out)?;
    print_summary(&b, &file, &out);
    Ok(match b.verdict {
        PassVerdict::Culprits(_) | PassVerdict::EachSuffices(_) => 0,
        PassVerdict::Agrees => 2,
        PassVerdict::NotAPass | PassVerdict::Inconclusive(_) => 1,
    })
}

fn write_report(b: &PassBisection, file: &str, out: &Path) -> Result<(), CliError> {
    let cannot =
        |e: std::io::Error| CliError::input(format!("cannot write to {}: {e}", out.display()));
    std::fs::create_dir_all(out).map_err(cannot)?;
    std::fs::write(out.join("report.md"), b.to_markdown(file)).map_err(cannot)?;
    let json = serde_json::to_string_pretty(b)
        .map_err(|e| CliError::input(format!("cannot encode json: {e}")))?;
    std::fs::write(out.join("report.json"), json + "\n").map_err(cannot)
}

/// The passes, the probes, the conclusion and the culprit's diff.
pub(crate) fn print_summary(b: &PassBisection, file: &str, out: &Path) {
    say!(
        "{file}: {} passes changed the module on `{}` ({} steps): {}",
        b.candidates.len(),
        b.backend,
        b.steps.iter().filter(|s| s.is_pass()).count(),
        b.candidates.join(", ")
    );
    for l in b.probe_lines() {
        say!("  {l}");
    }
    say!("{}", b.conclusion());
    for c in &b.culprit_hlo {
        say!(
            "hlo before and after `{}`, change {} of {} (pipeline `{}`; {} and {}):",
            c.pass,
            c.change,
            c.times_changed,
            c.pipeline,
            c.before_file.display(),
            c.after_file.display()
        );
        say!("{}", c.diff.trim_end());
    }
    say!("report: {}", out.join("report.md").display());
}
