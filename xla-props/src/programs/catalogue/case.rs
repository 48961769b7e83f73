//! A single-op case as its name says it (`OpCase`), and the form the
//! catalogue builds an op in (`Form`).

use super::builder::{arr, CatalogueError};
use crate::hlo::{Category, ElementType, Layout, Opcode, Shape};

/// One single-op case, as its name says it: what the catalogue builds from.
#[derive(Clone, Copy)]
pub struct OpCase<'a> {
    /// The case's name, for errors.
    pub name: &'a dyn std::fmt::Display,
    /// The op.
    pub op: Opcode,
    /// Its element type.
    pub dtype: ElementType,
    /// The main operand's dims.
    pub dims: &'a [i64],
    /// The main operand's layout.
    pub layout: &'a Layout,
    /// The case's parameter (a comparison direction, a conversion target,
    /// an attribute class, a chain's follower), if any.
    pub param: Option<&'a str>,
}

/// What a form's builder returns.
pub(crate) type Res<T> = Result<T, CatalogueError>;

impl<'a> OpCase<'a> {
    /// What every form's builder reads of the case: element type, dims,
    /// rank, layout, the main operand's shape and the parameter (or "").
    pub(crate) fn site(&self) -> (ElementType, Vec<i64>, usize, Layout, Shape, &'a str) {
        let dims = self.dims.to_vec();
        let operand = arr(self.dtype, dims.clone(), Some(self.layout.clone()));
        let rank = dims.len();
        (
            self.dtype,
            dims,
            rank,
            self.layout.clone(),
            operand,
            self.param.unwrap_or(""),
        )
    }
    pub(crate) fn err(&self, why: &str) -> CatalogueError {
        CatalogueError {
            case: self.name.to_string(),
            why: why.to_string(),
        }
    }
}

/// How the catalogue builds an op's cases; decides its shape table and parameters (in `property`'s case space).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[expect(missing_docs)]
pub enum Form {
    Elementwise,
    Compare,
    Convert,
    BitcastConvert,
    ReducePrecision,
    Iota,
    Copy,
    Broadcast,
    Reshape,
    Transpose,
    Slice,
    Concatenate,
    Pad,
    Reverse,
    DynamicSlice,
    DynamicUpdateSlice,
    Gather,
    Scatter,
    Reduce,
    ReduceWindow,
    Sort,
    Dot,
    Convolution,
    /// while, conditional, call, map, tuple: built only as attribute classes.
    Structure,
    /// A multi-op program template (`Template::Program`).
    Program,
}

impl Form {
    /// The form of an op the catalogue builds, or None.
    pub fn of(op: Opcode) -> Option<Form> {
        use Opcode as O;
        Some(match op {
            O::Compare => Form::Compare,
            O::Convert => Form::Convert,
            O::BitcastConvert => Form::BitcastConvert,
            O::ReducePrecision => Form::ReducePrecision,
            O::Iota => Form::Iota,
            O::Copy => Form::Copy,
            O::Broadcast => Form::Broadcast,
            O::Reshape => Form::Reshape,
            O::Transpose => Form::Transpose,
            O::Slice => Form::Slice,
            O::Concatenate => Form::Concatenate,
            O::Pad => Form::Pad,
            O::Reverse => Form::Reverse,
            O::DynamicSlice => Form::DynamicSlice,
            O::DynamicUpdateSlice => Form::DynamicUpdateSlice,
            O::Gather => Form::Gather,
            O::Scatter => Form::Scatter,
            O::Reduce => Form::Reduce,
            O::ReduceWindow => Form::ReduceWindow,
            O::Sort => Form::Sort,
            O::Dot => Form::Dot,
            O::Convolution => Form::Convolution,
            O::Select | O::Clamp => Form::Elementwise,
            O::While | O::Conditional | O::Call | O::Map | O::Tuple => Form::Structure,
            _ if matches!(
                op.category(),
                Category::ElementwiseUnary | Category::ElementwiseBinary
            ) =>
            {
                Form::Elementwise
            }
            _ => return None,
        })
    }
}
