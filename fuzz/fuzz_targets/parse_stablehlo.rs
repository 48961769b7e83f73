//! Reads arbitrary bytes as StableHLO MLIR text. The reader must never
//! panic, and what it accepts must survive both printers (the compile form
//! and the faithful form) and read back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xla_props::hlo::stablehlo::{lower_module, parse_stablehlo, print_module};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(modules) = parse_stablehlo(text) {
        for m in modules {
            if let Ok(l) = lower_module(&m) {
                if let Err(e) = parse_stablehlo(&l.mlir) {
                    panic!("printed text does not read back: {e}\n{}", l.mlir);
                }
            }
            if let Ok(t) = print_module(&m) {
                if let Err(e) = parse_stablehlo(&t) {
                    panic!("the faithful form does not read back: {e}\n{t}");
                }
            }
        }
    }
});
