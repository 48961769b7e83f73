//! Quantized tensors (`!quant.uniform`, per tensor or per axis): held as
//! their storage integers; ops on them by their meaning in the spec.
//!
//! - `uniform_quantize` of a float: `x / scale + zero_point`, clamped to
//!   `[storage_min, storage_max]`, rounded to nearest even, converted to the
//!   storage type, each step an op in the expressed type (the spec's
//!   `quantize`). Of a quantized value: dequantized first (requantization).
//! - `uniform_dequantize`: `(q - zero_point) * scale` (the spec's
//!   `dequantize`; the subtraction is in i64, so it never wraps).
//! - `bitcast_convert` between a quantized type and its storage type: the
//!   storage integers themselves.
//! - Any other op with a quantized operand or result: the spec's
//!   `dequantize_op_quantize`, i.e. quantized operands are dequantized, the op
//!   is read on the expressed type, and quantized results are quantized.

use super::converter::{Converter, OpSite};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, ConstantData, InstrId};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{err, Builder, R};
use crate::hlo::stablehlo::syntax::{Op, Quant, Type, ValueRef};

fn push(b: &mut Builder, op: Opcode, t: ElementType, dims: &[i64], xs: Vec<InstrId>) -> InstrId {
    b.push(op, Shape::array(t, dims.to_vec()), xs, Attrs::default())
}

/// The per-element quantization parameter (`pick` of each `(scale, zp)`)
/// as a `dims`-shaped array of type `t`.
fn param_array(
    b: &mut Builder,
    q: &Quant,
    dims: &[i64],
    t: ElementType,
    pick: impl Fn((f64, i128)) -> f64,
    pos: usize,
) -> R<InstrId> {
    let vals: Vec<f64> = q.params.iter().map(|&p| pick(p)).collect();
    let (cdims, bdims) = match q.axis {
        None => (vec![], vec![]),
        Some(a) => {
            let n = usize::try_from(a).ok().and_then(|a| dims.get(a)).copied();
            if n != Some(vals.len() as i64) {
                return err(
                    pos,
                    format!(
                        "a per-axis quantized type with {} parameters along dimension {a} of {dims:?}",
                        vals.len()
                    ),
                );
            }
            (vec![vals.len() as i64], vec![a])
        }
    };
    let data = if t.is_float() {
        ConstantData::Float(vals)
    } else {
        ConstantData::Int(vals.iter().map(|&v| v as i128).collect())
    };
    let k = b.push(
        Opcode::Constant,
        Shape::array(t, cdims),
        vec![],
        Attrs {
            constant: Some(data),
            ..Attrs::default()
        },
    );
    Ok(b.push(
        Opcode::Broadcast,
        Shape::array(t, dims.to_vec()),
        vec![k],
        Attrs {
            dimensions: Some(bdims),
            ..Attrs::default()
        },
    ))
}

/// The spec's `dequantize`: `(q - zero_point) * scale` in the expressed type.
pub(super) fn dequantize(b: &mut Builder, x: InstrId, q: &Quant, pos: usize) -> R<InstrId> {
    let (dims, _) = b.array(x, pos)?;
    let (w, e) = (ElementType::S64, q.expressed);
    let wide = push(b, Opcode::Convert, w, &dims, vec![x]);
    let zp = param_array(b, q, &dims, w, |p| p.1 as f64, pos)?;
    let sub = push(b, Opcode::Subtract, w, &dims, vec![wide, zp]);
    let f = push(b, Opcode::Convert, e, &dims, vec![sub]);
    let scale = param_array(b, q, &dims, e, |p| p.0, pos)?;
    Ok(push(b, Opcode::Multiply, e, &dims, vec![f, scale]))
}

/// The spec's `quantize` of float `x` into `q`'s storage integers.
pub(super) fn quantize(b: &mut Builder, x: InstrId, q: &Quant, pos: usize) -> R<InstrId> {
    let (dims, t) = b.array(x, pos)?;
    let e = q.expressed;
    if !t.is_float() {
        return err(
            pos,
            format!("quantizing {t} values: a float type is needed"),
        );
    }
    let x = if t == e {
        x
    } else {
        push(b, Opcode::Convert, e, &dims, vec![x])
    };
    let scale = param_array(b, q, &dims, e, |p| p.0, pos)?;
    let scaled = push(b, Opcode::Divide, e, &dims, vec![x, scale]);
    let zp = param_array(b, q, &dims, e, |p| p.1 as f64, pos)?;
    let added = push(b, Opcode::Add, e, &dims, vec![scaled, zp]);
    let bound = |b: &mut Builder, v: i128| {
        let c = Quant {
            axis: None,
            params: vec![(v as f64, 0)],
            ..q.clone()
        };
        param_array(b, &c, &dims, e, |p| p.0, pos)
    };
    let (lo, hi) = (bound(b, q.min)?, bound(b, q.max)?);
    let clamped = push(b, Opcode::Clamp, e, &dims, vec![lo, added, hi]);
    let rounded = push(b, Opcode::RoundNearestEven, e, &dims, vec![clamped]);
    Ok(push(b, Opcode::Convert, q.storage, &dims, vec![rounded]))
}

