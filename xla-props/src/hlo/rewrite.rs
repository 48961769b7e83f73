//! HLO surgery, for everyone who rewrites modules (isolation, the judge's
//! variants, fuzzing, the mutants): extracting one top-level instruction (a
//! fusion stays whole, with its fused computation) as its own module,
//! batching many extractions side by side, exposing every value of a
//! computation, cutting the entry at another root, moving a fusion's root,
//! inlining (splitting) a fusion, dead-code elimination, and
//! [`Computation::push`]. Every function returns a new module; names are
//! kept, so a value can be followed from the original module into every
//! variant.

use std::collections::HashMap;

use crate::hlo::{verify, Attrs, CompId, Computation, InstrId, Instruction, Module, Opcode, Shape};

impl Computation {
    /// Appends `ins` and returns its id.
    ///
    /// ```
    /// use xla_props::hlo::{Computation, ElementType, InstrId, Instruction, Opcode, Shape};
    /// let mut c = Computation { name: "c".into(), instructions: vec![], root: InstrId(0), other: vec![] };
    /// let p = c.push(Instruction::new("p", Opcode::Parameter, Shape::scalar(ElementType::F32), vec![]));
    /// assert_eq!(p, InstrId(0));
    /// ```
    pub fn push(&mut self, ins: Instruction) -> InstrId {
        self.instructions.push(ins);
        InstrId(self.instructions.len() as u32 - 1)
    }
}

/// The sub-program computing `root` of the entry computation: unused
/// instructions dropped, every parameter kept (so the same arguments fit).
pub fn with_root(module: &Module, root: InstrId) -> Option<Module> {
    let entry = module.entry_computation();
    let mut keep = vec![false; entry.instructions.len()];
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if std::mem::replace(keep.get_mut(id.index())?, true) {
            continue;
        }
        stack.extend(entry.instr(id).operands.iter().copied());
    }
    let mut new_id = vec![None; entry.instructions.len()];
    let mut instructions = Vec::new();
    for (i, ins) in entry.instructions.iter().enumerate() {
        if !keep[i] && ins.opcode != Opcode::Parameter {
            continue;
        }
        let mut ins = ins.clone();
        ins.operands = ins
            .operands
            .iter()
            .map(|o| new_id[o.index()].map(InstrId))
            .collect::<Option<Vec<_>>>()?;
        new_id[i] = Some(instructions.len() as u32);
        instructions.push(ins);
    }
    let mut out = module.clone();
    let e = out.entry.index();
    out.computations[e] = Computation {
        name: entry.name.clone(),
        instructions,
        root: InstrId(new_id[root.index()]?),
        other: entry.other.clone(),
    };
    verify(&out).ok()?;
    Some(out)
}

/// Rewrites every computation id an instruction's attributes refer to.
pub(crate) fn remap_called(attrs: &mut Attrs, f: &impl Fn(CompId) -> CompId) {
    for c in &mut attrs.calls {
        *c = f(*c);
    }
    for c in [
        &mut attrs.to_apply,
        &mut attrs.condition,
        &mut attrs.body,
        &mut attrs.select,
        &mut attrs.scatter,
    ]
    .into_iter()
    .flatten()
    {
        *c = f(*c);
    }
    for c in &mut attrs.branch_computations {
        *c = f(*c);
    }
}

/// Copies computations of a source module (callees before callers) into a new list.
pub(crate) struct CompCopier<'a> {
    src: &'a Module,
    map: HashMap<CompId, CompId>,
    pub(crate) out: Vec<Computation>,
}

impl<'a> CompCopier<'a> {
    pub(crate) fn new(src: &'a Module) -> Self {
        CompCopier {
            src,
            map: HashMap::new(),
            out: Vec::new(),
        }
    }

    /// Copies `id` and everything it calls; returns its id in the new list.
    pub(crate) fn copy(&mut self, id: CompId) -> CompId {
        if let Some(&done) = self.map.get(&id) {
            return done;
        }
        let comp = self.src.comp(id);
        let mut callees = Vec::new();
        for ins in &comp.instructions {
            callees.extend(ins.called_computations());
        }
        let mut local = HashMap::new();
        for c in callees {
            local.insert(c, self.copy(c));
        }
        let mut copy = comp.clone();
        for ins in &mut copy.instructions {
            remap_called(&mut ins.attrs, &|c| local.get(&c).copied().unwrap_or(c));
        }
        self.out.push(copy);
        let new = CompId(self.out.len() as u32 - 1);
        self.map.insert(id, new);
        new
    }

