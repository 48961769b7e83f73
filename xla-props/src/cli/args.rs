//! The argument groups the commands share, each flag declared once and
//! flattened (`#[command(flatten)]`) into every command that takes it: the
//! module, the backend, where the inputs come from (`--arg`, `--seed`,
//! `--distribution`, `--strict-rounding`, `--reference`) and the outputs
//! (`--out`, `--output-sharding`).

use std::path::PathBuf;

use super::CliError;
use crate::filetest::{HloTest, Inputs};
use crate::hlo::Module;
use crate::literal::Literal;

/// The module a command reads.
#[derive(clap::Args, Debug, Clone)]
pub struct ModuleArgs {
    /// The module: HLO text (`.hlo`, or a `.hlotest` reproducer) or StableHLO (`.mlir`).
    pub file: PathBuf,
}

impl ModuleArgs {
    /// The file's name, as messages show it.
    pub fn name(&self) -> String {
        self.file.display().to_string()
    }

    /// Reads, parses and verifies the module.
    pub fn load(&self) -> Result<Module, CliError> {
        crate::hlo::load_module_file(&self.file).map_err(|e| CliError::input(e.to_string()))
    }

    /// The arguments the file brings: a `.hlotest` reproducer's pinned
    /// inputs (`inputs=inline`, its `// arg:` lines, or `inputs=npy:...`,
    /// files beside it), so that a reproducer replays on its own inputs
    /// whatever the generator draws. None for any other file, and for a
    /// reproducer whose inputs are generated (`inputs=seed:N`). A file with
    /// a `// run:` line must read as a `.hlotest` (its error is located).
    pub fn own_arguments(&self) -> Result<Option<Vec<Literal>>, CliError> {
        if self.file.extension().is_none_or(|e| e != "hlotest") {
            return Ok(None);
        }
        let test = match HloTest::load(&self.file) {
            Ok(t) => t,
            Err(e) => {
                let text = std::fs::read_to_string(&self.file).unwrap_or_default();
                let is_test = text.lines().any(|l| {
                    l.trim_start()
                        .trim_start_matches('/')
                        .trim()
                        .starts_with("run:")
                });
                return if is_test {
                    Err(CliError::input(e.to_string()))
                } else {
                    Ok(None)
                };
            }
        };
        match test.inputs {
            Inputs::Seed(_) => Ok(None),
            Inputs::Inline | Inputs::Files(_) => test
                .arguments()
                .map(Some)
                .map_err(|e| CliError::input(format!("{}: {e}", self.name()))),
        }
    }
}

/// The module a command reads, or the suite case it replays (`compare`).
#[derive(clap::Args, Debug, Clone)]
pub struct ModuleOrCaseArgs {
    /// The module: HLO text (`.hlo`, or a `.hlotest` reproducer) or StableHLO (`.mlir`).
    #[arg(required_unless_present = "case", conflicts_with = "case")]
    pub file: Option<PathBuf>,
    /// A suite case to replay exactly, by its name as the suite lists and
    /// reports it (`property::op::dtype::shape::distribution::backend`): the
    /// case's module, its inputs (from `--seed`, the suite's run seed), the
    /// case's backend (unless `--backend`) and the suite's verdict.
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,
}

impl ModuleOrCaseArgs {
    /// The module file, when no case is named.
    pub fn module(&self) -> Option<ModuleArgs> {
        self.file.clone().map(|file| ModuleArgs { file })
    }
}

/// The backend under test, optional where a `--case` names it.
#[derive(clap::Args, Debug, Clone)]
pub struct CaseBackendArgs {
    /// The backend under test (see `xla-props backends`); with `--case`, the case's by default.
    #[arg(long, required_unless_present = "case")]
    pub backend: Option<String>,
}

/// The backend under test.
#[derive(clap::Args, Debug, Clone)]
pub struct BackendArgs {
    /// The backend under test (see `xla-props backends`).
    #[arg(long)]
    pub backend: String,
}

/// What the backend is judged against.
#[derive(clap::Args, Debug, Clone)]
pub struct ReferenceArgs {
    /// Where expected results come from: `reference` (the exact evaluator) or a backend name.
    #[arg(long, default_value = "reference")]
    pub reference: String,
}

/// The seed of generated inputs.
#[derive(clap::Args, Debug, Clone)]
pub struct SeedArgs {
    /// Seed of the generated inputs (argument files and reproducers bring their own).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Argument files, instead of generated inputs.
#[derive(clap::Args, Debug, Clone)]
pub struct ArgFilesArgs {
    /// An argument file per entry parameter, in order: `.npy`, or raw
    /// little-endian bytes in the parameter's type, row-major. Without any,
    /// legal inputs are generated.
    #[arg(long = "arg", value_name = "PATH")]
    pub args: Vec<PathBuf>,
}

/// A module run on the backend under test, on argument files or generated
/// inputs (`eval`, `bisect-passes`): the file, `--backend`, `--arg`, `--seed`.
#[derive(clap::Args, Debug, Clone)]
pub struct ModuleRunArgs {
    /// The module.
    #[command(flatten)]
    pub module: ModuleArgs,
    /// The backend under test.
    #[command(flatten)]
    pub tested: BackendArgs,
    /// Argument files instead of generated inputs.
    #[command(flatten)]
    pub arg_files: ArgFilesArgs,
    /// The seed of generated inputs.
    #[command(flatten)]
    pub generated: SeedArgs,
}

/// How generated inputs are drawn, and how strictly the result is judged.
#[derive(clap::Args, Debug, Clone)]
pub struct JudgingArgs {
    /// Input distribution: uniform, special, mixed, log-uniform, edge,
    /// int-edge, duplicates, out-of-range-indices, exhaustive.
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// The program must round exactly as written (no excess precision accepted).
    #[arg(long)]
    pub strict_rounding: bool,
}

impl JudgingArgs {
    /// The distribution, parsed (`command` names the command in the error).
    pub fn distribution(&self, command: &str) -> Result<crate::inputs::Distribution, CliError> {
        self.distribution
            .parse()
            .map_err(|e| CliError::input(format!("xla-props {command}: {e}")))
    }
}

/// The directory a command writes its results into.
#[derive(clap::Args, Debug, Clone)]
pub struct OutDirArgs {
    /// The directory to write the command's reproducers and reports into.
    #[arg(long)]
    pub out: PathBuf,
}

/// How a multi-device module's outputs are put together.
#[derive(clap::Args, Debug, Clone)]
pub struct OutputShardingArgs {
    /// A multi-device module's output sharding, one per output (e.g.
    /// `{devices=[4,1]<=[4]}`): the outputs are put together by it. Without
    /// it, the root's `sharding=`, else each output stacks the devices'.
    #[arg(long = "output-sharding", value_name = "SHARDING")]
    pub output_shardings: Vec<String>,
}
