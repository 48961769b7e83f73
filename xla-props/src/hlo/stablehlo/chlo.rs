//! `chlo` ops as HLO: each is a decomposition into IR ops (computed in f64
//! for narrower floats, rounded once at the end) or, where none is written
//! yet, a `custom-call` to the op's own name, which evaluators report as
//! unsupported. [`CHLO_OPS`] lists every one (docs/stablehlo.md shows it).

use super::build::{emit, err, shape_of, Builder, R};
use super::syntax::{Attr, Op, Type};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData, InstrId,
    SliceDim,
};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

mod special;

use special::{digamma, erf_inv, erfc, lgamma, log1p_or_large_log};

/// How a `chlo` op is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChloLowering {
    /// The HLO op of the same meaning.
    Direct,
    /// A decomposition into HLO ops (in f64 for narrower floats).
    Decomposed,
    /// Kept as a `custom-call` to `chlo.NAME`: reads and prints, evaluators say unsupported.
    Opaque,
}

/// Every `chlo` op the reader knows, with how it is read.
pub const CHLO_OPS: &[(&str, ChloLowering)] = &[
    ("erf", ChloLowering::Direct),
    ("tan", ChloLowering::Direct),
    ("top_k", ChloLowering::Decomposed),
    ("sinh", ChloLowering::Decomposed),
    ("cosh", ChloLowering::Decomposed),
    ("asin", ChloLowering::Decomposed),
    ("acos", ChloLowering::Decomposed),
    ("atan", ChloLowering::Decomposed),
    ("asinh", ChloLowering::Decomposed),
    ("acosh", ChloLowering::Decomposed),
    ("atanh", ChloLowering::Decomposed),
    ("erfc", ChloLowering::Decomposed),
    ("erf_inv", ChloLowering::Decomposed),
    ("lgamma", ChloLowering::Decomposed),
    ("digamma", ChloLowering::Decomposed),
    ("next_after", ChloLowering::Decomposed),
    ("square", ChloLowering::Decomposed),
    ("is_inf", ChloLowering::Decomposed),
    ("is_pos_inf", ChloLowering::Decomposed),
    ("is_neg_inf", ChloLowering::Decomposed),
    ("mulhi", ChloLowering::Decomposed),
    ("ragged_dot", ChloLowering::Decomposed),
    ("scan", ChloLowering::Decomposed),
    ("bessel_i1e", ChloLowering::Opaque),
    ("conj", ChloLowering::Opaque),
    ("polygamma", ChloLowering::Opaque),
    ("zeta", ChloLowering::Opaque),
];

struct E<'b> {
    b: &'b mut Builder,
    dims: Vec<i64>,
    /// The working float type.
    t: ElementType,
}