    /// Copies the callees of `ins` and returns it with its ids remapped.
    pub(crate) fn instruction(&mut self, ins: &Instruction) -> Instruction {
        let mut copy = ins.clone();
        let mut local = HashMap::new();
        for c in ins.called_computations() {
            local.insert(c, self.copy(c));
        }
        remap_called(&mut copy.attrs, &|c| local.get(&c).copied().unwrap_or(c));
        copy
    }

    /// Finishes a module whose entry computation is `entry`.
    pub(crate) fn finish(mut self, name: &str, entry: Computation) -> Module {
        self.out.push(entry);
        Module {
            name: name.to_string(),
            attrs: Vec::new(),
            entry: CompId(self.out.len() as u32 - 1),
            computations: self.out,
        }
    }
}

/// Builds an entry computation instruction by instruction.
#[derive(Default)]
pub(crate) struct EntryBuilder {
    pub(crate) instructions: Vec<Instruction>,
    params: i64,
}

impl EntryBuilder {
    pub(crate) fn parameter(&mut self, name: String, shape: Shape) -> InstrId {
        let mut p = Instruction::new(name, Opcode::Parameter, shape, vec![]);
        p.attrs.parameter_number = Some(self.params);
        self.params += 1;
        self.push(p)
    }
    /// Stands in for operand `o` of an extracted instruction: a constant
    /// expression (a constant or an iota, moved by broadcasts, reshapes,
    /// transposes or converts) is copied as itself, so the compiler sees
    /// the operand's form as in the source (`x / broadcast(c)` may be
    /// compiled as `x * (1/c)`, `atan2(x, broadcast(c))` otherwise than
    /// with two arrays); anything else becomes the next parameter, named
    /// `name`. True when a parameter was made (an argument is needed).
    pub(crate) fn operand(
        &mut self,
        source: &Computation,
        o: InstrId,
        name: String,
    ) -> (InstrId, bool) {
        if is_constant_expression(source, o, 8) {
            (self.copy_constant(source, o, &name), false)
        } else {
            let src = source.instr(o);
            (self.parameter(name, src.shape.clone()), true)
        }
    }
    fn copy_constant(&mut self, source: &Computation, o: InstrId, name: &str) -> InstrId {
        let src = source.instr(o);
        let ops: Vec<InstrId> = src
            .operands
            .iter()
            .enumerate()
            .map(|(k, &p)| self.copy_constant(source, p, &format!("{name}.const{k}")))
            .collect();
        let mut c = src.clone();
        c.name = name.to_string();
        c.operands = ops;
        self.push(c)
    }
    pub(crate) fn push(&mut self, ins: Instruction) -> InstrId {
        self.instructions.push(ins);
        InstrId(self.instructions.len() as u32 - 1)
    }
    pub(crate) fn finish(self, name: &str, root: InstrId) -> Computation {
        Computation::new(name, self.instructions, root)
    }
}

/// Whether `o` computes from constants alone, through ops that only move
/// or convert (no called computation), within `depth` levels.
fn is_constant_expression(source: &Computation, o: InstrId, depth: usize) -> bool {
    let ins = source.instr(o);
    if !ins.called_computations().is_empty() || depth == 0 {
        return false;
    }
    match ins.opcode {
        Opcode::Constant | Opcode::Iota => true,
        Opcode::Broadcast | Opcode::Reshape | Opcode::Transpose | Opcode::Convert => ins
            .operands
            .iter()
            .all(|&p| is_constant_expression(source, p, depth - 1)),
        _ => false,
    }
}

/// One instruction extracted as its own module.
#[derive(Clone, Debug)]
pub struct Extracted {
    /// The module: one parameter per distinct operand that is not a
    /// constant expression (a constant or iota, broadcast, reshaped,
    /// transposed or converted: copied as itself), then the instruction
    /// (the root).
    pub module: Module,
    /// For each parameter of the new module, the operand it stands for in the source computation.
    pub operands: Vec<InstrId>,
}

/// Extracts instruction `id` of the entry computation as its own module whose
/// parameters are its (distinct) operands, named after them, except
/// constant expressions, which are copied, so the compiler sees the same
/// form. Called
/// computations (a fusion's fused computation, reducers) come along whole.
pub fn extract_instruction(module: &Module, id: InstrId) -> Extracted {
    let entry = module.entry_computation();
    let ins = entry.instr(id);
    let mut copier = CompCopier::new(module);
    let mut b = EntryBuilder::default();
    let mut operands: Vec<InstrId> = Vec::new();
    let mut map = HashMap::new();
    for &o in &ins.operands {
        if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(o) {
            let (id, param) = b.operand(entry, o, entry.instr(o).name.clone());
            slot.insert(id);
            if param {
                operands.push(o);
            }
        }
    }
    let mut copy = copier.instruction(ins);
    copy.operands = ins.operands.iter().map(|o| map[o]).collect();
    let root = b.push(copy);
    let name = format!("{}_{}", module.name, sanitize(&ins.name));
    Extracted {
        module: copier.finish(&name, b.finish(&entry.name, root)),
        operands,
    }
}

