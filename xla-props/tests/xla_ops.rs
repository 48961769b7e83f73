//! One module per lowered op family, run on xla-cpu and checked against
//! hand-worked values. Skips without the plugin unless `CI` is set.

mod common;

use xla_props::backend::xla::XlaBackend;
use xla_props::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData,
    ConvDims, ElementType, InstrId, Instruction, Module, Opcode, PadDim, ScatterDims, Shape,
    SliceDim, WindowDim,
};
use xla_props::literal::Literal;

use common::with;

use ElementType::{Pred, F16, F32, S32, U32};

fn arr(t: ElementType, dims: &[i64]) -> Shape {
    Shape::array(t, dims.to_vec())
}

fn lit(t: ElementType, dims: &[i64], values: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), values).unwrap()
}

fn instr(name: &str, op: Opcode, shape: Shape, operands: &[u32], attrs: Attrs) -> Instruction {
    let operands = operands.iter().map(|&k| InstrId(k)).collect();
    Instruction::with_attrs(name, op, shape, operands, attrs)
}

fn param(n: i64, shape: Shape) -> Instruction {
    instr(
        &format!("p{n}"),
        Opcode::Parameter,
        shape,
        &[],
        with(|t| t.parameter_number = Some(n)),
    )
}

fn comp(name: &str, instructions: Vec<Instruction>) -> Computation {
    let root = InstrId(instructions.len() as u32 - 1);
    Computation::new(name, instructions, root)
}

/// `main(p0..pn) = op(p0..pn)`; `callees` get CompIds 0.., main comes last.
fn single(
    op: Opcode,
    params: &[Shape],
    result: Shape,
    attrs: Attrs,
    callees: Vec<Computation>,
) -> Module {
    let mut instrs: Vec<Instruction> = params
        .iter()
        .enumerate()
        .map(|(k, s)| param(k as i64, s.clone()))
        .collect();
    let operands: Vec<u32> = (0..params.len() as u32).collect();
    instrs.push(instr("r", op, result, &operands, attrs));
    let mut computations = callees;
    computations.push(comp("main", instrs));
    Module {
        name: "m".into(),
        attrs: vec![],
        entry: CompId(computations.len() as u32 - 1),
        computations,
    }
}

fn scalar_fn(name: &str, t: ElementType, op: Opcode) -> Computation {
    comp(
        name,
        vec![
            param(0, Shape::scalar(t)),
            param(1, Shape::scalar(t)),
            instr("r", op, Shape::scalar(t), &[0, 1], Attrs::default()),
        ],
    )
}

fn compare_fn(name: &str, t: ElementType, d: ComparisonDirection) -> Computation {
    comp(
        name,
        vec![
            param(0, Shape::scalar(t)),
            param(1, Shape::scalar(t)),
            instr(
                "r",
                Opcode::Compare,
                Shape::scalar(Pred),
                &[0, 1],
                with(|t| t.direction = Some(d)),
            ),
        ],
    )
}

fn run(b: &XlaBackend, m: &Module, args: &[Literal]) -> Vec<Literal> {
    let exe = b.compile_module(m).unwrap_or_else(|e| panic!("{e}"));
    exe.run(args)
        .unwrap_or_else(|e| panic!("{e}\n{}", exe.mlir()))
}

/// The first output of `m` run on `b`, as f64 values.
fn values(b: &XlaBackend, m: &Module, args: &[Literal]) -> Vec<f64> {
    run(b, m, args)[0].to_f64_vec()
}

/// The first output of `m` run on `b` is `expected`.
#[track_caller]
fn assert_values(b: &XlaBackend, m: &Module, args: &[Literal], expected: &[f64]) {
    assert_eq!(values(b, m, args), expected.to_vec());
}

fn pad_dim(low: i64, high: i64, interior: i64) -> PadDim {
    PadDim {
        low,
        high,
        interior,
    }
}

fn slice_dim(start: i64, limit: i64, stride: i64) -> SliceDim {
    SliceDim {
        start,
        limit,
        stride,
    }
}

fn window(sizes: &[i64], strides: &[i64]) -> Vec<WindowDim> {
    sizes
        .iter()
        .zip(strides)
        .map(|(&s, &t)| WindowDim {
            stride: t,
            ..WindowDim::new(s)
        })
        .collect()
}

