//! `dense<...>` payloads as IR constants: hex blobs, nested lists, splats,
//! hexadecimal float bit patterns; narrow floats are rounded once to their type.

use super::build::{err, R};
use super::syntax::{Dense, Scalar};
use crate::hlo::dtype::ElementType;
use crate::hlo::float_bits::{bits_to_f64, round_to_bits};
use crate::hlo::ir::ConstantData;
use crate::hlo::parser::MAX_SPLAT_ELEMENTS;

/// The constant of type `dims x e` that `d` denotes.
pub(crate) fn constant_data(
    d: &Dense,
    dims: &[i64],
    e: ElementType,
    pos: usize,
) -> R<ConstantData> {
    let count = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
        .filter(|&n| n <= MAX_SPLAT_ELEMENTS)
        .ok_or((
            pos,
            format!("a constant of more than {MAX_SPLAT_ELEMENTS} elements"),
        ))? as usize;
    let scalars: Vec<Value> = match d {
        Dense::Empty => {
            if count != 0 {
                return err(pos, "`dense<>` for a non-empty tensor");
            }
            Vec::new()
        }
        Dense::Splat(s) => vec![scalar(s, e, pos)?; count],
        Dense::List(flat, _) => {
            if flat.len() != count {
                return err(
                    pos,
                    format!("dense list has {} elements, the type {count}", flat.len()),
                );
            }
            flat.iter().map(|s| scalar(s, e, pos)).collect::<R<_>>()?
        }
        Dense::Blob(bytes) => {
            let w = match e {
                ElementType::Pred | ElementType::S4 | ElementType::U4 => 1,
                _ => e.byte_size(),
            };
            let elems: Vec<&[u8]> = if bytes.len() == w && count != 1 {
                vec![&bytes[..]; count]
            } else if bytes.len() == w * count {
                bytes.chunks(w).collect()
            } else {
                return err(
                    pos,
                    format!(
                        "dense blob has {} bytes, the type needs {}",
                        bytes.len(),
                        w * count
                    ),
                );
            };
            elems.into_iter().map(|c| from_bytes(c, e)).collect()
        }
    };
    Ok(pack(scalars, e))
}

#[derive(Clone, Copy)]
enum Value {
    B(bool),
    I(i128),
    F(f64),
    C(f64, f64),
}

fn pack(v: Vec<Value>, e: ElementType) -> ConstantData {
    if e.is_pred() {
        ConstantData::Pred(v.iter().map(|x| matches!(x, Value::B(true))).collect())
    } else if e.is_complex() {
        ConstantData::Complex(
            v.iter()
                .map(|x| match *x {
                    Value::C(a, b) => (a, b),
                    _ => (0.0, 0.0),
                })
                .collect(),
        )
    } else if e.is_float() {
        ConstantData::Float(
            v.iter()
                .map(|x| if let Value::F(f) = *x { f } else { 0.0 })
                .collect(),
        )
    } else {
        ConstantData::Int(
            v.iter()
                .map(|x| if let Value::I(i) = *x { i } else { 0 })
                .collect(),
        )
    }
}

/// `x` rounded once to the float type `e`.
pub(crate) fn round_float(x: f64, e: ElementType) -> f64 {
    match e {
        ElementType::F64 | ElementType::C128 => x,
        ElementType::C64 => round_float(x, ElementType::F32),
        _ => match e.float_format() {
            Some(f) => bits_to_f64(round_to_bits(x, &f), &f),
            None => x,
        },
    }
}

fn float_from_bits(bits: u128, e: ElementType, pos: usize) -> R<f64> {
    let base = match e {
        ElementType::C64 => ElementType::F32,
        ElementType::C128 => ElementType::F64,
        t => t,
    };
    let width = base.bit_width();
    if width < 128 && bits >> width != 0 {
        return err(pos, format!("hexadecimal literal too wide for {base}"));
    }
    Ok(match base {
        ElementType::F64 => f64::from_bits(bits as u64),
        ElementType::F32 => f32::from_bits(bits as u32) as f64,
        _ => match base.float_format() {
            Some(f) => bits_to_f64(bits as u64, &f),
            None => return err(pos, format!("{base} is not a float type")),
        },
    })
}

fn int_in_range(v: i128, e: ElementType, pos: usize) -> R<i128> {
    match e.int_range() {
        Some((lo, hi)) if v >= lo && v <= hi => Ok(v),
        Some(_) => err(pos, format!("integer {v} out of range for {e}")),
        None => Ok(v),
    }
}

fn scalar(s: &Scalar, e: ElementType, pos: usize) -> R<Value> {
    if e.is_pred() {
        return match s {
            Scalar::Bool(b) => Ok(Value::B(*b)),
            Scalar::Int(v) if *v == 0 || *v == 1 => Ok(Value::B(*v == 1)),
            Scalar::Hex(v) if *v <= 1 => Ok(Value::B(*v == 1)),
            _ => err(pos, "expected `true` or `false`"),
        };
    }
    if e.is_complex() {
        return match s {
            Scalar::Complex(re, im) => {
                let re = real(re, e, pos)?;
                let im = real(im, e, pos)?;
                Ok(Value::C(re, im))
            }
            other => Ok(Value::C(real(other, e, pos)?, 0.0)),
        };
    }
    if e.is_float() {
        return Ok(Value::F(real(s, e, pos)?));
    }
    let w = e.bit_width();
    match s {
        Scalar::Int(v) => Ok(Value::I(int_in_range(*v, e, pos)?)),
        Scalar::Hex(v) => {
            if w < 128 && v >> w != 0 {
                return err(pos, format!("hexadecimal literal too wide for {e}"));
            }
            let v = *v as i128;
            let v = if e.is_signed_int() && w < 128 && (v >> (w - 1)) & 1 == 1 {
                v - (1i128 << w)
            } else {
                v
            };
            Ok(Value::I(v))
        }
        Scalar::Bool(b) => Ok(Value::I(*b as i128)),
        _ => err(pos, format!("expected an integer for {e}")),
    }
}

fn real(s: &Scalar, e: ElementType, pos: usize) -> R<f64> {
    match s {
        Scalar::Float(v) => Ok(round_float(*v, e)),
        Scalar::Int(v) => Ok(round_float(*v as f64, e)),
        Scalar::Hex(bits) => float_from_bits(*bits, e, pos),
        _ => err(pos, format!("expected a number for {e}")),
    }
}

fn from_bytes(c: &[u8], e: ElementType) -> Value {
    let mut buf = [0u8; 16];
    buf[..c.len()].copy_from_slice(c);
    let raw = u128::from_le_bytes(buf);
    match e {
        ElementType::Pred => Value::B(raw != 0),
        ElementType::C64 => Value::C(
            f32::from_bits(raw as u32) as f64,
            f32::from_bits((raw >> 32) as u32) as f64,
        ),
        ElementType::C128 => Value::C(
            f64::from_bits(raw as u64),
            f64::from_bits((raw >> 64) as u64),
        ),
        t if t.is_float() => Value::F(float_from_bits(raw, t, 0).unwrap_or(f64::NAN)),
        t => {
            let w = if matches!(t, ElementType::S4 | ElementType::U4) {
                4
            } else {
                t.bit_width()
            };
            let raw = raw & ((1u128 << w) - 1);
            let v = raw as i128;
            let v = if t.is_signed_int() && (v >> (w - 1)) & 1 == 1 {
                v - (1i128 << w)
            } else {
                v
            };
            Value::I(v)
        }
    }
}
