//! Typed failures of the IREE backend.

use crate::hlo::stablehlo::LowerError;

/// Why the IREE backend could not compile or run a case.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IreeError {
    /// The tools are missing (run `scripts/fetch-iree.sh`).
    #[error("iree backend unavailable: {0}")]
    Unavailable(String),
    /// The module uses something the StableHLO lowering cannot express.
    #[error("{0}")]
    Lowering(#[from] LowerError),
    /// Something IREE is declared not to support (`numerics::UNSUPPORTED`).
    #[error("{0}")]
    Unsupported(String),
    /// `iree-compile` lacks a lowering for an op (it cannot legalize it, or
    /// the code it generates calls a library function IREE does not link):
    /// the reason, a skip; and the line of the compiled StableHLO text its
    /// diagnostic points at, when it names one.
    #[error("{what}")]
    CannotLower {
        /// The skip reason (`tools::cannot_legalize`, `tools::cannot_link`).
        what: String,
        /// The 1-based line of `module.mlir` the diagnostic names.
        line: Option<usize>,
    },
    /// `iree-compile` rejected the program (its diagnostics).
    #[error("iree-compile failed: {0}")]
    Compile(String),
    /// `iree-run-module` failed (its message).
    #[error("iree-run-module failed: {0}")]
    Execute(String),
    /// A tool died on a signal (a crash inside IREE).
    #[error("{tool} crashed: {status}; stderr: {stderr}")]
    Crashed {
        /// Which tool.
        tool: &'static str,
        /// How it ended.
        status: String,
        /// The tail of its stderr.
        stderr: String,
    },
    /// A tool did not finish in time and was killed.
    #[error("{tool} timed out after {seconds}s")]
    Timeout {
        /// Which tool.
        tool: &'static str,
        /// The timeout.
        seconds: f64,
    },
    /// Arguments that do not match the entry signature.
    #[error("{0}")]
    Signature(String),
    /// Outputs that do not match the entry's result shapes.
    #[error("iree output mismatch: {0}")]
    Output(String),
    /// A temporary file could not be written or read.
    #[error("iree backend i/o: {0}")]
    Io(String),
}

impl IreeError {
    /// The 1-based line of the compiled StableHLO text (`module.mlir`) that
    /// an `iree-compile` failure points at: its first error's location
    /// (`.../module.mlir:LINE:COL: error: ...`). `None` for every other error
    /// and for a diagnostic without that location (a link error, a crash).
    pub fn mlir_line(&self) -> Option<usize> {
        match self {
            IreeError::CannotLower { line, .. } => *line,
            IreeError::Compile(message) => error_line(message),
            _ => None,
        }
    }
}

impl IreeError {
    /// The symbol of a link error (`CannotLower` from `tools::cannot_link`):
    /// `tanh` for a module that `iree-lld` found calling an undefined `tanh`.
    pub fn link_symbol(&self) -> Option<String> {
        let IreeError::CannotLower { what, .. } = self else {
            return None;
        };
        if !what.contains("(iree-lld: undefined symbol)") {
            return None;
        }
        let at = what.find("a call of `")? + "a call of `".len();
        let end = what[at..].find('`')?;
        Some(what[at..at + end].to_string())
    }
}

/// The line of the first `module.mlir:LINE:COL: error:` diagnostic in `message`.
pub(crate) fn error_line(message: &str) -> Option<usize> {
    const FILE: &str = "module.mlir:";
    let first = message.lines().find(|l| l.contains(": error:"))?;
    let at = first.find(FILE)?;
    let rest = &first[at + FILE.len()..];
    let mut parts = rest.splitn(3, ':');
    let line = parts.next()?.parse::<usize>().ok()?;
    parts.next()?.parse::<usize>().ok()?;
    parts
        .next()?
        .trim_start()
        .starts_with("error:")
        .then_some(line)
        .filter(|&l| l > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_location_in_the_compiled_file_is_the_line() {
        let m = "/tmp/x/1-2/module.mlir:75:10: error: 'linalg.generic' op inferred input/output \
                 operand #1 has shape's dimension #1 to be 3, but found 2\n    %2 = ...\n\
                 /tmp/x/1-2/module.mlir:2:3: note: called from";
        assert_eq!(error_line(m), Some(75));
        assert_eq!(IreeError::Compile(m.into()).mlir_line(), Some(75));
        // a later error does not count; the first one names no line here
        assert_eq!(
            error_line("<unknown>:0: error: x\nmodule.mlir:4:1: error: y"),
            None
        );
        for m in [
            "iree-compile: iree-lld: error: undefined symbol: tanh",
            "module.mlir:4:10: note: see current operation",
            "module.mlir:x:10: error: y",
            "module.mlir:0:1: error: y",
            "other.mlir:4:10: error: y",
        ] {
            assert_eq!(error_line(m), None, "{m}");
        }
        assert_eq!(IreeError::Execute(m.into()).mlir_line(), None);
        let skip = IreeError::CannotLower {
            what: "why".into(),
            line: Some(9),
        };
        assert_eq!(
            (skip.mlir_line(), skip.to_string()),
            (Some(9), "why".into())
        );
    }
}
