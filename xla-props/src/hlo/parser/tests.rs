//! Unit tests of the parser: accepted forms and every class of bad input.

use super::*;
use crate::hlo::{CompId, ConstantData, InstrId, Module, Opcode, PadDim, SliceDim};

fn ok(src: &str) -> Module {
    parse_module(src).unwrap_or_else(|e| panic!("{}", e.render("test", src)))
}

fn err(src: &str) -> (usize, usize, String) {
    match parse_module(src) {
        Ok(m) => panic!("accepted: {m:?}"),
        Err(e) => (e.line, e.col, e.message),
    }
}

/// A module whose entry computation is `body` (instruction lines).
fn entry(body: &str) -> String {
    format!("HloModule m\nENTRY e {{\n{body}\n}}\n")
}

#[test]
fn empty_file() {
    assert_eq!(
        err(""),
        (1, 1, "expected `HloModule`, found end of file".into())
    );
    assert_eq!(err("  // only a comment\n").0, 2);
}

#[test]
fn header_without_computations() {
    assert_eq!(
        err("HloModule m\n"),
        (2, 1, "module has no computations".into())
    );
}

#[test]
fn deeply_nested_tuple_shape_is_an_error_not_a_stack_overflow() {
    let src = format!(
        "HloModule m\nENTRY e {{\n  ROOT t = {}\n}}\n",
        "(".repeat(100_000)
    );
    let (line, col, msg) = err(&src);
    assert_eq!((line, col), (3, 12 + MAX_NESTING));
    assert_eq!(msg, format!("nesting deeper than {MAX_NESTING} levels"));
}

#[test]
fn deeply_nested_operand_instructions_are_bounded() {
    let mut nested = "f32[] parameter(0)".to_string();
    for _ in 0..1_000 {
        nested = format!("f32[] negate({nested})");
    }
    let src = entry(&format!("  ROOT r = f32[] negate({nested})"));
    assert_eq!(
        err(&src).2,
        format!("instructions nested deeper than {MAX_OPERAND_NESTING} levels")
    );
}

#[test]
fn tuple_constant_at_the_nesting_limit() {
    // the deepest tuple shape allowed, with a constant of that shape, on a
    // test thread's small stack
    let depth = MAX_NESTING - 1;
    let shape = format!("{}f32[]{}", "(".repeat(depth), ")".repeat(depth));
    let value = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
    let m = ok(&entry(&format!("  ROOT c = {shape} constant({value})")));
    let text = crate::hlo::print_module(&m);
    assert_eq!(ok(&text), m);
    let deeper = format!("{}f32[]{}", "(".repeat(depth + 2), ")".repeat(depth + 2));
    assert!(err(&entry(&format!("  ROOT c = {deeper} constant(1)")))
        .2
        .starts_with("nesting deeper"));
}

#[test]
fn deeply_nested_literal_is_bounded_by_rank() {
    // rank 100k: the literal's nesting is limited, not the stack
    let dims = vec!["1"; 100_000].join(",");
    let src = entry(&format!(
        "  ROOT c = f32[{dims}] constant({}1{})",
        "{".repeat(100_000),
        "}".repeat(100_000)
    ));
    assert!(err(&src).2.starts_with("nesting deeper than"));
}

#[test]
fn deeply_nested_verbatim_attribute_is_fine() {
    let value = format!("{}{}", "{".repeat(100_000), "}".repeat(100_000));
    let m = ok(&entry(&format!(
        "  ROOT p = f32[] parameter(0), backend_config={value}"
    )));
    assert_eq!(m.computations[0].instructions[0].attrs.other[0].1, value);
}

#[test]
fn a_million_operands() {
    let ops = vec!["p"; 1_000_000].join(", ");
    let m = ok(&entry(&format!(
        "  p = f32[] parameter(0)\n  ROOT t = () tuple({ops})"
    )));
    let c = m.entry_computation();
    assert_eq!(c.instr(c.root).operands.len(), 1_000_000);
    assert!(c.instr(c.root).operands.iter().all(|&o| o == InstrId(0)));
}

