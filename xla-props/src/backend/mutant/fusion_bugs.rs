//! Fusion-only miscompilations: a backend that wraps the interpreter and
//! injects ONE miscompilation into ONE fused computation (`buggy:BUG@COMPUTATION`).
//! `isolate` is measured against them.
//!
//! The bug is applied only while the named computation is called by a
//! fusion, so splitting the fusion (inlining its instructions) makes it
//! vanish, the way a fusion-only lowering bug does.

use crate::backend::{Backend, BackendError, Executable, Interpreter};
use crate::check::Numerics;
use crate::hlo::{Attrs, ConstantData, ElementType, InstrId, Instruction, Module, Opcode, Shape};

/// One injected miscompilation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// `convert(convert(x: f32) -> f16) -> f32` returns `x`: the f16 round trip is elided.
    ElideRoundTrip,
    /// A multiply by a constant (or a broadcast constant) uses the constant times `1 + 2^-5`.
    WrongConstant,
    /// A slice starts one element later in its last sliced dimension (earlier when at the edge).
    SliceOffByOne,
}

impl Bug {
    /// Every bug.
    pub const ALL: [Bug; 3] = [Bug::ElideRoundTrip, Bug::WrongConstant, Bug::SliceOffByOne];
    /// Its name in backend names.
    pub fn name(self) -> &'static str {
        match self {
            Bug::ElideRoundTrip => "elide-round-trip",
            Bug::WrongConstant => "wrong-constant",
            Bug::SliceOffByOne => "slice-off-by-one",
        }
    }
    /// The opcode of the instruction the bug corrupts.
    pub fn opcode(self) -> Opcode {
        match self {
            Bug::ElideRoundTrip => Opcode::Convert,
            Bug::WrongConstant => Opcode::Multiply,
            Bug::SliceOffByOne => Opcode::Slice,
        }
    }
}

/// The interpreter with one bug in one fused computation.
///
/// ```
/// use xla_props::backend::Backend;
/// use xla_props::backend::mutant::{Bug, Buggy};
/// let b = Buggy::new(Bug::ElideRoundTrip, "quant_residual.3");
/// assert_eq!(b.name(), "buggy:elide-round-trip@quant_residual.3");
/// assert_eq!(Buggy::from_name(b.name()).unwrap().name(), b.name());
/// ```
#[derive(Clone, Debug)]
pub struct Buggy {
    bug: Bug,
    computation: String,
    name: String,
    inner: Interpreter,
}

impl Buggy {
    /// `bug` in the fused computation named `computation`.
    pub fn new(bug: Bug, computation: &str) -> Buggy {
        Buggy {
            bug,
            computation: computation.to_string(),
            name: format!("buggy:{}@{computation}", bug.name()),
            inner: Interpreter::default(),
        }
    }
    /// Parses `buggy:BUG@COMPUTATION`.
    pub fn from_name(name: &str) -> Option<Buggy> {
        let rest = name.strip_prefix("buggy:")?;
        let (bug, comp) = rest.split_once('@')?;
        let bug = Bug::ALL.into_iter().find(|b| b.name() == bug)?;
        Some(Buggy::new(bug, comp))
    }
    /// The instructions of the target computation this backend computes
    /// wrongly, operands before users (empty when it is not a fused computation of `module`).
    pub fn corrupted(&self, module: &Module) -> Vec<String> {
        let bad = self.miscompile(module);
        let (Some(a), Some(b)) = (
            module.find_computation(&self.computation),
            bad.find_computation(&self.computation),
        ) else {
            return Vec::new();
        };
        let (old, new) = (module.comp(a), bad.comp(b));
        old.post_order()
            .unwrap_or_default()
            .into_iter()
            .filter(|&i| {
                let name = &old.instr(i).name;
                new.find(name).map(|j| new.instr(j)) != Some(old.instr(i))
            })
            .map(|i| old.instr(i).name.clone())
            .collect()
    }
    /// The module as this backend miscompiles it (names kept, so probes still line up).
    pub fn miscompile(&self, module: &Module) -> Module {
        let mut m = module.clone();
        let Some(target) = m.find_computation(&self.computation) else {
            return m;
        };
        let fused = m.computations.iter().any(|c| {
            c.instructions
                .iter()
                .any(|i| i.opcode == Opcode::Fusion && i.attrs.calls.contains(&target))
        });
        if !fused {
            return m;
        }
        let comp = &mut m.computations[target.index()];
        match self.bug {
            Bug::ElideRoundTrip => elide_round_trip(comp),
            Bug::WrongConstant => wrong_constant(comp),
            Bug::SliceOffByOne => slice_off_by_one(comp),
        }
        m
    }
}

