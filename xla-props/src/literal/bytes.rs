//! Raw little-endian bytes: the element codec shared by `.bin` and `.npy` I/O.
//!
//! Every element takes [`ElementType::byte_size`] bytes: pred is one byte (0 or
//! 1), and s4/u4 take one byte each, holding the value in the low nibble with
//! the high nibble zero (the unpacked form of XLA and ml_dtypes `int4`/`uint4`).

use super::storage::{check_size, Literal, LiteralError};
use crate::hlo::{ArrayShape, ElementType};

/// Decodes one element's bytes (`chunk.len()` is the element's byte size) into
/// its bit pattern, checking that pred/s4/u4 bytes hold a legal value.
/// `index` (row-major in the source) only feeds the error message.
pub(crate) fn decode_element(
    dtype: ElementType,
    chunk: &[u8],
    big_endian: bool,
    index: usize,
) -> Result<u64, LiteralError> {
    let mut bits = 0u64;
    if big_endian {
        for &b in chunk {
            bits = (bits << 8) | b as u64;
        }
    } else {
        for &b in chunk.iter().rev() {
            bits = (bits << 8) | b as u64;
        }
    }
    let bad = |what: &str| {
        Err(LiteralError::BadElement(format!(
            "byte {bits:#04x} at element {index} is not {what}"
        )))
    };
    match dtype {
        ElementType::Pred if bits > 1 => bad("a pred (0 or 1)"),
        // Accept the unpacked nibble form (0x0f for -1) and the sign-extended
        // byte (0xff for -1); both decode to the same nibble.
        ElementType::S4 if bits > 0x0f && bits < 0xf8 => bad("an s4 value"),
        ElementType::S4 => Ok(bits & 0x0f),
        ElementType::U4 if bits > 0x0f => bad("a u4 value (0..=15)"),
        ElementType::S2 if bits > 0x03 && bits < 0xfe => bad("an s2 value"),
        ElementType::S2 => Ok(bits & 0x03),
        ElementType::U2 if bits > 0x03 => bad("a u2 value (0..=3)"),
        // f6 and f4 patterns in the low bits of their byte
        t if t.bit_width() < 8 && bits >> t.bit_width() != 0 => bad(&format!("a {t} pattern")),
        _ => Ok(bits),
    }
}

/// Appends one element's bit pattern as little-endian bytes.
pub(crate) fn encode_element_le(dtype: ElementType, bits: u64, out: &mut Vec<u8>) {
    let n = dtype.byte_size();
    out.extend_from_slice(&bits.to_le_bytes()[..n]);
}

