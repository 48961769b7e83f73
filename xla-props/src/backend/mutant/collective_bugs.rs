//! Collective miscompilations, as module rewrites (the base backend then
//! runs the rewritten program on its devices): a wrong replica group, a
//! reduction accumulated in bf16 (an order of summation no bound allows),
//! a dropped shard in an all-gather, an off-by-one permutation; and one
//! benign variant, an all-reduce summing its group in reverse order.

use super::mutation::Mutation;
use crate::hlo::collective::{group_mode, parse_replica_groups, DeviceGrid, GroupMode};
use crate::hlo::{
    ArrayShape, CompId, Computation, ConstantData, ElementType, InstrId, Instruction, Module,
    Opcode, Shape,
};

fn set_verbatim(ins: &mut Instruction, key: &str, value: String) {
    match ins.attrs.other.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => ins.attrs.other.push((key.to_string(), value)),
    }
}

fn verbatim<'i>(ins: &'i Instruction, key: &str) -> Option<&'i str> {
    crate::hlo::collective::verbatim(ins, key)
}

fn list_text(groups: &[Vec<usize>]) -> String {
    let inner: Vec<String> = groups
        .iter()
        .map(|g| {
            let ids: Vec<String> = g.iter().map(usize::to_string).collect();
            format!("{{{}}}", ids.join(","))
        })
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// The replica groups of `ins` as lists, given the module's grid.
fn groups_of(ins: &Instruction, grid: DeviceGrid) -> Option<Vec<Vec<usize>>> {
    let ids = match group_mode(ins).ok()? {
        GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => grid.replicas,
        GroupMode::CrossPartition => grid.partitions,
        GroupMode::FlattenedId => grid.devices(),
    };
    let text = verbatim(ins, "replica_groups").unwrap_or("{}");
    parse_replica_groups(text).ok()?.groups(ids).ok()
}

fn has_groups(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::AllReduce
            | Opcode::AllGather
            | Opcode::ReduceScatter
            | Opcode::AllToAll
            | Opcode::CollectiveBroadcast
    )
}

/// Applies a collective mutation's rewrite to `m` (nothing for others).
pub(crate) fn rewrite_module(mutation: Mutation, m: &mut Module) {
    let Ok(grid) = DeviceGrid::of(m) else {
        return;
    };
    match mutation {
        Mutation::CollectiveWrongGroup => each_instruction(m, |ins| {
            if !has_groups(ins.opcode) {
                return;
            }
            if let Some(mut g) = groups_of(ins, grid) {
                if g.len() >= 2 {
                    // a member of each group trades places with the next group's
                    for k in 0..g.len() {
                        let next = (k + 1) % g.len();
                        if next == k || g[k].is_empty() || g[next].is_empty() {
                            continue;
                        }
                        let last = g[k].len() - 1;
                        let (a, b) = (g[k][last], g[next][0]);
                        g[k][last] = b;
                        g[next][0] = a;
                        if g.len() == 2 {
                            break;
                        }
                    }
                } else if g.len() == 1 && g[0].len() >= 4 && g[0].len() % 2 == 0 {
                    let half = g[0].len() / 2;
                    let second = g[0].split_off(half);
                    g.push(second);
                } else {
                    return;
                }
                set_verbatim(ins, "replica_groups", list_text(&g));
            }
        }),
        Mutation::AllReduceReversedGroupOrder => each_instruction(m, |ins| {
            if ins.opcode != Opcode::AllReduce {
                return;
            }
            if let Some(mut g) = groups_of(ins, grid) {
                g.iter_mut().for_each(|g| g.reverse());
                set_verbatim(ins, "replica_groups", list_text(&g));
            }
        }),
        Mutation::CollectivePermuteOffByOne => each_instruction(m, |ins| {
            if ins.opcode != Opcode::CollectivePermute {
                return;
            }
            let n = if verbatim(ins, "channel_id").is_some() {
                grid.partitions
            } else {
                grid.replicas
            };
            if let Ok(pairs) = crate::hlo::collective::source_target_pairs(ins) {
                let moved: Vec<Vec<usize>> =
                    pairs.iter().map(|&(s, t)| vec![s, (t + 1) % n]).collect();
                set_verbatim(ins, "source_target_pairs", list_text(&moved));
            }
        }),
        Mutation::AllReduceNarrowAccumulator => narrow_accumulators(m),
        Mutation::AllGatherDropsShard => drop_last_shards(m, grid),
        _ => {}
    }
}

fn each_instruction(m: &mut Module, mut f: impl FnMut(&mut Instruction)) {
    for comp in &mut m.computations {
        for ins in &mut comp.instructions {
            f(ins);
        }
    }
}

fn scalar(t: ElementType) -> Shape {
    Shape::Array(ArrayShape::new(t, vec![]))
}

/// f32/f64 all-reduces and reduce-scatters with a plain add reducer sum
/// through bf16 (each partial sum rounded to bf16).
fn narrow_accumulators(m: &mut Module) {
    let mut added: Vec<(ElementType, CompId)> = Vec::new();
    for c in 0..m.computations.len() {
        for i in 0..m.computations[c].instructions.len() {
            let ins = &m.computations[c].instructions[i];
            if !matches!(ins.opcode, Opcode::AllReduce | Opcode::ReduceScatter) {
                continue;
            }
            let Some(t) = ins.shape.as_array().map(|a| a.dtype) else {
                continue;
            };
            let Some(reducer) = ins.attrs.to_apply else {
                continue;
            };
            let comp = m.comp(reducer);
            if !(matches!(t, ElementType::F32 | ElementType::F64)
                && comp.instr(comp.root).opcode == Opcode::Add)
            {
                continue;
            }
            let id = match added.iter().find(|(d, _)| *d == t) {
                Some((_, id)) => *id,
                None => {
                    let id = CompId(m.computations.len() as u32);
                    m.computations.push(bf16_add(t));
                    added.push((t, id));
                    id
                }
            };
            m.computations[c].instructions[i].attrs.to_apply = Some(id);
        }
    }
}

