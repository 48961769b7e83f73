//! `xla-props eval FILE --backend B [--arg PATH]... [--out PATH]...`

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::args::{ModuleRunArgs, OutputShardingArgs};
use super::CliError;
use crate::backend::{create, BackendError};
use crate::hlo::{ArrayShape, ElementType, Module};
use crate::literal::Literal;

/// Arguments of `xla-props eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// The module, the backend and the inputs.
    #[command(flatten)]
    pub run: ModuleRunArgs,
    /// An output file per result (tuples flattened): `.npy` by extension,
    /// otherwise raw little-endian bytes. Without it, outputs are summarized.
    #[arg(long = "out", value_name = "PATH")]
    pub outs: Vec<PathBuf>,
    /// How a multi-device module's outputs are put together.
    #[command(flatten)]
    pub sharding: OutputShardingArgs,
}

fn backend_error(file: &str, e: BackendError) -> CliError {
    match e {
        BackendError::UnknownBackend { .. } | BackendError::Unavailable { .. } => {
            CliError::input(e.to_string())
        }
        other => CliError::input(format!("{file}: {other}")),
    }
}

/// The array leaves of the entry parameters, each named for messages.
fn parameter_leaves(module: &Module) -> Vec<(String, ArrayShape)> {
    let entry = module.entry_computation();
    let mut out = Vec::new();
    // a module on many devices takes global arrays
    let global = crate::reference::spmd::DeviceProgram::multi(module)
        .ok()
        .flatten()
        .and_then(|p| p.global_parameter_shapes(module).ok());
    if let Some(shapes) = global {
        return shapes
            .into_iter()
            .enumerate()
            .map(|(k, s)| (format!("parameter array {k} (global)"), s))
            .collect();
    }
    for (k, p) in entry.parameters().into_iter().enumerate() {
        let ins = entry.instr(p);
        let leaves = ins.shape.leaves();
        let many = leaves.len() > 1 || ins.shape.is_tuple();
        for (j, leaf) in leaves.into_iter().enumerate() {
            let name = if many {
                format!("parameter {k} (`{}`) element {j}", ins.name)
            } else {
                format!("parameter {k} (`{}`)", ins.name)
            };
            out.push((name, ArrayShape::new(leaf.dtype, leaf.dims.clone())));
        }
    }
    out
}

/// Reads the argument files for `module`'s parameters; errors name the parameter.
pub fn read_arguments(module: &Module, paths: &[PathBuf]) -> Result<Vec<Literal>, CliError> {
    let leaves = parameter_leaves(module);
    if leaves.len() != paths.len() {
        let want: Vec<String> = leaves.iter().map(|(n, s)| format!("{n}: {s}")).collect();
        return Err(CliError::input(format!(
            "the module takes {} arguments ({}), got {} --arg files",
            leaves.len(),
            if want.is_empty() {
                "none".to_string()
            } else {
                want.join(", ")
            },
            paths.len()
        )));
    }
    leaves
        .iter()
        .zip(paths)
        .map(|((name, shape), path)| {
            Literal::read_arg_file(path, shape)
                .map_err(|e| CliError::input(format!("{name}, expecting {shape}: {e}")))
        })
        .collect()
}

