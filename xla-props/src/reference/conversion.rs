//! convert, bitcast-convert, reduce-precision.

use super::data::{bits, f64s, float_format, from_bits, from_f64s, from_i128s, i128s};
use super::OpError;
use crate::hlo::{ArrayShape, Attrs};
use crate::literal::Literal;

/// convert: float -> float rounds once; float -> int truncates toward zero and
/// saturates, NaN -> 0; int -> float rounds once (exactly, even past 2^53);
/// int -> int wraps; anything -> pred is `!= 0` (NaN -> true); pred -> 0/1.
pub(crate) fn convert(x: &Literal, out: &ArrayShape) -> Result<Literal, OpError> {
    let (from, to) = (x.dtype(), out.dtype);
    if from.is_complex() || to.is_complex() {
        return Err(OpError::Unsupported(format!(
            "convert {from} to {to}: complex types"
        )));
    }
    if from.is_float() {
        let v = f64s(x);
        if to.is_float() || to.is_pred() {
            return from_f64s(out, &v);
        }
        let (lo, hi) = to
            .int_range()
            .ok_or_else(|| OpError::Invalid(format!("cannot convert to {to}")))?;
        let ints: Vec<i128> = v
            .into_iter()
            .map(|f| {
                if f.is_nan() {
                    0
                } else if f <= lo as f64 {
                    lo
                } else if f >= hi as f64 {
                    hi
                } else {
                    f.trunc() as i128
                }
            })
            .collect();
        return from_i128s(out, &ints);
    }
    from_i128s(out, &i128s(x))
}

/// bitcast-convert: reinterprets bits. Between widths, the narrower side has
/// one more (minor-most) dimension of size `wide / narrow`, and element 0 of
/// that dimension holds the least significant bits (little-endian, as XLA
/// lays the bytes out).
pub(crate) fn bitcast_convert(x: &Literal, out: &ArrayShape) -> Result<Literal, OpError> {
    let (from, to) = (x.dtype(), out.dtype);
    if from.is_complex() || to.is_complex() {
        return Err(OpError::Unsupported(
            "bitcast-convert of complex types".into(),
        ));
    }
    let (wi, wo) = (from.bitcast_width(), to.bitcast_width());
    let b = bits(x);
    if wi == wo {
        return from_bits(out, &b);
    }
    let mask = |w: u32| if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    if wi > wo {
        let r = (wi / wo) as usize;
        if wi % wo != 0 || out.dims.last().copied() != Some(r as i64) {
            return Err(OpError::Invalid(format!(
                "cannot bitcast-convert {} to {out}",
                x.shape()
            )));
        }
        let z: Vec<u64> = b
            .iter()
            .flat_map(|&v| (0..r).map(move |j| (v >> (j as u32 * wo)) & mask(wo)))
            .collect();
        from_bits(out, &z)
    } else {
        let r = (wo / wi) as usize;
        if wo % wi != 0 || x.dims().last().copied() != Some(r) {
            return Err(OpError::Invalid(format!(
                "cannot bitcast-convert {} to {out}",
                x.shape()
            )));
        }
        let z: Vec<u64> = b
            .chunks(r)
            .map(|c| {
                c.iter().enumerate().fold(0u64, |acc, (j, &v)| {
                    acc | ((v & mask(wi)) << (j as u32 * wi))
                })
            })
            .collect();
        from_bits(out, &z)
    }
}

/// reduce-precision to `exponent_bits`/`mantissa_bits` as XLA's `HloEvaluator`
/// defines it (`HandleReducePrecision` in
/// `xla/hlo/evaluator/hlo_evaluator_typed_visitor.h`): on the bits of an f32
/// or f64 operand; narrower float types (f16, bf16, f8) are evaluated in f32
/// (their visitors are `HloEvaluatorTypedVisitor<half|bfloat16|float8_*, float>`,
/// with `HandleReducePrecision<ElementwiseT>`) and the result converted back.
/// Round the mantissa to nearest even; exponents above the reduced range
/// become ±inf (NaN in a type without infinities, e.g. f8e4m3fn 448 under
/// e4m3, whose largest finite value is 240); exponents at or below the reduced
/// minimum normal's predecessor flush to ±0 (no reduced denormals, so f16
/// subnormals vanish under e5m10); NaN stays NaN unless `mantissa_bits` is 0,
/// where it becomes +inf.
pub(crate) fn reduce_precision(
    x: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let t = x.dtype();
    let fmt = float_format(t)?;
    let (eb, mb) = match (attrs.exponent_bits, attrs.mantissa_bits) {
        (Some(e), Some(m)) if e >= 1 && m >= 0 => (e as u32, m as u32),
        _ => {
            return Err(OpError::Invalid(
                "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0".into(),
            ))
        }
    };
    if fmt.bit_width() == 64 {
        let z: Vec<u64> = bits(x)
            .into_iter()
            .map(|v| reduce_precision_word(v, 11, 52, eb, mb))
            .collect();
        return from_bits(out, &z);
    }
    // f32 on its own bits; narrower types through their (exact) f32 value
    let v: Vec<f64> = f64s(x)
        .into_iter()
        .map(|v| {
            let w = u64::from((v as f32).to_bits());
            f64::from(f32::from_bits(
                reduce_precision_word(w, 8, 23, eb, mb) as u32
            ))
        })
        .collect();
    from_f64s(out, &v)
}

/// One word of `seb` exponent and `smb` mantissa bits reduced to `eb`/`mb`.
fn reduce_precision_word(input: u64, seb: u32, smb: u32, eb: u32, mb: u32) -> u64 {
    let w = 1 + seb + smb;
    let width_mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let exp_mask = ((1u64 << seb) - 1) << smb;
    if input & exp_mask == exp_mask && input & ((1u64 << smb) - 1) != 0 {
        // NaN
        return if mb > 0 { input } else { exp_mask };
    }
    let mut v = input;
    if mb < smb {
        let shift = smb - mb;
        let last_bit = 1u64 << shift;
        let bias = ((v & last_bit) >> shift) + ((last_bit >> 1) - 1);
        v = (v.wrapping_add(bias) & !(last_bit - 1)) & width_mask;
    }
    if eb < seb {
        let sign = v & (1u64 << (w - 1));
        let src_bias = (1u64 << (seb - 1)) - 1;
        let red_bias = (1u64 << (eb - 1)) - 1;
        let e = v & exp_mask;
        if e > (src_bias + red_bias) << smb {
            v = sign | exp_mask;
        } else if e <= (src_bias - red_bias) << smb {
            v = sign;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::bitcast_convert;
    use crate::hlo::{ArrayShape, ElementType};
    use crate::literal::Literal;

    #[test]
    fn pred_bitcasts_as_one_bit_element_zero_lowest() {
        // 0b0110 as four preds, least significant first, and back
        let p = Literal::from_i128s(
            &ArrayShape::new(ElementType::Pred, vec![8]),
            &[0, 1, 1, 0, 0, 0, 0, 1],
        )
        .unwrap();
        let u = bitcast_convert(&p, &ArrayShape::new(ElementType::U8, vec![])).unwrap();
        assert_eq!(u.get_i128(0), 0b1000_0110);
        let back = bitcast_convert(&u, &ArrayShape::new(ElementType::Pred, vec![8])).unwrap();
        assert_eq!(back, p);
    }
}
