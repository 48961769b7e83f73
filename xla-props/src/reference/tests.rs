//! Unit tests pinning the semantics. Expected values are worked out by hand
//! from the XLA operation semantics, never copied from the evaluator.

use super::*;
use crate::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection as Dir, ComparisonType, Computation,
    ConstantData, ConvDims, DotDims, ElementType as T, GatherDims, InstrId, Instruction, Layout,
    Module, Opcode as O, PadDim, ScatterDims, Shape, SliceDim, WindowDim,
};
use crate::literal::{Literal, Value};

fn sh(t: T, dims: &[i64]) -> Shape {
    Shape::array(t, dims.to_vec())
}

fn lit(t: T, dims: &[i64], v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(t, dims.to_vec()), v).unwrap()
}

fn ilit(t: T, dims: &[i64], v: &[i128]) -> Literal {
    Literal::from_i128s(&ArrayShape::new(t, dims.to_vec()), v).unwrap()
}

/// Builds modules computation by computation.
#[derive(Default)]
struct B {
    comps: Vec<Computation>,
    cur: Vec<Instruction>,
}

impl B {
    fn param(&mut self, n: i64, s: Shape) -> InstrId {
        let mut i = Instruction::new(format!("p{n}"), O::Parameter, s, vec![]);
        i.attrs.parameter_number = Some(n);
        self.push(i)
    }
    fn push(&mut self, i: Instruction) -> InstrId {
        self.cur.push(i);
        InstrId(self.cur.len() as u32 - 1)
    }
    fn op(&mut self, op: O, s: Shape, ops: &[InstrId], f: impl FnOnce(&mut Attrs)) -> InstrId {
        let mut i = Instruction::new(format!("i{}", self.cur.len()), op, s, ops.to_vec());
        f(&mut i.attrs);
        self.push(i)
    }
    fn comp(&mut self, name: &str, root: InstrId) -> CompId {
        self.comps.push(Computation {
            name: name.into(),
            instructions: std::mem::take(&mut self.cur),
            root,
            other: vec![],
        });
        CompId(self.comps.len() as u32 - 1)
    }
    /// A scalar computation `op(p0, p1)`.
    fn binop(&mut self, op: O, t: T) -> CompId {
        let (a, b) = (self.param(0, sh(t, &[])), self.param(1, sh(t, &[])));
        let r = self.op(op, sh(t, &[]), &[a, b], |_| {});
        self.comp(&format!("{op}_{t}"), r)
    }
    fn module(self, entry: CompId) -> Module {
        Module {
            name: "test".into(),
            attrs: vec![],
            computations: self.comps,
            entry,
        }
    }
}

/// A module of one op over parameters shaped like `args`.
fn one_op(op: O, out: Shape, args: &[&Literal], f: impl FnOnce(&mut Attrs)) -> Module {
    let mut b = B::default();
    let ps: Vec<InstrId> = args
        .iter()
        .enumerate()
        .map(|(k, a)| b.param(k as i64, Shape::Array(a.shape())))
        .collect();
    let r = b.op(op, out, &ps, f);
    let e = b.comp("main", r);
    b.module(e)
}

fn run1(
    op: O,
    out: Shape,
    args: &[&Literal],
    f: impl FnOnce(&mut Attrs),
) -> Result<Vec<Literal>, EvalError> {
    let m = one_op(op, out, args, f);
    evaluate(&m, &args.iter().map(|l| (*l).clone()).collect::<Vec<_>>())
}

/// The dot of two vectors (contracting their one dimension) into `out`.
fn inner_product(out: Shape, x: &Literal, y: &Literal) -> Vec<Literal> {
    run1(O::Dot, out, &[x, y], |t| {
        t.dot_dims = Some(DotDims {
            lhs_contracting: vec![0],
            rhs_contracting: vec![0],
            ..DotDims::default()
        })
    })
    .unwrap()
}

fn ints(op: O, out: Shape, args: &[&Literal]) -> Vec<i128> {
    run1(op, out, args, |_| {}).unwrap()[0].to_i128_vec()
}

