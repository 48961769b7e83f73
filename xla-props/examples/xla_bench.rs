//! What a case costs on xla-cpu: worker start, compile of a small module,
//! one execution, and the compile cache on a repeated module.
//!
//! ```sh
//! cargo build --release -p xla-props --bin xla-props --example xla_bench
//! ./target/release/examples/xla_bench [cases]
//! ```

mod common;

use std::time::Instant;

use xla_props::backend::xla::{XlaBackend, XlaPlugin};
use xla_props::hlo::{ArrayShape, ElementType, InstrId, Instruction, Module, Opcode, Shape};
use xla_props::literal::Literal;

const OPS: &[Opcode] = &[
    Opcode::Add,
    Opcode::Multiply,
    Opcode::Subtract,
    Opcode::Maximum,
    Opcode::Minimum,
    Opcode::Divide,
    Opcode::Atan2,
    Opcode::Power,
];

fn binary(op: Opcode, t: ElementType, n: i64) -> Module {
    let s = Shape::array(t, vec![n]);
    let mut instrs = common::parameters(&s, 2);
    instrs.push(Instruction::new("r", op, s, vec![InstrId(0), InstrId(1)]));
    common::one_computation("m", instrs)
}

fn main() -> std::process::ExitCode {
    let cases: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let b = XlaBackend::isolated(XlaPlugin::Cpu);
    if let Err(reason) = b.availability() {
        eprintln!("xla_bench: {reason}");
        return std::process::ExitCode::from(2);
    }
    let t0 = Instant::now();
    if let Err(e) = b.describe() {
        eprintln!("xla_bench: {e}");
        return std::process::ExitCode::from(2);
    }
    let startup = t0.elapsed();

    // Distinct modules (op x dtype x shape): every compile is a miss.
    let types = [
        ElementType::F32,
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F64,
    ];
    let mut modules = Vec::new();
    'outer: for n in 1.. {
        for &t in &types {
            for &op in OPS {
                modules.push((binary(op, t, n), t, n));
                if modules.len() == cases {
                    break 'outer;
                }
            }
        }
    }
    let t1 = Instant::now();
    let mut exes = Vec::new();
    for (m, t, n) in &modules {
        match b.compile_module(m) {
            Ok(e) => exes.push((e, *t, *n)),
            Err(e) => {
                eprintln!("xla_bench: {e}");
                return std::process::ExitCode::from(1);
            }
        }
    }
    let compile = t1.elapsed();
    let t2 = Instant::now();
    for (e, t, n) in &exes {
        let shape = ArrayShape::new(*t, vec![*n]);
        let x =
            Literal::from_f64s(&shape, &vec![1.5; *n as usize]).unwrap_or_else(|e| panic!("{e}"));
        if let Err(err) = e.run(&[x.clone(), x]) {
            eprintln!("xla_bench: {err}");
            return std::process::ExitCode::from(1);
        }
    }
    let execute = t2.elapsed();
    // The same modules again: every compile is a cache hit.
    let t3 = Instant::now();
    for (m, _, _) in &modules {
        let _ = b.compile_module(m);
    }
    let recompile = t3.elapsed();
    // Batching: K independent ops in one module, one compile.
    let mut batched = Vec::new();
    for k in [1usize, 16, 64, 256] {
        let m = batch(k);
        let t = Instant::now();
        if let Err(e) = b.compile_module(&m) {
            eprintln!("xla_bench: {e}");
            return std::process::ExitCode::from(1);
        }
        batched.push((k, t.elapsed()));
    }
    let s = b.cache_stats();
    println!(
        "worker start + plugin load: {:.0} ms",
        startup.as_secs_f64() * 1e3
    );
    println!(
        "compile (distinct single-op modules): {:.2} ms per module over {cases}",
        compile.as_secs_f64() * 1e3 / cases as f64
    );
    println!(
        "execute (transfer in, run, transfer out): {:.3} ms per case",
        execute.as_secs_f64() * 1e3 / cases as f64
    );
    println!(
        "compile again (cache hit, includes lowering): {:.3} ms per module",
        recompile.as_secs_f64() * 1e3 / cases as f64
    );
    println!(
        "cache: {} hits, {} misses, hit rate {:.2}",
        s.hits,
        s.misses,
        s.hit_rate()
    );
    for (k, d) in batched {
        println!(
            "compile of {k} independent ops in one module: {:.0} ms ({:.2} ms per op)",
            d.as_secs_f64() * 1e3,
            d.as_secs_f64() * 1e3 / k as f64
        );
    }
    std::process::ExitCode::SUCCESS
}

/// `k` independent `op(p2i, p2i+1)` over f32[k+3] (distinct shapes from the
/// single-op modules), returned as one tuple.
fn batch(k: usize) -> Module {
    let s = Shape::array(ElementType::F32, vec![k as i64 + 1000]);
    let mut instrs = common::parameters(&s, 2 * k);
    let mut roots = Vec::new();
    for i in 0..k {
        let op = OPS[i % OPS.len()];
        let a = InstrId(2 * i as u32);
        let b = InstrId(2 * i as u32 + 1);
        instrs.push(Instruction::new(format!("r{i}"), op, s.clone(), vec![a, b]));
        roots.push(InstrId(instrs.len() as u32 - 1));
    }
    let shape = Shape::Tuple(vec![s; k]);
    instrs.push(Instruction::new("t", Opcode::Tuple, shape, roots));
    common::one_computation("batch", instrs)
}
