//! Modules built with the builder, one or more ops each; every one must verify.

use super::*;
use crate::hlo::{
    default_comparison_type, verify, ComparisonType, ConvDims, DotDims, FusionKind, GatherDims,
    PadDim, ScatterDims, WindowDim,
};
use ElementType::{Pred, F16, F32, S32, S8, U32};

fn a(t: ElementType, d: &[i64]) -> Shape {
    Shape::array(t, d.to_vec())
}

fn root_shape(m: &Module) -> Shape {
    m.result_shape().without_layouts()
}

/// A gather of whole rows of `width` elements from a rank-2 operand, one
/// row per index of `s32[n, 1]` indices (also used by other modules' tests).
pub(crate) fn row_gather(width: i64) -> GatherDims {
    GatherDims {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        slice_sizes: vec![1, width],
        ..GatherDims::default()
    }
}

fn window(size: i64, stride: i64) -> WindowDim {
    WindowDim {
        stride,
        ..WindowDim::new(size)
    }
}

fn elementwise_and_conversions_module() -> Module {
    ModuleBuilder::new("ew")
        .build("main", |b| {
            let x = b.parameter(a(F32, &[2, 3]))?;
            let y = b.parameter(a(F32, &[2, 3]))?;
            let e = b.unary(Opcode::Exponential, x)?;
            let s = b.binary(Opcode::Atan2, e, y)?;
            let lt = b.compare(ComparisonDirection::Lt, default_comparison_type(F32), s, y)?;
            let sel = b.select(lt, s, y)?;
            let lo = b.constant_f64(F32, &[], &[-1.0])?;
            let hi = b.constant_f64(F32, &[], &[1.0])?;
            let c = b.clamp(lo, sel, hi)?;
            let rp = b.reduce_precision(c, 5, 10)?;
            let h = b.convert(rp, F16)?;
            let bits = b.bitcast_convert(h, ElementType::U16)?;
            let halves = b.bitcast_convert(x, F16)?;
            assert_eq!(b.shape(halves), Some(&a(F16, &[2, 3, 2])));
            let n = b.unary(Opcode::Not, bits)?;
            b.tuple(&[n, halves])
        })
        .unwrap()
}

#[test]
fn names_are_generated_and_unique() {
    let mut mb = ModuleBuilder::new("names");
    let r1 = mb.scalar_reducer(Opcode::Add, F32).unwrap();
    let r2 = mb.scalar_reducer(Opcode::Add, F32).unwrap();
    let m = mb
        .build("main", |b| {
            let x = b.parameter(a(F32, &[4]))?;
            let z = b.constant_f64(F32, &[], &[0.0])?;
            let s1 = b.reduce(&[x], &[z], &[0], r1)?;
            let s2 = b.reduce(&[x], &[z], &[0], r2)?;
            b.binary(Opcode::Add, s1, s2)
        })
        .unwrap();
    let names: Vec<&str> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.as_str()))
        .collect();
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert!(names.iter().all(|n| n.contains('.')));
    assert_eq!(
        m.entry_computation().instr(m.entry_computation().root).name,
        "add.11"
    );
    let comp_names: Vec<&str> = m.computations.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(comp_names, ["add_f32", "add_f32.1", "main"]);
}

fn shape_ops_module() -> Module {
    ModuleBuilder::new("shapes")
        .build("main", |b| {
            let x = b.parameter(a(F32, &[2, 3]))?;
            let bc = b.broadcast(x, &[4, 2, 3], &[1, 2])?;
            let r = b.reshape(bc, &[8, 3])?;
            let t = b.transpose(r, &[1, 0])?; // [3, 8]
            let s = b.slice(t, &[0, 1], &[3, 8], &[1, 2])?; // [3, 4]
            let i = b.constant_i128(S32, &[], &[1])?;
            let ds = b.dynamic_slice(s, &[i, i], &[2, 2])?;
            let dus = b.dynamic_update_slice(s, ds, &[i, i])?;
            let cat = b.concatenate(&[dus, s], 0)?; // [6, 4]
            let zero = b.constant_f64(F32, &[], &[0.0])?;
            let pads = [
                PadDim {
                    low: 1,
                    high: -1,
                    interior: 1,
                },
                PadDim::default(),
            ];
            let p = b.pad(cat, zero, &pads)?; // 6 + 5 = 11
            let rev = b.reverse(p, &[0, 1])?;
            let io = b.iota(F32, &[11, 4], 1)?;
            let sum = b.binary(Opcode::Add, rev, io)?;
            let cp = b.copy(sum)?;
            b.bitcast(cp, a(S32, &[44]))
        })
        .unwrap()
}

