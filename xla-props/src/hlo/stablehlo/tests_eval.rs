//! Unit tests of the ops the reader refines or decomposes (dynamic-shape
//! ops, composite, quantized types, chlo mulhi/ragged_dot/scan) and of fft,
//! evaluated on the reference with hand-computed expectations.

use super::parse_stablehlo;
use crate::literal::Literal;

/// The results of `@main` (no arguments) on the reference.
fn run(body: &str) -> Vec<Literal> {
    let text = format!("func.func @main() -> {body}");
    let mut v = parse_stablehlo(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let m = v.remove(0);
    crate::reference::evaluate(&m, &[]).unwrap_or_else(|e| panic!("{e}\n{m}"))
}

fn ints(l: &Literal) -> Vec<i128> {
    l.to_i128_vec()
}

fn read_error(body: &str) -> String {
    let text = format!("func.func @main() -> {body}");
    match parse_stablehlo(&text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn dynamic_ops_refine_to_static_ones() {
    let r = run("tensor<2x3xi32> {
  %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %v = stablehlo.constant dense<0> : tensor<i32>
  %lo = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %hi = stablehlo.constant dense<[0, 0]> : tensor<2xi64>
  %in = stablehlo.constant dense<[0, 0]> : tensor<2xi64>
  %p = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<2x2xi32>, tensor<i32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xi32>
  return %p : tensor<2x3xi32>
}");
    assert_eq!(ints(&r[0]), vec![0, 1, 2, 0, 3, 4]);
    let r = run("tensor<i32> {
  %x = stablehlo.constant dense<0> : tensor<2x5xi8>
  %d = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x5xi8>) -> tensor<i32>
  return %d : tensor<i32>
}");
    assert_eq!(ints(&r[0]), vec![5]);
}

#[test]
fn dynamic_ops_refuse_shapes_they_cannot_refine() {
    let e = read_error(
        "tensor<3xi32> {
  %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %r = stablehlo.dynamic_reshape %x, %s : (tensor<3xi32>, tensor<1xi64>) -> tensor<3xi32>
  return %r : tensor<3xi32>
}",
    );
    assert!(e.contains("differs from the result type"), "{e}");
    let e = read_error("tensor<4xi32> {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %v = stablehlo.constant dense<0> : tensor<i32>
  %a = stablehlo.constant dense<[1]> : tensor<1xi64>
  %lo = stablehlo.add %a, %a : tensor<1xi64>
  %p = stablehlo.dynamic_pad %x, %v, %lo, %a, %a : (tensor<2xi32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi32>
  return %p : tensor<4xi32>
}");
    assert!(e.contains("must be a constant"), "{e}");
}

#[test]
fn mulhi_gives_the_high_half_at_every_width() {
    let r = run("(tensor<4xi64>, tensor<2xui64>, tensor<2xi32>) {
  %a = stablehlo.constant dense<[-1, -9223372036854775808, -9223372036854775808, 3]> : tensor<4xi64>
  %b = stablehlo.constant dense<[-1, -9223372036854775808, 1, -5]> : tensor<4xi64>
  %h = \"chlo.mulhi\"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %c = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %u = \"chlo.mulhi\"(%c, %c) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
  %x = stablehlo.constant dense<[-7, 65536]> : tensor<2xi32>
  %y = stablehlo.constant dense<[3, 65536]> : tensor<2xi32>
  %s = \"chlo.mulhi\"(%x, %y) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %h, %u, %s : tensor<4xi64>, tensor<2xui64>, tensor<2xi32>
}");
    // 1; 2^126 >> 64 = 2^62; -2^63 >> 64 = -1; -15 >> 64 = -1
    assert_eq!(ints(&r[0]), vec![0, 1 << 62, -1, -1]);
    assert_eq!(ints(&r[1]), vec![u64::MAX as i128 - 1, 1]);
    assert_eq!(ints(&r[2]), vec![-1, 1]);
}

#[test]
fn scan_carries_and_stacks_its_outputs() {
    let r = run("(tensor<3xi32>, tensor<i32>) {
  %x = stablehlo.constant dense<[2, 3, 4]> : tensor<3xi32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = chlo.scan(%x) inits(%one) dimension=0 {
  ^bb0(%e: tensor<i32>, %c: tensor<i32>):
    %p = stablehlo.multiply %e, %c : tensor<i32>
    %q = stablehlo.subtract %p, %e : tensor<i32>
    stablehlo.return %q, %p : tensor<i32>, tensor<i32>
  } : (tensor<3xi32>, tensor<i32>) -> (tensor<3xi32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3xi32>, tensor<i32>
}");
    // carries 2, 6, 24; outputs carry - element: 0, 3, 20
    assert_eq!(ints(&r[0]), vec![0, 3, 20]);
    assert_eq!(ints(&r[1]), vec![24]);
}

#[test]
fn ragged_dot_groups_rows_and_contractions() {
    let dims = |lr: &str, lc: &str, rg: &str| {
        format!(
            "ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [{lc}], rhs_contracting_dimensions = [{}], lhs_ragged_dimensions = [{lr}], rhs_group_dimensions = [{rg}]>",
            if rg.is_empty() { "0" } else { "1" }
        )
    };
    // mode 1: rows 0 and 1 use group 0 (x1), row 2 group 1 (x10), row 3 no group
    let r = run(&format!(
        "tensor<4x1xf32> {{
  %l = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %r = stablehlo.constant dense<[[[1.0], [1.0]], [[10.0], [10.0]]]> : tensor<2x2x1xf32>
  %g = stablehlo.constant dense<[2, 1]> : tensor<2xi64>
  %d = \"chlo.ragged_dot\"(%l, %r, %g) {{{}}} : (tensor<4x2xf32>, tensor<2x2x1xf32>, tensor<2xi64>) -> tensor<4x1xf32>
  return %d : tensor<4x1xf32>
}}",
        dims("0", "1", "0")
    ));
    assert_eq!(r[0].to_f64_vec(), vec![3.0, 7.0, 110.0, 0.0]);
    // mode 2: contraction indices {0, 1} for group 0 and {2} for group 1
    let r = run(&format!(
        "tensor<2x1x1xf32> {{
  %l = stablehlo.constant dense<[[1.0, 2.0, 4.0]]> : tensor<1x3xf32>
  %r = stablehlo.constant dense<[[1.0], [10.0], [100.0]]> : tensor<3x1xf32>
  %g = stablehlo.constant dense<[2, 1]> : tensor<2xi32>
  %d = \"chlo.ragged_dot\"(%l, %r, %g) {{{}}} : (tensor<1x3xf32>, tensor<3x1xf32>, tensor<2xi32>) -> tensor<2x1x1xf32>
  return %d : tensor<2x1x1xf32>
}}",
        dims("1", "1", "")
    ));
    assert_eq!(r[0].to_f64_vec(), vec![21.0, 400.0]);
}

