//! Per-op shape inference tests. Expected shapes are worked out by hand
//! from the XLA operation semantics (comments show the arithmetic).

use super::*;
use crate::hlo::{ComparisonDirection, FusionKind, ModuleBuilder, SliceDim};
use ElementType::{Bf16, Pred, C64, F16, F32, S32, S4, S64, S8, U32, U8};

fn a(t: ElementType, d: &[i64]) -> Shape {
    Shape::array(t, d.to_vec())
}

fn sc(t: ElementType) -> Shape {
    Shape::scalar(t)
}

fn ok(op: Opcode, ops: &[&Shape], attrs: &Attrs, declared: Option<&Shape>) -> Shape {
    infer(op, ops, attrs, &[], declared)
        .unwrap_or_else(|e| panic!("{op} should infer, got error: {e}"))
}

fn err(op: Opcode, ops: &[&Shape], attrs: &Attrs, declared: Option<&Shape>) -> ShapeError {
    match infer(op, ops, attrs, &[], declared) {
        Ok(s) => panic!("{op} should fail, inferred {s}"),
        Err(e) => {
            // messages start lowercase (hlo keywords like SIGNED keep their case)
            assert!(!e.message.starts_with(char::is_uppercase), "{e}");
            e
        }
    }
}

/// Default attributes changed by `f` (also for other modules' tests).
pub(crate) fn with(f: impl FnOnce(&mut Attrs)) -> Attrs {
    let mut at = Attrs::default();
    f(&mut at);
    at
}

fn dims(d: &[i64]) -> Attrs {
    with(|at| at.dimensions = Some(d.to_vec()))
}

fn none() -> Attrs {
    Attrs::default()
}

#[test]
fn elementwise_binary_needs_equal_shapes() {
    let x = a(F32, &[2, 3]);
    assert_eq!(ok(Opcode::Add, &[&x, &x], &none(), None), x);
    let e = err(Opcode::Add, &[&x, &a(F32, &[3, 2])], &none(), None);
    assert_eq!(e.kind, ShapeErrorKind::Operand);
    assert!(e.message.contains("f32[2,3] and f32[3,2]"), "{e}");
    err(Opcode::Multiply, &[&x, &a(S32, &[2, 3])], &none(), None);
    // tuples are not elementwise operands
    let t = Shape::Tuple(vec![x.clone()]);
    err(Opcode::Add, &[&t, &t], &none(), None);
}

#[test]
fn elementwise_dtype_rules() {
    let f = a(F32, &[4]);
    let i = a(S32, &[4]);
    let u = a(U8, &[4]);
    let p = a(Pred, &[4]);
    // logical ops: pred and integers only
    for op in [Opcode::And, Opcode::Or, Opcode::Xor] {
        assert_eq!(ok(op, &[&p, &p], &none(), None), p);
        assert_eq!(ok(op, &[&i, &i], &none(), None), i);
        err(op, &[&f, &f], &none(), None);
    }
    assert_eq!(ok(Opcode::Not, &[&p], &none(), None), p);
    err(Opcode::Not, &[&f], &none(), None);
    // shifts, popcnt, clz: integers only (not pred)
    for op in [
        Opcode::ShiftLeft,
        Opcode::ShiftRightArithmetic,
        Opcode::ShiftRightLogical,
    ] {
        assert_eq!(ok(op, &[&u, &u], &none(), None), u);
        err(op, &[&p, &p], &none(), None);
        err(op, &[&f, &f], &none(), None);
    }
    assert_eq!(ok(Opcode::Popcnt, &[&u], &none(), None), u);
    err(Opcode::Popcnt, &[&f], &none(), None);
    err(Opcode::CountLeadingZeros, &[&p], &none(), None);
    // transcendentals and rounding: floats only
    for op in [
        Opcode::Exponential,
        Opcode::Log,
        Opcode::Tanh,
        Opcode::Sqrt,
        Opcode::Erf,
        Opcode::Floor,
        Opcode::RoundNearestEven,
    ] {
        assert_eq!(ok(op, &[&a(Bf16, &[4])], &none(), None), a(Bf16, &[4]));
        err(op, &[&i], &none(), None);
    }
    err(Opcode::Atan2, &[&i, &i], &none(), None);
    // abs and sign: signed; negate: any number
    assert_eq!(ok(Opcode::Abs, &[&i], &none(), None), i);
    err(Opcode::Abs, &[&a(U32, &[4])], &none(), None);
    err(Opcode::Sign, &[&u], &none(), None);
    assert_eq!(ok(Opcode::Negate, &[&u], &none(), None), u);
    err(Opcode::Negate, &[&p], &none(), None);
    // abs of complex is real; is-finite gives pred
    assert_eq!(
        ok(Opcode::Abs, &[&a(C64, &[2])], &none(), None),
        a(F32, &[2])
    );
    assert_eq!(
        ok(Opcode::IsFinite, &[&a(F16, &[3])], &none(), None),
        a(Pred, &[3])
    );
    err(Opcode::IsFinite, &[&i], &none(), None);
    // subtract is not defined on pred, add is
    assert_eq!(ok(Opcode::Add, &[&p, &p], &none(), None), p);
    err(Opcode::Subtract, &[&p, &p], &none(), None);
}

#[test]
fn compare_gives_pred_and_checks_its_type() {
    let x = a(F32, &[2, 3]);
    let at = with(|at| {
        at.direction = Some(ComparisonDirection::Lt);
        at.comparison_type = Some(ComparisonType::TotalOrder);
    });
    assert_eq!(ok(Opcode::Compare, &[&x, &x], &at, None), a(Pred, &[2, 3]));
    let signed = with(|at| {
        at.direction = Some(ComparisonDirection::Lt);
        at.comparison_type = Some(ComparisonType::Signed);
    });
    assert_eq!(
        err(Opcode::Compare, &[&x, &x], &signed, None).kind,
        ShapeErrorKind::Attribute
    );
    let s = a(S8, &[2]);
    assert_eq!(ok(Opcode::Compare, &[&s, &s], &signed, None), a(Pred, &[2]));
    let e = err(Opcode::Compare, &[&x, &x], &none(), None);
    assert_eq!(e.kind, ShapeErrorKind::MissingAttribute);
    assert!(e.message.contains("direction"));
}