impl E<'_> {
    fn s(&self) -> Shape {
        Shape::array(self.t, self.dims.clone())
    }
    fn un(&mut self, op: Opcode, x: InstrId) -> InstrId {
        let s = self.s();
        self.b.push(op, s, vec![x], Attrs::default())
    }
    fn bin(&mut self, op: Opcode, x: InstrId, y: InstrId) -> InstrId {
        let s = self.s();
        self.b.push(op, s, vec![x, y], Attrs::default())
    }
    fn add(&mut self, x: InstrId, y: InstrId) -> InstrId {
        self.bin(Opcode::Add, x, y)
    }
    fn sub(&mut self, x: InstrId, y: InstrId) -> InstrId {
        self.bin(Opcode::Subtract, x, y)
    }
    fn mul(&mut self, x: InstrId, y: InstrId) -> InstrId {
        self.bin(Opcode::Multiply, x, y)
    }
    fn div(&mut self, x: InstrId, y: InstrId) -> InstrId {
        self.bin(Opcode::Divide, x, y)
    }
    fn c(&mut self, v: f64) -> InstrId {
        let k = self.b.push(
            Opcode::Constant,
            Shape::scalar(self.t),
            vec![],
            Attrs {
                constant: Some(ConstantData::Float(vec![v])),
                ..Attrs::default()
            },
        );
        if self.dims.is_empty() {
            return k;
        }
        let s = self.s();
        self.b.push(
            Opcode::Broadcast,
            s,
            vec![k],
            Attrs {
                dimensions: Some(vec![]),
                ..Attrs::default()
            },
        )
    }
    fn cmp(&mut self, d: ComparisonDirection, x: InstrId, y: InstrId) -> InstrId {
        self.b.push(
            Opcode::Compare,
            Shape::array(ElementType::Pred, self.dims.clone()),
            vec![x, y],
            Attrs {
                direction: Some(d),
                ..Attrs::default()
            },
        )
    }
    fn sel(&mut self, p: InstrId, x: InstrId, y: InstrId) -> InstrId {
        let s = self.s();
        self.b
            .push(Opcode::Select, s, vec![p, x, y], Attrs::default())
    }
    fn and(&mut self, p: InstrId, q: InstrId) -> InstrId {
        let s = Shape::array(ElementType::Pred, self.dims.clone());
        self.b.push(Opcode::And, s, vec![p, q], Attrs::default())
    }
    fn or(&mut self, p: InstrId, q: InstrId) -> InstrId {
        let s = Shape::array(ElementType::Pred, self.dims.clone());
        self.b.push(Opcode::Or, s, vec![p, q], Attrs::default())
    }
    /// `(f(x) combine f(-x)) / 2`: sinh and cosh.
    fn half_of_both_signs(&mut self, f: Opcode, x: InstrId, combine: Opcode) -> InstrId {
        let nx = self.un(Opcode::Negate, x);
        let a = self.un(f, x);
        let b = self.un(f, nx);
        let s = self.bin(combine, a, b);
        let h = self.c(0.5);
        self.mul(s, h)
    }
    /// `x` converted to type `t` (no-op when it is already).
    fn conv(&mut self, x: InstrId, t: ElementType) -> InstrId {
        if self.b.shape(x).as_array().is_some_and(|a| a.dtype == t) {
            return x;
        }
        let s = Shape::array(t, self.dims.clone());
        self.b.push(Opcode::Convert, s, vec![x], Attrs::default())
    }
    /// sqrt((1 - x)(1 + x)) without cancellation near |x| = 1.
    fn sqrt_one_minus_sq(&mut self, x: InstrId) -> InstrId {
        let one = self.c(1.0);
        let a = self.sub(one, x);
        let b = self.add(one, x);
        let p = self.mul(a, b);
        self.un(Opcode::Sqrt, p)
    }
    /// sin(pi x) with x reduced modulo 2 first (exact), so integers give exactly 0.
    fn sin_pi(&mut self, x: InstrId) -> InstrId {
        let half = self.c(0.5);
        let two = self.c(2.0);
        let h = self.mul(x, half);
        let r = self.un(Opcode::RoundNearestEven, h);
        let r2 = self.mul(r, two);
        let red = self.sub(x, r2);
        let pi = self.c(std::f64::consts::PI);
        let a = self.mul(red, pi);
        self.un(Opcode::Sine, a)
    }
}

fn working_type(t: ElementType) -> Option<ElementType> {
    match t {
        ElementType::F64 => Some(ElementType::F64),
        t if t.is_float() => Some(ElementType::F64),
        _ => None,
    }
}

