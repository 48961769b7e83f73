//! Outlining: moves a group of instructions of a computation into a new fusion
//! computation called by one `fusion` instruction, the way a compiler's fusion
//! pass groups them. A fusion configuration is data: a list of such groups.

use std::collections::{HashMap, HashSet};

use crate::hlo::rewrite::remap_called;
use crate::hlo::{
    verify, Attrs, CompId, Computation, FusionKind, InstrId, Instruction, Module, Opcode, Shape,
};

/// One group of instructions to outline into one fusion, by instruction name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusionGroup {
    /// The fusion kind (`kLoop`, `kInput`, `kOutput`).
    pub kind: FusionKind,
    /// Names of the instructions of the entry computation to fuse.
    pub members: Vec<String>,
}

/// Why a group cannot be outlined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutlineError {
    /// The group is empty.
    #[error("cannot outline an empty group")]
    Empty,
    /// A member name is not an instruction of the computation.
    #[error("no instruction named `{0}` in the computation")]
    UnknownInstruction(String),
    /// Parameters stay outside fusions.
    #[error("cannot outline parameter `{0}`")]
    Parameter(String),
    /// A value leaves the group and comes back into it, so no single fusion can hold it.
    #[error("group is not convex: `{0}` lies between two members and is not one")]
    NotConvex(String),
    /// The rewritten module failed verification (a bug in the outliner).
    #[error("outlined module is invalid: {0}")]
    Invalid(String),
}

fn remap_comp(id: &mut CompId, at: u32) {
    if id.0 >= at {
        id.0 += 1;
    }
}

/// Shifts every computation id `>= at` up by one (a computation is inserted at `at`).
fn shift_comp_ids(module: &mut Module, at: u32) {
    remap_comp(&mut module.entry, at);
    for c in &mut module.computations {
        for i in &mut c.instructions {
            remap_called(&mut i.attrs, &|mut id| {
                remap_comp(&mut id, at);
                id
            });
        }
    }
}

fn all_names(module: &Module) -> HashSet<String> {
    module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
        .chain(module.computations.iter().map(|c| c.name.clone()))
        .collect()
}

fn fresh(names: &mut HashSet<String>, base: &str) -> String {
    let mut k = 0u32;
    loop {
        let n = if k == 0 {
            base.to_string()
        } else {
            format!("{base}.{k}")
        };
        if names.insert(n.clone()) {
            return n;
        }
        k += 1;
    }
}

/// Orders instructions so that operands come first (stable: keeps the input order where it can).
fn topo_order(instrs: &[Instruction]) -> Vec<usize> {
    let mut state = vec![0u8; instrs.len()];
    let mut order = Vec::with_capacity(instrs.len());
    for start in 0..instrs.len() {
        let mut stack = vec![(start, 0usize)];
        while let Some((n, k)) = stack.pop() {
            if k == 0 {
                if state[n] != 0 {
                    continue;
                }
                state[n] = 1;
            }
            if let Some(o) = instrs[n].operands.get(k) {
                stack.push((n, k + 1));
                if state[o.index()] == 0 {
                    stack.push((o.index(), 0));
                }
            } else {
                state[n] = 2;
                order.push(n);
            }
        }
    }
    order
}

