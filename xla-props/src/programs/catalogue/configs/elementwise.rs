//! Attribute classes of select, clamp, compare, bitcast-convert and
//! reduce-precision.

use super::{Cfg, Res};
use crate::hlo::{Attrs, ComparisonDirection, ComparisonType, ElementType, InstrId, Opcode, Shape};
use crate::inputs::Role;
use crate::programs::catalogue::arr;

use ElementType as T;

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    match (op, class) {
        (Opcode::Select, "rank0") => vec![],
        (Opcode::Clamp, "scalar-bounds" | "scalar-min") => vec![],
        (Opcode::BitcastConvert, "join-2") => vec![3, 4, 2],
        (Opcode::BitcastConvert, "join-4") => vec![3, 4, 4],
        _ => vec![3, 4],
    }
}

fn float_of_width(bits: u32) -> Option<ElementType> {
    match bits {
        8 => Some(T::F8E5M2),
        16 => Some(T::F16),
        32 => Some(T::F32),
        64 => Some(T::F64),
        _ => None,
    }
}

fn int_of_width(bits: u32, signed: bool) -> Option<ElementType> {
    let all: &[ElementType] = if signed {
        &[T::S4, T::S8, T::S16, T::S32, T::S64]
    } else {
        &[T::U4, T::U8, T::U16, T::U32, T::U64]
    };
    all.iter().copied().find(|t| t.bit_width() == bits)
}

/// The target type of a bitcast-convert class from `from`, when one exists.
pub(super) fn bitcast_target(class: &str, from: ElementType) -> Option<ElementType> {
    let w = from.bit_width();
    if from.is_pred() || w < 8 && class != "same-width" {
        return None;
    }
    let bits = match class {
        "same-width" => w,
        "split-2" => w / 2,
        "split-4" => w / 4,
        "join-2" => w * 2,
        "join-4" => w * 4,
        _ => return None,
    };
    if bits < 8 && class != "same-width" {
        return None;
    }
    match (class, from.is_float()) {
        ("same-width", true) => int_of_width(bits, false),
        ("same-width", false) if w < 8 => int_of_width(bits, !from.is_signed_int()),
        ("same-width", false) => float_of_width(bits),
        (_, true) if class.starts_with("split") => int_of_width(bits, false),
        (_, true) => float_of_width(bits),
        (_, false) => int_of_width(bits, from.is_signed_int()),
    }
}

fn comparison(class: &str) -> Res<(ComparisonDirection, ComparisonType)> {
    let (dir, ty) = class.split_once('-').ok_or("bad compare class")?;
    let dir = ComparisonDirection::from_name(&dir.to_uppercase()).ok_or("bad direction")?;
    let ty = match ty {
        "float" => ComparisonType::Float,
        "totalorder" => ComparisonType::TotalOrder,
        "signed" => ComparisonType::Signed,
        _ => ComparisonType::Unsigned,
    };
    Ok((dir, ty))
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    match op {
        Opcode::Select => {
            let pred_dims: &[i64] = if class == "scalar-pred" { &[] } else { dims };
            let p = c.param(T::Pred, pred_dims, Role::Data);
            let x = c.main(dims, Role::Data);
            let y = c.param(t, dims, Role::Data);
            c.op(op, vec![p, x, y], Attrs::default())
        }
        Opcode::Clamp => {
            let full = [3, 4];
            let (lo, hi): (&[i64], &[i64]) = match class {
                "scalar-bounds" => (&[], &[]),
                "scalar-min" => (&[], &full),
                "scalar-max" => (&full, &[]),
                _ => (&full, &full),
            };
            let lo = c.main(lo, Role::Data);
            let x = c.param(t, &full, Role::Data);
            let hi = c.param(t, hi, Role::Data);
            c.op(op, vec![lo, x, hi], Attrs::default())
        }
        Opcode::Compare => {
            let (dir, ty) = comparison(class)?;
            let x = c.main(dims, Role::Data);
            let y = c.param(t, dims, Role::Data);
            let attrs = Attrs {
                direction: Some(dir),
                comparison_type: Some(ty),
                ..Attrs::default()
            };
            c.op(op, vec![x, y], attrs)
        }
        Opcode::BitcastConvert => {
            let target = bitcast_target(class, t).ok_or("no bitcast target")?;
            let mut out = dims.to_vec();
            if target.bit_width() < t.bit_width() {
                out.push((t.bit_width() / target.bit_width()) as i64);
            } else if target.bit_width() > t.bit_width() {
                out.pop();
            }
            let x = c.main(dims, Role::Data);
            let shape: Shape = arr(target, out, None);
            c.op_declared(op, vec![x], Attrs::default(), Some(shape))
        }
        Opcode::ReducePrecision => {
            let (e, m) = class[1..]
                .split_once('m')
                .ok_or("bad reduce-precision class")?;
            let x = c.main(dims, Role::Data);
            let attrs = Attrs {
                exponent_bits: Some(e.parse().map_err(|_| "bad exponent bits")?),
                mantissa_bits: Some(m.parse().map_err(|_| "bad mantissa bits")?),
                ..Attrs::default()
            };
            c.op(op, vec![x], attrs)
        }
        _ => Err(format!("`{op}` has no elementwise classes")),
    }
}
