//! Bulk typed access to literals (one dtype dispatch per array, not per
//! element), output construction with one rounding, and index arithmetic.

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

use super::OpError;
use crate::hlo::{ArrayShape, ElementType};
use crate::literal::{
    bits_to_f64, check_size, round_to_bits, ArrayData, F8E4M3Fn, Literal, F8E5M2,
};

fn conv<T: Copy, R>(a: &ArrayD<T>, f: impl Fn(T) -> R) -> Vec<R> {
    match a.as_slice() {
        Some(s) => s.iter().map(|&v| f(v)).collect(),
        None => a.iter().map(|&v| f(v)).collect(),
    }
}

/// Every element as f64 (exact for floats, pred and integers up to 2^53).
pub(crate) fn f64s(l: &Literal) -> Vec<f64> {
    match l.data() {
        ArrayData::Pred(a) => conv(a, |v| v as u8 as f64),
        ArrayData::S2(a) | ArrayData::S4(a) | ArrayData::S8(a) => conv(a, |v| v as f64),
        ArrayData::S16(a) => conv(a, |v| v as f64),
        ArrayData::S32(a) => conv(a, |v| v as f64),
        ArrayData::S64(a) => conv(a, |v| v as f64),
        ArrayData::U2(a) | ArrayData::U4(a) | ArrayData::U8(a) => conv(a, |v| v as f64),
        ArrayData::U16(a) => conv(a, |v| v as f64),
        ArrayData::U32(a) => conv(a, |v| v as f64),
        ArrayData::U64(a) => conv(a, |v| v as f64),
        ArrayData::F16(a) => conv(a, |v| v.to_f64()),
        ArrayData::Bf16(a) => conv(a, |v| v.to_f64()),
        ArrayData::F32(a) => conv(a, |v| v as f64),
        ArrayData::F64(a) => conv(a, |v| v),
        ArrayData::F8E4M3Fn(a) => conv(a, |v| v.to_f64()),
        ArrayData::F8E5M2(a) => conv(a, |v| v.to_f64()),
        ArrayData::Minifloat(t, a) => {
            let f = t.float_format();
            conv(a, |v| f.map_or(f64::NAN, |f| bits_to_f64(v as u64, &f)))
        }
        // the real part (complex operands are evaluated by `complex`, never here)
        ArrayData::C64(a) => conv(a, |v| v.re as f64),
        ArrayData::C128(a) => conv(a, |v| v.re),
    }
}

/// Every element as an integer (exact for integers and pred; floats truncate
/// toward zero, saturating, NaN gives 0).
pub(crate) fn i128s(l: &Literal) -> Vec<i128> {
    match l.data() {
        ArrayData::Pred(a) => conv(a, |v| v as i128),
        ArrayData::S2(a) | ArrayData::S4(a) | ArrayData::S8(a) => conv(a, |v| v as i128),
        ArrayData::S16(a) => conv(a, |v| v as i128),
        ArrayData::S32(a) => conv(a, |v| v as i128),
        ArrayData::S64(a) => conv(a, |v| v as i128),
        ArrayData::U2(a) | ArrayData::U4(a) | ArrayData::U8(a) => conv(a, |v| v as i128),
        ArrayData::U16(a) => conv(a, |v| v as i128),
        ArrayData::U32(a) => conv(a, |v| v as i128),
        ArrayData::U64(a) => conv(a, |v| v as i128),
        _ => f64s(l).into_iter().map(|v| v as i128).collect(),
    }
}

/// Every element's bit pattern (low `bit_width` bits).
pub(crate) fn bits(l: &Literal) -> Vec<u64> {
    let n = l.element_count();
    match l.data() {
        ArrayData::F32(a) => a.iter().map(|v| v.to_bits() as u64).collect(),
        ArrayData::F64(a) => a.iter().map(|v| v.to_bits()).collect(),
        ArrayData::F16(a) => a.iter().map(|v| v.to_bits() as u64).collect(),
        ArrayData::Bf16(a) => a.iter().map(|v| v.to_bits() as u64).collect(),
        ArrayData::S32(a) => a.iter().map(|&v| v as u32 as u64).collect(),
        _ => (0..n).map(|i| l.get_bits(i)).collect(),
    }
}

