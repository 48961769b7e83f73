//! Building one computation: the instruction list, the value scope, and the
//! error type the reader's stages share (below `convert`, `chlo` and `dense`).

use std::collections::{HashMap, HashSet};

use super::syntax::{Quant, Type};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, Computation, InstrId, Instruction, SliceDim};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

pub(crate) type R<T> = Result<T, (usize, String)>;

pub(crate) fn err<T>(pos: usize, msg: impl Into<String>) -> R<T> {
    Err((pos, msg.into()))
}

/// Builds one computation.
pub(crate) struct Builder {
    pub instrs: Vec<Instruction>,
    pub(super) scope: HashMap<String, Vec<InstrId>>,
    pub(super) params: usize,
    /// The `get-tuple-element`s the reader made to take a multi-result op's
    /// results apart; dropped from a function when nothing uses them.
    pub(super) synthetic: Vec<InstrId>,
    /// Instructions an op's `loc("name")` named.
    pub(super) located: HashSet<InstrId>,
    /// Values of a quantized type (held as their storage integers).
    pub(super) quant: HashMap<InstrId, Quant>,
    /// The `interpreter.probe`s of this region, in order: the probe id and
    /// the value probed.
    pub(crate) probes: Vec<(String, InstrId)>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            instrs: Vec::new(),
            scope: HashMap::new(),
            params: 0,
            synthetic: Vec::new(),
            located: HashSet::new(),
            quant: HashMap::new(),
            probes: Vec::new(),
        }
    }

    pub fn shape(&self, id: InstrId) -> &Shape {
        &self.instrs[id.index()].shape
    }

    /// The array shape of `id` (dims, dtype), or an error at `pos`.
    pub fn array(&self, id: InstrId, pos: usize) -> R<(Vec<i64>, ElementType)> {
        match self.shape(id) {
            Shape::Array(a) => Ok((a.dims.clone(), a.dtype)),
            s => err(pos, format!("expected a tensor operand, found {s}")),
        }
    }

    /// `x` restricted to index `k` of its dimension `d`, that dimension
    /// removed: a slice, then a reshape.
    pub fn take_index(&mut self, x: InstrId, d: usize, k: i64, pos: usize) -> R<InstrId> {
        let (dims, t) = self.array(x, pos)?;
        let slice = dims
            .iter()
            .enumerate()
            .map(|(j, &n)| SliceDim {
                start: if j == d { k } else { 0 },
                limit: if j == d { k + 1 } else { n },
                stride: 1,
            })
            .collect();
        let mut one = dims.clone();
        one[d] = 1;
        let s = self.push(
            Opcode::Slice,
            Shape::array(t, one),
            vec![x],
            Attrs {
                slice: Some(slice),
                ..Attrs::default()
            },
        );
        let mut less = dims;
        less.remove(d);
        Ok(self.push(
            Opcode::Reshape,
            Shape::array(t, less),
            vec![s],
            Attrs::default(),
        ))
    }

    pub fn push(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        let id = InstrId(self.instrs.len() as u32);
        let name = format!("{}.{}", opcode.name().replace('-', "_"), id.0);
        let i = Instruction::with_attrs(name, opcode, shape, operands, attrs);
        self.instrs.push(i);
        id
    }

    pub(super) fn param(&mut self, shape: Shape) -> InstrId {
        let n = self.params as i64;
        self.params += 1;
        self.push(
            Opcode::Parameter,
            shape,
            vec![],
            Attrs {
                parameter_number: Some(n),
                ..Attrs::default()
            },
        )
    }

    pub fn gte(&mut self, tuple: InstrId, k: usize) -> InstrId {
        let shape = match self.shape(tuple) {
            Shape::Tuple(t) => t[k].clone(),
            s => s.clone(),
        };
        self.push(
            Opcode::GetTupleElement,
            shape,
            vec![tuple],
            Attrs {
                index: Some(k as i64),
                ..Attrs::default()
            },
        )
    }

    pub fn tuple(&mut self, items: Vec<InstrId>) -> InstrId {
        let shape = Shape::Tuple(items.iter().map(|&i| self.shape(i).clone()).collect());
        self.push(Opcode::Tuple, shape, items, Attrs::default())
    }

    pub(super) fn bind(&mut self, name: &str, ids: Vec<InstrId>) {
        self.scope.insert(name.to_string(), ids);
    }

    /// The computation `name` of the instructions built, with root `root`.
    pub fn finish(self, name: impl Into<String>, root: InstrId) -> Computation {
        Computation::new(name, self.instrs, root)
    }

    /// Records that `id` holds a value of type `t`: a quantized type's
    /// values are its storage integers.
    pub(super) fn note_type(&mut self, id: InstrId, t: &Type) {
        if let Type::Quant(_, q) = t {
            self.quant.insert(id, (**q).clone());
        }
    }

    /// A parameter for each `(name, type)` argument of a function or
    /// region, bound to its name.
    pub(super) fn bind_params(&mut self, args: &[(String, Type)]) {
        for (name, t) in args {
            let p = self.param(shape_of(t));
            self.note_type(p, t);
            self.bind(name, vec![p]);
        }
    }
}

pub(crate) fn shape_of(t: &Type) -> Shape {
    match t {
        Type::Tensor(dims, e) => Shape::array(*e, dims.clone()),
        Type::Token => Shape::Token,
        Type::Quant(dims, q) => Shape::array(q.storage, dims.clone()),
        Type::Tuple(items) => Shape::Tuple(items.iter().map(shape_of).collect()),
    }
}

/// Emits one instruction of `shapes.len()` results (a tuple when several).
pub(crate) fn emit(
    b: &mut Builder,
    opcode: Opcode,
    shapes: Vec<Shape>,
    operands: Vec<InstrId>,
    attrs: Attrs,
) -> Vec<InstrId> {
    if shapes.len() == 1 {
        return vec![b.push(opcode, shapes[0].clone(), operands, attrs)];
    }
    let n = shapes.len();
    let t = b.push(opcode, Shape::Tuple(shapes), operands, attrs);
    let parts: Vec<InstrId> = (0..n).map(|k| b.gte(t, k)).collect();
    b.synthetic.extend(parts.iter().copied());
    parts
}
