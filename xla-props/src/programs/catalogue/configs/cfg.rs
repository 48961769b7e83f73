//! `Cfg`: an attribute-class case's module under construction, with shapes
//! inferred and the case's layout on the operand that asks for it.

use crate::hlo::{infer, Attrs, ElementType, InstrId, Layout, Opcode, Shape};
use crate::inputs::Role;
use crate::programs::catalogue::{arr, Builder};

/// What a class's builder returns (the error is the case's `why`).
pub(crate) type Res<T> = Result<T, String>;

/// A module under construction: shapes are inferred, the case's layout goes
/// to the first parameter of the case's dtype and rank that asks for it.
pub(crate) struct Cfg {
    pub b: Builder,
    /// The case's element type.
    pub t: ElementType,
    pub(super) layout: Option<Layout>,
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
pub(crate) fn digits(s: &str) -> Vec<i64> {
    s.bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| i64::from(b - b'0'))
        .collect()
}