#[test]
fn binary_garbage() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let e = parse_module_bytes(&bytes).unwrap_err();
    // byte 0x80 at offset 128 is the first invalid UTF-8
    assert_eq!(e.message, "invalid utf-8 byte 0x80");
    let text = String::from_utf8_lossy(&bytes[..128]);
    let lines = text.matches('\n').count();
    assert_eq!(e.line, lines + 1);
    // ASCII-only garbage gets a syntax error
    let ascii: Vec<u8> = (0..10_000u32).map(|k| (k * 7919 % 128) as u8).collect();
    let e = parse_module_bytes(&ascii).unwrap_err();
    assert!(
        e.message.starts_with("expected `HloModule`"),
        "{}",
        e.message
    );
}

#[test]
fn invalid_utf8_reports_the_first_bad_byte() {
    let line3 = "  ROOT p = f32[] parameter(0), metadata={op_name=\"é";
    let mut src = format!("HloModule m\nENTRY e {{\n{line3}").into_bytes();
    src.extend_from_slice(b"\xff\xfe\"}\n}\n");
    let e = parse_module_bytes(&src).unwrap_err();
    assert_eq!(e.message, "invalid utf-8 byte 0xff");
    // columns count characters (é is one)
    assert_eq!((e.line, e.col), (3, line3.chars().count() + 1));
}

#[test]
fn dims_past_u64_and_i64() {
    let (l, c, m) = err(&entry(
        "  ROOT p = f32[2,99999999999999999999] parameter(0)",
    ));
    assert_eq!((l, c, m.as_str()), (3, 18, "a dimension size is too large"));
    let (l, c, m) = err(&entry("  ROOT p = f32[18446744073709551615] parameter(0)"));
    assert_eq!((l, c, m.as_str()), (3, 16, "dimension size is too large"));
    assert_eq!(
        err(&entry(
            "  ROOT p = f32[] get-tuple-element(p), index=99999999999999999999"
        ))
        .2,
        "an index is too large"
    );
    assert_eq!(
        err(&entry("  ROOT p = f32[] parameter(-1)")).2,
        "parameter number must not be negative"
    );
}

#[test]
fn huge_numbers_in_constants() {
    assert_eq!(
        err(&entry("  ROOT c = f32[] constant(1e999)")).2,
        "float `1e999` is out of range"
    );
    assert_eq!(
        err(&entry("  ROOT c = s8[] constant(128)")).2,
        "integer 128 is out of range for s8"
    );
    assert_eq!(
        err(&entry(&format!(
            "  ROOT c = s64[] constant({})",
            "9".repeat(60)
        )))
        .2,
        "integer is out of range for s64"
    );
    let m = ok(&entry(
        "  ROOT c = u64[2] constant({18446744073709551615, 0})",
    ));
    let c = m.entry_computation();
    assert_eq!(
        c.instr(c.root).attrs.constant,
        Some(ConstantData::Int(vec![u64::MAX as i128, 0]))
    );
}

#[test]
fn unterminated_string_brace_comment_and_computation() {
    assert_eq!(
        err(&entry(
            "  ROOT p = f32[] parameter(0), metadata={op_name=\"abc"
        )),
        (3, 50, "unterminated string".into())
    );
    assert_eq!(
        err("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=1\n"),
        (3, 41, "unterminated bracket".into())
    );
    assert_eq!(
        err("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n"),
        (2, 7, "computation `e` is not closed by `}`".into())
    );
    assert_eq!(
        err("HloModule m /* never closed\n"),
        (1, 13, "unterminated comment".into())
    );
    assert_eq!(
        err(&entry(
            "  ROOT p = f32[] parameter(0), backend_config=\"a\\"
        ))
        .2,
        "unterminated string"
    );
}

#[test]
fn unknown_opcode_and_element_type() {
    assert_eq!(
        err(&entry(
            "  x = f32[] parameter(0)\n  ROOT y = f32[] frobnicate(x)"
        )),
        (4, 18, "unknown opcode `frobnicate`".into())
    );
    assert_eq!(
        err(&entry("  ROOT y = f31[] parameter(0)")),
        (3, 12, "unknown element type `f31`".into())
    );
}

