//! `xla-props isolate FILE --backend B [--reference R] [--seed S] --out DIR [--quiet]`

use super::args::{BackendArgs, ModuleArgs, OutDirArgs, ReferenceArgs, SeedArgs};
use super::CliError;
use crate::backend::Backend;
use crate::filetest::write_isolation_results;
use crate::isolate::{isolate, isolate_on, IsolateError, Isolation, Options, Oracle};

/// Arguments of `xla-props isolate`.
#[derive(clap::Args, Debug)]
pub struct IsolateArgs {
    /// The module.
    #[command(flatten)]
    pub module: ModuleArgs,
    /// The backend under test.
    #[command(flatten)]
    pub tested: BackendArgs,
    /// What the backend is judged against.
    #[command(flatten)]
    pub oracle: ReferenceArgs,
    /// The seed of generated inputs.
    #[command(flatten)]
    pub generated: SeedArgs,
    /// Where the results go.
    #[command(flatten)]
    pub output: OutDirArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Do not bisect the compiler's passes (done by default when the backend
    /// can disable them, as XLA's: `DIR/passes.md`, `DIR/passes.json`).
    #[arg(long)]
    pub no_bisect_passes: bool,
}

pub(crate) fn run_isolate(args: &IsolateArgs) -> Result<u8, CliError> {
    let file = args.module.name();
    let module = args.module.load()?;
    let backend =
        crate::backend::create(&args.tested.backend).map_err(|e| CliError::input(e.to_string()))?;
    let oracle = if args.oracle.reference == "reference" {
        Oracle::Exact
    } else {
        Oracle::Backend(
            crate::backend::create(&args.oracle.reference)
                .map_err(|e| CliError::input(e.to_string()))?,
        )
    };
    let options = Options {
        seed: args.generated.seed,
        progress: !args.quiet,
        ..Options::default()
    };
    // a reproducer replays on its own inputs
    let own = args.module.own_arguments()?;
    let outcome = match &own {
        Some(a) => isolate_on(&module, a, backend.as_ref(), &oracle, &options),
        None => isolate(&module, backend.as_ref(), &oracle, &options),
    };
    let outcome = outcome.map_err(|e| match e {
        IsolateError::Unsupported(why) => CliError::input(format!("{file}: {why}")),
        other => CliError::input(format!("{file}: {other}")),
    })?;
    match outcome {
        Isolation::Agree { verdict, .. } => {
            let line = format!(
                "`{}` agrees with `{}`: {verdict}; nothing to isolate",
                args.tested.backend,
                oracle.name()
            );
            write_plain_report(&args.output.out, &file, &line, None)?;
            say!("{file}: {line}");
            Ok(0)
        }
        Isolation::Amplified {
            verdict,
            certificate,
            ..
        } => {
            let first = verdict.lines().next().unwrap_or_default();
            let line = format!(
                "`{}` departs from every bound of `{}` ({first}), but no instruction departs on its own: {certificate}",
                args.tested.backend,
                oracle.name()
            );
            write_plain_report(&args.output.out, &file, &line, Some(&certificate))?;
            say!("{file}: {line}");
            Ok(0)
        }
        Isolation::Isolated(mut iso) => {
            let path = write_isolation_results(&mut iso, &args.output.out, &[]).map_err(|e| {
                CliError::input(format!(
                    "cannot write to {}: {e}",
                    args.output.out.display()
                ))
            })?;
            let r = &iso.report;
            // the first line of the verdict; report.md has all of it
            let summary = r.verdict.lines().next().unwrap_or_default();
            if r.output_agrees {
                say!(
                    "{file}: the output of `{}` agrees with `{}` ({summary}), but {} top-level instruction(s) disagree on the reference's values of their operands: the bug is masked downstream",
                    r.backend,
                    r.reference,
                    r.local_disagreements.len()
                );
            } else {
                say!(
                    "{file}: `{}` disagrees with `{}`: {summary}",
                    r.backend,
                    r.reference
                );
            }
            for d in &r.local_disagreements {
                say!("  local disagreement: {}", describe(d));
            }
            if let Some(c) = &r.certificate {
                say!("{c}");
                say!("the smallest region that departs when compiled whole is the reproducer");
            }
            match &r.culprit.fusion {
                Some(f) => say!(
                    "culprit: fusion `{f}` (computation `{}`), first diverging instruction `{}` ({})",
                    r.culprit.computation, r.culprit.instruction, r.culprit.opcode
                ),
                None => say!(
                    "culprit: instruction `{}` ({}) in computation `{}`",
                    r.culprit.instruction, r.culprit.opcode, r.culprit.computation
                ),
            }
            say!(
                "local: {}; vanishes when the fusion is split: {}",
                r.local,
                r.vanishes_when_split
            );
            say!(
                "reproducer: {} ({} instructions); {} backend runs in {:.2} s",
                path.display(),
                r.reproducer_instructions,
                r.backend_runs,
                r.seconds
            );
            if !args.no_bisect_passes && backend.pass_control().is_some() {
                culprit_pass(&module, backend.as_ref(), args, &file)?;
            }
            Ok(1)
        }
    }
}

