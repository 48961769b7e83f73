//! Runs every module of the shared corpus on an XLA backend and on the exact
//! reference evaluator (or any registered backend named as REFERENCE), with
//! deterministic small inputs, and prints a markdown triage table (for
//! `docs/findings.md`). With a file instead of a directory, prints the
//! arguments, both outputs and the StableHLO text of that one module.
//!
//! ```sh
//! scripts/fetch-xla-plugin.sh
//! cargo build --release -p xla-props --bin xla-props --example xla_corpus
//! ./target/release/examples/xla_corpus ../shared/corpus/xla-hlo [xla-cpu|xla-cpu-0.81] [REFERENCE]
//! ```

mod common;

use std::path::PathBuf;

use xla_props::backend::xla::{XlaBackend, XlaError, XlaPlugin};
use xla_props::backend::Backend;
use xla_props::hlo::{load_module_file, ArrayShape, ElementType, Module, Shape};
use xla_props::literal::Literal;

/// Largest argument size (elements over all parameters) run.
const MAX_ARG_ELEMENTS: u64 = 1 << 22;

fn args_for(shapes: &[&Shape], seed: u64) -> Result<Vec<Literal>, String> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let mut total = 0u64;
    let mut out = Vec::new();
    for s in shapes {
        let a: &ArrayShape = s.as_array().ok_or("tuple or token parameter")?;
        let n = a.element_count().ok_or("bad dims")?;
        total += n;
        if total > MAX_ARG_ELEMENTS {
            return Err(format!("arguments over {MAX_ARG_ELEMENTS} elements"));
        }
        let values: Vec<f64> = (0..n)
            .map(|_| {
                let r = next();
                if a.dtype.is_float() {
                    ((r % 33) as f64 - 16.0) / 8.0
                } else if a.dtype.is_pred() {
                    (r % 2) as f64
                } else {
                    (r % 4) as f64
                }
            })
            .collect();
        let shape = ArrayShape::new(a.dtype, a.dims.clone());
        out.push(Literal::from_f64s(&shape, &values).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

fn ordinal(bits: u64, t: ElementType) -> i128 {
    let w = t.bit_width();
    let sign = 1u64 << (w - 1);
    let mag = (bits & (sign - 1)) as i128;
    if bits & sign != 0 {
        -mag
    } else {
        mag
    }
}

/// (max ulp distance, max abs difference, NaN-class mismatches, int mismatches)
fn diff(a: &Literal, b: &Literal) -> Result<(i128, f64, usize, usize), String> {
    if a.shape() != b.shape() && (a.dtype() != b.dtype() || a.dims() != b.dims()) {
        return Err(format!("shape {} vs {}", a.shape(), b.shape()));
    }
    let t = a.dtype();
    let (mut ulp, mut abs, mut nan, mut ints) = (0i128, 0f64, 0usize, 0usize);
    for i in 0..a.element_count() {
        if t.is_float() {
            let (x, y) = (a.get_f64(i), b.get_f64(i));
            if x.is_nan() || y.is_nan() {
                if x.is_nan() != y.is_nan() {
                    nan += 1;
                }
                continue;
            }
            let d = (ordinal(a.get_bits(i), t) - ordinal(b.get_bits(i), t)).abs();
            ulp = ulp.max(d);
            if x.is_finite() && y.is_finite() {
                abs = abs.max((x - y).abs());
            }
        } else if a.get_bits(i) != b.get_bits(i) {
            ints += 1;
        }
    }
    Ok((ulp, abs, nan, ints))
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = common::first_path(&args, "../shared/corpus/xla-hlo");
    let plugin = match args.get(1).map(String::as_str) {
        Some("xla-cpu-0.81") => XlaPlugin::Cpu081,
        _ => XlaPlugin::Cpu,
    };
    let b = XlaBackend::new(plugin);
    if let Err(reason) = b.availability() {
        eprintln!("xla_corpus: {reason}");
        return std::process::ExitCode::from(2);
    }
    // Default: the exact reference evaluator; or any registered backend by name.
    let reference: Option<Box<dyn Backend>> = match args.get(2).map(String::as_str) {
        None | Some("reference") => None,
        Some(name) => Some(common::backend_or_exit("xla_corpus", name)),
    };
    let reference = reference.as_deref();
    eprintln!(
        "reference: {}",
        reference.map_or("the exact reference evaluator", |r| r.name())
    );
    if dir.is_file() {
        show(&b, reference, &dir);
        return std::process::ExitCode::SUCCESS;
    }
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
            .collect(),
        Err(e) => {
            eprintln!("xla_corpus: {}: {e}", dir.display());
            return std::process::ExitCode::from(2);
        }
    };
    files.sort();
    println!("| module | outcome | detail |");
    println!("| --- | --- | --- |");
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (outcome, detail) = run_one(&b, reference, f);
        println!(
            "| {name} | {outcome} | {} |",
            detail.replace('|', "\\|").replace('\n', " ")
        );
    }
    let s = b.cache_stats();
    eprintln!(
        "compile cache: {} hits, {} misses, {} worker restarts",
        s.hits, s.misses, s.restarts
    );
    std::process::ExitCode::SUCCESS
}

