//! Elementwise kernels: unary and binary arithmetic, compare, select, clamp.
//!
//! Floats are computed in f64 from the exact operand values and rounded once
//! into the output dtype. Integers are computed in i128 and wrapped to the
//! output width.

use super::data::{
    bits, f32_slice, f64s, from_bits, from_bools, from_f32s, from_f64s, from_i128s, i128s,
};
use super::{math, OpError};
use crate::hlo::{ArrayShape, Attrs, ComparisonDirection, ComparisonType, ElementType, Opcode};
use crate::literal::Literal;

fn unsupported_for(op: Opcode, t: ElementType) -> OpError {
    if t.is_complex() {
        OpError::Unsupported(format!("{op} on complex element type {t}"))
    } else {
        OpError::Invalid(format!("{op} is not defined on {t}"))
    }
}

/// Sign-extends the low `w` bits of `v`.
fn sext(v: i128, w: u32) -> i128 {
    let s = 128 - w;
    (v << s) >> s
}

/// The low `w` bits of `v`, as a non-negative number.
fn zext(v: i128, w: u32) -> i128 {
    v & ((1i128 << w) - 1)
}

/// A unary elementwise op.
pub(crate) fn unary(op: Opcode, x: &Literal, out: &ArrayShape) -> Result<Literal, OpError> {
    let t = x.dtype();
    if t.is_float() {
        if op == Opcode::IsFinite {
            return from_bools(out, f64s(x).into_iter().map(f64::is_finite).collect());
        }
        if math::unary(op, 0.0).is_none() {
            return Err(unsupported_for(op, t));
        }
        let ys: Vec<f64> = f64s(x)
            .into_iter()
            .map(|v| math::unary(op, v).unwrap_or(f64::NAN))
            .collect();
        return from_f64s(out, &ys);
    }
    if t.is_pred() {
        return match op {
            Opcode::Not => from_bools(out, i128s(x).into_iter().map(|v| v == 0).collect()),
            _ => Err(unsupported_for(op, t)),
        };
    }
    if !t.is_integer() {
        return Err(unsupported_for(op, t));
    }
    let w = t.bit_width();
    let signed = t.is_signed_int();
    let f = int_unary(op).ok_or_else(|| unsupported_for(op, t))?;
    let ys: Vec<i128> = i128s(x).into_iter().map(|v| f(v, w, signed)).collect();
    from_i128s(out, &ys)
}

/// Integer unary semantics (wrapping is done when the result is stored).
pub(crate) fn int_unary(op: Opcode) -> Option<fn(i128, u32, bool) -> i128> {
    Some(match op {
        Opcode::Abs => |v, _, _| v.abs(),
        Opcode::Negate => |v, _, _| -v,
        Opcode::Sign => |v, _, _| v.signum(),
        Opcode::Not => |v, _, _| !v,
        Opcode::Popcnt => |v, w, _| zext(v, w).count_ones() as i128,
        Opcode::CountLeadingZeros => |v, w, _| (w - (128 - zext(v, w).leading_zeros())) as i128,
        _ => return None,
    })
}

/// The element count of the result and an index function that broadcasts scalars.
fn pair_len(a: usize, b: usize) -> Result<usize, OpError> {
    if a == b || b == 1 {
        Ok(a)
    } else if a == 1 {
        Ok(b)
    } else {
        Err(OpError::Invalid(format!(
            "operands have {a} and {b} elements"
        )))
    }
}

fn at<T: Copy>(v: &[T], i: usize) -> T {
    if v.len() == 1 {
        v[0]
    } else {
        v[i]
    }
}