/// Outlines `group` (instructions of the entry computation) into a new fusion
/// computation and returns the rewritten, verified module.
///
/// Values used outside the group (or the root) become the fusion's outputs: one
/// output is the fusion's result; several make a multi-output fusion whose
/// tuple is read back with `get-tuple-element`.
///
/// ```
/// use xla_props::hlo::{ElementType::F32, FusionKind, ModuleBuilder, Opcode, Shape};
/// use xla_props::programs::{outline, FusionGroup};
/// let m = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![4]))?;
///         let e = b.unary(Opcode::Exponential, x)?;
///         b.binary(Opcode::Multiply, e, x)
///     })
///     .unwrap();
/// let names: Vec<String> = m.entry_computation().instructions[1..]
///     .iter()
///     .map(|i| i.name.clone())
///     .collect();
/// let fused = outline(&m, &FusionGroup { kind: FusionKind::Loop, members: names }).unwrap();
/// let entry = fused.entry_computation();
/// assert_eq!(entry.instr(entry.root).opcode, Opcode::Fusion);
/// assert_eq!(fused.computations.len(), 2);
/// ```
pub fn outline(module: &Module, group: &FusionGroup) -> Result<Module, OutlineError> {
    if group.members.is_empty() {
        return Err(OutlineError::Empty);
    }
    // the fused computation goes right before its caller (callees first)
    let at = module.entry.0;
    let mut out = module.clone();
    shift_comp_ids(&mut out, at);
    out.computations.insert(
        at as usize,
        Computation {
            name: String::new(),
            instructions: Vec::new(),
            root: InstrId(0),
            other: Vec::new(),
        },
    );
    let comp = out.entry_computation().clone();
    let region = Region::new(&comp, group)?;
    let mut names = all_names(&out);
    let fusion_name = fresh(&mut names, "fusion");
    let comp_name = fresh(&mut names, &format!("fused_computation.{fusion_name}"));
    let (fused, result_shape) = region.fused(comp_name, &fusion_name, &mut names);
    let mut fusion = Instruction::new(fusion_name, Opcode::Fusion, result_shape, Vec::new());
    fusion.attrs = Attrs {
        fusion_kind: Some(group.kind),
        calls: vec![CompId(at)],
        ..Attrs::default()
    };
    let caller = region.caller(fusion, &mut names);
    let caller_id = out.entry;
    out.computations[caller_id.index()] = caller;
    out.computations[at as usize] = fused;
    verify(&out).map_err(|e| OutlineError::Invalid(e.to_string()))?;
    Ok(out)
}

/// The group inside its computation: which instructions are members, who
/// uses what, the values it reads from outside and those it gives out.
struct Region<'c> {
    comp: &'c Computation,
    member: Vec<bool>,
    /// Member instructions' and everyone's order, operands first.
    order: Vec<usize>,
    /// Non-members the group reads, in order of first use.
    externals: Vec<usize>,
    /// Members used outside the group (or the root).
    outputs: Vec<usize>,
}

