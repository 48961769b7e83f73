//! The reader's entry points: text to modules, and text to check programs.

use super::convert::{CheckSpec, Converter};
use super::syntax::{parse_file, Attr, ModuleDef, Region};
use crate::hlo::ir::Module;
use crate::hlo::parser::{line_col, ParseError};

pub use super::syntax::MAX_DEPTH;

/// Parses StableHLO MLIR text: one module per `// -----` part, each with
/// its `@main` (or its first public function) as the entry computation.
/// Check ops are dropped. Names are not yet unique and the modules are not
/// verified: [`crate::hlo::load_module_bytes`] does both.
///
/// ```
/// let text = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n\
///             %0 = stablehlo.negate %x : tensor<2xf32>\n\
///             return %0 : tensor<2xf32>\n}\n";
/// let m = xla_props::hlo::stablehlo::parse_stablehlo(text).unwrap();
/// assert_eq!(m[0].entry_computation().instructions.len(), 2);
/// let bad = "func.func @main() {\n  %0 = stablehlo.frob : tensor<f32>\n}\n";
/// let e = xla_props::hlo::stablehlo::parse_stablehlo(bad).unwrap_err();
/// assert_eq!(e.to_string(), "2:8: unknown operation `stablehlo.frob`");
/// ```
pub fn parse_stablehlo(text: &str) -> Result<Vec<Module>, ParseError> {
    let defs = parse_file(text)?;
    defs.iter()
        .map(|d| {
            let entry = entry_index(d);
            let c = Converter::new(d, None).map_err(|(p, m)| ParseError::at(text, p, m))?;
            c.module(entry)
                .map(|(m, _, _)| m)
                .map_err(|(p, m)| ParseError::at(text, p, m))
        })
        .collect()
}

/// One argument-free function of a file, as a program whose outputs are the
/// function's results followed by, for each check op in it, the value
/// checked and the value expected.
#[derive(Clone, Debug)]
pub struct CheckProgram {
    /// Which module of the file (0-based, by `// -----` part).
    pub module_index: usize,
    /// The function's name.
    pub function: String,
    /// The program: entry is the function.
    pub module: Module,
    /// Its checks, in text order.
    pub checks: Vec<CheckSpec>,
}

/// Every argument-free function of every module in `text`, as check programs.
///
/// ```
/// let text = "func.func @main() {\n\
///   %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n\
///   check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>\n\
///   func.return\n}\n";
/// let p = xla_props::hlo::stablehlo::read_check_programs(text).unwrap();
/// assert_eq!(p.len(), 1);
/// assert_eq!((p[0].checks[0].line, p[0].checks[0].actual, p[0].checks[0].expected), (3, 0, 1));
/// ```
pub fn read_check_programs(text: &str) -> Result<Vec<CheckProgram>, ParseError> {
    let defs = parse_file(text)?;
    let mut out = Vec::new();
    for (mi, d) in defs.iter().enumerate() {
        // a checked module must convert as a whole first (reports errors once)
        // the programs `interpreter.run_parallel` runs (and its infeed
        // functions) are run there, not as tests of their own
        let mut run_there = Vec::new();
        for f in &d.funcs {
            parallel_programs(&f.body, &mut run_there);
        }
        for (fi, f) in d.funcs.iter().enumerate() {
            if !f.args.is_empty() || !f.public || run_there.contains(&f.name) {
                continue;
            }
            let c = Converter::new(d, Some(fi)).map_err(|(p, m)| ParseError::at(text, p, m))?;
            let (module, pending, leaves) =
                c.module(fi).map_err(|(p, m)| ParseError::at(text, p, m))?;
            let checks = pending
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let (line, col) = line_col(text.as_bytes(), c.pos);
                    CheckSpec {
                        kind: c.kind,
                        line,
                        col,
                        actual: leaves + 2 * k,
                        expected: leaves + 2 * k + 1,
                        max_ulp: c.max_ulp,
                        tolerance: c.tolerance,
                    }
                })
                .collect();
            out.push(CheckProgram {
                module_index: mi,
                function: f.name.clone(),
                module,
                checks,
            });
        }
    }
    Ok(out)
}

/// The functions `interpreter.run_parallel` ops in `region` name (as
/// `programs` or `infeed`), at any depth.
fn parallel_programs(region: &Region, out: &mut Vec<String>) {
    fn symbols(a: &Attr, out: &mut Vec<String>) {
        match a {
            Attr::Symbol(s) => out.push(s.clone()),
            Attr::List(items) => items.iter().for_each(|i| symbols(i, out)),
            _ => {}
        }
    }
    for op in &region.ops {
        if op.name == "interpreter.run_parallel" {
            for key in ["programs", "infeed"] {
                if let Some(a) = op.attr(key) {
                    symbols(a, out);
                }
            }
        }
        for r in &op.regions {
            parallel_programs(r, out);
        }
    }
}

fn entry_index(d: &ModuleDef) -> usize {
    d.funcs
        .iter()
        .position(|f| f.name == "main" && f.public)
        .or_else(|| d.funcs.iter().position(|f| f.name == "main"))
        .or_else(|| d.funcs.iter().position(|f| f.public))
        .unwrap_or(0)
}
