//! A value with its radii (`Dual`), and the f64 arrays and instructions
//! the radii are computed in.

use crate::hlo::{ArrayShape, ElementType, Instruction, Shape};
use crate::literal::{Literal, Value};
use crate::reference::OpError;

/// A value with its radii.
#[derive(Clone, Debug)]
pub(super) enum Dual {
    Array(Literal, Vec<f64>),
    Tuple(Vec<Dual>),
    Token,
}

impl Dual {
    pub(super) fn value(&self) -> Value {
        match self {
            Dual::Array(l, _) => Value::Array(l.clone()),
            Dual::Tuple(t) => Value::Tuple(t.iter().map(Dual::value).collect()),
            Dual::Token => Value::Token,
        }
    }
    pub(super) fn exact(v: Value) -> Dual {
        match v {
            Value::Array(l) => {
                let n = l.element_count();
                Dual::Array(l, vec![0.0; n])
            }
            Value::Tuple(t) => Dual::Tuple(t.into_iter().map(Dual::exact).collect()),
            Value::Token => Dual::Token,
        }
    }
    /// `v` with every element unbounded.
    pub(super) fn unbounded(v: Value) -> Dual {
        match v {
            Value::Array(l) => {
                let n = l.element_count();
                Dual::Array(l, vec![f64::INFINITY; n])
            }
            Value::Tuple(t) => Dual::Tuple(t.into_iter().map(Dual::unbounded).collect()),
            Value::Token => Dual::Token,
        }
    }
    pub(super) fn is_exact(&self) -> bool {
        match self {
            Dual::Array(_, r) => r.iter().all(|&x| x == 0.0),
            Dual::Tuple(t) => t.iter().all(Dual::is_exact),
            Dual::Token => true,
        }
    }
    pub(super) fn array(&self) -> Option<(&Literal, &[f64])> {
        match self {
            Dual::Array(l, r) => Some((l, r)),
            _ => None,
        }
    }
    /// Its arrays (tuples flattened) onto `values` and their radii onto `radii`.
    pub(super) fn flatten_into(self, values: &mut Vec<Literal>, radii: &mut Vec<Vec<f64>>) {
        match self {
            Dual::Array(l, r) => {
                values.push(l);
                radii.push(r);
            }
            Dual::Tuple(t) => t.into_iter().for_each(|d| d.flatten_into(values, radii)),
            Dual::Token => {}
        }
    }
    /// The elementwise maximum of two radii of the same structure (or
    /// unbounded where they differ).
    pub(super) fn widest(self, other: &Dual) -> Dual {
        match (self, other) {
            (Dual::Array(l, mut r), Dual::Array(m, q)) if r.len() == q.len() => {
                for (i, x) in r.iter_mut().enumerate() {
                    let d = (l.get_f64(i) - m.get_f64(i)).abs();
                    *x = if d.is_nan() {
                        f64::INFINITY
                    } else {
                        x.max(d + q[i])
                    };
                }
                Dual::Array(l, r)
            }
            (Dual::Tuple(a), Dual::Tuple(b)) if a.len() == b.len() => {
                Dual::Tuple(a.into_iter().zip(b).map(|(x, y)| x.widest(y)).collect())
            }
            (d, _) => Dual::unbounded(d.value()),
        }
    }
}

pub(super) fn param_dual<'l>(
    shape: &Shape,
    next: &mut impl Iterator<Item = &'l Literal>,
) -> Option<Dual> {
    match shape {
        Shape::Array(_) => next.next().map(|l| Dual::exact(Value::Array(l.clone()))),
        Shape::Tuple(t) => t
            .iter()
            .map(|s| param_dual(s, next))
            .collect::<Option<Vec<_>>>()
            .map(Dual::Tuple),
        Shape::Token => Some(Dual::Token),
    }
}

/// A literal of f64 values shaped like `like` (its dims and layout).
pub(super) fn f64_literal(like: &Literal, values: &[f64]) -> Result<Literal, OpError> {
    let s = ArrayShape {
        dtype: ElementType::F64,
        dims: like.dims().iter().map(|&d| d as i64).collect(),
        layout: like.layout().cloned(),
    };
    Ok(Literal::from_f64s(&s, values)?)
}

/// `ins` with every array in its shape made f64.
pub(super) fn f64_instruction(ins: &Instruction) -> Instruction {
    fn f64_shape(s: &Shape) -> Shape {
        match s {
            Shape::Array(a) => Shape::Array(ArrayShape {
                dtype: ElementType::F64,
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(f64_shape).collect()),
            Shape::Token => Shape::Token,
        }
    }
    let mut i = ins.clone();
    i.shape = f64_shape(&ins.shape);
    // radii and magnitudes are summed in f64 as they are: a dot
    // algorithm's operand rounding is the caller's to add
    i.attrs.other.retain(|(k, _)| k != "algorithm");
    i
}
