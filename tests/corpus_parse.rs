//! The parser on XLA's own HLO text: `../shared/corpus/xla-hlo/*.hlo`.
//!
//! At least 95% of the files must parse, every file that does not is listed
//! in [`EXPECTED_REJECTS`] with the reason, and print -> parse is the identity
//! on every accepted module.

use xla_props::hlo::{parse_module, print_module};

/// Corpus files the parser rejects on purpose, with the message it gives
/// (a prefix) and why.
/// (a prefix) and why. None now: `HloModule name:` (035) and inline
/// computations (066) are read as XLA reads them (the corpus was checked to
/// run on XLA:CPU).
const EXPECTED_REJECTS: &[(&str, &str, &str)] = &[];

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/xla-hlo");

#[test]
fn corpus_parses_and_round_trips() {
    let Some(files) = xla_props::skip::hlo_corpus(CORPUS) else {
        return;
    };
    assert!(
        files.len() >= 100,
        "corpus looks truncated: {} files",
        files.len()
    );

    let mut rejected = Vec::new();
    let mut accepted = 0usize;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("read corpus file");
        match parse_module(&text) {
            Err(e) => rejected.push((name, e.render(&path.display().to_string(), &text))),
            Ok(module) => {
                accepted += 1;
                let printed = print_module(&module);
                let back = parse_module(&printed).unwrap_or_else(|e| {
                    panic!(
                        "{name}: printed text does not parse:\n{}",
                        e.render("printed", &printed)
                    )
                });
                assert_eq!(back, module, "{name}: print -> parse changed the module");
                // and printing is a fixed point
                assert_eq!(
                    print_module(&back),
                    printed,
                    "{name}: printing is not stable"
                );
            }
        }
    }

    let got: Vec<&str> = rejected.iter().map(|(n, _)| n.as_str()).collect();
    let want: Vec<&str> = EXPECTED_REJECTS.iter().map(|r| r.0).collect();
    assert_eq!(
        got,
        want,
        "the set of rejected files changed; rejections:\n{}",
        rejected
            .iter()
            .map(|r| r.1.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for ((_, msg), (file, want_msg, _why)) in rejected.iter().zip(EXPECTED_REJECTS) {
        assert!(msg.contains(want_msg), "{file}: unexpected error:\n{msg}");
    }
    let rate = accepted as f64 / files.len() as f64;
    eprintln!("accepted {accepted}/{} ({:.1}%)", files.len(), rate * 100.0);
    assert!(rate >= 0.95, "only {accepted}/{} accepted", files.len());
}
