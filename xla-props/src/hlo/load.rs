//! Loading a module from a file: read, parse, make names unique, verify.

use std::path::Path;

use super::ir::Module;
use super::parser::parse_module_bytes;
use super::verifier::{uniquify_names, verify};

/// Why a module file could not be loaded. `Display` gives the one-line (or,
/// for syntax errors, caret-annotated) message a user sees.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The text is not HLO: `FILE:LINE:COL: message`, the line, and a caret.
    #[error("{rendered}")]
    Syntax {
        /// The rendered error.
        rendered: String,
    },
    /// The module parses but is not valid (shapes, names, call graph):
    /// `FILE:LINE:COL: message` where the error names an instruction that
    /// the text defines, else `FILE: message`.
    #[error("{file}{}: {error}", location(.at))]
    Invalid {
        /// The file.
        file: String,
        /// The line and column (1-based) of the instruction's definition.
        at: Option<(usize, usize)>,
        /// The verifier's error, naming the instruction.
        error: Box<super::verifier::VerifyError>,
    },
}

fn location(at: &Option<(usize, usize)>) -> String {
    at.map(|(line, col)| format!(":{line}:{col}"))
        .unwrap_or_default()
}

/// Where HLO `text` defines `instruction` (`NAME = ...`, `ROOT %NAME = ...`)
/// of `computation`: the line and column of its name, looked for after the
/// computation's header first.
fn definition_site(text: &str, computation: &str, instruction: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let opens = |line: &str| {
        let t = line.trim_start();
        let t = t.strip_prefix("ENTRY ").map_or(t, str::trim_start);
        let t = t.strip_prefix('%').unwrap_or(t);
        t.strip_prefix(computation)
            .is_some_and(|rest| rest.starts_with([' ', '(', '{']))
    };
    let defines = |line: &str| -> Option<usize> {
        let t = line.trim_start();
        let t = t.strip_prefix("ROOT ").map_or(t, str::trim_start);
        let name_at = line.len() - t.len();
        let bare = t.strip_prefix('%').unwrap_or(t);
        let rest = bare.strip_prefix(instruction)?;
        rest.trim_start().starts_with('=').then_some(name_at + 1)
    };
    let header = lines.iter().position(|l| opens(l));
    let search = |from: usize| {
        lines
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(k, l)| defines(l).map(|col| (k + 1, col)))
    };
    header.and_then(|h| search(h + 1)).or_else(|| search(0))
}

/// Parses `bytes` (named `file` in messages), makes instruction names unique
/// across computations as XLA's parser does, and verifies the module.
///
/// ```
/// let text = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
/// let m = xla_props::hlo::load_module_bytes("m.hlo", text.as_bytes()).unwrap();
/// assert_eq!(m.entry_computation().instructions.len(), 2);
/// let bad = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n";
/// let err = xla_props::hlo::load_module_bytes("m.hlo", bad.as_bytes()).unwrap_err();
/// // located at the instruction's definition: line 4, column 8 (`n`)
/// assert!(err.to_string().starts_with("m.hlo:4:8: "), "{err}");
/// assert!(err.to_string().contains("instruction 'n'"), "{err}");
/// ```
pub fn load_module_bytes(file: &str, bytes: &[u8]) -> Result<Module, LoadError> {
    let mut module = if is_stablehlo_file(file) {
        read_stablehlo(file, bytes)?
    } else {
        parse_module_bytes(bytes).map_err(|e| LoadError::Syntax {
            // invalid UTF-8 is reported at the first bad byte; the lossy text
            // agrees with the bytes up to there
            rendered: e.render(file, &String::from_utf8_lossy(bytes)),
        })?
    };
    uniquify_names(&mut module);
    verify(&module).map_err(|error| {
        let text = String::from_utf8_lossy(bytes);
        let at = error
            .site()
            .filter(|_| !is_stablehlo_file(file))
            .and_then(|(c, i)| definition_site(&text, c, i));
        LoadError::Invalid {
            file: file.to_string(),
            at,
            error: Box::new(error),
        }
    })?;
    Ok(module)
}

/// Reads, parses and verifies an HLO text file (see [`load_module_bytes`]).
pub fn load_module_file(path: impl AsRef<Path>) -> Result<Module, LoadError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| LoadError::Read {
        file: file.clone(),
        message: e.to_string(),
    })?;
    load_module_bytes(&file, &bytes)
}

/// True for a file name that holds StableHLO MLIR text (`.mlir`).
pub fn is_stablehlo_file(file: &str) -> bool {
    file.ends_with(".mlir")
}

fn read_stablehlo(file: &str, bytes: &[u8]) -> Result<Module, LoadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, col) = super::parser::line_col(bytes, e.valid_up_to());
        LoadError::Syntax {
            rendered: format!("{file}:{line}:{col}: invalid UTF-8"),
        }
    })?;
    let mut modules = super::stablehlo::parse_stablehlo(text).map_err(|e| LoadError::Syntax {
        rendered: e.render(file, text),
    })?;
    if modules.len() != 1 {
        return Err(LoadError::Syntax {
            rendered: format!(
                "{file}: holds {} modules (split by `// -----`); this command takes one (`check` runs them all)",
                modules.len()
            ),
        });
    }
    Ok(modules.remove(0))
}

/// Reads, parses and verifies every check program of a StableHLO file (see
/// [`super::stablehlo::read_check_programs`]).
pub fn load_check_programs(
    file: &str,
    bytes: &[u8],
) -> Result<Vec<super::stablehlo::CheckProgram>, LoadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, col) = super::parser::line_col(bytes, e.valid_up_to());
        LoadError::Syntax {
            rendered: format!("{file}:{line}:{col}: invalid UTF-8"),
        }
    })?;
    let mut programs =
        super::stablehlo::read_check_programs(text).map_err(|e| LoadError::Syntax {
            rendered: e.render(file, text),
        })?;
    for p in &mut programs {
        uniquify_names(&mut p.module);
        verify(&p.module).map_err(|error| LoadError::Invalid {
            file: format!("{file} (@{})", p.function),
            at: None,
            error: Box::new(error),
        })?;
    }
    Ok(programs)
}
