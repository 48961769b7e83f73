//! Name resolution: names into ids, the module built, shapes inferred where
//! the text leaves them out, canonical defaults.

use std::collections::{HashMap, HashSet};

use super::error::{fail, Failure, PResult};
use super::pending::{NameRef, PendingComp, PendingInstr, Slot};
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, CompId, Computation, ConstantData, InstrId, Instruction, Module};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::{ArrayShape, Shape};

/// The parser's canonical form for attributes with a default, the same as
/// XLA prints and as StableHLO reads back: a map names its dimensions
/// (always all of them), and float
/// constants hold their values rounded to their type (the value the
/// constant has; the printer writes the shortest text for it).
pub(super) fn canonical_defaults(i: &mut Instruction) {
    let rank = i.shape.as_array().map(|a| a.dims.len() as i64);
    match i.opcode {
        Opcode::Map if i.attrs.dimensions.is_none() => {
            if let Some(rank) = rank {
                i.attrs.dimensions = Some((0..rank).collect());
            }
        }
        Opcode::Constant => {
            if let Some(data) = i.attrs.constant.as_mut() {
                round_constant(data, &i.shape);
            }
        }
        _ => {}
    }
}

pub(super) fn round_constant(data: &mut ConstantData, shape: &Shape) {
    match (data, shape) {
        (ConstantData::Tuple(items), Shape::Tuple(shapes)) => {
            for (d, s) in items.iter_mut().zip(shapes) {
                round_constant(d, s);
            }
        }
        (ConstantData::Float(v), Shape::Array(a)) => {
            if let Some(fmt) = a.dtype.float_format() {
                if a.dtype != ElementType::F64 {
                    for x in v.iter_mut() {
                        if !x.is_nan() {
                            *x = crate::hlo::float_bits::bits_to_f64(
                                crate::hlo::float_bits::round_to_bits(*x, &fmt),
                                &fmt,
                            );
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Turns names into ids and builds the module.
pub(super) fn resolve(
    name: String,
    attrs: Vec<(String, String)>,
    comps: Vec<PendingComp>,
    entry: usize,
) -> PResult<Module> {
    let comp_ids = ids_by_name(comps.iter().map(|c| &c.name), CompId, "computations", |n| {
        format!("duplicate computation name `{n}`")
    })?;
    let lookup_comp = |instr: &str, r: &NameRef| -> PResult<CompId> {
        comp_ids
            .get(r.name.as_str())
            .copied()
            .ok_or_else(|| Failure {
                pos: r.pos,
                msg: format!(
                    "instruction `{instr}` refers to undefined computation `{}`",
                    r.name
                ),
            })
    };
    let mut out = Vec::with_capacity(comps.len());
    for c in &comps {
        if c.instrs.is_empty() {
            return fail(
                c.name.pos,
                format!("computation `{}` has no instructions", c.name.name),
            );
        }
        let operand_ids = resolve_operands(c)?;
        let shapes = infer_shapes(c, &operand_ids)?;
        let names = final_names(c);
        let mut instructions = Vec::with_capacity(c.instrs.len());
        for (((i, operands), shape), name) in
            c.instrs.iter().zip(operand_ids).zip(shapes).zip(names)
        {
            let attrs = bind_computations(i, &lookup_comp)?;
            instructions.push(Instruction {
                name,
                opcode: i.opcode,
                shape,
                operands,
                attrs,
            });
        }
        explicit_defaults(&mut instructions);
        // like XLA, a computation without ROOT returns its last instruction
        let root = c.root.unwrap_or(c.instrs.len() - 1);
        out.push(Computation {
            name: c.name.name.clone(),
            instructions,
            root: InstrId(root as u32),
            other: c.other.clone(),
        });
    }
    Ok(Module {
        name,
        attrs,
        computations: out,
        entry: CompId(entry as u32),
    })
}

/// `i`'s attributes with the computations it names bound to their ids
/// (`true_computation` and `false_computation` as the two branches).
fn bind_computations(
    i: &PendingInstr,
    lookup_comp: &dyn Fn(&str, &NameRef) -> PResult<CompId>,
) -> PResult<Attrs> {
    let mut attrs = i.attrs.clone();
    let (mut t, mut f) = (None, None);
    for (slot, r) in &i.comp_refs {
        let id = lookup_comp(&i.name.name, r)?;
        match slot {
            Slot::Calls => attrs.calls.push(id),
            Slot::ToApply => attrs.to_apply = Some(id),
            Slot::Condition => attrs.condition = Some(id),
            Slot::Body => attrs.body = Some(id),
            Slot::Branches => attrs.branch_computations.push(id),
            Slot::TrueBranch => t = Some((id, r.pos)),
            Slot::FalseBranch => f = Some((id, r.pos)),
            Slot::Select => attrs.select = Some(id),
            Slot::Scatter => attrs.scatter = Some(id),
        }
    }
    match (t, f) {
        (None, None) => {}
        (Some((t, _)), Some((f, _))) => {
            if !attrs.branch_computations.is_empty() {
                return fail(
                    i.name.pos,
                    format!(
                        "instruction `{}` has both branch_computations and true/false computations",
                        i.name.name
                    ),
                );
            }
            attrs.branch_computations = vec![t, f];
            attrs.pred_branches = true;
        }
        (Some((_, pos)), None) | (None, Some((_, pos))) => {
            return fail(
                pos,
                format!(
                    "instruction `{}` needs both true_computation and false_computation",
                    i.name.name
                ),
            )
        }
    }
    Ok(attrs)
}

/// The defaults XLA prints made explicit: a scalar's broadcast may leave
/// `dimensions={}` out; it is kept explicit, as XLA prints it (and as
/// StableHLO reads back).
fn explicit_defaults(instructions: &mut [Instruction]) {
    for k in 0..instructions.len() {
        let i = &instructions[k];
        let scalar_operand = i.opcode == Opcode::Broadcast
            && i.attrs.dimensions.is_none()
            && i.operands.first().is_some_and(|o| {
                instructions
                    .get(o.index())
                    .and_then(|x| x.shape.as_array())
                    .is_some_and(|a| a.dims.is_empty())
            });
        if scalar_operand {
            instructions[k].attrs.dimensions = Some(Vec::new());
        }
        canonical_defaults(&mut instructions[k]);
    }
}

/// The id of each of `names` (made by `id` from its index), by name; a
/// name given twice is an error (`duplicate` its message), as is an index
/// past `u32` ("too many {what}").
fn ids_by_name<'n, Id>(
    names: impl ExactSizeIterator<Item = &'n NameRef>,
    id: fn(u32) -> Id,
    what: &str,
    duplicate: impl Fn(&str) -> String,
) -> PResult<HashMap<&'n str, Id>> {
    let mut ids = HashMap::with_capacity(names.len());
    for (k, n) in names.enumerate() {
        let k = u32::try_from(k).map_err(|_| Failure {
            pos: n.pos,
            msg: format!("too many {what}"),
        })?;
        if ids.insert(n.name.as_str(), id(k)).is_some() {
            return fail(n.pos, duplicate(&n.name));
        }
    }
    Ok(ids)
}

/// Each instruction's operands as ids (instruction names must be unique in `c`).
pub(super) fn resolve_operands(c: &PendingComp) -> PResult<Vec<Vec<InstrId>>> {
    let ids = ids_by_name(
        c.instrs.iter().map(|i| &i.name),
        InstrId,
        "instructions",
        |n| {
            format!(
                "duplicate instruction name `{n}` in computation `{}`",
                c.name.name
            )
        },
    )?;
    let mut operand_ids: Vec<Vec<InstrId>> = Vec::with_capacity(c.instrs.len());
    for i in &c.instrs {
        let mut operands = Vec::with_capacity(i.operands.len());
        for o in &i.operands {
            match ids.get(o.name.as_str()) {
                Some(&id) => operands.push(id),
                None => {
                    return fail(
                        o.pos,
                        format!(
                            "instruction `{}` uses undefined operand `{}`",
                            display_name(i),
                            o.name
                        ),
                    )
                }
            }
        }
        operand_ids.push(operands);
    }
    Ok(operand_ids)
}

/// The instruction's name as the user sees it (nested ones have none yet).
pub(super) fn display_name(i: &PendingInstr) -> String {
    if i.synthetic {
        format!("{} operand", i.opcode)
    } else {
        i.name.name.clone()
    }
}

/// Names for nested operand instructions: `opcode.N`, unused in the computation.
pub(super) fn final_names(c: &PendingComp) -> Vec<String> {
    let mut used: HashSet<String> = c
        .instrs
        .iter()
        .filter(|i| !i.synthetic)
        .map(|i| i.name.name.clone())
        .collect();
    let mut next = 0usize;
    c.instrs
        .iter()
        .map(|i| {
            if !i.synthetic {
                return i.name.name.clone();
            }
            loop {
                let candidate = format!("{}.{next}", i.opcode);
                next += 1;
                if used.insert(candidate.clone()) {
                    return candidate;
                }
            }
        })
        .collect()
}

/// Every instruction's shape, inferring the ones the text left out (operands first).
pub(super) fn infer_shapes(c: &PendingComp, operands: &[Vec<InstrId>]) -> PResult<Vec<Shape>> {
    let n = c.instrs.len();
    let mut shapes: Vec<Option<Shape>> = c.instrs.iter().map(|i| i.shape.clone()).collect();
    let mut on_stack = vec![false; n];
    for start in 0..n {
        if shapes[start].is_some() {
            continue;
        }
        // (instruction, how many of its operands have been looked at)
        let mut stack = vec![(start, 0usize)];
        on_stack[start] = true;
        while let Some(&mut (k, ref mut next)) = stack.last_mut() {
            if let Some(&o) = operands[k].get(*next) {
                *next += 1;
                if shapes[o.index()].is_some() {
                    continue;
                }
                if on_stack[o.index()] {
                    let i = &c.instrs[k];
                    return fail(
                        i.name.pos,
                        format!(
                            "cannot infer the shape of `{}`: it depends on itself",
                            display_name(i)
                        ),
                    );
                }
                on_stack[o.index()] = true;
                stack.push((o.index(), 0));
                continue;
            }
            let i = &c.instrs[k];
            let ops: Vec<&Shape> = operands[k]
                .iter()
                .filter_map(|o| shapes[o.index()].as_ref())
                .collect();
            match infer_shape(i.opcode, &i.attrs, &ops) {
                Some(s) => shapes[k] = Some(s),
                None => {
                    return fail(
                        i.name.pos,
                        format!(
                            "cannot infer the shape of `{}` ({}); write it explicitly",
                            display_name(i),
                            i.opcode
                        ),
                    )
                }
            }
            on_stack[k] = false;
            stack.pop();
        }
    }
    Ok(shapes.into_iter().flatten().collect())
}

/// The result shape of the few ops XLA's text may leave unshaped.
pub(super) fn infer_shape(op: Opcode, attrs: &Attrs, ops: &[&Shape]) -> Option<Shape> {
    use crate::hlo::opcode::Category;
    match op {
        Opcode::Tuple => Some(Shape::Tuple(ops.iter().map(|s| (*s).clone()).collect())),
        Opcode::While | Opcode::Copy | Opcode::OptimizationBarrier => {
            ops.first().map(|s| (*s).clone())
        }
        Opcode::GetTupleElement => ops
            .first()?
            .as_tuple()?
            .get(usize::try_from(attrs.index?).ok()?)
            .cloned(),
        Opcode::Select | Opcode::Clamp => ops.get(1).map(|s| (*s).clone()),
        Opcode::Compare => {
            let a = ops.first()?.as_array()?;
            Some(Shape::Array(ArrayShape {
                dtype: ElementType::Pred,
                ..a.clone()
            }))
        }
        Opcode::Reduce => {
            let dims = attrs.dimensions.as_ref()?;
            let half = ops.len() / 2;
            if half == 0 || half * 2 != ops.len() {
                return None;
            }
            let results: Option<Vec<Shape>> = (0..half)
                .map(|k| {
                    let input = ops[k].as_array()?;
                    let init = ops[half + k].as_array()?;
                    let kept: Vec<i64> = input
                        .dims
                        .iter()
                        .enumerate()
                        .filter(|(d, _)| !dims.contains(&(*d as i64)))
                        .map(|(_, &s)| s)
                        .collect();
                    Some(Shape::array(init.dtype, kept))
                })
                .collect();
            let mut results = results?;
            if results.len() == 1 {
                results.pop()
            } else {
                Some(Shape::Tuple(results))
            }
        }
        _ if matches!(
            op.category(),
            Category::ElementwiseUnary | Category::ElementwiseBinary
        ) && op != Opcode::IsFinite =>
        {
            ops.first().map(|s| (*s).clone())
        }
        _ => None,
    }
}
