//! The verifier on XLA's own HLO text: `../shared/corpus/xla-hlo/*.hlo`.
//!
//! Every corpus module that parses must verify (after [`uniquify_names`]:
//! XLA's tests reuse instruction names across computations, which XLA's
//! parser renames and ours keeps), and a wrong first dimension on any
//! inferable instruction must be caught.

use xla_props::hlo::{parse_module, uniquify_names, verify, Module, Opcode, Shape};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/xla-hlo");

/// The corpus modules that parse, by file name, names made unique.
fn parsed_corpus() -> Option<Vec<(String, Module)>> {
    let files = xla_props::skip::hlo_corpus(CORPUS)?;
    let modules = files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).expect("read corpus file");
            let mut m = parse_module(&text).ok()?;
            uniquify_names(&mut m);
            Some((f.file_name()?.to_string_lossy().into_owned(), m))
        })
        .collect();
    Some(modules)
}

#[test]
fn every_parsed_corpus_module_verifies() {
    let Some(modules) = parsed_corpus() else {
        return;
    };
    assert!(
        modules.len() >= 100,
        "only {} modules parsed",
        modules.len()
    );
    let failures: Vec<String> = modules
        .iter()
        .filter_map(|(name, m)| verify(m).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_wrong_dimension_in_the_corpus_is_caught() {
    let Some(modules) = parsed_corpus() else {
        return;
    };
    let mut caught = 0;
    for (name, m) in modules {
        for (c, comp) in m.computations.iter().enumerate() {
            for (i, instr) in comp.instructions.iter().enumerate() {
                // parameters and parse-only ops are taken as declared
                if instr.opcode == Opcode::Parameter || instr.opcode.is_parse_only() {
                    continue;
                }
                // a broadcast's new dimensions are declared, not inferred
                let new_dim = instr.opcode == Opcode::Broadcast
                    && !instr
                        .attrs
                        .dimensions
                        .as_ref()
                        .is_some_and(|d| d.contains(&0));
                let mut bad = m.clone();
                let Shape::Array(a) = &mut bad.computations[c].instructions[i].shape else {
                    continue;
                };
                let Some(d) = a.dims.first_mut() else {
                    continue;
                };
                *d += 1;
                if verify(&bad).is_ok() {
                    assert!(
                        new_dim,
                        "{name}: dimension 0 of '{}' in '{}' changed unnoticed",
                        instr.name, comp.name
                    );
                } else {
                    caught += 1;
                }
            }
        }
    }
    assert!(caught > 500, "only {caught} mutations caught");
}
