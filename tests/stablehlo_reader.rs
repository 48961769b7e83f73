//! The StableHLO reader: located errors, check ops, split files, and the
//! round trip HLO -> StableHLO -> HLO on the shared corpora.

use xla_props::hlo::stablehlo::{
    lower_module, parse_stablehlo, print_module, read_check_programs, CheckKind,
};
use xla_props::hlo::{load_module_bytes, load_module_file};

fn corpus(dir: &str) -> Option<Vec<std::path::PathBuf>> {
    let d = std::path::Path::new("../shared/corpus").join(dir);
    if !d.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing under CI",
            d.display()
        );
        xla_props::skip::this_test(format!("{} is absent", d.display()));
        return None;
    }
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    Some(v)
}

#[test]
fn unknown_ops_and_attributes_get_located_errors() {
    let cases = [
        ("func.func @main() {\n  %0 = stablehlo.frob : tensor<f32>\n}\n", "m.mlir:2:8: unknown operation `stablehlo.frob`"),
        (
            "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.transpose %a, perm = [0] : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
            "m.mlir:2:32: unknown attribute `perm` of `stablehlo.transpose`",
        ),
        (
            "func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf99>\n  return %0 : tensor<2xf32>\n}\n",
            "m.mlir:2:56: unsupported element type `f99`",
        ),
        ("func.func @main() {\n  return %x : tensor<f32>\n}\n", "m.mlir:2:10: undefined value `%x`"),
        ("module {\n  func.func @main() {\n", "m.mlir:2:21: unclosed `{`"),
    ];
    for (text, want) in cases {
        let e = load_module_bytes("m.mlir", text.as_bytes())
            .unwrap_err()
            .to_string();
        assert_eq!(e.lines().next().unwrap(), want, "{text}");
    }
}

#[test]
fn deep_nesting_and_garbage_do_not_panic() {
    let deep = format!(
        "func.func @main() {{ %0 = stablehlo.constant dense<{}1{}> : tensor<f32>\n}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert!(parse_stablehlo(&deep).is_err());
    for junk in [
        "",
        "}",
        "module @m {",
        "func.func @f(%a: tensor<",
        "\"stablehlo.add\"(",
        "%0:99999999999999999999 = x",
        // found by the fuzzer: a multi-byte character inside a hex blob
        "func.func @b() {\n  %0 = stablehlo.constant dense<\"0x0000803F0\u{40c}00040\"> : tensor<2xf32>\n}",
        // a sign is not a hex digit
        "func.func @b() {\n  %0 = stablehlo.constant dense<\"0x+1\"> : tensor<i8>\n}",
    ] {
        assert!(parse_stablehlo(junk).is_err(), "{junk}");
    }
}

#[test]
fn check_dialect_ops_and_split_files() {
    let text = "func.func @a() {\n  %0 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>\n  check.expect_almost_eq_const %0, dense<[1.5, -2.0]> : tensor<2xf32>\n  check.expect_eq %0, %0 : tensor<2xf32>\n  func.return\n}\n// -----\nfunc.func @b() {\n  %0 = stablehlo.constant dense<0x7F800000> : tensor<f32>\n  %1 = stablehlo.constant dense<1> : tensor<3xi8>\n  check.expect_close %0, %0, max_ulp_difference = 1 : tensor<f32>, tensor<f32>\n  check.expect_eq_const %1, dense<[1, 1, 1]> : tensor<3xi8>\n  func.return\n}\n";
    let p = read_check_programs(text).unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].module_index, p[1].module_index), (0, 1));
    let kinds: Vec<_> = p
        .iter()
        .flat_map(|p| p.checks.iter().map(|c| c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            CheckKind::AlmostEq,
            CheckKind::Eq,
            CheckKind::Close,
            CheckKind::Eq
        ]
    );
    assert_eq!(p[1].checks[0].max_ulp, Some(1));
    assert_eq!(p[1].checks[0].line, 11);
    let backend = xla_props::backend::create("reference").unwrap();
    for prog in &p {
        match xla_props::filetest::stablehlo_checks::run_check_program(backend.as_ref(), prog) {
            xla_props::filetest::stablehlo_checks::ProgramOutcome::Ran(r) => {
                assert!(r.iter().all(|r| r.verdict.is_ok()), "{r:?}")
            }
            o => panic!("{o:?}"),
        }
    }
    // a check that must fail
    let bad = "func.func @c() {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n  check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi32>\n  func.return\n}\n";
    let p = read_check_programs(bad).unwrap();
    match xla_props::filetest::stablehlo_checks::run_check_program(backend.as_ref(), &p[0]) {
        xla_props::filetest::stablehlo_checks::ProgramOutcome::Ran(r) => {
            let f = r[0].verdict.as_ref().unwrap_err();
            assert_eq!(
                (f.index, f.seen.as_str(), f.expected.as_str()),
                (Some(1), "2", "3")
            );
        }
        o => panic!("{o:?}"),
    }
}