fn indexing_ops_module() -> Module {
    let mut mb = ModuleBuilder::new("indexing");
    let add = mb.scalar_reducer(Opcode::Add, F32).unwrap();
    mb.build("main", |b| {
        let x = b.parameter(a(F32, &[5, 4]))?;
        let idx = b.parameter(a(S32, &[3, 1]))?;
        let g = b.gather(x, idx, row_gather(4), false)?;
        assert_eq!(b.shape(g), Some(&a(F32, &[3, 4])));
        b.scatter(
            &[x],
            idx,
            &[g],
            ScatterDims {
                update_window_dims: vec![1],
                inserted_window_dims: vec![0],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
                ..ScatterDims::default()
            },
            add,
        )
    })
    .unwrap()
}

fn reductions_module() -> Module {
    let mut mb = ModuleBuilder::new("reductions");
    let add = mb.scalar_reducer(Opcode::Add, F32).unwrap();
    let max = mb.scalar_reducer(Opcode::Maximum, F32).unwrap();
    let ge = mb.comparator(ComparisonDirection::Ge, &[F32]).unwrap();
    let by_key = mb.comparator(ComparisonDirection::Lt, &[F32, S32]).unwrap();
    let argmax = mb
        .computation("argmax", |b| {
            let (v0, i0) = (
                b.parameter(Shape::scalar(F32))?,
                b.parameter(Shape::scalar(S32))?,
            );
            let (v1, i1) = (
                b.parameter(Shape::scalar(F32))?,
                b.parameter(Shape::scalar(S32))?,
            );
            let ge = b.compare(ComparisonDirection::Ge, ComparisonType::Float, v0, v1)?;
            let v = b.select(ge, v0, v1)?;
            let i = b.select(ge, i0, i1)?;
            b.tuple(&[v, i])
        })
        .unwrap();
    mb.build("main", |b| {
        let x = b.parameter(a(F32, &[4, 6]))?;
        let zero = b.constant_f64(F32, &[], &[0.0])?;
        let r = b.reduce(&[x], &[zero], &[1], add)?;
        let io = b.iota(S32, &[4, 6], 1)?;
        let izero = b.constant_i128(S32, &[], &[0])?;
        let am = b.reduce(&[x, io], &[zero, izero], &[1], argmax)?;
        let w = [window(2, 2), window(3, 3)];
        let rw = b.reduce_window(&[x], &[zero], &w, max)?;
        let sas = b.select_and_scatter(x, rw, zero, &w, ge, add)?;
        let sorted = b.sort(&[x, io], 1, true, by_key)?;
        let mapped = b.map(&[x, sas], add)?;
        b.tuple(&[r, am, rw, sas, sorted, mapped])
    })
    .unwrap()
}

#[test]
fn reductions() {
    let m = reductions_module();
    let t = m.result_shape().as_tuple().unwrap().to_vec();
    assert_eq!(t[0], a(F32, &[4]));
    assert_eq!(t[1], Shape::Tuple(vec![a(F32, &[4]), a(S32, &[4])]));
    assert_eq!(t[2], a(F32, &[2, 2]));
    assert_eq!(t[3], a(F32, &[4, 6]));
    assert_eq!(t[4], Shape::Tuple(vec![a(F32, &[4, 6]), a(S32, &[4, 6])]));
    assert_eq!(t[5], a(F32, &[4, 6]));
}

