//! Tests of the interpreter, per op family, with hand-worked expected values.

use super::*;
use crate::backend::{Backend, BackendError};
use crate::hlo::rewrite::EntryBuilder;
use crate::hlo::{row_gather, with};
use crate::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData,
    ConvDims, DotDims, ElementType, FusionKind, InstrId, Instruction, Layout, Module, Opcode,
    PadDim, ScatterDims, Shape, SliceDim, WindowDim,
};
use crate::literal::{Literal, Value};
use ElementType::*;

/// Builds one computation instruction by instruction.
#[derive(Default)]
pub(super) struct B {
    ins: EntryBuilder,
}

pub(super) fn sh(dt: ElementType, dims: &[i64]) -> Shape {
    Shape::array(dt, dims.to_vec())
}

impl B {
    pub(super) fn param(&mut self, n: i64, s: Shape) -> InstrId {
        let mut i = Instruction::new(format!("p{n}"), Opcode::Parameter, s, vec![]);
        i.attrs.parameter_number = Some(n);
        self.push(i)
    }
    pub(super) fn op(&mut self, op: Opcode, s: Shape, ops: &[InstrId]) -> InstrId {
        self.op_with(op, s, ops, Attrs::default())
    }
    pub(super) fn op_with(
        &mut self,
        op: Opcode,
        s: Shape,
        ops: &[InstrId],
        attrs: Attrs,
    ) -> InstrId {
        let name = format!("{}.{}", op.name(), self.ins.instructions.len());
        let mut i = Instruction::new(name, op, s, ops.to_vec());
        i.attrs = attrs;
        self.push(i)
    }
    pub(super) fn constant_i(&mut self, s: Shape, v: &[i128]) -> InstrId {
        let a = with(|t| t.constant = Some(ConstantData::Int(v.to_vec())));
        self.op_with(Opcode::Constant, s, &[], a)
    }
    fn push(&mut self, i: Instruction) -> InstrId {
        self.ins.push(i)
    }
    pub(super) fn build(self, name: &str, root: InstrId) -> Computation {
        self.ins.finish(name, root)
    }
}

/// A module of computations; the last one is the entry.
pub(super) fn module(comps: Vec<Computation>) -> Module {
    let entry = CompId(comps.len() as u32 - 1);
    Module {
        name: "test".into(),
        attrs: vec![],
        computations: comps,
        entry,
    }
}

/// `(a, b) -> op(a, b)` on scalars of `dt`.
pub(super) fn binary_comp(name: &str, op: Opcode, dt: ElementType) -> Computation {
    let mut b = B::default();
    let x = b.param(0, sh(dt, &[]));
    let y = b.param(1, sh(dt, &[]));
    let r = b.op(
        op,
        sh(if op == Opcode::Compare { Pred } else { dt }, &[]),
        &[x, y],
    );
    b.build(name, r)
}

pub(super) fn lit(dt: ElementType, dims: &[i64], v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(dt, dims.to_vec()), v).unwrap()
}

pub(super) fn ilit(dt: ElementType, dims: &[i64], v: &[i128]) -> Literal {
    Literal::from_i128s(&ArrayShape::new(dt, dims.to_vec()), v).unwrap()
}

pub(super) fn run(m: &Module, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
    Interpreter::default().compile(m)?.execute(args)
}

/// One op on parameters of the given shapes.
/// The interpreter on the module as `rewrite` leaves it: a test-only
/// miscompilation (for other modules' tests too).
pub(crate) struct Rewritten<F> {
    name: &'static str,
    rewrite: F,
    inner: Interpreter,
}

impl<F: Fn(&mut Module) + Send + Sync> Rewritten<F> {
    pub(crate) fn new(name: &'static str, rewrite: F) -> Self {
        Rewritten {
            name,
            rewrite,
            inner: Interpreter::default(),
        }
    }
}

impl<F: Fn(&mut Module) + Send + Sync> Backend for Rewritten<F> {
    fn name(&self) -> &str {
        self.name
    }
    fn numerics(&self) -> crate::check::Numerics {
        self.inner.numerics()
    }
    fn compile(
        &self,
        module: &Module,
    ) -> Result<Box<dyn crate::backend::Executable>, BackendError> {
        let mut m = module.clone();
        (self.rewrite)(&mut m);
        self.inner.compile(&m)
    }
}

fn single(op: Opcode, params: &[Shape], out: Shape, attrs: Attrs) -> Module {
    let mut b = B::default();
    let ps: Vec<InstrId> = params
        .iter()
        .enumerate()
        .map(|(k, s)| b.param(k as i64, s.clone()))
        .collect();
    let r = b.op_with(op, out, &ps, attrs);
    module(vec![b.build("main", r)])
}

fn run1(op: Opcode, args: &[Literal], out: Shape, attrs: Attrs) -> Literal {
    let shapes: Vec<Shape> = args.iter().map(|a| Shape::Array(a.shape())).collect();
    let m = single(op, &shapes, out, attrs);
    run(&m, args).unwrap().remove(0)
}