/// Reads `chlo.KIND` applied to `ops`; `new_comp` adds a computation (top_k's comparator).
pub(crate) fn decompose(
    kind: &str,
    op: &Op,
    b: &mut Builder,
    ops: Vec<InstrId>,
    new_comp: &mut dyn FnMut(Computation) -> R<CompId>,
) -> R<Vec<InstrId>> {
    let pos = op.pos;
    let Some(&(_, how)) = CHLO_OPS.iter().find(|(n, _)| *n == kind) else {
        return err(pos, format!("unknown operation `chlo.{kind}`"));
    };
    let complex = ops
        .first()
        .is_some_and(|&x| b.shape(x).as_array().is_some_and(|a| a.dtype.is_complex()));
    if how == ChloLowering::Opaque || complex {
        let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
        let a = Attrs {
            custom_call_target: Some(format!("chlo.{kind}")),
            ..Attrs::default()
        };
        return Ok(emit(b, Opcode::CustomCall, shapes, ops, a));
    }
    if kind == "top_k" {
        return top_k(op, b, ops, new_comp);
    }
    if kind == "mulhi" {
        return super::chlo_ext::mulhi(op, b, &ops);
    }
    if kind == "ragged_dot" {
        return super::chlo_ext::ragged_dot(op, b, &ops);
    }
    let (x, y) = match (kind, &ops[..]) {
        ("next_after", [x, y]) => (*x, Some(*y)),
        (_, [x]) => (*x, None),
        _ => return err(pos, format!("`chlo.{kind}`: wrong number of operands")),
    };
    let (dims, t) = b.array(x, pos)?;
    if kind == "erf" || kind == "tan" {
        let code = if kind == "erf" {
            Opcode::Erf
        } else {
            Opcode::Tan
        };
        return Ok(vec![b.push(
            code,
            Shape::array(t, dims),
            vec![x],
            Attrs::default(),
        )]);
    }
    if kind == "next_after" {
        let y = y.ok_or((pos, "next_after takes two operands".to_string()))?;
        return next_after(b, x, y, dims, t, pos).map(|r| vec![r]);
    }
    if matches!(kind, "is_inf" | "is_pos_inf" | "is_neg_inf") {
        let mut e = E { b, dims, t };
        let ax = if kind == "is_inf" {
            e.un(Opcode::Abs, x)
        } else {
            x
        };
        let inf = e.c(if kind == "is_neg_inf" {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
        return Ok(vec![e.cmp(ComparisonDirection::Eq, ax, inf)]);
    }
    real_function(b, kind, x, dims, t, pos)
}

/// A real function of one float operand (`chlo.sinh`, `chlo.lgamma`, ...), computed in
/// the working type and converted back to `t`.
fn real_function(
    b: &mut Builder,
    kind: &str,
    x: InstrId,
    dims: Vec<i64>,
    t: ElementType,
    pos: usize,
) -> R<Vec<InstrId>> {
    let w = working_type(t).ok_or((pos, format!("`chlo.{kind}` of {t} is not supported")))?;
    let mut e = E { b, dims, t: w };
    let x = e.conv(x, w);
    use ComparisonDirection as D;
    use Opcode as O;
    let r = match kind {
        "square" => e.mul(x, x),
        // (expm1(x) - expm1(-x)) / 2: no cancellation for small x
        "sinh" => e.half_of_both_signs(O::ExponentialMinusOne, x, O::Subtract),
        "cosh" => e.half_of_both_signs(O::Exponential, x, O::Add),
        "atan" => {
            let one = e.c(1.0);
            e.bin(O::Atan2, x, one)
        }
        "asin" => {
            let r = e.sqrt_one_minus_sq(x);
            e.bin(O::Atan2, x, r)
        }
        "acos" => {
            let r = e.sqrt_one_minus_sq(x);
            e.bin(O::Atan2, r, x)
        }
        "asinh" => {
            // sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) when x^2 overflows
            let ax = e.un(O::Abs, x);
            let one = e.c(1.0);
            let sq = e.mul(ax, ax);
            let s1 = e.add(one, sq);
            let r = e.un(O::Sqrt, s1);
            let den = e.add(one, r);
            let q = e.div(sq, den);
            let arg = e.add(ax, q);
            let m = log1p_or_large_log(&mut e, arg, ax);
            let sg = e.un(O::Sign, x);
            let v = e.mul(sg, m);
            // keep -0 and NaN as they are
            let zero = e.c(0.0);
            let is_zero = e.cmp(D::Eq, x, zero);
            e.sel(is_zero, x, v)
        }
        "acosh" => {
            // log1p((x - 1) + sqrt((x - 1)(x + 1))); log(2x) when x^2 overflows
            let one = e.c(1.0);
            let xm = e.sub(x, one);
            let xp = e.add(x, one);
            let p = e.mul(xm, xp);
            let r = e.un(O::Sqrt, p);
            let arg = e.add(xm, r);
            log1p_or_large_log(&mut e, arg, x)
        }
        "atanh" => {
            // log1p(2x / (1 - x)) / 2
            let one = e.c(1.0);
            let two = e.c(2.0);
            let half = e.c(0.5);
            let num = e.mul(two, x);
            let den = e.sub(one, x);
            let q = e.div(num, den);
            let l = e.un(O::LogPlusOne, q);
            let v = e.mul(l, half);
            let ax = e.un(O::Abs, x);
            let out = e.cmp(D::Gt, ax, one);
            let nan = e.c(f64::NAN);
            e.sel(out, nan, v)
        }
        "erfc" => erfc(&mut e, x),
        "erf_inv" => erf_inv(&mut e, x),
        "lgamma" => lgamma(&mut e, x),
        "digamma" => digamma(&mut e, x),
        _ => return err(pos, format!("`chlo.{kind}` is not supported")),
    };
    Ok(vec![e.conv(r, t)])
}

/// nextafter(x, y) on the bit patterns, in x's own type.
fn next_after(
    b: &mut Builder,
    x: InstrId,
    y: InstrId,
    dims: Vec<i64>,
    t: ElementType,
    pos: usize,
) -> R<InstrId> {
    use ComparisonDirection as D;
    let Some(it) = ElementType::unsigned_of_width(t.bit_width()) else {
        return err(pos, format!("next_after of {t} is not supported"));
    };
    if !t.is_float() {
        return err(pos, format!("next_after of {t} is not supported"));
    }
    let mut e = E {
        b,
        dims: dims.clone(),
        t,
    };
    let ishape = Shape::array(it, dims.clone());
    let int_c = |e: &mut E, v: i128| {
        let k = e.b.push(
            Opcode::Constant,
            Shape::scalar(it),
            vec![],
            Attrs {
                constant: Some(ConstantData::Int(vec![v])),
                ..Attrs::default()
            },
        );
        e.b.push(
            Opcode::Broadcast,
            Shape::array(it, e.dims.clone()),
            vec![k],
            Attrs {
                dimensions: Some(vec![]),
                ..Attrs::default()
            },
        )
    };
    let ib = |e: &mut E, op: Opcode, a: InstrId, c: InstrId| {
        e.b.push(
            op,
            Shape::array(it, e.dims.clone()),
            vec![a, c],
            Attrs::default(),
        )
    };
    let xb = e.b.push(
        Opcode::BitcastConvert,
        ishape.clone(),
        vec![x],
        Attrs::default(),
    );
    let yb = e.b.push(
        Opcode::BitcastConvert,
        ishape.clone(),
        vec![y],
        Attrs::default(),
    );
    let one = int_c(&mut e, 1);
    let sign_mask = int_c(&mut e, 1i128 << (t.bit_width() - 1));
    let up = ib(&mut e, Opcode::Add, xb, one);
    let down = ib(&mut e, Opcode::Subtract, xb, one);
    let zero = e.c(0.0);
    let x_pos = e.cmp(D::Gt, x, zero);
    let y_gt = e.cmp(D::Gt, y, x);
    let away = e.cmp(ComparisonDirection::Eq, y_gt, x_pos);
    let moved = e.b.push(
        Opcode::Select,
        ishape.clone(),
        vec![away, up, down],
        Attrs::default(),
    );
    let ysign = ib(&mut e, Opcode::And, yb, sign_mask);
    let tiny = ib(&mut e, Opcode::Or, ysign, one);
    let x_zero = e.cmp(D::Eq, x, zero);
    let moved = e.b.push(
        Opcode::Select,
        ishape.clone(),
        vec![x_zero, tiny, moved],
        Attrs::default(),
    );
    let r = e.b.push(
        Opcode::BitcastConvert,
        Shape::array(t, dims),
        vec![moved],
        Attrs::default(),
    );
    let eq = e.cmp(D::Eq, x, y);
    let r = e.sel(eq, y, r);
    let xn = e.cmp(D::Ne, x, x);
    let yn = e.cmp(D::Ne, y, y);
    let any_nan = e.or(xn, yn);
    let nan = e.add(x, y);
    Ok(e.sel(any_nan, nan, r))
}

/// top_k as a stable descending sort of (x, iota) along the last dimension, then a slice.
fn top_k(
    op: &Op,
    b: &mut Builder,
    ops: Vec<InstrId>,
    new_comp: &mut dyn FnMut(Computation) -> R<CompId>,
) -> R<Vec<InstrId>> {
    let pos = op.pos;
    let [x] = ops[..] else {
        return err(pos, "top_k takes one operand");
    };
    let k = match op.attr("k") {
        Some(Attr::Int(k)) => i64::try_from(*k).map_err(|_| (pos, "bad k".to_string()))?,
        _ => return err(pos, "top_k needs `k`"),
    };
    let (dims, t) = b.array(x, pos)?;
    let Some(&n) = dims.last() else {
        return err(pos, "top_k of a scalar");
    };
    if k < 0 || k > n {
        return err(pos, format!("top_k: k = {k} out of range"));
    }
    let it = match op.result_types.get(1) {
        Some(Type::Tensor(_, e)) => *e,
        _ => ElementType::S32,
    };
    let last = dims.len() as i64 - 1;
    let iota = b.push(
        Opcode::Iota,
        Shape::array(it, dims.clone()),
        vec![],
        Attrs {
            iota_dimension: Some(last),
            ..Attrs::default()
        },
    );
    // comparator: lhs > rhs in total order (NaN first, as XLA's TopK)
    let mut c = Builder::new();
    let params: Vec<InstrId> = [t, t, it, it]
        .iter()
        .enumerate()
        .map(|(k, &ty)| {
            c.push(
                Opcode::Parameter,
                Shape::scalar(ty),
                vec![],
                Attrs {
                    parameter_number: Some(k as i64),
                    ..Attrs::default()
                },
            )
        })
        .collect();
    let ty = if t.is_float() {
        ComparisonType::TotalOrder
    } else if t.is_signed_int() {
        ComparisonType::Signed
    } else {
        ComparisonType::Unsigned
    };
    let root = c.push(
        Opcode::Compare,
        Shape::scalar(ElementType::Pred),
        vec![params[0], params[1]],
        Attrs {
            direction: Some(ComparisonDirection::Gt),
            comparison_type: Some(ty),
            ..Attrs::default()
        },
    );
    let cmp = new_comp(c.finish("top_k_gt", root))?;
    let shapes = vec![
        Shape::array(t, dims.clone()),
        Shape::array(it, dims.clone()),
    ];
    let sorted = emit(
        b,
        Opcode::Sort,
        shapes,
        vec![x, iota],
        Attrs {
            dimensions: Some(vec![last]),
            is_stable: true,
            to_apply: Some(cmp),
            ..Attrs::default()
        },
    );
    let mut out_dims = dims.clone();
    out_dims[last as usize] = k;
    let slice: Vec<SliceDim> = dims
        .iter()
        .enumerate()
        .map(|(d, &size)| SliceDim {
            start: 0,
            limit: if d as i64 == last { k } else { size },
            stride: 1,
        })
        .collect();
    let mut res = Vec::new();
    for (s, ty) in sorted.into_iter().zip([t, it]) {
        res.push(b.push(
            Opcode::Slice,
            Shape::array(ty, out_dims.clone()),
            vec![s],
            Attrs {
                slice: Some(slice.clone()),
                ..Attrs::default()
            },
        ));
    }
    Ok(res)
}