#[test]
fn select_and_clamp_broadcast_scalars() {
    let x = a(F32, &[2, 3]);
    assert_eq!(
        ok(Opcode::Select, &[&a(Pred, &[2, 3]), &x, &x], &none(), None),
        x
    );
    assert_eq!(ok(Opcode::Select, &[&sc(Pred), &x, &x], &none(), None), x);
    err(Opcode::Select, &[&a(Pred, &[3]), &x, &x], &none(), None);
    err(Opcode::Select, &[&a(S32, &[2, 3]), &x, &x], &none(), None);
    err(
        Opcode::Select,
        &[&a(Pred, &[2, 3]), &x, &a(F16, &[2, 3])],
        &none(),
        None,
    );
    let v = a(F32, &[4]);
    assert_eq!(
        ok(Opcode::Clamp, &[&sc(F32), &v, &sc(F32)], &none(), None),
        v
    );
    assert_eq!(ok(Opcode::Clamp, &[&v, &v, &sc(F32)], &none(), None), v);
    err(Opcode::Clamp, &[&a(F32, &[3]), &v, &v], &none(), None);
    err(Opcode::Clamp, &[&sc(S32), &v, &sc(F32)], &none(), None);
}

#[test]
fn convert_and_bitcast_convert() {
    let x = a(F32, &[2]);
    assert_eq!(
        ok(Opcode::Convert, &[&x], &none(), Some(&a(S8, &[2]))),
        a(S8, &[2])
    );
    // the dims come from the operand: a wrong declared dims shows up as a mismatch
    assert_eq!(
        ok(Opcode::Convert, &[&x], &none(), Some(&a(S8, &[5]))),
        a(S8, &[2])
    );
    assert_eq!(
        err(Opcode::Convert, &[&x], &none(), None).kind,
        ShapeErrorKind::NeedsDeclaredShape
    );
    err(
        Opcode::Convert,
        &[&a(C64, &[2])],
        &none(),
        Some(&a(F32, &[2])),
    );
    // same width: same dims
    assert_eq!(
        ok(
            Opcode::BitcastConvert,
            &[&a(F32, &[5])],
            &none(),
            Some(&a(S32, &[5]))
        ),
        a(S32, &[5])
    );
    // 32 -> 16 bits: a new minor dimension of 2
    assert_eq!(
        ok(
            Opcode::BitcastConvert,
            &[&a(F32, &[2, 3])],
            &none(),
            Some(&a(F16, &[]))
        ),
        a(F16, &[2, 3, 2])
    );
    // 16 -> 32 bits: the minor dimension of 2 disappears
    assert_eq!(
        ok(
            Opcode::BitcastConvert,
            &[&a(F16, &[4, 2])],
            &none(),
            Some(&a(F32, &[]))
        ),
        a(F32, &[4])
    );
    err(
        Opcode::BitcastConvert,
        &[&a(F16, &[4, 3])],
        &none(),
        Some(&a(F32, &[4])),
    );
    // 4 -> 8 bits
    assert_eq!(
        ok(
            Opcode::BitcastConvert,
            &[&a(S4, &[3, 2])],
            &none(),
            Some(&a(S8, &[3]))
        ),
        a(S8, &[3])
    );
    // 8 -> 64 bits needs a minor dimension of 8
    err(
        Opcode::BitcastConvert,
        &[&a(U8, &[4])],
        &none(),
        Some(&a(S64, &[])),
    );
    assert_eq!(
        ok(
            Opcode::BitcastConvert,
            &[&a(U8, &[8])],
            &none(),
            Some(&a(S64, &[]))
        ),
        a(S64, &[])
    );
}

#[test]
fn reduce_precision_needs_floats_and_bits() {
    let x = a(F32, &[3]);
    let at = with(|at| {
        at.exponent_bits = Some(5);
        at.mantissa_bits = Some(10);
    });
    assert_eq!(ok(Opcode::ReducePrecision, &[&x], &at, None), x);
    err(Opcode::ReducePrecision, &[&a(S32, &[3])], &at, None);
    let zero_e = with(|at| {
        at.exponent_bits = Some(0);
        at.mantissa_bits = Some(10);
    });
    err(Opcode::ReducePrecision, &[&x], &zero_e, None);
    let no_m = with(|at| at.exponent_bits = Some(5));
    assert_eq!(
        err(Opcode::ReducePrecision, &[&x], &no_m, None).kind,
        ShapeErrorKind::MissingAttribute
    );
}

#[test]
fn broadcast_maps_operand_dims() {
    let x = a(F32, &[3]);
    assert_eq!(
        ok(
            Opcode::Broadcast,
            &[&x],
            &dims(&[1]),
            Some(&a(F32, &[2, 3]))
        ),
        a(F32, &[2, 3])
    );
    // dimension 0 of the result has size 2, not 3
    err(
        Opcode::Broadcast,
        &[&x],
        &dims(&[0]),
        Some(&a(F32, &[2, 3])),
    );
    err(
        Opcode::Broadcast,
        &[&x],
        &dims(&[2]),
        Some(&a(F32, &[2, 3])),
    );
    err(Opcode::Broadcast, &[&x], &dims(&[]), Some(&a(F32, &[2, 3])));
    // `dimensions` may be omitted for a scalar operand only
    assert_eq!(
        ok(Opcode::Broadcast, &[&sc(F32)], &none(), Some(&a(F32, &[2]))),
        a(F32, &[2])
    );
    assert_eq!(
        err(Opcode::Broadcast, &[&x], &none(), Some(&a(F32, &[3]))).kind,
        ShapeErrorKind::MissingAttribute
    );
    assert_eq!(
        ok(
            Opcode::Broadcast,
            &[&sc(S32)],
            &dims(&[]),
            Some(&a(S32, &[4, 5]))
        ),
        a(S32, &[4, 5])
    );
    // the dtype is the operand's
    assert_eq!(
        ok(Opcode::Broadcast, &[&x], &dims(&[0]), Some(&a(S8, &[3]))),
        a(F32, &[3])
    );
}

#[test]
fn reshape_keeps_element_count() {
    let x = a(F32, &[2, 3]);
    assert_eq!(
        ok(Opcode::Reshape, &[&x], &none(), Some(&a(F32, &[6]))),
        a(F32, &[6])
    );
    assert_eq!(
        ok(Opcode::Reshape, &[&x], &none(), Some(&a(F32, &[3, 2, 1]))),
        a(F32, &[3, 2, 1])
    );
    err(Opcode::Reshape, &[&x], &none(), Some(&a(F32, &[5])));
    assert_eq!(
        ok(
            Opcode::Reshape,
            &[&a(F32, &[1, 1])],
            &none(),
            Some(&sc(F32))
        ),
        sc(F32)
    );
}

#[test]
fn transpose_permutes() {
    let x = a(F32, &[2, 3, 4]);
    // result dim i = operand dim perm[i]: [4, 2, 3]
    assert_eq!(
        ok(Opcode::Transpose, &[&x], &dims(&[2, 0, 1]), None),
        a(F32, &[4, 2, 3])
    );
    err(Opcode::Transpose, &[&x], &dims(&[0, 0, 1]), None);
    err(Opcode::Transpose, &[&x], &dims(&[0, 1]), None);
    err(Opcode::Transpose, &[&x], &dims(&[0, 1, 3]), None);
}

