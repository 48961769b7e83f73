//! Random well-formed IR modules survive print -> parse unchanged.
//!
//! The generator builds modules straight from the opcode table: random ops
//! with the attributes the table lists for them, random shapes and layouts,
//! constants of every dtype with the edge values (nan, -nan, inf, -inf, -0,
//! subnormals, extremes).

use proptest::prelude::*;
use xla_props::hlo::{
    bits_to_f64, parse_module, print_module, round_to_bits, ArrayShape, Attrs, CompId,
    ComparisonDirection, ComparisonType, Computation, ConstantData, ConvDims, ElementType,
    FusionKind, InstrId, Instruction, Layout, Module, Opcode, PadDim, Shape, SliceDim, TypeKind,
    WindowDim,
};

/// splitmix64: a tiny deterministic generator driven by a proptest seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn ints(&mut self, max_len: usize, lo: i64, hi: i64) -> Vec<i64> {
        let n = self.below(max_len + 1);
        (0..n).map(|_| self.int(lo, hi)).collect()
    }
    fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut v: Vec<i64> = (0..n as i64).collect();
        for k in (1..n).rev() {
            let j = self.below(k + 1);
            v.swap(k, j);
        }
        v
    }
}

const EDGE_FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    1e-7,
    1.5,
    65504.0,
    3.4028234663852886e38,
    f64::MAX,
    f64::MIN_POSITIVE,
    5e-324,
    -2.2250738585072014e-308,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn float(r: &mut Rng) -> f64 {
    if r.chance(60) {
        let x = *r.pick(EDGE_FLOATS);
        if x.is_nan() && r.chance(50) {
            -x
        } else {
            x
        }
    } else {
        let x = f64::from_bits(r.next());
        // the text form has no NaN payloads: keep only the sign
        if x.is_nan() {
            f64::NAN.copysign(x)
        } else {
            x
        }
    }
}

fn array_shape(r: &mut Rng, max_rank: usize, max_dim: i64) -> ArrayShape {
    let dtype = *r.pick(ElementType::ALL);
    let rank = r.below(max_rank + 1);
    let dims: Vec<i64> = (0..rank).map(|_| r.int(0, max_dim)).collect();
    let layout = if r.chance(50) {
        Some(Layout {
            minor_to_major: r.permutation(rank),
            extra: r.chance(20).then(|| "T(8,128)S(1)".to_string()),
        })
    } else {
        None
    };
    ArrayShape {
        dtype,
        dims,
        layout,
    }
}

fn shape(r: &mut Rng, depth: usize) -> Shape {
    match r.below(10) {
        0 if depth < 3 => {
            let n = r.below(3);
            Shape::Tuple((0..n).map(|_| shape(r, depth + 1)).collect())
        }
        1 => Shape::Token,
        _ => Shape::Array(array_shape(r, 4, 5)),
    }
}

fn constant_data(r: &mut Rng, s: &Shape) -> ConstantData {
    match s {
        Shape::Tuple(elems) => {
            ConstantData::Tuple(elems.iter().map(|e| constant_data(r, e)).collect())
        }
        Shape::Token => unreachable!("constant shapes are never tokens"),
        Shape::Array(a) => {
            let n = a.element_count().unwrap() as usize;
            match a.dtype.kind() {
                TypeKind::Pred => ConstantData::Pred((0..n).map(|_| r.chance(50)).collect()),
                TypeKind::Signed | TypeKind::Unsigned => {
                    let (lo, hi) = a.dtype.int_range().unwrap();
                    ConstantData::Int(
                        (0..n)
                            .map(|_| match r.below(4) {
                                0 => lo,
                                1 => hi,
                                _ => lo + (r.next() as i128).rem_euclid(hi - lo + 1),
                            })
                            .collect(),
                    )
                }
                TypeKind::Complex => {
                    ConstantData::Complex((0..n).map(|_| (float(r), float(r))).collect())
                }
                _ => ConstantData::Float((0..n).map(|_| float(r)).collect()),
            }
        }
    }
}

fn constant_shape(r: &mut Rng) -> Shape {
    if r.chance(15) {
        let n = r.below(3);
        Shape::Tuple((0..n).map(|_| Shape::Array(array_shape(r, 2, 3))).collect())
    } else {
        Shape::Array(array_shape(r, 3, 3))
    }
}

fn conv_dims(r: &mut Rng) -> ConvDims {
    let n = r.below(4);
    let (i, k, o) = (
        r.permutation(n + 2),
        r.permutation(n + 2),
        r.permutation(n + 2),
    );
    ConvDims {
        input_batch: i[0],
        input_feature: i[1],
        input_spatial: i[2..].to_vec(),
        kernel_input_feature: k[0],
        kernel_output_feature: k[1],
        kernel_spatial: k[2..].to_vec(),
        output_batch: o[0],
        output_feature: o[1],
        output_spatial: o[2..].to_vec(),
    }
}