#[test]
fn semantic_errors_name_and_point_at_the_culprit() {
    assert_eq!(
        err(&entry(
            "  x = f32[] parameter(0)\n  ROOT y = f32[] add(x, z)"
        )),
        (4, 25, "instruction `y` uses undefined operand `z`".into())
    );
    assert_eq!(
        err(&entry("  x = f32[] parameter(0)\n  x = f32[] parameter(1)")),
        (
            4,
            3,
            "duplicate instruction name `x` in computation `e`".into()
        )
    );
    assert_eq!(
        err("HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT p = f32[] parameter(0)\n}\n"),
        (5, 1, "second entry computation `b` (the first is `a`)".into())
    );
    assert_eq!(
        err("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT p = f32[] parameter(0)\n}\n"),
        (5, 1, "duplicate computation name `c`".into())
    );
    assert_eq!(
        err(&entry(
            "  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=%nowhere"
        )),
        (
            4,
            36,
            "instruction `c` refers to undefined computation `nowhere`".into()
        )
    );
    assert_eq!(
        err(&entry(
            "  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] parameter(1)"
        )),
        (
            4,
            8,
            "computation `e` has a second ROOT `q` (the first is `p`)".into()
        )
    );
    assert_eq!(
        err("HloModule m\nENTRY e {\n}\n"),
        (2, 7, "computation `e` has no instructions".into())
    );
}

#[test]
fn duplicate_typed_attribute() {
    let line = "  ROOT b = f32[2] broadcast(p), dimensions={0}, dimensions={0}";
    let col = line.rfind("dimensions").unwrap() + 1;
    assert_eq!(
        err(&entry(&format!("  p = f32[2] parameter(0)\n{line}"))),
        (4, col, "duplicate attribute `dimensions`".into())
    );
}

#[test]
fn element_count_must_match_the_shape() {
    assert_eq!(
        err(&entry("  ROOT c = f32[2,2] constant({{1, 2}, {3}})")),
        (
            3,
            39,
            "dimension 1 of the constant has 1 elements, expected 2".into()
        )
    );
    assert_eq!(
        err(&entry("  ROOT c = f32[2] constant({1, 2, 3})")).2,
        "too many elements in dimension 0 of the constant (expected 2)"
    );
    assert_eq!(
        err(&entry("  ROOT c = f32[] constant({1})")),
        (3, 27, "expected a number, found `{`".into())
    );
}

#[test]
fn forward_references_and_missing_root() {
    let m = ok("HloModule m\nENTRY e {\n  y = f32[] call(x), to_apply=later\n  x = f32[] parameter(0)\n}\nlater {\n  ROOT a = f32[] parameter(0)\n}\n");
    assert_eq!(m.entry, CompId(0));
    let e = m.entry_computation();
    // without ROOT, the last instruction is the root (as in XLA)
    assert_eq!(e.root, InstrId(1));
    assert_eq!(e.instructions[0].operands, vec![InstrId(1)]);
    assert_eq!(e.instructions[0].attrs.to_apply, Some(CompId(1)));
}

#[test]
fn header_tables_signatures_and_verbatim_attributes() {
    let src = r#"HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0}, /*index=1*/s32[])->f32[2]{0}}

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=2}
StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY %main.3 (Arg_0.1: f32[2], p: (s32[], token[])) -> f32[2] {
  %Arg_0.1 = f32[2]{0:T(128)} parameter(0), metadata={op_name="x, y" stack_frame_id=1}, sharding={replicated}
  ROOT %n = f32[2]{0} negate(f32[2]{0} %Arg_0.1), backend_config={"a":{"b":[1,2]}}, frontend_attributes={_xla="1"}, control-predecessors={%Arg_0.1}
}, execution_thread="main"
"#;
    let m = ok(src);
    assert_eq!(m.name, "jit_f");
    assert_eq!(m.attrs[0], ("is_scheduled".into(), "true".into()));
    assert_eq!(m.attrs[1].1, "{(f32[2]{0}, /*index=1*/s32[])->f32[2]{0}}");
    let c = m.entry_computation();
    assert_eq!(c.name, "main.3");
    assert_eq!(
        c.other,
        vec![("execution_thread".into(), "\"main\"".into())]
    );
    let p = &c.instructions[0];
    assert_eq!(
        p.shape
            .as_array()
            .unwrap()
            .layout
            .as_ref()
            .unwrap()
            .extra
            .as_deref(),
        Some("T(128)")
    );
    assert_eq!(
        p.attrs.other,
        vec![
            (
                "metadata".into(),
                "{op_name=\"x, y\" stack_frame_id=1}".into()
            ),
            ("sharding".into(), "{replicated}".into())
        ]
    );
    let n = &c.instructions[1];
    assert_eq!(
        n.attrs
            .other
            .iter()
            .map(|o| o.0.as_str())
            .collect::<Vec<_>>(),
        [
            "backend_config",
            "frontend_attributes",
            "control-predecessors"
        ]
    );
    assert_eq!(n.attrs.other[0].1, r#"{"a":{"b":[1,2]}}"#);
}