fn contractions_module() -> Module {
    ModuleBuilder::new("contractions")
        .build("main", |b| {
            let l = b.parameter(a(S8, &[5, 2, 3]))?;
            let r = b.parameter(a(S8, &[5, 3, 4]))?;
            let d = b.dot(
                l,
                r,
                DotDims {
                    lhs_batch: vec![0],
                    lhs_contracting: vec![2],
                    rhs_batch: vec![0],
                    rhs_contracting: vec![1],
                },
                Some(S32),
            )?;
            let img = b.parameter(a(F32, &[1, 3, 8, 8]))?; // bf01
            let k = b.parameter(a(F32, &[16, 3, 3, 3]))?; // oi01
            let dims = ConvDims::from_labels((0, 1, &[2, 3]), (1, 0, &[2, 3]), (0, 1, &[2, 3]));
            let w = [WindowDim {
                pad_low: 1,
                pad_high: 1,
                ..WindowDim::new(3)
            }; 2];
            let c = b.convolution(img, k, dims, &w, 1, 1, None)?;
            b.tuple(&[d, c])
        })
        .unwrap()
}

fn control_flow_module() -> Module {
    let mut mb = ModuleBuilder::new("control");
    let fused = mb
        .computation("fused", |b| {
            let x = b.parameter(a(F32, &[3]))?;
            let y = b.parameter(a(F32, &[3]))?;
            b.binary(Opcode::Multiply, x, y)
        })
        .unwrap();
    let state = Shape::Tuple(vec![Shape::scalar(S32), a(F32, &[3])]);
    let cond = mb
        .computation("cond", |b| {
            let s = b.parameter(state.clone())?;
            let i = b.get_tuple_element(s, 0)?;
            let n = b.constant_i128(S32, &[], &[4])?;
            b.compare(ComparisonDirection::Lt, ComparisonType::Signed, i, n)
        })
        .unwrap();
    let body = mb
        .computation("body", |b| {
            let s = b.parameter(state.clone())?;
            let i = b.get_tuple_element(s, 0)?;
            let v = b.get_tuple_element(s, 1)?;
            let one = b.constant_i128(S32, &[], &[1])?;
            let i1 = b.binary(Opcode::Add, i, one)?;
            let v1 = b.call(fused, &[v, v])?;
            b.tuple(&[i1, v1])
        })
        .unwrap();
    let neg = mb
        .computation("neg", |b| {
            let x = b.parameter(a(F32, &[3]))?;
            b.unary(Opcode::Negate, x)
        })
        .unwrap();
    mb.build("main", |b| {
        let x = b.parameter(a(F32, &[3]))?;
        let f = b.fusion(FusionKind::Loop, fused, &[x, x])?;
        let zero = b.constant_i128(S32, &[], &[0])?;
        let init = b.tuple(&[zero, f])?;
        let w = b.while_loop(cond, body, init)?;
        let v = b.get_tuple_element(w, 1)?;
        let p = b.parameter(Shape::scalar(Pred))?;
        b.conditional(p, &[neg, neg], &[v, v])
    })
    .unwrap()
}

#[test]
fn layouts() {
    let m = ModuleBuilder::new("layouts")
        .build("main", |b| {
            let x = b.parameter(a(F32, &[2, 3]))?;
            b.set_layout(x, &[0, 1])?;
            assert!(b.set_layout(x, &[0, 0]).is_err());
            let t = b.transpose(x, &[1, 0])?;
            b.set_layout(t, &[1, 0])?;
            Ok(t)
        })
        .unwrap();
    let p = m.parameter_shapes()[0].as_array().unwrap();
    assert_eq!(p.layout_or_default().minor_to_major, vec![0, 1]);
    assert_eq!(m.result_shape().to_string(), "f32[3,2]{1,0}");
}