#[test]
fn compare_select_clamp() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::Compare,
        &[arr(F32, &[3]), arr(F32, &[3])],
        arr(Pred, &[3]),
        with(|t| {
            t.direction = Some(ComparisonDirection::Lt);
            t.comparison_type = Some(ComparisonType::TotalOrder);
        }),
        vec![],
    );
    let out = run(
        &b,
        &m,
        &[
            lit(F32, &[3], &[-0.0, 1.0, 2.0]),
            lit(F32, &[3], &[0.0, 1.0, 1.0]),
        ],
    );
    assert_eq!(out[0].to_i128_vec(), vec![1, 0, 0], "total order: -0 < +0");

    let m = single(
        Opcode::Select,
        &[arr(Pred, &[2]), arr(F32, &[2]), arr(F32, &[2])],
        arr(F32, &[2]),
        Attrs::default(),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[
            lit(Pred, &[2], &[1.0, 0.0]),
            lit(F32, &[2], &[1.0, 2.0]),
            lit(F32, &[2], &[3.0, 4.0]),
        ],
        &[1.0, 4.0],
    );

    let m = single(
        Opcode::Clamp,
        &[Shape::scalar(F32), arr(F32, &[3]), Shape::scalar(F32)],
        arr(F32, &[3]),
        Attrs::default(),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[
            Literal::scalar(F32, 0.0),
            lit(F32, &[3], &[-5.0, 0.5, 7.0]),
            Literal::scalar(F32, 1.0),
        ],
        &[0.0, 0.5, 1.0],
    );
}

#[test]
fn conversions() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::Convert,
        &[arr(F32, &[3])],
        arr(S32, &[3]),
        Attrs::default(),
        vec![],
    );
    let out = run(&b, &m, &[lit(F32, &[3], &[1.9, -1.9, 7.0])]);
    assert_eq!(
        out[0].to_i128_vec(),
        vec![1, -1, 7],
        "convert truncates toward zero"
    );

    let m = single(
        Opcode::BitcastConvert,
        &[arr(F32, &[1])],
        arr(U32, &[1]),
        Attrs::default(),
        vec![],
    );
    let out = run(&b, &m, &[lit(F32, &[1], &[1.0])]);
    assert_eq!(out[0].to_i128_vec(), vec![0x3f80_0000]);

    let m = single(
        Opcode::ReducePrecision,
        &[arr(F32, &[1])],
        arr(F32, &[1]),
        with(|t| {
            t.exponent_bits = Some(5);
            t.mantissa_bits = Some(10);
        }),
        vec![],
    );
    let out = run(&b, &m, &[lit(F32, &[1], &[0.1])]);
    assert_eq!(
        out[0].get_f64(0),
        0.0999755859375,
        "0.1 rounded to f16 precision"
    );
}

#[test]
fn shape_ops() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::Broadcast,
        &[arr(F32, &[2])],
        arr(F32, &[2, 3]),
        with(|t| t.dimensions = Some(vec![0])),
        vec![],
    );
    assert_eq!(
        values(&b, &m, &[lit(F32, &[2], &[1.0, 2.0])]),
        vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    );

    let m = single(
        Opcode::Transpose,
        &[arr(F32, &[2, 3])],
        arr(F32, &[3, 2]),
        with(|t| t.dimensions = Some(vec![1, 0])),
        vec![],
    );
    let x = lit(F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        values(&b, &m, std::slice::from_ref(&x)),
        vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );

    let m = single(
        Opcode::Reshape,
        &[arr(F32, &[2, 3])],
        arr(F32, &[3, 2]),
        Attrs::default(),
        vec![],
    );
    assert_eq!(values(&b, &m, std::slice::from_ref(&x)), x.to_f64_vec());

    let m = single(
        Opcode::Slice,
        &[arr(F32, &[2, 3])],
        arr(F32, &[1, 2]),
        with(|t| t.slice = Some(vec![slice_dim(1, 2, 1), slice_dim(0, 3, 2)])),
        vec![],
    );
    assert_eq!(values(&b, &m, std::slice::from_ref(&x)), vec![4.0, 6.0]);

    let m = single(
        Opcode::Concatenate,
        &[arr(F32, &[2]), arr(F32, &[1])],
        arr(F32, &[3]),
        with(|t| t.dimensions = Some(vec![0])),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[lit(F32, &[2], &[1.0, 2.0]), lit(F32, &[1], &[3.0])],
        &[1.0, 2.0, 3.0],
    );

    let m = single(
        Opcode::Pad,
        &[arr(F32, &[2]), Shape::scalar(F32)],
        arr(F32, &[5]),
        with(|t| t.padding = Some(vec![pad_dim(1, 1, 1)])),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[lit(F32, &[2], &[1.0, 2.0]), Literal::scalar(F32, 9.0)],
        &[9.0, 1.0, 9.0, 2.0, 9.0],
    );

    let m = single(
        Opcode::Reverse,
        &[arr(F32, &[3])],
        arr(F32, &[3]),
        with(|t| t.dimensions = Some(vec![0])),
        vec![],
    );
    assert_eq!(
        values(&b, &m, &[lit(F32, &[3], &[1.0, 2.0, 3.0])]),
        vec![3.0, 2.0, 1.0]
    );

    let m = single(
        Opcode::Iota,
        &[],
        arr(S32, &[2, 3]),
        with(|t| t.iota_dimension = Some(1)),
        vec![],
    );
    let out = run(&b, &m, &[]);
    assert_eq!(out[0].to_i128_vec(), vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn dynamic_slices() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::DynamicSlice,
        &[arr(F32, &[4]), Shape::scalar(S32)],
        arr(F32, &[2]),
        with(|t| t.dynamic_slice_sizes = Some(vec![2])),
        vec![],
    );
    let x = lit(F32, &[4], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        values(&b, &m, &[x.clone(), Literal::scalar(S32, 1.0)]),
        vec![2.0, 3.0]
    );
    assert_eq!(
        values(&b, &m, &[x.clone(), Literal::scalar(S32, 7.0)]),
        vec![3.0, 4.0],
        "start index clamps"
    );

    let m = single(
        Opcode::DynamicUpdateSlice,
        &[arr(F32, &[4]), arr(F32, &[2]), Shape::scalar(S32)],
        arr(F32, &[4]),
        Attrs::default(),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[x, lit(F32, &[2], &[8.0, 9.0]), Literal::scalar(S32, 2.0)],
        &[1.0, 2.0, 8.0, 9.0],
    );
}