fn sl(s: &[(i64, i64, i64)]) -> Attrs {
    with(|at| {
        at.slice = Some(
            s.iter()
                .map(|&(start, limit, stride)| SliceDim {
                    start,
                    limit,
                    stride,
                })
                .collect(),
        )
    })
}

#[test]
fn slice_sizes_round_up() {
    let x = a(F32, &[10, 5]);
    // ceil((9 - 2) / 3) = 3; (5 - 0) / 1 = 5
    assert_eq!(
        ok(Opcode::Slice, &[&x], &sl(&[(2, 9, 3), (0, 5, 1)]), None),
        a(F32, &[3, 5])
    );
    assert_eq!(
        ok(Opcode::Slice, &[&x], &sl(&[(4, 4, 1), (0, 5, 2)]), None),
        a(F32, &[0, 3])
    );
    err(Opcode::Slice, &[&x], &sl(&[(0, 11, 1), (0, 5, 1)]), None);
    err(Opcode::Slice, &[&x], &sl(&[(0, 10, 0), (0, 5, 1)]), None);
    err(Opcode::Slice, &[&x], &sl(&[(5, 4, 1), (0, 5, 1)]), None);
    err(Opcode::Slice, &[&x], &sl(&[(-1, 4, 1), (0, 5, 1)]), None);
    err(Opcode::Slice, &[&x], &sl(&[(0, 4, 1)]), None);
}

#[test]
fn concatenate_sums_one_dimension() {
    let x = a(F32, &[2, 3]);
    assert_eq!(
        ok(
            Opcode::Concatenate,
            &[&x, &a(F32, &[4, 3])],
            &dims(&[0]),
            None
        ),
        a(F32, &[6, 3])
    );
    assert_eq!(
        ok(
            Opcode::Concatenate,
            &[&x, &a(F32, &[2, 4]), &x],
            &dims(&[1]),
            None
        ),
        a(F32, &[2, 10])
    );
    err(
        Opcode::Concatenate,
        &[&x, &a(F32, &[2, 4])],
        &dims(&[0]),
        None,
    );
    err(
        Opcode::Concatenate,
        &[&x, &a(S32, &[2, 3])],
        &dims(&[0]),
        None,
    );
    err(Opcode::Concatenate, &[&x, &x], &dims(&[2]), None);
}

fn pad(p: &[(i64, i64, i64)]) -> Attrs {
    with(|at| {
        at.padding = Some(
            p.iter()
                .map(|&(low, high, interior)| PadDim {
                    low,
                    high,
                    interior,
                })
                .collect(),
        )
    })
}

#[test]
fn pad_with_negative_and_interior() {
    let x = a(F32, &[3, 4]);
    let v = sc(F32);
    // 1 + 2 + 3 = 6; 4 + 3 * 1 = 7
    assert_eq!(
        ok(Opcode::Pad, &[&x, &v], &pad(&[(1, 2, 0), (0, 0, 1)]), None),
        a(F32, &[6, 7])
    );
    // negative padding trims: 3 - 1 - 1 = 1; 4 + 3 * 2 - 5 = 5
    assert_eq!(
        ok(
            Opcode::Pad,
            &[&x, &v],
            &pad(&[(-1, -1, 0), (-5, 0, 2)]),
            None
        ),
        a(F32, &[1, 5])
    );
    err(
        Opcode::Pad,
        &[&x, &v],
        &pad(&[(-2, -2, 0), (0, 0, 0)]),
        None,
    );
    err(Opcode::Pad, &[&x, &v], &pad(&[(0, 0, -1), (0, 0, 0)]), None);
    err(
        Opcode::Pad,
        &[&x, &a(F32, &[1])],
        &pad(&[(0, 0, 0), (0, 0, 0)]),
        None,
    );
    err(
        Opcode::Pad,
        &[&x, &sc(S32)],
        &pad(&[(0, 0, 0), (0, 0, 0)]),
        None,
    );
    // interior padding of an empty dimension adds nothing
    assert_eq!(
        ok(Opcode::Pad, &[&a(F32, &[0]), &v], &pad(&[(1, 1, 5)]), None),
        a(F32, &[2])
    );
    // huge values are an error, not an overflow
    err(
        Opcode::Pad,
        &[&x, &v],
        &pad(&[(i64::MAX, i64::MAX, 0), (0, 0, i64::MAX)]),
        None,
    );
}

#[test]
fn reverse_checks_dims() {
    let x = a(F32, &[2, 3]);
    assert_eq!(ok(Opcode::Reverse, &[&x], &dims(&[1]), None), x);
    err(Opcode::Reverse, &[&x], &dims(&[2]), None);
    err(Opcode::Reverse, &[&x], &dims(&[0, 0]), None);
}

#[test]
fn dynamic_slices_take_scalar_indices() {
    let x = a(F32, &[8, 6]);
    let i = sc(S32);
    let sizes = |s: &[i64]| with(|at| at.dynamic_slice_sizes = Some(s.to_vec()));
    assert_eq!(
        ok(Opcode::DynamicSlice, &[&x, &i, &i], &sizes(&[2, 6]), None),
        a(F32, &[2, 6])
    );
    err(Opcode::DynamicSlice, &[&x, &i, &i], &sizes(&[9, 1]), None);
    assert_eq!(
        err(Opcode::DynamicSlice, &[&x, &i], &sizes(&[2, 6]), None).kind,
        ShapeErrorKind::Arity
    );
    err(
        Opcode::DynamicSlice,
        &[&x, &a(S32, &[1]), &i],
        &sizes(&[2, 6]),
        None,
    );
    err(
        Opcode::DynamicSlice,
        &[&x, &i, &sc(S64)],
        &sizes(&[2, 6]),
        None,
    );
    err(
        Opcode::DynamicSlice,
        &[&x, &sc(F32), &sc(F32)],
        &sizes(&[2, 6]),
        None,
    );
    let u = a(F32, &[2, 6]);
    assert_eq!(
        ok(Opcode::DynamicUpdateSlice, &[&x, &u, &i, &i], &none(), None),
        x
    );
    err(
        Opcode::DynamicUpdateSlice,
        &[&x, &a(F32, &[9, 6]), &i, &i],
        &none(),
        None,
    );
    err(
        Opcode::DynamicUpdateSlice,
        &[&x, &a(F16, &[2, 6]), &i, &i],
        &none(),
        None,
    );
    err(Opcode::DynamicUpdateSlice, &[&x, &u, &i], &none(), None);
}