#[test]
fn typed_attributes() {
    let m = ok(&entry(
        "  p = f32[1,8,8,3] parameter(0)\n  k = f32[3,3,3,4] parameter(1)\n  \
         c = f32[1,4,8,4] convolution(p, k), window={size=3x3 stride=2x1 pad=1_1x-1_2 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_o01i->f01b, feature_group_count=1, batch_group_count=1, operand_precision={default,high}\n  \
         s = f32[1,2,8,3] slice(p), slice={[0:1], [0:8:4], [0:8], [0:3:1]}\n  \
         z = f32[] constant(0)\n  \
         ROOT q = f32[3,9,8,3] pad(p, z), padding=1_1_0x0_1_0x0_0_0x0_0_0",
    ));
    let c = m.entry_computation();
    let conv = &c.instructions[2].attrs;
    let w = conv.window.as_ref().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(
        (
            w[0].size,
            w[0].stride,
            w[0].pad_low,
            w[0].pad_high,
            w[0].base_dilation,
            w[0].window_dilation,
            w[0].reversal
        ),
        (3, 2, 1, 1, 1, 2, false)
    );
    assert_eq!((w[1].pad_low, w[1].pad_high, w[1].reversal), (-1, 2, true));
    let d = conv.conv_dims.as_ref().unwrap();
    assert_eq!(
        (d.input_batch, d.input_feature, &d.input_spatial[..]),
        (0, 3, &[1, 2][..])
    );
    assert_eq!(
        (
            d.kernel_input_feature,
            d.kernel_output_feature,
            &d.kernel_spatial[..]
        ),
        (3, 0, &[1, 2][..])
    );
    assert_eq!(
        (d.output_batch, d.output_feature, &d.output_spatial[..]),
        (3, 0, &[1, 2][..])
    );
    assert_eq!(conv.precision, Some(vec!["default".into(), "high".into()]));
    let s = c.instructions[3].attrs.slice.as_ref().unwrap();
    assert_eq!(
        s[1],
        SliceDim {
            start: 0,
            limit: 8,
            stride: 4
        }
    );
    assert_eq!(s[0].stride, 1);
    let pad = c.instructions[5].attrs.padding.as_ref().unwrap();
    assert_eq!(
        pad[0],
        PadDim {
            low: 1,
            high: 1,
            interior: 0
        }
    );
    assert_eq!(
        pad[1],
        PadDim {
            low: 0,
            high: 1,
            interior: 0
        }
    );
    assert_eq!(
        err(&entry(
            "  ROOT c = f32[] convolution(c, c), dim_labels=b01f_01io->b0f"
        ))
        .2,
        "dim_labels have different numbers of spatial dimensions"
    );
    assert!(err(&entry(
        "  ROOT c = f32[] convolution(c, c), dim_labels=b01f_01io->b0x"
    ))
    .2
    .starts_with("malformed output dim labels"));
    assert!(err(&entry(
        "  ROOT c = f32[] convolution(c, c), window={size=3x3 pad=1_1}"
    ))
    .2
    .starts_with("window field `pad` has 1 dimensions"));
    assert_eq!(
        err(&entry("  ROOT c = pred[] compare(c, c), direction=XX")).2,
        "unknown comparison direction `XX`"
    );
}

