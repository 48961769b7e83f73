//! Elementwise ops: one dtype dispatch and one opcode match per op, then a
//! tight typed loop. Narrow floats compute in f32 and round after each op.

use super::elem::{
    dispatch, dispatch_float, dispatch_int, err, make, same_shape, slice_of, with_float_type,
    with_int_type, FloatElem, IntElem, Res,
};
use super::math::Compute;
use crate::backend::BackendError;
use crate::hlo::{ComparisonDirection, ComparisonType, ElementType, Opcode};
use crate::literal::{round_to_bits, ArrayData, Literal};

fn map1<T: Copy, U>(a: &[T], f: impl Fn(T) -> U) -> Vec<U> {
    a.iter().map(|&x| f(x)).collect()
}

fn map2<T: Copy, U>(a: &[T], b: &[T], f: impl Fn(T, T) -> U) -> Vec<U> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// NaN-propagating maximum with -0 < +0 (LLVM `maximum`).
pub(crate) fn fmax<C: Compute>(a: C, b: C) -> C {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a > b {
        a
    } else if b > a || a.is_sign_negative() {
        b
    } else {
        a
    }
}

/// NaN-propagating minimum with -0 < +0 (LLVM `minimum`).
pub(crate) fn fmin<C: Compute>(a: C, b: C) -> C {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

fn fsign<C: Compute>(x: C) -> C {
    if x.is_nan() || x == C::ZERO {
        x
    } else if x > C::ZERO {
        C::ONE
    } else {
        -C::ONE
    }
}

fn float_unary<T: FloatElem>(op: Opcode, a: &[T]) -> Res<Vec<T>> {
    macro_rules! m {
        (|$x:ident| $e:expr) => {
            map1(a, |v: T| {
                let $x = v.up();
                T::down($e)
            })
        };
    }
    let one = <<T as FloatElem>::C as Compute>::ONE;
    Ok(match op {
        Opcode::Abs => m!(|x| x.abs()),
        Opcode::Negate => m!(|x| -x),
        Opcode::Sign => m!(|x| fsign(x)),
        Opcode::Ceil => m!(|x| x.ceil()),
        Opcode::Floor => m!(|x| x.floor()),
        Opcode::RoundNearestAfz => m!(|x| x.round_afz()),
        Opcode::RoundNearestEven => m!(|x| x.round_even()),
        Opcode::Exponential => m!(|x| x.exp()),
        Opcode::ExponentialMinusOne => m!(|x| x.exp_m1()),
        Opcode::Log => m!(|x| x.ln()),
        Opcode::LogPlusOne => m!(|x| x.ln_1p()),
        Opcode::Logistic => m!(|x| one / (one + (-x).exp())),
        Opcode::Sine => m!(|x| x.sin()),
        Opcode::Cosine => m!(|x| x.cos()),
        Opcode::Tan => m!(|x| x.tan()),
        Opcode::Tanh => m!(|x| x.tanh()),
        Opcode::Sqrt => m!(|x| x.sqrt()),
        Opcode::Rsqrt => m!(|x| one / x.sqrt()),
        Opcode::Cbrt => m!(|x| x.cbrt()),
        Opcode::Erf => m!(|x| x.erf()),
        _ => {
            return Err(BackendError::unsupported(format!(
                "{op} on floating-point operands"
            )))
        }
    })
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sext(v: i64, bits: u32) -> i64 {
    if bits >= 64 {
        v
    } else {
        (v << (64 - bits)) >> (64 - bits)
    }
}

fn int_unary<T: IntElem>(op: Opcode, a: &[T], bits: u32, signed: bool) -> Res<Vec<T>> {
    macro_rules! m {
        (|$x:ident| $e:expr) => {
            map1(a, |v: T| {
                let $x = v.to_i64();
                T::from_i64($e)
            })
        };
    }
    let mk = mask(bits);
    Ok(match op {
        Opcode::Abs => m!(|x| if signed { x.wrapping_abs() } else { x }),
        Opcode::Negate => m!(|x| x.wrapping_neg()),
        Opcode::Sign => m!(|x| if signed { x.signum() } else { (x != 0) as i64 }),
        Opcode::Not => m!(|x| !x),
        Opcode::Popcnt => m!(|x| ((x as u64) & mk).count_ones() as i64),
        Opcode::CountLeadingZeros => {
            m!(|x| (((x as u64) & mk).leading_zeros() - (64 - bits)) as i64)
        }
        _ => {
            return Err(BackendError::unsupported(format!(
                "{op} on integer operands"
            )))
        }
    })
}

/// XLA's integer power: exponentiation by squaring with wrapping.
/// `base ^ exp` with wrapping multiplication; `exp` is the negative exponent
/// as `Err` (then the integer part of the exact power: 1 for base 1, ±1 by
/// parity for base -1, else 0, as the reference). An unsigned exponent is its
/// zero-extended value: `137 ^ 193` in u8 wraps to 137, not `137 ^ -63`.
fn int_pow(base: i64, exp: Result<u64, i64>) -> i64 {
    let exp = match exp {
        Ok(e) => e,
        Err(_) if base == 1 => return 1,
        Err(e) if base == -1 => return if e & 1 == 1 { -1 } else { 1 },
        Err(_) => return 0,
    };
    let (mut acc, mut b, mut e) = (1i64, base, exp);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    acc
}

fn int_binary<T: IntElem>(op: Opcode, a: &[T], b: &[T], bits: u32, signed: bool) -> Res<Vec<T>> {
    macro_rules! m {
        (|$x:ident, $y:ident| $e:expr) => {
            map2(a, b, |p: T, q: T| {
                let $x = p.to_i64();
                let $y = q.to_i64();
                T::from_i64($e)
            })
        };
    }
    let mk = mask(bits);
    let w = bits as u64;
    Ok(match op {
        Opcode::Add => m!(|x, y| x.wrapping_add(y)),
        Opcode::Subtract => m!(|x, y| x.wrapping_sub(y)),
        Opcode::Multiply => m!(|x, y| x.wrapping_mul(y)),
        Opcode::Divide if signed => m!(|x, y| if y == 0 { -1 } else { x.wrapping_div(y) }),
        Opcode::Divide => {
            m!(|x, y| if y == 0 {
                -1
            } else {
                ((x as u64) / (y as u64)) as i64
            })
        }
        Opcode::Remainder if signed => m!(|x, y| if y == 0 { x } else { x.wrapping_rem(y) }),
        Opcode::Remainder => m!(|x, y| if y == 0 {
            x
        } else {
            ((x as u64) % (y as u64)) as i64
        }),
        Opcode::Maximum if signed => m!(|x, y| x.max(y)),
        Opcode::Maximum => m!(|x, y| (x as u64).max(y as u64) as i64),
        Opcode::Minimum if signed => m!(|x, y| x.min(y)),
        Opcode::Minimum => m!(|x, y| (x as u64).min(y as u64) as i64),
        Opcode::And => m!(|x, y| x & y),
        Opcode::Or => m!(|x, y| x | y),
        Opcode::Xor => m!(|x, y| x ^ y),
        Opcode::Power if signed => m!(|x, y| {
            let e = sext(y, bits);
            int_pow(x, u64::try_from(e).map_err(|_| e))
        }),
        Opcode::Power => m!(|x, y| int_pow(x, Ok((y as u64) & mk))),
        Opcode::ShiftLeft => m!(|x, y| {
            let s = (y as u64) & mk;
            if s >= w {
                0
            } else {
                x.wrapping_shl(s as u32)
            }
        }),
        Opcode::ShiftRightLogical => m!(|x, y| {
            let s = (y as u64) & mk;
            if s >= w {
                0
            } else {
                (((x as u64) & mk) >> s) as i64
            }
        }),
        Opcode::ShiftRightArithmetic => m!(|x, y| {
            let s = (y as u64) & mk;
            let v = sext(x, bits);
            if s >= w {
                if v < 0 {
                    -1
                } else {
                    0
                }
            } else {
                v >> s
            }
        }),
        _ => {
            return Err(BackendError::unsupported(format!(
                "{op} on integer operands"
            )))
        }
    })
}

fn float_binary<T: FloatElem>(op: Opcode, a: &[T], b: &[T]) -> Res<Vec<T>> {
    macro_rules! m {
        (|$x:ident, $y:ident| $e:expr) => {
            map2(a, b, |p: T, q: T| {
                let $x = p.up();
                let $y = q.up();
                T::down($e)
            })
        };
    }
    Ok(match op {
        Opcode::Add => m!(|x, y| x + y),
        Opcode::Subtract => m!(|x, y| x - y),
        Opcode::Multiply => m!(|x, y| x * y),
        Opcode::Divide => m!(|x, y| x / y),
        Opcode::Remainder => m!(|x, y| x % y),
        Opcode::Power => m!(|x, y| x.powf(y)),
        Opcode::Maximum => m!(|x, y| fmax(x, y)),
        Opcode::Minimum => m!(|x, y| fmin(x, y)),
        Opcode::Atan2 => m!(|x, y| x.atan2(y)),
        _ => {
            return Err(BackendError::unsupported(format!(
                "{op} on floating-point operands"
            )))
        }
    })
}

fn pred_binary(op: Opcode, a: &[bool], b: &[bool]) -> Res<Vec<bool>> {
    Ok(match op {
        Opcode::And | Opcode::Multiply | Opcode::Minimum => map2(a, b, |x, y| x & y),
        Opcode::Or | Opcode::Add | Opcode::Maximum => map2(a, b, |x, y| x | y),
        Opcode::Xor => map2(a, b, |x, y| x ^ y),
        _ => return Err(BackendError::unsupported(format!("{op} on pred operands"))),
    })
}

/// An elementwise op of one operand; `out` is the result type.
pub(crate) fn unary(op: Opcode, x: &Literal, out: ElementType) -> Res<Literal> {
    let dims = x.dims().to_vec();
    let dt = x.dtype();
    if dt.is_complex() {
        return super::complex::unary(op, x, out);
    }
    if op == Opcode::IsFinite {
        let v: Vec<bool> = dispatch_float!(x.data(), _a: T => {
            map1(slice_of::<T>(x, "is-finite")?, |v: T| v.up().is_finite())
        }, _ => return err(format!("is-finite needs a floating-point operand, got {dt}")));
        return make(ElementType::Pred, &dims, v);
    }
    if out != dt {
        return err(format!(
            "{op}: result type {out} differs from operand type {dt}"
        ));
    }
    if let ArrayData::Pred(a) = x.data() {
        let s = a
            .as_slice()
            .ok_or_else(|| BackendError::Execute("non-contiguous".into()))?;
        return match op {
            Opcode::Not => make(dt, &dims, map1(s, |v| !v)),
            _ => Err(BackendError::unsupported(format!("{op} on pred operands"))),
        };
    }
    dispatch_float!(x.data(), _a: T => {
        make(dt, &dims, float_unary::<T>(op, slice_of::<T>(x, op.name())?)?)
    }, _ => dispatch_int!(x.data(), _a: T => {
        make(dt, &dims, int_unary::<T>(op, slice_of::<T>(x, op.name())?, dt.bit_width(), dt.is_signed_int())?)
    }, _ => Err(BackendError::unsupported(format!("{op} on {dt}")))))
}

/// An elementwise op of two operands of one type.
pub(crate) fn binary(op: Opcode, x: &Literal, y: &Literal) -> Res<Literal> {
    same_shape(op.name(), x, y)?;
    let dims = x.dims().to_vec();
    let dt = x.dtype();
    if dt.is_complex() {
        return super::complex::binary(op, x, y);
    }
    if let (ArrayData::Pred(a), ArrayData::Pred(b)) = (x.data(), y.data()) {
        let (Some(a), Some(b)) = (a.as_slice(), b.as_slice()) else {
            return err("non-contiguous pred operands");
        };
        return make(dt, &dims, pred_binary(op, a, b)?);
    }
    dispatch_float!(x.data(), _a: T => {
        make(dt, &dims, float_binary::<T>(op, slice_of::<T>(x, op.name())?, slice_of::<T>(y, op.name())?)?)
    }, _ => dispatch_int!(x.data(), _a: T => {
        make(dt, &dims, int_binary::<T>(op, slice_of::<T>(x, op.name())?, slice_of::<T>(y, op.name())?, dt.bit_width(), dt.is_signed_int())?)
    }, _ => Err(BackendError::unsupported(format!("{op} on {dt}")))))
}

/// The total-order key of a float bit pattern of width `bits`:
/// -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
fn total_key(b: u64, bits: u32) -> i64 {
    let sign = (b >> (bits - 1)) & 1 == 1;
    let mag = (b & (mask(bits) >> 1)) as i64;
    if sign {
        -mag - 1
    } else {
        mag
    }
}

/// Compares two scalars of the same float storage type.
pub(crate) fn float_cmp<T: FloatElem>(d: ComparisonDirection, total: bool, a: T, b: T) -> bool {
    if total {
        d.holds(total_key(a.bits(), T::BITS), total_key(b.bits(), T::BITS))
    } else {
        d.holds(a.up(), b.up())
    }
}

/// `compare` with a direction and comparison type.
pub(crate) fn compare(
    x: &Literal,
    y: &Literal,
    d: ComparisonDirection,
    ty: Option<ComparisonType>,
) -> Res<Literal> {
    same_shape("compare", x, y)?;
    if x.dtype().is_complex() {
        return super::complex::compare(x, y, d);
    }
    let dims = x.dims().to_vec();
    let dt = x.dtype();
    let total = ty == Some(ComparisonType::TotalOrder);
    let v: Vec<bool> = if let (ArrayData::Pred(a), ArrayData::Pred(b)) = (x.data(), y.data()) {
        a.iter()
            .zip(b.iter())
            .map(|(&p, &q)| d.holds(p, q))
            .collect()
    } else {
        dispatch_float!(x.data(), _a: T => {
            map2(slice_of::<T>(x, "compare")?, slice_of::<T>(y, "compare")?, |p: T, q: T| float_cmp(d, total, p, q))
        }, _ => dispatch_int!(x.data(), _a: T => {
            let unsigned = ty == Some(ComparisonType::Unsigned) || dt.is_unsigned_int();
            let signed_on_unsigned = ty == Some(ComparisonType::Signed) && dt.is_unsigned_int();
            let bits = dt.bit_width();
            map2(slice_of::<T>(x, "compare")?, slice_of::<T>(y, "compare")?, |p: T, q: T| {
                let (p, q) = (p.to_i64(), q.to_i64());
                if signed_on_unsigned {
                    d.holds(sext(p, bits), sext(q, bits))
                } else if unsigned {
                    d.holds((p as u64) & mask(bits), (q as u64) & mask(bits))
                } else {
                    d.holds(p, q)
                }
            })
        }, _ => return Err(BackendError::unsupported(format!("compare on {dt}"))))
        )
    };
    make(ElementType::Pred, &dims, v)
}

fn broadcast_scalar_idx(len: usize, n: usize, i: usize) -> usize {
    if len == 1 {
        0
    } else {
        i.min(n.saturating_sub(1))
    }
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar.
pub(crate) fn select(p: &Literal, t: &Literal, f: &Literal) -> Res<Literal> {
    same_shape("select", t, f)?;
    let pv: &[bool] = slice_of::<bool>(p, "select predicate")?;
    if pv.len() != 1 && p.dims() != t.dims() {
        return err(format!(
            "select: predicate shape {} does not match {}",
            p.shape(),
            t.shape()
        ));
    }
    let dims = t.dims().to_vec();
    let n = t.element_count();
    dispatch!(t.data(), _a: T => {
        let (a, b) = (slice_of::<T>(t, "select")?, slice_of::<T>(f, "select")?);
        let v: Vec<T> = (0..n).map(|i| if pv[broadcast_scalar_idx(pv.len(), n, i)] { a[i] } else { b[i] }).collect();
        make(t.dtype(), &dims, v)
    })
}

/// `clamp(lo, x, hi)` = min(max(x, lo), hi), NaN-propagating; `lo` and `hi` may be scalars.
pub(crate) fn clamp(lo: &Literal, x: &Literal, hi: &Literal) -> Res<Literal> {
    let dt = x.dtype();
    for (name, b) in [("min", lo), ("max", hi)] {
        if b.dtype() != dt || (b.element_count() != 1 && b.dims() != x.dims()) {
            return err(format!(
                "clamp: {name} operand {} does not match {}",
                b.shape(),
                x.shape()
            ));
        }
    }
    let dims = x.dims().to_vec();
    let n = x.element_count();
    dispatch_float!(x.data(), _a: T => {
        let (l, v, h) = (slice_of::<T>(lo, "clamp")?, slice_of::<T>(x, "clamp")?, slice_of::<T>(hi, "clamp")?);
        let out: Vec<T> = (0..n).map(|i| {
            let lo = l[broadcast_scalar_idx(l.len(), n, i)].up();
            let hi = h[broadcast_scalar_idx(h.len(), n, i)].up();
            T::down(fmin(fmax(v[i].up(), lo), hi))
        }).collect();
        make(dt, &dims, out)
    }, _ => dispatch_int!(x.data(), _a: T => {
        let (l, v, h) = (slice_of::<T>(lo, "clamp")?, slice_of::<T>(x, "clamp")?, slice_of::<T>(hi, "clamp")?);
        let unsigned = dt.is_unsigned_int();
        let out: Vec<T> = (0..n).map(|i| {
            let (lo, val, hi) = (l[broadcast_scalar_idx(l.len(), n, i)].to_i64(), v[i].to_i64(), h[broadcast_scalar_idx(h.len(), n, i)].to_i64());
            T::from_i64(if unsigned {
                (val as u64).max(lo as u64).min(hi as u64) as i64
            } else {
                val.max(lo).min(hi)
            })
        }).collect();
        make(dt, &dims, out)
    }, _ => Err(BackendError::unsupported(format!("clamp on {dt}")))))
}

/// An element read for conversion: exact float, integer, or pred.
#[derive(Clone, Copy)]
enum Scalar {
    F(f64),
    I(i128),
}

fn read_all(x: &Literal) -> Res<Vec<Scalar>> {
    Ok(match x.data() {
        ArrayData::Pred(a) => a.iter().map(|&b| Scalar::I(b as i128)).collect(),
        _ => dispatch_float!(x.data(), a: T => {
            a.iter().map(|&v: &T| Scalar::F(v.up().to_f64())).collect()
        }, _ => dispatch_int!(x.data(), a: T => {
            let unsigned = x.dtype().is_unsigned_int();
            a.iter().map(|&v: &T| {
                let w = v.to_i64();
                Scalar::I(if unsigned { w as u64 as i128 } else { w as i128 })
            }).collect()
        }, _ => return err(format!("convert from {} is not supported", x.dtype())))),
    })
}

fn to_float_value(s: Scalar) -> f64 {
    match s {
        Scalar::F(f) => f,
        Scalar::I(i) => i as f64,
    }
}

/// Float to integer: truncate toward zero, saturate, NaN to 0.
fn to_int_value(s: Scalar, lo: i128, hi: i128) -> i128 {
    match s {
        Scalar::I(i) => i,
        Scalar::F(f) if f.is_nan() => 0,
        Scalar::F(f) => {
            let t = f.trunc();
            if t <= lo as f64 {
                lo
            } else if t >= hi as f64 {
                hi
            } else {
                t as i128
            }
        }
    }
}

fn write_float<T: FloatElem>(vals: &[Scalar], dt: ElementType) -> Vec<T> {
    let fmt = dt.float_format();
    vals.iter()
        .map(|&s| {
            let v = to_float_value(s);
            match (dt, s, fmt) {
                // integers round once, directly (through f64 they could round twice)
                (ElementType::F32, Scalar::I(i), _) => {
                    T::down(<<T as FloatElem>::C as Compute>::from_f64(i as f32 as f64))
                }
                (ElementType::F64 | ElementType::F32, _, _) => {
                    T::down(<<T as FloatElem>::C as Compute>::from_f64(v))
                }
                // Narrow types round once, directly from the exact value.
                (_, _, Some(fmt)) => {
                    let bits = round_to_bits(v, &fmt);
                    let exact = crate::literal::bits_to_f64(bits, &fmt);
                    T::down(<<T as FloatElem>::C as Compute>::from_f64(exact))
                }
                _ => T::default(),
            }
        })
        .collect()
}

/// `convert` to `out`: floats round once to nearest even, float to integer
/// truncates and saturates (NaN to 0), integers wrap, pred is `x != 0`.
pub(crate) fn convert(x: &Literal, out: ElementType) -> Res<Literal> {
    let dims = x.dims().to_vec();
    let src = x.dtype();
    if src.is_complex() || out.is_complex() {
        return super::complex::convert(x, out);
    }
    // The common f32 <-> narrow paths, without going through f64.
    if src.is_float() && out.is_float() && src != ElementType::F64 && out != ElementType::F64 {
        let up: Vec<f32> = dispatch_float!(x.data(), a: T => {
            Ok(a.iter().map(|&v: &T| Compute::to_f64(v.up()) as f32).collect::<Vec<f32>>())
        }, _ => unreachable_float())?;
        return with_float_type!(out, T => {
            make(out, &dims, up.iter().map(|&v| T::down(<<T as FloatElem>::C as Compute>::from_f64(v as f64))).collect::<Vec<T>>())
        }, _ => err("internal error: float dispatch"));
    }
    let vals = read_all(x)?;
    if out == ElementType::Pred {
        let v = vals
            .iter()
            .map(|&s| match s {
                Scalar::F(f) => f != 0.0,
                Scalar::I(i) => i != 0,
            })
            .collect();
        return make(out, &dims, v);
    }
    with_float_type!(out, T => {
        make(out, &dims, write_float::<T>(&vals, out))
    }, _ => with_int_type!(out, T => {
        let (lo, hi) = out.int_range().unwrap_or((0, 0));
        let v: Vec<T> = vals.iter().map(|&s| T::from_i64(to_int_value(s, lo, hi) as i64)).collect();
        make(out, &dims, v)
    }, _ => Err(BackendError::unsupported(format!("convert to {out}")))))
}

fn unreachable_float() -> Res<Vec<f32>> {
    err("internal error: expected a float operand")
}

/// `bitcast-convert`: reinterprets bits; between widths, the wider element
/// maps to (or from) a new minor dimension of narrow ones, least significant first.
pub(crate) fn bitcast_convert(x: &Literal, out: ElementType, out_dims: &[usize]) -> Res<Literal> {
    let (wi, wo) = (x.dtype().bitcast_width(), out.bitcast_width());
    let bits_in = x.to_bits_vec();
    let bits_out: Vec<u64> = if wi == wo {
        bits_in
    } else if wi > wo && wi % wo == 0 {
        let k = (wi / wo) as usize;
        let m = mask(wo);
        bits_in
            .iter()
            .flat_map(|&b| (0..k).map(move |j| (b >> (j as u32 * wo)) & m))
            .collect()
    } else if wo > wi && wo % wi == 0 {
        let k = (wo / wi) as usize;
        bits_in
            .chunks(k)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u64, |acc, (j, &b)| acc | (b << (j as u32 * wi)))
            })
            .collect()
    } else {
        return Err(BackendError::unsupported(format!(
            "bitcast-convert from {} to {out}",
            x.dtype()
        )));
    };
    let shape =
        crate::hlo::ArrayShape::new(out, out_dims.iter().map(|&d| d as i64).collect::<Vec<_>>());
    Literal::from_bits(&shape, &bits_out)
        .map_err(|e| BackendError::Execute(format!("bitcast-convert: {e}")))
}

