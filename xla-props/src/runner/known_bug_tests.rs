//! The runner's side of known bugs: a case a declared model explains is an
//! `xfail` naming the bug; a backend with another wrong value in the same op
//! still fails.

use std::sync::Arc;

use super::Harness;
use crate::backend::xla::known_bugs::INT_POWER_LOW_6_BITS;
use crate::backend::{Backend, BackendError, Executable, Interpreter};
use crate::check::{replace_with_model, type_text, KnownBug};
use crate::hlo::{Module, Opcode};

/// The interpreter with XLA's integer-power bug (`exact_model`: exactly the
/// declared model) or a different one (the exponent's low 5 bits), both
/// declaring the 6-bit bug.
struct PowerBug {
    name: &'static str,
    exact_model: bool,
}

impl Backend for PowerBug {
    fn name(&self) -> &str {
        self.name
    }
    fn known_bugs(&self) -> &[KnownBug] {
        std::slice::from_ref(&INT_POWER_LOW_6_BITS)
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let variant = if self.exact_model {
            INT_POWER_LOW_6_BITS.model.apply(module)
        } else {
            replace_with_model(module, &|i| {
                let a = i.shape.as_array().filter(|_| i.opcode == Opcode::Power)?;
                let (t, e) = (type_text(a), a.dtype);
                Some(format!(
                    "HloModule low5\n\nENTRY low5 {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
                     c = {e}[] constant(31)\n  cb = {t} broadcast(c), dimensions={{}}\n  \
                     low = {t} and(y, cb)\n  ROOT p = {t} power(x, low)\n}}\n"
                ))
            })
        };
        Interpreter::default().compile(variant.as_ref().unwrap_or(module))
    }
}

#[test]
fn a_modelled_bug_is_an_xfail_and_another_wrong_value_still_fails() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let log = dir.path().join("libtest.log");
    let args = [
        "prog",
        "--op",
        "power",
        "--dtype",
        "u16",
        "--backend",
        "low6,low5",
        "-q",
        "--test-threads",
        "2",
        "vs_reference::",
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([json.display().to_string()])
    // libtest's lines (a FAILED result, on purpose) go to a log, not among
    // this test's own output
    .chain(["--logfile".to_string(), log.display().to_string()]);
    let report = Harness::from_iter(args, |_| None)
        .with_builtins()
        .backend_arc(Arc::new(PowerBug {
            name: "low6",
            exact_model: true,
        }))
        .backend_arc(Arc::new(PowerBug {
            name: "low5",
            exact_model: false,
        }))
        .failures_dir(dir.path().join("failures"))
        .run_to_report()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    let of = |backend: &str, what: &str| {
        cases
            .iter()
            .filter(|c| c["id"].as_str().unwrap().ends_with(&format!("::{backend}")))
            .filter(|c| match what {
                "xfail" => c["kind"] == "xfail",
                o => c["outcome"] == o,
            })
            .count()
    };
    // the bug as modelled: never a failure, some cases xfail with the bug's id
    assert_eq!(of("low6", "failed"), 0, "{:?}", report.totals);
    assert!(of("low6", "xfail") > 0);
    for c in cases.iter().filter(|c| c["kind"] == "xfail") {
        let m = c["message"].as_str().unwrap();
        assert!(m.contains("known bug xla-cpu/int-power-low-6-bits"), "{m}");
        assert!(m.contains("docs/findings.md"), "{m}");
        assert_eq!(c["outcome"], "skipped");
    }
    // another wrong value of the same op: the declared bug does not hide it
    assert!(of("low5", "failed") > 0, "{:?}", report.totals);
    assert_eq!(report.totals.failed as usize, of("low5", "failed"));
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.lines()
            .any(|l| l.starts_with("test result: FAILED.") && l.contains(" failed;")),
        "{log}"
    );
}
