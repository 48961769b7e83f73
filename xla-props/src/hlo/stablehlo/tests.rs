//! Unit tests of the reader and the faithful printer on the parse-only ops
//! with attributes: fft, triangular_solve, rng_bit_generator.

use super::{parse_stablehlo, print_module};
use crate::hlo::{
    load_module_bytes, parse_module, FftType, Module, Opcode, RngAlgorithm, TransposeA,
    TriangularSolveOptions,
};

fn read(text: &str) -> Module {
    let mut v = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(v.len(), 1);
    v.remove(0)
}

/// The located error of a StableHLO text: `m.mlir:LINE:COL: message`.
fn read_err(text: &str) -> String {
    match load_module_bytes("m.mlir", text.as_bytes()) {
        Ok(m) => panic!("accepted:\n{m}"),
        Err(e) => e.to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// The one instruction of `op` in the entry computation.
fn the(m: &Module, op: Opcode) -> &crate::hlo::Instruction {
    let found: Vec<_> = m
        .entry_computation()
        .instructions
        .iter()
        .filter(|i| i.opcode == op)
        .collect();
    assert_eq!(found.len(), 1, "{m}");
    found[0]
}

/// HLO -> StableHLO (faithful form) -> HLO gives the same module, and the
/// HLO text prints back as itself.
/// `hlo`, in the printer's canonical form, parses, prints back to itself,
/// and [`round_trips`]; the MLIR text.
fn canonical_round_trips(hlo: &str) -> String {
    let m = parse_module(hlo).unwrap();
    assert_eq!(m.to_string(), hlo);
    round_trips(&m)
}

fn round_trips(m: &Module) -> String {
    let text = print_module(m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    let back = read(&text);
    assert_eq!(back.to_string(), m.to_string(), "{text}");
    assert_eq!(back, *m, "{text}");
    let again = parse_module(&m.to_string()).unwrap();
    assert_eq!(again.to_string(), m.to_string());
    text
}

#[test]
fn fft_attributes_read_in_both_forms() {
    let pretty = "func.func @main(%x: tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>> {\n  \
        %0 = stablehlo.fft %x, type =  RFFT, length = [8] : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>\n  \
        return %0 : tensor<3x5xcomplex<f32>>\n}\n";
    let m = read(pretty);
    let f = the(&m, Opcode::Fft);
    assert_eq!(f.attrs.fft_type, Some(FftType::Rfft));
    assert_eq!(f.attrs.fft_length, Some(vec![8]));
    assert!(
        m.to_string()
            .contains("fft(parameter.0), fft_type=RFFT, fft_length={8}"),
        "{m}"
    );
    let generic = "func.func @main(%x: tensor<2x4xcomplex<f64>>) -> tensor<2x4xcomplex<f64>> {\n  \
        %0 = \"stablehlo.fft\"(%x) <{fft_length = array<i64: 2, 4>, fft_type = #stablehlo<fft_type IFFT>}> : (tensor<2x4xcomplex<f64>>) -> tensor<2x4xcomplex<f64>>\n  \
        return %0 : tensor<2x4xcomplex<f64>>\n}\n";
    let m = read(generic);
    assert!(
        m.to_string().contains("fft_type=IFFT, fft_length={2,4}"),
        "{m}"
    );
}

#[test]
fn triangular_solve_attributes_read() {
    let text = "func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x1xf32>) -> tensor<4x1xf32> {\n  \
        %0 = \"stablehlo.triangular_solve\"(%a, %b) <{left_side = true, lower = false, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = true}> : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>\n  \
        return %0 : tensor<4x1xf32>\n}\n";
    let m = read(text);
    let t = the(&m, Opcode::TriangularSolve);
    assert_eq!(
        t.attrs.triangular_solve,
        Some(TriangularSolveOptions {
            left_side: true,
            lower: false,
            unit_diagonal: true,
            transpose_a: Some(TransposeA::Adjoint),
        })
    );
    // as XLA prints it: a false flag is left out
    assert!(
        m.to_string()
            .contains("triangular-solve(parameter.0, parameter.1), left_side=true, unit_diagonal=true, transpose_a=ADJOINT\n"),
        "{m}"
    );
}

#[test]
fn rng_bit_generator_algorithm_reads_with_its_default() {
    let with = |alg: &str| {
        format!(
            "func.func @main(%s: tensor<2xui64>) -> tensor<3xui32> {{\n  \
             %state, %out = stablehlo.rng_bit_generator %s{alg} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)\n  \
             return %out : tensor<3xui32>\n}}\n"
        )
    };
    for (alg, want) in [
        (", algorithm =  PHILOX", RngAlgorithm::Philox),
        (", algorithm = THREE_FRY", RngAlgorithm::ThreeFry),
        // StableHLO's default
        ("", RngAlgorithm::Default),
    ] {
        let m = read(&with(alg));
        let r = the(&m, Opcode::RngBitGenerator);
        assert_eq!(r.attrs.rng_algorithm, Some(want), "{alg}");
        assert!(
            m.to_string().contains(&format!(
                "rng-bit-generator(parameter.0), algorithm={}\n",
                want.name()
            )),
            "{m}"
        );
    }
    let generic = "func.func @main(%s: tensor<2xui64>) -> tensor<2xui64> {\n  \
        %0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui8>)\n  \
        return %0#0 : tensor<2xui64>\n}\n";
    let m = read(generic);
    assert_eq!(
        the(&m, Opcode::RngBitGenerator).attrs.rng_algorithm,
        Some(RngAlgorithm::Philox)
    );
}

#[test]
fn every_attribute_value_round_trips_through_the_faithful_form() {
    for t in FftType::ALL {
        let (input, output) = match t {
            FftType::Fft | FftType::Ifft => ("c64[3,4,6]", "c64[3,4,6]"),
            FftType::Rfft => ("f32[3,4,6]", "c64[3,4,4]"),
            FftType::Irfft => ("c64[3,4,4]", "f32[3,4,6]"),
        };
        let hlo = format!(
            "HloModule m\n\nENTRY e {{\n  x = {input}{{2,1,0}} parameter(0)\n  \
             ROOT f.1 = {output}{{2,1,0}} fft(x), fft_type={}, fft_length={{4,6}}, metadata={{op_name=\"f\"}}\n}}\n",
            t.name()
        );
        let text = canonical_round_trips(&hlo);
        assert!(
            text.contains(&format!(
                "fft_type = #stablehlo<fft_type {}>, fft_length = array<i64: 4, 6>",
                t.name()
            )),
            "{text}"
        );
    }
    for x in TransposeA::ALL {
        for flags in 0..8u32 {
            let o = TriangularSolveOptions {
                left_side: flags & 1 != 0,
                lower: flags & 2 != 0,
                unit_diagonal: flags & 4 != 0,
                transpose_a: Some(x),
            };
            let mut attrs = String::new();
            for (k, set) in [
                ("left_side", o.left_side),
                ("lower", o.lower),
                ("unit_diagonal", o.unit_diagonal),
            ] {
                if set {
                    attrs.push_str(&format!(", {k}=true"));
                }
            }
            let hlo = format!(
                "HloModule m\n\nENTRY e {{\n  a = f32[2,5,5]{{2,1,0}} parameter(0)\n  \
                 b = f32[2,5,3]{{2,1,0}} parameter(1)\n  \
                 ROOT t = f32[2,5,3]{{2,1,0}} triangular-solve(a, b){attrs}, transpose_a={}\n}}\n",
                x.name()
            );
            let m = parse_module(&hlo).unwrap();
            assert_eq!(m.to_string(), hlo);
            assert_eq!(
                the(&m, Opcode::TriangularSolve).attrs.triangular_solve,
                Some(o)
            );
            let text = round_trips(&m);
            assert!(
                text.contains(&format!(
                    "{{left_side = {}, lower = {}, transpose_a = #stablehlo<transpose {}>, unit_diagonal = {}",
                    o.left_side,
                    o.lower,
                    x.name(),
                    o.unit_diagonal
                )),
                "{text}"
            );
        }
    }
    for (r, mlir) in RngAlgorithm::ALL
        .into_iter()
        .zip(["DEFAULT", "THREE_FRY", "PHILOX"])
    {
        let hlo = format!(
            "HloModule m\n\nENTRY e {{\n  s = u64[2]{{0}} parameter(0)\n  \
             g = (u64[2]{{0}}, u32[7]{{0}}) rng-bit-generator(s), algorithm={}\n  \
             ROOT o = u32[7]{{0}} get-tuple-element(g), index=1\n}}\n",
            r.name()
        );
        let text = canonical_round_trips(&hlo);
        assert!(
            text.contains(&format!(
                "{{rng_algorithm = #stablehlo<rng_algorithm {mlir}>"
            )),
            "{text}"
        );
    }
}

#[test]
fn hlo_text_spells_the_attributes_as_xla_does() {
    // explicit false flags and a missing default read as XLA reads them and
    // print as XLA prints them
    let m = parse_module(
        "HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  b = f32[3,1] parameter(1)\n  \
         ROOT t = f32[3,1] triangular-solve(a, b), left_side=true, lower=false, unit_diagonal=false, transpose_a=TRANSPOSE\n}\n",
    )
    .unwrap();
    assert!(
        m.to_string()
            .contains("triangular-solve(a, b), left_side=true, transpose_a=TRANSPOSE\n"),
        "{m}"
    );
    // the names are typed only on their own op: cholesky's `lower` and
    // dot's `algorithm` stay verbatim
    let m = parse_module(
        "HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  \
         ROOT c = f32[3,3] cholesky(a), lower=false\n}\n",
    )
    .unwrap();
    let c = the(&m, Opcode::Cholesky);
    assert_eq!(c.attrs.other, vec![("lower".into(), "false".into())]);
    assert_eq!(c.attrs.triangular_solve, None);
}

#[test]
fn bad_attribute_values_get_located_errors() {
    let fft = |attrs: &str| {
        format!(
            "func.func @main(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {{\n  \
             %0 = stablehlo.fft %x{attrs} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>\n  \
             return %0 : tensor<8xcomplex<f32>>\n}}\n"
        )
    };
    let tri = |attrs: &str| {
        format!(
            "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {{\n  \
             %0 = \"stablehlo.triangular_solve\"(%a, %b) {{{attrs}}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n  \
             return %0 : tensor<2x2xf32>\n}}\n"
        )
    };
    let rng = |attrs: &str, results: &str| {
        format!(
            "func.func @main(%s: tensor<2xui64>) -> tensor<2xui64> {{\n  \
             %0:2 = \"stablehlo.rng_bit_generator\"(%s) {{{attrs}}} : (tensor<2xui64>) -> {results}\n  \
             return %0#0 : tensor<2xui64>\n}}\n"
        )
    };
    let cases = [
        (
            fft(", type = SLOWFT, length = [8]"),
            "m.mlir:2:8: unknown fft type `SLOWFT` (FFT, IFFT, RFFT or IRFFT)",
        ),
        (
            fft(", length = [8]"),
            "m.mlir:2:8: `stablehlo.fft` needs attribute `fft_type`",
        ),
        (
            fft(", type = FFT"),
            "m.mlir:2:8: `stablehlo.fft` needs attribute `fft_length`",
        ),
        (
            fft(", type = FFT, length = [true, 1.5]"),
            "m.mlir:2:8: attribute `fft_length` of `stablehlo.fft` must be a list of integers",
        ),
        (
            tri("left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose SIDEWAYS>"),
            "m.mlir:2:8: unknown transpose_a `SIDEWAYS` (NO_TRANSPOSE, TRANSPOSE or ADJOINT)",
        ),
        (
            tri("left_side = true, transpose_a = #stablehlo<fft_type FFT>"),
            "m.mlir:2:8: attribute `transpose_a` of `stablehlo.triangular_solve` must be `#stablehlo<transpose ...>`",
        ),
        (
            tri("left_side = 3, transpose_a = #stablehlo<transpose TRANSPOSE>"),
            "m.mlir:2:8: attribute `left_side` must be a boolean",
        ),
        (
            tri("left_side = true"),
            "m.mlir:2:8: `stablehlo.triangular_solve` needs attribute `transpose_a`",
        ),
        (
            rng("rng_algorithm = #stablehlo<rng_algorithm TWO_FRY>", "(tensor<2xui64>, tensor<3xui32>)"),
            "m.mlir:2:10: unknown rng algorithm `TWO_FRY` (DEFAULT, THREE_FRY or PHILOX)",
        ),
        (
            rng("rng_algorithm = \"PHILOX\"", "(tensor<2xui64>, tensor<3xui32>)"),
            "m.mlir:2:10: attribute `rng_algorithm` of `stablehlo.rng_bit_generator` must be `#stablehlo<rng_algorithm ...>`",
        ),
    ];
    for (text, want) in &cases {
        assert_eq!(read_err(text), *want, "{text}");
    }
    // HLO text: at the bad value
    let hlo = |line: &str| format!("HloModule m\nENTRY e {{\n{line}\n}}\n");
    let cases = [
        (
            hlo("  x = c64[8] parameter(0)\n  ROOT f = c64[8] fft(x), fft_type=SLOWFT, fft_length={8}"),
            "SLOWFT",
            "unknown fft type `SLOWFT` (FFT, IFFT, RFFT or IRFFT)",
        ),
        (
            hlo("  a = f32[2,2] parameter(0)\n  ROOT t = f32[2,2] triangular-solve(a, a), lower=maybe"),
            "maybe",
            "expected `true` or `false`, found `maybe`",
        ),
        (
            hlo("  a = f32[2,2] parameter(0)\n  ROOT t = f32[2,2] triangular-solve(a, a), transpose_a=YES"),
            "YES",
            "unknown transpose_a `YES` (NO_TRANSPOSE, TRANSPOSE or ADJOINT)",
        ),
        (
            hlo("  s = u64[2] parameter(0)\n  ROOT g = (u64[2], u32[2]) rng-bit-generator(s), algorithm=THREE_FRY"),
            "THREE_FRY",
            "unknown rng algorithm `THREE_FRY` (rng_default, rng_three_fry or rng_philox)",
        ),
    ];
    for (text, bad, msg) in &cases {
        let e = match load_module_bytes("m.hlo", text.as_bytes()) {
            Ok(m) => panic!("accepted:\n{m}"),
            Err(e) => e.to_string(),
        };
        let col = text.lines().nth(3).and_then(|l| l.find(bad)).unwrap() + 1;
        let want = format!("m.hlo:4:{col}: {msg}");
        assert_eq!(e.lines().next().unwrap_or_default(), want, "{text}");
    }
}

#[test]
fn the_faithful_form_refuses_what_it_cannot_write() {
    // an fft without its type (HLO text XLA would reject) is an error, not a panic
    let m = parse_module(
        "HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n  ROOT f = c64[8] fft(x), fft_length={8}\n}\n",
    )
    .unwrap();
    let e = print_module(&m).unwrap_err().to_string();
    assert!(e.contains("f (fft): missing fft_type"), "{e}");
    let m = parse_module(
        "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  ROOT g = u64[2] rng-bit-generator(s), algorithm=rng_default\n}\n",
    )
    .unwrap();
    let e = print_module(&m).unwrap_err().to_string();
    assert!(
        e.contains("rng-bit-generator's shape is (state, output)"),
        "{e}"
    );
    // the compile form lowers triangular-solve, and rng-bit-generator's two
    // results as the tuple's leaves
    let m = parse_module(
        "HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  ROOT t = f32[2,2] triangular-solve(a, a), transpose_a=NO_TRANSPOSE\n}\n",
    )
    .unwrap();
    assert!(print_module(&m).is_ok());
    let mlir = super::lower_module(&m).unwrap().mlir;
    assert!(
        mlir.contains("\"stablehlo.triangular_solve\"(%arg0, %arg0) {left_side = false, lower = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}"),
        "{mlir}"
    );
    let m = parse_module(
        "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  ROOT g = (u64[2], u32[3]) rng-bit-generator(s), algorithm=rng_philox\n}\n",
    )
    .unwrap();
    let l = super::lower_module(&m).unwrap();
    assert_eq!(l.results.len(), 2);
    assert!(
        l.mlir.contains("%0:2 = \"stablehlo.rng_bit_generator\"(%arg0) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)"),
        "{}",
        l.mlir
    );
    let m = parse_module(
        "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  ROOT g = u64[2] rng-bit-generator(s), algorithm=rng_default\n}\n",
    )
    .unwrap();
    let e = super::lower_module(&m).unwrap_err().to_string();
    assert!(
        e.contains("rng-bit-generator's shape is (state, output)"),
        "{e}"
    );
}