impl Literal {
    /// The elements as raw little-endian bytes in logical row-major order
    /// (s4/u4: one byte per element, value in the low nibble; pred: 0 or 1).
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::S16, vec![2]);
    /// let lit = Literal::from_i128s(&shape, &[1, -2]).unwrap();
    /// assert_eq!(lit.to_le_bytes(), vec![0x01, 0x00, 0xfe, 0xff]);
    /// let back = Literal::from_le_bytes(&shape, &lit.to_le_bytes()).unwrap();
    /// assert_eq!(back, lit);
    /// ```
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let dtype = self.dtype();
        let mut out = Vec::with_capacity(self.element_count() * dtype.byte_size());
        for i in 0..self.element_count() {
            encode_element_le(dtype, self.get_bits(i), &mut out);
        }
        out
    }

    /// Builds a literal of `shape` from raw little-endian bytes in logical
    /// row-major order (the layout in `shape`, if any, is kept as metadata).
    ///
    /// Errors: the byte count differs from what the shape needs, a pred byte is
    /// not 0/1, an s4/u4 byte holds no 4-bit value, or the shape is over the size budget.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::F32, vec![2]);
    /// let lit = Literal::from_le_bytes(&shape, &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).unwrap();
    /// assert_eq!(lit.to_f64_vec(), vec![1.0, -2.0]);
    /// let err = Literal::from_le_bytes(&shape, &[0; 7]).unwrap_err();
    /// assert_eq!(err.to_string(), "shape f32[2] needs 8 bytes but 7 bytes were given");
    /// ```
    pub fn from_le_bytes(shape: &ArrayShape, bytes: &[u8]) -> Result<Literal, LiteralError> {
        let count = check_size(shape)?;
        let size = shape.dtype.byte_size();
        let expected = count as u64 * size as u64;
        if bytes.len() as u64 != expected {
            return Err(LiteralError::ByteSizeMismatch {
                shape: shape.to_string(),
                expected,
                actual: bytes.len() as u64,
            });
        }
        let mut lit = Literal::zeros(shape)?;
        for (i, chunk) in bytes.chunks_exact(size).enumerate() {
            let bits = decode_element(shape.dtype, chunk, false, i)?;
            lit.set_bits(i, bits);
        }
        Ok(lit)
    }

    /// A literal from little-endian elements of the dtype's byte size,
    /// each element's bits taken as they are (unlike [`Literal::from_le_bytes`],
    /// which checks pred and 4-bit values): how a backend's output buffer reads.
    pub fn from_le_bits(shape: &ArrayShape, bytes: &[u8]) -> Result<Literal, LiteralError> {
        let width = shape.dtype.byte_size();
        let bits: Vec<u64> = bytes
            .chunks_exact(width)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        Literal::from_bits(shape, &bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(t: ElementType, dims: &[i64]) -> ArrayShape {
        ArrayShape::new(t, dims.to_vec())
    }

    #[test]
    fn every_dtype_round_trips_through_raw_bytes() {
        for &t in ElementType::REAL {
            let s = shape(t, &[2, 3]);
            // bit patterns 0..6 scaled to touch high bytes, masked to the width
            let width = t.bit_width().min(64);
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1 << width) - 1
            };
            let bits: Vec<u64> = (0..6u64)
                .map(|i| {
                    if t == ElementType::Pred {
                        i & 1
                    } else {
                        (i.wrapping_mul(0x0123_4567_89ab_cdef)) & mask
                    }
                })
                .collect();
            let lit = Literal::from_bits(&s, &bits).unwrap();
            let bytes = lit.to_le_bytes();
            assert_eq!(bytes.len(), 6 * t.byte_size(), "{t}");
            let back = Literal::from_le_bytes(&s, &bytes).unwrap();
            assert_eq!(back.to_bits_vec(), bits, "{t}");
        }
    }

    #[test]
    fn float_specials_in_raw_bytes() {
        let s = shape(ElementType::F16, &[6]);
        // -0, +inf, -inf, smallest subnormal, +qNaN, -qNaN
        let bytes = [
            0x00, 0x80, 0x00, 0x7c, 0x00, 0xfc, 0x01, 0x00, 0x00, 0x7e, 0x00, 0xfe,
        ];
        let lit = Literal::from_le_bytes(&s, &bytes).unwrap();
        let v = lit.to_f64_vec();
        assert!(v[0] == 0.0 && v[0].is_sign_negative());
        assert_eq!(v[1], f64::INFINITY);
        assert_eq!(v[2], f64::NEG_INFINITY);
        assert_eq!(v[3], 2f64.powi(-24));
        assert!(v[4].is_nan() && v[4].is_sign_positive());
        assert!(v[5].is_nan() && v[5].is_sign_negative());
        assert_eq!(lit.to_le_bytes(), bytes);
    }

    #[test]
    fn sub_byte_and_pred_bytes() {
        let s4 = shape(ElementType::S4, &[4]);
        let lit = Literal::from_i128s(&s4, &[-1, -8, 7, 0]).unwrap();
        assert_eq!(lit.to_le_bytes(), vec![0x0f, 0x08, 0x07, 0x00]);
        // the sign-extended form reads the same
        let ext = Literal::from_le_bytes(&s4, &[0xff, 0xf8, 0x07, 0x00]).unwrap();
        assert_eq!(ext.to_i128_vec(), vec![-1, -8, 7, 0]);
        let err = Literal::from_le_bytes(&s4, &[0x10, 0, 0, 0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad element data: byte 0x10 at element 0 is not an s4 value"
        );
        let u4 = shape(ElementType::U4, &[2]);
        assert_eq!(
            Literal::from_le_bytes(&u4, &[15, 3]).unwrap().to_i128_vec(),
            vec![15, 3]
        );
        assert!(Literal::from_le_bytes(&u4, &[16, 3]).is_err());
        let pred = shape(ElementType::Pred, &[2]);
        assert_eq!(
            Literal::from_le_bytes(&pred, &[1, 0])
                .unwrap()
                .to_i128_vec(),
            vec![1, 0]
        );
        assert!(matches!(
            Literal::from_le_bytes(&pred, &[2, 0]),
            Err(LiteralError::BadElement(_))
        ));
    }

    #[test]
    fn byte_count_mismatch_and_budget() {
        let s = shape(ElementType::S32, &[3]);
        assert_eq!(
            Literal::from_le_bytes(&s, &[0; 13]),
            Err(LiteralError::ByteSizeMismatch {
                shape: "s32[3]".into(),
                expected: 12,
                actual: 13
            })
        );
        // checked before the byte count: no allocation for an absurd shape
        let huge = shape(ElementType::F64, &[1 << 40]);
        assert!(matches!(
            Literal::from_le_bytes(&huge, &[]),
            Err(LiteralError::TooLarge { .. })
        ));
    }
}
