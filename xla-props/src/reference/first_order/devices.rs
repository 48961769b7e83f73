//! First-order bounds of a program on many devices: every device carries
//! its values and radii on its own thread, and a collective moves the
//! radii exactly as it moves the values (the same exchange, run twice: once
//! on the values, once on the radii as f64 arrays).
//!
//! A collective's reduction is judged like any reduction: the group's
//! values may be combined in any order, so its radius is the carried
//! radii's sum plus the classical bound `gamma_n * sum (|x_i| + r_i)` over
//! the `n` members (for a plain float add; max/min carry the largest
//! radius; a product its image; any other reducer bounds nothing).

use super::dual::{f64_literal, Dual};
use super::eval::Radii;
use super::rules::{gamma, unit_roundoff};
use crate::hlo::{Instruction, Module, Opcode};
use crate::literal::{Literal, Value};
use crate::reference::collective::{self, PartitionerCall};
use crate::reference::reduction::exact_group_reduce;
use crate::reference::reduction::Combiner;
use crate::reference::OpError;

impl Radii<'_, '_> {
    /// A collective (or replica-id, partition-id, partitioner call): the
    /// values and the radii each exchanged with the group.
    pub(super) fn multi_device(
        &mut self,
        ins: &Instruction,
        ops: &[&Dual],
    ) -> Result<Dual, OpError> {
        if collective::partitioner_call(ins) == Some(PartitionerCall::Sharding) {
            return ops
                .first()
                .map(|d| (*d).clone())
                .ok_or_else(|| OpError::Invalid("a Sharding call without an operand".into()));
        }
        let Some(mut ctx) = self.run.take_device() else {
            return Err(OpError::Unsupported(format!(
                "{} runs on many devices: bound the whole module",
                ins.opcode
            )));
        };
        let vals: Vec<Value> = ops.iter().map(|o| o.value()).collect();
        if ops.is_empty() {
            // replica-id and partition-id: exact
            let refs: Vec<&Value> = Vec::new();
            let mut none = |_: &Instruction, _: &[&Literal]| Err("nothing to reduce".to_string());
            let v = collective::step(&mut ctx, ins, &refs, &mut none);
            self.run.put_device(ctx);
            return v.map(Dual::exact).map_err(OpError::Invalid);
        }
        let rads: Vec<Value> = ops
            .iter()
            .map(|o| radii_value(o))
            .collect::<Result<_, _>>()?;
        let mut stash: Vec<Vec<Literal>> = Vec::new();
        let run = &mut self.run;
        let value = {
            let refs: Vec<&Value> = vals.iter().collect();
            let mut reduce = |i: &Instruction, xs: &[&Literal]| {
                stash.push(xs.iter().map(|x| (*x).clone()).collect());
                exact_group_reduce(run, i, xs)
            };
            collective::step(&mut ctx, ins, &refs, &mut reduce)
        };
        let module = self.module;
        let mut k = 0;
        let radius = value.as_ref().map_err(Clone::clone).and_then(|_| {
            let refs: Vec<&Value> = rads.iter().collect();
            let mut reduce = |i: &Instruction, rs: &[&Literal]| {
                let xs = stash.get(k).ok_or("the radii's reduction has no values")?;
                k += 1;
                reduced_radius(module, i, xs, rs)
            };
            collective::step(&mut ctx, ins, &refs, &mut reduce)
        });
        self.run.put_device(ctx);
        let value = value.map_err(OpError::Invalid)?;
        let radius = radius.map_err(OpError::Invalid)?;
        dual_of(value, radius)
    }
}

/// The radii of a value as f64 arrays of its arrays' dims (integer
/// collectives such as replica-id have no operands).
fn radii_value(d: &Dual) -> Result<Value, OpError> {
    Ok(match d {
        Dual::Array(l, r) => Value::Array(f64_literal(l, r)?),
        Dual::Tuple(t) => Value::Tuple(t.iter().map(radii_value).collect::<Result<_, _>>()?),
        Dual::Token => Value::Token,
    })
}

fn dual_of(value: Value, radius: Value) -> Result<Dual, OpError> {
    match (value, radius) {
        (Value::Array(l), Value::Array(r)) => {
            let rs: Vec<f64> = (0..r.element_count()).map(|i| r.get_f64(i)).collect();
            if rs.len() != l.element_count() {
                return Err(OpError::Invalid("radii of another shape".into()));
            }
            Ok(Dual::Array(l, rs))
        }
        (Value::Array(l), Value::Tuple(_)) => {
            // replica-id and partition-id: exact
            Ok(Dual::exact(Value::Array(l)))
        }
        (Value::Tuple(v), Value::Tuple(r)) if v.len() == r.len() => Ok(Dual::Tuple(
            v.into_iter()
                .zip(r)
                .map(|(v, r)| dual_of(v, r))
                .collect::<Result<_, _>>()?,
        )),
        (Value::Token, _) => Ok(Dual::Token),
        (v, _) => Ok(Dual::unbounded(v)),
    }
}

/// The radius of a reduction over a group: `xs` the members' values, `rs`
/// their radii (f64 arrays), in group order.
fn reduced_radius(
    module: &Module,
    ins: &Instruction,
    xs: &[Literal],
    rs: &[&Literal],
) -> Result<Literal, String> {
    let first = xs.first().ok_or("an empty group")?;
    let t = first.dtype();
    let comp = ins.attrs.to_apply.ok_or("no to_apply")?;
    let n = xs.len() as f64;
    let g = t
        .float_format()
        .map_or(0.0, |f| gamma(n, unit_roundoff(&f)));
    let comb = Combiner::of(module, comp, t);
    let count = first.element_count();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let r: Vec<f64> = rs.iter().map(|r| r.get_f64(i)).collect();
        let x: Vec<f64> = xs.iter().map(|x| x.get_f64(i).abs()).collect();
        let carried: f64 = r.iter().sum();
        let v = match comb {
            Combiner::Plain(Opcode::Add, _) if t.is_float() => {
                let mag: f64 = x.iter().zip(&r).map(|(a, b)| a + b).sum();
                carried + g * mag
            }
            Combiner::Plain(Opcode::Add | Opcode::Or | Opcode::And | Opcode::Xor, _) => carried,
            Combiner::Plain(Opcode::Maximum | Opcode::Minimum, _) => {
                r.iter().copied().fold(0.0, f64::max)
            }
            Combiner::Plain(Opcode::Multiply, _) if t.is_float() => {
                let hi: f64 = x.iter().zip(&r).map(|(a, b)| a + b).product();
                let lo: f64 = x.iter().product();
                (hi - lo) + g * hi
            }
            _ if carried == 0.0 && !t.is_float() => 0.0,
            _ => f64::INFINITY,
        };
        out.push(if v.is_nan() { f64::INFINITY } else { v });
    }
    Literal::from_f64s(
        &crate::hlo::ArrayShape::new(
            crate::hlo::ElementType::F64,
            first.dims().iter().map(|&d| d as i64).collect::<Vec<_>>(),
        ),
        &out,
    )
    .map_err(|e| e.to_string())
}