#[test]
fn scatter_add() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::Scatter,
        &[arr(F32, &[4]), arr(S32, &[2, 1]), arr(F32, &[2])],
        arr(F32, &[4]),
        with(|t| {
            t.scatter_dims = Some(ScatterDims {
                update_window_dims: vec![],
                inserted_window_dims: vec![0],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
                ..ScatterDims::default()
            });
            t.to_apply = Some(CompId(0));
        }),
        vec![scalar_fn("add", F32, Opcode::Add)],
    );
    assert_values(
        &b,
        &m,
        &[
            lit(F32, &[4], &[1.0, 1.0, 1.0, 1.0]),
            lit(S32, &[2, 1], &[3.0, 3.0]),
            lit(F32, &[2], &[10.0, 5.0]),
        ],
        &[1.0, 1.0, 1.0, 16.0],
    );
}

#[test]
fn windows_map_and_convolution() {
    let Some(b) = common::xla_cpu() else { return };
    let m = single(
        Opcode::ReduceWindow,
        &[arr(F32, &[4]), Shape::scalar(F32)],
        arr(F32, &[3]),
        with(|t| {
            t.window = Some(window(&[2], &[1]));
            t.to_apply = Some(CompId(0));
        }),
        vec![scalar_fn("add", F32, Opcode::Add)],
    );
    assert_values(
        &b,
        &m,
        &[
            lit(F32, &[4], &[1.0, 2.0, 3.0, 4.0]),
            Literal::scalar(F32, 0.0),
        ],
        &[3.0, 5.0, 7.0],
    );

    // max-pool gradient: the source value goes to the max of each window.
    let m = single(
        Opcode::SelectAndScatter,
        &[arr(F32, &[4]), arr(F32, &[2]), Shape::scalar(F32)],
        arr(F32, &[4]),
        with(|t| {
            t.window = Some(window(&[2], &[2]));
            t.select = Some(CompId(0));
            t.scatter = Some(CompId(1));
        }),
        vec![
            compare_fn("ge", F32, ComparisonDirection::Ge),
            scalar_fn("add", F32, Opcode::Add),
        ],
    );
    assert_values(
        &b,
        &m,
        &[
            lit(F32, &[4], &[1.0, 5.0, 7.0, 2.0]),
            lit(F32, &[2], &[10.0, 20.0]),
            Literal::scalar(F32, 0.0),
        ],
        &[0.0, 10.0, 20.0, 0.0],
    );

    let m = single(
        Opcode::Map,
        &[arr(F32, &[2]), arr(F32, &[2])],
        arr(F32, &[2]),
        with(|t| {
            t.dimensions = Some(vec![0]);
            t.to_apply = Some(CompId(0));
        }),
        vec![scalar_fn("mul", F32, Opcode::Multiply)],
    );
    assert_values(
        &b,
        &m,
        &[lit(F32, &[2], &[2.0, 3.0]), lit(F32, &[2], &[4.0, 5.0])],
        &[8.0, 15.0],
    );

    // 1-D convolution, b0f_0io->b0f: [1,4,1] input, [2,1,1] kernel (1, 10).
    let m = single(
        Opcode::Convolution,
        &[arr(F32, &[1, 4, 1]), arr(F32, &[2, 1, 1])],
        arr(F32, &[1, 3, 1]),
        with(|t| {
            t.window = Some(window(&[2], &[1]));
            t.conv_dims = Some(ConvDims::feature_last(1));
        }),
        vec![],
    );
    assert_values(
        &b,
        &m,
        &[
            lit(F32, &[1, 4, 1], &[1.0, 2.0, 3.0, 4.0]),
            lit(F32, &[2, 1, 1], &[1.0, 10.0]),
        ],
        &[21.0, 32.0, 43.0],
    );
}