fn gather(offset: &[i64], collapsed: &[i64], map: &[i64], ivd: i64, sizes: &[i64]) -> GatherDims {
    GatherDims {
        offset_dims: offset.to_vec(),
        collapsed_slice_dims: collapsed.to_vec(),
        start_index_map: map.to_vec(),
        index_vector_dim: ivd,
        slice_sizes: sizes.to_vec(),
        ..GatherDims::default()
    }
}

fn gather_attrs(g: GatherDims) -> Attrs {
    with(|at| at.gather_dims = Some(g))
}

#[test]
fn gather_shapes() {
    // rows of a matrix: indices s32[2] with an implicit index vector dimension
    let m = a(F32, &[3, 3]);
    let g = gather_attrs(gather(&[1], &[0], &[0], 1, &[1, 3]));
    assert_eq!(
        ok(Opcode::Gather, &[&m, &a(S32, &[2])], &g, None),
        a(F32, &[2, 3])
    );
    // offsets (4, 3) from the uncollapsed dims 1 and 2; batch 7
    let x = a(F32, &[5, 4, 6]);
    let idx = a(S32, &[7, 2]);
    let g = gather_attrs(gather(&[1, 2], &[0], &[0, 2], 1, &[1, 4, 3]));
    assert_eq!(
        ok(Opcode::Gather, &[&x, &idx], &g, None),
        a(F32, &[7, 4, 3])
    );
    let g = gather_attrs(gather(&[0, 2], &[0], &[0, 2], 1, &[1, 4, 3]));
    assert_eq!(
        ok(Opcode::Gather, &[&x, &idx], &g, None),
        a(F32, &[4, 7, 3])
    );
    // errors
    let bad = [
        gather(&[1, 2], &[0], &[0, 2], 1, &[1, 5, 3]), // slice bigger than the operand
        gather(&[1, 2], &[0], &[0, 2], 1, &[2, 4, 3]), // collapsed dim with slice size 2
        gather(&[1, 2], &[0], &[0], 1, &[1, 4, 3]), // start_index_map shorter than the index vector
        gather(&[2, 1], &[0], &[0, 2], 1, &[1, 4, 3]), // offset_dims unsorted
        gather(&[1, 2], &[0], &[0, 2], 3, &[1, 4, 3]), // index_vector_dim out of range
        gather(&[1], &[0], &[0, 2], 1, &[1, 4, 3]), // dims do not cover the operand
    ];
    for g in bad {
        err(Opcode::Gather, &[&x, &idx], &gather_attrs(g), None);
    }
    err(
        Opcode::Gather,
        &[&x, &a(F32, &[7, 2])],
        &gather_attrs(gather(&[1, 2], &[0], &[0, 2], 1, &[1, 4, 3])),
        None,
    );
    assert_eq!(
        err(Opcode::Gather, &[&x, &idx], &none(), None).kind,
        ShapeErrorKind::MissingAttribute
    );
}

#[test]
fn gather_with_batching_dims() {
    // operand dim 0 is batched with indices dim 0; batch dims of the result [4, 3], offset 6
    let x = a(F32, &[4, 5, 6]);
    let mut g = gather(&[2], &[1], &[1], 2, &[1, 1, 6]);
    g.operand_batching_dims = vec![0];
    g.start_indices_batching_dims = vec![0];
    assert_eq!(
        ok(
            Opcode::Gather,
            &[&x, &a(S32, &[4, 3, 1])],
            &gather_attrs(g.clone()),
            None
        ),
        a(F32, &[4, 3, 6])
    );
    // batch sizes differ (3 vs 4)
    err(
        Opcode::Gather,
        &[&x, &a(S32, &[3, 3, 1])],
        &gather_attrs(g.clone()),
        None,
    );
    // the index vector dim cannot be a batching dim
    let mut bad = g.clone();
    bad.start_indices_batching_dims = vec![2];
    err(
        Opcode::Gather,
        &[&x, &a(S32, &[4, 3, 1])],
        &gather_attrs(bad),
        None,
    );
    // batching and collapsed dims overlap
    let mut bad = g;
    bad.collapsed_slice_dims = vec![0];
    bad.offset_dims = vec![2, 3];
    err(
        Opcode::Gather,
        &[&x, &a(S32, &[4, 3, 1])],
        &gather_attrs(bad),
        None,
    );
}

/// Computations made with the builder: 0 = add f32, 1 = add s32, 2 = (f32, s32) pair add,
/// 3 = compare GE on f32, 4 = comparator (f32, s32), 5 = (f32[3], f32[3]) -> f32[3],
/// 6 = while condition on s32[], 7 = while body on s32[], 8 = (f32) -> s32 convert,
/// 9 = (f32[2]) -> f32[2] negate, 10 = (f32[2]) -> f16[2].
fn comps() -> Vec<Computation> {
    let mut m = ModuleBuilder::new("callees");
    m.scalar_reducer(Opcode::Add, F32).unwrap();
    m.scalar_reducer(Opcode::Add, S32).unwrap();
    m.computation("pair_add", |b| {
        let (x0, x1) = (b.parameter(sc(F32))?, b.parameter(sc(S32))?);
        let (y0, y1) = (b.parameter(sc(F32))?, b.parameter(sc(S32))?);
        let s0 = b.binary(Opcode::Add, x0, y0)?;
        let s1 = b.binary(Opcode::Add, x1, y1)?;
        b.tuple(&[s0, s1])
    })
    .unwrap();
    m.comparator(ComparisonDirection::Ge, &[F32]).unwrap();
    m.comparator(ComparisonDirection::Lt, &[F32, S32]).unwrap();
    m.computation("add3", |b| {
        let x = b.parameter(a(F32, &[3]))?;
        let y = b.parameter(a(F32, &[3]))?;
        b.binary(Opcode::Add, x, y)
    })
    .unwrap();
    m.computation("cond", |b| {
        let x = b.parameter(sc(S32))?;
        let ten = b.constant_i128(S32, &[], &[10])?;
        b.compare(ComparisonDirection::Lt, ComparisonType::Signed, x, ten)
    })
    .unwrap();
    m.computation("body", |b| {
        let x = b.parameter(sc(S32))?;
        let one = b.constant_i128(S32, &[], &[1])?;
        b.binary(Opcode::Add, x, one)
    })
    .unwrap();
    m.computation("to_s32", |b| {
        let x = b.parameter(sc(F32))?;
        b.convert(x, S32)
    })
    .unwrap();
    m.computation("neg2", |b| {
        let x = b.parameter(a(F32, &[2]))?;
        b.unary(Opcode::Negate, x)
    })
    .unwrap();
    m.computation("to_f16", |b| {
        let x = b.parameter(a(F32, &[2]))?;
        b.convert(x, F16)
    })
    .unwrap();
    m.computations().to_vec()
}