#[test]
fn quantize_clamps_rounds_to_even_and_dequantizes() {
    let r = run("(tensor<5xi8>, tensor<2xf32>) {
  %x = stablehlo.constant dense<[100.0, -100.0, 0.25, 0.75, -0.25]> : tensor<5xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<5xf32>) -> tensor<5x!quant.uniform<i8<-127:127>:f32, 0.5>>
  %b = stablehlo.bitcast_convert %q : (tensor<5x!quant.uniform<i8<-127:127>:f32, 0.5>>) -> tensor<5xi8>
  %s = stablehlo.constant dense<[3, 3]> : tensor<2xi8>
  %p = stablehlo.bitcast_convert %s : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 0.5:-1}>>
  %d = stablehlo.uniform_dequantize %p : (tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 0.5:-1}>>) -> tensor<2xf32>
  return %b, %d : tensor<5xi8>, tensor<2xf32>
}");
    assert_eq!(ints(&r[0]), vec![127, -127, 0, 2, 0]);
    // (3 - 1) * 2 and (3 + 1) * 0.5
    assert_eq!(r[1].to_f64_vec(), vec![4.0, 2.0]);
}

#[test]
fn quantized_operands_are_dequantized_computed_and_requantized() {
    let r = run("tensor<2xi8> {
  %x = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:10>>
  %m = stablehlo.multiply %q, %q : (tensor<2x!quant.uniform<i8:f32, 0.5:10>>, tensor<2x!quant.uniform<i8:f32, 0.5:10>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:-4>>
  %b = stablehlo.bitcast_convert %m : (tensor<2x!quant.uniform<i8:f32, 0.25:-4>>) -> tensor<2xi8>
  return %b : tensor<2xi8>
}");
    // 2.25 / 0.25 - 4 = 5; 4 / 0.25 - 4 = 12
    assert_eq!(ints(&r[0]), vec![5, 12]);
}

#[test]
fn composite_calls_its_decomposition() {
    let text = "func.func @twice(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.add %a, %a : tensor<i32>
  return %0 : tensor<i32>
}
func.func @main() -> tensor<i32> {
  %x = stablehlo.constant dense<21> : tensor<i32>
  %y = stablehlo.composite \"my.twice\" %x {decomposition = @twice} : (tensor<i32>) -> tensor<i32>
  return %y : tensor<i32>
}";
    let mut v = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}"));
    let mut m = v.remove(0);
    let main = m
        .computations
        .iter()
        .position(|c| c.name == "main")
        .expect("main");
    m.entry = crate::hlo::CompId(main as u32);
    let r = crate::reference::evaluate(&m, &[]).unwrap_or_else(|e| panic!("{e}\n{m}"));
    assert_eq!(ints(&r[0]), vec![42]);
}

#[test]
fn fft_of_length_three_and_its_inverse() {
    let r = run("(tensor<3xcomplex<f64>>, tensor<3xf64>) {
  %x = stablehlo.constant dense<[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]> : tensor<3xcomplex<f64>>
  %f = stablehlo.fft %x, type = FFT, length = [3] : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
  %h = stablehlo.constant dense<[(6.0, 0.0), (-1.5, 0.8660254037844386)]> : tensor<2xcomplex<f64>>
  %i = stablehlo.fft %h, type = IRFFT, length = [3] : (tensor<2xcomplex<f64>>) -> tensor<3xf64>
  return %f, %i : tensor<3xcomplex<f64>>, tensor<3xf64>
}");
    let h = 0.75f64.sqrt();
    let want = [(6.0, 0.0), (-1.5, h), (-1.5, -h)];
    for (got, want) in r[0].to_complex_vec().iter().zip(want) {
        assert!(
            (got.0 - want.0).abs() < 1e-15 && (got.1 - want.1).abs() < 1e-15,
            "{got:?}"
        );
    }
    assert_eq!(r[0].to_complex_vec()[0], (6.0, 0.0));
    for (got, want) in r[1].to_f64_vec().iter().zip([1.0, 2.0, 3.0]) {
        assert!((got - want).abs() < 1e-15, "{got}");
    }
}
