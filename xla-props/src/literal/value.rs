//! `Value`: what an HLO instruction evaluates to (an array, a tuple, or a token).

use super::storage::Literal;
use crate::hlo::Shape;

/// The value of an HLO instruction.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::literal::{Literal, Value};
/// let v = Value::Tuple(vec![
///     Value::Array(Literal::scalar(ElementType::F32, 1.5)),
///     Value::Tuple(vec![Value::Array(Literal::scalar(ElementType::S32, 7.0))]),
/// ]);
/// let leaves = v.flatten();
/// assert_eq!(leaves.len(), 2);
/// assert_eq!(leaves[1].get_i128(0), 7);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A dense array.
    Array(Literal),
    /// A tuple.
    Tuple(Vec<Value>),
    /// A token (no data).
    Token,
}

impl Value {
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&Literal> {
        match self {
            Value::Array(l) => Some(l),
            _ => None,
        }
    }
    /// The tuple elements, if this is a tuple.
    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(t) => Some(t),
            _ => None,
        }
    }
    /// Leaf arrays in depth-first order (tuples flattened, tokens dropped).
    pub fn flatten(&self) -> Vec<Literal> {
        let mut out = Vec::new();
        fn walk(v: &Value, out: &mut Vec<Literal>) {
            match v {
                Value::Array(l) => out.push(l.clone()),
                Value::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
                Value::Token => {}
            }
        }
        walk(self, &mut out);
        out
    }
    /// Consumes the value and returns its leaf arrays (tuples flattened, tokens dropped).
    pub fn into_flat(self) -> Vec<Literal> {
        match self {
            Value::Array(l) => vec![l],
            Value::Tuple(t) => t.into_iter().flat_map(Value::into_flat).collect(),
            Value::Token => Vec::new(),
        }
    }
    /// The shape of this value.
    pub fn shape(&self) -> Shape {
        match self {
            Value::Array(l) => Shape::Array(l.shape()),
            Value::Tuple(t) => Shape::Tuple(t.iter().map(Value::shape).collect()),
            Value::Token => Shape::Token,
        }
    }
}