fn reduce_precision_bits(
    x: u64,
    nexp: u32,
    nmant: u32,
    exponent_bits: u32,
    mantissa_bits: u32,
) -> u64 {
    let nbits = 1 + nexp + nmant;
    let mut v = x;
    if mantissa_bits < nmant {
        let shift = nmant - mantissa_bits;
        let last_bit_mask = 1u64 << shift;
        let base_bias = (last_bit_mask >> 1) - 1;
        let last_bit = (v & last_bit_mask) >> shift;
        let truncation_mask = !(last_bit_mask - 1);
        v = (v.wrapping_add(last_bit + base_bias)) & truncation_mask & mask(nbits);
    }
    if exponent_bits < nexp {
        let sign_mask = 1u64 << (nbits - 1);
        let exp_mask = ((1u64 << nexp) - 1) << nmant;
        let bias = (1u64 << (nexp - 1)) - 1;
        let reduced_bias = (1u64 << (exponent_bits.max(1) - 1)) - 1;
        let max_exp = bias + reduced_bias;
        let min_exp = bias - reduced_bias;
        let e = v & exp_mask;
        let signed_zero = v & sign_mask;
        if e > (max_exp << nmant) {
            v = signed_zero | exp_mask;
        } else if e <= (min_exp << nmant) {
            v = signed_zero;
        }
    }
    v
}