/// `DIR/report.md` and `DIR/report.json` when there is nothing to
/// isolate (the output agrees, or its departure is amplified): an
/// isolation always leaves its report.
fn write_plain_report(
    dir: &std::path::Path,
    file: &str,
    line: &str,
    certificate: Option<&crate::isolate::Certificate>,
) -> Result<(), CliError> {
    let cannot =
        |e: std::io::Error| CliError::input(format!("cannot write to {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let json = serde_json::json!({
        "module": file,
        "conclusion": line,
        "certificate": certificate,
    });
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| CliError::input(format!("cannot encode json: {e}")))?;
    std::fs::write(dir.join("report.json"), text + "\n").map_err(cannot)?;
    std::fs::write(
        dir.join("report.md"),
        format!("# isolation of `{file}`\n\n{line}\n"),
    )
    .map_err(cannot)
}

/// The pass that introduced the disagreement, on the same inputs:
/// `DIR/passes.md` and `DIR/passes.json`, and its conclusion printed.
fn culprit_pass(
    module: &crate::hlo::Module,
    backend: &dyn Backend,
    args: &IsolateArgs,
    file: &str,
) -> Result<(), CliError> {
    let inputs = match args.module.own_arguments()? {
        Some(own) => own,
        None => {
            crate::inputs::generate_inputs(
                module,
                Options::default().distribution,
                args.generated.seed,
            )
            .map_err(|e| CliError::input(format!("{file}: failed to generate inputs: {e}")))?
            .args
        }
    };
    let options = crate::isolate::PassBisectOptions {
        strict_rounding: false,
        max_probes: crate::isolate::MAX_PROBES,
        dump_dir: args.output.out.join("passes-dump"),
    };
    let b = crate::isolate::bisect_passes(module, &inputs, backend, &options)
        .map_err(|e| CliError::input(format!("{file}: bisecting passes: {e}")))?;
    let cannot = |e: std::io::Error| {
        CliError::input(format!(
            "cannot write to {}: {e}",
            args.output.out.display()
        ))
    };
    std::fs::write(args.output.out.join("passes.md"), b.to_markdown(file)).map_err(cannot)?;
    let json = serde_json::to_string_pretty(&b)
        .map_err(|e| CliError::input(format!("cannot encode json: {e}")))?;
    std::fs::write(args.output.out.join("passes.json"), json + "\n").map_err(cannot)?;
    say!(
        "passes: {} ({} probes; {})",
        b.conclusion(),
        b.probes.len(),
        args.output.out.join("passes.md").display()
    );
    Ok(())
}

/// One local disagreement in a line: the top-level instruction, and inside a
/// fusion the first diverging instruction with its operands.
pub(crate) fn describe(d: &crate::isolate::LocalDisagreement) -> String {
    let at = &d.location;
    match &at.fusion {
        Some(f) => format!(
            "fusion `{f}` (computation `{}`): `{}` ({}) of {} [{}]",
            at.computation,
            at.instruction,
            at.opcode,
            if at.operands.is_empty() {
                "no operands".to_string()
            } else {
                at.operands.join(", ")
            },
            d.mismatch
        ),
        None => format!("`{}` ({}) [{}]", at.instruction, at.opcode, d.mismatch),
    }
}
