//! Writes the deep transformer-like test module (40 blocks of layernorm,
//! dot, tanh GELU, dot and residual add, one quantization-residual feedback
//! fusion after the middle block) as HLO text, for timing `compare` and
//! `isolate` on it (docs/perf.md).
//!
//! ```text
//! cargo run --release -p xla-props --features testing --example deep_transformer -- OUT.hlo [--layers N] [--visible]
//! ```
//!
//! By default the feedback gain hides the quantization residual below half
//! an ULP of the output (a masked bug); `--visible` uses gain 1.

use xla_props::isolate::testing::{deep_transformer, MASKING_GAIN};

fn main() {
    let mut out = None;
    let mut layers = 40;
    let mut gain = MASKING_GAIN;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--visible" => gain = 1.0,
            "--layers" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => layers = n,
                None => {
                    eprintln!("--layers needs a number");
                    std::process::exit(2);
                }
            },
            _ if out.is_none() => out = Some(a),
            _ => {
                eprintln!("unknown argument `{a}`");
                std::process::exit(2);
            }
        }
    }
    let Some(out) = out else {
        eprintln!("usage: deep_transformer OUT.hlo [--layers N] [--visible]");
        std::process::exit(2);
    };
    let t = match deep_transformer(layers, gain) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot generate: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = std::fs::write(&out, xla_props::hlo::print_module(&t.module)) {
        eprintln!("{out}: cannot write: {e}");
        std::process::exit(2);
    }
    println!(
        "{out}: {} instructions, {} blocks; quantization feedback fusion `{}` (computation `{}`)",
        t.module.instruction_count(),
        t.layers,
        t.quant_fusion,
        t.quant_computation
    );
}