#[test]
fn f32_elementwise_basics() {
    let x = lit(F32, &[4], &[1.5, -2.0, 0.25, 3.0]);
    let y = lit(F32, &[4], &[0.5, 4.0, -0.25, 2.0]);
    let s = sh(F32, &[4]);
    assert_eq!(
        run1(
            Opcode::Add,
            &[x.clone(), y.clone()],
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![2.0, 2.0, 0.0, 5.0]
    );
    assert_eq!(
        run1(
            Opcode::Divide,
            &[x.clone(), y.clone()],
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![3.0, -0.5, -1.0, 1.5]
    );
    assert_eq!(
        run1(
            Opcode::Remainder,
            &[lit(F32, &[2], &[-7.0, 7.0]), lit(F32, &[2], &[3.0, -3.0])],
            sh(F32, &[2]),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![-1.0, 1.0]
    );
    assert_eq!(
        run1(
            Opcode::Abs,
            std::slice::from_ref(&x),
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![1.5, 2.0, 0.25, 3.0]
    );
    assert_eq!(
        run1(
            Opcode::Sqrt,
            std::slice::from_ref(&y),
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec()[1],
        2.0
    );
    let sign = run1(
        Opcode::Sign,
        &[lit(F32, &[4], &[-0.0, 3.0, -2.0, f64::NAN])],
        s.clone(),
        Attrs::default(),
    );
    let v = sign.to_f64_vec();
    assert!(v[0] == 0.0 && v[0].is_sign_negative());
    assert_eq!(&v[1..3], &[1.0, -1.0]);
    assert!(v[3].is_nan());
    let fin = run1(
        Opcode::IsFinite,
        &[lit(F32, &[3], &[1.0, f64::INFINITY, f64::NAN])],
        sh(Pred, &[3]),
        Attrs::default(),
    );
    assert_eq!(fin.to_i128_vec(), vec![1, 0, 0]);
}

#[test]
fn rounding_afz_vs_even() {
    let x = lit(F32, &[5], &[2.5, -2.5, 3.5, 0.5, -0.4]);
    let s = sh(F32, &[5]);
    assert_eq!(
        run1(
            Opcode::RoundNearestAfz,
            std::slice::from_ref(&x),
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![3.0, -3.0, 4.0, 1.0, -0.0]
    );
    assert_eq!(
        run1(
            Opcode::RoundNearestEven,
            std::slice::from_ref(&x),
            s.clone(),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![2.0, -2.0, 4.0, 0.0, -0.0]
    );
    let f16 = lit(F16, &[2], &[2.5, -1.5]);
    assert_eq!(
        run1(
            Opcode::RoundNearestEven,
            &[f16],
            sh(F16, &[2]),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![2.0, -2.0]
    );
}

#[test]
fn max_min_propagate_nan_and_order_signed_zeros() {
    let x = lit(F32, &[4], &[-0.0, 0.0, f64::NAN, 1.0]);
    let y = lit(F32, &[4], &[0.0, -0.0, 1.0, f64::NAN]);
    let s = sh(F32, &[4]);
    let mx = run1(
        Opcode::Maximum,
        &[x.clone(), y.clone()],
        s.clone(),
        Attrs::default(),
    );
    let mn = run1(Opcode::Minimum, &[x, y], s, Attrs::default());
    let (mx, mn) = (mx.to_f64_vec(), mn.to_f64_vec());
    assert!(mx[0] == 0.0 && !mx[0].is_sign_negative());
    assert!(mx[1] == 0.0 && !mx[1].is_sign_negative());
    assert!(mn[0] == 0.0 && mn[0].is_sign_negative());
    assert!(mn[1] == 0.0 && mn[1].is_sign_negative());
    assert!(mx[2].is_nan() && mx[3].is_nan() && mn[2].is_nan() && mn[3].is_nan());
}

#[test]
fn integer_division_edge_cases() {
    let s = sh(S32, &[5]);
    let x = ilit(S32, &[5], &[7, -7, i32::MIN as i128, 5, i32::MIN as i128]);
    let y = ilit(S32, &[5], &[0, 2, -1, -3, 0]);
    assert_eq!(
        run1(
            Opcode::Divide,
            &[x.clone(), y.clone()],
            s.clone(),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![-1, -3, i32::MIN as i128, -1, -1]
    );
    assert_eq!(
        run1(Opcode::Remainder, &[x, y], s, Attrs::default()).to_i128_vec(),
        vec![7, -1, 0, 2, i32::MIN as i128]
    );
    let u = run1(
        Opcode::Divide,
        &[ilit(U8, &[2], &[9, 200]), ilit(U8, &[2], &[0, 7])],
        sh(U8, &[2]),
        Attrs::default(),
    );
    assert_eq!(u.to_i128_vec(), vec![255, 28]);
    let r = run1(
        Opcode::Remainder,
        &[ilit(U8, &[1], &[9]), ilit(U8, &[1], &[0])],
        sh(U8, &[1]),
        Attrs::default(),
    );
    assert_eq!(r.to_i128_vec(), vec![9]);
}

#[test]
fn integer_wrapping_shifts_and_bits() {
    let s8 = sh(S8, &[4]);
    let x = ilit(S8, &[4], &[1, -128, -1, 64]);
    let amt = ilit(S8, &[4], &[8, 9, 1, 1]);
    assert_eq!(
        run1(
            Opcode::ShiftLeft,
            &[x.clone(), amt.clone()],
            s8.clone(),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, 0, -2, -128]
    );
    assert_eq!(
        run1(
            Opcode::ShiftRightArithmetic,
            &[x.clone(), amt.clone()],
            s8.clone(),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, -1, -1, 32]
    );
    assert_eq!(
        run1(
            Opcode::ShiftRightLogical,
            &[x.clone(), amt.clone()],
            s8.clone(),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, 0, 127, 32]
    );
    // a negative shift amount is a huge unsigned one
    let neg = run1(
        Opcode::ShiftLeft,
        &[ilit(S8, &[1], &[3]), ilit(S8, &[1], &[-1])],
        sh(S8, &[1]),
        Attrs::default(),
    );
    assert_eq!(neg.to_i128_vec(), vec![0]);
    assert_eq!(
        run1(
            Opcode::Add,
            &[ilit(S8, &[1], &[127]), ilit(S8, &[1], &[1])],
            sh(S8, &[1]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![-128]
    );
    assert_eq!(
        run1(
            Opcode::Add,
            &[ilit(S4, &[2], &[7, -8]), ilit(S4, &[2], &[1, -1])],
            sh(S4, &[2]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![-8, 7]
    );
    assert_eq!(
        run1(
            Opcode::Multiply,
            &[ilit(U4, &[1], &[5]), ilit(U4, &[1], &[4])],
            sh(U4, &[1]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![4]
    );
    assert_eq!(
        run1(
            Opcode::Abs,
            &[ilit(S8, &[2], &[-128, -5])],
            sh(S8, &[2]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![-128, 5]
    );
    assert_eq!(
        run1(
            Opcode::Popcnt,
            &[ilit(S8, &[2], &[-1, 6])],
            sh(S8, &[2]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![8, 2]
    );
    assert_eq!(
        run1(
            Opcode::CountLeadingZeros,
            &[ilit(S32, &[3], &[0, 1, -1])],
            sh(S32, &[3]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![32, 31, 0]
    );
    assert_eq!(
        run1(
            Opcode::CountLeadingZeros,
            &[ilit(U4, &[2], &[1, 8])],
            sh(U4, &[2]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![3, 0]
    );
    assert_eq!(
        run1(
            Opcode::Not,
            &[ilit(U8, &[1], &[0x0f])],
            sh(U8, &[1]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0xf0]
    );
    let p = run1(
        Opcode::Power,
        &[
            ilit(S32, &[5], &[2, 2, 1, -1, 3]),
            ilit(S32, &[5], &[10, -1, -5, -1, 0]),
        ],
        sh(S32, &[5]),
        Attrs::default(),
    );
    // (-1)^(-1) = -1: a negative exponent gives the integer part of the power
    assert_eq!(p.to_i128_vec(), vec![1024, 0, 1, -1, 1]);
    let mx = run1(
        Opcode::Maximum,
        &[ilit(U32, &[1], &[u32::MAX as i128]), ilit(U32, &[1], &[1])],
        sh(U32, &[1]),
        Attrs::default(),
    );
    assert_eq!(mx.to_i128_vec(), vec![u32::MAX as i128]);
}

fn cmp_attrs(d: ComparisonDirection, t: Option<ComparisonType>) -> Attrs {
    Attrs {
        direction: Some(d),
        comparison_type: t,
        ..Attrs::default()
    }
}

#[test]
fn compare_float_and_total_order() {
    let x = lit(F32, &[4], &[-0.0, f64::NAN, f64::NAN, 1.0]);
    let y = lit(F32, &[4], &[0.0, f64::NAN, f64::INFINITY, 2.0]);
    let p = sh(Pred, &[4]);
    let eq = run1(
        Opcode::Compare,
        &[x.clone(), y.clone()],
        p.clone(),
        cmp_attrs(ComparisonDirection::Eq, None),
    );
    assert_eq!(eq.to_i128_vec(), vec![1, 0, 0, 0]);
    let ne = run1(
        Opcode::Compare,
        &[x.clone(), y.clone()],
        p.clone(),
        cmp_attrs(ComparisonDirection::Ne, None),
    );
    assert_eq!(ne.to_i128_vec(), vec![0, 1, 1, 1]);
    let lt = run1(
        Opcode::Compare,
        &[x.clone(), y.clone()],
        p.clone(),
        cmp_attrs(ComparisonDirection::Lt, Some(ComparisonType::TotalOrder)),
    );
    assert_eq!(lt.to_i128_vec(), vec![1, 0, 0, 1]);
    let gt = run1(
        Opcode::Compare,
        &[x, y],
        p,
        cmp_attrs(ComparisonDirection::Gt, Some(ComparisonType::TotalOrder)),
    );
    assert_eq!(gt.to_i128_vec(), vec![0, 0, 1, 0]);
    let u = run1(
        Opcode::Compare,
        &[ilit(U8, &[1], &[200]), ilit(U8, &[1], &[100])],
        sh(Pred, &[1]),
        cmp_attrs(ComparisonDirection::Gt, Some(ComparisonType::Unsigned)),
    );
    assert_eq!(u.to_i128_vec(), vec![1]);
    let s = run1(
        Opcode::Compare,
        &[ilit(S8, &[1], &[-56]), ilit(S8, &[1], &[100])],
        sh(Pred, &[1]),
        cmp_attrs(ComparisonDirection::Gt, Some(ComparisonType::Signed)),
    );
    assert_eq!(s.to_i128_vec(), vec![0]);
}

#[test]
fn select_and_clamp() {
    let p = ilit(Pred, &[3], &[1, 0, 1]);
    let r = run1(
        Opcode::Select,
        &[
            p,
            lit(F32, &[3], &[1.0, 2.0, 3.0]),
            lit(F32, &[3], &[-1.0, -2.0, -3.0]),
        ],
        sh(F32, &[3]),
        Attrs::default(),
    );
    assert_eq!(r.to_f64_vec(), vec![1.0, -2.0, 3.0]);
    let c = run1(
        Opcode::Clamp,
        &[
            lit(F32, &[], &[0.0]),
            lit(F32, &[4], &[-1.0, 0.5, 2.0, f64::NAN]),
            lit(F32, &[], &[1.0]),
        ],
        sh(F32, &[4]),
        Attrs::default(),
    );
    let v = c.to_f64_vec();
    assert_eq!(&v[..3], &[0.0, 0.5, 1.0]);
    assert!(v[3].is_nan());
    let ci = run1(
        Opcode::Clamp,
        &[
            ilit(S32, &[], &[-2]),
            ilit(S32, &[3], &[-5, 0, 9]),
            ilit(S32, &[], &[3]),
        ],
        sh(S32, &[3]),
        Attrs::default(),
    );
    assert_eq!(ci.to_i128_vec(), vec![-2, 0, 3]);
}

#[test]
fn convert_saturates_and_rounds_once() {
    let x = lit(
        F32,
        &[6],
        &[f64::NAN, 1e10, f64::NEG_INFINITY, -3.7, 3.7, -0.5],
    );
    assert_eq!(
        run1(
            Opcode::Convert,
            std::slice::from_ref(&x),
            sh(S32, &[6]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, i32::MAX as i128, i32::MIN as i128, -3, 3, 0]
    );
    assert_eq!(
        run1(
            Opcode::Convert,
            std::slice::from_ref(&x),
            sh(U8, &[6]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, 255, 0, 0, 3, 0]
    );
    assert_eq!(
        run1(Opcode::Convert, &[x], sh(Pred, &[6]), Attrs::default()).to_i128_vec(),
        vec![1, 1, 1, 1, 1, 1]
    );
    // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 goes up (through f32 it would tie to even, down)
    let y = lit(F64, &[1], &[1.0 + 2f64.powi(-11) + 2f64.powi(-40)]);
    assert_eq!(
        run1(Opcode::Convert, &[y], sh(F16, &[1]), Attrs::default()).to_f64_vec(),
        vec![1.0 + 2f64.powi(-10)]
    );
    assert_eq!(
        run1(
            Opcode::Convert,
            &[ilit(S32, &[2], &[70000, -3])],
            sh(F16, &[2]),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![f64::INFINITY, -3.0]
    );
    assert_eq!(
        run1(
            Opcode::Convert,
            &[ilit(S32, &[1], &[300])],
            sh(S8, &[1]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![44]
    );
    assert_eq!(
        run1(
            Opcode::Convert,
            &[lit(F16, &[1], &[0.1])],
            sh(Bf16, &[1]),
            Attrs::default()
        )
        .to_f64_vec(),
        vec![0.10009765625]
    );
    assert!(run1(
        Opcode::Convert,
        &[lit(F32, &[1], &[500.0])],
        sh(F8E4M3Fn, &[1]),
        Attrs::default()
    )
    .to_f64_vec()[0]
        .is_nan());
}

#[test]
fn bitcast_convert_and_reduce_precision() {
    let x = lit(F32, &[1], &[1.0]);
    assert_eq!(
        run1(
            Opcode::BitcastConvert,
            std::slice::from_ref(&x),
            sh(U32, &[1]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0x3f80_0000]
    );
    assert_eq!(
        run1(
            Opcode::BitcastConvert,
            &[x],
            sh(U8, &[1, 4]),
            Attrs::default()
        )
        .to_i128_vec(),
        vec![0, 0, 0x80, 0x3f]
    );
    let back = run1(
        Opcode::BitcastConvert,
        &[ilit(U8, &[4], &[0, 0, 0x80, 0x3f])],
        sh(F32, &[]),
        Attrs::default(),
    );
    assert_eq!(back.to_f64_vec(), vec![1.0]);
    let a = with(|t| {
        t.exponent_bits = Some(5);
        t.mantissa_bits = Some(10);
    });
    let r = run1(
        Opcode::ReducePrecision,
        &[lit(
            F32,
            &[5],
            &[
                1.0 + 2f64.powi(-11),
                1e6,
                1e-8,
                f64::NAN,
                -1.0 - 3.0 * 2f64.powi(-11),
            ],
        )],
        sh(F32, &[5]),
        a,
    );
    let v = r.to_f64_vec();
    assert_eq!(v[0], 1.0);
    assert_eq!(v[1], f64::INFINITY);
    assert_eq!(v[2], 0.0);
    assert!(v[3].is_nan());
    assert_eq!(v[4], -1.0 - 2.0 * 2f64.powi(-10));
}

#[test]
fn reduce_precision_of_f16_goes_through_f32() {
    // XLA's HloEvaluator (hlo_evaluator_typed_visitor.h) reduces a narrow
    // float through its f32 value, as the reference does: -2^-24, f16's
    // smallest subnormal, is a normal f32 and survives e8m7, but lies below
    // e5m10's smallest normal and flushes to -0 there
    let x = lit(
        F16,
        &[3],
        &[-(2f64.powi(-24)), -2.33984375, f64::NEG_INFINITY],
    );
    let rp = |e: i64, m: i64| {
        let a = with(|t| {
            t.exponent_bits = Some(e);
            t.mantissa_bits = Some(m);
        });
        run1(
            Opcode::ReducePrecision,
            std::slice::from_ref(&x),
            sh(F16, &[3]),
            a,
        )
    };
    let r = rp(8, 7);
    assert_eq!(r.get_bits(0), 0x8001);
    assert_eq!(r.to_f64_vec()[1..], [-2.34375, f64::NEG_INFINITY]);
    let r = rp(5, 10);
    assert_eq!(r.get_bits(0), 0x8000);
    assert_eq!(r.to_f64_vec()[1..], [-2.33984375, f64::NEG_INFINITY]);
}

#[test]
fn f16_rounds_after_every_op_in_a_fusion() {
    // fused: d = (a + b) - a, all f16. 1 + 2^-11 ties to 1 in f16, so d = 0;
    // a fusion keeping the f32 intermediate would give 2^-11.
    let s = sh(F16, &[2]);
    let mut f = B::default();
    let a = f.param(0, s.clone());
    let b = f.param(1, s.clone());
    let c = f.op(Opcode::Add, s.clone(), &[a, b]);
    let d = f.op(Opcode::Subtract, s.clone(), &[c, a]);
    let fused = f.build("fused", d);
    let mut e = B::default();
    let pa = e.param(0, s.clone());
    let pb = e.param(1, s.clone());
    let fusion = e.op_with(
        Opcode::Fusion,
        s.clone(),
        &[pa, pb],
        with(|t| {
            t.calls = vec![CompId(0)];
            t.fusion_kind = Some(FusionKind::Loop);
        }),
    );
    let m = module(vec![fused, e.build("main", fusion)]);
    let x = lit(F16, &[2], &[1.0, 1.0]);
    let y = lit(F16, &[2], &[2f64.powi(-11), 3.0 * 2f64.powi(-11)]);
    let out = run(&m, &[x.clone(), y.clone()]).unwrap();
    // 1 + 3*2^-11 rounds to 1 + 2^-9 (nearest), minus 1 = 2^-9
    assert_eq!(out[0].to_f64_vec(), vec![0.0, 2f64.powi(-9)]);

    // the probe sees the rounded intermediate
    let exe = Interpreter::default().compile(&m).unwrap();
    let probe = exe.probe().expect("interpreter has a probe");
    let trace = probe
        .probe_fusion("fusion.2", &[Value::Array(x), Value::Array(y)])
        .unwrap();
    let names: Vec<&str> = trace.iter().map(|p| p.instruction.as_str()).collect();
    assert_eq!(names, vec!["p0", "p1", "add.2", "subtract.3"]);
    assert_eq!(
        trace[2].value.as_array().unwrap().to_f64_vec(),
        vec![1.0, 1.0 + 2f64.powi(-9)]
    );
    assert!(probe.probe_fusion("nope", &[]).is_err());
}

#[test]
fn shape_ops() {
    let x = lit(F32, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let t = run1(
        Opcode::Transpose,
        std::slice::from_ref(&x),
        sh(F32, &[3, 2]),
        with(|t| t.dimensions = Some(vec![1, 0])),
    );
    assert_eq!(t.to_f64_vec(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let r = run1(
        Opcode::Reshape,
        std::slice::from_ref(&x),
        sh(F32, &[3, 2]),
        Attrs::default(),
    );
    assert_eq!(r.to_f64_vec(), x.to_f64_vec());
    let rev = run1(
        Opcode::Reverse,
        std::slice::from_ref(&x),
        sh(F32, &[2, 3]),
        with(|t| t.dimensions = Some(vec![1])),
    );
    assert_eq!(rev.to_f64_vec(), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    let sl = run1(
        Opcode::Slice,
        std::slice::from_ref(&x),
        sh(F32, &[2, 2]),
        with(|t| {
            t.slice = Some(vec![
                SliceDim {
                    start: 0,
                    limit: 2,
                    stride: 1,
                },
                SliceDim {
                    start: 0,
                    limit: 3,
                    stride: 2,
                },
            ])
        }),
    );
    assert_eq!(sl.to_f64_vec(), vec![0.0, 2.0, 3.0, 5.0]);
    let bc = run1(
        Opcode::Broadcast,
        &[lit(F32, &[2], &[7.0, 8.0])],
        sh(F32, &[2, 3]),
        with(|t| t.dimensions = Some(vec![0])),
    );
    assert_eq!(bc.to_f64_vec(), vec![7.0, 7.0, 7.0, 8.0, 8.0, 8.0]);
    let cat = run1(
        Opcode::Concatenate,
        &[x.clone(), lit(F32, &[2, 1], &[9.0, 10.0])],
        sh(F32, &[2, 4]),
        with(|t| t.dimensions = Some(vec![1])),
    );
    assert_eq!(
        cat.to_f64_vec(),
        vec![0.0, 1.0, 2.0, 9.0, 3.0, 4.0, 5.0, 10.0]
    );
    // pad: low 1, high -1, interior 1 on [1,2,3] -> [p,1,p,2,p] (the 3 is cut)
    let pd = run1(
        Opcode::Pad,
        &[lit(F32, &[3], &[1.0, 2.0, 3.0]), lit(F32, &[], &[-1.0])],
        sh(F32, &[5]),
        with(|t| {
            t.padding = Some(vec![PadDim {
                low: 1,
                high: -1,
                interior: 1,
            }])
        }),
    );
    assert_eq!(pd.to_f64_vec(), vec![-1.0, 1.0, -1.0, 2.0, -1.0]);
    let io = run1(
        Opcode::Iota,
        &[],
        sh(S32, &[2, 3]),
        with(|t| t.iota_dimension = Some(1)),
    );
    assert_eq!(io.to_i128_vec(), vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn bitcast_follows_layouts_and_copy_keeps_values() {
    // f32[2,3]{1,0} -> f32[3,2]{0,1}: same bytes, so the logical result is the transpose
    let mut b = B::default();
    let p = b.param(0, sh(F32, &[2, 3]));
    let out = Shape::Array(ArrayShape {
        dtype: F32,
        dims: vec![3, 2],
        layout: Some(Layout {
            minor_to_major: vec![0, 1],
            extra: None,
        }),
    });
    let bc = b.op(Opcode::Bitcast, out.clone(), &[p]);
    let cp = b.op(Opcode::Copy, out, &[bc]);
    let m = module(vec![b.build("main", cp)]);
    let x = lit(F32, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let r = run(&m, &[x]).unwrap().remove(0);
    assert_eq!(r.to_f64_vec(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(
        r.layout().map(|l| l.minor_to_major.clone()),
        Some(vec![0, 1])
    );
}

#[test]
fn dynamic_slices_clamp() {
    let x = lit(F32, &[5], &[0.0, 1.0, 2.0, 3.0, 4.0]);
    let mut b = B::default();
    let p = b.param(0, sh(F32, &[5]));
    let i = b.param(1, sh(S32, &[]));
    let ds = b.op_with(
        Opcode::DynamicSlice,
        sh(F32, &[3]),
        &[p, i],
        with(|t| t.dynamic_slice_sizes = Some(vec![3])),
    );
    let m = module(vec![b.build("main", ds)]);
    for (start, want) in [
        (4, [2.0, 3.0, 4.0]),
        (-3, [0.0, 1.0, 2.0]),
        (1, [1.0, 2.0, 3.0]),
    ] {
        let r = run(&m, &[x.clone(), ilit(S32, &[], &[start])]).unwrap();
        assert_eq!(r[0].to_f64_vec(), want.to_vec(), "start {start}");
    }
    let mut b = B::default();
    let p = b.param(0, sh(F32, &[5]));
    let u = b.param(1, sh(F32, &[2]));
    let i = b.param(2, sh(S32, &[]));
    let dus = b.op(Opcode::DynamicUpdateSlice, sh(F32, &[5]), &[p, u, i]);
    let m = module(vec![b.build("main", dus)]);
    let r = run(&m, &[x, lit(F32, &[2], &[9.0, 8.0]), ilit(S32, &[], &[10])]).unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![0.0, 1.0, 2.0, 9.0, 8.0]);
}

#[test]
fn gather_clamps_start_indices() {
    // rows of a [3,2] operand at indices [2, 5, -1] -> rows 2, 2 (clamped), 0 (clamped)
    let x = lit(F32, &[3, 2], &[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
    let idx = ilit(S32, &[3, 1], &[2, 5, -1]);
    let g = row_gather(2);
    let r = run1(
        Opcode::Gather,
        &[x, idx],
        sh(F32, &[3, 2]),
        with(|t| t.gather_dims = Some(g)),
    );
    assert_eq!(r.to_f64_vec(), vec![20.0, 21.0, 20.0, 21.0, 0.0, 1.0]);
}

fn scatter_module(to_apply: Computation) -> Module {
    let mut b = B::default();
    let o = b.param(0, sh(F32, &[5]));
    let i = b.param(1, sh(S32, &[4, 1]));
    let u = b.param(2, sh(F32, &[4]));
    let sd = ScatterDims {
        update_window_dims: vec![],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..ScatterDims::default()
    };
    let s = b.op_with(
        Opcode::Scatter,
        sh(F32, &[5]),
        &[o, i, u],
        with(|t| {
            t.scatter_dims = Some(sd);
            t.to_apply = Some(CompId(0));
        }),
    );
    module(vec![to_apply, b.build("main", s)])
}

#[test]
fn scatter_drops_out_of_bounds_updates() {
    let args = [
        lit(F32, &[5], &[1.0; 5]),
        ilit(S32, &[4, 1], &[1, 7, 4, -1]),
        lit(F32, &[4], &[10.0, 20.0, 30.0, 40.0]),
    ];
    let add = scatter_module(binary_comp("add", Opcode::Add, F32));
    assert_eq!(
        run(&add, &args).unwrap()[0].to_f64_vec(),
        vec![1.0, 11.0, 1.0, 1.0, 31.0]
    );
    // overwrite: root is the update parameter
    let mut b = B::default();
    b.param(0, sh(F32, &[]));
    let y = b.param(1, sh(F32, &[]));
    let set = scatter_module(b.build("set", y));
    assert_eq!(
        run(&set, &args).unwrap()[0].to_f64_vec(),
        vec![1.0, 10.0, 1.0, 1.0, 30.0]
    );
}

fn reduce_module(
    dt: ElementType,
    dims_in: &[i64],
    dims: Vec<i64>,
    out: &[i64],
    reducer: Computation,
) -> Module {
    let mut b = B::default();
    let x = b.param(0, sh(dt, dims_in));
    let z = b.param(1, sh(dt, &[]));
    let r = b.op_with(
        Opcode::Reduce,
        sh(dt, out),
        &[x, z],
        with(|t| {
            t.dimensions = Some(dims);
            t.to_apply = Some(CompId(0));
        }),
    );
    module(vec![reducer, b.build("main", r)])
}

#[test]
fn reduce_accumulates_narrow_types_in_f32() {
    let m = reduce_module(
        F16,
        &[3],
        vec![0],
        &[],
        binary_comp("add", Opcode::Add, F16),
    );
    let x = lit(F16, &[3], &[1.0, 2f64.powi(-11), 2f64.powi(-11)]);
    // rounding to f16 after each add would give 1.0
    let r = run(&m, &[x, lit(F16, &[], &[0.0])]).unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![1.0 + 2f64.powi(-10)]);
    let m = reduce_module(
        S32,
        &[2, 3],
        vec![1],
        &[2],
        binary_comp("add", Opcode::Add, S32),
    );
    let r = run(
        &m,
        &[
            ilit(S32, &[2, 3], &[1, 2, 3, 4, 5, 6]),
            ilit(S32, &[], &[10]),
        ],
    )
    .unwrap();
    assert_eq!(r[0].to_i128_vec(), vec![16, 25]);
}

#[test]
fn reduce_with_a_generic_reducer_runs_it_in_order() {
    // reducer: (acc, x) -> acc * 2 + x  (order-sensitive)
    let mut b = B::default();
    let a = b.param(0, sh(F32, &[]));
    let x = b.param(1, sh(F32, &[]));
    let two = b.op(Opcode::Add, sh(F32, &[]), &[a, a]);
    let r = b.op(Opcode::Add, sh(F32, &[]), &[two, x]);
    let m = reduce_module(F32, &[2, 3], vec![1], &[2], b.build("horner", r));
    let out = run(
        &m,
        &[
            lit(F32, &[2, 3], &[1.0, 0.0, 1.0, 1.0, 1.0, 0.0]),
            lit(F32, &[], &[0.0]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![5.0, 6.0]);
}

#[test]
fn reduce_window_with_padding() {
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[4]));
    let z = b.param(1, sh(F32, &[]));
    let w = WindowDim {
        pad_low: 1,
        pad_high: 1,
        ..WindowDim::new(2)
    };
    let r = b.op_with(
        Opcode::ReduceWindow,
        sh(F32, &[5]),
        &[x, z],
        with(|t| {
            t.window = Some(vec![w]);
            t.to_apply = Some(CompId(0));
        }),
    );
    let m = module(vec![
        binary_comp("add", Opcode::Add, F32),
        b.build("main", r),
    ]);
    let out = run(
        &m,
        &[lit(F32, &[4], &[1.0, 2.0, 3.0, 4.0]), lit(F32, &[], &[0.0])],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![1.0, 3.0, 5.0, 7.0, 4.0]);
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[4]));
    let z = b.param(1, sh(F32, &[]));
    let w = WindowDim {
        stride: 2,
        ..WindowDim::new(2)
    };
    let r = b.op_with(
        Opcode::ReduceWindow,
        sh(F32, &[2]),
        &[x, z],
        with(|t| {
            t.window = Some(vec![w]);
            t.to_apply = Some(CompId(0));
        }),
    );
    let m = module(vec![
        binary_comp("max", Opcode::Maximum, F32),
        b.build("main", r),
    ]);
    let out = run(
        &m,
        &[
            lit(F32, &[4], &[1.0, 5.0, 3.0, 2.0]),
            lit(F32, &[], &[f64::NEG_INFINITY]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![5.0, 3.0]);
}

#[test]
fn select_and_scatter_picks_the_window_max() {
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[4]));
    let s = b.param(1, sh(F32, &[2]));
    let z = b.param(2, sh(F32, &[]));
    let w = WindowDim {
        stride: 2,
        ..WindowDim::new(2)
    };
    let r = b.op_with(
        Opcode::SelectAndScatter,
        sh(F32, &[4]),
        &[x, s, z],
        with(|t| {
            t.window = Some(vec![w]);
            t.select = Some(CompId(0));
            t.scatter = Some(CompId(1));
        }),
    );
    let mut ge = B::default();
    let a = ge.param(0, sh(F32, &[]));
    let c = ge.param(1, sh(F32, &[]));
    let g = ge.op_with(
        Opcode::Compare,
        sh(Pred, &[]),
        &[a, c],
        cmp_attrs(ComparisonDirection::Ge, None),
    );
    let m = module(vec![
        ge.build("ge", g),
        binary_comp("add", Opcode::Add, F32),
        b.build("main", r),
    ]);
    let out = run(
        &m,
        &[
            lit(F32, &[4], &[1.0, 5.0, 3.0, 3.0]),
            lit(F32, &[2], &[10.0, 20.0]),
            lit(F32, &[], &[0.0]),
        ],
    )
    .unwrap();
    // ties keep the first element
    assert_eq!(out[0].to_f64_vec(), vec![0.0, 10.0, 20.0, 0.0]);
}

fn sort_module(comparator: Computation, n: i64) -> Module {
    let mut b = B::default();
    let k = b.param(0, sh(F32, &[n]));
    let v = b.param(1, sh(S32, &[n]));
    let s = b.op_with(
        Opcode::Sort,
        Shape::Tuple(vec![sh(F32, &[n]), sh(S32, &[n])]),
        &[k, v],
        with(|t| {
            t.dimensions = Some(vec![0]);
            t.is_stable = true;
            t.to_apply = Some(CompId(0));
        }),
    );
    module(vec![comparator, b.build("main", s)])
}

fn lt_comparator(generic: bool) -> Computation {
    let mut b = B::default();
    let a = b.param(0, sh(F32, &[]));
    let c = b.param(1, sh(F32, &[]));
    b.param(2, sh(S32, &[]));
    b.param(3, sh(S32, &[]));
    let r = if generic {
        // -a > -c  is  a < c, but not a single compare of the parameters
        let na = b.op(Opcode::Negate, sh(F32, &[]), &[a]);
        let nc = b.op(Opcode::Negate, sh(F32, &[]), &[c]);
        b.op_with(
            Opcode::Compare,
            sh(Pred, &[]),
            &[na, nc],
            cmp_attrs(ComparisonDirection::Gt, None),
        )
    } else {
        b.op_with(
            Opcode::Compare,
            sh(Pred, &[]),
            &[a, c],
            cmp_attrs(ComparisonDirection::Lt, None),
        )
    };
    b.build("lt", r)
}

#[test]
fn sort_is_stable_with_comparator() {
    let keys = lit(F32, &[6], &[3.0, 1.0, 2.0, 1.0, 3.0, 0.0]);
    let vals = ilit(S32, &[6], &[0, 1, 2, 3, 4, 5]);
    for generic in [false, true] {
        let m = sort_module(lt_comparator(generic), 6);
        let out = run(&m, &[keys.clone(), vals.clone()]).unwrap();
        assert_eq!(
            out[0].to_f64_vec(),
            vec![0.0, 1.0, 1.0, 2.0, 3.0, 3.0],
            "generic={generic}"
        );
        assert_eq!(
            out[1].to_i128_vec(),
            vec![5, 1, 3, 2, 0, 4],
            "generic={generic}"
        );
    }
}

#[test]
fn dot_general_and_f32_accumulation() {
    let a = lit(F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = lit(F32, &[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let dd = DotDims {
        lhs_contracting: vec![1],
        rhs_contracting: vec![0],
        ..DotDims::default()
    };
    let r = run1(
        Opcode::Dot,
        &[a, b],
        sh(F32, &[2, 2]),
        with(|t| t.dot_dims = Some(dd.clone())),
    );
    assert_eq!(r.to_f64_vec(), vec![58.0, 64.0, 139.0, 154.0]);
    // batch dot: [2,1,2] x [2,2,1]
    let bd = DotDims {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contracting: vec![2],
        rhs_contracting: vec![1],
    };
    let r = run1(
        Opcode::Dot,
        &[
            lit(F32, &[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]),
            lit(F32, &[2, 2, 1], &[5.0, 6.0, 7.0, 8.0]),
        ],
        sh(F32, &[2, 1, 1]),
        with(|t| t.dot_dims = Some(bd)),
    );
    assert_eq!(r.to_f64_vec(), vec![17.0, 53.0]);
    // f16 operands accumulate in f32: 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly
    let h = run1(
        Opcode::Dot,
        &[
            lit(F16, &[1, 3], &[1.0, 2f64.powi(-11), 2f64.powi(-11)]),
            lit(F16, &[3, 1], &[1.0, 1.0, 1.0]),
        ],
        sh(F16, &[1, 1]),
        with(|t| t.dot_dims = Some(dd.clone())),
    );
    assert_eq!(h.to_f64_vec(), vec![1.0 + 2f64.powi(-10)]);
    let i = run1(
        Opcode::Dot,
        &[ilit(S8, &[1, 2], &[100, 100]), ilit(S8, &[2, 1], &[2, 2])],
        sh(S32, &[1, 1]),
        with(|t| t.dot_dims = Some(dd)),
    );
    assert_eq!(i.to_i128_vec(), vec![400]);
}

#[test]
fn convolution_with_padding_and_feature_groups() {
    // 1 batch, 4 positions, 1 feature; kernel [1, 1] size 2; pad 1 each side
    let x = lit(F32, &[1, 4, 1], &[1.0, 2.0, 3.0, 4.0]);
    let k = lit(F32, &[2, 1, 1], &[1.0, 10.0]);
    let w = WindowDim {
        pad_low: 1,
        pad_high: 1,
        ..WindowDim::new(2)
    };
    let a = with(|t| {
        t.conv_dims = Some(ConvDims::feature_last(1));
        t.window = Some(vec![w]);
    });
    let r = run1(Opcode::Convolution, &[x, k], sh(F32, &[1, 5, 1]), a);
    assert_eq!(r.to_f64_vec(), vec![10.0, 21.0, 32.0, 43.0, 4.0]);
    // two feature groups: input features [a, b], kernel i=1, o=2; out0 uses a, out1 uses b
    let x = lit(F32, &[1, 2, 2], &[1.0, 100.0, 2.0, 200.0]);
    let k = lit(F32, &[1, 1, 2], &[3.0, 5.0]);
    let a = with(|t| {
        t.conv_dims = Some(ConvDims::feature_last(1));
        t.window = Some(vec![WindowDim::new(1)]);
        t.feature_group_count = Some(2);
    });
    let r = run1(Opcode::Convolution, &[x, k], sh(F32, &[1, 2, 2]), a);
    assert_eq!(r.to_f64_vec(), vec![3.0, 500.0, 6.0, 1000.0]);
}

fn counting_loop(limit_cond: bool) -> Module {
    // state: s32 counter; cond: counter < 10 (or always true); body: counter + 1
    let mut c = B::default();
    let p = c.param(0, sh(S32, &[]));
    let ten = c.constant_i(sh(S32, &[]), &[10]);
    let cond_root = if limit_cond {
        c.op_with(
            Opcode::Compare,
            sh(Pred, &[]),
            &[ten, ten],
            cmp_attrs(ComparisonDirection::Eq, None),
        )
    } else {
        c.op_with(
            Opcode::Compare,
            sh(Pred, &[]),
            &[p, ten],
            cmp_attrs(ComparisonDirection::Lt, None),
        )
    };
    let cond = c.build("cond", cond_root);
    let mut b = B::default();
    let p = b.param(0, sh(S32, &[]));
    let one = b.constant_i(sh(S32, &[]), &[1]);
    let r = b.op(Opcode::Add, sh(S32, &[]), &[p, one]);
    let body = b.build("body", r);
    let mut e = B::default();
    let x = e.param(0, sh(S32, &[]));
    let w = e.op_with(
        Opcode::While,
        sh(S32, &[]),
        &[x],
        with(|t| {
            t.condition = Some(CompId(0));
            t.body = Some(CompId(1));
        }),
    );
    module(vec![cond, body, e.build("main", w)])
}

#[test]
fn while_loops_and_their_limit() {
    let out = run(&counting_loop(false), &[ilit(S32, &[], &[3])]).unwrap();
    assert_eq!(out[0].to_i128_vec(), vec![10]);
    let exe = Interpreter::with_while_limit(100)
        .compile(&counting_loop(true))
        .unwrap();
    let e = exe.execute(&[ilit(S32, &[], &[0])]).unwrap_err();
    assert!(
        matches!(&e, BackendError::Execute(m) if m.contains("iteration limit of 100")),
        "{e}"
    );
}

#[test]
fn conditional_picks_branches_and_clamps_the_index() {
    let branch = |name: &str, op: Opcode| {
        let mut b = B::default();
        let p = b.param(0, sh(F32, &[]));
        let r = b.op(op, sh(F32, &[]), &[p]);
        b.build(name, r)
    };
    let mut e = B::default();
    let i = e.param(0, sh(S32, &[]));
    let x = e.param(1, sh(F32, &[]));
    let c = e.op_with(
        Opcode::Conditional,
        sh(F32, &[]),
        &[i, x, x],
        with(|t| t.branch_computations = vec![CompId(0), CompId(1)]),
    );
    let m = module(vec![
        branch("neg", Opcode::Negate),
        branch("abs", Opcode::Abs),
        e.build("main", c),
    ]);
    let r = run(&m, &[ilit(S32, &[], &[0]), lit(F32, &[], &[3.0])]).unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![-3.0]);
    let r = run(&m, &[ilit(S32, &[], &[5]), lit(F32, &[], &[3.0])]).unwrap();
    assert_eq!(
        r[0].to_f64_vec(),
        vec![3.0],
        "out of range runs the last branch"
    );
}

#[test]
fn map_runs_the_computation_per_element() {
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[3]));
    let y = b.param(1, sh(F32, &[3]));
    let r = b.op_with(
        Opcode::Map,
        sh(F32, &[3]),
        &[x, y],
        with(|t| {
            t.dimensions = Some(vec![0]);
            t.to_apply = Some(CompId(0));
        }),
    );
    let m = module(vec![
        binary_comp("mul", Opcode::Multiply, F32),
        b.build("main", r),
    ]);
    let out = run(
        &m,
        &[
            lit(F32, &[3], &[1.0, 2.0, 3.0]),
            lit(F32, &[3], &[4.0, 5.0, 6.0]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].to_f64_vec(), vec![4.0, 10.0, 18.0]);
}

#[test]
fn tuples_flatten_and_compile_once_runs_many() {
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[2]));
    let n = b.op(Opcode::Negate, sh(F32, &[2]), &[x]);
    let t = b.op(
        Opcode::Tuple,
        Shape::Tuple(vec![sh(F32, &[2]), sh(F32, &[2])]),
        &[x, n],
    );
    let m = module(vec![b.build("main", t)]);
    let exe = Interpreter::default().compile(&m).unwrap();
    for k in 0..3 {
        let v = k as f64;
        let out = exe.execute(&[lit(F32, &[2], &[v, -v])]).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].to_f64_vec(), vec![-v, v]);
    }
}

#[test]
fn bad_arguments_name_the_parameter() {
    let mut b = B::default();
    let x = b.param(0, sh(F32, &[2]));
    let y = b.param(1, sh(F32, &[2]));
    let s = b.op(Opcode::Add, sh(F32, &[2]), &[x, y]);
    let m = module(vec![b.build("main", s)]);
    let exe = Interpreter::default().compile(&m).unwrap();
    let e = exe.execute(&[lit(F32, &[2], &[1.0, 2.0])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad arguments: the entry computation takes 2 arguments, got 1"
    );
    let e = exe
        .execute(&[lit(F32, &[2], &[1.0, 2.0]), lit(F16, &[2], &[1.0, 2.0])])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad arguments: parameter 1 (`p1`) expects f32[2], got f16[2]"
    );
    let e = exe
        .execute(&[
            lit(F32, &[3], &[1.0, 2.0, 3.0]),
            lit(F32, &[2], &[1.0, 2.0]),
        ])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad arguments: parameter 0 (`p0`) expects f32[2], got f32[3]"
    );
}

#[test]
fn unsupported_and_malformed_modules_are_errors_not_panics() {
    let m = single(
        Opcode::CustomCall,
        &[sh(F32, &[2])],
        sh(F32, &[2]),
        Attrs::default(),
    );
    let e = Interpreter::default().compile(&m).err().unwrap();
    assert!(e.is_unsupported(), "{e}");
    // a result shape that does not match what the op computes
    let m = single(
        Opcode::Add,
        &[sh(F32, &[2]), sh(F32, &[2])],
        sh(F32, &[3]),
        Attrs::default(),
    );
    let e = run(
        &m,
        &[lit(F32, &[2], &[1.0, 2.0]), lit(F32, &[2], &[1.0, 2.0])],
    )
    .unwrap_err();
    assert!(e.to_string().contains("declares f32[3]"), "{e}");
    // mismatched operand types
    let m = single(
        Opcode::Add,
        &[sh(F32, &[2]), sh(F16, &[2])],
        sh(F32, &[2]),
        Attrs::default(),
    );
    assert!(run(
        &m,
        &[lit(F32, &[2], &[1.0, 2.0]), lit(F16, &[2], &[1.0, 2.0])]
    )
    .is_err());
    // bad attributes
    let m = single(
        Opcode::Transpose,
        &[sh(F32, &[2, 2])],
        sh(F32, &[2, 2]),
        with(|t| t.dimensions = Some(vec![0, 0])),
    );
    assert!(run(&m, &[lit(F32, &[2, 2], &[1.0; 4])]).is_err());
    let m = single(
        Opcode::Slice,
        &[sh(F32, &[2])],
        sh(F32, &[2]),
        with(|t| {
            t.slice = Some(vec![SliceDim {
                start: 0,
                limit: 9,
                stride: 1,
            }])
        }),
    );
    assert!(run(&m, &[lit(F32, &[2], &[1.0; 2])]).is_err());
    // a computation that calls itself
    let mut b = B::default();
    let p = b.param(0, sh(F32, &[]));
    let c = b.op_with(
        Opcode::Call,
        sh(F32, &[]),
        &[p],
        with(|t| t.to_apply = Some(CompId(0))),
    );
    let m = module(vec![b.build("main", c)]);
    assert!(matches!(
        Interpreter::default().compile(&m).err(),
        Some(BackendError::Compile(_))
    ));
}

#[test]
fn f32_transcendentals_match_hand_values() {
    let x = lit(F32, &[3], &[0.0, 1.0, -1.0]);
    let s = sh(F32, &[3]);
    let e = run1(
        Opcode::Exponential,
        std::slice::from_ref(&x),
        s.clone(),
        Attrs::default(),
    )
    .to_f64_vec();
    assert_eq!(e[0], 1.0);
    assert!((e[1] - std::f64::consts::E).abs() < 3e-7);
    let l = run1(
        Opcode::Logistic,
        std::slice::from_ref(&x),
        s.clone(),
        Attrs::default(),
    )
    .to_f64_vec();
    assert_eq!(l[0], 0.5);
    assert!((l[1] - 0.731_058_578_630_004_9).abs() < 1e-7);
    let erf = run1(Opcode::Erf, &[x], s, Attrs::default()).to_f64_vec();
    assert!((erf[1] - 0.842_700_792_949_714_9).abs() < 2e-7);
    assert_eq!(erf[2], -erf[1]);
    let r = run1(
        Opcode::Rsqrt,
        &[lit(F32, &[2], &[4.0, -0.0])],
        sh(F32, &[2]),
        Attrs::default(),
    )
    .to_f64_vec();
    assert_eq!(r, vec![0.5, f64::NEG_INFINITY]);
}

/// The 13 ops of `shared/oracle/f16`.
const ORACLE_OPS: &[Opcode] = &[
    Opcode::Exponential,
    Opcode::ExponentialMinusOne,
    Opcode::Log,
    Opcode::LogPlusOne,
    Opcode::Logistic,
    Opcode::Sine,
    Opcode::Cosine,
    Opcode::Tan,
    Opcode::Tanh,
    Opcode::Sqrt,
    Opcode::Rsqrt,
    Opcode::Cbrt,
    Opcode::Erf,
];

fn oracle_dir() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/oracle/f16");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("the f16 oracle is missing at {} (CI is set)", dir.display());
    }
    crate::skip::this_test(format!("the f16 oracle is not at {}", dir.display()));
    None
}

/// Order-preserving integer of a float bit pattern of width `bits`.
fn ordered(b: u64, bits: u32) -> i64 {
    let mag = (b & ((1u64 << (bits - 1)) - 1)) as i64;
    if (b >> (bits - 1)) & 1 == 1 {
        -mag
    } else {
        mag
    }
}

/// The interpreter's results of `op` on every bit pattern of a 16-bit type.
fn sweep16(op: Opcode, dt: ElementType) -> Vec<u64> {
    let all: Vec<u64> = (0..=u16::MAX as u64).collect();
    let x = Literal::from_bits(&ArrayShape::new(dt, vec![65536]), &all).unwrap();
    run1(op, &[x], sh(dt, &[65536]), Attrs::default()).to_bits_vec()
}

/// Max ULP distance of `got` from `want` (16-bit patterns); NaN must match NaN.
fn max_ulp16(dt: ElementType, got: &[u64], want: &[u64]) -> (u64, usize, usize) {
    let fmt = dt.float_format().unwrap();
    let (mut worst, mut at, mut nan_mismatch) = (0u64, 0usize, 0usize);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (gn, wn) = (
            crate::literal::bits_to_f64(g, &fmt).is_nan(),
            crate::literal::bits_to_f64(w, &fmt).is_nan(),
        );
        if gn || wn {
            if gn != wn {
                nan_mismatch += 1;
            }
            continue;
        }
        let d = ordered(g, 16).abs_diff(ordered(w, 16));
        if d > worst {
            worst = d;
            at = i;
        }
    }
    (worst, at, nan_mismatch)
}

#[test]
fn f16_oracle_sweep_within_declared_budgets() {
    let Some(dir) = oracle_dir() else {
        return;
    };
    let numerics = interpreter_numerics();
    for &op in ORACLE_OPS {
        let bytes = std::fs::read(dir.join(format!("{}.bin", op.name()))).unwrap();
        let want: Vec<u64> = bytes
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u64)
            .collect();
        assert_eq!(want.len(), 65536);
        let got = sweep16(op, F16);
        let (worst, at, nans) = max_ulp16(F16, &got, &want);
        let budget = numerics.budget(op, F16).map_or(0, |b| b.ulp);
        assert_eq!(
            nans, 0,
            "{op}: NaN where the oracle has a number or vice versa"
        );
        assert!(
            worst <= budget,
            "{op}: {worst} ulp at input {at:#06x} (got {:#06x}, want {:#06x}), budget {budget}",
            got[at],
            want[at]
        );
    }
}

/// f64 math for the measurement of bf16 and f32 budgets: the reference's
/// own (NaN for an op it has no f64 function for).
fn f64_reference(op: Opcode, x: f64) -> f64 {
    crate::reference::math::unary(op, x).unwrap_or(f64::NAN)
}

/// Prints measured max ULP errors: f16 vs the oracle, bf16 exhaustively and
/// f32 on a sample vs f64 math rounded once. Run with
/// `cargo test -p xla-props --lib -- --ignored measure --nocapture`.
#[test]
#[ignore = "measurement, prints budgets"]
fn measure_budgets() {
    if let Some(dir) = oracle_dir() {
        for &op in ORACLE_OPS {
            let bytes = std::fs::read(dir.join(format!("{}.bin", op.name()))).unwrap();
            let want: Vec<u64> = bytes
                .chunks(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u64)
                .collect();
            let (w, at, n) = max_ulp16(F16, &sweep16(op, F16), &want);
            let f = F16.float_format().unwrap();
            let wrong = sweep16(op, F16)
                .iter()
                .zip(&want)
                .filter(|(&g, &w)| {
                    g != w
                        && !(crate::literal::bits_to_f64(g, &f).is_nan()
                            && crate::literal::bits_to_f64(w, &f).is_nan())
                })
                .count();
            println!(
                "f16  {:24} max {w} ulp (at {at:#06x}), {wrong} words differ, {n} nan mismatches",
                op.name()
            );
        }
    }
    let bf = Bf16.float_format().unwrap();
    for &op in ORACLE_OPS {
        let want: Vec<u64> = (0..=u16::MAX as u64)
            .map(|b| {
                crate::literal::round_to_bits(
                    f64_reference(op, crate::literal::bits_to_f64(b, &bf)),
                    &bf,
                )
            })
            .collect();
        let got = sweep16(op, Bf16);
        let abs = interpreter_numerics()
            .budget(op, Bf16)
            .map_or(0.0, |b| b.abs);
        let got: Vec<u64> = got
            .iter()
            .zip(&want)
            .map(|(&g, &w)| {
                let d = (crate::literal::bits_to_f64(g, &bf) - crate::literal::bits_to_f64(w, &bf))
                    .abs();
                if d <= abs {
                    w
                } else {
                    g
                }
            })
            .collect();
        let (w, at, n) = max_ulp16(Bf16, &got, &want);
        println!(
            "bf16 {:24} max {w} ulp (at {at:#06x}), {n} nan mismatches",
            op.name()
        );
    }
    for &op in ORACLE_OPS {
        let xs: Vec<f64> = (0..200_000u64)
            .map(|i| f32::from_bits((i.wrapping_mul(0x9E37_79B9) % 0x7f80_0000) as u32) as f64)
            .flat_map(|v| [v, -v])
            .collect();
        let x = lit(F32, &[xs.len() as i64], &xs);
        let got = run1(op, &[x], sh(F32, &[xs.len() as i64]), Attrs::default()).to_bits_vec();
        let mut worst = (0u64, 0.0);
        let abs = interpreter_numerics()
            .budget(op, F32)
            .map_or(0.0, |b| b.abs);
        for (k, &xv) in xs.iter().enumerate() {
            let w = f64_reference(op, xv) as f32;
            let g = f32::from_bits(got[k] as u32);
            if w.is_nan() || g.is_nan() || w.is_infinite() || ((w - g).abs() as f64) <= abs {
                continue;
            }
            let d = ordered(w.to_bits() as u64, 32).abs_diff(ordered(g.to_bits() as u64, 32));
            if d > worst.0 {
                worst = (d, xv);
            }
        }
        println!(
            "f32  {:24} max {} ulp (at x = {:e})",
            op.name(),
            worst.0,
            worst.1
        );
    }
}

#[test]
fn conditional_with_a_pred_selector() {
    let branch = |name: &str, op: Opcode| {
        let mut b = B::default();
        let p = b.param(0, sh(F32, &[]));
        let r = b.op(op, sh(F32, &[]), &[p]);
        b.build(name, r)
    };
    let mut e = B::default();
    let i = e.param(0, sh(Pred, &[]));
    let x = e.param(1, sh(F32, &[]));
    let c = e.op_with(
        Opcode::Conditional,
        sh(F32, &[]),
        &[i, x, x],
        with(|t| {
            t.branch_computations = vec![CompId(0), CompId(1)];
            t.pred_branches = true;
        }),
    );
    let m = module(vec![
        branch("neg", Opcode::Negate),
        branch("ceil", Opcode::Ceil),
        e.build("main", c),
    ]);
    let r = run(&m, &[ilit(Pred, &[], &[1]), lit(F32, &[], &[1.5])]).unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![-1.5]);
    let r = run(&m, &[ilit(Pred, &[], &[0]), lit(F32, &[], &[1.5])]).unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![2.0]);
}

/// Times the benchmark workloads (1M-element f32 add, exp on f16[65536],
/// 256x256 f32 dot). Run in release:
/// `cargo test --release -p xla-props --lib -- --ignored perf_smoke --nocapture`.
#[test]
#[ignore = "timing, not a correctness test"]
fn perf_smoke() {
    let time = |what: &str, m: &Module, args: &[Literal]| {
        let exe = Interpreter::default().compile(m).unwrap();
        exe.execute(args).unwrap();
        let t = std::time::Instant::now();
        let reps = 10;
        for _ in 0..reps {
            exe.execute(args).unwrap();
        }
        println!("{what}: {:?} per run", t.elapsed() / reps);
    };
    let n = 1 << 20;
    let x = lit(F32, &[n], &vec![1.5; n as usize]);
    let m = single(
        Opcode::Add,
        &[sh(F32, &[n]), sh(F32, &[n])],
        sh(F32, &[n]),
        Attrs::default(),
    );
    time("f32[1M] add", &m, &[x.clone(), x]);
    let h = lit(F16, &[65536], &vec![0.5; 65536]);
    let m = single(
        Opcode::Exponential,
        &[sh(F16, &[65536])],
        sh(F16, &[65536]),
        Attrs::default(),
    );
    time("f16[65536] exp", &m, &[h]);
    let a = lit(F32, &[256, 256], &vec![0.25; 65536]);
    let dd = DotDims {
        lhs_contracting: vec![1],
        rhs_contracting: vec![0],
        ..DotDims::default()
    };
    let m = single(
        Opcode::Dot,
        &[sh(F32, &[256, 256]), sh(F32, &[256, 256])],
        sh(F32, &[256, 256]),
        with(|t| t.dot_dims = Some(dd)),
    );
    time("f32[256,256] dot", &m, &[a.clone(), a]);
}

#[test]
fn oversized_results_are_refused_not_allocated() {
    let m = single(
        Opcode::Broadcast,
        &[sh(F32, &[])],
        sh(F32, &[1 << 20, 1 << 20]),
        with(|t| t.dimensions = Some(vec![])),
    );
    let e = run(&m, &[lit(F32, &[], &[1.0])]).unwrap_err();
    assert!(e.to_string().contains("budget"), "{e}");
    // a gather whose result batch dims disagree with the indices
    let g = row_gather(2);
    let m = single(
        Opcode::Gather,
        &[sh(F32, &[3, 2]), sh(S32, &[2, 1])],
        sh(F32, &[5, 2]),
        with(|t| t.gather_dims = Some(g)),
    );
    assert!(run(
        &m,
        &[lit(F32, &[3, 2], &[0.0; 6]), ilit(S32, &[2, 1], &[0, 1])]
    )
    .is_err());
}

#[test]
fn every_op_with_missing_attributes_or_odd_operands_errors_without_panicking() {
    use crate::hlo::Arity;
    let shapes = [
        sh(F32, &[2]),
        sh(S32, &[]),
        sh(Pred, &[2, 1]),
        sh(F16, &[0]),
    ];
    // and the parse-only ops the interpreter runs all the same
    let runs = |o: &Opcode| {
        !o.is_parse_only() || matches!(o, Opcode::RngBitGenerator | Opcode::TriangularSolve)
    };
    for &op in Opcode::ALL.iter().filter(|o| runs(o)) {
        let counts: Vec<usize> = match op.arity() {
            Arity::Fixed(k) => vec![k],
            Arity::AtLeast(k) => vec![k, k + 1, k + 2],
        };
        for n in counts {
            for s in &shapes {
                for out in [s.clone(), Shape::Tuple(vec![s.clone()])] {
                    let params: Vec<Shape> = vec![s.clone(); n];
                    let m = single(op, &params, out, Attrs::default());
                    let args: Vec<Literal> = params
                        .iter()
                        .map(|p| Literal::zeros(p.as_array().unwrap()).unwrap())
                        .collect();
                    // Ok or Err, never a panic.
                    let _ = Interpreter::default()
                        .compile(&m)
                        .and_then(|e| e.execute(&args));
                }
            }
        }
    }
}

#[test]
fn while_with_tuple_state_and_get_tuple_element() {
    // (i, acc) -> (i + 1, acc + i) while i < 5; from (0, 100) gives (5, 110)
    let st = Shape::Tuple(vec![sh(S32, &[]), sh(S32, &[])]);
    let gte = |b: &mut B, t: InstrId, k: i64| {
        b.op_with(
            Opcode::GetTupleElement,
            sh(S32, &[]),
            &[t],
            with(|t| t.index = Some(k)),
        )
    };
    let mut c = B::default();
    let p = c.param(0, st.clone());
    let i = gte(&mut c, p, 0);
    let five = c.constant_i(sh(S32, &[]), &[5]);
    let lt = c.op_with(
        Opcode::Compare,
        sh(Pred, &[]),
        &[i, five],
        cmp_attrs(ComparisonDirection::Lt, None),
    );
    let cond = c.build("cond", lt);
    let mut b = B::default();
    let p = b.param(0, st.clone());
    let i = gte(&mut b, p, 0);
    let acc = gte(&mut b, p, 1);
    let one = b.constant_i(sh(S32, &[]), &[1]);
    let i1 = b.op(Opcode::Add, sh(S32, &[]), &[i, one]);
    let acc1 = b.op(Opcode::Add, sh(S32, &[]), &[acc, i]);
    let t = b.op(Opcode::Tuple, st.clone(), &[i1, acc1]);
    let body = b.build("body", t);
    let mut e = B::default();
    let x = e.param(0, sh(S32, &[]));
    let y = e.param(1, sh(S32, &[]));
    let init = e.op(Opcode::Tuple, st.clone(), &[x, y]);
    let w = e.op_with(
        Opcode::While,
        st,
        &[init],
        with(|t| {
            t.condition = Some(CompId(0));
            t.body = Some(CompId(1));
        }),
    );
    let m = module(vec![cond, body, e.build("main", w)]);
    let out = run(&m, &[ilit(S32, &[], &[0]), ilit(S32, &[], &[100])]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].to_i128_vec(), vec![5]);
    assert_eq!(out[1].to_i128_vec(), vec![110]);
}

#[test]
fn integer_to_f32_rounds_once_and_u64_indices_stay_out_of_range() {
    // 2^53 + 2^29 + 1 is just above the midpoint between two f32 values; through f64 it
    // would lose the +1 and tie to even (down)
    let v: i128 = (1 << 53) + (1 << 29) + 1;
    let r = run1(
        Opcode::Convert,
        &[ilit(S64, &[1], &[v])],
        sh(F32, &[1]),
        Attrs::default(),
    );
    assert_eq!(r.to_f64_vec(), vec![((1u64 << 53) + (1 << 30)) as f64]);
    let mut b = B::default();
    let p = b.param(0, sh(F32, &[4]));
    let i = b.param(1, sh(U64, &[]));
    let ds = b.op_with(
        Opcode::DynamicSlice,
        sh(F32, &[2]),
        &[p, i],
        with(|t| t.dynamic_slice_sizes = Some(vec![2])),
    );
    let m = module(vec![b.build("main", ds)]);
    let r = run(
        &m,
        &[
            lit(F32, &[4], &[0.0, 1.0, 2.0, 3.0]),
            ilit(U64, &[], &[u64::MAX as i128]),
        ],
    )
    .unwrap();
    assert_eq!(r[0].to_f64_vec(), vec![2.0, 3.0]);
}

/// Unsigned `power` takes its exponent zero-extended: `137 ^ 193` in u8 is
/// 137 (137 has order dividing 64 mod 256), not `137 ^ -63` (which would be 0).
/// Every unsigned width agrees with the reference on edge and random pairs.
#[test]
fn unsigned_power_uses_the_zero_extended_exponent() {
    let u = run1(
        Opcode::Power,
        &[ilit(U8, &[2], &[137, 3]), ilit(U8, &[2], &[193, 255])],
        sh(U8, &[2]),
        Attrs::default(),
    );
    // 3^255 mod 256 = 3^(255 mod 64) * (3^64)^3 = 3^63 mod 256 = 171
    assert_eq!(u.to_i128_vec(), vec![137, 171]);
    for dt in [U4, U8, U16, U32, U64, S4, S8, S32, S64] {
        let (lo, hi) = dt.int_range().unwrap();
        let mut rng = crate::inputs::SplitMix::new(dt as u64);
        let mut base = vec![lo, hi, 0, 1, hi - 1];
        let mut exp = vec![hi, hi, hi, hi - 1, lo];
        for _ in 0..64 {
            base.push(rng.int_in(lo, hi));
            exp.push(rng.int_in(lo, hi));
        }
        let n = base.len() as i64;
        let args = [ilit(dt, &[n], &base), ilit(dt, &[n], &exp)];
        let m = single(
            Opcode::Power,
            &[sh(dt, &[n]), sh(dt, &[n])],
            sh(dt, &[n]),
            Attrs::default(),
        );
        let want = crate::reference::evaluate(&m, &args).unwrap();
        assert_eq!(run(&m, &args).unwrap(), want, "{dt}");
    }
}

/// A negative exponent gives the integer part of the exact power: 1 for
/// base 1, ±1 by parity for base -1, 0 otherwise (as the reference, and as
/// XLA CPU computes it: `power(s8 -1, -128)` = 1).
#[test]
fn negative_exponents_give_the_integer_part_of_the_power() {
    for dt in [S8, S16, S32, S64] {
        let base = [1, 1, -1, -1, -1, 2, -2, 0, 5];
        let exp = [-1, -6, -1, -2, -3, -1, -3, -1, -2];
        let n = base.len() as i64;
        let args = [ilit(dt, &[n], &base), ilit(dt, &[n], &exp)];
        let m = single(
            Opcode::Power,
            &[sh(dt, &[n]), sh(dt, &[n])],
            sh(dt, &[n]),
            Attrs::default(),
        );
        let got = run(&m, &args).unwrap();
        assert_eq!(
            got[0].to_i128_vec(),
            vec![1, 1, -1, 1, -1, 0, 0, 0, 0],
            "{dt}"
        );
        assert_eq!(got, crate::reference::evaluate(&m, &args).unwrap(), "{dt}");
    }
    // the lowest exponent of s8 is even
    let m = single(
        Opcode::Power,
        &[sh(S8, &[1]), sh(S8, &[1])],
        sh(S8, &[1]),
        Attrs::default(),
    );
    let args = [ilit(S8, &[1], &[-1]), ilit(S8, &[1], &[-128])];
    assert_eq!(run(&m, &args).unwrap()[0].to_i128_vec(), vec![1]);
}

#[test]
fn topk_and_same_width_bitcast_match_the_reference() {
    use crate::backend::Backend;
    for text in [
        "HloModule m\nENTRY e {\n  x = s32[3,6] parameter(0)\n  ROOT t = (s32[3,2], s32[3,2]) topk(x), k=2, largest=false\n}\n",
        "HloModule m\nENTRY e {\n  x = f32[4,3]{0,1} parameter(0)\n  b = s32[4,3]{0,1} bitcast(x)\n  ROOT c = s32[12]{0} bitcast(b)\n}\n",
    ] {
        let m = crate::hlo::parse_module(text).unwrap();
        let args = crate::inputs::generate_inputs(&m, crate::inputs::Distribution::Duplicates, 4)
            .unwrap()
            .args;
        let want = crate::reference::evaluate(&m, &args).unwrap();
        let got = crate::backend::Interpreter::default()
            .compile(&m)
            .unwrap()
            .execute(&args)
            .unwrap();
        assert_eq!(got, want, "{text}");
    }
}

/// A `jnp.sort` comparator (`order=TOTAL`) and a `lax.top_k` with
/// `is_stable=true` evaluate with their meaning on the reference and the
/// interpreter alike: NaN last, -0 before +0; ties by the lower index.
#[test]
fn jax_sort_order_total_and_stable_topk_agree_with_the_reference() {
    let sort = "HloModule s\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                ROOT lt = pred[] compare(a, b), direction=LT, order=TOTAL\n}\n\
                ENTRY e {\n  x = f32[6] parameter(0)\n  \
                ROOT s = f32[6] sort(x), dimensions={0}, is_stable=true, to_apply=cmp\n}\n";
    let m = crate::hlo::parse_module(sort).unwrap();
    let x = Literal::from_f64s(
        &ArrayShape::new(F32, vec![6]),
        &[0.0, f64::NAN, -0.0, 2.0, -1.0, f64::NEG_INFINITY],
    )
    .unwrap();
    let want = crate::reference::evaluate(&m, std::slice::from_ref(&x)).unwrap();
    let got = Interpreter::default()
        .compile(&m)
        .unwrap()
        .execute(std::slice::from_ref(&x))
        .unwrap();
    let bits = |l: &Literal| l.to_bits_vec();
    assert_eq!(bits(&got[0]), bits(&want[0]));
    let v = want[0].to_f64_vec();
    assert_eq!(&v[..3], &[f64::NEG_INFINITY, -1.0, -0.0]);
    assert!(v[2].is_sign_negative() && v[3] == 0.0 && v[3].is_sign_positive());
    assert!(v[5].is_nan(), "{v:?}");
    let topk = "HloModule t\nENTRY e {\n  x = f32[5] parameter(0)\n  \
                ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=true, is_stable=true\n}\n";
    let m = crate::hlo::parse_module(topk).unwrap();
    let x = Literal::from_f64s(&ArrayShape::new(F32, vec![5]), &[1.0, 3.0, 1.0, 3.0, 2.0]).unwrap();
    let want = crate::reference::evaluate(&m, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        want[1].to_f64_vec(),
        vec![1.0, 3.0, 4.0],
        "ties by the lower index"
    );
    match Interpreter::default().compile(&m) {
        Ok(exe) => {
            let got = exe.execute(std::slice::from_ref(&x)).unwrap();
            assert_eq!(got[1].to_f64_vec(), want[1].to_f64_vec());
        }
        Err(e) => assert!(matches!(e, BackendError::Unsupported { .. }), "{e}"),
    }
}