/// The first trip HLO -> StableHLO (`print_module`, the faithful form) ->
/// HLO of one module: None when it is the identity (the HLO text printed
/// back is the module's), else the first line that differs.
fn first_trip(m: &xla_props::hlo::Module) -> Result<Option<String>, String> {
    let text = print_module(m).map_err(|e| e.to_string())?;
    let back = load_module_bytes("x.mlir", text.as_bytes())
        .unwrap_or_else(|e| panic!("the faithful form does not read back: {e}\n{text}"));
    let (want, got) = (m.to_string(), back.to_string());
    if want == got {
        return Ok(None);
    }
    let diff = want
        .lines()
        .zip(got.lines())
        .find(|(a, b)| a != b)
        .map(|(a, b)| format!("-{a}\n+{b}"))
        .unwrap_or_else(|| {
            format!(
                "{} lines, {} back",
                want.lines().count(),
                got.lines().count()
            )
        });
    Ok(Some(diff))
}

/// HLO -> StableHLO -> HLO is the identity on the first trip, on every
/// module of `../shared/corpus/xla-hlo` the faithful form can write (the
/// others are listed with the reason, and docs/stablehlo.md explains them).
#[test]
fn first_trip_is_the_identity_on_the_hlo_corpus() {
    let Some(files) = corpus("xla-hlo") else {
        return;
    };
    let (exact, unwritable, differ) = first_trips(
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "hlo")),
    );
    eprintln!(
        "first trip: {exact} identical, {} differ, {} cannot be written as StableHLO:\n{}\n{}",
        differ.len(),
        unwritable.len(),
        unwritable.join("\n"),
        differ.join("\n")
    );
    let unexpected: Vec<&String> = differ
        .iter()
        .filter(|d| {
            !KNOWN_FIRST_TRIP_DIFFERENCES
                .iter()
                .any(|k| d.starts_with(k))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} modules change on the first trip",
        unexpected.len()
    );
    assert_eq!(
        differ.len(),
        KNOWN_FIRST_TRIP_DIFFERENCES.len(),
        "a known difference is gone: update the list and docs/stablehlo.md"
    );
    assert!(exact >= 150, "only {exact} modules identical");
}

/// The first trip of each file: how many are identical, and which cannot be
/// written as StableHLO and which differ, each with why.
fn first_trips<'a>(
    files: impl Iterator<Item = &'a std::path::PathBuf>,
) -> (usize, Vec<String>, Vec<String>) {
    let (mut exact, mut unwritable, mut differ) = (0, Vec::new(), Vec::new());
    for f in files {
        let m = load_module_file(f).unwrap_or_else(|e| panic!("{e}"));
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        match first_trip(&m) {
            Ok(None) => exact += 1,
            Ok(Some(d)) => differ.push(format!("{name}:\n{d}")),
            Err(why) => unwritable.push(format!("{name}: {why}")),
        }
    }
    (exact, unwritable, differ)
}

/// Modules of `../shared/corpus/xla-hlo` whose first trip is known to
/// differ, each for a reason docs/stablehlo.md gives.
const KNOWN_FIRST_TRIP_DIFFERENCES: &[&str] = &[];

/// The same on the HLO the testdata's StableHLO reads into: printing it in
/// the faithful form and reading that back gives the same HLO.
#[test]
fn first_trip_is_the_identity_on_the_testdata() {
    let Some(files) = corpus("stablehlo-testdata") else {
        return;
    };
    let stride = if cfg!(debug_assertions) { 7 } else { 1 };
    let (exact, unwritable, differ) = first_trips(
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "mlir"))
            .step_by(stride),
    );
    eprintln!(
        "first trip on the testdata: {exact} identical, {} differ, {} cannot be written:\n{}\n{}",
        differ.len(),
        unwritable.len(),
        unwritable.join("\n"),
        differ.join("\n")
    );
    assert!(
        differ.is_empty(),
        "{} modules change on the first trip",
        differ.len()
    );
    assert!(
        unwritable.is_empty(),
        "{} modules cannot be written in the faithful form",
        unwritable.len()
    );
    // measured: all 2,325 (fft, triangular_solve and rng_bit_generator included)
    let floor = 2325usize.div_ceil(stride);
    assert!(exact >= floor, "only {exact} modules identical");
}