/// Sets the attributes the opcode table lists for `op`, at random.
fn attrs(r: &mut Rng, op: Opcode, n_comps: usize) -> Attrs {
    let mut a = Attrs::default();
    let comp = |r: &mut Rng| CompId(r.below(n_comps) as u32);
    for &name in op.attributes() {
        if !r.chance(70) {
            continue;
        }
        match name {
            "index" => a.index = Some(r.int(0, 5)),
            "iota_dimension" => a.iota_dimension = Some(r.int(0, 3)),
            "dimensions" => a.dimensions = Some(r.ints(4, 0, 5)),
            "dynamic_slice_sizes" => a.dynamic_slice_sizes = Some(r.ints(3, 0, 9)),
            "slice" => {
                a.slice = Some(
                    (0..r.below(3))
                        .map(|_| SliceDim {
                            start: r.int(0, 4),
                            limit: r.int(0, 9),
                            stride: r.int(1, 3),
                        })
                        .collect(),
                )
            }
            "padding" => {
                a.padding = Some(
                    (0..r.below(4))
                        .map(|_| PadDim {
                            low: r.int(-3, 3),
                            high: r.int(-3, 3),
                            interior: r.int(0, 2),
                        })
                        .collect(),
                )
            }
            "window" => {
                a.window = Some(
                    (0..r.below(4))
                        .map(|_| WindowDim {
                            size: r.int(1, 5),
                            stride: r.int(1, 3),
                            pad_low: r.int(-1, 3),
                            pad_high: r.int(0, 3),
                            base_dilation: r.int(1, 2),
                            window_dilation: r.int(1, 2),
                            reversal: r.chance(30),
                        })
                        .collect(),
                )
            }
            "dim_labels" => a.conv_dims = Some(conv_dims(r)),
            "feature_group_count" => a.feature_group_count = Some(r.int(1, 4)),
            "batch_group_count" => a.batch_group_count = Some(r.int(1, 4)),
            "lhs_batch_dims"
            | "lhs_contracting_dims"
            | "rhs_batch_dims"
            | "rhs_contracting_dims" => {
                let d = a.dot_dims.get_or_insert_with(Default::default);
                let v = r.ints(3, 0, 4);
                match name {
                    "lhs_batch_dims" => d.lhs_batch = v,
                    "lhs_contracting_dims" => d.lhs_contracting = v,
                    "rhs_batch_dims" => d.rhs_batch = v,
                    _ => d.rhs_contracting = v,
                }
            }
            "operand_precision" => {
                a.precision = Some(
                    (0..r.below(3))
                        .map(|_| r.pick(&["default", "high", "highest"]).to_string())
                        .collect(),
                )
            }
            "indices_are_sorted" => a.indices_are_sorted = r.chance(50),
            "unique_indices" => a.unique_indices = r.chance(50),
            "is_stable" => a.is_stable = r.chance(50),
            "direction" => a.direction = Some(*r.pick(&ComparisonDirection::ALL)),
            "type" => a.comparison_type = Some(*r.pick(&ComparisonType::ALL)),
            // `order=TOTAL`/`PARTIAL` is read into the comparison type
            "order" => {
                a.comparison_type =
                    Some(*r.pick(&[ComparisonType::TotalOrder, ComparisonType::Float]))
            }
            "kind" => {
                a.fusion_kind = Some(*r.pick(&[
                    FusionKind::Loop,
                    FusionKind::Input,
                    FusionKind::Output,
                    FusionKind::Custom,
                ]))
            }
            "exponent_bits" => a.exponent_bits = Some(r.int(1, 11)),
            "mantissa_bits" => a.mantissa_bits = Some(r.int(0, 52)),
            "calls" | "called_computations" => a.calls = (0..r.below(3)).map(|_| comp(r)).collect(),
            "to_apply" => a.to_apply = Some(comp(r)),
            "condition" => a.condition = Some(comp(r)),
            "body" => a.body = Some(comp(r)),
            "branch_computations" => {
                a.branch_computations = (0..r.int(1, 3)).map(|_| comp(r)).collect();
                a.pred_branches = a.branch_computations.len() == 2 && r.chance(50);
            }
            "select" => a.select = Some(comp(r)),
            "scatter" => a.scatter = Some(comp(r)),
            "custom_call_target" => a.custom_call_target = Some("my_kernel.v2".to_string()),
            // typed on their own ops (verbatim elsewhere: cholesky's `lower`, dot's `algorithm`)
            "fft_type" if op == Opcode::Fft => {
                a.fft_type = Some(*r.pick(&xla_props::hlo::FftType::ALL))
            }
            "fft_length" if op == Opcode::Fft => a.fft_length = Some(r.ints(3, 1, 9)),
            "algorithm" if op == Opcode::RngBitGenerator => {
                a.rng_algorithm = Some(*r.pick(&xla_props::hlo::RngAlgorithm::ALL))
            }
            "left_side" | "lower" | "unit_diagonal" | "transpose_a"
                if op == Opcode::TriangularSolve =>
            {
                // a false flag is not printed: transpose_a is always there
                let t = a
                    .triangular_solve
                    .get_or_insert(xla_props::hlo::TriangularSolveOptions {
                        left_side: false,
                        lower: false,
                        unit_diagonal: false,
                        transpose_a: Some(*r.pick(&xla_props::hlo::TransposeA::ALL)),
                    });
                match name {
                    "left_side" => t.left_side = r.chance(50),
                    "lower" => t.lower = r.chance(50),
                    "unit_diagonal" => t.unit_diagonal = r.chance(50),
                    _ => t.transpose_a = Some(*r.pick(&xla_props::hlo::TransposeA::ALL)),
                }
            }
            // set together below, or by `branch_computations`
            "offset_dims"
            | "collapsed_slice_dims"
            | "start_index_map"
            | "index_vector_dim"
            | "slice_sizes"
            | "operand_batching_dims"
            | "start_indices_batching_dims"
            | "update_window_dims"
            | "inserted_window_dims"
            | "scatter_dims_to_operand_dims"
            | "input_batching_dims"
            | "scatter_indices_batching_dims"
            | "true_computation"
            | "false_computation" => {}
            // everything else travels verbatim
            other => a
                .other
                .push((other.to_string(), format!("{{{}}}", r.below(9)))),
        }
    }
    match op {
        Opcode::Gather => {
            a.gather_dims = Some(xla_props::hlo::GatherDims {
                offset_dims: r.ints(3, 0, 4),
                collapsed_slice_dims: r.ints(2, 0, 4),
                start_index_map: r.ints(3, 0, 4),
                index_vector_dim: r.int(0, 3),
                operand_batching_dims: r.ints(2, 0, 4),
                start_indices_batching_dims: r.ints(2, 0, 4),
                slice_sizes: r.ints(4, 0, 9),
            })
        }
        Opcode::Scatter => {
            a.scatter_dims = Some(xla_props::hlo::ScatterDims {
                update_window_dims: r.ints(3, 0, 4),
                inserted_window_dims: r.ints(2, 0, 4),
                scatter_dims_to_operand_dims: r.ints(3, 0, 4),
                index_vector_dim: r.int(0, 3),
                input_batching_dims: r.ints(2, 0, 4),
                scatter_indices_batching_dims: r.ints(2, 0, 4),
            })
        }
        // the parser always gives a dot its dimension numbers
        Opcode::Dot => {
            a.dot_dims.get_or_insert_with(Default::default);
        }
        _ => {}
    }
    // attributes outside the typed set, as XLA prints them
    if r.chance(20) {
        a.other.push((
            "metadata".into(),
            r#"{op_name="jit(f)/add" source_line=3 stack_frame_id=1}"#.into(),
        ));
    }
    if r.chance(10) {
        a.other
            .push(("backend_config".into(), r#""{\"x\": 1}""#.into()));
    }
    if r.chance(10) {
        a.other
            .push(("sharding".into(), "{devices=[2,1]0,1}".into()));
    }
    a
}

fn computation(r: &mut Rng, k: usize, n_comps: usize) -> Computation {
    let n = r.int(1, 12) as usize;
    let mut instructions: Vec<Instruction> = Vec::with_capacity(n);
    let mut params = 0;
    for j in 0..n {
        let op = if j == 0 || r.chance(15) {
            Opcode::Parameter
        } else {
            *r.pick(Opcode::ALL)
        };
        let name = format!("{}.{j}", r.pick(&["x", "add", "p_0", "fused-op", "Arg_0"]));
        let mut instr = match op {
            Opcode::Parameter => {
                let mut i = Instruction::new(name, op, shape(r, 0), vec![]);
                i.attrs.parameter_number = Some(params);
                params += 1;
                i
            }
            Opcode::Constant => {
                let s = constant_shape(r);
                let mut i = Instruction::new(name, op, s.clone(), vec![]);
                i.attrs.constant = Some(constant_data(r, &s));
                i
            }
            _ => {
                let count = match op.arity() {
                    xla_props::hlo::Arity::Fixed(c) => c,
                    xla_props::hlo::Arity::AtLeast(c) => c + r.below(3),
                };
                // any instruction of the computation, even a later one
                let operands = (0..count).map(|_| InstrId(r.below(n) as u32)).collect();
                let mut i = Instruction::new(name, op, shape(r, 0), operands);
                i.attrs = attrs(r, op, n_comps);
                i
            }
        };
        if op == Opcode::Parameter && r.chance(20) {
            instr
                .attrs
                .other
                .push(("parameter_replication".into(), "{false}".into()));
        }
        instructions.push(instr);
    }
    let root = InstrId(r.below(n) as u32);
    Computation {
        name: format!("comp_{k}"),
        instructions,
        root,
        other: if r.chance(20) {
            vec![("execution_thread".into(), "\"main\"".into())]
        } else {
            vec![]
        },
    }
}

fn module(seed: u64) -> Module {
    let mut r = Rng(seed);
    let n = r.int(1, 4) as usize;
    let computations = (0..n).map(|k| computation(&mut r, k, n)).collect();
    let mut attrs = Vec::new();
    if r.chance(50) {
        attrs.push(("is_scheduled".into(), "true".into()));
    }
    if r.chance(30) {
        attrs.push((
            "entry_computation_layout".into(),
            "{(f32[2]{0}, /*index=1*/s32[])->f32[2]{0}}".into(),
        ));
    }
    let mut m = Module {
        name: format!("random_{}", seed % 1000),
        attrs,
        computations,
        entry: CompId(r.below(n) as u32),
    };
    canonical(&mut m);
    m
}

/// The parser's canonical form (what parsing any text gives): a float
/// constant holds values of its type (rounded once), a map names its
/// dimensions, a scalar's broadcast names its (empty) dimensions, a
/// gather, scatter or triangular-solve has its (possibly default) options.
fn canonical(m: &mut Module) {
    for c in &mut m.computations {
        let shapes: Vec<Shape> = c.instructions.iter().map(|i| i.shape.clone()).collect();
        for i in &mut c.instructions {
            match i.opcode {
                Opcode::Constant => {
                    if let Some(d) = i.attrs.constant.as_mut() {
                        round_floats(d, &i.shape);
                    }
                }
                Opcode::Map if i.attrs.dimensions.is_none() => {
                    if let Shape::Array(a) = &i.shape {
                        i.attrs.dimensions = Some((0..a.dims.len() as i64).collect());
                    }
                }
                Opcode::Broadcast if i.attrs.dimensions.is_none() => {
                    let scalar = i
                        .operands
                        .first()
                        .and_then(|o| shapes.get(o.index()))
                        .is_some_and(|s| matches!(s, Shape::Array(a) if a.dims.is_empty()));
                    if scalar {
                        i.attrs.dimensions = Some(Vec::new());
                    }
                }
                Opcode::Gather => {
                    i.attrs.gather_dims.get_or_insert_with(Default::default);
                }
                Opcode::Scatter => {
                    i.attrs.scatter_dims.get_or_insert_with(Default::default);
                }
                Opcode::TriangularSolve => {
                    i.attrs
                        .triangular_solve
                        .get_or_insert_with(Default::default);
                }
                _ => {}
            }
        }
    }
}

fn round_floats(d: &mut ConstantData, s: &Shape) {
    match (d, s) {
        (ConstantData::Tuple(items), Shape::Tuple(shapes)) => {
            for (d, s) in items.iter_mut().zip(shapes) {
                round_floats(d, s);
            }
        }
        (ConstantData::Float(v), Shape::Array(a)) if a.dtype != ElementType::F64 => {
            if let Some(fmt) = a.dtype.float_format() {
                for x in v.iter_mut().filter(|x| !x.is_nan()) {
                    *x = bits_to_f64(round_to_bits(*x, &fmt), &fmt);
                }
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn print_parse_is_identity(seed in any::<u64>()) {
        let m = module(seed);
        let text = print_module(&m);
        let back = parse_module(&text)
            .map_err(|e| TestCaseError::fail(format!("{}\nfull text:\n{text}", e.render("printed", &text))))?;
        prop_assert_eq!(&back, &m, "text:\n{}", text);
    }
}

#[test]
fn generator_covers_every_opcode_and_edge_value() {
    let mut ops = std::collections::HashSet::new();
    let mut neg_nan = false;
    let mut neg_zero = false;
    for seed in 0..2000 {
        let m = module(seed);
        for c in &m.computations {
            for i in &c.instructions {
                ops.insert(i.opcode);
                if let Some(ConstantData::Float(v)) = &i.attrs.constant {
                    neg_nan |= v.iter().any(|x| x.is_nan() && x.is_sign_negative());
                    neg_zero |= v.iter().any(|x| *x == 0.0 && x.is_sign_negative());
                }
            }
        }
    }
    assert_eq!(
        ops.len(),
        Opcode::ALL.len(),
        "some opcodes are never generated"
    );
    assert!(neg_nan && neg_zero, "edge floats are never generated");
}