/// A connected region of the entry computation extracted as its own
/// module: `ids` (in topological order) are copied, every operand outside
/// them becomes a parameter (a constant expression is copied instead), and
/// `root` is the root. Called computations
/// come along whole.
pub fn extract_region(module: &Module, ids: &[InstrId], root: InstrId) -> Extracted {
    let entry = module.entry_computation();
    let mut copier = CompCopier::new(module);
    let mut b = EntryBuilder::default();
    let mut operands: Vec<InstrId> = Vec::new();
    let inside: std::collections::HashSet<InstrId> = ids
        .iter()
        .copied()
        .filter(|&i| entry.instr(i).opcode != Opcode::Parameter)
        .collect();
    let mut map = HashMap::new();
    for &id in ids.iter().filter(|i| inside.contains(i)) {
        let ins = entry.instr(id);
        for &o in &ins.operands {
            if !inside.contains(&o) && !map.contains_key(&o) {
                let (id, param) = b.operand(entry, o, entry.instr(o).name.clone());
                map.insert(o, id);
                if param {
                    operands.push(o);
                }
            }
        }
        let mut copy = copier.instruction(ins);
        copy.operands = ins.operands.iter().map(|o| map[o]).collect();
        let new = b.push(copy);
        map.insert(id, new);
    }
    if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(root) {
        let src = entry.instr(root);
        slot.insert(b.parameter(src.name.clone(), src.shape.clone()));
        operands.push(root);
    }
    let name = format!(
        "{}_{}_region",
        module.name,
        sanitize(&entry.instr(root).name)
    );
    Extracted {
        module: copier.finish(&name, b.finish(&entry.name, map[&root])),
        operands,
    }
}

/// Many instructions extracted side by side into one module (for one
/// backend run): each gets its own parameters, so no value flows from one
/// candidate into another. The root is a tuple of the candidates.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The module.
    pub module: Module,
    /// Per candidate, the source operands its parameters stand for (in parameter order).
    pub operands: Vec<Vec<InstrId>>,
    /// Per candidate, how many flattened outputs it has.
    pub leaves: Vec<usize>,
}

/// Extracts `ids` (entry instructions) side by side; see [`Batch`].
pub fn extract_batch(module: &Module, ids: &[InstrId]) -> Batch {
    let entry = module.entry_computation();
    let mut copier = CompCopier::new(module);
    let mut b = EntryBuilder::default();
    let mut operands = Vec::new();
    let mut leaves = Vec::new();
    let mut roots = Vec::new();
    for &id in ids {
        let ins = entry.instr(id);
        let mut map = HashMap::new();
        let mut ops = Vec::new();
        for (k, &o) in ins.operands.iter().enumerate() {
            if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(o) {
                let (id, param) = b.operand(entry, o, format!("{}.in{k}", ins.name));
                slot.insert(id);
                if param {
                    ops.push(o);
                }
            }
        }
        let mut copy = copier.instruction(ins);
        copy.operands = ins.operands.iter().map(|o| map[o]).collect();
        leaves.push(copy.shape.leaves().len());
        roots.push(b.push(copy));
        operands.push(ops);
    }
    let shapes = roots
        .iter()
        .map(|r| b.instructions[r.index()].shape.clone())
        .collect();
    let tuple = Instruction::new("isolate.batch", Opcode::Tuple, Shape::Tuple(shapes), roots);
    let root = b.push(tuple);
    let name = format!("{}_batch", module.name);
    Batch {
        module: copier.finish(&name, b.finish(&entry.name, root)),
        operands,
        leaves,
    }
}

/// The module with its entry root replaced by a tuple of `ids` (entry
/// instructions), so one run returns every one of their values.
pub fn expose_values(module: &Module, ids: &[InstrId]) -> Module {
    let mut m = module.clone();
    let entry = &mut m.computations[module.entry.index()];
    let shapes = ids
        .iter()
        .map(|i| entry.instructions[i.index()].shape.clone())
        .collect();
    let tuple = Instruction::new(
        "isolate.values",
        Opcode::Tuple,
        Shape::Tuple(shapes),
        ids.to_vec(),
    );
    entry.root = entry.push(tuple);
    m
}

