//! `xla-props compare --deep`: after the whole-module verdict, every
//! top-level instruction (fusions kept whole) is compared on the
//! reference's own values of its operands, so a bug the output masks is
//! still reported.

use super::CliError;
use crate::hlo::Module;
use crate::isolate::{deep_check, LocalDisagreement, Oracle, Tested};
use crate::literal::Literal;

/// What the deep comparison found.
pub(crate) struct DeepSummary {
    /// Top-level instructions compared.
    pub(crate) candidates: usize,
    /// Those that disagree on the reference values of their operands.
    pub(crate) local_disagreements: Vec<LocalDisagreement>,
}

/// Compares every top-level instruction of `module` run on `args` between
/// `backend` and `reference` (`reference` or a backend name).
pub(crate) fn deep_compare(
    file: &str,
    module: &Module,
    args: &[Literal],
    backend: &str,
    reference: &str,
) -> Result<DeepSummary, CliError> {
    let tested_backend =
        crate::backend::create(backend).map_err(|e| CliError::input(e.to_string()))?;
    let oracle = if reference == "reference" {
        Oracle::Exact
    } else {
        Oracle::Backend(
            crate::backend::create(reference).map_err(|e| CliError::input(e.to_string()))?,
        )
    };
    let values = oracle.all_values(module, args).map_err(|e| {
        CliError::input(format!(
            "{file}: --deep: the reference `{}` cannot evaluate every instruction: {}",
            oracle.name(),
            e
        ))
    })?;
    let tested = Tested::new(tested_backend.as_ref());
    let deep = deep_check(module, &values, &oracle, &tested, &mut |_| {});
    Ok(DeepSummary {
        candidates: deep.candidates,
        local_disagreements: deep.local_disagreements,
    })
}
