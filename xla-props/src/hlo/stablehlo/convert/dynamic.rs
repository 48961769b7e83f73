//! Dynamic-shape operations, refined to the static ones, and `composite`.
//!
//! Shape-polymorphic exports (JAX) give `dynamic_broadcast_in_dim`,
//! `dynamic_reshape`, `dynamic_iota`, `dynamic_pad`, `dynamic_gather`,
//! `dynamic_conv` and `get_dimension_size`. The reader only takes static
//! result types, so each op is refined here to its static counterpart: a
//! shape operand that the result type already fixes (the output shape of
//! broadcast, reshape and iota) is checked against the result type when it is
//! a constant; an operand that carries more (padding amounts, slice sizes) must
//! be a constant, which becomes the static op's attribute. A shape operand
//! computed at run time where the attribute needs its value is an error that
//! says so. `get_dimension_size` is the constant dimension size.
//!
//! `composite` is a call of its `decomposition` function.

use super::attrs::int_attr;
use super::converter::{Converted, Converter, OpSite};
use crate::hlo::ir::{Attrs, ConstantData, InstrId};
use crate::hlo::opcode::Opcode;
use crate::hlo::stablehlo::build::{err, shape_of, Builder, R};
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

/// The integer elements of `id` when it is a constant, else None.
fn constant_ints(b: &Builder, id: InstrId) -> Option<Vec<i64>> {
    let i = &b.instrs[id.index()];
    if i.opcode != Opcode::Constant {
        return None;
    }
    match &i.attrs.constant {
        Some(ConstantData::Int(v)) => v.iter().map(|&x| i64::try_from(x).ok()).collect(),
        _ => None,
    }
}

impl Converter<'_> {
    /// The dynamic-shape ops and `composite`; other names go on to the next family.
    pub(super) fn dynamic_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers) = (site.op, site.outers);
        let pos = op.pos;
        // (static name, how many leading operands the static op keeps)
        let (name, keep) = match site.short {
            "dynamic_broadcast_in_dim" => ("stablehlo.broadcast_in_dim", 1),
            "dynamic_reshape" => ("stablehlo.reshape", 1),
            "dynamic_iota" => ("stablehlo.iota", 0),
            "dynamic_pad" => ("stablehlo.pad", 2),
            "dynamic_gather" => ("stablehlo.gather", 2),
            "dynamic_conv" => ("stablehlo.convolution", 2),
            "get_dimension_size" => return self.dimension_size(op, b, outers).map(Some),
            "composite" => return self.composite(site, b).map(Some),
            _ => return Ok(None),
        };
        if op.operands.len() <= keep {
            return err(pos, format!("`{}` needs its shape operands", op.name));
        }
        let mut shape_args = Vec::new();
        for v in &op.operands[keep..] {
            let id = self.lookup(v, b, outers)?;
            shape_args.push(constant_ints(b, id));
        }
        let mut s = op.clone();
        s.name = name.into();
        s.operands.truncate(keep);
        let need = |k: usize, what: &str| -> R<Vec<i64>> {
            shape_args[k].clone().ok_or((
                pos,
                format!(
                    "`{}`: the {what} operand must be a constant to refine the op to static shapes",
                    op.name
                ),
            ))
        };
        let out_dims = match op.result_types.as_slice() {
            [Type::Tensor(d, _)] => d.clone(),
            _ => return err(pos, format!("`{}` has one tensor result", op.name)),
        };
        match site.short {
            "dynamic_broadcast_in_dim" | "dynamic_reshape" | "dynamic_iota" => {
                if let Some(dims) = &shape_args[0] {
                    if *dims != out_dims {
                        return err(
                            pos,
                            format!(
                                "`{}`: the output shape operand {dims:?} differs from the result type's {out_dims:?}",
                                op.name
                            ),
                        );
                    }
                }
                s.attrs.retain(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "known_expanding_dimensions" | "known_nonexpanding_dimensions"
                    )
                });
            }
            "dynamic_pad" => {
                let [low, high, interior] = [0, 1, 2].map(|k| need(k, "padding"));
                s.attrs.push(("edge_padding_low".into(), Attr::Array(low?)));
                s.attrs
                    .push(("edge_padding_high".into(), Attr::Array(high?)));
                s.attrs
                    .push(("interior_padding".into(), Attr::Array(interior?)));
            }
            "dynamic_gather" => {
                let sizes = need(0, "slice sizes")?;
                s.attrs.push(("slice_sizes".into(), Attr::Array(sizes)));
            }
            _ => {
                // dynamic_conv: the padding operand is `[spatial, 2]`
                let pads = need(0, "padding")?;
                s.attrs.retain(|(k, _)| k != "padding");
                s.attrs.push(("padding".into(), Attr::Array(pads)));
            }
        }
        self.op(&OpSite::new(&s, outers, site.checked), b).map(Some)
    }

    /// `get_dimension_size`: the (static) size of one dimension, as a constant.
    fn dimension_size(&mut self, op: &Op, b: &mut Builder, outers: &[&Builder]) -> R<Vec<InstrId>> {
        let ops = self.operands(op, b, outers)?;
        let [x] = ops[..] else {
            return err(op.pos, "get_dimension_size takes one operand");
        };
        let dims = b.array(x, op.pos)?.0;
        let d = int_attr(op, "dimension")?;
        let Some(&size) = usize::try_from(d).ok().and_then(|d| dims.get(d)) else {
            return err(op.pos, format!("dimension {d} out of range"));
        };
        let [t @ Type::Tensor(rd, _)] = op.result_types.as_slice() else {
            return err(op.pos, "get_dimension_size has one tensor result");
        };
        if !rd.is_empty() {
            return err(op.pos, "get_dimension_size gives a scalar");
        }
        let a = Attrs {
            constant: Some(ConstantData::Int(vec![i128::from(size)])),
            ..Attrs::default()
        };
        Ok(vec![b.push(Opcode::Constant, shape_of(t), vec![], a)])
    }

    /// `composite`: a call of its `decomposition` function.
    fn composite(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let op = site.op;
        let Some(Attr::Symbol(f)) = op.attr("decomposition") else {
            return err(op.pos, "a composite needs `decomposition = @function`");
        };
        let mut call = op.clone();
        call.name = "func.call".into();
        call.attrs = vec![("callee".into(), Attr::Symbol(f.clone()))];
        self.op(&OpSite::new(&call, site.outers, site.checked), b)
    }
}
