//! Scalar computations (reducers, comparators, combiners, map bodies)
//! compiled once into a flat program over bit patterns, so applying them per
//! element does not build literals. Same semantics as the array kernels;
//! computations using anything else fall back to a full call.

use super::data::{bits_value, from_bits, int_to_f64_odd};
use super::elementwise::{direction_holds, int_binary, int_unary, total_order_key};
use super::error::bad;
use super::{math, shape_ops, Calls, OpError};
use crate::hlo::{
    ArrayShape, CompId, ComparisonDirection, ComparisonType, ElementType, Module, Opcode, Shape,
};
use crate::literal::{round_to_bits, Literal, Value};

#[derive(Clone, Debug)]
enum Step {
    Param(usize),
    Const(u64),
    Unary(Opcode, usize),
    Binary(Opcode, usize, usize),
    Compare(ComparisonDirection, Option<ComparisonType>, usize, usize),
    Select(usize, usize, usize),
    Clamp(usize, usize, usize),
    Convert(usize),
    BitcastConvert(usize),
}

/// A compiled scalar computation.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    steps: Vec<(Step, ElementType)>,
    params: Vec<ElementType>,
    outputs: Vec<usize>,
    out_types: Vec<ElementType>,
}

fn scalar_type(s: &Shape) -> Option<ElementType> {
    s.as_array()
        .filter(|a| a.dims.is_empty() && !a.dtype.is_complex())
        .map(|a| a.dtype)
}

impl Program {
    /// Compiles `comp` when it only uses scalar elementwise ops.
    pub(crate) fn compile(module: &Module, comp: CompId) -> Option<Program> {
        let c = module.computations.get(comp.index())?;
        let order = c.post_order()?;
        let mut slot = vec![usize::MAX; c.instructions.len()];
        let mut steps = Vec::with_capacity(order.len());
        let params = c.parameters();
        let mut ptypes = Vec::with_capacity(params.len());
        for &p in &params {
            ptypes.push(scalar_type(&c.instr(p).shape)?);
        }
        let root = c.instructions.get(c.root.index())?;
        for id in order {
            let ins = c.instr(id);
            if id == c.root && ins.opcode == Opcode::Tuple {
                continue;
            }
            let t = scalar_type(&ins.shape)?;
            let op = |k: usize| {
                ins.operands
                    .get(k)
                    .map(|o| slot[o.index()])
                    .filter(|&s| s != usize::MAX)
            };
            let step = match ins.opcode {
                Opcode::Parameter => Step::Param(params.iter().position(|&p| p == id)?),
                Opcode::Constant => {
                    let v = shape_ops::constant(ins).ok()?;
                    Step::Const(v.as_array()?.get_bits(0))
                }
                Opcode::Compare => Step::Compare(
                    ins.attrs.direction?,
                    ins.attrs.comparison_type,
                    op(0)?,
                    op(1)?,
                ),
                Opcode::Select => Step::Select(op(0)?, op(1)?, op(2)?),
                Opcode::Clamp => Step::Clamp(op(0)?, op(1)?, op(2)?),
                Opcode::Convert => Step::Convert(op(0)?),
                Opcode::BitcastConvert => {
                    let a = op(0)?;
                    if steps.get(a).map(|s: &(Step, ElementType)| s.1.bit_width())
                        != Some(t.bit_width())
                    {
                        return None;
                    }
                    Step::BitcastConvert(a)
                }
                o if ins.operands.len() == 1
                    && (math::unary(o, 0.0).is_some()
                        || int_unary(o).is_some()
                        || o == Opcode::IsFinite) =>
                {
                    Step::Unary(o, op(0)?)
                }
                o if ins.operands.len() == 2
                    && (math::binary(o).is_some() || int_binary(o).is_some()) =>
                {
                    Step::Binary(o, op(0)?, op(1)?)
                }
                _ => return None,
            };
            slot[id.index()] = steps.len();
            steps.push((step, t));
        }
        let outputs = if root.opcode == Opcode::Tuple {
            root.operands
                .iter()
                .map(|o| Some(slot[o.index()]).filter(|&s| s != usize::MAX))
                .collect::<Option<Vec<_>>>()?
        } else {
            vec![slot[c.root.index()]]
        };
        let out_types = outputs
            .iter()
            .map(|&o| steps.get(o).map(|s| s.1))
            .collect::<Option<Vec<_>>>()?;
        Some(Program {
            steps,
            params: ptypes,
            outputs,
            out_types,
        })
    }