fn floats(op: O, out: Shape, args: &[&Literal]) -> Vec<f64> {
    run1(op, out, args, |_| {}).unwrap()[0].to_f64_vec()
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

const S32_MIN: i128 = i32::MIN as i128;
const S32_MAX: i128 = i32::MAX as i128;

// ---------- elementwise: integers ----------

#[test]
fn integer_division_by_zero_and_overflow() {
    let a = ilit(T::S32, &[4], &[7, -7, S32_MIN, 5]);
    let b = ilit(T::S32, &[4], &[0, 0, -1, -2]);
    assert_eq!(
        ints(O::Divide, sh(T::S32, &[4]), &[&a, &b]),
        vec![-1, -1, S32_MIN, -2]
    );
    let u = ilit(T::U8, &[2], &[7, 9]);
    let z = ilit(T::U8, &[2], &[0, 2]);
    assert_eq!(ints(O::Divide, sh(T::U8, &[2]), &[&u, &z]), vec![255, 4]);
    assert_eq!(ints(O::Remainder, sh(T::U8, &[2]), &[&u, &z]), vec![7, 1]);
}

#[test]
fn integer_remainder_takes_the_dividends_sign() {
    let a = ilit(T::S32, &[6], &[7, -7, S32_MIN, 5, -5, 5]);
    let b = ilit(T::S32, &[6], &[0, 0, -1, -3, 3, 3]);
    assert_eq!(
        ints(O::Remainder, sh(T::S32, &[6]), &[&a, &b]),
        vec![7, -7, 0, 2, -2, 2]
    );
}

#[test]
fn shifts_by_the_width_or_more() {
    let s = sh(T::S8, &[4]);
    let one = ilit(T::S8, &[4], &[1, 1, 1, 1]);
    let amt = ilit(T::S8, &[4], &[7, 8, -1, 100]);
    assert_eq!(
        ints(O::ShiftLeft, s.clone(), &[&one, &amt]),
        vec![-128, 0, 0, 0]
    );
    let neg = ilit(T::S8, &[4], &[-128, -128, -128, 64]);
    let amt2 = ilit(T::S8, &[4], &[1, 8, 9, 9]);
    assert_eq!(
        ints(O::ShiftRightLogical, s.clone(), &[&neg, &amt2]),
        vec![64, 0, 0, 0]
    );
    assert_eq!(
        ints(O::ShiftRightArithmetic, s, &[&neg, &amt2]),
        vec![-64, -1, -1, 0]
    );
    let u = ilit(T::U8, &[2], &[0x80, 0x80]);
    let k = ilit(T::U8, &[2], &[7, 8]);
    // arithmetic shift of an unsigned value fills with its top bit
    assert_eq!(
        ints(O::ShiftRightArithmetic, sh(T::U8, &[2]), &[&u, &k]),
        vec![0xff, 0xff]
    );
}

#[test]
fn integer_power() {
    let a = ilit(T::S32, &[8], &[2, 2, 1, -1, 3, -2, -1, -3]);
    let b = ilit(T::S32, &[8], &[10, -1, -5, -1, 0, 3, -4, -1]);
    // negative exponents: the integer part of the exact power (1 for a base
    // of 1, ±1 by parity for -1, 0 otherwise), as XLA CPU computes it
    assert_eq!(
        ints(O::Power, sh(T::S32, &[8]), &[&a, &b]),
        vec![1024, 0, 1, -1, 1, -8, 1, 0]
    );
    let m1 = ilit(T::S8, &[1], &[-1]);
    let e = ilit(T::S8, &[1], &[-128]);
    assert_eq!(ints(O::Power, sh(T::S8, &[1]), &[&m1, &e]), vec![1]);
    let w = ilit(T::U8, &[1], &[3]);
    let e = ilit(T::U8, &[1], &[5]);
    assert_eq!(ints(O::Power, sh(T::U8, &[1]), &[&w, &e]), vec![243]);
}

#[test]
fn integer_unary_ops() {
    let x = ilit(T::S8, &[4], &[-128, -5, 0, 7]);
    let s = sh(T::S8, &[4]);
    assert_eq!(ints(O::Abs, s.clone(), &[&x]), vec![-128, 5, 0, 7]);
    assert_eq!(ints(O::Negate, s.clone(), &[&x]), vec![-128, 5, 0, -7]);
    assert_eq!(ints(O::Sign, s.clone(), &[&x]), vec![-1, -1, 0, 1]);
    assert_eq!(ints(O::Not, s.clone(), &[&x]), vec![127, 4, -1, -8]);
    assert_eq!(ints(O::Popcnt, s.clone(), &[&x]), vec![1, 7, 0, 3]);
    assert_eq!(ints(O::CountLeadingZeros, s, &[&x]), vec![0, 0, 8, 5]);
    let u = ilit(T::U32, &[2], &[1, 0]);
    assert_eq!(
        ints(O::CountLeadingZeros, sh(T::U32, &[2]), &[&u]),
        vec![31, 32]
    );
    let w = ilit(T::U8, &[1], &[200]);
    assert_eq!(ints(O::Add, sh(T::U8, &[1]), &[&w, &w]), vec![144]);
}

#[test]
fn logic_on_pred_and_ints() {
    let p = ilit(T::Pred, &[4], &[0, 0, 1, 1]);
    let q = ilit(T::Pred, &[4], &[0, 1, 0, 1]);
    let s = sh(T::Pred, &[4]);
    assert_eq!(ints(O::And, s.clone(), &[&p, &q]), vec![0, 0, 0, 1]);
    assert_eq!(ints(O::Or, s.clone(), &[&p, &q]), vec![0, 1, 1, 1]);
    assert_eq!(ints(O::Xor, s.clone(), &[&p, &q]), vec![0, 1, 1, 0]);
    assert_eq!(ints(O::Not, s, &[&p]), vec![1, 1, 0, 0]);
    let a = ilit(T::U8, &[1], &[0b1100]);
    let b = ilit(T::U8, &[1], &[0b1010]);
    assert_eq!(ints(O::Xor, sh(T::U8, &[1]), &[&a, &b]), vec![0b0110]);
    assert_eq!(ints(O::Not, sh(T::U8, &[1]), &[&a]), vec![0xf3]);
}

// ---------- elementwise: floats ----------

#[test]
fn round_afz_versus_even() {
    let x = lit(T::F32, &[6], &[0.5, 1.5, 2.5, -0.5, -1.5, -2.5]);
    let s = sh(T::F32, &[6]);
    assert!(same_bits(
        &floats(O::RoundNearestAfz, s.clone(), &[&x]),
        &[1.0, 2.0, 3.0, -1.0, -2.0, -3.0]
    ));
    assert!(same_bits(
        &floats(O::RoundNearestEven, s, &[&x]),
        &[0.0, 2.0, 2.0, -0.0, -2.0, -2.0]
    ));
}

#[test]
fn max_min_propagate_nan_and_order_signed_zeros() {
    let nan = f64::NAN;
    let a = lit(T::F32, &[5], &[nan, 1.0, -0.0, 0.0, 3.0]);
    let b = lit(T::F32, &[5], &[1.0, nan, 0.0, -0.0, -3.0]);
    let s = sh(T::F32, &[5]);
    assert!(same_bits(
        &floats(O::Maximum, s.clone(), &[&a, &b]),
        &[nan, nan, 0.0, 0.0, 3.0]
    ));
    assert!(same_bits(
        &floats(O::Minimum, s, &[&a, &b]),
        &[nan, nan, -0.0, -0.0, -3.0]
    ));
}

#[test]
fn sign_and_is_finite() {
    let x = lit(T::F16, &[5], &[-0.0, 0.0, f64::NAN, -3.0, f64::INFINITY]);
    assert!(same_bits(
        &floats(O::Sign, sh(T::F16, &[5]), &[&x]),
        &[-0.0, 0.0, f64::NAN, -1.0, 1.0]
    ));
    assert_eq!(
        ints(O::IsFinite, sh(T::Pred, &[5]), &[&x]),
        vec![1, 1, 0, 1, 0]
    );
}

#[test]
fn float_ops_round_once() {
    // f16: 1 + 2^-11 is a tie (even: 1); 3 * 1365/4096 = 1 - 2^-12 exactly, a tie
    // between 1 - 2^-11 (odd mantissa) and 1 (even): 1.
    let a = lit(T::F16, &[2], &[1.0, 3.0]);
    let b = lit(T::F16, &[2], &[2f64.powi(-11), 0.333251953125]);
    assert_eq!(floats(O::Add, sh(T::F16, &[2]), &[&a, &b])[0], 1.0);
    assert_eq!(floats(O::Multiply, sh(T::F16, &[2]), &[&a, &b])[1], 1.0);
    let c = lit(T::F16, &[1], &[1365.0 / 4096.0 + 2f64.powi(-13)]);
    // 3 * (1365/4096 + 2^-13) = 1 - 2^-12 + 3 * 2^-13 > 1: rounds to 1 + 2^-10? no: to 1
    // (1 + 2^-13 is below the next tie at 1 + 2^-11)
    assert_eq!(
        floats(
            O::Multiply,
            sh(T::F16, &[1]),
            &[&lit(T::F16, &[1], &[3.0]), &c]
        ),
        vec![1.0]
    );
    let x = lit(T::Bf16, &[1], &[1.0]);
    let y = lit(T::Bf16, &[1], &[3.0]);
    // 1/3 rounded once to bf16: 0.333984375
    assert_eq!(
        floats(O::Divide, sh(T::Bf16, &[1]), &[&x, &y]),
        vec![0.333984375]
    );
    let r = lit(T::F32, &[2], &[-7.5, 7.5]);
    let d = lit(T::F32, &[2], &[2.0, -2.0]);
    assert_eq!(
        floats(O::Remainder, sh(T::F32, &[2]), &[&r, &d]),
        vec![-1.5, 1.5]
    );
    let one = lit(T::F32, &[1], &[1.0]);
    let m1 = lit(T::F32, &[1], &[-1.0]);
    assert_eq!(
        floats(O::Atan2, sh(T::F32, &[1]), &[&one, &m1])[0],
        (3.0 * std::f64::consts::PI / 4.0) as f32 as f64
    );
}

// ---------- selection ----------

fn cmp(a: &Literal, b: &Literal, d: Dir, t: Option<ComparisonType>) -> Vec<i128> {
    let n = a.element_count() as i64;
    run1(O::Compare, sh(T::Pred, &[n]), &[a, b], |at| {
        at.direction = Some(d);
        at.comparison_type = t;
    })
    .unwrap()[0]
        .to_i128_vec()
}

#[test]
fn compare_total_order() {
    let neg_nan = f64::from_bits(0xfff8_0000_0000_0000);
    let v = [
        neg_nan,
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        1.0,
        f64::INFINITY,
        f64::NAN,
    ];
    let a = lit(T::F32, &[7], &v[..7]);
    let b = lit(T::F32, &[7], &v[1..]);
    let to = Some(ComparisonType::TotalOrder);
    assert_eq!(cmp(&a, &b, Dir::Lt, to), vec![1; 7]);
    assert_eq!(cmp(&b, &a, Dir::Gt, to), vec![1; 7]);
    assert_eq!(cmp(&a, &b, Dir::Ge, to), vec![0; 7]);
    let z = lit(T::F16, &[2], &[-0.0, f64::NAN]);
    let w = lit(T::F16, &[2], &[0.0, f64::NAN]);
    assert_eq!(cmp(&z, &w, Dir::Eq, to), vec![0, 1]);
    assert_eq!(cmp(&z, &w, Dir::Lt, to), vec![1, 0]);
}

#[test]
fn compare_float_is_ieee() {
    let a = lit(T::F32, &[3], &[-0.0, f64::NAN, f64::NAN]);
    let b = lit(T::F32, &[3], &[0.0, f64::NAN, 1.0]);
    let f = Some(ComparisonType::Float);
    assert_eq!(cmp(&a, &b, Dir::Eq, f), vec![1, 0, 0]);
    assert_eq!(cmp(&a, &b, Dir::Ne, f), vec![0, 1, 1]);
    assert_eq!(cmp(&a, &b, Dir::Lt, None), vec![0, 0, 0]);
    assert_eq!(cmp(&a, &b, Dir::Le, None), vec![1, 0, 0]);
    let i = ilit(T::U32, &[2], &[u32::MAX as i128, 1]);
    let j = ilit(T::U32, &[2], &[1, 1]);
    assert_eq!(
        cmp(&i, &j, Dir::Gt, Some(ComparisonType::Unsigned)),
        vec![1, 0]
    );
}

#[test]
fn select_and_clamp() {
    let p = ilit(T::Pred, &[], &[1]);
    let a = lit(T::F32, &[2], &[1.0, 2.0]);
    let b = lit(T::F32, &[2], &[3.0, 4.0]);
    assert_eq!(
        floats(O::Select, sh(T::F32, &[2]), &[&p, &a, &b]),
        vec![1.0, 2.0]
    );
    let q = ilit(T::Pred, &[2], &[0, 1]);
    assert_eq!(
        floats(O::Select, sh(T::F32, &[2]), &[&q, &a, &b]),
        vec![3.0, 2.0]
    );
    let lo = lit(T::F32, &[], &[0.0]);
    let hi = lit(T::F32, &[], &[1.0]);
    let x = lit(T::F32, &[4], &[-1.0, 0.5, 2.0, f64::NAN]);
    assert!(same_bits(
        &floats(O::Clamp, sh(T::F32, &[4]), &[&lo, &x, &hi]),
        &[0.0, 0.5, 1.0, f64::NAN]
    ));
    let il = ilit(T::S32, &[], &[-2]);
    let ih = ilit(T::S32, &[], &[2]);
    let ix = ilit(T::S32, &[3], &[-9, 1, 9]);
    assert_eq!(
        ints(O::Clamp, sh(T::S32, &[3]), &[&il, &ix, &ih]),
        vec![-2, 1, 2]
    );
}

// ---------- conversion ----------

#[test]
fn float_to_int_saturates_and_nan_is_zero() {
    let x = lit(
        T::F32,
        &[7],
        &[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            3e9,
            -3e9,
            2.9,
            -2.9,
        ],
    );
    assert_eq!(
        ints(O::Convert, sh(T::S32, &[7]), &[&x]),
        vec![0, S32_MAX, S32_MIN, S32_MAX, S32_MIN, 2, -2]
    );
    let y = lit(T::F32, &[3], &[-1.5, 300.0, 255.9]);
    assert_eq!(ints(O::Convert, sh(T::U8, &[3]), &[&y]), vec![0, 255, 255]);
}

#[test]
fn int_to_float_rounds_once() {
    // 2^60 + 2^52 + 1 lies just above the bf16 tie at 2^60 + 2^52; an f64 detour
    // would drop the +1 and tie to even (2^60).
    let big = (1i128 << 60) + (1i128 << 52) + 1;
    let x = ilit(T::S64, &[2], &[big, (1i128 << 53) + 1]);
    let r = floats(O::Convert, sh(T::Bf16, &[2]), &[&x]);
    assert_eq!(r[0], 2f64.powi(60) + 2f64.powi(53));
    let f = floats(O::Convert, sh(T::F32, &[2]), &[&x]);
    assert_eq!(f[1], 2f64.powi(53));
    let u = ilit(T::U64, &[1], &[u64::MAX as i128]);
    assert_eq!(
        floats(O::Convert, sh(T::F16, &[1]), &[&u]),
        vec![f64::INFINITY]
    );
}

#[test]
fn pred_conversions() {
    let x = lit(T::F32, &[4], &[0.0, -0.0, 0.5, f64::NAN]);
    assert_eq!(ints(O::Convert, sh(T::Pred, &[4]), &[&x]), vec![0, 0, 1, 1]);
    let p = ilit(T::Pred, &[2], &[1, 0]);
    assert_eq!(floats(O::Convert, sh(T::F16, &[2]), &[&p]), vec![1.0, 0.0]);
    let i = ilit(T::S32, &[2], &[300, -1]);
    assert_eq!(ints(O::Convert, sh(T::U8, &[2]), &[&i]), vec![44, 255]);
    let d = lit(T::F64, &[1], &[1.0 + 2f64.powi(-11) + 2f64.powi(-40)]);
    assert_eq!(
        floats(O::Convert, sh(T::F16, &[1]), &[&d]),
        vec![1.0 + 2f64.powi(-10)]
    );
}

#[test]
fn bitcast_convert_same_and_different_widths() {
    let x = lit(T::F32, &[], &[1.0]);
    assert_eq!(
        ints(O::BitcastConvert, sh(T::U32, &[]), &[&x]),
        vec![0x3f80_0000]
    );
    assert_eq!(
        ints(O::BitcastConvert, sh(T::U8, &[4]), &[&x]),
        vec![0, 0, 0x80, 0x3f]
    );
    let b = ilit(T::U8, &[2], &[0x34, 0x12]);
    assert_eq!(
        ints(O::BitcastConvert, sh(T::S16, &[]), &[&b]),
        vec![0x1234]
    );
    let h = ilit(T::U16, &[1], &[0x3c00]);
    assert_eq!(
        floats(O::BitcastConvert, sh(T::F16, &[1]), &[&h]),
        vec![1.0]
    );
    assert!(run1(O::BitcastConvert, sh(T::U8, &[3]), &[&x], |_| {}).is_err());
}

#[test]
fn reduce_precision_bits() {
    let rp = |x: &[f64], e: i64, m: i64| {
        run1(
            O::ReducePrecision,
            sh(T::F32, &[x.len() as i64]),
            &[&lit(T::F32, &[x.len() as i64], x)],
            |a| {
                a.exponent_bits = Some(e);
                a.mantissa_bits = Some(m);
            },
        )
        .unwrap()[0]
            .to_f64_vec()
    };
    let ties = [
        1.0 + 2f64.powi(-11),
        1.0 + 3.0 * 2f64.powi(-11),
        1.0 + 2f64.powi(-11) + 2f64.powi(-20),
    ];
    // to 10 mantissa bits: ties go to even, above the tie goes up
    assert_eq!(
        rp(&ties, 8, 10),
        vec![1.0, 1.0 + 2.0 * 2f64.powi(-10), 1.0 + 2f64.powi(-10)]
    );
    // f16's range: 65520 rounds up to 65536 = 2^16, beyond the max exponent: inf;
    // 1e-5 is below f16's smallest normal 2^-14: flushed to zero (no denormals)
    let r = rp(
        &[65504.0, 65520.0, 1e-5, -1e-5, 2f64.powi(-14), -70000.0],
        5,
        10,
    );
    assert!(same_bits(
        &r,
        &[
            65504.0,
            f64::INFINITY,
            0.0,
            -0.0,
            2f64.powi(-14),
            f64::NEG_INFINITY
        ]
    ));
    assert!(rp(&[f64::NAN], 5, 10)[0].is_nan());
    assert_eq!(rp(&[f64::NAN], 5, 0)[0], f64::INFINITY);
    assert_eq!(rp(&[1.75], 8, 0), vec![2.0]);
}

/// Narrow float types are reduced through their f32 value, as XLA's
/// `HloEvaluator` does (openxla/xla `xla/hlo/evaluator/hlo_evaluator_typed_visitor.h`:
/// `HandleReducePrecision` is enabled for `std::is_floating_point` types only and
/// dispatched as `HandleReducePrecision<ElementwiseT>`, with `ElementwiseT = float`
/// for `HloEvaluatorTypedVisitor<tsl::float8_e4m3fn, float>`, `<Eigen::half, float>`
/// and `<bfloat16, float>`; the reduced f32 is then `static_cast` back).
#[test]
fn reduce_precision_of_narrow_types_goes_through_f32() {
    let rp = |t: T, x: &[f64], e: i64, m: i64| {
        run1(
            O::ReducePrecision,
            sh(t, &[x.len() as i64]),
            &[&lit(t, &[x.len() as i64], x)],
            |a| {
                a.exponent_bits = Some(e);
                a.mantissa_bits = Some(m);
            },
        )
        .unwrap()[0]
            .to_f64_vec()
    };
    // f8e4m3fn under e4m3: the reduced format has IEEE infinities, so its largest
    // finite value is 240; 256..448 overflow to inf, which f8e4m3fn spells NaN.
    let r = rp(T::F8E4M3Fn, &[-448.0, 256.0, 240.0, -1.0], 4, 3);
    assert!(r[0].is_nan() && r[1].is_nan(), "{r:?}");
    assert_eq!(&r[2..], &[240.0, -1.0]);
    // the reduced format has no denormals: f8e4m3fn's subnormals (2^-9..2^-7)
    // flush to zero, its smallest normal 2^-6 stays
    let r = rp(
        T::F8E4M3Fn,
        &[2f64.powi(-9), -2f64.powi(-7), 2f64.powi(-6)],
        4,
        3,
    );
    assert!(same_bits(&r, &[0.0, -0.0, 2f64.powi(-6)]), "{r:?}");
    // f16 under e5m10 keeps every normal and flushes every subnormal
    let r = rp(
        T::F16,
        &[65504.0, 2f64.powi(-14), 2f64.powi(-24), -2f64.powi(-15)],
        5,
        10,
    );
    assert!(
        same_bits(&r, &[65504.0, 2f64.powi(-14), 0.0, -0.0]),
        "{r:?}"
    );
    // bf16 under e8m7: f32's own exponent width, so nothing is flushed
    // (`dest_exponent_bits < src_exponent_bits` is false); under e5m10 it is
    let r = rp(T::Bf16, &[2f64.powi(-130), 1.5], 8, 7);
    assert!(same_bits(&r, &[2f64.powi(-130), 1.5]), "{r:?}");
    let r = rp(T::Bf16, &[2f64.powi(-130), 1.5], 5, 10);
    assert!(same_bits(&r, &[0.0, 1.5]), "{r:?}");
    // f8e5m2 under e5m2: subnormals flushed, infinities kept
    let r = rp(T::F8E5M2, &[2f64.powi(-16), f64::INFINITY, 57344.0], 5, 2);
    assert!(same_bits(&r, &[0.0, f64::INFINITY, 57344.0]), "{r:?}");
}

// ---------- shape ops ----------

#[test]
fn iota_on_each_dimension() {
    let r0 = run1(O::Iota, sh(T::S32, &[2, 3]), &[], |a| {
        a.iota_dimension = Some(0)
    })
    .unwrap();
    assert_eq!(r0[0].to_i128_vec(), vec![0, 0, 0, 1, 1, 1]);
    let r1 = run1(O::Iota, sh(T::F32, &[2, 3]), &[], |a| {
        a.iota_dimension = Some(1)
    })
    .unwrap();
    assert_eq!(r1[0].to_f64_vec(), vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    assert!(run1(O::Iota, sh(T::S32, &[2]), &[], |a| a.iota_dimension =
        Some(1))
    .is_err());
}

#[test]
fn bitcast_reads_physical_order() {
    let x = lit(T::F32, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let mut out = ArrayShape::new(T::F32, vec![3, 2]);
    out.layout = Some(Layout {
        minor_to_major: vec![0, 1],
        extra: None,
    });
    let r = run1(O::Bitcast, Shape::Array(out.clone()), &[&x], |_| {}).unwrap();
    // physical position p = j*3 + i holds element p of the operand: a transpose
    assert_eq!(r[0].to_f64_vec(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(r[0].layout(), out.layout.as_ref());
    // copy between layouts keeps the logical values
    let c = run1(O::Copy, sh(T::F32, &[3, 2]), &[&r[0]], |_| {}).unwrap();
    assert_eq!(c[0].to_f64_vec(), r[0].to_f64_vec());
}

#[test]
fn broadcast_transpose_reshape_reverse() {
    let x = lit(T::F32, &[2], &[1.0, 2.0]);
    let b = run1(O::Broadcast, sh(T::F32, &[2, 3]), &[&x], |a| {
        a.dimensions = Some(vec![0])
    })
    .unwrap();
    assert_eq!(b[0].to_f64_vec(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let t = run1(O::Transpose, sh(T::F32, &[3, 2]), &[&b[0]], |a| {
        a.dimensions = Some(vec![1, 0])
    })
    .unwrap();
    assert_eq!(t[0].to_f64_vec(), vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    let m = lit(T::F32, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let r = run1(O::Reshape, sh(T::F32, &[3, 2]), &[&m], |_| {}).unwrap();
    assert_eq!(r[0].to_f64_vec(), m.to_f64_vec());
    let v = run1(O::Reverse, sh(T::F32, &[2, 3]), &[&m], |a| {
        a.dimensions = Some(vec![1])
    })
    .unwrap();
    assert_eq!(v[0].to_f64_vec(), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
}

#[test]
fn slice_concatenate_pad() {
    let x = ilit(T::S32, &[10], &(0..10).collect::<Vec<_>>());
    let s = run1(O::Slice, sh(T::S32, &[3]), &[&x], |a| {
        a.slice = Some(vec![SliceDim {
            start: 1,
            limit: 8,
            stride: 3,
        }])
    })
    .unwrap();
    assert_eq!(s[0].to_i128_vec(), vec![1, 4, 7]);
    let a = ilit(T::S32, &[1, 2], &[1, 2]);
    let b = ilit(T::S32, &[2, 2], &[3, 4, 5, 6]);
    let c = run1(O::Concatenate, sh(T::S32, &[3, 2]), &[&a, &b], |t| {
        t.dimensions = Some(vec![0])
    })
    .unwrap();
    assert_eq!(c[0].to_i128_vec(), vec![1, 2, 3, 4, 5, 6]);
    let p = ilit(T::S32, &[3], &[1, 2, 3]);
    let z = ilit(T::S32, &[], &[9]);
    // dilated [1,9,2,9,3], low -1 drops the 1, high 1 appends 9
    let r = run1(O::Pad, sh(T::S32, &[5]), &[&p, &z], |t| {
        t.padding = Some(vec![PadDim {
            low: -1,
            high: 1,
            interior: 1,
        }])
    })
    .unwrap();
    assert_eq!(r[0].to_i128_vec(), vec![9, 2, 9, 3, 9]);
}

// ---------- indexing ----------

#[test]
fn dynamic_slice_and_update_clamp_starts() {
    let x = ilit(T::S32, &[5], &[0, 1, 2, 3, 4]);
    let ds = |start: i128| {
        ints(
            O::DynamicSlice,
            sh(T::S32, &[2]),
            &[&x, &ilit(T::S32, &[], &[start])],
        )
    };
    assert_eq!(ds(4), vec![3, 4]);
    assert_eq!(ds(-3), vec![0, 1]);
    assert_eq!(ds(1), vec![1, 2]);
    let u = ilit(T::S32, &[2], &[8, 9]);
    let dus = |start: i128| {
        ints(
            O::DynamicUpdateSlice,
            sh(T::S32, &[5]),
            &[&x, &u, &ilit(T::S32, &[], &[start])],
        )
    };
    assert_eq!(dus(10), vec![0, 1, 2, 8, 9]);
    assert_eq!(dus(-1), vec![8, 9, 2, 3, 4]);
}

#[test]
fn gather_clamps_out_of_range_starts() {
    let x = ilit(T::S32, &[4], &[10, 20, 30, 40]);
    let idx = ilit(T::S32, &[3, 1], &[5, -1, 1]);
    let r = run1(O::Gather, sh(T::S32, &[3, 2]), &[&x, &idx], |a| {
        a.gather_dims = Some(GatherDims {
            offset_dims: vec![1],
            collapsed_slice_dims: vec![],
            start_index_map: vec![0],
            index_vector_dim: 1,
            slice_sizes: vec![2],
            ..GatherDims::default()
        })
    })
    .unwrap();
    assert_eq!(r[0].to_i128_vec(), vec![30, 40, 10, 20, 20, 30]);
}

#[test]
fn gather_with_batching_dims() {
    // operand [2 batches, 3]; indices [2 batches, 1]: batch b picks operand[b, idx[b]]
    let x = ilit(T::S32, &[2, 3], &[0, 1, 2, 10, 11, 12]);
    let idx = ilit(T::S32, &[2, 1], &[2, 1]);
    let r = run1(O::Gather, sh(T::S32, &[2]), &[&x, &idx], |a| {
        a.gather_dims = Some(GatherDims {
            offset_dims: vec![],
            collapsed_slice_dims: vec![1],
            start_index_map: vec![1],
            index_vector_dim: 1,
            slice_sizes: vec![1, 1],
            operand_batching_dims: vec![0],
            start_indices_batching_dims: vec![0],
        })
    })
    .unwrap();
    assert_eq!(r[0].to_i128_vec(), vec![2, 11]);
}

fn scatter_module(
    t: T,
    n: i64,
    k: i64,
    window: i64,
    combiner: impl FnOnce(&mut B) -> CompId,
) -> Module {
    let mut b = B::default();
    let comb = combiner(&mut b);
    let x = b.param(0, sh(t, &[n]));
    let i = b.param(1, sh(T::S32, &[k, 1]));
    let (ushape, dims) = if window == 1 {
        (
            sh(t, &[k]),
            ScatterDims {
                update_window_dims: vec![],
                inserted_window_dims: vec![0],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
                ..ScatterDims::default()
            },
        )
    } else {
        (
            sh(t, &[k, window]),
            ScatterDims {
                update_window_dims: vec![1],
                inserted_window_dims: vec![],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
                ..ScatterDims::default()
            },
        )
    };
    let u = b.param(2, ushape);
    let r = b.op(O::Scatter, sh(t, &[n]), &[x, i, u], |a| {
        a.scatter_dims = Some(dims);
        a.to_apply = Some(comb);
    });
    let e = b.comp("main", r);
    b.module(e)
}

#[test]
fn scatter_adds_duplicates_and_drops_out_of_range() {
    let m = scatter_module(T::F32, 4, 4, 1, |b| b.binop(O::Add, T::F32));
    let out = evaluate(
        &m,
        &[
            lit(T::F32, &[4], &[0.0; 4]),
            ilit(T::S32, &[4, 1], &[1, 1, 7, -1]),
            lit(T::F32, &[4], &[1.0, 2.0, 100.0, 50.0]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![0.0, 3.0, 0.0, 0.0]);
    // windows of 2: the one starting at 3 would not fit and is dropped (not clamped)
    let w = scatter_module(T::S32, 4, 2, 2, |b| b.binop(O::Add, T::S32));
    let out = evaluate(
        &w,
        &[
            ilit(T::S32, &[4], &[0; 4]),
            ilit(T::S32, &[2, 1], &[3, 1]),
            ilit(T::S32, &[2, 2], &[5, 6, 7, 8]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![0, 7, 8, 0]);
}

#[test]
fn scatter_applies_duplicates_in_update_order() {
    // combiner returns its second argument (the update): the last duplicate wins
    let m = scatter_module(T::S32, 3, 3, 1, |b| {
        let _p0 = b.param(0, sh(T::S32, &[]));
        let p1 = b.param(1, sh(T::S32, &[]));
        b.comp("second", p1)
    });
    let out = evaluate(
        &m,
        &[
            ilit(T::S32, &[3], &[0; 3]),
            ilit(T::S32, &[3, 1], &[2, 2, 0]),
            ilit(T::S32, &[3], &[5, 6, 7]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![7, 0, 6]);
}

// ---------- reductions ----------

fn reduce_module(
    x: Shape,
    t: T,
    dims: &[i64],
    out: Shape,
    reducer: impl FnOnce(&mut B) -> CompId,
) -> Module {
    let mut b = B::default();
    let r = reducer(&mut b);
    let p = b.param(0, x);
    let init = b.op(O::Constant, sh(t, &[]), &[], |a| {
        a.constant = Some(if t.is_float() {
            ConstantData::Float(vec![0.0])
        } else {
            ConstantData::Int(vec![0])
        })
    });
    let red = b.op(O::Reduce, out, &[p, init], |a| {
        a.dimensions = Some(dims.to_vec());
        a.to_apply = Some(r);
    });
    let e = b.comp("main", red);
    b.module(e)
}

#[test]
fn reduce_add_is_exact_and_rounds_once() {
    // 2048 + 1 + 2^-13: exactly above the f16 tie at 2049, so 2050. A sequential
    // f16 or f32 sum gives 2048.
    let m = reduce_module(sh(T::F16, &[3]), T::F16, &[0], sh(T::F16, &[]), |b| {
        b.binop(O::Add, T::F16)
    });
    let out = evaluate(&m, &[lit(T::F16, &[3], &[2048.0, 1.0, 2f64.powi(-13)])]).unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![2050.0]);
    // cancellation: exact sum of 1e30, 1, -1e30 in f32 is 1
    let m = reduce_module(sh(T::F32, &[3]), T::F32, &[0], sh(T::F32, &[]), |b| {
        b.binop(O::Add, T::F32)
    });
    let out = evaluate(&m, &[lit(T::F32, &[3], &[1e30, 1.0, -1e30])]).unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![1.0]);
    let m = reduce_module(sh(T::S32, &[2, 2]), T::S32, &[0], sh(T::S32, &[2]), |b| {
        b.binop(O::Add, T::S32)
    });
    let out = evaluate(&m, &[ilit(T::S32, &[2, 2], &[1, 2, 3, 4])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![4, 6]);
}

#[test]
fn reduce_with_a_generic_reducer_folds_in_row_major_order() {
    // subtract is not a recognized reducer: ((0 - 1) - 2) - 3 per row, rows reduced over dim 1
    let m = reduce_module(sh(T::S32, &[2, 3]), T::S32, &[1], sh(T::S32, &[2]), |b| {
        let (p, q) = (b.param(0, sh(T::S32, &[])), b.param(1, sh(T::S32, &[])));
        let r = b.op(O::Subtract, sh(T::S32, &[]), &[q, p], |_| {});
        b.comp("rsub", r)
    });
    // acc' = x - acc: 1 - 0 = 1, 2 - 1 = 1, 3 - 1 = 2; row 2: 4, 5-4=1, 6-1=5
    let out = evaluate(&m, &[ilit(T::S32, &[2, 3], &[1, 2, 3, 4, 5, 6])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![2, 5]);
}

#[test]
fn reduce_window_with_padding_and_dilation() {
    let rw = |x: &Literal, w: WindowDim, n: i64| {
        let mut b = B::default();
        let add = b.binop(O::Add, T::S32);
        let p = b.param(0, Shape::Array(x.shape()));
        let init = b.op(O::Constant, sh(T::S32, &[]), &[], |a| {
            a.constant = Some(ConstantData::Int(vec![0]))
        });
        let r = b.op(O::ReduceWindow, sh(T::S32, &[n]), &[p, init], |a| {
            a.window = Some(vec![w]);
            a.to_apply = Some(add);
        });
        let e = b.comp("main", r);
        evaluate(&b.module(e), std::slice::from_ref(x)).unwrap()[0].to_i128_vec()
    };
    let x = ilit(T::S32, &[4], &[1, 2, 3, 4]);
    let padded = WindowDim {
        pad_low: 1,
        pad_high: 1,
        ..WindowDim::new(2)
    };
    assert_eq!(rw(&x, padded, 5), vec![1, 3, 5, 7, 4]);
    let dilated = WindowDim {
        base_dilation: 2,
        ..WindowDim::new(2)
    };
    assert_eq!(rw(&x, dilated, 6), vec![1, 2, 2, 3, 3, 4]);
    let strided = WindowDim {
        stride: 2,
        window_dilation: 2,
        ..WindowDim::new(2)
    };
    // windows {0,2} and... (4 - 3) / 2 + 1 = 1 output: 1 + 3
    assert_eq!(rw(&x, strided, 1), vec![4]);
}

#[test]
fn select_and_scatter_picks_the_window_max() {
    let mut b = B::default();
    let ge = {
        let (p, q) = (b.param(0, sh(T::F32, &[])), b.param(1, sh(T::F32, &[])));
        let r = b.op(O::Compare, sh(T::Pred, &[]), &[p, q], |a| {
            a.direction = Some(Dir::Ge)
        });
        b.comp("ge", r)
    };
    let add = b.binop(O::Add, T::F32);
    let x = b.param(0, sh(T::F32, &[4]));
    let s = b.param(1, sh(T::F32, &[2]));
    let init = b.op(O::Constant, sh(T::F32, &[]), &[], |a| {
        a.constant = Some(ConstantData::Float(vec![0.0]))
    });
    let r = b.op(O::SelectAndScatter, sh(T::F32, &[4]), &[x, s, init], |a| {
        a.window = Some(vec![WindowDim {
            stride: 2,
            ..WindowDim::new(2)
        }]);
        a.select = Some(ge);
        a.scatter = Some(add);
    });
    let e = b.comp("main", r);
    let out = evaluate(
        &b.module(e),
        &[
            lit(T::F32, &[4], &[1.0, 5.0, 6.0, 6.0]),
            lit(T::F32, &[2], &[10.0, 20.0]),
        ],
    )
    .unwrap();
    // ties: GE keeps the earlier element
    assert_eq!(out[0].to_f64_vec(), vec![0.0, 10.0, 20.0, 0.0]);
}

#[test]
fn two_operand_sort_is_stable() {
    let mut b = B::default();
    let less = {
        let ps: Vec<InstrId> = (0..4)
            .map(|k| b.param(k, sh(if k < 2 { T::F32 } else { T::S32 }, &[])))
            .collect();
        let r = b.op(O::Compare, sh(T::Pred, &[]), &[ps[0], ps[1]], |a| {
            a.direction = Some(Dir::Lt)
        });
        b.comp("less", r)
    };
    let k = b.param(0, sh(T::F32, &[6]));
    let v = b.param(1, sh(T::S32, &[6]));
    let r = b.op(
        O::Sort,
        Shape::Tuple(vec![sh(T::F32, &[6]), sh(T::S32, &[6])]),
        &[k, v],
        |a| {
            a.dimensions = Some(vec![0]);
            a.to_apply = Some(less);
        },
    );
    let e = b.comp("main", r);
    let out = evaluate(
        &b.module(e),
        &[
            lit(T::F32, &[6], &[3.0, 1.0, 3.0, 1.0, 2.0, -0.0]),
            ilit(T::S32, &[6], &[0, 1, 2, 3, 4, 5]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![-0.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
    assert_eq!(out[1].to_i128_vec(), vec![5, 1, 3, 4, 0, 2]);
}

#[test]
fn map_applies_the_computation() {
    let mut b = B::default();
    let f = {
        let (p, q) = (b.param(0, sh(T::S32, &[])), b.param(1, sh(T::S32, &[])));
        let m = b.op(O::Multiply, sh(T::S32, &[]), &[p, q], |_| {});
        let r = b.op(O::Add, sh(T::S32, &[]), &[m, p], |_| {});
        b.comp("f", r)
    };
    let x = b.param(0, sh(T::S32, &[3]));
    let y = b.param(1, sh(T::S32, &[3]));
    let r = b.op(O::Map, sh(T::S32, &[3]), &[x, y], |a| a.to_apply = Some(f));
    let e = b.comp("main", r);
    let out = evaluate(
        &b.module(e),
        &[
            ilit(T::S32, &[3], &[1, 2, 3]),
            ilit(T::S32, &[3], &[4, 5, 6]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![5, 12, 21]);
}

// ---------- contraction ----------

#[test]
fn dot_is_exact_for_integers_and_rounds_floats_once() {
    let a = ilit(T::S8, &[2], &[127, 127]);
    let r = inner_product(sh(T::S32, &[]), &a, &a);
    assert_eq!(r[0].to_i128_vec(), vec![32258]);
    let w = inner_product(sh(T::S8, &[]), &a, &a);
    assert_eq!(w[0].to_i128_vec(), vec![2]); // 32258 mod 256 = 2
                                             // f16: 2048*1 + 1*1 + 2^-13*1 = 2049 + 2^-13, just above the tie: 2050.
                                             // f32 accumulation gives 2049 (2049 + 2^-13 ties to even in f32), then 2048.
    let x = lit(T::F16, &[3], &[2048.0, 1.0, 2f64.powi(-13)]);
    let y = lit(T::F16, &[3], &[1.0, 1.0, 1.0]);
    let d = inner_product(sh(T::F16, &[]), &x, &y);
    assert_eq!(d[0].to_f64_vec(), vec![2050.0]);
}

#[test]
fn dot_general_with_batch_dims() {
    // [2 batch, 2, 2] x [2 batch, 2, 2]: per-batch matmul
    let a = ilit(T::S32, &[2, 2, 2], &[1, 2, 3, 4, 1, 0, 0, 1]);
    let b = ilit(T::S32, &[2, 2, 2], &[5, 6, 7, 8, 2, 3, 4, 5]);
    let r = run1(O::Dot, sh(T::S32, &[2, 2, 2]), &[&a, &b], |t| {
        t.dot_dims = Some(DotDims {
            lhs_batch: vec![0],
            rhs_batch: vec![0],
            lhs_contracting: vec![2],
            rhs_contracting: vec![1],
        })
    })
    .unwrap();
    assert_eq!(r[0].to_i128_vec(), vec![19, 22, 43, 50, 2, 3, 4, 5]);
}

fn conv1d(
    x: &Literal,
    k: &Literal,
    out_w: i64,
    w: WindowDim,
    groups: i64,
    out_f: i64,
    batch: i64,
) -> Vec<f64> {
    let n = x.dims()[0] as i64;
    run1(
        O::Convolution,
        sh(x.dtype(), &[batch.min(n), out_w, out_f]),
        &[x, k],
        |a| {
            a.conv_dims = Some(ConvDims::feature_last(1));
            a.window = Some(vec![w]);
            a.feature_group_count = Some(groups);
            if batch < n {
                a.batch_group_count = Some(n / batch);
            }
        },
    )
    .unwrap()[0]
        .to_f64_vec()
}

#[test]
fn convolution_padding_stride_dilation_reversal() {
    // b0f_0io->b0f, input [1, 4, 1] = 1 2 3 4, kernel [2, 1, 1] = 1 10
    let x = lit(T::S32, &[1, 4, 1], &[1.0, 2.0, 3.0, 4.0]);
    let k = lit(T::S32, &[2, 1, 1], &[1.0, 10.0]);
    assert_eq!(
        conv1d(&x, &k, 3, WindowDim::new(2), 1, 1, 1),
        vec![21.0, 32.0, 43.0]
    );
    let padded = WindowDim {
        stride: 2,
        pad_low: 1,
        pad_high: 1,
        ..WindowDim::new(2)
    };
    assert_eq!(conv1d(&x, &k, 3, padded, 1, 1, 1), vec![10.0, 32.0, 4.0]);
    let reversed = WindowDim {
        reversal: true,
        ..WindowDim::new(2)
    };
    assert_eq!(conv1d(&x, &k, 3, reversed, 1, 1, 1), vec![12.0, 23.0, 34.0]);
    let rhs_dil = WindowDim {
        window_dilation: 2,
        ..WindowDim::new(2)
    };
    assert_eq!(conv1d(&x, &k, 2, rhs_dil, 1, 1, 1), vec![31.0, 42.0]);
    let lhs_dil = WindowDim {
        base_dilation: 2,
        ..WindowDim::new(2)
    };
    // dilated input 1 _ 2 _ 3 _ 4: each window holds one element
    assert_eq!(
        conv1d(&x, &k, 6, lhs_dil, 1, 1, 1),
        vec![1.0, 20.0, 2.0, 30.0, 3.0, 40.0]
    );
}

#[test]
fn convolution_feature_and_batch_groups() {
    // two input features, two groups: output feature g sees input feature g only
    let x = lit(T::F32, &[1, 2, 2], &[1.0, 100.0, 2.0, 200.0]);
    let k = lit(T::F32, &[1, 1, 2], &[3.0, 5.0]);
    assert_eq!(
        conv1d(&x, &k, 2, WindowDim::new(1), 2, 2, 1),
        vec![3.0, 500.0, 6.0, 1000.0]
    );
    // batch groups: batch 2 split into 2 groups, output feature g uses batch g
    let xb = lit(T::F32, &[2, 1, 1], &[7.0, 11.0]);
    let kb = lit(T::F32, &[1, 1, 2], &[2.0, 3.0]);
    assert_eq!(
        conv1d(&xb, &kb, 1, WindowDim::new(1), 1, 2, 1),
        vec![14.0, 33.0]
    );
}

// ---------- control ----------

#[test]
fn while_counts_and_never_ending_loops_run_out_of_fuel() {
    let build = |limit: i128| {
        let mut b = B::default();
        let s = sh(T::S32, &[]);
        let cond = {
            let p = b.param(0, s.clone());
            let c = b.op(O::Constant, s.clone(), &[], |a| {
                a.constant = Some(ConstantData::Int(vec![limit]))
            });
            let r = b.op(O::Compare, sh(T::Pred, &[]), &[p, c], |a| {
                a.direction = Some(Dir::Lt)
            });
            b.comp("cond", r)
        };
        let body = {
            let p = b.param(0, s.clone());
            let one = b.op(O::Constant, s.clone(), &[], |a| {
                a.constant = Some(ConstantData::Int(vec![1]))
            });
            let r = b.op(O::Add, s.clone(), &[p, one], |_| {});
            b.comp("body", r)
        };
        let p = b.param(0, s.clone());
        let w = b.op(O::While, s, &[p], |a| {
            a.condition = Some(cond);
            a.body = Some(body);
        });
        let e = b.comp("main", w);
        b.module(e)
    };
    let out = evaluate(&build(10), &[ilit(T::S32, &[], &[0])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![10]);
    // x < INT_MAX... never reached by a loop that wraps: with limit INT_MAX and fuel 1000 it stops
    let err = Evaluator::new()
        .with_fuel_limit(1000)
        .evaluate(&build(S32_MAX), &[ilit(T::S32, &[], &[0])])
        .unwrap_err();
    assert!(
        matches!(err, EvalError::FuelExhausted { limit: 1000, .. }),
        "{err}"
    );
}

#[test]
fn conditional_selects_branches() {
    let mut b = B::default();
    let s = sh(T::F32, &[]);
    let neg = {
        let p = b.param(0, s.clone());
        let r = b.op(O::Negate, s.clone(), &[p], |_| {});
        b.comp("neg", r)
    };
    let abs = {
        let p = b.param(0, s.clone());
        let r = b.op(O::Abs, s.clone(), &[p], |_| {});
        b.comp("abs", r)
    };
    let sel = b.param(0, sh(T::S32, &[]));
    let x = b.param(1, s.clone());
    let r = b.op(O::Conditional, s, &[sel, x, x], |a| {
        a.branch_computations = vec![neg, abs]
    });
    let e = b.comp("main", r);
    let m = b.module(e);
    let run = |k: i128| {
        evaluate(&m, &[ilit(T::S32, &[], &[k]), lit(T::F32, &[], &[-2.0])]).unwrap()[0].to_f64_vec()
    };
    assert_eq!(run(0), vec![2.0]);
    assert_eq!(run(1), vec![2.0]);
    // out of range picks the last branch (abs), for both sides
    assert_eq!(run(7), vec![2.0]);
    assert_eq!(run(-1), vec![2.0]);
    let pm = {
        let mut m2 = m.clone();
        let main = &mut m2.computations[e.index()];
        main.instructions[0].shape = sh(T::Pred, &[]);
        m2
    };
    let t = evaluate(&pm, &[ilit(T::Pred, &[], &[1]), lit(T::F32, &[], &[-2.0])]).unwrap();
    assert_eq!(t[0].to_f64_vec(), vec![2.0]);
    let f = evaluate(&pm, &[ilit(T::Pred, &[], &[0]), lit(T::F32, &[], &[-3.0])]).unwrap();
    assert_eq!(f[0].to_f64_vec(), vec![3.0]);
}

#[test]
fn evaluate_all_and_the_fusion_hook_expose_every_value() {
    let mut b = B::default();
    let s = sh(T::F32, &[2]);
    let fused = {
        let p = b.param(0, s.clone());
        let n = b.op(O::Negate, s.clone(), &[p], |_| {});
        let r = b.op(O::Multiply, s.clone(), &[n, p], |_| {});
        b.comp("fused", r)
    };
    let p = b.param(0, s.clone());
    let f = b.op(O::Fusion, s.clone(), &[p], |a| a.calls = vec![fused]);
    let t = b.op(
        O::Tuple,
        Shape::Tuple(vec![s.clone(), s.clone()]),
        &[f, p],
        |_| {},
    );
    let e = b.comp("main", t);
    let m = b.module(e);
    let x = lit(T::F32, &[2], &[2.0, 3.0]);
    let mut seen = Vec::new();
    let values = Evaluator::new()
        .on_fusion(|fv| {
            seen.push((
                fv.fusion.to_string(),
                fv.values[1]
                    .as_ref()
                    .and_then(Value::as_array)
                    .map(Literal::to_f64_vec),
            ))
        })
        .evaluate_all(&m, std::slice::from_ref(&x))
        .unwrap();
    assert_eq!(values.len(), 3);
    assert_eq!(
        values[1].as_ref().unwrap().as_array().unwrap().to_f64_vec(),
        vec![-4.0, -9.0]
    );
    assert_eq!(seen, vec![("i1".to_string(), Some(vec![-2.0, -3.0]))]);
    assert_eq!(evaluate(&m, &[x]).unwrap().len(), 2);
}

// ---------- errors ----------

#[test]
fn errors_are_typed_not_panics() {
    let x = lit(T::F32, &[2], &[1.0, 2.0]);
    let m = one_op(O::Negate, sh(T::F32, &[2]), &[&x], |_| {});
    let e = evaluate(&m, &[]).unwrap_err();
    assert!(
        matches!(e, EvalError::BadArguments(ref s) if s.contains("1 parameters")),
        "{e}"
    );
    let e = evaluate(&m, &[lit(T::F32, &[3], &[1.0, 2.0, 3.0])]).unwrap_err();
    assert!(
        matches!(e, EvalError::BadArguments(ref s) if s.contains("parameter 0") && s.contains("`p0`")),
        "{e}"
    );
    // replica-id on a one-device module is device 0's
    let r = one_op(O::ReplicaId, sh(T::U32, &[]), &[], |_| {});
    let v = evaluate(&r, &[]).unwrap();
    assert_eq!(v[0].get_f64(0), 0.0);
    // a transpose with a bad permutation is invalid, not a panic
    let t = run1(O::Transpose, sh(T::F32, &[2]), &[&x], |a| {
        a.dimensions = Some(vec![3])
    });
    assert!(matches!(t, Err(EvalError::Invalid { .. })));
    // a slice past the end
    let s = run1(O::Slice, sh(T::F32, &[2]), &[&x], |a| {
        a.slice = Some(vec![SliceDim {
            start: 1,
            limit: 3,
            stride: 1,
        }])
    });
    assert!(matches!(s, Err(EvalError::Invalid { .. })));
    // a result shape that disagrees with the computed one
    let w = run1(O::Negate, sh(T::F32, &[3]), &[&x], |_| {});
    assert!(matches!(w, Err(EvalError::Invalid { .. })));
    // sqrt of an integer is invalid
    let i = ilit(T::S32, &[1], &[4]);
    assert!(run1(O::Sqrt, sh(T::S32, &[1]), &[&i], |_| {}).is_err());
}

#[test]
fn tuple_parameters_take_their_leaves_in_order() {
    let mut b = B::default();
    let ts = Shape::Tuple(vec![sh(T::F32, &[]), sh(T::S32, &[2])]);
    let p = b.param(0, ts);
    let g = b.op(O::GetTupleElement, sh(T::S32, &[2]), &[p], |a| {
        a.index = Some(1)
    });
    let e = b.comp("main", g);
    let m = b.module(e);
    let out = evaluate(&m, &[lit(T::F32, &[], &[1.0]), ilit(T::S32, &[2], &[4, 5])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![4, 5]);
    let err = evaluate(&m, &[ilit(T::S32, &[2], &[4, 5]), lit(T::F32, &[], &[1.0])]).unwrap_err();
    assert!(matches!(err, EvalError::BadArguments(_)), "{err}");
}

#[test]
fn dot_without_dimension_numbers_is_an_outer_product() {
    let a = ilit(T::S32, &[2], &[1, 2]);
    let b = ilit(T::S32, &[3], &[3, 4, 5]);
    assert_eq!(
        ints(O::Dot, sh(T::S32, &[2, 3]), &[&a, &b]),
        vec![3, 4, 5, 6, 8, 10]
    );
}

#[test]
fn element_type_mismatches_are_invalid() {
    let x = lit(T::F32, &[2], &[1.0, 2.0]);
    let r = run1(O::Broadcast, sh(T::S32, &[2, 2]), &[&x], |a| {
        a.dimensions = Some(vec![0])
    });
    assert!(matches!(r, Err(EvalError::Invalid { .. })));
    let r = run1(O::Reshape, sh(T::F16, &[2]), &[&x], |_| {});
    assert!(matches!(r, Err(EvalError::Invalid { .. })));
}

#[test]
fn reducers_that_do_not_compile_to_scalar_programs_are_called() {
    // rsub with a (scalar) reshape in it: not a scalar program, so each step is a full call;
    // same fold as `reduce_with_a_generic_reducer_folds_in_row_major_order`
    let m = reduce_module(sh(T::S32, &[2, 3]), T::S32, &[1], sh(T::S32, &[2]), |b| {
        let (p, q) = (b.param(0, sh(T::S32, &[])), b.param(1, sh(T::S32, &[])));
        let r = b.op(O::Subtract, sh(T::S32, &[]), &[q, p], |_| {});
        let r = b.op(O::Reshape, sh(T::S32, &[]), &[r], |_| {});
        b.comp("rsub", r)
    });
    assert!(scalar::Program::compile(&m, CompId(0)).is_none());
    let out = evaluate(&m, &[ilit(T::S32, &[2, 3], &[1, 2, 3, 4, 5, 6])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![2, 5]);
}

#[test]
fn scalar_programs_match_the_array_kernels() {
    // a comparator-like body: convert, bitcast-free total order via select/compare, clamp
    let mut b = B::default();
    let p = b.param(0, sh(T::F16, &[]));
    let q = b.param(1, sh(T::S32, &[]));
    let c = b.op(O::Convert, sh(T::S32, &[]), &[p], |_| {});
    let lt = b.op(O::Compare, sh(T::Pred, &[]), &[c, q], |a| {
        a.direction = Some(Dir::Lt)
    });
    let s = b.op(O::Select, sh(T::S32, &[]), &[lt, c, q], |_| {});
    let k = b.op(O::Constant, sh(T::S32, &[]), &[], |a| {
        a.constant = Some(ConstantData::Int(vec![-3]))
    });
    let d = b.op(O::Divide, sh(T::S32, &[]), &[s, k], |_| {});
    let e = b.op(O::Exponential, sh(T::F16, &[]), &[p], |_| {});
    let t = b.op(
        O::Tuple,
        Shape::Tuple(vec![sh(T::S32, &[]), sh(T::F16, &[])]),
        &[d, e],
        |_| {},
    );
    let comp = b.comp("f", t);
    let m = b.module(comp);
    let prog = scalar::Program::compile(&m, comp).expect("compiles");
    let f16 = |x: f64| crate::literal::f16_from_f64(x).to_bits() as u64;
    let mut regs = Vec::new();
    // convert(2.5) = 2 < 7: select 2; 2 / -3 = 0; exp(2.5) in f16 = 12.1875
    let r = prog
        .run(&[(T::F16, f16(2.5)), (T::S32, 7)], &mut regs)
        .unwrap();
    assert_eq!(r[0], 0);
    assert_eq!(r[1], f16(2.5f64.exp()));
    // convert(-9.75) = -9 < -1: -9 / -3 = 3
    let r = prog
        .run(
            &[(T::F16, f16(-9.75)), (T::S32, u32::MAX as u64)],
            &mut regs,
        )
        .unwrap();
    assert_eq!(r[0], 3);
    // whole-module evaluation agrees
    let out = evaluate(&m, &[lit(T::F16, &[], &[-9.75]), ilit(T::S32, &[], &[-1])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![3]);
    assert_eq!(out[1].get_bits(0), f16((-9.75f64).exp()));
}

#[test]
fn hlo_text_fusion_keeps_the_f16_round_trip_and_bitcast_reads_layouts() {
    let m = crate::hlo::parse_module(
        r#"HloModule residual

fused {
  p = f32[4]{0} parameter(0)
  h = f16[4]{0} convert(p)
  back = f32[4]{0} convert(h)
  ROOT r = f32[4]{0} subtract(p, back)
}

ENTRY main {
  x = f32[4]{0} parameter(0)
  res = f32[4]{0} fusion(x), kind=kLoop, calls=fused
  t = f32[2,2]{0,1} reshape(x)
  b = f32[2,2]{1,0} bitcast(t)
  ROOT out = (f32[4]{0}, f32[2,2]{1,0}) tuple(res, b)
}
"#,
    )
    .unwrap();
    // 0.1 in f16 is 0.0999755859375; 1 + 2^-12 rounds to 1 in f16
    let x = lit(T::F32, &[4], &[0.1, 1.0 + 2f64.powi(-12), 2.0, -0.5]);
    let out = evaluate(&m, std::slice::from_ref(&x)).unwrap();
    let r = out[0].to_f64_vec();
    assert_eq!(r[0], (0.1f32 as f64 - 0.0999755859375) as f32 as f64);
    assert_eq!(r[1], 2f64.powi(-12));
    assert_eq!(&r[2..], &[0.0, 0.0]);
    // t is logically [[a, b], [c, d]] stored column-major (a c b d); read row-major: a c b d
    let v = x.to_f64_vec();
    assert_eq!(out[1].to_f64_vec(), vec![v[0], v[2], v[1], v[3]]);
}

#[test]
fn topk_largest_first_ties_by_lower_index() {
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2,5] parameter(0)\n  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true\n}\n",
    )
    .unwrap();
    let s = crate::hlo::ArrayShape::new(crate::hlo::ElementType::F32, vec![2, 5]);
    let x = Literal::from_f64s(
        &s,
        &[1.0, 3.0, 3.0, -0.0, 0.0, 2.0, f64::NAN, -1.0, 2.0, 5.0],
    )
    .unwrap();
    let out = crate::reference::evaluate(&m, &[x]).unwrap();
    assert_eq!(out[0].to_f64_vec()[..3], [3.0, 3.0, 1.0]);
    assert_eq!(out[1].to_i128_vec(), vec![1, 2, 0, 1, 4, 0]);
    assert!(out[0].get_f64(3).is_nan());
}

#[test]
fn bitcast_between_element_types_of_one_width() {
    let m = crate::hlo::parse_module(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT b = s32[2] bitcast(x)\n}\n",
    )
    .unwrap();
    let s = crate::hlo::ArrayShape::new(crate::hlo::ElementType::F32, vec![2]);
    let x = Literal::from_f64s(&s, &[1.0, -2.0]).unwrap();
    let out = crate::reference::evaluate(&m, &[x]).unwrap();
    assert_eq!(
        out[0].to_i128_vec(),
        vec![0x3f80_0000, (0xc000_0000u32 as i32) as i128]
    );
}
