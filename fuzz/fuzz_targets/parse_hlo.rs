//! Parses arbitrary bytes as HLO text. The parser must never panic, and a
//! module it accepts must print to text that parses back to an equal module.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xla_props::hlo::{parse_module, parse_module_bytes, print_module};

fuzz_target!(|data: &[u8]| {
    if let Ok(module) = parse_module_bytes(data) {
        let text = print_module(&module);
        match parse_module(&text) {
            Ok(back) => assert_eq!(back, module, "print -> parse changed the module:\n{text}"),
            Err(e) => panic!("printed text does not parse: {e}\n{text}"),
        }
    }
});