    /// Runs the program on scalar bit patterns.
    pub(crate) fn run(
        &self,
        args: &[(ElementType, u64)],
        regs: &mut Vec<u64>,
    ) -> Result<Vec<u64>, OpError> {
        if args.len() != self.params.len() || args.iter().zip(&self.params).any(|(a, &t)| a.0 != t)
        {
            return Err(OpError::Invalid(
                "called computation's parameters do not match its arguments".into(),
            ));
        }
        regs.clear();
        for (step, t) in &self.steps {
            let t = *t;
            let ty = |k: usize| self.steps[k].1;
            let v = match *step {
                Step::Param(k) => args[k].1,
                Step::Const(b) => b,
                Step::Unary(op, a) => unary(op, ty(a), t, regs[a])?,
                Step::Binary(op, a, b) => plain(op, ty(a), regs[a], regs[b])?,
                Step::Compare(d, ct, a, b) => u64::from(compare(d, ct, ty(a), regs[a], regs[b])),
                Step::Select(p, a, b) => {
                    if regs[p] & 1 == 1 {
                        regs[a]
                    } else {
                        regs[b]
                    }
                }
                Step::Clamp(lo, x, hi) => {
                    let m = plain(Opcode::Maximum, t, regs[x], regs[lo])?;
                    plain(Opcode::Minimum, t, m, regs[hi])?
                }
                Step::Convert(a) => convert(ty(a), t, regs[a]),
                Step::BitcastConvert(a) => regs[a],
            };
            regs.push(v);
        }
        Ok(self.outputs.iter().map(|&o| regs[o]).collect())
    }

    /// The output element types.
    pub(crate) fn output_types(&self) -> &[ElementType] {
        &self.out_types
    }
}

/// The signed value of integer bits.
fn int_value(b: u64, t: ElementType) -> i128 {
    let w = t.bit_width();
    let v = b as i128;
    if t.is_signed_int() {
        let s = 128 - w;
        (v << s) >> s
    } else {
        v
    }
}

fn wrap(v: i128, t: ElementType) -> u64 {
    let w = t.bit_width();
    if w >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << w) - 1)
    }
}

fn unary(op: Opcode, from: ElementType, to: ElementType, b: u64) -> Result<u64, OpError> {
    if from.is_float() {
        if op == Opcode::IsFinite {
            return Ok(u64::from(bits_value(b, from).is_finite()));
        }
        let f = math::unary(op, bits_value(b, from))
            .ok_or_else(|| OpError::Invalid(format!("{op} on {from}")))?;
        return Ok(round_bits(f, to));
    }
    if from.is_pred() {
        return match op {
            Opcode::Not => Ok((b & 1) ^ 1),
            _ => Err(OpError::Invalid(format!("{op} on pred"))),
        };
    }
    let f = int_unary(op).ok_or_else(|| OpError::Invalid(format!("{op} on {from}")))?;
    Ok(wrap(
        f(int_value(b, from), from.bit_width(), from.is_signed_int()),
        to,
    ))
}

fn compare(
    d: ComparisonDirection,
    ct: Option<ComparisonType>,
    t: ElementType,
    a: u64,
    b: u64,
) -> bool {
    if t.is_float() {
        if ct == Some(ComparisonType::TotalOrder) {
            let w = t.bit_width();
            return direction_holds(d, Some(total_order_key(a, w).cmp(&total_order_key(b, w))));
        }
        return direction_holds(d, bits_value(a, t).partial_cmp(&bits_value(b, t)));
    }
    direction_holds(d, Some(int_value(a, t).cmp(&int_value(b, t))))
}

/// convert with the array kernel's semantics.
fn convert(from: ElementType, to: ElementType, b: u64) -> u64 {
    if from.is_float() {
        let v = bits_value(b, from);
        if to.is_float() {
            return round_bits(v, to);
        }
        if to.is_pred() {
            return u64::from(v != 0.0);
        }
        let (lo, hi) = to.int_range().unwrap_or((0, 0));
        let i = if v.is_nan() {
            0
        } else if v <= lo as f64 {
            lo
        } else if v >= hi as f64 {
            hi
        } else {
            v.trunc() as i128
        };
        return wrap(i, to);
    }
    let i = if from.is_pred() {
        (b & 1) as i128
    } else {
        int_value(b, from)
    };
    if to.is_float() {
        round_bits(int_to_f64_odd(i), to)
    } else if to.is_pred() {
        u64::from(i != 0)
    } else {
        wrap(i, to)
    }
}

/// The boxed `c128` values of one evaluation (`complex_boxed.rs`).
pub(crate) type Table = std::rc::Rc<std::cell::RefCell<Vec<(f64, f64)>>>;

/// A scalar computation: compiled when possible, else called.
#[derive(Clone, Debug)]
pub(crate) enum ScalarFn {
    /// The compiled program.
    Program(Program),
    /// A full call.
    Call(CompId),
    /// A full call of a computation on c128 scalars whose c128 arguments
    /// and results travel boxed, as `u64` indices into the table (a
    /// 128-bit element does not fit the bit paths; `complex_boxed.rs`).
    Boxed(CompId, Table),
}

impl ScalarFn {
    /// Compiles `comp` if it can.
    pub(crate) fn new(module: &Module, comp: CompId) -> ScalarFn {
        match Program::compile(module, comp) {
            Some(p) => ScalarFn::Program(p),
            None => ScalarFn::Call(comp),
        }
    }

