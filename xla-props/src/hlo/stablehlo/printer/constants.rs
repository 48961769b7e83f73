//! Constants as `dense<...>` attributes: float bits in hexadecimal, nested lists.

use std::fmt::Write as _;

use super::types::{invalid, tensor_type, unsupported, LowerError};
use crate::hlo::float_bits::round_to_bits;
use crate::hlo::{ArrayShape, ConstantData, ElementType};

pub(super) fn float_hex(data: &[f64], t: ElementType) -> Result<String, LowerError> {
    let width = t.byte_size();
    let mut s = String::with_capacity(4 + data.len() * width * 2);
    s.push_str("\"0x");
    for &x in data {
        let bits = match t {
            ElementType::F64 => x.to_bits(),
            _ => match t.float_format() {
                Some(fmt) => round_to_bits(x, &fmt),
                None => return invalid(format!("float constant of type {t}")),
            },
        };
        for byte in &bits.to_le_bytes()[..width] {
            let _ = write!(s, "{byte:02X}");
        }
    }
    s.push('"');
    Ok(s)
}

/// Complex values as a `dense<"0x...">` blob: per element the real then the
/// imaginary part, little-endian, each in the component type (f32 for c64).
pub(super) fn complex_hex(data: &[(f64, f64)], t: ElementType) -> String {
    let mut s = String::with_capacity(4 + data.len() * t.byte_size() * 2);
    s.push_str("\"0x");
    for &(re, im) in data {
        for part in [re, im] {
            let bytes = if t == ElementType::C64 {
                (part as f32).to_le_bytes().to_vec()
            } else {
                part.to_le_bytes().to_vec()
            };
            for byte in bytes {
                let _ = write!(s, "{byte:02X}");
            }
        }
    }
    s.push('"');
    s
}

/// A finite float as an MLIR float literal that reads back as the same f64.
pub(super) fn mlir_float(x: f64) -> Result<String, LowerError> {
    if !x.is_finite() {
        return unsupported("a non-finite complex constant component");
    }
    let s = format!("{x:?}");
    Ok(match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s,
    })
}

/// Writes row-major `items` as nested lists of shape `dims`.
pub(super) fn nested(items: &[String], dims: &[i64]) -> String {
    fn go(items: &[String], dims: &[usize], out: &mut String) {
        match dims.split_first() {
            None => out.push_str(&items[0]),
            Some((&n, rest)) => {
                let stride: usize = rest.iter().product();
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(&items[i * stride..(i + 1) * stride], rest, out);
                }
                out.push(']');
            }
        }
    }
    let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let mut out = String::new();
    go(items, &dims, &mut out);
    out
}

pub(super) fn dense_attr(data: &ConstantData, a: &ArrayShape) -> Result<String, LowerError> {
    let count = a
        .element_count()
        .ok_or_else(|| LowerError::Invalid(format!("bad dims in {a}")))? as usize;
    let ty = tensor_type(a)?;
    let len = match data {
        ConstantData::Pred(v) => v.len(),
        ConstantData::Int(v) => v.len(),
        ConstantData::Float(v) => v.len(),
        ConstantData::Complex(v) => v.len(),
        ConstantData::Tuple(_) => return invalid("tuple constant data for an array shape"),
    };
    if len != count {
        return invalid(format!(
            "constant of shape {a} has {len} values, {count} expected"
        ));
    }
    if count == 0 {
        return Ok(format!("dense<> : {ty}"));
    }
    let body = match data {
        ConstantData::Float(v) if a.dtype.is_float() => float_hex(v, a.dtype)?,
        // a non-finite component has no MLIR float literal: raw bytes
        ConstantData::Complex(v)
            if a.dtype.is_complex()
                && v.iter()
                    .any(|&(re, im)| !(re.is_finite() && im.is_finite())) =>
        {
            complex_hex(v, a.dtype)
        }
        ConstantData::Complex(v) if a.dtype.is_complex() => {
            let items = v
                .iter()
                .map(|&(re, im)| Ok(format!("({}, {})", mlir_float(re)?, mlir_float(im)?)))
                .collect::<Result<Vec<_>, LowerError>>()?;
            nested(&items, &a.dims)
        }
        ConstantData::Pred(v) => nested(
            &v.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
            &a.dims,
        ),
        ConstantData::Int(v) if a.dtype.is_integer() || a.dtype.is_pred() => {
            let items: Vec<String> = if a.dtype.is_pred() {
                v.iter().map(|&x| (x != 0).to_string()).collect()
            } else {
                v.iter().map(i128::to_string).collect()
            };
            nested(&items, &a.dims)
        }
        ConstantData::Int(v) if a.dtype.is_float() => {
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            float_hex(&f, a.dtype)?
        }
        _ => {
            return invalid(format!(
                "constant data does not match element type {}",
                a.dtype
            ))
        }
    };
    Ok(format!("dense<{body}> : {ty}"))
}
