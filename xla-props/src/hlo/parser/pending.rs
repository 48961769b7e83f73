//! What the parser reads before names are resolved: name references, the
//! computation slot they fill, pending instructions and computations.

use crate::hlo::ir::Attrs;
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

/// Where a computation reference goes once resolved.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Calls,
    ToApply,
    Condition,
    Body,
    Branches,
    TrueBranch,
    FalseBranch,
    Select,
    Scatter,
}

/// A name used before it can be resolved, with where it was written.
pub(super) struct NameRef {
    pub(super) name: String,
    pub(super) pos: usize,
}

pub(super) struct PendingInstr {
    pub(super) name: NameRef,
    pub(super) opcode: Opcode,
    /// None when the text left it out (inferred when names are resolved).
    pub(super) shape: Option<Shape>,
    pub(super) operands: Vec<NameRef>,
    pub(super) attrs: Attrs,
    pub(super) comp_refs: Vec<(Slot, NameRef)>,
    /// A nested operand instruction; its name is generated.
    pub(super) synthetic: bool,
}

pub(super) struct PendingComp {
    pub(super) name: NameRef,
    pub(super) instrs: Vec<PendingInstr>,
    pub(super) root: Option<usize>,
    pub(super) other: Vec<(String, String)>,
}
