//! `xla-props merge`: a sharded run's `--json` results (or JUnit files) back
//! into the run's, checked to be one run and to cover it exactly.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::runner::{merge_junit_files, merge_results, read_results, MergeOptions};

/// Arguments of `xla-props merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shards' `--json` results, or their JUnit XML files (`--junit`, or all named `*.xml`).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged run.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// The shard files are JUnit XML (the default when every one ends in `.xml`).
    #[arg(long)]
    pub junit: bool,
    /// Merge shards of different seeds, git revisions or backend versions
    /// (the merged metadata lists them under `mixed`).
    #[arg(long)]
    pub allow_mixed: bool,
}

fn is_xml(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml"))
}

/// Merges `shards` (the `--json` results of one run) as `report` and `merge` do.
pub(super) fn merged_results(
    shards: &[PathBuf],
    allow_mixed: bool,
) -> Result<crate::report::RunResults, CliError> {
    let docs = read_results(shards).map_err(|e| CliError::input(e.0))?;
    merge_results(docs, MergeOptions { allow_mixed }).map_err(|e| CliError::input(e.0))
}

/// Runs the command: exit 0 merged, 2 the shards are not one run, do not
/// cover it exactly, or cannot be read.
pub fn run(args: &MergeArgs) -> Result<u8, CliError> {
    let xml = args.shards.iter().filter(|p| is_xml(p)).count();
    let junit = args.junit || xml == args.shards.len();
    if !args.junit && xml > 0 && !junit {
        return Err(CliError::input(
            "xla-props merge: some files are JUnit XML (*.xml) and some are not; merge each kind on its own",
        ));
    }
    let options = MergeOptions {
        allow_mixed: args.allow_mixed,
    };
    let text = if junit {
        merge_junit_files(&args.shards, options).map_err(|e| CliError::input(e.0))?
    } else {
        let merged = merged_results(&args.shards, args.allow_mixed)?;
        serde_json::to_string(&merged)
            .map_err(|e| CliError::input(format!("xla-props merge: {e}")))?
    };
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("failed to create {}: {e}", dir.display())))?;
    }
    std::fs::write(&args.out, text)
        .map_err(|e| CliError::input(format!("failed to write {}: {e}", args.out.display())))?;
    eprintln!(
        "merged {} shard file(s) into {}",
        args.shards.len(),
        args.out.display()
    );
    Ok(0)
}