impl Backend for Buggy {
    fn name(&self) -> &str {
        &self.name
    }
    fn numerics(&self) -> Numerics {
        self.inner.numerics()
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        self.inner.compile(&self.miscompile(module))
    }
}

fn dtype_of(shape: &Shape) -> Option<crate::hlo::ElementType> {
    shape.as_array().map(|a| a.dtype)
}

fn elide_round_trip(comp: &mut crate::hlo::Computation) {
    use crate::hlo::ElementType::{F16, F32};
    for k in 0..comp.instructions.len() {
        let ins = &comp.instructions[k];
        if ins.opcode != Opcode::Convert || dtype_of(&ins.shape) != Some(F32) {
            continue;
        }
        let narrow = &comp.instructions[ins.operands[0].index()];
        if narrow.opcode != Opcode::Convert || dtype_of(&narrow.shape) != Some(F16) {
            continue;
        }
        let x = narrow.operands[0];
        if dtype_of(&comp.instructions[x.index()].shape) != Some(F32) {
            continue;
        }
        comp.instructions[k].operands = vec![x];
    }
}

fn is_constant_like(comp: &crate::hlo::Computation, id: InstrId) -> bool {
    let ins = comp.instr(id);
    match ins.opcode {
        Opcode::Constant => true,
        Opcode::Broadcast => comp.instr(ins.operands[0]).opcode == Opcode::Constant,
        _ => false,
    }
}

fn wrong_constant(comp: &mut crate::hlo::Computation) {
    let n = comp.instructions.len();
    for k in 0..n {
        let ins = comp.instructions[k].clone();
        if ins.opcode != Opcode::Multiply
            || !ins.operands.iter().any(|&o| is_constant_like(comp, o))
        {
            continue;
        }
        let Some(a) = ins.shape.as_array() else {
            continue;
        };
        let stem = format!("{}.bug", ins.name);
        scale_by_constant(comp, k, a.dtype, 1.0 + 2f64.powi(-5), &stem);
    }
}

/// Makes instruction `k` of `comp` multiply a copy of itself by `factor`
/// (a `dtype` scalar, broadcast): appends `{stem}.factor`,
/// `{stem}.broadcast` and `{stem}.inner` (the copy), and makes `(inner,
/// broadcast)` the operands of `k`, whose opcode the caller makes a
/// multiply where it is not one.
pub(crate) fn scale_by_constant(
    comp: &mut crate::hlo::Computation,
    k: usize,
    dtype: ElementType,
    factor: f64,
    stem: &str,
) {
    let ins = comp.instructions[k].clone();
    let mut constant = Instruction::new(
        format!("{stem}.factor"),
        Opcode::Constant,
        Shape::scalar(dtype),
        vec![],
    );
    constant.attrs.constant = Some(ConstantData::Float(vec![factor]));
    let f = comp.push(constant);
    let mut bcast = Instruction::new(
        format!("{stem}.broadcast"),
        Opcode::Broadcast,
        ins.shape.clone(),
        vec![f],
    );
    bcast.attrs = Attrs {
        dimensions: Some(vec![]),
        ..Attrs::default()
    };
    let b = comp.push(bcast);
    let mut inner = ins;
    inner.name = format!("{stem}.inner");
    let i = comp.push(inner);
    comp.instructions[k].operands = vec![i, b];
}

fn slice_off_by_one(comp: &mut crate::hlo::Computation) {
    for k in 0..comp.instructions.len() {
        let ins = &comp.instructions[k];
        if ins.opcode != Opcode::Slice {
            continue;
        }
        let Some(dims) = comp.instructions[ins.operands[0].index()]
            .shape
            .as_array()
            .map(|a| a.dims.clone())
        else {
            continue;
        };
        let Some(mut slice) = ins.attrs.slice.clone() else {
            continue;
        };
        let Some(d) = (0..slice.len()).rev().find(|&d| {
            let s = slice[d];
            s.limit - s.start < dims[d]
        }) else {
            continue;
        };
        let s = &mut slice[d];
        if s.limit < dims[d] {
            s.start += 1;
            s.limit += 1;
        } else {
            s.start -= 1;
            s.limit -= 1;
        }
        comp.instructions[k].attrs.slice = Some(slice);
    }
}
