//! The f16 oracle through the command line: for each of the 13 oracle ops, a
//! module file `f16[65536] op(parameter)` is run by `xla-props eval` on the
//! `reference` backend with all bit patterns as a raw `.bin` argument, and the
//! `.bin` it writes must reproduce every word of `../shared/oracle/f16/<op>.bin`
//! (NaN by class).

use std::path::PathBuf;
use std::process::Command;

const OPS: [&str; 13] = [
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "erf",
];

fn oracle_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/oracle/f16");
    dir.is_dir().then_some(dir)
}

fn is_nan(w: u16) -> bool {
    w & 0x7c00 == 0x7c00 && w & 0x3ff != 0
}

fn words(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn eval_on_the_reference_reproduces_every_oracle_word() {
    let Some(dir) = oracle_dir() else {
        if std::env::var_os("CI").is_some() {
            panic!("../shared/oracle/f16 is missing under CI");
        }
        xla_props::skip::this_test(
            "../shared/oracle/f16 not found (set CI to make this a failure)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("all_f16.bin");
    let all: Vec<u8> = (0..=u16::MAX).flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&input, &all).unwrap();
    for op in OPS {
        let module = tmp.path().join(format!("{op}.hlo"));
        std::fs::write(
            &module,
            format!(
                "HloModule oracle_{}\n\nENTRY main {{\n  x = f16[65536]{{0}} parameter(0)\n  ROOT y = f16[65536]{{0}} {op}(x)\n}}\n",
                op.replace('-', "_")
            ),
        )
        .unwrap();
        let out = tmp.path().join(format!("{op}.out.bin"));
        let run = Command::new(env!("CARGO_BIN_EXE_xla-props"))
            .args(["eval", module.to_str().unwrap(), "--backend", "reference"])
            .args(["--arg", input.to_str().unwrap()])
            .args(["--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{op}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let got = words(&std::fs::read(&out).unwrap());
        let want = words(&std::fs::read(dir.join(format!("{op}.bin"))).unwrap());
        assert_eq!(got.len(), 65536, "{op}: output length");
        let bad: Vec<usize> = (0..65536)
            .filter(|&i| {
                let (g, w) = (got[i], want[i]);
                if is_nan(w) {
                    !is_nan(g)
                } else {
                    g != w
                }
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{op}: {} words differ, first at input {:#06x}: got {:#06x}, want {:#06x}",
            bad.len(),
            bad[0],
            got[bad[0]],
            want[bad[0]]
        );
    }
}
