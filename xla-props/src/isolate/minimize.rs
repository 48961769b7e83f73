//! The minimizer: named reduction passes, repeated until none makes
//! progress, each step guarded by the failure signature (the same culprit
//! opcode and the same kind of mismatch) so a reduction cannot drift onto
//! another bug. The culprit fusion is never split: passes work inside its
//! fused computation and keep the fusion instruction, by name, whole.

use std::collections::{BTreeSet, HashMap};

use super::inside::{by_probe, Fused};
use super::sides::{judge_module, Oracle, Tested};
use crate::check::FailureSignature;
use crate::hlo::rewrite::dead_code_eliminated;
use crate::hlo::{
    verify, Attrs, CompId, ConstantData, FusionKind, InstrId, Instruction, Module, Opcode, Shape,
};
use crate::literal::{Literal, Value};

/// Largest value (in elements) a reduction may turn into a constant.
pub const MAX_CONSTANT_ELEMENTS: usize = 64;

/// Most candidate variants the minimizer tries before it stops.
pub const MAX_ATTEMPTS: usize = 600;

/// The reduction passes, in the order they are tried.
pub const PASSES: &[&str] = &[
    "move-root",
    "remove-instruction",
    "operand-to-parameter",
    "operand-to-constant",
    "shrink-dimensions",
];

/// A module with its arguments.
#[derive(Clone, Debug)]
pub struct Case {
    /// The module.
    pub module: Module,
    /// Its arguments.
    pub args: Vec<Literal>,
}

impl Case {
    /// Instructions over every computation, then elements over every argument and constant.
    pub fn size(&self) -> (usize, usize) {
        let consts: usize = self
            .module
            .computations
            .iter()
            .flat_map(|c| c.instructions.iter())
            .filter(|i| i.opcode == Opcode::Constant)
            .map(|i| {
                i.shape
                    .as_array()
                    .and_then(|a| a.element_count())
                    .unwrap_or(0) as usize
            })
            .sum();
        let args: usize = self.args.iter().map(Literal::element_count).sum();
        (self.module.instruction_count(), consts + args)
    }

    /// Another module on the same arguments.
    fn with_module(&self, module: Module) -> Case {
        Case {
            module,
            args: self.args.clone(),
        }
    }
}

/// One accepted reduction.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Step {
    /// The pass that made it.
    pub pass: String,
    /// Instructions after it.
    pub instructions: usize,
}

/// The result of minimization.
#[derive(Clone, Debug)]
pub struct Minimized {
    /// The smallest case that still fails the same way.
    pub case: Case,
    /// The accepted steps, in order.
    pub steps: Vec<Step>,
    /// Variants tried.
    pub attempts: usize,
}

/// The minimizer's context: both sides and the signature to keep.
pub struct Minimizer<'a, 'b> {
    /// The reference side.
    pub oracle: &'a Oracle,
    /// The backend under test.
    pub tested: &'a Tested<'b>,
    /// The signature every step keeps.
    pub signature: FailureSignature,
}

impl Minimizer<'_, '_> {
    /// True when `case` still fails with the signature.
    pub fn fails_same_way(&self, case: &Case) -> bool {
        if verify(&case.module).is_err() {
            return false;
        }
        let verdict = judge_module(&case.module, &case.args, self.oracle, self.tested);
        if verdict.kind() != Some(self.signature.kind) {
            return false;
        }
        let entry = case.module.entry_computation();
        match &self.signature.fusion {
            Some(name) => {
                let Some(fid) = entry.find(name) else {
                    return false;
                };
                let Some(callee) = entry.instr(fid).attrs.calls.first().copied() else {
                    return false;
                };
                let comp = case.module.comp(callee);
                match by_probe(
                    Fused {
                        module: &case.module,
                        fusion: fid,
                        args: &case.args,
                    },
                    self.oracle,
                    self.tested,
                ) {
                    Some(id) => comp.instr(id).opcode == self.signature.opcode,
                    None => comp
                        .instructions
                        .iter()
                        .any(|i| i.opcode == self.signature.opcode),
                }
            }
            None => entry.instr(entry.root).opcode == self.signature.opcode,
        }
    }