fn evaluate(r: Option<&dyn Backend>, m: &Module, args: &[Literal]) -> Result<Vec<Literal>, String> {
    match r {
        Some(r) => r
            .compile(m)
            .and_then(|e| e.execute(args))
            .map_err(|e| e.to_string()),
        None => xla_props::reference::evaluate(m, args).map_err(|e| e.to_string()),
    }
}

fn run_one(b: &XlaBackend, r: Option<&dyn Backend>, f: &std::path::Path) -> (&'static str, String) {
    let module = match load_module_file(f) {
        Ok(m) => m,
        Err(e) => return ("parse-error", e.to_string()),
    };
    let args = match args_for(&module.parameter_shapes(), 1) {
        Ok(a) => a,
        Err(e) => return ("skipped", e),
    };
    let exe = match b.compile_module(&module) {
        Ok(e) => e,
        Err(XlaError::Lowering(e)) => return ("unsupported", e.to_string()),
        Err(e) => return ("xla-compile-error", e.to_string()),
    };
    let want = match evaluate(r, &module, &args) {
        Ok(v) => v,
        Err(e) => return ("reference-error", e),
    };
    let got = match exe.run(&args) {
        Ok(v) => v,
        Err(e) => return ("xla-error", e.to_string()),
    };
    if got.len() != want.len() {
        return (
            "disagree",
            format!("{} outputs vs {}", got.len(), want.len()),
        );
    }
    let mut worst = (0i128, 0f64, 0usize, 0usize);
    for (g, w) in got.iter().zip(&want) {
        match diff(g, w) {
            Ok(d) => {
                worst = (
                    worst.0.max(d.0),
                    worst.1.max(d.1),
                    worst.2 + d.2,
                    worst.3 + d.3,
                );
            }
            Err(e) => return ("disagree", e),
        }
    }
    let detail = format!(
        "max {} ulp, max abs {:e}, NaN-class {}, integer mismatches {}",
        worst.0, worst.1, worst.2, worst.3
    );
    let outcome = if worst == (0, 0.0, 0, 0) {
        "exact"
    } else if worst.2 == 0 && worst.3 == 0 && worst.0 <= 4 {
        "close"
    } else {
        "differs"
    };
    (outcome, detail)
}

/// Prints arguments, reference and XLA outputs of one module (small ones).
fn show(b: &XlaBackend, r: Option<&dyn Backend>, f: &std::path::Path) {
    let module = match load_module_file(f) {
        Ok(m) => m,
        Err(e) => return println!("parse error: {e}"),
    };
    let args = match args_for(&module.parameter_shapes(), 1) {
        Ok(a) => a,
        Err(e) => return println!("skipped: {e}"),
    };
    for (k, a) in args.iter().enumerate() {
        println!("arg {k}: {} {:?}", a.shape(), a.to_f64_vec());
    }
    match evaluate(r, &module, &args) {
        Ok(v) => v
            .iter()
            .for_each(|l| println!("reference: {} {:?}", l.shape(), l.to_f64_vec())),
        Err(e) => println!("reference error: {e}"),
    }
    match b.compile_module(&module) {
        Ok(exe) => {
            println!("{}", exe.mlir());
            match exe.run(&args) {
                Ok(v) => v
                    .iter()
                    .for_each(|l| println!("xla: {} {:?}", l.shape(), l.to_f64_vec())),
                Err(e) => println!("xla error: {e}"),
            }
        }
        Err(e) => println!("xla compile error: {e}"),
    }
}
