//! The f16 oracle through the command line: for each of the 13 oracle ops, a
//! module file `f16[65536] op(parameter)` is run by `xla-props eval` on the
//! `reference` backend with all bit patterns as a raw `.bin` argument, and the
//! `.bin` it writes must reproduce every word of `../shared/oracle/f16/<op>.bin`
//! (NaN by class).

mod common;

use common::cli::run_on;

#[test]
fn eval_on_the_reference_reproduces_every_oracle_word() {
    let Some(dir) = common::f16_oracle_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("all_f16.bin");
    let all: Vec<u8> = (0..=u16::MAX).flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&input, &all).unwrap();
    for op in common::F16_ORACLE_OPS {
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
        let extra = [
            "--arg",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        let run = run_on("eval", &module, "reference", &extra);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(0), "{op}: {stderr}");
        let got = common::f16_words(&std::fs::read(&out).unwrap());
        let want = common::f16_words(&std::fs::read(dir.join(format!("{op}.bin"))).unwrap());
        assert_eq!(got.len(), 65536, "{op}: output length");
        let bad: Vec<usize> = (0..65536)
            .filter(|&i| !common::f16_matches(want[i], got[i]))
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