fn okc(op: Opcode, ops: &[&Shape], attrs: &Attrs) -> Shape {
    infer(op, ops, attrs, &comps(), None).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn errc(op: Opcode, ops: &[&Shape], attrs: &Attrs) -> ShapeError {
    match infer(op, ops, attrs, &comps(), None) {
        Ok(s) => panic!("{op} should fail, inferred {s}"),
        Err(e) => e,
    }
}

fn scatter_attrs(window: &[i64], inserted: &[i64], map: &[i64], ivd: i64, f: u32) -> Attrs {
    with(|at| {
        at.scatter_dims = Some(ScatterDims {
            update_window_dims: window.to_vec(),
            inserted_window_dims: inserted.to_vec(),
            scatter_dims_to_operand_dims: map.to_vec(),
            index_vector_dim: ivd,
            ..ScatterDims::default()
        });
        at.to_apply = Some(CompId(f));
    })
}

#[test]
fn scatter_shapes() {
    // scatter 3 rows into f32[5,4]
    let x = a(F32, &[5, 4]);
    let idx = a(S32, &[3, 1]);
    let at = scatter_attrs(&[1], &[0], &[0], 1, 0);
    assert_eq!(okc(Opcode::Scatter, &[&x, &idx, &a(F32, &[3, 4])], &at), x);
    // partial windows are fine, larger ones are not
    assert_eq!(okc(Opcode::Scatter, &[&x, &idx, &a(F32, &[3, 2])], &at), x);
    errc(Opcode::Scatter, &[&x, &idx, &a(F32, &[3, 5])], &at);
    // the scatter dimension must match the indices' batch (3)
    errc(Opcode::Scatter, &[&x, &idx, &a(F32, &[2, 4])], &at);
    // reducer of the wrong type
    let e = errc(
        Opcode::Scatter,
        &[&x, &idx, &a(F32, &[3, 4])],
        &scatter_attrs(&[1], &[0], &[0], 1, 1),
    );
    assert_eq!(e.kind, ShapeErrorKind::Callee);
    // variadic: (f32, s32) inputs give a tuple
    let y = a(S32, &[5, 4]);
    let at2 = scatter_attrs(&[1], &[0], &[0], 1, 2);
    assert_eq!(
        okc(
            Opcode::Scatter,
            &[&x, &y, &idx, &a(F32, &[3, 4]), &a(S32, &[3, 4])],
            &at2
        ),
        Shape::Tuple(vec![x.clone(), y.clone()])
    );
    assert_eq!(
        errc(Opcode::Scatter, &[&x, &y, &idx, &a(F32, &[3, 4])], &at2).kind,
        ShapeErrorKind::Arity
    );
}

fn reduce_attrs(d: &[i64], f: u32) -> Attrs {
    with(|at| {
        at.dimensions = Some(d.to_vec());
        at.to_apply = Some(CompId(f));
    })
}

#[test]
fn reduce_shapes() {
    let x = a(F32, &[4, 8]);
    let z = sc(F32);
    assert_eq!(
        okc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[1], 0)),
        a(F32, &[4])
    );
    assert_eq!(
        okc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[0, 1], 0)),
        sc(F32)
    );
    assert_eq!(okc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[], 0)), x);
    errc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[2], 0));
    errc(Opcode::Reduce, &[&x, &a(F32, &[1])], &reduce_attrs(&[1], 0));
    assert_eq!(
        errc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[1], 1)).kind,
        ShapeErrorKind::Callee
    );
    assert_eq!(
        errc(Opcode::Reduce, &[&x, &z], &reduce_attrs(&[1], 99)).kind,
        ShapeErrorKind::Callee
    );
    assert_eq!(
        errc(Opcode::Reduce, &[&x, &z, &z], &reduce_attrs(&[1], 0)).kind,
        ShapeErrorKind::Arity
    );
    // variadic argmax-style reduce gives a tuple
    let i = a(S32, &[4, 8]);
    assert_eq!(
        okc(
            Opcode::Reduce,
            &[&x, &i, &z, &sc(S32)],
            &reduce_attrs(&[1], 2)
        ),
        Shape::Tuple(vec![a(F32, &[4]), a(S32, &[4])])
    );
    errc(
        Opcode::Reduce,
        &[&x, &a(S32, &[4, 7]), &z, &sc(S32)],
        &reduce_attrs(&[1], 2),
    );
    // a binary reducer cannot take four inputs
    errc(
        Opcode::Reduce,
        &[&x, &i, &z, &sc(S32)],
        &reduce_attrs(&[1], 0),
    );
    let no_dims = with(|at| at.to_apply = Some(CompId(0)));
    assert_eq!(
        errc(Opcode::Reduce, &[&x, &z], &no_dims).kind,
        ShapeErrorKind::MissingAttribute
    );
}

/// A window dimension as (size, stride, padding low, padding high, base
/// dilation, window dilation).
type WinSpec = (i64, i64, i64, i64, i64, i64);

fn win(specs: &[WinSpec]) -> Vec<WindowDim> {
    specs
        .iter()
        .map(
            |&(size, stride, pad_low, pad_high, base_dilation, window_dilation)| WindowDim {
                size,
                stride,
                pad_low,
                pad_high,
                base_dilation,
                window_dilation,
                reversal: false,
            },
        )
        .collect()
}

fn rw_attrs(w: Vec<WindowDim>) -> Attrs {
    with(|at| {
        at.window = Some(w);
        at.to_apply = Some(CompId(0));
    })
}

#[test]
fn reduce_window_shapes() {
    let x = a(F32, &[4, 6]);
    let z = sc(F32);
    // windows as (size, stride, pad low, pad high, base dilation, window dilation)
    let shape = |w: &[WinSpec]| okc(Opcode::ReduceWindow, &[&x, &z], &rw_attrs(win(w)));
    let fails = |w: &[WinSpec]| errc(Opcode::ReduceWindow, &[&x, &z], &rw_attrs(win(w)));
    // (4 - 2) / 2 + 1 = 2; (6 - 3) / 3 + 1 = 2
    assert_eq!(
        shape(&[(2, 2, 0, 0, 1, 1), (3, 3, 0, 0, 1, 1)]),
        a(F32, &[2, 2])
    );
    // padded 4 + 2 = 6, window 3, stride 1: 4; base dilation 2: 6 + 1 = 7 - 2 + 1 = 6... dim 1: (6-1)*2+1 = 11, window 2: 10
    assert_eq!(
        shape(&[(3, 1, 1, 1, 1, 1), (2, 1, 0, 0, 2, 1)]),
        a(F32, &[4, 10])
    );
    // window dilation 2 makes a size-2 window span 3: 4 - 3 + 1 = 2; a window bigger than the base gives 0
    assert_eq!(
        shape(&[(2, 1, 0, 0, 1, 2), (7, 1, 0, 0, 1, 1)]),
        a(F32, &[2, 0])
    );
    fails(&[(0, 1, 0, 0, 1, 1), (1, 1, 0, 0, 1, 1)]);
    fails(&[(1, 0, 0, 0, 1, 1), (1, 1, 0, 0, 1, 1)]);
    fails(&[(1, 1, 0, 0, 1, 1)]);
    // negative padding below zero size
    fails(&[(1, 1, -3, -3, 1, 1), (1, 1, 0, 0, 1, 1)]);
}