/// A binary elementwise op.
pub(crate) fn binary(
    op: Opcode,
    a: &Literal,
    b: &Literal,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let t = a.dtype();
    if t != b.dtype() {
        return Err(OpError::Invalid(format!("{op} of {t} and {}", b.dtype())));
    }
    let n = pair_len(a.element_count(), b.element_count())?;
    if t.is_float() {
        let f = math::binary(op).ok_or_else(|| unsupported_for(op, t))?;
        if let (Some(xs), Some(ys)) = (f32_slice(a), f32_slice(b)) {
            if xs.len() == ys.len() && out.dtype == ElementType::F32 {
                // f64 then one rounding is exact for + - * / of f32 operands
                let z: Vec<f32> = xs
                    .iter()
                    .zip(ys)
                    .map(|(&p, &q)| f(p as f64, q as f64) as f32)
                    .collect();
                return from_f32s(out, z);
            }
        }
        let (x, y) = (f64s(a), f64s(b));
        let z: Vec<f64> = if x.len() == n && y.len() == n {
            x.iter().zip(&y).map(|(&p, &q)| f(p, q)).collect()
        } else {
            (0..n).map(|i| f(at(&x, i), at(&y, i))).collect()
        };
        return from_f64s(out, &z);
    }
    if !(t.is_integer() || t.is_pred()) {
        return Err(unsupported_for(op, t));
    }
    let w = t.bit_width();
    let f: fn(i128, i128, u32, bool) -> i128 = if t.is_pred() {
        match op {
            Opcode::And | Opcode::Minimum | Opcode::Multiply => |p, q, _, _| p & q,
            Opcode::Or | Opcode::Maximum | Opcode::Add => |p, q, _, _| p | q,
            Opcode::Xor | Opcode::Subtract => |p, q, _, _| p ^ q,
            _ => return Err(unsupported_for(op, t)),
        }
    } else {
        int_binary(op).ok_or_else(|| unsupported_for(op, t))?
    };
    let signed = t.is_signed_int();
    let (x, y) = (i128s(a), i128s(b));
    let z: Vec<i128> = (0..n).map(|i| f(at(&x, i), at(&y, i), w, signed)).collect();
    from_i128s(out, &z)
}

pub(crate) type IntOp = fn(i128, i128, u32, bool) -> i128;

/// Integer semantics (per XLA): x/0 = -1 (all bits set), x%0 = x,
/// INT_MIN/-1 = INT_MIN (by wrapping), INT_MIN%-1 = 0, remainder has the
/// dividend's sign; shift amounts are unsigned and a shift by >= the width
/// gives 0 (left, logical right) or the sign fill (arithmetic right).
pub(crate) fn int_binary(op: Opcode) -> Option<IntOp> {
    Some(match op {
        Opcode::Add => |a, b, _, _| a + b,
        Opcode::Subtract => |a, b, _, _| a - b,
        Opcode::Multiply => |a, b, _, _| a.wrapping_mul(b),
        Opcode::Divide => |a, b, _, _| if b == 0 { -1 } else { a / b },
        Opcode::Remainder => |a, b, _, _| if b == 0 { a } else { a % b },
        Opcode::Maximum => |a, b, _, _| a.max(b),
        Opcode::Minimum => |a, b, _, _| a.min(b),
        Opcode::And => |a, b, _, _| a & b,
        Opcode::Or => |a, b, _, _| a | b,
        Opcode::Xor => |a, b, _, _| a ^ b,
        Opcode::Power => int_pow,
        Opcode::ShiftLeft => |a, b, w, _| {
            let s = zext(b, w);
            if s >= w as i128 {
                0
            } else {
                zext(a, w) << s
            }
        },
        Opcode::ShiftRightLogical => |a, b, w, _| {
            let s = zext(b, w);
            if s >= w as i128 {
                0
            } else {
                zext(a, w) >> s
            }
        },
        Opcode::ShiftRightArithmetic => |a, b, w, _| {
            let s = zext(b, w).min(w as i128 - 1);
            sext(a, w) >> s
        },
        _ => return None,
    })
}