/// Where a fusion instruction is: the computation it is in and its id there.
pub fn find_instruction(module: &Module, name: &str) -> Option<(CompId, InstrId)> {
    module
        .computations
        .iter()
        .enumerate()
        .find_map(|(c, comp)| comp.find(name).map(|i| (CompId(c as u32), i)))
}

/// The module with the fused computation of fusion `fusion` (an entry
/// instruction) rooted at `new_root` instead; the fusion keeps every operand,
/// and its shape follows the new root. The fusion is not split.
pub fn move_fusion_root(module: &Module, fusion: InstrId, new_root: InstrId) -> Option<Module> {
    let mut m = module.clone();
    let callee = *m.entry_computation().instr(fusion).attrs.calls.first()?;
    let shape = m
        .comp(callee)
        .instructions
        .get(new_root.index())?
        .shape
        .clone();
    m.computations[callee.index()].root = new_root;
    let entry = m.entry.index();
    m.computations[entry].instructions[fusion.index()].shape = shape;
    Some(dead_code_eliminated(&m))
}

/// The module with fusion `fusion` (an entry instruction) split: its fused
/// instructions inlined into the entry computation, so every intermediate is
/// materialized in its declared type.
pub fn inline_fusion(module: &Module, fusion: InstrId) -> Option<Module> {
    let mut m = module.clone();
    let entry_id = m.entry.index();
    let fus = m.computations[entry_id].instr(fusion).clone();
    let callee = m.comp(*fus.attrs.calls.first()?).clone();
    let order = callee.post_order()?;
    let base = m.computations[entry_id].instructions.len() as u32;
    let mut map: HashMap<InstrId, InstrId> = HashMap::new();
    let mut next = base;
    let mut added = Vec::new();
    for &i in &order {
        let ins = callee.instr(i);
        if ins.opcode == Opcode::Parameter {
            let k = usize::try_from(ins.attrs.parameter_number?).ok()?;
            map.insert(i, *fus.operands.get(k)?);
            continue;
        }
        let mut copy = ins.clone();
        copy.operands = ins.operands.iter().map(|o| map[o]).collect();
        map.insert(i, InstrId(next));
        next += 1;
        added.push(copy);
    }
    let new_root = *map.get(&callee.root)?;
    let entry = &mut m.computations[entry_id];
    entry.instructions.extend(added);
    for ins in &mut entry.instructions {
        for o in &mut ins.operands {
            if *o == fusion {
                *o = new_root;
            }
        }
    }
    if entry.root == fusion {
        entry.root = new_root;
    }
    // the fusion itself is now unused: rename it out of the way and drop it
    Some(dead_code_eliminated(&m))
}

/// Removes instructions no root reaches (parameters of non-entry computations
/// stay: callers pass them), and computations nothing calls.
pub fn dead_code_eliminated(module: &Module) -> Module {
    let mut m = module.clone();
    for (c, comp) in m.computations.iter_mut().enumerate() {
        let is_entry = c == module.entry.index();
        let n = comp.instructions.len();
        let mut live = vec![false; n];
        let mut stack = vec![comp.root];
        while let Some(i) = stack.pop() {
            if i.index() >= n || live[i.index()] {
                continue;
            }
            live[i.index()] = true;
            stack.extend(comp.instructions[i.index()].operands.iter().copied());
        }
        for (k, ins) in comp.instructions.iter().enumerate() {
            if ins.opcode == Opcode::Parameter {
                live[k] = true;
            }
        }
        let _ = is_entry;
        compact(comp, &live);
    }
    drop_unused_computations(&m)
}

/// Keeps the instructions marked live, renumbering operands and the root.
pub(crate) fn compact(comp: &mut Computation, live: &[bool]) {
    let mut map = vec![None; comp.instructions.len()];
    let mut next = 0u32;
    for (k, &l) in live.iter().enumerate() {
        if l {
            map[k] = Some(InstrId(next));
            next += 1;
        }
    }
    let old = std::mem::take(&mut comp.instructions);
    for (k, mut ins) in old.into_iter().enumerate() {
        if !live[k] {
            continue;
        }
        for o in &mut ins.operands {
            *o = map[o.index()].unwrap_or(*o);
        }
        comp.instructions.push(ins);
    }
    comp.root = map[comp.root.index()].unwrap_or(comp.root);
}