fn udims(shape: &ArrayShape) -> Result<Vec<usize>, OpError> {
    check_size(shape)?;
    Ok(shape.dims.iter().map(|&d| d as usize).collect())
}

fn build<T>(
    shape: &ArrayShape,
    v: Vec<T>,
    wrap: fn(ArrayD<T>) -> ArrayData,
) -> Result<Literal, OpError> {
    let dims = udims(shape)?;
    let a = ArrayD::from_shape_vec(IxDyn(&dims), v)
        .map_err(|e| OpError::Invalid(format!("cannot build {shape}: {e}")))?;
    Ok(Literal::new(wrap(a)).with_layout(shape.layout.clone()))
}

fn check_len(shape: &ArrayShape, n: usize) -> Result<(), OpError> {
    let want = check_size(shape)?;
    if want != n {
        return Err(OpError::Invalid(format!(
            "result shape {shape} has {want} elements but {n} were computed"
        )));
    }
    Ok(())
}

/// Builds a literal of `shape` from exact values, rounding each ONCE to the
/// dtype (nearest even); integer dtypes truncate toward zero and wrap, pred is `!= 0`.
pub(crate) fn from_f64s(shape: &ArrayShape, v: &[f64]) -> Result<Literal, OpError> {
    check_len(shape, v.len())?;
    match shape.dtype {
        ElementType::F64 => build(shape, v.to_vec(), ArrayData::F64),
        ElementType::F32 => build(shape, v.iter().map(|&x| x as f32).collect(), ArrayData::F32),
        ElementType::F16 => {
            let f = float_format(ElementType::F16)?;
            build(
                shape,
                v.iter()
                    .map(|&x| f16::from_bits(round_to_bits(x, &f) as u16))
                    .collect(),
                ArrayData::F16,
            )
        }
        ElementType::Bf16 => {
            let f = float_format(ElementType::Bf16)?;
            build(
                shape,
                v.iter()
                    .map(|&x| bf16::from_bits(round_to_bits(x, &f) as u16))
                    .collect(),
                ArrayData::Bf16,
            )
        }
        ElementType::F8E4M3Fn => build(
            shape,
            v.iter().map(|&x| F8E4M3Fn::from_f64(x)).collect(),
            ArrayData::F8E4M3Fn,
        ),
        ElementType::F8E5M2 => build(
            shape,
            v.iter().map(|&x| F8E5M2::from_f64(x)).collect(),
            ArrayData::F8E5M2,
        ),
        t if t.is_minifloat() => {
            let f = float_format(t)?;
            let bits = v.iter().map(|&x| round_to_bits(x, &f) as u8).collect();
            let dims = udims(shape)?;
            let a = ArrayD::from_shape_vec(IxDyn(&dims), bits)
                .map_err(|e| OpError::Invalid(format!("cannot build {shape}: {e}")))?;
            Ok(Literal::new(ArrayData::Minifloat(t, a)).with_layout(shape.layout.clone()))
        }
        ElementType::Pred => build(
            shape,
            v.iter().map(|&x| x != 0.0).collect(),
            ArrayData::Pred,
        ),
        t if t.is_integer() => {
            let ints: Vec<i128> = v
                .iter()
                .map(|&x| if x.is_nan() { 0 } else { x.trunc() as i128 })
                .collect();
            from_i128s(shape, &ints)
        }
        t => Err(OpError::Unsupported(format!("element type {t}"))),
    }
}