fn write_output(lit: &Literal, path: &Path) -> Result<(), CliError> {
    let npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let res = if npy {
        lit.write_npy_file(path).map_err(|e| e.to_string())
    } else {
        std::fs::write(path, lit.to_le_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    };
    res.map_err(|e| CliError::input(format!("cannot write output: {e}")))
}

fn format_element(lit: &Literal, i: usize) -> String {
    let dt = lit.dtype();
    if dt == ElementType::Pred {
        (lit.get_bits(i) != 0).to_string()
    } else if dt.is_float() {
        format!("{}", lit.get_f64(i))
    } else {
        lit.get_i128(i).to_string()
    }
}

/// How many leading values a summary shows.
const SUMMARY_VALUES: usize = 8;

/// A short summary of one output: shape, fingerprint, and the first values.
pub fn summarize(k: usize, lit: &Literal) -> String {
    let n = lit.element_count();
    let mut s = format!(
        "output {k}: {}\n  fingerprint: {}\n  values:",
        lit.shape(),
        lit.fingerprint()
    );
    let shown: Vec<String> = (0..n.min(SUMMARY_VALUES))
        .map(|i| format_element(lit, i))
        .collect();
    let _ = write!(s, " [{}", shown.join(", "));
    if n > SUMMARY_VALUES {
        let _ = write!(s, ", ... ({n} values)");
    }
    s.push_str("]\n");
    s
}

/// Runs `module` on backend `backend_name` with arguments read from `args`;
/// writes the outputs to `outs`, or returns their summary when `outs` is empty.
pub fn eval_module(
    module: &Module,
    file: &str,
    backend_name: &str,
    args: &[PathBuf],
    outs: &[PathBuf],
) -> Result<String, CliError> {
    let literals = read_arguments(module, args)?;
    eval_with(module, file, backend_name, &literals, outs)
}

/// Legal inputs for `module`, drawn as `compare` draws them (uniform
/// distribution, intervals propagated backwards from every op), with the
/// note that says so.
pub fn generated_arguments(
    module: &Module,
    file: &str,
    seed: u64,
) -> Result<(Vec<Literal>, String), CliError> {
    let distribution = crate::inputs::Distribution::Uniform;
    let inputs = crate::inputs::generate_inputs(module, distribution, seed)
        .map_err(|e| CliError::input(format!("{file}: failed to generate inputs: {e}")))?;
    let note = format!(
        "note: no --arg given: running on generated legal inputs ({distribution}, seed {seed}), \
         as `xla-props compare` draws them"
    );
    Ok((inputs.args, note))
}

/// Runs `module` on `backend_name` with `literals`; writes or summarizes the outputs.
fn eval_with(
    module: &Module,
    file: &str,
    backend_name: &str,
    literals: &[Literal],
    outs: &[PathBuf],
) -> Result<String, CliError> {
    let backend = create(backend_name).map_err(|e| backend_error(file, e))?;
    let n_out = module.result_shape().leaves().len();
    if !outs.is_empty() && outs.len() != n_out {
        return Err(CliError::input(format!(
            "{file}: the module has {n_out} outputs, got {} --out files",
            outs.len()
        )));
    }
    let exe = backend
        .compile(module)
        .map_err(|e| backend_error(file, e))?;
    let results = exe.execute(literals).map_err(|e| backend_error(file, e))?;
    if outs.is_empty() {
        Ok(results
            .iter()
            .enumerate()
            .map(|(k, l)| summarize(k, l))
            .collect())
    } else {
        for (lit, path) in results.iter().zip(outs) {
            write_output(lit, path)?;
        }
        Ok(String::new())
    }
}

/// Reads and parses an HLO file (StableHLO `.mlir` as every command
/// reads it); errors are `FILE:LINE:COL: message`.
fn load_module(path: &Path) -> Result<Module, CliError> {
    let file = path.display().to_string();
    if crate::hlo::is_stablehlo_file(&file) {
        return crate::hlo::load_module_file(path).map_err(|e| CliError::input(e.to_string()));
    }
    let bytes =
        std::fs::read(path).map_err(|e| CliError::input(format!("{file}: cannot read: {e}")))?;
    crate::hlo::parse_module_bytes(&bytes)
        .map_err(|e| CliError::input(e.render(&file, &String::from_utf8_lossy(&bytes))))
}

pub(super) fn run_eval(args: &EvalArgs) -> Result<u8, CliError> {
    let run = &args.run;
    let file = run.module.name();
    let backend = &run.tested.backend;
    // an unknown backend is reported before anything else is read
    create(backend).map_err(|e| backend_error(&file, e))?;
    let mut module = load_module(&run.module.file)?;
    super::set_output_shardings(&mut module, &args.sharding.output_shardings)?;
    let takes_arguments = !parameter_leaves(&module).is_empty();
    // without `--arg`: the reproducer's own inputs, else generated ones
    let inputs = if run.arg_files.args.is_empty() && takes_arguments {
        match run.module.own_arguments()? {
            Some(own) => Some((
                own,
                "note: no --arg given: running on the reproducer's own inputs".to_string(),
            )),
            None => Some(generated_arguments(&module, &file, run.generated.seed)?),
        }
    } else {
        None
    };
    let text = match inputs {
        Some((literals, note)) => {
            eprintln!("{note}");
            eval_with(&module, &file, backend, &literals, &args.outs)?
        }
        None => eval_module(&module, &file, backend, &run.arg_files.args, &args.outs)?,
    };
    print!("{text}");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{CompId, Computation, InstrId, Instruction, Opcode, Shape};

    /// p0 + p1 on f32[3], and a tuple output (sum, p0).
    fn add_module() -> Module {
        let s = Shape::array(ElementType::F32, vec![3]);
        let mut p0 = Instruction::new("x", Opcode::Parameter, s.clone(), vec![]);
        p0.attrs.parameter_number = Some(0);
        let mut p1 = Instruction::new("y", Opcode::Parameter, s.clone(), vec![]);
        p1.attrs.parameter_number = Some(1);
        let add = Instruction::new("sum", Opcode::Add, s.clone(), vec![InstrId(0), InstrId(1)]);
        let t = Instruction::new(
            "t",
            Opcode::Tuple,
            Shape::Tuple(vec![s.clone(), s]),
            vec![InstrId(2), InstrId(0)],
        );
        Module {
            name: "m".into(),
            attrs: vec![],
            computations: vec![Computation {
                name: "main".into(),
                instructions: vec![p0, p1, add, t],
                root: InstrId(3),
                other: vec![],
            }],
            entry: CompId(0),
        }
    }

    fn f32s(v: &[f64]) -> Literal {
        Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
    }

    #[test]
    fn eval_reads_bin_and_npy_and_writes_both() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.npy");
        std::fs::write(&a, f32s(&[1.0, 2.0, 3.0]).to_le_bytes()).unwrap();
        f32s(&[10.0, 20.0, 30.0]).write_npy_file(&b).unwrap();
        let m = add_module();
        let text = eval_module(&m, "m.hlo", "interpreter", &[a.clone(), b.clone()], &[]).unwrap();
        assert!(text.contains("output 0: f32[3]"), "{text}");
        assert!(text.contains("values: [11, 22, 33]"), "{text}");
        assert!(text.contains("output 1: f32[3]"), "{text}");
        assert!(text.contains("fingerprint: min=11 max=33"), "{text}");
        let o0 = dir.path().join("o0.npy");
        let o1 = dir.path().join("o1.bin");
        let text = eval_module(
            &m,
            "m.hlo",
            "interpreter",
            &[a, b],
            &[o0.clone(), o1.clone()],
        )
        .unwrap();
        assert!(text.is_empty());
        let back =
            Literal::read_arg_file(&o0, &ArrayShape::new(ElementType::F32, vec![3])).unwrap();
        assert_eq!(back.to_f64_vec(), vec![11.0, 22.0, 33.0]);
        let raw = std::fs::read(&o1).unwrap();
        assert_eq!(raw, f32s(&[1.0, 2.0, 3.0]).to_le_bytes());
    }

    #[test]
    fn eval_errors_name_the_parameter() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.bin");
        std::fs::write(&good, f32s(&[1.0, 2.0, 3.0]).to_le_bytes()).unwrap();
        let short = dir.path().join("short.bin");
        std::fs::write(&short, [0u8; 8]).unwrap();
        let wrong_type = dir.path().join("h.npy");
        Literal::from_f64s(
            &ArrayShape::new(ElementType::F16, vec![3]),
            &[1.0, 2.0, 3.0],
        )
        .unwrap()
        .write_npy_file(&wrong_type)
        .unwrap();
        let m = add_module();
        let e =
            eval_module(&m, "m.hlo", "interpreter", std::slice::from_ref(&good), &[]).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("takes 2 arguments")
                && e.message.contains("parameter 1 (`y`): f32[3]"),
            "{}",
            e.message
        );
        let e = eval_module(&m, "m.hlo", "interpreter", &[good.clone(), short], &[]).unwrap_err();
        assert!(
            e.message.starts_with("parameter 1 (`y`), expecting f32[3]"),
            "{}",
            e.message
        );
        let e =
            eval_module(&m, "m.hlo", "interpreter", &[wrong_type, good.clone()], &[]).unwrap_err();
        assert!(e.message.starts_with("parameter 0 (`x`)"), "{}", e.message);
        let e = eval_module(&m, "m.hlo", "tpu", &[good.clone(), good.clone()], &[]).unwrap_err();
        assert!(
            e.message.contains("unknown backend `tpu`") && e.message.contains("interpreter"),
            "{}",
            e.message
        );
        let e = eval_module(
            &m,
            "m.hlo",
            "interpreter",
            &[good.clone(), good],
            &[dir.path().join("one.npy")],
        )
        .unwrap_err();
        assert!(e.message.contains("2 outputs"), "{}", e.message);
    }
}