impl<'c> Region<'c> {
    fn new(comp: &'c Computation, group: &FusionGroup) -> Result<Self, OutlineError> {
        let mut member = vec![false; comp.instructions.len()];
        for name in &group.members {
            let id = comp
                .find(name)
                .ok_or_else(|| OutlineError::UnknownInstruction(name.clone()))?;
            if comp.instr(id).opcode == Opcode::Parameter {
                return Err(OutlineError::Parameter(name.clone()));
            }
            member[id.index()] = true;
        }
        let n = comp.instructions.len();
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, ins) in comp.instructions.iter().enumerate() {
            for o in &ins.operands {
                users[o.index()].push(i);
            }
        }
        // convexity: no non-member both reachable from a member and reaching a member
        let order = topo_order(&comp.instructions);
        let mut from_member = vec![false; n];
        for &i in &order {
            from_member[i] = comp.instructions[i]
                .operands
                .iter()
                .any(|o| member[o.index()] || from_member[o.index()]);
        }
        let mut to_member = vec![false; n];
        for &i in order.iter().rev() {
            to_member[i] = users[i].iter().any(|&u| member[u] || to_member[u]);
        }
        if let Some(i) = (0..n).find(|&i| !member[i] && from_member[i] && to_member[i]) {
            return Err(OutlineError::NotConvex(comp.instructions[i].name.clone()));
        }
        let mut externals: Vec<usize> = Vec::new();
        for &i in order.iter().filter(|&&i| member[i]) {
            for o in &comp.instructions[i].operands {
                if !member[o.index()] && !externals.contains(&o.index()) {
                    externals.push(o.index());
                }
            }
        }
        let outputs: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| {
                member[i] && (i == comp.root.index() || users[i].iter().any(|&u| !member[u]))
            })
            .collect();
        Ok(Region {
            comp,
            member,
            order,
            externals,
            outputs,
        })
    }

    /// The fused computation (parameters for the externals, the members,
    /// a tuple of several outputs) and the fusion's result shape.
    fn fused(
        &self,
        comp_name: String,
        fusion_name: &str,
        names: &mut HashSet<String>,
    ) -> (Computation, Shape) {
        let comp = self.comp;
        let mut body: Vec<Instruction> = Vec::new();
        let mut inner: HashMap<usize, InstrId> = HashMap::new();
        for (k, &e) in self.externals.iter().enumerate() {
            let mut p = Instruction::new(
                fresh(names, &format!("param_{k}.{fusion_name}")),
                Opcode::Parameter,
                comp.instructions[e].shape.clone(),
                Vec::new(),
            );
            p.attrs.parameter_number = Some(k as i64);
            inner.insert(e, InstrId(body.len() as u32));
            body.push(p);
        }
        for &i in self.order.iter().filter(|&&i| self.member[i]) {
            let mut ins = comp.instructions[i].clone();
            ins.operands = ins.operands.iter().map(|o| inner[&o.index()]).collect();
            inner.insert(i, InstrId(body.len() as u32));
            body.push(ins);
        }
        let mut fused = Computation {
            name: comp_name,
            instructions: body,
            root: InstrId(0),
            other: Vec::new(),
        };
        let result_shape = if let [only] = self.outputs.as_slice() {
            fused.root = inner[only];
            comp.instructions[*only].shape.clone()
        } else {
            let shape = Shape::Tuple(
                self.outputs
                    .iter()
                    .map(|&o| comp.instructions[o].shape.clone())
                    .collect(),
            );
            let t = Instruction::new(
                fresh(names, &format!("tuple.{fusion_name}")),
                Opcode::Tuple,
                shape.clone(),
                self.outputs.iter().map(|o| inner[o]).collect(),
            );
            fused.root = fused.push(t);
            shape
        };
        (fused, result_shape)
    }

    /// The caller: non-members, `fusion` (operands: the externals), and its
    /// tuple reads, in operand-first order.
    fn caller(&self, mut fusion: Instruction, names: &mut HashSet<String>) -> Computation {
        let comp = self.comp;
        let n = comp.instructions.len();
        let mut outer: Vec<Instruction> = Vec::new();
        let mut index_of_old: Vec<Option<usize>> = vec![None; n];
        for (i, slot) in index_of_old.iter_mut().enumerate() {
            if !self.member[i] {
                *slot = Some(outer.len());
                outer.push(comp.instructions[i].clone());
            }
        }
        let fusion_at = outer.len();
        let fusion_name = fusion.name.clone();
        // operands are old indices for now (rewritten below)
        fusion.operands = self.externals.iter().map(|&e| InstrId(e as u32)).collect();
        outer.push(fusion);
        let mut output_at: HashMap<usize, usize> = HashMap::new();
        if self.outputs.len() == 1 {
            output_at.insert(self.outputs[0], fusion_at);
        } else {
            for (k, &o) in self.outputs.iter().enumerate() {
                let mut g = Instruction::new(
                    fresh(names, &format!("get-tuple-element.{fusion_name}.{k}")),
                    Opcode::GetTupleElement,
                    comp.instructions[o].shape.clone(),
                    Vec::new(),
                );
                g.attrs.index = Some(k as i64);
                output_at.insert(o, outer.len());
                outer.push(g);
            }
        }
        let new_index = |old: usize| -> usize {
            index_of_old[old].unwrap_or_else(|| output_at.get(&old).copied().unwrap_or(fusion_at))
        };
        let originals = outer.len();
        for (k, ins) in outer.iter_mut().enumerate() {
            if k == fusion_at {
                ins.operands = self
                    .externals
                    .iter()
                    .map(|&e| InstrId(new_index(e) as u32))
                    .collect();
            } else if k > fusion_at && k < originals {
                ins.operands = vec![InstrId(fusion_at as u32)];
            } else {
                ins.operands = ins
                    .operands
                    .iter()
                    .map(|o| InstrId(new_index(o.index()) as u32))
                    .collect();
            }
        }
        let new_root = new_index(comp.root.index());
        // operands first, then renumber
        let order = topo_order(&outer);
        let mut position = vec![0usize; outer.len()];
        for (p, &k) in order.iter().enumerate() {
            position[k] = p;
        }
        let mut sorted: Vec<Instruction> = order.iter().map(|&k| outer[k].clone()).collect();
        for ins in &mut sorted {
            for o in &mut ins.operands {
                *o = InstrId(position[o.index()] as u32);
            }
        }
        Computation {
            name: comp.name.clone(),
            instructions: sorted,
            root: InstrId(position[new_root] as u32),
            other: comp.other.clone(),
        }
    }
}

/// Outlines each group in turn (a whole fusion configuration).
///
/// Groups name instructions of the original entry computation; they must not overlap.
pub fn apply_configuration(
    module: &Module,
    groups: &[FusionGroup],
) -> Result<Module, OutlineError> {
    let mut m = module.clone();
    for g in groups {
        m = outline(&m, g)?;
    }
    Ok(m)
}