#[test]
fn control_flow_calls_and_fusions() {
    let Some(b) = common::xla_cpu() else { return };
    let negate = comp(
        "neg",
        vec![
            param(0, arr(F32, &[2])),
            instr("r", Opcode::Negate, arr(F32, &[2]), &[0], Attrs::default()),
        ],
    );
    let double = comp(
        "dbl",
        vec![
            param(0, arr(F32, &[2])),
            instr("r", Opcode::Add, arr(F32, &[2]), &[0, 0], Attrs::default()),
        ],
    );
    // pred conditional: true -> negate, false -> double
    let m = single(
        Opcode::Conditional,
        &[Shape::scalar(Pred), arr(F32, &[2]), arr(F32, &[2])],
        arr(F32, &[2]),
        with(|t| {
            t.branch_computations = vec![CompId(0), CompId(1)];
            t.pred_branches = true;
        }),
        vec![negate.clone(), double.clone()],
    );
    let x = lit(F32, &[2], &[1.0, 2.0]);
    assert_eq!(
        values(&b, &m, &[Literal::scalar(Pred, 1.0), x.clone(), x.clone()]),
        vec![-1.0, -2.0]
    );
    let out = run(&b, &m, &[Literal::scalar(Pred, 0.0), x.clone(), x.clone()]);
    assert_eq!(out[0].to_f64_vec(), vec![2.0, 4.0]);

    // indexed conditional: out-of-range index takes the last branch
    let m = single(
        Opcode::Conditional,
        &[Shape::scalar(S32), arr(F32, &[2]), arr(F32, &[2])],
        arr(F32, &[2]),
        with(|t| t.branch_computations = vec![CompId(0), CompId(1)]),
        vec![negate.clone(), double.clone()],
    );
    assert_eq!(
        values(&b, &m, &[Literal::scalar(S32, 0.0), x.clone(), x.clone()]),
        vec![-1.0, -2.0]
    );
    assert_eq!(
        values(&b, &m, &[Literal::scalar(S32, 5.0), x.clone(), x.clone()]),
        vec![2.0, 4.0]
    );

    let m = single(
        Opcode::Call,
        &[arr(F32, &[2])],
        arr(F32, &[2]),
        with(|t| t.to_apply = Some(CompId(0))),
        vec![negate],
    );
    assert_eq!(values(&b, &m, std::slice::from_ref(&x)), vec![-1.0, -2.0]);

    let m = single(
        Opcode::Fusion,
        &[arr(F32, &[2])],
        arr(F32, &[2]),
        with(|t| t.calls = vec![CompId(0)]),
        vec![double],
    );
    assert_eq!(values(&b, &m, &[x]), vec![2.0, 4.0]);
}

#[test]
fn constants_reach_xla_bit_exactly() {
    let Some(b) = common::xla_cpu() else { return };
    let values = [-0.0, 5.960464477539063e-08, f64::INFINITY, 65504.0, -1.5];
    let c = instr(
        "c",
        Opcode::Constant,
        arr(F16, &[5]),
        &[],
        with(|t| t.constant = Some(ConstantData::Float(values.to_vec()))),
    );
    let m = Module {
        name: "m".into(),
        attrs: vec![],
        computations: vec![comp("main", vec![c])],
        entry: CompId(0),
    };
    let out = run(&b, &m, &[]);
    assert_eq!(out[0].to_bits_vec(), lit(F16, &[5], &values).to_bits_vec());
}

#[test]
fn erf_and_tuple_results() {
    let Some(b) = common::xla_cpu() else { return };
    let mut instrs = vec![param(0, arr(F32, &[2]))];
    instrs.push(instr(
        "e",
        Opcode::Erf,
        arr(F32, &[2]),
        &[0],
        Attrs::default(),
    ));
    instrs.push(instr(
        "n",
        Opcode::Negate,
        arr(F32, &[2]),
        &[0],
        Attrs::default(),
    ));
    instrs.push(instr(
        "t",
        Opcode::Tuple,
        Shape::Tuple(vec![arr(F32, &[2]), arr(F32, &[2])]),
        &[1, 2],
        Attrs::default(),
    ));
    let m = Module {
        name: "m".into(),
        attrs: vec![],
        computations: vec![comp("main", instrs)],
        entry: CompId(0),
    };
    let out = run(&b, &m, &[lit(F32, &[2], &[0.0, 10.0])]);
    assert_eq!(out[0].to_f64_vec(), vec![0.0, 1.0]);
    assert_eq!(out[1].to_f64_vec(), vec![-0.0, -10.0]);
}