/// Builds a literal of `shape` from integers: integer dtypes wrap to their
/// width, float dtypes round ONCE to nearest even (exactly, even past 2^53), pred is `!= 0`.
pub(crate) fn from_i128s(shape: &ArrayShape, v: &[i128]) -> Result<Literal, OpError> {
    check_len(shape, v.len())?;
    match shape.dtype {
        ElementType::Pred => build(shape, v.iter().map(|&x| x != 0).collect(), ArrayData::Pred),
        ElementType::S2 => build(
            shape,
            v.iter().map(|&x| ((x as i8) << 6) >> 6).collect(),
            ArrayData::S2,
        ),
        ElementType::S4 => build(
            shape,
            v.iter().map(|&x| ((x as i8) << 4) >> 4).collect(),
            ArrayData::S4,
        ),
        ElementType::S8 => build(shape, v.iter().map(|&x| x as i8).collect(), ArrayData::S8),
        ElementType::S16 => build(shape, v.iter().map(|&x| x as i16).collect(), ArrayData::S16),
        ElementType::S32 => build(shape, v.iter().map(|&x| x as i32).collect(), ArrayData::S32),
        ElementType::S64 => build(shape, v.iter().map(|&x| x as i64).collect(), ArrayData::S64),
        ElementType::U2 => build(
            shape,
            v.iter().map(|&x| (x as u8) & 0x3).collect(),
            ArrayData::U2,
        ),
        ElementType::U4 => build(
            shape,
            v.iter().map(|&x| (x as u8) & 0xf).collect(),
            ArrayData::U4,
        ),
        ElementType::U8 => build(shape, v.iter().map(|&x| x as u8).collect(), ArrayData::U8),
        ElementType::U16 => build(shape, v.iter().map(|&x| x as u16).collect(), ArrayData::U16),
        ElementType::U32 => build(shape, v.iter().map(|&x| x as u32).collect(), ArrayData::U32),
        ElementType::U64 => build(shape, v.iter().map(|&x| x as u64).collect(), ArrayData::U64),
        ElementType::F32 => build(shape, v.iter().map(|&x| x as f32).collect(), ArrayData::F32),
        ElementType::F64 => build(shape, v.iter().map(|&x| x as f64).collect(), ArrayData::F64),
        t if t.is_float() => {
            let f: Vec<f64> = v.iter().map(|&x| int_to_f64_odd(x)).collect();
            from_f64s(shape, &f)
        }
        t => Err(OpError::Unsupported(format!("element type {t}"))),
    }
}

/// `x` as f64, exact when it fits in 53 bits, otherwise rounded to odd: the
/// truncation with its last bit forced to 1 when inexact. Rounding that value
/// once more into any format of at most 51 mantissa bits gives the correctly
/// rounded result of `x` (round-to-odd is innocuous with two spare bits).
pub(crate) fn int_to_f64_odd(x: i128) -> f64 {
    let m = x.unsigned_abs();
    let width = 128 - m.leading_zeros() as i32;
    let v = if width <= 53 {
        m as f64
    } else {
        let s = width - 53;
        let mut q = m >> s;
        if m & ((1u128 << s) - 1) != 0 {
            q |= 1;
        }
        q as f64 * 2f64.powi(s)
    };
    if x < 0 {
        -v
    } else {
        v
    }
}

/// Builds a literal of `shape` from bit patterns.
pub(crate) fn from_bits(shape: &ArrayShape, v: &[u64]) -> Result<Literal, OpError> {
    check_len(shape, v.len())?;
    match shape.dtype {
        ElementType::F32 => build(
            shape,
            v.iter().map(|&b| f32::from_bits(b as u32)).collect(),
            ArrayData::F32,
        ),
        ElementType::F64 => build(
            shape,
            v.iter().map(|&b| f64::from_bits(b)).collect(),
            ArrayData::F64,
        ),
        ElementType::F16 => build(
            shape,
            v.iter().map(|&b| f16::from_bits(b as u16)).collect(),
            ArrayData::F16,
        ),
        ElementType::Bf16 => build(
            shape,
            v.iter().map(|&b| bf16::from_bits(b as u16)).collect(),
            ArrayData::Bf16,
        ),
        // a c64 element is one 64-bit word (re low, im high); c128 needs 128 bits
        ElementType::C128 => Err(OpError::Unsupported(
            "c128 elements on a 64-bit path".into(),
        )),
        _ => {
            let mut l = Literal::zeros(shape)?;
            for (i, &b) in v.iter().enumerate() {
                l.set_bits(i, b);
            }
            Ok(l)
        }
    }
}