#[test]
fn invalid_programs_are_errors() {
    let e = ModuleBuilder::new("bad")
        .build("main", |b| {
            let x = b.parameter(a(F32, &[2]))?;
            let y = b.parameter(a(F32, &[3]))?;
            b.binary(Opcode::Add, x, y)
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            BuildError::Shape {
                opcode: Opcode::Add,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with(
            "computation 'main': cannot add add: add: operands must have the same shape"
        ),
        "{e}"
    );
    // an id from nowhere
    let e = ModuleBuilder::new("bad")
        .build("main", |b| b.unary(Opcode::Negate, InstrId(3)))
        .unwrap_err();
    assert!(matches!(e, BuildError::UnknownInstruction { id: 3, .. }));
    // not a unary op
    let e = ModuleBuilder::new("bad")
        .build("main", |b| {
            let x = b.parameter(a(U32, &[2]))?;
            b.unary(Opcode::Add, x)
        })
        .unwrap_err();
    assert!(e.to_string().contains("not an elementwise unary op"));
    // a wrong reducer
    let mut mb = ModuleBuilder::new("bad");
    let add = mb.scalar_reducer(Opcode::Add, S32).unwrap();
    let e = mb
        .build("main", |b| {
            let x = b.parameter(a(F32, &[2]))?;
            let z = b.constant_f64(F32, &[], &[0.0])?;
            b.reduce(&[x], &[z], &[0], add)
        })
        .unwrap_err();
    assert!(e.to_string().contains("reducer 'add_s32'"), "{e}");
}

/// Every module built above.
fn every_module() -> [Module; 6] {
    [
        elementwise_and_conversions_module(),
        shape_ops_module(),
        indexing_ops_module(),
        reductions_module(),
        contractions_module(),
        control_flow_module(),
    ]
}

/// Every module above, mutated one declared shape at a time, must be rejected:
/// a wrong first dimension or element type anywhere is caught, except where
/// the declared shape is authoritative (listed below with the reason).
#[test]
fn verifier_catches_every_single_shape_mutation() {
    let modules = every_module();
    let mut checked = 0;
    for m in &modules {
        verify(m).unwrap();
        for (c, comp) in m.computations.iter().enumerate() {
            for (i, instr) in comp.instructions.iter().enumerate() {
                // parameters declare the signature; nothing to infer from
                if instr.opcode == Opcode::Parameter {
                    continue;
                }
                for mutate_dtype in [false, true] {
                    // convert and dot take the declared element type (the preferred element
                    // type of dot); bitcast may reinterpret s32[44] as f32[44]
                    let dtype_is_declared = matches!(
                        instr.opcode,
                        Opcode::Convert | Opcode::Dot | Opcode::Bitcast
                    );
                    if mutate_dtype && dtype_is_declared {
                        continue;
                    }
                    let mut bad = m.clone();
                    let shape = &mut bad.computations[c].instructions[i].shape;
                    let Some(arr) = first_leaf(shape) else {
                        continue;
                    };
                    if mutate_dtype {
                        arr.dtype = if arr.dtype == F32 { S8 } else { F32 };
                    } else if let Some(d) = arr.dims.first_mut() {
                        *d += 1;
                    } else {
                        continue;
                    }
                    checked += 1;
                    assert!(
                        verify(&bad).is_err(),
                        "mutating {} of '{}' in '{}' went unnoticed",
                        if mutate_dtype {
                            "the dtype"
                        } else {
                            "dimension 0"
                        },
                        instr.name,
                        comp.name
                    );
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} mutations");
}

/// The first array inside a shape (tuples included).
fn first_leaf(s: &mut Shape) -> Option<&mut crate::hlo::ArrayShape> {
    match s {
        Shape::Array(a) => Some(a),
        Shape::Tuple(t) => t.iter_mut().find_map(first_leaf),
        Shape::Token => None,
    }
}

/// Built modules print as HLO text that parses back to the same module, which verifies.
#[test]
fn built_modules_have_their_root_shapes() {
    for (name, m, want) in [
        (
            "elementwise_and_conversions",
            elementwise_and_conversions_module(),
            Shape::Tuple(vec![a(ElementType::U16, &[2, 3]), a(F16, &[2, 3, 2])]),
        ),
        ("shape_ops", shape_ops_module(), a(S32, &[44])),
        ("indexing_ops", indexing_ops_module(), a(F32, &[5, 4])),
        (
            "contractions",
            contractions_module(),
            Shape::Tuple(vec![a(S32, &[5, 2, 4]), a(F32, &[1, 16, 8, 8])]),
        ),
        ("control_flow", control_flow_module(), a(F32, &[3])),
    ] {
        assert_eq!(root_shape(&m), want, "{name}");
    }
    verify(&elementwise_and_conversions_module()).unwrap();
    assert_eq!(control_flow_module().parameter_shapes().len(), 2);
}

#[test]
fn built_modules_round_trip_through_text() {
    for m in every_module() {
        let text = crate::hlo::print_module(&m);
        let back = crate::hlo::parse_module(&text)
            .unwrap_or_else(|e| panic!("printed module does not parse: {e}\n{text}"));
        verify(&back).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.result_shape(), m.result_shape(), "{text}");
        assert_eq!(back, m, "{text}");
    }
}