impl Converter<'_> {
    /// Whether `op` needs the quantized reading: it names a quantization op,
    /// has a quantized result, or uses a quantized value of this scope.
    pub(super) fn is_quantized(op: &Op, b: &Builder) -> bool {
        let short = op.name.strip_prefix("stablehlo.").unwrap_or(&op.name);
        matches!(short, "uniform_quantize" | "uniform_dequantize")
            || op.result_types.iter().any(|t| matches!(t, Type::Quant(..)))
            || op.operands.iter().any(|v| {
                b.scope
                    .get(&v.name)
                    .is_some_and(|ids| ids.iter().any(|i| b.quant.contains_key(i)))
            })
    }

    /// An op with quantized operands or results (see the module comment).
    pub(super) fn quant_op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, short) = (site.op, site.short);
        let pos = op.pos;
        let ops = self.operands(op, b, site.outers)?;
        let qs: Vec<Option<Quant>> = ops.iter().map(|i| b.quant.get(i).cloned()).collect();
        let one = |what: &str| -> R<InstrId> {
            match ops[..] {
                [x] if op.result_types.len() == 1 => Ok(x),
                _ => err(pos, format!("{what} takes one operand and has one result")),
            }
        };
        match short {
            "bitcast_convert" => {
                let x = one("bitcast_convert")?;
                let (dims, t) = b.array(x, pos)?;
                let to = match &op.result_types[0] {
                    Type::Quant(_, q) => q.storage,
                    Type::Tensor(_, e) => *e,
                    _ => return err(pos, "bitcast_convert gives a tensor"),
                };
                let code = if to == t {
                    Opcode::Copy
                } else {
                    Opcode::BitcastConvert
                };
                return Ok(vec![push(b, code, to, &dims, vec![x])]);
            }
            "uniform_quantize" | "uniform_dequantize" => {
                let x = one(short)?;
                let f = match &qs[0] {
                    Some(q) => dequantize(b, x, q, pos)?,
                    None => x,
                };
                return match &op.result_types[0] {
                    Type::Quant(_, q) => Ok(vec![quantize(b, f, q, pos)?]),
                    Type::Tensor(dims, e) if short == "uniform_dequantize" => {
                        let t = b.array(f, pos)?.1;
                        Ok(vec![if t == *e {
                            f
                        } else {
                            push(b, Opcode::Convert, *e, dims, vec![f])
                        }])
                    }
                    _ => err(
                        pos,
                        format!("{short}: the result type is not a quantized tensor"),
                    ),
                };
            }
            _ => {}
        }
        // dequantize, the op on the expressed type, quantize
        let mut s = op.clone();
        let mut temps = Vec::new();
        for (k, (&id, q)) in ops.iter().zip(&qs).enumerate() {
            let v = match q {
                Some(q) => dequantize(b, id, q, pos)?,
                None => id,
            };
            // a name no MLIR text can spell
            let name = format!("\u{1}dequantized{k}");
            b.bind(&name, vec![v]);
            s.operands[k] = ValueRef {
                name: name.clone(),
                index: None,
                pos: op.operands[k].pos,
            };
            temps.push(name);
        }
        for t in s.result_types.iter_mut() {
            if let Type::Quant(d, q) = t {
                *t = Type::Tensor(d.clone(), q.expressed);
            }
        }
        let res = self.op(&OpSite::new(&s, site.outers, site.checked), b);
        for n in &temps {
            b.scope.remove(n);
        }
        let res = res?;
        if res.len() != op.result_types.len() {
            return err(
                pos,
                format!("`{}` on quantized values: results differ", op.name),
            );
        }
        let mut out = Vec::new();
        for (id, t) in res.into_iter().zip(&op.result_types) {
            out.push(match t {
                Type::Quant(_, q) => quantize(b, id, q, pos)?,
                _ => id,
            });
        }
        Ok(out)
    }
}