#[test]
fn constants_of_every_kind() {
    let m = ok(&entry(
        "  a = f32[2,3] constant({ {1, -0, 1.5e-7}, {nan, -nan, -inf} })\n  \
         b = pred[3] constant({true, false, 1})\n  \
         c = (f32[], (s32[2], u8[0])) constant((f32[] inf, (s32[2] {1, 2}, u8[0] {})))\n  \
         d = c64[2] constant({(1, -2), (nan, 0.5)})\n  \
         e = f32[3] constant(7)\n  \
         ROOT f = bf16[2,0] constant({ {}, {} })",
    ));
    let c = m.entry_computation();
    let Some(ConstantData::Float(a)) = &c.instructions[0].attrs.constant else {
        panic!()
    };
    assert_eq!(a[0], 1.0);
    assert!(a[1] == 0.0 && a[1].is_sign_negative());
    // held rounded to the constant's type (f32), as XLA's literal holds it
    assert_eq!(a[2], f64::from(1.5e-7f32));
    assert!(a[3].is_nan() && a[3].is_sign_positive());
    assert!(a[4].is_nan() && a[4].is_sign_negative());
    assert_eq!(a[5], f64::NEG_INFINITY);
    assert_eq!(
        c.instructions[1].attrs.constant,
        Some(ConstantData::Pred(vec![true, false, true]))
    );
    assert_eq!(
        c.instructions[4].attrs.constant,
        Some(ConstantData::Float(vec![7.0; 3]))
    );
    assert_eq!(
        c.instructions[5].attrs.constant,
        Some(ConstantData::Float(vec![]))
    );
}

#[test]
fn single_value_fill_is_bounded() {
    assert!(
        err(&entry("  ROOT c = f32[4611686018427387904,0] constant(0)"))
            .2
            .starts_with("a single value can fill from 1 to")
    );
    assert!(err(&entry("  ROOT c = f32[100000,100000] constant(0)"))
        .2
        .starts_with("a single value can fill from 1 to"));
}

#[test]
fn shapes_left_out_are_inferred() {
    let m = ok(&entry(
        "  ROOT t = tuple(s, c, g)\n  s = add(a, b)\n  c = compare(a, b), direction=LT\n  \
         g = get-tuple-element(w), index=1\n  w = while(u), condition=e, body=e\n  \
         u = (f32[], s32[2]{0}) parameter(2)\n  a = f32[3]{0} parameter(0)\n  b = f32[3]{0} parameter(1)",
    ));
    let c = m.entry_computation();
    assert_eq!(
        c.instr(c.root).shape.to_string(),
        "(f32[3]{0}, pred[3]{0}, s32[2]{0})"
    );
    assert_eq!(
        err(&entry("  ROOT d = dot(a, a)\n  a = f32[3] parameter(0)")),
        (
            3,
            8,
            "cannot infer the shape of `d` (dot); write it explicitly".into()
        )
    );
    assert_eq!(
        err(&entry("  ROOT x = add(y, y)\n  y = negate(x)")).2,
        "cannot infer the shape of `y`: it depends on itself"
    );
}

#[test]
fn a_long_chain_of_inferred_shapes_is_linear() {
    // written last-to-first, so every shape depends on one further down
    let n = 100_000;
    let mut body = String::new();
    for k in 0..n {
        body.push_str(&format!("  x{k} = negate(x{})\n", k + 1));
    }
    body.push_str(&format!("  x{n} = f32[] parameter(0)"));
    let m = ok(&entry(&body));
    assert!(m
        .entry_computation()
        .instructions
        .iter()
        .all(|i| i.shape.to_string() == "f32[]"));
}

#[test]
fn mismatched_bracket_in_a_verbatim_attribute() {
    let line = "  ROOT p = f32[] parameter(0), backend_config={a[1)}";
    let col = line.rfind(')').unwrap() + 1;
    assert_eq!(
        err(&entry(line)),
        (3, col, "expected `]` to close `[`, found `)`".into())
    );
}

#[test]
fn unknown_attributes_are_located_errors_and_xla_ones_are_kept() {
    let line = "  ROOT p = f32[] parameter(0), frobnicate=1";
    let col = line.find("frobnicate").unwrap() + 1;
    assert_eq!(
        err(&entry(line)),
        (
            3,
            col,
            "unknown attribute `frobnicate` of `parameter`".into()
        )
    );
    // an attribute of another opcode is unknown here too
    let line = "  ROOT p = f32[] parameter(0), sparsity=L.0@2:4";
    assert!(err(&entry(line))
        .2
        .starts_with("unknown attribute `sparsity`"));
    let m = ok(&entry(
        "  ROOT p = f32[] parameter(0), parameter_replication={true}, statistics_viz={}, result_accuracy={tolerance={atol=0}}",
    ));
    let names: Vec<&str> = m.computations[0].instructions[0]
        .attrs
        .other
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(
        names,
        ["parameter_replication", "statistics_viz", "result_accuracy"]
    );
}

