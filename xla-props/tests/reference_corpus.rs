//! The reference evaluates the XLA authors' HLO corpus (`../shared/corpus/xla-hlo`)
//! on deterministic inputs. Files it cannot evaluate are listed below, each
//! with the reason; any other failure, or a listed file that starts to pass
//! or fails for another reason, fails the test.

use std::path::PathBuf;

use xla_props::hlo::{parse_module, ArrayShape, ElementType, Shape};
use xla_props::literal::Literal;
use xla_props::reference::Evaluator;

/// Files the reference does not evaluate, with the error text they must give
/// (a substring) and why.
const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[
    (
        "035_sample_text_axpy_module.hlo",
        "does not parse",
        "an old text form the parser does not accept (`ENTRY %axpy.v5 (...)` with typed header)",
    ),
    (
        "066_hlo_dce.hlo",
        "inline computations are not supported",
        "the parser does not accept inline (unnamed) called computations",
    ),
    (
        "147_while_loop_unroller_simpleloop.hlo",
        "ran out of fuel",
        "`while3` multiplies its counter (0) by 1 and never reaches 10: a loop that never ends",
    ),
];

/// Files skipped in debug builds only (each takes seconds in a release build,
/// minutes in a debug one); `cargo test --release` evaluates them too.
const HEAVY: &[(&str, &str)] = &[
    ("011_convolution_cudnn.hlo", "a large convolution"),
    (
        "012_convolution.hlo",
        "f32[672,9,9,64] convolution with a 7x7 window: 11G multiply-adds",
    ),
    (
        "042_test_utils_sort_148_1589.hlo",
        "sorts 2^20 elements with a comparator computation",
    ),
    (
        "054_stable_sort_expander_permutation_sort.hlo",
        "sorts 64 rows of 8732 with a 17-instruction comparator",
    ),
    (
        "091_onednn_matmul_matmul_test_bf16.hlo",
        "bf16[1024,256] matmul and elementwise tail",
    ),
    (
        "092_onednn_matmul_matmul_test_bf16.hlo",
        "bf16[1024,256] matmul and elementwise tail",
    ),
    (
        "093_onednn_matmul_matmul_bias_relu6_test_bf16.hlo",
        "bf16[1024,256] matmul, bias and clamp",
    ),
    (
        "116_gpu_fused_mha_jit_unnamed_wrapped_function.hlo",
        "attention over bf16[2,4,1024,1024]: 2G multiply-adds",
    ),
    (
        "117_gpu_fused_mha_jit_unnamed_wrapped_function.hlo",
        "attention over bf16[2,4,1024,1024]: 2G multiply-adds",
    ),
    (
        "122_cublas_gemm_rewriter_multiple_maximum_users.hlo",
        "f32[3,896,54] batched matmul",
    ),
];

fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/xla-hlo");
    dir.is_dir().then_some(dir)
}

/// Deterministic small arguments: floats in [-2, 2] in steps of 1/4 (exact in
/// every float type), integers in [0, 3) (in range as indices of every
/// corpus module), preds alternating.
fn arguments(shapes: &[&Shape]) -> Vec<Literal> {
    let mut out = Vec::new();
    for (k, s) in shapes.iter().enumerate() {
        for (j, a) in s.leaves().into_iter().enumerate() {
            let n = a.element_count().unwrap_or(0) as usize;
            let shape = ArrayShape::new(a.dtype, a.dims.clone());
            let seed = 7 * k + 3 * j;
            let lit = match a.dtype {
                t if t.is_float() => {
                    let v: Vec<f64> = (0..n)
                        .map(|i| ((i * 5 + seed) % 17) as f64 / 4.0 - 2.0)
                        .collect();
                    Literal::from_f64s(&shape, &v)
                }
                ElementType::Pred => Literal::from_i128s(
                    &shape,
                    &(0..n).map(|i| ((i + seed) % 2) as i128).collect::<Vec<_>>(),
                ),
                _ => Literal::from_i128s(
                    &shape,
                    &(0..n).map(|i| ((i + seed) % 3) as i128).collect::<Vec<_>>(),
                ),
            };
            out.push(lit.expect("argument fits"));
        }
    }
    out
}

#[test]
fn reference_evaluates_the_corpus() {
    let Some(dir) = corpus_dir() else {
        if std::env::var_os("CI").is_some() {
            panic!("../shared/corpus/xla-hlo is missing under CI");
        }
        eprintln!("skipping: ../shared/corpus/xla-hlo not found (set CI to make this a failure)");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    let mut passed = 0;
    let mut skipped = 0;
    let mut problems = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if cfg!(debug_assertions) && HEAVY.iter().any(|(f, _)| *f == name) {
            eprintln!("skipping {name} in a debug build (run with --release to include it)");
            skipped += 1;
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let module = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                let msg = format!("does not parse: {e}");
                match EXPECTED_FAILURES.iter().find(|(f, _, _)| *f == name) {
                    Some((_, text, _)) if msg.contains(text) => {}
                    _ => problems.push(format!("{name}: {msg}")),
                }
                continue;
            }
        };
        let args = arguments(&module.parameter_shapes());
        let result = Evaluator::new()
            .with_fuel_limit(100_000)
            .evaluate(&module, &args);
        let expected = EXPECTED_FAILURES.iter().find(|(f, _, _)| *f == name);
        match (result, expected) {
            (Ok(_), None) => passed += 1,
            (Ok(_), Some(_)) => problems.push(format!(
                "{name}: listed as failing but now evaluates; remove it from EXPECTED_FAILURES"
            )),
            (Err(e), Some((_, text, _))) if e.to_string().contains(text) => {}
            (Err(e), _) => problems.push(format!("{name}: {e}")),
        }
    }
    let total = files.len() - skipped;
    eprintln!("reference evaluated {passed} of {total} corpus files ({skipped} skipped)");
    assert!(
        problems.is_empty(),
        "unexpected corpus results:\n{}",
        problems.join("\n")
    );
    assert!(
        passed * 10 >= total * 9,
        "only {passed} of {total} corpus files evaluate"
    );
    assert!(total >= 100, "only {total} corpus files were found");
}