/// The contiguous data of an f32 literal.
pub(crate) fn f32_slice(l: &Literal) -> Option<&[f32]> {
    match l.data() {
        ArrayData::F32(a) => a.as_slice(),
        _ => None,
    }
}

/// Builds an f32 literal from already rounded values.
pub(crate) fn from_f32s(shape: &ArrayShape, v: Vec<f32>) -> Result<Literal, OpError> {
    check_len(shape, v.len())?;
    build(shape, v, ArrayData::F32)
}

/// Builds a pred literal.
pub(crate) fn from_bools(shape: &ArrayShape, v: Vec<bool>) -> Result<Literal, OpError> {
    check_len(shape, v.len())?;
    build(shape, v, ArrayData::Pred)
}

/// The float format of a float dtype.
pub(crate) fn float_format(t: ElementType) -> Result<crate::hlo::FloatFormat, OpError> {
    t.float_format()
        .ok_or_else(|| OpError::Invalid(format!("{t} is not a float type")))
}

/// The exact value of a bit pattern of float type `t`.
pub(crate) fn bits_value(b: u64, t: ElementType) -> f64 {
    match t {
        ElementType::F32 => return f32::from_bits(b as u32) as f64,
        ElementType::F64 => return f64::from_bits(b),
        ElementType::F16 => return f16::from_bits(b as u16).to_f64(),
        ElementType::Bf16 => return bf16::from_bits(b as u16).to_f64(),
        _ => {}
    }
    match t.float_format() {
        Some(f) => bits_to_f64(b, &f),
        None => b as f64,
    }
}

/// Dims as usize (negative dims become an error).
pub(crate) fn dims_of(shape: &ArrayShape) -> Result<Vec<usize>, OpError> {
    shape
        .dims
        .iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| OpError::Invalid(format!("negative dimension in {shape}")))
        })
        .collect()
}

/// Each of `v` as an index below `bound`; the first that is not gives
/// `out_of_range(it)`.
pub(crate) fn indices_below(
    v: &[i64],
    bound: usize,
    out_of_range: impl Fn(i64) -> OpError,
) -> Result<Vec<usize>, OpError> {
    v.iter()
        .map(|&d| {
            usize::try_from(d)
                .ok()
                .filter(|&d| d < bound)
                .ok_or_else(|| out_of_range(d))
        })
        .collect()
}

/// Row-major strides.
pub(crate) fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Advances a row-major multi-index; false when it wrapped around (done).
pub(crate) fn next_index(idx: &mut [usize], dims: &[usize]) -> bool {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < dims[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// Builds a literal of `shape` whose element at every output index is taken
/// from `src` at the flat index `f(index)` returns, or `fill` bits when it returns None.
pub(crate) fn take(
    src: &Literal,
    shape: &ArrayShape,
    fill: u64,
    mut f: impl FnMut(&[usize]) -> Option<usize>,
) -> Result<Literal, OpError> {
    if src.dtype() != shape.dtype {
        return Err(OpError::Invalid(format!(
            "a {} operand cannot give a {shape}",
            src.dtype()
        )));
    }
    let dims = dims_of(shape)?;
    let n = check_size(shape)?;
    let sb = bits(src);
    let mut out = Vec::with_capacity(n);
    if n > 0 {
        let mut idx = vec![0usize; dims.len()];
        loop {
            out.push(match f(&idx) {
                Some(k) => *sb
                    .get(k)
                    .ok_or_else(|| OpError::Invalid("index out of range".into()))?,
                None => fill,
            });
            if !next_index(&mut idx, &dims) {
                break;
            }
        }
    }
    from_bits(shape, &out)
}
