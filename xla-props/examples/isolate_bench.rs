//! Isolation time and backend runs against module size.
//!
//! ```text
//! cargo run --release -p xla-props --features testing --example isolate_bench [-- SIZES... [--out DIR]]
//! ```
//!
//! For each size (default 500, 2000, 8000 instructions) it generates a
//! transformer-like module, injects one miscompilation into one fusion of a
//! middle layer with the test-only `buggy:` wrapper around the interpreter,
//! isolates it, and prints one markdown table row per (size, bug). With
//! `--out DIR` the reports and reproducers are written under DIR.

use std::path::PathBuf;
use std::time::Instant;

use xla_props::backend::mutant::{Bug, Buggy};
use xla_props::filetest::write_isolation_results;
use xla_props::isolate::testing::transformer;
use xla_props::isolate::{isolate, Isolation, Options, Oracle};

fn main() {
    let mut sizes = Vec::new();
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--out" {
            out = args.next().map(PathBuf::from);
        } else if let Ok(n) = a.parse::<usize>() {
            sizes.push(n);
        } else if a != "--bench" {
            eprintln!("unknown argument `{a}`");
            std::process::exit(2);
        }
    }
    if sizes.is_empty() {
        sizes = vec![500, 2000, 8000];
    }
    println!("| instructions | layers | bug (fusion) | seconds | backend runs | generate s | reproducer instructions | culprit found |");
    println!("| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |");
    for &size in &sizes {
        let start = Instant::now();
        let t = match transformer(size) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot generate: {e}");
                std::process::exit(2);
            }
        };
        let generate = start.elapsed().as_secs_f64();
        let layer = t.layers / 2;
        for (bug, role) in [
            (Bug::WrongConstant, "query"),
            (Bug::ElideRoundTrip, "quant_residual"),
            (Bug::SliceOffByOne, "key"),
        ] {
            let Some((comp, fusion)) = t.fusion(layer, role) else {
                continue;
            };
            let backend = Buggy::new(bug, comp);
            let options = Options {
                seed: size as u64,
                ..Options::default()
            };
            match isolate(&t.module, &backend, &Oracle::Exact, &options) {
                Ok(Isolation::Isolated(mut iso)) => {
                    if let Some(dir) = &out {
                        let d = dir.join(format!("{size}-{}", bug.name()));
                        if let Err(e) =
                            write_isolation_results(&mut iso, &d, &["interpreter".to_string()])
                        {
                            eprintln!("cannot write {}: {e}", d.display());
                        }
                    }
                    let r = &iso.report;
                    let right = r.culprit.fusion.as_deref() == Some(fusion)
                        && r.culprit.opcode == bug.opcode().name();
                    println!(
                        "| {} | {} | {} ({comp}) | {:.2} | {} | {generate:.2} | {} | {} |",
                        t.module.instruction_count(),
                        t.layers,
                        bug.name(),
                        r.seconds,
                        r.backend_runs,
                        r.reproducer_instructions,
                        if right { "yes" } else { "NO" }
                    );
                }
                Ok(Isolation::Agree { .. } | Isolation::Amplified { .. }) => println!(
                    "| {} | {} | {} ({comp}) | - | - | {generate:.2} | - | agreed |",
                    t.module.instruction_count(),
                    t.layers,
                    bug.name()
                ),
                Err(e) => println!(
                    "| {} | {} | {} | error: {e} |",
                    t.module.instruction_count(),
                    t.layers,
                    bug.name()
                ),
            }
        }
    }
}