    /// Reduces `case` until no pass makes progress (or the attempt budget is spent).
    pub fn minimize(&self, case: Case, tick: &mut dyn FnMut(&str)) -> Minimized {
        let mut current = tidy(&case).unwrap_or(case);
        let mut steps = Vec::new();
        let mut attempts = 0usize;
        // simplify attributes once: it makes nothing smaller, only plainer
        if let Some(plain) = simplify_attributes(&current) {
            attempts += 1;
            if self.fails_same_way(&plain) {
                current = plain;
                steps.push(Step {
                    pass: "simplify-attributes".into(),
                    instructions: current.module.instruction_count(),
                });
            }
        }
        'outer: loop {
            for &pass in PASSES {
                let variants = self.variants(pass, &current);
                for v in variants {
                    if attempts >= MAX_ATTEMPTS {
                        break 'outer;
                    }
                    let Some(v) = tidy(&v) else { continue };
                    if v.size() >= current.size() {
                        continue;
                    }
                    attempts += 1;
                    tick(pass);
                    if self.fails_same_way(&v) {
                        current = v;
                        steps.push(Step {
                            pass: pass.to_string(),
                            instructions: current.module.instruction_count(),
                        });
                        continue 'outer;
                    }
                }
            }
            break;
        }
        Minimized {
            case: current,
            steps,
            attempts,
        }
    }

    fn variants(&self, pass: &str, case: &Case) -> Vec<Case> {
        let Some((fid, callee)) = self.fusion_of(case) else {
            return match pass {
                "shrink-dimensions" => shrink_variants(case),
                _ => Vec::new(),
            };
        };
        match pass {
            "move-root" => move_root_variants(case, fid, callee),
            "remove-instruction" => remove_variants(case, callee),
            "operand-to-parameter" | "operand-to-constant" => {
                let Some(values) = self.oracle.fused_values(
                    &case.module,
                    &case.args,
                    &case.module.entry_computation().instr(fid).name,
                ) else {
                    return Vec::new();
                };
                if pass == "operand-to-parameter" {
                    to_parameter_variants(case, fid, callee, &values)
                } else {
                    to_constant_variants(case, callee, &values)
                }
            }
            "shrink-dimensions" => shrink_variants(case),
            _ => Vec::new(),
        }
    }

    fn fusion_of(&self, case: &Case) -> Option<(InstrId, CompId)> {
        let name = self.signature.fusion.as_ref()?;
        let entry = case.module.entry_computation();
        let fid = entry.find(name)?;
        Some((fid, *entry.instr(fid).attrs.calls.first()?))
    }
}

fn move_root_variants(case: &Case, fid: InstrId, callee: CompId) -> Vec<Case> {
    let comp = case.module.comp(callee);
    let root = comp.instr(comp.root);
    let mut seen = BTreeSet::new();
    root.operands
        .iter()
        .filter(|o| seen.insert(**o) && comp.instr(**o).opcode != Opcode::Parameter)
        .filter_map(|&o| crate::hlo::rewrite::move_fusion_root(&case.module, fid, o))
        .map(|module| case.with_module(module))
        .collect()
}

/// The instructions of `comp` other than its root and those of opcode
/// `skip`, with their ids.
fn others(
    comp: &crate::hlo::Computation,
    skip: Opcode,
) -> impl Iterator<Item = (InstrId, &crate::hlo::Instruction)> {
    comp.instructions
        .iter()
        .enumerate()
        .map(|(k, ins)| (InstrId(k as u32), ins))
        .filter(move |&(id, ins)| ins.opcode != skip && id != comp.root)
}

fn replace_uses(comp: &mut crate::hlo::Computation, from: InstrId, to: InstrId) {
    for ins in &mut comp.instructions {
        for o in &mut ins.operands {
            if *o == from {
                *o = to;
            }
        }
    }
    if comp.root == from {
        comp.root = to;
    }
}

fn remove_variants(case: &Case, callee: CompId) -> Vec<Case> {
    let comp = case.module.comp(callee);
    let mut out = Vec::new();
    for (id, ins) in others(comp, Opcode::Parameter) {
        let mut seen = BTreeSet::new();
        for &o in &ins.operands {
            if !seen.insert(o) || !comp.instr(o).shape.compatible(&ins.shape) {
                continue;
            }
            let mut m = case.module.clone();
            replace_uses(&mut m.computations[callee.index()], id, o);
            out.push(case.with_module(m));
        }
    }
    out
}