fn bf16_add(t: ElementType) -> Computation {
    let mut a = Instruction::new("a", Opcode::Parameter, scalar(t), vec![]);
    a.attrs.parameter_number = Some(0);
    let mut b = Instruction::new("b", Opcode::Parameter, scalar(t), vec![]);
    b.attrs.parameter_number = Some(1);
    let h = ElementType::Bf16;
    let instructions = vec![
        a,
        b,
        Instruction::new("a16", Opcode::Convert, scalar(h), vec![InstrId(0)]),
        Instruction::new("b16", Opcode::Convert, scalar(h), vec![InstrId(1)]),
        Instruction::new("s16", Opcode::Add, scalar(h), vec![InstrId(2), InstrId(3)]),
        Instruction::new("s", Opcode::Convert, scalar(t), vec![InstrId(4)]),
    ];
    Computation {
        name: format!("mutant_bf16_add_{t}"),
        instructions,
        root: InstrId(5),
        other: vec![],
    }
}

/// Every all-gather's operand is zeroed on the last member of each group
/// (its shard never arrives).
fn drop_last_shards(m: &mut Module, grid: DeviceGrid) {
    if grid.replicas != 1 {
        return;
    }
    for c in 0..m.computations.len() {
        let n = m.computations[c].instructions.len();
        for i in 0..n {
            let ins = m.computations[c].instructions[i].clone();
            if ins.opcode != Opcode::AllGather || ins.operands.len() != 1 {
                continue;
            }
            let Some(groups) = groups_of(&ins, grid) else {
                continue;
            };
            let x = ins.operands[0];
            let comp = &mut m.computations[c];
            let Some(shape) = comp.instr(x).shape.as_array().cloned() else {
                continue;
            };
            let mut last = vec![0i128; grid.partitions];
            for g in &groups {
                if let Some(&d) = g.last() {
                    if let Some(slot) = last.get_mut(d) {
                        *slot = 1;
                    }
                }
            }
            let sel = zero_on_last(comp, &ins.name, x, &shape, last);
            comp.instructions[i].operands[0] = sel;
        }
    }
}

/// Appends `select(is_last[partition-id], 0, x)`; returns its id.
fn zero_on_last(
    comp: &mut Computation,
    name: &str,
    x: InstrId,
    shape: &ArrayShape,
    last: Vec<i128>,
) -> InstrId {
    let s32 = ElementType::S32;
    let plain = ArrayShape::new(shape.dtype, shape.dims.clone());
    let mut push = |suffix: &str,
                    op: Opcode,
                    shape: Shape,
                    operands: Vec<InstrId>,
                    f: &dyn Fn(&mut Instruction)| {
        let mut ins = Instruction::new(format!("{name}.drop.{suffix}"), op, shape, operands);
        f(&mut ins);
        comp.instructions.push(ins);
        InstrId(comp.instructions.len() as u32 - 1)
    };
    let count = last.len() as i64;
    let pid = push(
        "pid",
        Opcode::PartitionId,
        scalar(ElementType::U32),
        vec![],
        &|_| {},
    );
    let idx = push("idx", Opcode::Convert, scalar(s32), vec![pid], &|_| {});
    let table = push(
        "table",
        Opcode::Constant,
        Shape::Array(ArrayShape::new(s32, vec![count])),
        vec![],
        &|i| {
            i.attrs.constant = Some(ConstantData::Int(last.clone()));
        },
    );
    let ds = push(
        "ds",
        Opcode::DynamicSlice,
        Shape::Array(ArrayShape::new(s32, vec![1])),
        vec![table, idx],
        &|i| {
            i.attrs.dynamic_slice_sizes = Some(vec![1]);
        },
    );
    let flag = push("flag", Opcode::Reshape, scalar(s32), vec![ds], &|_| {});
    let zero_i = push("zi", Opcode::Constant, scalar(s32), vec![], &|i| {
        i.attrs.constant = Some(ConstantData::Int(vec![0]));
    });
    let is_last = push(
        "is_last",
        Opcode::Compare,
        scalar(ElementType::Pred),
        vec![flag, zero_i],
        &|i| {
            i.attrs.direction = Some(crate::hlo::ComparisonDirection::Ne);
        },
    );
    let pred_shape = Shape::Array(ArrayShape::new(ElementType::Pred, shape.dims.clone()));
    let mask = push("mask", Opcode::Broadcast, pred_shape, vec![is_last], &|i| {
        i.attrs.dimensions = Some(vec![]);
    });
    let zero = push(
        "zero",
        Opcode::Constant,
        scalar(shape.dtype),
        vec![],
        &|i| {
            i.attrs.constant = Some(if shape.dtype.is_float() {
                ConstantData::Float(vec![0.0])
            } else if shape.dtype.is_pred() {
                ConstantData::Pred(vec![false])
            } else {
                ConstantData::Int(vec![0])
            });
        },
    );
    let zeros = push(
        "zeros",
        Opcode::Broadcast,
        Shape::Array(plain.clone()),
        vec![zero],
        &|i| {
            i.attrs.dimensions = Some(vec![]);
        },
    );
    push(
        "select",
        Opcode::Select,
        Shape::Array(plain),
        vec![mask, zeros, x],
        &|_| {},
    )
}