#[test]
fn a_module_name_may_end_with_a_colon() {
    // xla/tests/sample_text_test.cc writes `HloModule axpy_module:`
    let m = ok("HloModule axpy_module:\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
    assert_eq!(m.name, "axpy_module");
}

#[test]
fn inline_computations_are_read_and_called() {
    // the form of xla/hlo/transforms/simplifiers/hlo_dce_test.cc
    let m = ok(
        "HloModule main\n\nENTRY main {\n  arg.0 = s32[] parameter(0)\n  \
         call.0 = (s32[]) call(arg.0), to_apply={\n    arg.0 = s32[] parameter(0)\n    \
         ROOT tuple.0 = tuple(arg.0)\n  }\n  gte.0 = get-tuple-element(call.0), index=0\n  \
         ROOT call.1 = (s32[]) call(gte.0), to_apply={\n    arg.0 = s32[] parameter(0)\n    \
         zero.0 = s32[] constant(0)\n    ROOT tuple.0 = tuple(zero.0)\n  }\n}\n",
    );
    assert_eq!(m.computations.len(), 3);
    let entry = m.entry_computation();
    assert_eq!(entry.name, "main");
    let calls: Vec<_> = entry
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Call)
        .collect();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].attrs.to_apply, calls[1].attrs.to_apply);
    // the second inline computation returns the constant zero
    let callee = &m.computations[calls[1].attrs.to_apply.unwrap().index()];
    assert_eq!(callee.instructions.len(), 3);
    // attributes after an inline computation still belong to its user
    let m = ok("HloModule m\nENTRY e {\n  a = s32[] parameter(0)\n  \
         ROOT c = (s32[]) call(a), to_apply={\n    p = s32[] parameter(0)\n    ROOT t = tuple(p)\n  }, backend_config=1\n}\n");
    let e = m.entry_computation();
    let c = e.instr(e.root);
    assert_eq!(
        c.attrs.other,
        vec![("backend_config".to_string(), "1".to_string())]
    );
}

/// `jnp.sort`/`argsort` comparators carry `order=TOTAL`, `lax.top_k`
/// `is_stable=true`: both parse with their meaning; a wrong value, a
/// contradiction and an unknown attribute stay errors.
#[test]
fn compare_order_total_and_topk_is_stable_parse_with_their_meaning() {
    use crate::hlo::ComparisonType;
    let cmp = |attrs: &str| {
        format!(
            "HloModule m\nENTRY e {{\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  \
             ROOT c = pred[4] compare(a, b), direction=LT{attrs}\n}}\n"
        )
    };
    let ty = |m: &Module| m.computations[0].instructions[2].attrs.comparison_type;
    assert_eq!(
        ty(&ok(&cmp(", order=TOTAL"))),
        Some(ComparisonType::TotalOrder)
    );
    assert_eq!(
        ty(&ok(&cmp(", type=TOTALORDER, order=TOTAL"))),
        Some(ComparisonType::TotalOrder)
    );
    assert_eq!(
        ty(&ok(&cmp(", order=PARTIAL"))),
        Some(ComparisonType::Float)
    );
    assert!(err(&cmp(", order=SOMETIMES"))
        .2
        .contains("unknown comparison order"));
    assert!(err(&cmp(", type=FLOAT, order=TOTAL"))
        .2
        .contains("conflicts"));
    assert!(err(&cmp(", ordering=TOTAL"))
        .2
        .starts_with("unknown attribute `ordering`"));
    // the printed form keeps the meaning
    let printed = ok(&cmp(", order=TOTAL")).to_string();
    assert!(printed.contains("type=TOTALORDER"), "{printed}");
    let topk = |attrs: &str| {
        format!(
            "HloModule m\nENTRY e {{\n  x = f32[2,5] parameter(0)\n  \
             ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true{attrs}\n}}\n"
        )
    };
    let m = ok(&topk(", is_stable=true"));
    assert!(m.computations[0].instructions[1].attrs.is_stable);
    assert!(
        !ok(&topk("")).computations[0].instructions[1]
            .attrs
            .is_stable
    );
    assert!(err(&topk(", is_stable=maybe")).2.contains("true"));
    assert!(err(&topk(", stable=true"))
        .2
        .starts_with("unknown attribute `stable`"));
}
