//! The reference evaluates the XLA authors' HLO corpus (`../shared/corpus/xla-hlo`)
//! on deterministic inputs. Files it cannot evaluate are listed below, each
//! with the reason; any other failure, or a listed file that starts to pass
//! or fails for another reason, fails the test.

mod common;

use xla_props::hlo::{parse_module, ArrayShape, ElementType, Shape};
use xla_props::literal::Literal;
use xla_props::reference::Evaluator;

/// Files the reference does not evaluate, with the error text they must give
/// (a substring) and why.
const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[(
    "147_while_loop_unroller_simpleloop.hlo",
    "ran out of fuel",
    "`while3` multiplies its counter (0) by 1 and never reaches 10: a loop that never ends",
)];

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

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/xla-hlo");

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
    let Some(files) = xla_props::skip::hlo_corpus(CORPUS) else {
        return;
    };
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
    common::assert_none(&problems, "unexpected corpus results");
    assert!(
        passed * 10 >= total * 9,
        "only {passed} of {total} corpus files evaluate"
    );
    assert!(total >= 100, "only {total} corpus files were found");
}

/// Whether `actual` is within a simple tolerance of `expected`: integers and
/// preds exact, non-finite values by class, finite floats within
/// `8·eps·(|e| + max|e|)` (the interpreter rounds after every op and
/// accumulates in f32, so a few ULP of the largest value are legal here; the
/// full tolerance model lives in `check`).
fn close_enough(expected: &Literal, actual: &Literal, widen: f64) -> Result<(), String> {
    if expected.shape().dims != actual.shape().dims || expected.dtype() != actual.dtype() {
        return Err(format!("shape {} vs {}", expected.shape(), actual.shape()));
    }
    let t = expected.dtype();
    let n = expected.element_count();
    if !t.is_float() {
        return match (0..n).find(|&i| expected.get_i128(i) != actual.get_i128(i)) {
            Some(i) => Err(format!(
                "element {i}: expected {} got {}",
                expected.get_i128(i),
                actual.get_i128(i)
            )),
            None => Ok(()),
        };
    }
    let eps = t.float_format().map_or(1e-6, |f| f.epsilon());
    let e = expected.to_f64_vec();
    let a = actual.to_f64_vec();
    let scale = e
        .iter()
        .filter(|v| v.is_finite())
        .fold(0f64, |m, v| m.max(v.abs()));
    for i in 0..n {
        let (x, y) = (e[i], a[i]);
        let ok = if x.is_nan() || y.is_nan() {
            x.is_nan() && y.is_nan()
        } else if !x.is_finite() || !y.is_finite() {
            x == y
        } else {
            (x - y).abs() <= 8.0 * widen * eps * (x.abs() + scale)
        };
        if !ok {
            return Err(format!("element {i}: expected {x} got {y}"));
        }
    }
    Ok(())
}

/// Files whose outputs are long float sums: the interpreter accumulates them
/// sequentially in f32, so the legal error grows with the length (n·eps·Σ|x|)
/// and the bound is widened by the given factor (about the sum's length).
const LONG_SUMS: &[(&str, f64, &str)] = &[(
    "058_constant_deferring.hlo",
    262_144.0,
    "reduces f32[1,2,1,512,256] (262144 elements) with an add reducer",
)];

#[test]
fn interpreter_agrees_with_the_reference_on_the_corpus() {
    let Some(files) = xla_props::skip::hlo_corpus(CORPUS) else {
        return;
    };
    let interpreter = xla_props::backend::Interpreter::with_while_limit(100_000);
    let (mut agreed, mut compared) = (0, 0);
    let mut problems = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if HEAVY.iter().any(|(f, _)| *f == name)
            || EXPECTED_FAILURES.iter().any(|(f, _, _)| *f == name)
        {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(module) = parse_module(&text) else {
            continue;
        };
        let args = arguments(&module.parameter_shapes());
        let Ok(expected) = Evaluator::new()
            .with_fuel_limit(100_000)
            .evaluate(&module, &args)
        else {
            continue;
        };
        compared += 1;
        let widen = LONG_SUMS
            .iter()
            .find(|(f, _, _)| *f == name)
            .map_or(1.0, |(_, w, _)| *w);
        use xla_props::backend::Backend;
        let actual = interpreter
            .compile(&module)
            .and_then(|exe| exe.execute(&args));
        match actual {
            Err(e) => problems.push(format!("{name}: interpreter failed: {e}")),
            Ok(actual) if actual.len() != expected.len() => problems.push(format!(
                "{name}: {} outputs vs {}",
                actual.len(),
                expected.len()
            )),
            Ok(actual) => {
                let bad: Vec<String> = expected
                    .iter()
                    .zip(&actual)
                    .enumerate()
                    .filter_map(|(k, (e, a))| {
                        close_enough(e, a, widen)
                            .err()
                            .map(|m| format!("output {k}: {m}"))
                    })
                    .collect();
                if bad.is_empty() {
                    agreed += 1;
                } else {
                    problems.push(format!("{name}: {}", bad.join("; ")));
                }
            }
        }
    }
    eprintln!("interpreter agreed with the reference on {agreed} of {compared} corpus files");
    common::assert_none(&problems, "disagreements");
    assert!(
        compared >= 100,
        "only {compared} corpus files were compared"
    );
}
