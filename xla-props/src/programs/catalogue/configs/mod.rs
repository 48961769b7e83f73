//! The attribute-class cases: one module per class of
//! [`crate::hlo::ATTRIBUTE_CLASSES`] (the `configurations` shape set). Each
//! op family has its own file; a class's operand shapes are part of the class
//! (`first_dims`), so a case name still parses back without building anything.

mod contraction;
mod control;
mod elementwise;
mod indexing;
mod reduction;
mod shape_ops;

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{arr, Builder, BuiltCase, CatalogueError, OpCase};
use crate::hlo::{
    class_families, infer, Attrs, ElementType, InstrId, Layout, Opcode, Shape, ATTRIBUTE_CLASSES,
};
use crate::inputs::Role;

type Res<T> = Result<T, String>;

/// The classes of `op` that apply to `dtype`, in table order (the variant parameters).
pub(crate) fn classes(op: Opcode, dtype: ElementType) -> &'static [&'static str] {
    type Table = HashMap<(Opcode, ElementType), Vec<&'static str>>;
    static TABLE: OnceLock<Table> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t: Table = HashMap::new();
        for &op in Opcode::ALL {
            for &dtype in ElementType::ALL {
                let names: Vec<&'static str> = class_families(op)
                    .filter(|f| f.applies_to(dtype))
                    .flat_map(|f| f.classes.iter().copied())
                    .filter(|c| applies(op, c, dtype))
                    .collect();
                if !names.is_empty() {
                    t.insert((op, dtype), names);
                }
            }
        }
        t
    });
    table.get(&(op, dtype)).map_or(&[], Vec::as_slice)
}

/// Per-class dtype conditions beyond the family's (a target type must exist).
fn applies(op: Opcode, class: &str, dtype: ElementType) -> bool {
    match op {
        Opcode::BitcastConvert => elementwise::bitcast_target(class, dtype).is_some(),
        _ => true,
    }
}

/// The dims of a class's main operand (the shape segment of its case names).
pub(crate) fn first_dims(op: Opcode, class: &str) -> &'static [i64] {
    type Table = HashMap<(Opcode, String), Vec<i64>>;
    static TABLE: OnceLock<Table> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        ATTRIBUTE_CLASSES
            .iter()
            .flat_map(|f| f.classes.iter().map(move |c| (f.op, *c)))
            .map(|(op, c)| ((op, c.to_string()), dims_of(op, c)))
            .collect()
    });
    table
        .get(&(op, class.to_string()))
        .map_or(&[], Vec::as_slice)
}

fn dims_of(op: Opcode, class: &str) -> Vec<i64> {
    let first_dims = family(op).map_or(control::first_dims as FirstDims, |f| f.0);
    first_dims(op, class)
}

type FirstDims = fn(Opcode, &str) -> Vec<i64>;
type Build = fn(&mut Cfg, Opcode, &str, &[i64]) -> Res<InstrId>;

/// The op family module that has `op`'s attribute classes: its first-dims
/// and build functions; None for an op without attribute classes.
fn family(op: Opcode) -> Option<(FirstDims, Build)> {
    use Opcode as O;
    Some(match op {
        O::Transpose
        | O::Reverse
        | O::Slice
        | O::Pad
        | O::Concatenate
        | O::Reshape
        | O::Broadcast
        | O::Iota => (shape_ops::first_dims, shape_ops::build),
        O::Select | O::Clamp | O::Compare | O::BitcastConvert | O::ReducePrecision => {
            (elementwise::first_dims, elementwise::build)
        }
        O::DynamicSlice | O::DynamicUpdateSlice | O::Gather | O::Scatter => {
            (indexing::first_dims, indexing::build)
        }
        O::Reduce | O::ReduceWindow | O::Sort => (reduction::first_dims, reduction::build),
        O::Dot | O::Convolution => (contraction::first_dims, contraction::build),
        O::While | O::Conditional | O::Call | O::Map | O::Tuple => {
            (control::first_dims, control::build)
        }
        _ => return None,
    })
}

/// Builds the module of an attribute-class case.
pub(crate) fn build(key: &OpCase<'_>) -> Result<BuiltCase, CatalogueError> {
    let err = |why: String| key.err(&why);
    let class = key.param.ok_or_else(|| err("no attribute class".into()))?;
    let mut c = Cfg {
        b: Builder::default(),
        t: key.dtype,
        layout: Some(key.layout.clone()),
    };
    let (_, build) =
        family(key.op).ok_or_else(|| err(format!("`{}` has no attribute classes", key.op)))?;
    let root = build(&mut c, key.op, class, key.dims).map_err(err)?;
    Ok(c.b.finish(root))
}

/// A module under construction: shapes are inferred, the case's layout goes
/// to the first parameter of the case's dtype and rank that asks for it.
pub(super) struct Cfg {
    pub b: Builder,
    /// The case's element type.
    pub t: ElementType,
    layout: Option<Layout>,
}

/// `shape` with the default layout on every array that has none.
fn laid_out(shape: Shape) -> Shape {
    match shape {
        Shape::Array(mut a) => {
            if a.layout.is_none() {
                a.layout = Some(Layout::row_major(a.dims.len()));
            }
            Shape::Array(a)
        }
        Shape::Tuple(v) => Shape::Tuple(v.into_iter().map(laid_out).collect()),
        other => other,
    }
}

impl Cfg {
    /// The case's layout, once, when it fits `rank`.
    pub fn take_layout(&mut self, rank: usize) -> Option<Layout> {
        self.layout
            .take()
            .filter(|l| l.minor_to_major.len() == rank)
    }
    /// The case's main operand: the case's dtype, dims and layout.
    pub fn main(&mut self, dims: &[i64], role: Role) -> InstrId {
        let layout = self.take_layout(dims.len());
        self.b.param(arr(self.t, dims.to_vec(), layout), role)
    }
    /// A parameter in the default layout.
    pub fn param(&mut self, dtype: ElementType, dims: &[i64], role: Role) -> InstrId {
        self.b.param(arr(dtype, dims.to_vec(), None), role)
    }
    /// The shape of an instruction built so far.
    pub fn shape(&self, id: InstrId) -> &Shape {
        &self.b.instrs[id.index()].shape
    }
    /// An instruction whose shape is inferred from its operands and attributes.
    pub fn op(&mut self, op: Opcode, operands: Vec<InstrId>, attrs: Attrs) -> Res<InstrId> {
        self.op_declared(op, operands, attrs, None)
    }
    /// An instruction with a declared shape (checked by inference where it decides it).
    pub fn op_declared(
        &mut self,
        op: Opcode,
        operands: Vec<InstrId>,
        attrs: Attrs,
        declared: Option<Shape>,
    ) -> Res<InstrId> {
        let shapes: Vec<&Shape> = operands.iter().map(|&o| self.shape(o)).collect();
        let shape = infer(op, &shapes, &attrs, &self.b.comps, declared.as_ref())
            .map_err(|e| format!("{op}: {e}"))?;
        Ok(self.b.push(op, laid_out(shape), operands, attrs))
    }
}

/// Digits of a class-name segment as dimension numbers (`"02"` -> `[0, 2]`, `"none"` -> `[]`).
pub(super) fn digits(s: &str) -> Vec<i64> {
    s.bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| i64::from(b - b'0'))
        .collect()
}