fn fused_param_count(comp: &crate::hlo::Computation) -> i64 {
    comp.instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .count() as i64
}

fn to_parameter_variants(
    case: &Case,
    fid: InstrId,
    callee: CompId,
    values: &HashMap<String, Value>,
) -> Vec<Case> {
    let comp = case.module.comp(callee);
    let mut out = Vec::new();
    for (k, ins) in comp.instructions.iter().enumerate() {
        let id = InstrId(k as u32);
        if matches!(ins.opcode, Opcode::Parameter | Opcode::Constant) || id == comp.root {
            continue;
        }
        let Some(Value::Array(value)) = values.get(&ins.name) else {
            continue;
        };
        let mut m = case.module.clone();
        let number = fused_param_count(m.comp(callee));
        let c = &mut m.computations[callee.index()];
        let p = &mut c.instructions[k];
        p.opcode = Opcode::Parameter;
        p.operands.clear();
        p.attrs = Attrs {
            parameter_number: Some(number),
            ..Attrs::default()
        };
        let entry_id = m.entry.index();
        let entry = &mut m.computations[entry_id];
        let entry_params = entry
            .instructions
            .iter()
            .filter(|i| i.opcode == Opcode::Parameter)
            .count() as i64;
        let mut ep = Instruction::new(
            format!("{}.in", ins.name),
            Opcode::Parameter,
            ins.shape.clone(),
            vec![],
        );
        ep.attrs.parameter_number = Some(entry_params);
        let new = entry.push(ep);
        entry.instructions[fid.index()].operands.push(new);
        let mut args = case.args.clone();
        args.push(value.clone());
        out.push(Case { module: m, args });
    }
    out
}

fn constant_data(value: &Literal) -> Option<ConstantData> {
    let n = value.element_count();
    let t = value.dtype();
    if t.is_float() {
        Some(ConstantData::Float(
            (0..n).map(|i| value.get_f64(i)).collect(),
        ))
    } else if t == crate::hlo::ElementType::Pred {
        Some(ConstantData::Pred(
            (0..n).map(|i| value.get_i128(i) != 0).collect(),
        ))
    } else if t.is_complex() {
        None
    } else {
        Some(ConstantData::Int(
            (0..n).map(|i| value.get_i128(i)).collect(),
        ))
    }
}

fn to_constant_variants(case: &Case, callee: CompId, values: &HashMap<String, Value>) -> Vec<Case> {
    let comp = case.module.comp(callee);
    let mut out = Vec::new();
    for (id, ins) in others(comp, Opcode::Constant) {
        let Some(Value::Array(value)) = values.get(&ins.name) else {
            continue;
        };
        if value.element_count() > MAX_CONSTANT_ELEMENTS {
            continue;
        }
        let Some(data) = constant_data(value) else {
            continue;
        };
        let mut m = case.module.clone();
        let c = &mut m.computations[callee.index()];
        let x = &mut c.instructions[id.index()];
        x.opcode = Opcode::Constant;
        x.name = format!("{}.constant", ins.name);
        x.operands.clear();
        x.attrs = Attrs {
            constant: Some(data),
            ..Attrs::default()
        };
        if ins.opcode == Opcode::Parameter {
            // the numbering must stay dense: shift the later parameters down
            let gone = ins.attrs.parameter_number.unwrap_or(0);
            renumber_after(c, gone);
            let entry_id = m.entry.index();
            for e in &mut m.computations[entry_id].instructions {
                if e.opcode == Opcode::Fusion && e.attrs.calls.first() == Some(&callee) {
                    // a negative number removes nothing
                    let _ = remove_at(&mut e.operands, &[gone]);
                }
            }
        }
        out.push(case.with_module(m));
    }
    out
}