/// `reduce-precision` to `exponent_bits`/`mantissa_bits` (round to nearest
/// even, overflow to infinity, values below the reduced normal range to
/// signed zero, NaN kept while a mantissa bit is left, else +inf).
pub(crate) fn reduce_precision(
    x: &Literal,
    exponent_bits: i64,
    mantissa_bits: i64,
) -> Res<Literal> {
    if !(1..=11).contains(&exponent_bits) || !(0..=52).contains(&mantissa_bits) {
        return err(format!(
            "reduce-precision: bad exponent_bits={exponent_bits} mantissa_bits={mantissa_bits}"
        ));
    }
    let (eb, mb) = (exponent_bits as u32, mantissa_bits as u32);
    let dims = x.dims().to_vec();
    let dt = x.dtype();
    if let ArrayData::F64(a) = x.data() {
        let v: Vec<f64> = a
            .iter()
            .map(|&f| {
                if f.is_nan() && mb > 0 {
                    f
                } else if f.is_nan() {
                    // no mantissa bit is left to mark a NaN: it becomes +inf (as the reference)
                    f64::INFINITY
                } else {
                    f64::from_bits(reduce_precision_bits(f.to_bits(), 11, 52, eb, mb))
                }
            })
            .collect();
        return make(dt, &dims, v);
    }
    dispatch_float!(x.data(), a: T => {
        let v: Vec<T> = a.iter().map(|&f: &T| {
            let u: f32 = f.up().to_f64() as f32;
            let r = if u.is_nan() && mb > 0 { u } else if u.is_nan() { f32::INFINITY } else { f32::from_bits(reduce_precision_bits(u.to_bits() as u64, 8, 23, eb.min(8), mb.min(23)) as u32) };
            T::down(<<T as FloatElem>::C as Compute>::from_f64(r as f64))
        }).collect();
        make(dt, &dims, v)
    }, _ => err(format!("reduce-precision needs a floating-point operand, got {dt}")))
}

/// `iota` along `dim` of `dims`, of type `dt`.
pub(crate) fn iota(dt: ElementType, dims: &[usize], dim: usize) -> Res<Literal> {
    if dim >= dims.len() {
        return err(format!(
            "iota: iota_dimension {dim} out of range for rank {}",
            dims.len()
        ));
    }
    let n: usize = dims.iter().product();
    let inner: usize = dims[dim + 1..].iter().product();
    let len = dims[dim];
    let idx: Vec<usize> = (0..n).map(|i| (i / inner.max(1)) % len.max(1)).collect();
    let shape = crate::hlo::ArrayShape::new(dt, dims.iter().map(|&d| d as i64).collect::<Vec<_>>());
    if dt.is_float() {
        let v: Vec<f64> = idx.iter().map(|&i| i as f64).collect();
        Literal::from_f64s(&shape, &v)
    } else {
        let v: Vec<i128> = idx.iter().map(|&i| i as i128).collect();
        Literal::from_i128s(&shape, &v)
    }
    .map_err(|e| BackendError::Execute(format!("iota: {e}")))
}