#[test]
fn select_and_scatter_shapes() {
    let x = a(F32, &[4, 6]);
    let at = with(|at| {
        at.window = Some(win(&[(2, 2, 0, 0, 1, 1), (3, 3, 0, 0, 1, 1)]));
        at.select = Some(CompId(3));
        at.scatter = Some(CompId(0));
    });
    assert_eq!(
        okc(
            Opcode::SelectAndScatter,
            &[&x, &a(F32, &[2, 2]), &sc(F32)],
            &at
        ),
        x
    );
    errc(
        Opcode::SelectAndScatter,
        &[&x, &a(F32, &[2, 3]), &sc(F32)],
        &at,
    );
    errc(
        Opcode::SelectAndScatter,
        &[&x, &a(F32, &[2, 2]), &sc(S32)],
        &at,
    );
    let mut swapped = at.clone();
    swapped.select = Some(CompId(0));
    assert_eq!(
        errc(
            Opcode::SelectAndScatter,
            &[&x, &a(F32, &[2, 2]), &sc(F32)],
            &swapped
        )
        .kind,
        ShapeErrorKind::Callee
    );
}

#[test]
fn sort_and_map_shapes() {
    let x = a(F32, &[4, 5]);
    let i = a(S32, &[4, 5]);
    let sort = |d: i64, f: u32| {
        with(|at| {
            at.dimensions = Some(vec![d]);
            at.to_apply = Some(CompId(f));
        })
    };
    assert_eq!(okc(Opcode::Sort, &[&x], &sort(1, 3)), x);
    assert_eq!(
        okc(Opcode::Sort, &[&x, &i], &sort(0, 4)),
        Shape::Tuple(vec![x.clone(), i.clone()])
    );
    errc(Opcode::Sort, &[&x], &sort(2, 3));
    assert_eq!(
        errc(Opcode::Sort, &[&x], &sort(1, 4)).kind,
        ShapeErrorKind::Callee
    );
    errc(Opcode::Sort, &[&x, &a(S32, &[4, 4])], &sort(0, 4));
    let map = |f: u32| with(|at| at.to_apply = Some(CompId(f)));
    let v = a(F32, &[3]);
    assert_eq!(okc(Opcode::Map, &[&v, &v], &map(0)), v);
    // the result type is the mapped computation's
    assert_eq!(okc(Opcode::Map, &[&v], &map(8)), a(S32, &[3]));
    assert_eq!(
        errc(Opcode::Map, &[&v], &map(0)).kind,
        ShapeErrorKind::Callee
    );
    errc(Opcode::Map, &[&v, &a(F32, &[4])], &map(0));
}

fn dot_attrs(lb: &[i64], lc: &[i64], rb: &[i64], rc: &[i64]) -> Attrs {
    with(|at| {
        at.dot_dims = Some(DotDims {
            lhs_batch: lb.to_vec(),
            lhs_contracting: lc.to_vec(),
            rhs_batch: rb.to_vec(),
            rhs_contracting: rc.to_vec(),
        })
    })
}

#[test]
fn dot_shapes() {
    let mm = dot_attrs(&[], &[1], &[], &[0]);
    assert_eq!(
        ok(
            Opcode::Dot,
            &[&a(F32, &[2, 3]), &a(F32, &[3, 4])],
            &mm,
            None
        ),
        a(F32, &[2, 4])
    );
    // batch first, then lhs free, then rhs free
    let bmm = dot_attrs(&[0], &[2], &[0], &[1]);
    assert_eq!(
        ok(
            Opcode::Dot,
            &[&a(F32, &[5, 2, 3]), &a(F32, &[5, 3, 4])],
            &bmm,
            None
        ),
        a(F32, &[5, 2, 4])
    );
    err(
        Opcode::Dot,
        &[&a(F32, &[2, 3]), &a(F32, &[4, 4])],
        &mm,
        None,
    );
    err(
        Opcode::Dot,
        &[&a(F32, &[5, 2, 3]), &a(F32, &[6, 3, 4])],
        &bmm,
        None,
    );
    err(
        Opcode::Dot,
        &[&a(F32, &[2, 3]), &a(F32, &[3, 4])],
        &dot_attrs(&[1], &[1], &[0], &[0]),
        None,
    );
    err(
        Opcode::Dot,
        &[&a(F32, &[2, 3]), &a(F32, &[3, 4])],
        &dot_attrs(&[], &[1], &[], &[]),
        None,
    );
    // preferred element type: the declared one wins
    assert_eq!(
        ok(
            Opcode::Dot,
            &[&a(S8, &[2, 3]), &a(S8, &[3, 4])],
            &mm,
            Some(&a(S32, &[2, 4]))
        ),
        a(S32, &[2, 4])
    );
    assert_eq!(
        ok(
            Opcode::Dot,
            &[&a(Bf16, &[2, 3]), &a(F32, &[3, 4])],
            &mm,
            None
        ),
        a(F32, &[2, 4])
    );
    err(Opcode::Dot, &[&a(S8, &[2, 3]), &a(S32, &[3, 4])], &mm, None);
    // no dimension numbers: an outer product
    assert_eq!(
        ok(Opcode::Dot, &[&a(F32, &[2]), &a(F32, &[3])], &none(), None),
        a(F32, &[2, 3])
    );
}

/// The convolution of `x` by `k` over `window` with (feature, batch) group
/// counts `groups`, which must infer.
fn conv(x: &Shape, k: &Shape, window: &[WindowDim], groups: (i64, i64)) -> Shape {
    let attrs = conv_attrs(window.to_vec(), groups.0, groups.1);
    ok(Opcode::Convolution, &[x, k], &attrs, None)
}

/// Like [`conv`], for a convolution that must fail.
fn conv_err(x: &Shape, k: &Shape, window: &[WindowDim], groups: (i64, i64)) -> ShapeError {
    let attrs = conv_attrs(window.to_vec(), groups.0, groups.1);
    err(Opcode::Convolution, &[x, k], &attrs, None)
}