/// Every distinct dimension size above 1, and the module with each halved
/// (and set to 1) everywhere it occurs: shapes, constants and arguments.
fn shrink_variants(case: &Case) -> Vec<Case> {
    let mut sizes = BTreeSet::new();
    for c in &case.module.computations {
        for i in &c.instructions {
            for leaf in i.shape.leaves() {
                sizes.extend(leaf.dims.iter().copied().filter(|&d| d > 1));
            }
        }
    }
    let mut out = Vec::new();
    for &n in sizes.iter().rev() {
        let mut targets = vec![1];
        if n / 2 > 1 {
            targets.insert(0, n / 2);
        }
        for to in targets {
            if let Some(v) = shrink(case, n, to) {
                out.push(v);
            }
        }
    }
    out
}

fn shrink_shape(shape: &Shape, from: i64, to: i64) -> Shape {
    match shape {
        Shape::Array(a) => {
            let mut a = a.clone();
            for d in &mut a.dims {
                if *d == from {
                    *d = to;
                }
            }
            Shape::Array(a)
        }
        Shape::Tuple(items) => {
            Shape::Tuple(items.iter().map(|s| shrink_shape(s, from, to)).collect())
        }
        Shape::Token => Shape::Token,
    }
}

/// For every element of `new` dims (row-major), its flat index in `old` dims.
fn kept_indices(old: &[i64], new: &[i64]) -> Vec<usize> {
    let total: i64 = new.iter().product();
    let mut out = Vec::with_capacity(total.max(0) as usize);
    let mut idx = vec![0i64; new.len()];
    for _ in 0..total.max(0) {
        let mut flat = 0i64;
        for (k, &i) in idx.iter().enumerate() {
            flat = flat * old[k] + i;
        }
        out.push(flat as usize);
        for k in (0..new.len()).rev() {
            idx[k] += 1;
            if idx[k] < new[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

fn shrink(case: &Case, from: i64, to: i64) -> Option<Case> {
    let mut m = case.module.clone();
    for c in &mut m.computations {
        for ins in &mut c.instructions {
            let new_shape = shrink_shape(&ins.shape, from, to);
            if new_shape == ins.shape {
                continue;
            }
            if let (Some(data), Some(old), Some(new)) = (
                ins.attrs.constant.as_mut(),
                ins.shape.as_array(),
                new_shape.as_array(),
            ) {
                let keep = kept_indices(&old.dims, &new.dims);
                *data = match data {
                    ConstantData::Float(v) if v.len() > 1 => {
                        ConstantData::Float(keep.iter().map(|&i| v[i]).collect())
                    }
                    ConstantData::Int(v) if v.len() > 1 => {
                        ConstantData::Int(keep.iter().map(|&i| v[i]).collect())
                    }
                    ConstantData::Pred(v) if v.len() > 1 => {
                        ConstantData::Pred(keep.iter().map(|&i| v[i]).collect())
                    }
                    ConstantData::Float(_) | ConstantData::Int(_) | ConstantData::Pred(_) => {
                        data.clone()
                    }
                    _ => return None,
                };
            }
            ins.shape = new_shape;
        }
        // a slice that took the whole shrunk dimension takes the whole new one
        for ins in &mut c.instructions {
            if let Some(slice) = ins.attrs.slice.as_mut() {
                for d in slice.iter_mut() {
                    if d.start == 0 && d.limit == from && d.stride == 1 {
                        d.limit = to;
                    }
                }
            }
        }
    }
    let mut args = Vec::with_capacity(case.args.len());
    for a in &case.args {
        let old: Vec<i64> = a.dims().iter().map(|&d| d as i64).collect();
        let new: Vec<i64> = old
            .iter()
            .map(|&d| if d == from { to } else { d })
            .collect();
        if new == old {
            args.push(a.clone());
            continue;
        }
        let bits = a.to_bits_vec();
        let keep = kept_indices(&old, &new);
        let shape = crate::hlo::ArrayShape::new(a.dtype(), new);
        let lit =
            Literal::from_bits(&shape, &keep.iter().map(|&i| bits[i]).collect::<Vec<_>>()).ok()?;
        args.push(lit);
    }
    Some(Case { module: m, args })
}

/// Drops metadata and other free-form attributes, layouts, and makes fusions `kLoop`.
fn simplify_attributes(case: &Case) -> Option<Case> {
    let mut m = case.module.clone();
    let mut changed = !m.attrs.is_empty();
    m.attrs.clear();
    for c in &mut m.computations {
        changed |= !c.other.is_empty();
        c.other.clear();
        for ins in &mut c.instructions {
            changed |= !ins.attrs.other.is_empty() || ins.attrs.precision.is_some();
            ins.attrs.other.clear();
            ins.attrs.precision = None;
            if ins.opcode == Opcode::Fusion && ins.attrs.fusion_kind != Some(FusionKind::Loop) {
                ins.attrs.fusion_kind = Some(FusionKind::Loop);
                changed = true;
            }
            if let Shape::Array(a) = &mut ins.shape {
                changed |= a.layout.take().is_some();
            }
        }
    }
    let args: Vec<Literal> = case
        .args
        .iter()
        .map(|a| a.clone().with_layout(None))
        .collect();
    changed.then_some(Case { module: m, args })
}

/// Dead code out; unused fusion parameters and entry parameters (with their
/// arguments) dropped, parameter numbers kept dense.
pub fn tidy(case: &Case) -> Option<Case> {
    let mut m = dead_code_eliminated(&case.module);
    let mut args = case.args.clone();
    let entry_id = m.entry.index();
    // unused parameters of fusions called from the entry
    let fusions: Vec<(usize, CompId)> = m.computations[entry_id]
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| i.opcode == Opcode::Fusion)
        .filter_map(|(k, i)| Some((k, *i.attrs.calls.first()?)))
        .collect();
    for (k, callee) in fusions {
        let gone = drop_unused_parameters(&mut m.computations[callee.index()]);
        remove_at(
            &mut m.computations[entry_id].instructions[k].operands,
            &gone,
        )?;
    }
    // unused entry parameters
    let gone = drop_unused_parameters(&mut m.computations[entry_id]);
    remove_at(&mut args, &gone)?;
    Some(Case {
        module: dead_code_eliminated(&m),
        args,
    })
}

/// Drops the parameters of `comp` that nothing uses, the highest number
/// first, keeping the numbers dense; the numbers dropped, in that order.
fn drop_unused_parameters(comp: &mut crate::hlo::Computation) -> Vec<i64> {
    let used = used_set(comp);
    let mut unused: Vec<i64> = comp
        .instructions
        .iter()
        .enumerate()
        .filter(|(j, i)| i.opcode == Opcode::Parameter && !used[*j])
        .filter_map(|(_, i)| i.attrs.parameter_number)
        .collect();
    unused.sort_unstable_by(|a, b| b.cmp(a));
    for &gone in &unused {
        let live: Vec<bool> = comp
            .instructions
            .iter()
            .map(|i| !(i.opcode == Opcode::Parameter && i.attrs.parameter_number == Some(gone)))
            .collect();
        crate::hlo::rewrite::compact(comp, &live);
        renumber_after(comp, gone);
    }
    unused
}

/// Removes the items at the positions `gone` (the highest first) from
/// `items`, where it has them; None for a negative position.
fn remove_at<T>(items: &mut Vec<T>, gone: &[i64]) -> Option<()> {
    for &g in gone {
        let g = usize::try_from(g).ok()?;
        if g < items.len() {
            items.remove(g);
        }
    }
    Some(())
}

fn used_set(comp: &crate::hlo::Computation) -> Vec<bool> {
    let mut used = vec![false; comp.instructions.len()];
    for ins in &comp.instructions {
        for o in &ins.operands {
            if let Some(u) = used.get_mut(o.index()) {
                *u = true;
            }
        }
    }
    if let Some(u) = used.get_mut(comp.root.index()) {
        *u = true;
    }
    used
}

fn renumber_after(comp: &mut crate::hlo::Computation, gone: i64) {
    for p in &mut comp.instructions {
        if p.opcode == Opcode::Parameter {
            if let Some(n) = p.attrs.parameter_number.as_mut() {
                if *n > gone {
                    *n -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_indices_take_the_leading_block() {
        assert_eq!(kept_indices(&[2, 3], &[2, 2]), vec![0, 1, 3, 4]);
        assert_eq!(kept_indices(&[4], &[1]), vec![0]);
        assert_eq!(kept_indices(&[], &[]), vec![0]);
    }
}