    /// Applies it to scalar arguments; checks the result types against `want`.
    pub(crate) fn apply(
        &self,
        run: &mut dyn Calls,
        args: &[(ElementType, u64)],
        want: &[ElementType],
        regs: &mut Vec<u64>,
    ) -> Result<Vec<u64>, OpError> {
        match self {
            ScalarFn::Program(p) => {
                if p.output_types() != want {
                    return Err(OpError::Invalid(
                        "called computation returns other types than expected".into(),
                    ));
                }
                p.run(args, regs)
            }
            ScalarFn::Call(c) => call_scalars(run, *c, args, want),
            ScalarFn::Boxed(c, table) => call_boxed(run, *c, table, args, want),
        }
    }
}

/// Calls `comp` on scalar arguments whose `c128` parameters come boxed;
/// a `c128` result is boxed into the table (its index returned as a `u64`).
pub(crate) fn call_boxed(
    run: &mut dyn Calls,
    comp: CompId,
    table: &Table,
    args: &[(ElementType, u64)],
    want: &[ElementType],
) -> Result<Vec<u64>, OpError> {
    let params: Vec<ElementType> = {
        let c = run
            .module()
            .computations
            .get(comp.index())
            .ok_or_else(|| bad("called computation out of range"))?;
        c.parameters()
            .iter()
            .map(|&p| {
                c.instr(p)
                    .shape
                    .as_array()
                    .map_or(ElementType::Pred, |a| a.dtype)
            })
            .collect()
    };
    if params.len() != args.len() {
        return Err(bad(format!(
            "called computation takes {} parameters, given {}",
            params.len(),
            args.len()
        )));
    }
    let vals = args
        .iter()
        .zip(&params)
        .map(|(&(t, b), &pt)| {
            let scalar = ArrayShape::new(pt, vec![]);
            if pt == ElementType::C128 {
                let v = table
                    .borrow()
                    .get(b as usize)
                    .copied()
                    .ok_or_else(|| bad(format!("boxed c128 index {b} out of the table")))?;
                Ok(Value::Array(Literal::from_complex(&scalar, &[v])?))
            } else {
                from_bits(&ArrayShape::new(t, vec![]), &[b]).map(Value::Array)
            }
        })
        .collect::<Result<Vec<_>, OpError>>()?;
    scalar_results(run.call(comp, vals)?.into_flat(), want, Some(table))
}

/// The bits of a called computation's scalar results, checked against
/// `want`; with a table, a `c128` result where a `u64` is wanted is boxed.
fn scalar_results(
    leaves: Vec<Literal>,
    want: &[ElementType],
    table: Option<&Table>,
) -> Result<Vec<u64>, OpError> {
    if leaves.len() != want.len() {
        return Err(bad(format!(
            "called computation returned {} values, expected {}",
            leaves.len(),
            want.len()
        )));
    }
    leaves
        .iter()
        .zip(want)
        .map(|(l, &t)| {
            if l.element_count() != 1 {
                return Err(bad(format!("called computation returned {}", l.shape())));
            }
            match table {
                Some(table) if l.dtype() == ElementType::C128 && t == ElementType::U64 => {
                    let mut tb = table.borrow_mut();
                    tb.push(l.to_complex_vec()[0]);
                    Ok(tb.len() as u64 - 1)
                }
                _ if l.dtype() == t => Ok(l.get_bits(0)),
                _ => Err(bad(format!(
                    "called computation returned {}, expected a {t} scalar",
                    l.shape()
                ))),
            }
        })
        .collect()
}

/// Rounds an exact (or round-to-odd) value into `t`'s bits.
pub(crate) fn round_bits(v: f64, t: ElementType) -> u64 {
    match t {
        ElementType::F64 => v.to_bits(),
        ElementType::F32 => (v as f32).to_bits() as u64,
        _ => t.float_format().map_or(0, |f| round_to_bits(v, &f)),
    }
}

/// Calls a scalar computation on scalar arguments; checks the result types.
pub(crate) fn call_scalars(
    run: &mut dyn Calls,
    comp: CompId,
    args: &[(ElementType, u64)],
    want: &[ElementType],
) -> Result<Vec<u64>, OpError> {
    let vals = args
        .iter()
        .map(|&(t, b)| from_bits(&ArrayShape::new(t, vec![]), &[b]).map(Value::Array))
        .collect::<Result<Vec<_>, _>>()?;
    scalar_results(run.call(comp, vals)?.into_flat(), want, None)
}

/// A plain binary op on scalar bits, with the elementwise semantics.
pub(crate) fn plain(op: Opcode, t: ElementType, a: u64, b: u64) -> Result<u64, OpError> {
    if t.is_float() {
        let f = math::binary(op).ok_or_else(|| bad(format!("{op} on {t}")))?;
        return Ok(round_bits(f(bits_value(a, t), bits_value(b, t)), t));
    }
    let w = t.bit_width();
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    if t.is_pred() {
        return Ok(match op {
            Opcode::And | Opcode::Minimum | Opcode::Multiply => a & b,
            Opcode::Xor => a ^ b,
            _ => a | b,
        } & 1);
    }
    let f = int_binary(op).ok_or_else(|| bad(format!("{op} on {t}")))?;
    let val = |v: u64| {
        let v = v as i128;
        if t.is_signed_int() {
            let s = 128 - w;
            (v << s) >> s
        } else {
            v
        }
    };
    Ok((f(val(a), val(b), w, t.is_signed_int()) as u64) & mask)
}