fn conv_attrs(window: Vec<WindowDim>, fgc: i64, bgc: i64) -> Attrs {
    // b01f_01io->b01f
    with(|at| {
        at.conv_dims = Some(ConvDims::feature_last(2));
        at.window = Some(window);
        at.feature_group_count = Some(fgc);
        at.batch_group_count = Some(bgc);
    })
}

#[test]
fn convolution_shapes() {
    let x = a(F32, &[1, 8, 8, 3]);
    let k = a(F32, &[3, 3, 3, 16]);
    let same = win(&[(3, 1, 1, 1, 1, 1), (3, 1, 1, 1, 1, 1)]);
    let valid = win(&[(3, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]);
    let strided = win(&[(3, 2, 0, 0, 1, 1), (3, 2, 0, 0, 1, 1)]);
    assert_eq!(conv(&x, &k, &same, (1, 1)), a(F32, &[1, 8, 8, 16]));
    assert_eq!(conv(&x, &k, &valid, (1, 1)), a(F32, &[1, 6, 6, 16]));
    // (8 - 3) / 2 + 1 = 3
    assert_eq!(conv(&x, &k, &strided, (1, 1)), a(F32, &[1, 3, 3, 16]));
    // grouped: 4 input features = 2 per group x 2 groups; 6 output features
    let xg = a(F32, &[1, 8, 8, 4]);
    assert_eq!(
        conv(&xg, &a(F32, &[3, 3, 2, 6]), &valid, (2, 1)),
        a(F32, &[1, 6, 6, 6])
    );
    conv_err(&xg, &a(F32, &[3, 3, 3, 6]), &valid, (2, 1));
    // batch groups: batch 4 / 2
    let xb = a(F32, &[4, 8, 8, 3]);
    assert_eq!(
        conv(&xb, &a(F32, &[3, 3, 3, 6]), &valid, (1, 2)),
        a(F32, &[2, 6, 6, 6])
    );
    conv_err(&xb, &a(F32, &[3, 3, 3, 5]), &valid, (1, 2));
    conv_err(&xb, &k, &valid, (2, 2));
    // window size must be the kernel's
    err(
        Opcode::Convolution,
        &[&x, &k],
        &conv_attrs(win(&[(2, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]), 1, 1),
        None,
    );
    conv_err(&x, &a(F32, &[3, 3, 2, 16]), &valid, (1, 1));
    assert_eq!(
        ok(
            Opcode::Convolution,
            &[&a(Bf16, &[1, 8, 8, 3]), &a(Bf16, &[3, 3, 3, 16])],
            &conv_attrs(valid, 1, 1),
            Some(&a(F32, &[1, 6, 6, 16]))
        ),
        a(F32, &[1, 6, 6, 16])
    );
}

#[test]
fn structure_ops() {
    let t = Shape::Tuple(vec![a(F32, &[2]), sc(S32)]);
    assert_eq!(
        ok(Opcode::Tuple, &[&a(F32, &[2]), &sc(S32)], &none(), None),
        t
    );
    assert_eq!(ok(Opcode::Tuple, &[], &none(), None), Shape::Tuple(vec![]));
    let gte = |i: i64| with(|at| at.index = Some(i));
    assert_eq!(ok(Opcode::GetTupleElement, &[&t], &gte(1), None), sc(S32));
    err(Opcode::GetTupleElement, &[&t], &gte(2), None);
    err(Opcode::GetTupleElement, &[&t], &gte(-1), None);
    err(Opcode::GetTupleElement, &[&a(F32, &[2])], &gte(0), None);
    assert_eq!(ok(Opcode::Copy, &[&t], &none(), None), t);
    let iota = |d: i64| with(|at| at.iota_dimension = Some(d));
    assert_eq!(
        ok(Opcode::Iota, &[], &iota(1), Some(&a(S32, &[4, 5]))),
        a(S32, &[4, 5])
    );
    err(Opcode::Iota, &[], &iota(2), Some(&a(S32, &[4, 5])));
    // bitcast keeps the size in bits
    let x = a(F32, &[2, 3]);
    assert_eq!(
        ok(Opcode::Bitcast, &[&x], &none(), Some(&a(F32, &[6]))),
        a(F32, &[6])
    );
    assert_eq!(
        ok(Opcode::Bitcast, &[&x], &none(), Some(&a(S32, &[3, 2]))),
        a(S32, &[3, 2])
    );
    assert_eq!(
        ok(Opcode::Bitcast, &[&x], &none(), Some(&a(F16, &[12]))),
        a(F16, &[12])
    );
    err(Opcode::Bitcast, &[&x], &none(), Some(&a(F16, &[6])));
    // parameters and parse-only ops take the declared shape
    let p = with(|at| at.parameter_number = Some(0));
    assert_eq!(ok(Opcode::Parameter, &[], &p, Some(&t)), t);
    assert_eq!(ok(Opcode::CustomCall, &[&x], &none(), Some(&t)), t);
    assert_eq!(
        err(Opcode::CustomCall, &[&x], &none(), None).kind,
        ShapeErrorKind::NeedsDeclaredShape
    );
    assert_eq!(
        err(Opcode::Add, &[&x], &none(), None).kind,
        ShapeErrorKind::Arity
    );
}

#[test]
fn constants_must_fit_their_shape() {
    let c = |d: ConstantData| with(|at| at.constant = Some(d));
    let x = a(F32, &[2]);
    assert_eq!(
        ok(
            Opcode::Constant,
            &[],
            &c(ConstantData::Float(vec![1.0, 2.0])),
            Some(&x)
        ),
        x
    );
    err(
        Opcode::Constant,
        &[],
        &c(ConstantData::Float(vec![1.0, 2.0, 3.0])),
        Some(&x),
    );
    err(
        Opcode::Constant,
        &[],
        &c(ConstantData::Int(vec![1, 2])),
        Some(&x),
    );
    err(
        Opcode::Constant,
        &[],
        &c(ConstantData::Int(vec![300])),
        Some(&sc(S8)),
    );
    assert_eq!(
        ok(
            Opcode::Constant,
            &[],
            &c(ConstantData::Int(vec![-128])),
            Some(&sc(S8))
        ),
        sc(S8)
    );
    let t = Shape::Tuple(vec![sc(Pred), sc(U8)]);
    let td = ConstantData::Tuple(vec![
        ConstantData::Pred(vec![true]),
        ConstantData::Int(vec![255]),
    ]);
    assert_eq!(ok(Opcode::Constant, &[], &c(td), Some(&t)), t);
    assert_eq!(
        err(Opcode::Constant, &[], &none(), Some(&x)).kind,
        ShapeErrorKind::MissingAttribute
    );
}

#[test]
fn control_flow_shapes() {
    let v = a(F32, &[3]);
    let call = with(|at| at.to_apply = Some(CompId(5)));
    assert_eq!(okc(Opcode::Call, &[&v, &v], &call), v);
    assert_eq!(
        errc(Opcode::Call, &[&v], &call).kind,
        ShapeErrorKind::Callee
    );
    errc(Opcode::Call, &[&v, &a(F32, &[4])], &call);
    let fusion = with(|at| {
        at.fusion_kind = Some(FusionKind::Loop);
        at.calls = vec![CompId(5)];
    });
    assert_eq!(okc(Opcode::Fusion, &[&v, &v], &fusion), v);
    let no_kind = with(|at| at.calls = vec![CompId(5)]);
    assert_eq!(
        errc(Opcode::Fusion, &[&v, &v], &no_kind).kind,
        ShapeErrorKind::MissingAttribute
    );

    let wl = |c: u32, b: u32| {
        with(|at| {
            at.condition = Some(CompId(c));
            at.body = Some(CompId(b));
        })
    };
    assert_eq!(okc(Opcode::While, &[&sc(S32)], &wl(6, 7)), sc(S32));
    errc(Opcode::While, &[&sc(F32)], &wl(6, 7));
    // a body as condition returns s32, not pred
    assert_eq!(
        errc(Opcode::While, &[&sc(S32)], &wl(7, 7)).kind,
        ShapeErrorKind::Callee
    );

    let two = a(F32, &[2]);
    let cond =
        |bs: &[u32]| with(|at| at.branch_computations = bs.iter().map(|&b| CompId(b)).collect());
    assert_eq!(
        okc(
            Opcode::Conditional,
            &[&sc(Pred), &two, &two],
            &cond(&[9, 9])
        ),
        two
    );
    assert_eq!(
        okc(
            Opcode::Conditional,
            &[&sc(S32), &two, &two, &two],
            &cond(&[9, 9, 9])
        ),
        two
    );
    errc(
        Opcode::Conditional,
        &[&sc(Pred), &two, &two, &two],
        &cond(&[9, 9, 9]),
    );
    errc(Opcode::Conditional, &[&sc(S32), &two], &cond(&[9, 9]));
    let mut pred_form = cond(&[9, 9]);
    pred_form.pred_branches = true;
    assert_eq!(
        okc(Opcode::Conditional, &[&sc(Pred), &two, &two], &pred_form),
        two
    );
    errc(Opcode::Conditional, &[&sc(S32), &two, &two], &pred_form);
    assert_eq!(
        errc(
            Opcode::Conditional,
            &[&sc(S32), &two, &two],
            &cond(&[9, 10])
        )
        .kind,
        ShapeErrorKind::Callee
    );
    errc(Opcode::Conditional, &[&sc(S32), &a(F32, &[3])], &cond(&[9]));
}

/// Attributes with every field set to `v` (or derived from it).
fn hostile_attrs(v: i64, comp: u32) -> Attrs {
    let w = WindowDim {
        size: v,
        stride: v,
        pad_low: v,
        pad_high: v,
        base_dilation: v,
        window_dilation: v,
        reversal: true,
    };
    let vs = vec![v, v.wrapping_add(1), 0];
    Attrs {
        parameter_number: Some(v),
        index: Some(v),
        dimensions: Some(vs.clone()),
        iota_dimension: Some(v),
        slice: Some(vec![
            SliceDim {
                start: v,
                limit: v.wrapping_mul(2),
                stride: v
            };
            2
        ]),
        dynamic_slice_sizes: Some(vs.clone()),
        padding: Some(vec![
            PadDim {
                low: v,
                high: v,
                interior: v
            };
            2
        ]),
        window: Some(vec![w; 2]),
        conv_dims: Some(ConvDims {
            input_batch: v,
            input_feature: 0,
            input_spatial: vec![1, v],
            kernel_input_feature: v,
            kernel_output_feature: 1,
            kernel_spatial: vec![v, 0],
            output_batch: 0,
            output_feature: v,
            output_spatial: vec![2, 3],
        }),
        feature_group_count: Some(v),
        batch_group_count: Some(v),
        dot_dims: Some(DotDims {
            lhs_batch: vec![v],
            lhs_contracting: vec![0],
            rhs_batch: vec![0],
            rhs_contracting: vec![v],
        }),
        gather_dims: Some(GatherDims {
            offset_dims: vs.clone(),
            collapsed_slice_dims: vec![v],
            start_index_map: vec![0, v],
            index_vector_dim: v,
            operand_batching_dims: vec![v],
            start_indices_batching_dims: vec![v],
            slice_sizes: vs.clone(),
        }),
        scatter_dims: Some(ScatterDims {
            update_window_dims: vs.clone(),
            inserted_window_dims: vec![v],
            scatter_dims_to_operand_dims: vec![v, 0],
            index_vector_dim: v,
            input_batching_dims: vec![v],
            scatter_indices_batching_dims: vec![v],
        }),
        direction: Some(ComparisonDirection::Eq),
        comparison_type: Some(ComparisonType::Unsigned),
        exponent_bits: Some(v),
        mantissa_bits: Some(v),
        fusion_kind: Some(FusionKind::Loop),
        calls: vec![CompId(comp)],
        to_apply: Some(CompId(comp)),
        condition: Some(CompId(comp)),
        body: Some(CompId(comp)),
        branch_computations: vec![CompId(comp); 2],
        select: Some(CompId(comp)),
        scatter: Some(CompId(comp)),
        constant: Some(ConstantData::Int(vec![v as i128])),
        ..Attrs::default()
    }
}

/// No opcode panics on hostile attributes and odd operands: it returns a result.
#[test]
fn hostile_inputs_never_panic() {
    let comps = comps();
    let pool = [
        sc(F32),
        sc(S32),
        a(F32, &[2, 3]),
        a(S32, &[3, 1]),
        a(F32, &[1, 2, 2, 3]),
        a(F32, &[0, 4]),
        a(F32, &[-1, 4]),
        a(F32, &[i64::MAX, 2]),
        Shape::Tuple(vec![sc(S32), a(F32, &[2])]),
        Shape::Token,
    ];
    let values = [-1, 0, 1, 2, 3, 1 << 40, i64::MAX, i64::MIN];
    let mut results = 0usize;
    for &op in Opcode::ALL {
        for &v in &values {
            for comp in [0u32, 5, 9, u32::MAX] {
                let attrs = hostile_attrs(v, comp);
                for n in 0..5usize {
                    for start in 0..pool.len() {
                        let ops: Vec<&Shape> = (0..n)
                            .map(|k| &pool[(start + k * 3) % pool.len()])
                            .collect();
                        for declared in [None, Some(&pool[start]), Some(&pool[2])] {
                            let _ = infer(op, &ops, &attrs, &comps, declared);
                            results += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(results > 100_000);
}
