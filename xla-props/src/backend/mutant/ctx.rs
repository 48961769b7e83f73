//! What an emitter kernel sees: the instruction, its operand values, and a
//! way to run one instruction on the base backend (`Base`, which the
//! stepper implements); plus the small array helpers the kernels share.
//! Kernels depend on this file, never on the stepper that calls them.

use std::collections::HashMap;

use crate::backend::error::BackendError;
use crate::hlo::{ArrayShape, Computation, ElementType, InstrId, Instruction, Module};
use crate::literal::{Literal, Value};

pub(crate) type Res<T> = Result<T, BackendError>;

/// Runs single instructions on the base backend.
pub(crate) trait Base {
    /// The module being run (after the mutation's rewrite).
    fn module(&self) -> &Module;
    /// Runs one instruction on the base backend, on these operand values;
    /// `extra` is a computation appended to the module (its id replaces `to_apply`).
    fn single(
        &self,
        instr: &Instruction,
        operands: &[Value],
        extra: Option<Computation>,
    ) -> Res<Value>;
}

/// What a kernel sees.
pub(crate) struct Ctx<'s> {
    pub stepper: &'s dyn Base,
    pub comp: &'s Computation,
    pub instr: &'s Instruction,
    pub operands: &'s [Literal],
    pub values: &'s HashMap<InstrId, Value>,
}

impl Ctx<'_> {
    /// The instruction's first `dimensions` entry (0 without one).
    pub(crate) fn first_dimension(&self) -> usize {
        let dims = self.instr.attrs.dimensions.as_ref();
        dims.and_then(|v| v.first()).copied().unwrap_or(0) as usize
    }
    pub(crate) fn base(&self) -> Res<Value> {
        self.base_on(self.instr, self.operands.to_vec())
    }
    pub(crate) fn base_on(&self, instr: &Instruction, operands: Vec<Literal>) -> Res<Value> {
        let ops: Vec<Value> = operands.into_iter().map(Value::Array).collect();
        self.stepper.single(instr, &ops, None)
    }
    pub(crate) fn base_array(&self) -> Res<Literal> {
        array(self.base()?)
    }
    pub(crate) fn op(&self, k: usize) -> Res<&Literal> {
        self.operands.get(k).ok_or_else(|| {
            BackendError::Compile(format!("`{}` lacks operand {k}", self.instr.name))
        })
    }
}

pub(crate) fn array(v: Value) -> Res<Literal> {
    match v {
        Value::Array(l) => Ok(l),
        _ => Err(BackendError::unsupported(
            "mutant: a tuple where an array was expected",
        )),
    }
}

pub(crate) fn dims(l: &Literal) -> Vec<usize> {
    l.dims().to_vec()
}

pub(crate) fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        let n = dims[d].max(1);
        idx[d] = i % n;
        i /= n;
    }
    idx
}

pub(crate) fn ravel(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// `v` rounded once to `t`.
pub(crate) fn round_to(t: ElementType, v: f64) -> f64 {
    let mut l = Literal::scalar(t, 0.0);
    l.set_f64(0, v);
    l.get_f64(0)
}

pub(crate) fn scalar_like(t: ElementType) -> Res<Literal> {
    Literal::zeros(&ArrayShape::new(t, vec![])).map_err(|e| BackendError::Execute(e.to_string()))
}

pub(crate) fn literal(t: ElementType, dims: &[usize]) -> Res<Literal> {
    Literal::zeros(&ArrayShape::new(
        t,
        dims.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
    ))
    .map_err(|e| BackendError::Execute(e.to_string()))
}

pub(crate) fn is_subnormal(v: f64, t: ElementType) -> bool {
    t.float_format()
        .is_some_and(|f| v != 0.0 && v.is_finite() && v.abs() < f.min_normal())
}

/// Flushes subnormals to a zero of the same sign (the ftz mutations, at the module boundary).
pub(crate) fn flush(l: &mut Literal) {
    let t = l.dtype();
    for i in 0..l.element_count() {
        let v = l.get_f64(i);
        if is_subnormal(v, t) {
            l.set_f64(i, if v < 0.0 { -0.0 } else { 0.0 });
        }
    }
}