/// HLO -> StableHLO -> HLO is exact once the module is in the printer's
/// normal form (fusions and calls inlined, tuples flattened, dead code
/// dropped): reading the printed text and printing it again gives the same
/// text, and the HLO read back prints the same each time.
#[test]
fn round_trip_is_exact_on_the_hlo_corpus() {
    let Some(files) = corpus("xla-hlo") else {
        return;
    };
    let (mut checked, mut not_lowerable) = (0, 0);
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "hlo"))
    {
        let Ok(m) = load_module_file(f) else { continue };
        let Ok(first) = lower_module(&m) else {
            not_lowerable += 1;
            continue;
        };
        let back = load_module_bytes("x.mlir", first.mlir.as_bytes()).unwrap_or_else(|e| {
            panic!(
                "{}: the printer's text does not read back: {e}\n{}",
                f.display(),
                first.mlir
            )
        });
        assert_normal_form_is_fixed(&lower_module(&back).unwrap().mlir, f);
        checked += 1;
    }
    eprintln!("round trip exact on {checked} modules ({not_lowerable} not lowerable)");
    assert!(checked > 50);
}

/// `normal`, MLIR in the lowering's normal form (from `file`), is a fixed
/// point: read and lowered again it is the same text, and read again the
/// same module.
fn assert_normal_form_is_fixed(normal: &str, file: &std::path::Path) {
    let h1 = load_module_bytes("x.mlir", normal.as_bytes()).unwrap();
    let again = lower_module(&h1).unwrap().mlir;
    assert_eq!(normal, again, "{}", file.display());
    let h2 = load_module_bytes("x.mlir", again.as_bytes()).unwrap();
    assert_eq!(h1.to_string(), h2.to_string(), "{}", file.display());
}

/// StableHLO testdata -> HLO -> StableHLO -> HLO: exact from the printer's normal form on.
#[test]
fn round_trip_is_exact_on_the_testdata() {
    let Some(files) = corpus("stablehlo-testdata") else {
        return;
    };
    let stride = if cfg!(debug_assertions) { 7 } else { 1 };
    let mut checked = 0;
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "mlir"))
        .step_by(stride)
    {
        let m = load_module_file(f).unwrap_or_else(|e| panic!("{e}"));
        let Ok(l) = lower_module(&m) else { continue };
        let h1 = load_module_bytes("x.mlir", l.mlir.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_normal_form_is_fixed(&lower_module(&h1).unwrap().mlir, f);
        checked += 1;
    }
    eprintln!("round trip exact on {checked} testdata modules");
    assert!(checked > 100);
}

/// A small in-test fuzzer: byte flips, deletions, duplications and
/// truncations of testdata files. The reader must return, never panic.
#[test]
fn reader_survives_mutated_testdata() {
    let Some(files) = corpus("stablehlo-testdata") else {
        return;
    };
    let files: Vec<_> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "mlir"))
        .step_by(97)
        .collect();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"%#@^()[]{}<>,:=x-\"0123456789abcdefiu .";
    let mut runs = 0;
    for f in files {
        let base = std::fs::read(f).unwrap();
        for _ in 0..150 {
            let mut b = base.clone();
            for _ in 0..1 + next() % 4 {
                if b.is_empty() {
                    break;
                }
                let i = (next() as usize) % b.len();
                match next() % 4 {
                    0 => b[i] = alphabet[(next() as usize) % alphabet.len()],
                    1 => {
                        b.remove(i);
                    }
                    2 => {
                        let j = (i + (next() as usize) % 64).min(b.len());
                        let piece = b[i..j].to_vec();
                        b.splice(i..i, piece);
                    }
                    _ => b.truncate(i),
                }
            }
            let text = String::from_utf8_lossy(&b).into_owned();
            let r = std::panic::catch_unwind(|| {
                let _ = load_module_bytes("f.mlir", text.as_bytes());
                let _ = read_check_programs(&text);
            });
            assert!(
                r.is_ok(),
                "the reader panicked on a mutation of {}:\n{text}",
                f.display()
            );
            runs += 1;
        }
    }
    eprintln!("{runs} mutated files read without a panic");
}
