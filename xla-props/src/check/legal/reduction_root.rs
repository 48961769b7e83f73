//! The reduction at a module's root, and the module with its constants
//! mapped: what the reassociation bounds evaluate magnitudes on.

use crate::hlo::{CompId, Computation, ConstantData, InstrId, Instruction, Module, Opcode};

/// The reduction a module's root computes, with the computations that lead
/// to it (the entry first): the entry's root, or the root of what a root
/// call or fusion runs (JAX wraps `cumsum` in a call, XLA a reduce in a
/// fusion), when every call on the way takes only parameters and constants
/// and the reduction itself only reads parameters and constants, or data
/// movement of them (a slice, transpose, reshape, broadcast, copy or
/// reverse: the operand forms): then its terms' magnitudes are those of the
/// (mapped) inputs and constants, which data movement only moves.
pub(super) fn root_instr(module: &Module) -> Option<(Vec<CompId>, &Computation, &Instruction)> {
    let mut path = vec![module.entry];
    let mut comp = module.entry_computation();
    let mut root = comp.instr(comp.root);
    let leaf = |c: &Computation, ops: &[InstrId]| ops.iter().all(|&o| moves_a_leaf(c, o, 0));
    for _depth in 0..8 {
        let callee = match root.opcode {
            Opcode::Fusion => root.attrs.calls.first().copied()?,
            Opcode::Call => root.attrs.to_apply?,
            _ if path.len() == 1 || leaf(comp, &root.operands) => return Some((path, comp, root)),
            _ => return None,
        };
        if !leaf(comp, &root.operands) {
            return None;
        }
        comp = module.computations.get(callee.index())?;
        root = comp.instr(comp.root);
        path.push(callee);
    }
    None
}

/// True when `id` (in `c`) is a parameter or a constant, or data movement
/// of them: its values are those of a leaf, moved, so a leaf mapped
/// elementwise (`|x|`, a sign) maps them.
fn moves_a_leaf(c: &Computation, id: InstrId, depth: usize) -> bool {
    let i = c.instr(id);
    match i.opcode {
        Opcode::Parameter | Opcode::Constant => true,
        Opcode::Slice
        | Opcode::Transpose
        | Opcode::Reshape
        | Opcode::Broadcast
        | Opcode::Copy
        | Opcode::Reverse
            if depth < 8 =>
        {
            i.operands.iter().all(|&o| moves_a_leaf(c, o, depth + 1))
        }
        _ => false,
    }
}

/// `module` with the float constants of its entry computation mapped
/// elementwise by `f`: a reduction whose terms are constants (an operand
/// form, or every operand constant) has its magnitudes taken on them too.
///
/// The constants of the computations a root call or fusion leads through
/// (`root_instr`) are mapped too; complex constants are mapped by `fc`.
pub(super) fn mapped_constants(
    module: &Module,
    f: impl Fn(f64) -> f64,
    fc: impl Fn((f64, f64)) -> (f64, f64),
) -> Module {
    let mut m = module.clone();
    let path = root_instr(module).map_or_else(|| vec![module.entry], |(p, _, _)| p);
    for c in path {
        let Some(comp) = m.computations.get_mut(c.index()) else {
            continue;
        };
        for i in &mut comp.instructions {
            match &mut i.attrs.constant {
                Some(ConstantData::Float(v)) => v.iter_mut().for_each(|x| *x = f(*x)),
                Some(ConstantData::Complex(v)) => v.iter_mut().for_each(|z| *z = fc(*z)),
                _ => {}
            }
        }
    }
    m
}
