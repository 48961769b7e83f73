//! Looking inside the culprit fusion without splitting it: through the
//! executable's probe when it has one, otherwise by moving the fusion's root
//! to each internal instruction in turn. Also: whether
//! splitting the fusion makes the disagreement vanish.

use std::collections::HashMap;

use super::sides::{judge_module, judge_outputs, Oracle, Tested};
use crate::backend::guarded;
use crate::hlo::rewrite::{inline_fusion, move_fusion_root};
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::{Literal, Value};

/// How the inside of a fusion was looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InsideMethod {
    /// The executable's fusion probe, against the reference's fused intermediates.
    Probe,
    /// Variants of the fusion, kept whole, with the root moved to each internal instruction.
    MovedRoot,
}

/// A fusion of a module, run on the module's arguments: what is looked inside.
#[derive(Clone, Copy, Debug)]
pub struct Fused<'a> {
    /// The module (the extracted culprit).
    pub module: &'a Module,
    /// The fusion, an instruction of its entry computation.
    pub fusion: InstrId,
    /// The module's arguments.
    pub args: &'a [Literal],
}

/// The first internal instruction of a fusion that diverges.
#[derive(Clone, Debug)]
pub struct Inside {
    /// Its id in the fused computation.
    pub id: InstrId,
    /// How it was found.
    pub method: InsideMethod,
}

/// The internal instructions of fused computation of the fusion at the
/// entry root of `module`, in topological order, parameters left out.
fn internal_order(module: &Module, fusion: InstrId) -> Option<(crate::hlo::CompId, Vec<InstrId>)> {
    let callee = *module
        .entry_computation()
        .instr(fusion)
        .attrs
        .calls
        .first()?;
    let comp = module.comp(callee);
    let order = comp
        .post_order()?
        .into_iter()
        .filter(|&i| comp.instr(i).opcode != Opcode::Parameter)
        .collect();
    Some((callee, order))
}

/// Finds the first diverging instruction inside the fusion `at` (an entry
/// instruction of the extracted culprit) run on its arguments.
pub fn look_inside(at: Fused<'_>, oracle: &Oracle, tested: &Tested<'_>) -> Option<Inside> {
    if let Some(id) = by_probe(at, oracle, tested) {
        return Some(Inside {
            id,
            method: InsideMethod::Probe,
        });
    }
    by_moved_root(at, oracle, tested).map(|id| Inside {
        id,
        method: InsideMethod::MovedRoot,
    })
}

/// The first probed intermediate that diverges from the reference's.
pub fn by_probe(at: Fused<'_>, oracle: &Oracle, tested: &Tested<'_>) -> Option<InstrId> {
    let (module, fusion, args) = (at.module, at.fusion, at.args);
    let name = module.entry_computation().instr(fusion).name.clone();
    let expected = oracle.fused_values(module, args, &name)?;
    let probed = probe_values(at, tested)?;
    let (callee, order) = internal_order(module, fusion)?;
    let comp = module.comp(callee);
    let numerics = tested.numerics();
    for id in order {
        let ins = comp.instr(id);
        let (Some(e), Some(a)) = (expected.get(&ins.name), probed.get(&ins.name)) else {
            continue;
        };
        let moved = move_fusion_root(module, fusion, id)?;
        let verdict = judge_outputs(&moved, args, &e.flatten(), &a.flatten(), &numerics);
        if verdict.kind().is_some() {
            return Some(id);
        }
    }
    None
}

/// The backend's probed intermediates of the fusion, by instruction name.
pub(crate) fn probe_values(at: Fused<'_>, tested: &Tested<'_>) -> Option<HashMap<String, Value>> {
    let (module, fusion, args) = (at.module, at.fusion, at.args);
    let entry = module.entry_computation();
    let ins = entry.instr(fusion);
    // the fusion's operand values: entry parameters (the extracted culprit)
    let mut operands = Vec::new();
    for &o in &ins.operands {
        let p = entry.instr(o);
        if p.opcode != Opcode::Parameter {
            return None;
        }
        let k = usize::try_from(p.attrs.parameter_number?).ok()?;
        operands.push(Value::Array(args.get(k)?.clone()));
    }
    let exe = tested.compile(module).ok()?;
    let probe = exe.probe()?;
    tested.count();
    let trace = guarded(tested.name(), || probe.probe_fusion(&ins.name, &operands)).ok()?;
    Some(
        trace
            .into_iter()
            .map(|p| (p.instruction, p.value))
            .collect(),
    )
}

/// Moves the fusion's root (the fusion kept whole) to each fused
/// instruction in topological order and returns the first at which the
/// fusion disagrees. A linear scan, not a bisection: the instructions of a
/// fused computation form a DAG, and a variant rooted at an instruction
/// that does not depend on the culprit agrees even after the culprit, so
/// "disagrees at position k" is not monotone in k. Fused computations are
/// small, and the scan stops at the first disagreement.
pub fn by_moved_root(at: Fused<'_>, oracle: &Oracle, tested: &Tested<'_>) -> Option<InstrId> {
    let (module, fusion, args) = (at.module, at.fusion, at.args);
    let (_, order) = internal_order(module, fusion)?;
    order.into_iter().find(|&id| {
        move_fusion_root(module, fusion, id)
            .map(|m| judge_module(&m, args, oracle, tested).is_disagreement())
            .unwrap_or(false)
    })
}

/// True when the fusion at `fusion`, split into its instructions (every
/// intermediate materialized in its declared type), agrees with the reference.
pub fn vanishes_when_split(at: Fused<'_>, oracle: &Oracle, tested: &Tested<'_>) -> bool {
    let (module, fusion, args) = (at.module, at.fusion, at.args);
    inline_fusion(module, fusion)
        .map(|split| judge_module(&split, args, oracle, tested).is_agreement())
        .unwrap_or(false)
}
