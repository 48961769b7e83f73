//! XLA's HLO passes: disabled through `xla_disable_hlo_passes` and dumped
//! through `xla_dump_to` + `xla_dump_hlo_pass_re`, in a worker of their own.
//!
//! XLA reads its debug options from `XLA_FLAGS` when the compile options
//! carry none, and reads the flags once per process; a `DebugOptions` message
//! in the compile options would replace every other option with proto
//! defaults (optimization level 0 among them), so each probe is instead a
//! fresh worker whose `XLA_FLAGS` are the backend's own plus these.

use std::path::{Path, PathBuf};

use super::XlaBackend;
use crate::backend::{Backend, BackendError, Executable, PassControl, PassStep};
use crate::hlo::Module;

/// The XLA flags of one probe: `disabled` passes off, and a dump of every
/// pass that changes the module into `dump`.
pub fn probe_flags(disabled: &[String], dump: Option<&Path>) -> Vec<String> {
    let mut flags = Vec::new();
    if !disabled.is_empty() {
        flags.push(format!("--xla_disable_hlo_passes={}", disabled.join(",")));
    }
    if let Some(dir) = dump {
        flags.push(format!("--xla_dump_to={}", dir.display()));
        flags.push("--xla_dump_hlo_pass_re=.*".to_string());
        flags.push("--xla_dump_hlo_as_text=true".to_string());
    }
    flags
}

impl PassControl for XlaBackend {
    fn compile_with_passes(
        &self,
        module: &Module,
        disabled: &[String],
        dump: Option<&Path>,
    ) -> Result<Box<dyn Executable>, BackendError> {
        self.with_extra_xla_flags(&probe_flags(disabled, dump))
            .compile(module)
    }

    fn read_dump(&self, dir: &Path) -> Result<Vec<PassStep>, String> {
        read_pass_dump(dir)
    }
}

/// The steps of an XLA dump directory: files named
/// `module_M.NAME.SSSS.PIPELINE.after_PASS.before_NEXT.txt`, in step order
/// (the first module of the dump only: a probe compiles one).
pub fn read_pass_dump(dir: &Path) -> Result<Vec<PassStep>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read dump {}: {e}", dir.display()))?;
    let mut steps: Vec<(String, PassStep)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some((module, step)) = parse_step_file(&name) {
            steps.push((
                module,
                PassStep {
                    file: e.path(),
                    ..step
                },
            ));
        }
    }
    let first = steps.iter().map(|(m, _)| m.clone()).min();
    let mut steps: Vec<PassStep> = steps
        .into_iter()
        .filter(|(m, _)| Some(m) == first.as_ref())
        .map(|(_, s)| s)
        .collect();
    steps.sort_by_key(|s| s.step);
    if steps.is_empty() {
        return Err(format!(
            "xla wrote no per-pass dump into {} (does the plugin honour XLA_FLAGS?)",
            dir.display()
        ));
    }
    Ok(steps)
}

/// `module_0000.xla_props.0006.simplification.after_algsimp.before_simplify-sorts.txt`
/// -> ("module_0000", step 6 of `simplification`, after `algsimp`, before
/// `simplify-sorts`). The module name may hold dots, pass names do not.
fn parse_step_file(name: &str) -> Option<(String, PassStep)> {
    let stem = name.strip_suffix(".txt")?;
    let (rest, next) = stem.rsplit_once(".before_")?;
    let (rest, pass) = rest.rsplit_once(".after_")?;
    let (rest, pipeline) = rest.rsplit_once('.')?;
    let (rest, step) = rest.rsplit_once('.')?;
    let module = rest.split('.').next()?.to_string();
    if step.len() != 4 || !step.bytes().all(|b| b.is_ascii_digit()) || pass.contains('.') {
        return None;
    }
    Some((
        module,
        PassStep {
            step: step.parse().ok()?,
            pipeline: pipeline.to_string(),
            pass: pass.to_string(),
            next: next.to_string(),
            file: PathBuf::new(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_file_name_gives_its_step_pipeline_and_passes() {
        let (m, s) = parse_step_file(
            "module_0000.xla_props.0006.simplification.after_algsimp.before_simplify-sorts.txt",
        )
        .unwrap();
        assert_eq!(m, "module_0000");
        assert_eq!(s.step, 6);
        assert_eq!(s.pipeline, "simplification");
        assert_eq!(s.pass, "algsimp");
        assert_eq!(s.next, "simplify-sorts");
        assert!(s.is_pass());
        let (_, s) = parse_step_file(
            "module_0000.jit_f.0004.HLO_passes_through_layout_assignment.after_pipeline-start.before_batched_gather_scatter_normalizer.txt",
        )
        .unwrap();
        assert_eq!(s.pipeline, "HLO_passes_through_layout_assignment");
        assert!(!s.is_pass());
    }

    #[test]
    fn files_that_are_not_pass_steps_are_ignored() {
        for name in [
            "module_0000.xla_props.before_optimizations.txt",
            "module_0000.xla_props.cpu_after_optimizations.txt",
            "module_0000.xla_props.0020.copy-insertion.after_adding_copies_to_resolve_interference.txt",
            "module_0000.xla_props.debug_options",
            "module_0000.xla_props.ir-no-opt.ll",
        ] {
            assert!(parse_step_file(name).is_none(), "{name}");
        }
    }

    #[test]
    fn the_probe_flags_disable_and_dump() {
        let f = probe_flags(&["algsimp".into(), "cse".into()], Some(Path::new("/d")));
        assert_eq!(f[0], "--xla_disable_hlo_passes=algsimp,cse");
        assert!(f.contains(&"--xla_dump_to=/d".to_string()));
        assert!(probe_flags(&[], None).is_empty());
    }
}
