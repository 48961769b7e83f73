//! Unit tests of the spec's element types and small syntax: `i2`/`ui2` and
//! the f8/f6/f4 names, `get_tuple_element %t[k]`, `algorithm = <...>`,
//! convert from complex to real, `interpreter.print` and `interpreter.probe`.

use super::{lower_module, mlir_element_type, parse_stablehlo, print_module, read_check_programs};
use crate::hlo::{ConstantData, DotAlgorithm, ElementType, Module, Opcode};

fn read(text: &str) -> Module {
    let mut v = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn constant(m: &Module) -> (ElementType, ConstantData) {
    let c = m
        .entry_computation()
        .instructions
        .iter()
        .find(|i| i.opcode == Opcode::Constant)
        .expect("a constant");
    (
        c.shape.as_array().expect("an array").dtype,
        c.attrs.constant.clone().expect("constant data"),
    )
}

#[test]
fn narrow_types_read_with_their_values_and_print_back() {
    let f = |ty: &str, vals: &str| {
        read(&format!(
            "func.func @main() -> tensor<4x{ty}> {{\n  %0 = stablehlo.constant dense<{vals}> : tensor<4x{ty}>\n  return %0 : tensor<4x{ty}>\n}}\n"
        ))
    };
    let (t, d) = constant(&f("i2", "[-2, -1, 0, 1]"));
    assert_eq!(t, ElementType::S2);
    assert_eq!(d, ConstantData::Int(vec![-2, -1, 0, 1]));
    // a hexadecimal i2 is its bits: 0x3 is -1
    let (_, d) = constant(&f("i2", "[0x0, 0x1, 0x2, 0x3]"));
    assert_eq!(d, ConstantData::Int(vec![0, 1, -2, -1]));
    assert!(parse_stablehlo(
        "func.func @main() -> tensor<ui2> {\n  %0 = stablehlo.constant dense<4> : tensor<ui2>\n  return %0 : tensor<ui2>\n}\n"
    )
    .is_err());
    // f4E2M1FN: bits 0x7 and 0xF are +-6; 0.25 ties to even (0), 0.75 to 1
    let (t, d) = constant(&f("f4E2M1FN", "[0x07, 0x0F, 0.25, 0.75]"));
    assert_eq!(t, ElementType::F4E2M1Fn);
    assert_eq!(d, ConstantData::Float(vec![6.0, -6.0, 0.0, 1.0]));
    // f8E4M3FNUZ has no -0; f8E8M0FNU rounds 3 (a tie) up to 4
    let (_, d) = constant(&f("f8E4M3FNUZ", "[-0.0, 0x7F, 0xFF, 0x01]"));
    assert_eq!(
        d,
        ConstantData::Float(vec![0.0, 240.0, -240.0, 2f64.powi(-10)])
    );
    let (_, d) = constant(&f("f8E8M0FNU", "[1.0, 3.0, 2.9, 0x00]"));
    assert_eq!(d, ConstantData::Float(vec![1.0, 4.0, 2.0, 2f64.powi(-127)]));
    for (t, name) in [
        (ElementType::S2, "i2"),
        (ElementType::U2, "ui2"),
        (ElementType::F8E3M4, "f8E3M4"),
        (ElementType::F8E4M3B11Fnuz, "f8E4M3B11FNUZ"),
        (ElementType::F6E2M3Fn, "f6E2M3FN"),
        (ElementType::F8E8M0Fnu, "f8E8M0FNU"),
    ] {
        assert_eq!(mlir_element_type(t).unwrap(), name);
    }
}

#[test]
fn the_new_types_are_not_lowered_for_compiled_backends() {
    let m = read(
        "func.func @main(%x: tensor<2xf6E3M2FN>) -> tensor<2xf6E3M2FN> {\n  \
         %0 = stablehlo.add %x, %x : tensor<2xf6E3M2FN>\n  return %0 : tensor<2xf6E3M2FN>\n}\n",
    );
    let e = lower_module(&m).unwrap_err().to_string();
    assert!(e.contains("f6e3m2fn"), "{e}");
}

#[test]
fn get_tuple_element_reads_its_index_in_brackets() {
    let m = read(
        "func.func @main(%a: tensor<2xf32>, %b: tensor<i64>) -> tensor<i64> {\n  \
         %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i64>>\n  \
         %1 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<i64>>) -> tensor<i64>\n  \
         return %1 : tensor<i64>\n}\n",
    );
    let e = m.entry_computation();
    let root = e.instr(e.root);
    // element 1 of the tuple: `%b`, the second parameter
    let picked = match root.opcode {
        Opcode::GetTupleElement => {
            assert_eq!(root.attrs.index, Some(1), "{m}");
            e.instr(e.instr(root.operands[0]).operands[1])
        }
        _ => root,
    };
    assert_eq!(picked.attrs.parameter_number, Some(1), "{m}");
}

#[test]
fn the_pretty_dot_algorithm_reads_as_xlas() {
    let m = read(
        "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {\n  \
         %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], \
         algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, \
         lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, \
         allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n  \
         return %0 : tensor<2x2xf32>\n}\n",
    );
    let e = m.entry_computation();
    let dot = e.instr(e.root);
    assert_eq!(
        DotAlgorithm::of(&dot.attrs),
        Ok(Some(DotAlgorithm::Tf32Tf32F32X3))
    );
}

#[test]
fn convert_from_complex_to_real_takes_the_real_part() {
    let m = read(
        "func.func @main(%x: tensor<3xcomplex<f64>>) -> tensor<3xi1> {\n  \
         %0 = stablehlo.convert %x : (tensor<3xcomplex<f64>>) -> tensor<3xi1>\n  \
         return %0 : tensor<3xi1>\n}\n",
    );
    let e = m.entry_computation();
    let root = e.instr(e.root);
    assert_eq!(root.opcode, Opcode::Convert);
    let re = e.instr(root.operands[0]);
    assert_eq!(re.opcode, Opcode::Real, "{m}");
    assert_eq!(re.shape.as_array().unwrap().dtype, ElementType::F64);
}

#[test]
fn print_is_nothing_and_a_probe_is_its_operand() {
    let text = "func.func @main() {\n  \
        %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n  \
        interpreter.print %0 : tensor<2xi64>\n  \
        %1 = interpreter.probe %0, probe_id = \"p/0\" : tensor<2xi64>\n  \
        %2 = stablehlo.add %1, %1 : tensor<2xi64>\n  \
        check.expect_serialized_eq %1, probe_id = \"p/0\" : tensor<2xi64>\n  \
        check.expect_serialized_eq %2, probe_id = \"p/0\", iter = 0 : tensor<2xi64>\n  \
        func.return\n}\n";
    let p = read_check_programs(text).unwrap();
    assert_eq!(p[0].checks.len(), 2);
    // the probed value is the constant itself
    let e = p[0].module.entry_computation();
    let root = e.instr(e.root);
    let expected = e.instr(root.operands[p[0].checks[1].expected]);
    assert_eq!(expected.opcode, Opcode::Constant, "{}", p[0].module);
    // iteration 1 of a probe that runs once, and an unknown probe, are errors
    let bad = text.replace("iter = 0", "iter = 1");
    let e = read_check_programs(&bad).unwrap_err().to_string();
    assert!(e.contains("no iteration 1"), "{e}");
    let bad = text.replace("probe_id = \"p/0\", iter", "probe_id = \"q\", iter");
    assert!(read_check_programs(&bad).is_err());
}

#[test]
fn a_probe_in_a_loop_body_is_read_by_iteration() {
    let text = "func.func @main() {\n  \
        %i0 = stablehlo.constant dense<0> : tensor<i64>\n  \
        %one = stablehlo.constant dense<1> : tensor<i64>\n  \
        %two = stablehlo.constant dense<2> : tensor<i64>\n  \
        %three = stablehlo.constant dense<3> : tensor<i64>\n  \
        %r0, %r1 = stablehlo.while(%a = %i0, %s = %i0) : tensor<i64>, tensor<i64>\n  \
        cond {\n    \
          %c = stablehlo.compare LT, %a, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>\n    \
          stablehlo.return %c : tensor<i1>\n  \
        } do {\n    \
          %n = stablehlo.add %s, %two : tensor<i64>\n    \
          %p = interpreter.probe %n, probe_id = \"it\" : tensor<i64>\n    \
          %m = stablehlo.add %a, %one : tensor<i64>\n    \
          %q = interpreter.probe %m, probe_id = \"count\" : tensor<i64>\n    \
          stablehlo.return %q, %p : tensor<i64>, tensor<i64>\n  \
        }\n  \
        check.expect_serialized_eq %two, probe_id = \"it\", iter = 0 : tensor<i64>\n  \
        check.expect_serialized_eq %r1, probe_id = \"it\", iter = 2 : tensor<i64>\n  \
        check.expect_serialized_eq %two, probe_id = \"count\", iter = 1 : tensor<i64>\n  \
        func.return\n}\n";
    let p = read_check_programs(text).unwrap();
    assert_eq!(p[0].checks.len(), 3);
    let leaves = crate::reference::evaluate(&p[0].module, &[]).unwrap();
    // run 0 of `it` is 2, run 2 is 6 (the loop's last value); run 1 of
    // `count`, a second probe in the same loop, is 2
    for (c, want) in p[0].checks.iter().zip([2, 6, 2]) {
        assert_eq!(leaves[c.actual].get_i128(0), want);
        assert_eq!(leaves[c.expected].get_i128(0), want, "{}", p[0].module);
    }
}

#[test]
fn the_new_types_print_and_read_back_the_same() {
    let m = read(
        "func.func @main() -> (tensor<3xi2>, tensor<3xf4E2M1FN>, tensor<2xf8E8M0FNU>) {\n  \
         %0 = stablehlo.constant dense<[-2, 1, -1]> : tensor<3xi2>\n  \
         %1 = stablehlo.constant dense<[-6.0, 0.5, 1.5]> : tensor<3xf4E2M1FN>\n  \
         %2 = stablehlo.constant dense<[0.25, 1024.0]> : tensor<2xf8E8M0FNU>\n  \
         return %0, %1, %2 : tensor<3xi2>, tensor<3xf4E2M1FN>, tensor<2xf8E8M0FNU>\n}\n",
    );
    let text = print_module(&m).unwrap();
    assert!(
        text.contains("tensor<3xi2>") && text.contains("f4E2M1FN"),
        "{text}"
    );
    assert_eq!(read(&text), m, "{text}");
}