/// Integer power by squaring, wrapping. A negative exponent (signed types
/// only) gives the integer part of the exact power: 1 for a base of 1, -1 or
/// 1 by the exponent's parity for a base of -1, and 0 for any other base
/// (MHLO's lowering since "Handle negative exponents for lowering of
/// hlo.pow", TensorFlow commit 71c1ae43e25; what XLA CPU 0.115 and 0.81
/// compute: `power(s8 -1, -128)` = 1, `power(s8 -1, -3)` = -1).
fn int_pow(a: i128, b: i128, w: u32, signed: bool) -> i128 {
    let b = if signed { sext(b, w) } else { zext(b, w) };
    if b < 0 {
        return match sext(a, w) {
            1 => 1,
            -1 if b & 1 == 1 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    let mut result: i128 = 1;
    let mut base = a;
    let mut e = b;
    while e > 0 {
        if e & 1 == 1 {
            result = zext(result.wrapping_mul(base), 64);
        }
        base = zext(base.wrapping_mul(base), 64);
        e >>= 1;
    }
    result
}

/// The total-order key of a float bit pattern of width `w`:
/// -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
pub(crate) fn total_order_key(bits: u64, w: u32) -> i128 {
    let sign = 1u64 << (w - 1);
    let mag = (bits & (sign - 1)) as i128;
    if bits & sign != 0 {
        -mag - 1
    } else {
        mag
    }
}

pub(crate) fn direction_holds(d: ComparisonDirection, o: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    use ComparisonDirection as D;
    match (d, o) {
        (D::Ne, None) => true,
        (_, None) => false,
        (D::Eq, Some(o)) => o == Equal,
        (D::Ne, Some(o)) => o != Equal,
        (D::Lt, Some(o)) => o == Less,
        (D::Le, Some(o)) => o != Greater,
        (D::Gt, Some(o)) => o == Greater,
        (D::Ge, Some(o)) => o != Less,
    }
}

/// compare with `direction` and `type` (FLOAT: IEEE, NaN unordered; TOTALORDER;
/// SIGNED/UNSIGNED: integer values).
pub(crate) fn compare(
    a: &Literal,
    b: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let dir = attrs
        .direction
        .ok_or_else(|| OpError::Invalid("compare without direction".into()))?;
    let t = a.dtype();
    if t != b.dtype() {
        return Err(OpError::Invalid(format!(
            "compare of {t} and {}",
            b.dtype()
        )));
    }
    let n = pair_len(a.element_count(), b.element_count())?;
    let r: Vec<bool> = if t.is_float() {
        if attrs.comparison_type == Some(ComparisonType::TotalOrder) {
            let w = t.bit_width();
            let (x, y) = (bits(a), bits(b));
            (0..n)
                .map(|i| {
                    let o = total_order_key(at(&x, i), w).cmp(&total_order_key(at(&y, i), w));
                    direction_holds(dir, Some(o))
                })
                .collect()
        } else {
            let (x, y) = (f64s(a), f64s(b));
            (0..n)
                .map(|i| direction_holds(dir, at(&x, i).partial_cmp(&at(&y, i))))
                .collect()
        }
    } else if t.is_integer() || t.is_pred() {
        let (x, y) = (i128s(a), i128s(b));
        (0..n)
            .map(|i| direction_holds(dir, Some(at(&x, i).cmp(&at(&y, i)))))
            .collect()
    } else {
        return Err(unsupported_for(Opcode::Compare, t));
    };
    from_bools(out, r)
}

/// select(pred, on_true, on_false); pred may be a scalar.
pub(crate) fn select(
    p: &Literal,
    t: &Literal,
    f: &Literal,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    if !p.dtype().is_pred() {
        return Err(OpError::Invalid(format!(
            "select predicate is {}",
            p.dtype()
        )));
    }
    if t.dtype() != out.dtype || f.dtype() != out.dtype {
        return Err(OpError::Invalid(format!(
            "select of {} and {} cannot give {out}",
            t.dtype(),
            f.dtype()
        )));
    }
    let n = pair_len(
        pair_len(p.element_count(), t.element_count())?,
        f.element_count(),
    )?;
    let (pv, tv, fv) = (i128s(p), bits(t), bits(f));
    let z: Vec<u64> = (0..n)
        .map(|i| {
            if at(&pv, i) != 0 {
                at(&tv, i)
            } else {
                at(&fv, i)
            }
        })
        .collect();
    from_bits(out, &z)
}

/// clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi may be scalars.
pub(crate) fn clamp(
    lo: &Literal,
    x: &Literal,
    hi: &Literal,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let t = x.dtype();
    if lo.dtype() != t || hi.dtype() != t || out.dtype != t {
        return Err(OpError::Invalid("clamp operands differ in type".into()));
    }
    let n = pair_len(
        pair_len(x.element_count(), lo.element_count())?,
        hi.element_count(),
    )?;
    if t.is_float() {
        let (l, v, h) = (f64s(lo), f64s(x), f64s(hi));
        let z: Vec<f64> = (0..n)
            .map(|i| math::min(math::max(at(&v, i), at(&l, i)), at(&h, i)))
            .collect();
        from_f64s(out, &z)
    } else if t.is_integer() || t.is_pred() {
        let (l, v, h) = (i128s(lo), i128s(x), i128s(hi));
        let z: Vec<i128> = (0..n)
            .map(|i| at(&v, i).max(at(&l, i)).min(at(&h, i)))
            .collect();
        from_i128s(out, &z)
    } else {
        Err(unsupported_for(Opcode::Clamp, t))
    }
}