/// Removes computations the entry does not (transitively) call.
pub(crate) fn drop_unused_computations(module: &Module) -> Module {
    let mut copier = CompCopier::new(module);
    let entry = module.entry_computation();
    let mut copy = entry.clone();
    for ins in &mut copy.instructions {
        *ins = copier.instruction(ins);
    }
    let mut m = copier.finish(&module.name, copy);
    m.attrs = module.attrs.clone();
    m
}

/// Instruction names become module names: keep letters, digits, `_` and `.`.
pub(crate) fn sanitize(name: &str) -> String {
    replace_other_chars(name, "_.", '_')
}

/// `s` with every character but ASCII letters, digits and those in `keep`
/// replaced by `with` (names made safe for files, ids and modules).
pub(crate) fn replace_other_chars(s: &str, keep: &str, with: char) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || keep.contains(c) {
                c
            } else {
                with
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{verify, ElementType::F32, FusionKind, ModuleBuilder};

    fn sample() -> Module {
        let mut m = ModuleBuilder::new("m");
        let fused = m
            .computation("fused", |b| {
                let x = b.parameter(Shape::array(F32, vec![4]))?;
                let y = b.parameter(Shape::array(F32, vec![4]))?;
                let s = b.binary(Opcode::Add, x, y)?;
                b.unary(Opcode::Negate, s)
            })
            .unwrap();
        m.build("main", |b| {
            let x = b.parameter(Shape::array(F32, vec![4]))?;
            let e = b.unary(Opcode::Exponential, x)?;
            let f = b.fusion(FusionKind::Loop, fused, &[e, x])?;
            b.binary(Opcode::Multiply, f, e)
        })
        .unwrap()
    }

    #[test]
    fn extracted_fusion_keeps_its_computation_and_verifies() {
        let m = sample();
        let entry = m.entry_computation();
        let f = entry
            .instructions
            .iter()
            .position(|i| i.opcode == Opcode::Fusion)
            .unwrap();
        let x = extract_instruction(&m, InstrId(f as u32));
        verify(&x.module).unwrap();
        assert_eq!(x.operands.len(), 2);
        assert_eq!(x.module.computations.len(), 2);
        let root = x.module.entry_computation().root;
        assert_eq!(
            x.module.entry_computation().instr(root).opcode,
            Opcode::Fusion
        );
    }

    #[test]
    fn a_constant_operand_stays_a_constant_when_extracted() {
        let m = crate::hlo::parse_module(
            "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  c = f32[] constant(3)\n  b = f32[4] broadcast(c), dimensions={}\n  ROOT q = f32[4] divide(x, b)\n}\n",
        )
        .unwrap();
        let entry = m.entry_computation();
        let q = entry.root;
        for x in [extract_instruction(&m, q), extract_region(&m, &[q], q)] {
            verify(&x.module).unwrap();
            // only `x` is an argument; the divisor is the broadcast
            // constant itself
            assert_eq!(x.operands, vec![entry.find("x").unwrap()]);
            let e = x.module.entry_computation();
            assert!(e.instructions.iter().any(|i| i.opcode == Opcode::Constant));
            assert!(e.instructions.iter().any(|i| i.opcode == Opcode::Broadcast));
        }
        let b = extract_batch(&m, &[q]);
        verify(&b.module).unwrap();
        assert_eq!(b.operands, vec![vec![entry.find("x").unwrap()]]);
    }

    #[test]
    fn batch_inline_move_root_and_expose_verify() {
        let m = sample();
        let ids: Vec<InstrId> = (1..m.entry_computation().instructions.len())
            .map(|k| InstrId(k as u32))
            .collect();
        let b = extract_batch(&m, &ids);
        verify(&b.module).unwrap();
        assert_eq!(b.leaves, vec![1, 1, 1]);
        verify(&expose_values(&m, &ids)).unwrap();
        let x = extract_instruction(&m, InstrId(2));
        let fusion = x.module.entry_computation().root;
        let split = inline_fusion(&x.module, fusion).unwrap();
        verify(&split).unwrap();
        assert_eq!(split.computations.len(), 1);
        assert!(split
            .entry_computation()
            .instructions
            .iter()
            .all(|i| i.opcode != Opcode::Fusion));
        // move the root onto the add: the negate is gone, the fusion stays whole
        let fused = x.module.comp(CompId(0));
        let add = fused.find("add.3").unwrap();
        let moved = move_fusion_root(&x.module, fusion, add).unwrap();
        verify(&moved).unwrap();
        assert_eq!(moved.computations[0].instructions.len(), 3);
    }
}
