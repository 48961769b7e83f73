//! Mutations applied to the module before compiling: HLO rewrites (and the
//! emitter bugs that are simplest to express as one).

use std::collections::HashMap;

use super::mutation::Mutation;
use crate::hlo::{
    ArrayShape, Category, CompId, ElementType, InstrId, Instruction, Module, Opcode, Shape,
};

fn dtype_of(shape: &Shape) -> Option<ElementType> {
    shape.as_array().map(|a| a.dtype)
}

fn is_narrow_float(t: ElementType) -> bool {
    t.is_float() && t.bit_width() < 32
}

/// Applies `mutation`'s module rewrite; returns the module unchanged when the
/// mutation has none or nothing in the module matches.
pub(crate) fn rewrite(mutation: Mutation, module: &Module) -> Module {
    let mut m = module.clone();
    match mutation {
        Mutation::ExcessPrecisionInFusion => {
            widen_fusions(&mut m);
            return m;
        }
        Mutation::ElideConvertPair => {
            for comp in &mut m.computations {
                let snapshot = comp.instructions.clone();
                for instr in &mut comp.instructions {
                    if instr.opcode != Opcode::Convert {
                        continue;
                    }
                    let inner = &snapshot[instr.operands[0].index()];
                    if inner.opcode != Opcode::Convert {
                        continue;
                    }
                    let x = inner.operands[0];
                    let (outer_t, inner_t, x_t) = (
                        dtype_of(&instr.shape),
                        dtype_of(&inner.shape),
                        dtype_of(&snapshot[x.index()].shape),
                    );
                    if let (Some(o), Some(i), Some(xt)) = (outer_t, inner_t, x_t) {
                        if o == xt && o.is_float() && i.is_float() && i.bit_width() < o.bit_width()
                        {
                            instr.opcode = Opcode::Copy;
                            instr.operands = vec![x];
                        }
                    }
                }
            }
        }
        _ => {
            super::config_bugs::rewrite_module(mutation, &mut m);
            super::collective_bugs::rewrite_module(mutation, &mut m);
        }
    }
    for comp in &mut m.computations {
        let snapshot = comp.instructions.clone();
        for instr in &mut comp.instructions {
            rewrite_instruction(mutation, instr, &snapshot);
        }
    }
    m
}

fn rewrite_instruction(mutation: Mutation, instr: &mut Instruction, all: &[Instruction]) {
    let rank = instr.shape.as_array().map_or(0, |a| a.dims.len());
    match (mutation, instr.opcode) {
        (Mutation::RoundAfzAsEven, Opcode::RoundNearestAfz) => {
            instr.opcode = Opcode::RoundNearestEven;
        }
        (Mutation::ShiftRightLogicalAsArithmetic, Opcode::ShiftRightLogical) => {
            instr.opcode = Opcode::ShiftRightArithmetic;
        }
        (Mutation::IotaWrongDimension, Opcode::Iota) if rank >= 2 => {
            if let Some(d) = instr.attrs.iota_dimension {
                instr.attrs.iota_dimension = Some((d + 1) % rank as i64);
            }
        }
        (Mutation::TransposeInversePermutation, Opcode::Transpose) => {
            if let Some(perm) = &instr.attrs.dimensions {
                let mut inverse = vec![0i64; perm.len()];
                for (i, &p) in perm.iter().enumerate() {
                    if let Some(slot) = usize::try_from(p).ok().and_then(|p| inverse.get_mut(p)) {
                        *slot = i as i64;
                    }
                }
                instr.attrs.dimensions = Some(inverse);
            }
        }
        (Mutation::BroadcastDimsReversed, Opcode::Broadcast) => {
            if let Some(dims) = &mut instr.attrs.dimensions {
                dims.reverse();
            }
        }
        (Mutation::PadNegativeAsZero, Opcode::Pad) => {
            if let Some(pads) = &mut instr.attrs.padding {
                for p in pads {
                    if p.low < 0 {
                        // the output keeps its declared extent: the crop moves to the high side
                        p.high += p.low;
                        p.low = 0;
                    }
                }
            }
        }
        (Mutation::SelectSwappedOnBroadcastPred, Opcode::Select) if instr.operands.len() == 3 => {
            let pred = &all[instr.operands[0].index()];
            if pred.opcode == Opcode::Broadcast {
                instr.operands.swap(1, 2);
            }
        }
        _ => super::config_bugs::rewrite_instruction(mutation, instr, all),
    }
}

/// Arithmetic whose narrow-float intermediates a fusion may keep in f32.
fn is_arithmetic(instr: &Instruction, all: &[Instruction]) -> bool {
    matches!(
        instr.opcode.category(),
        Category::ElementwiseUnary | Category::ElementwiseBinary
    ) && !matches!(
        instr.opcode,
        Opcode::Convert
            | Opcode::BitcastConvert
            | Opcode::ReducePrecision
            | Opcode::Compare
            | Opcode::IsFinite
    ) && dtype_of(&instr.shape).is_some_and(is_narrow_float)
        && instr
            .operands
            .iter()
            .all(|o| dtype_of(&all[o.index()].shape).is_some_and(is_narrow_float))
}

fn with_dtype(shape: &Shape, dtype: ElementType) -> Shape {
    match shape {
        Shape::Array(a) => Shape::Array(ArrayShape {
            dtype,
            dims: a.dims.clone(),
            layout: a.layout.clone(),
        }),
        other => other.clone(),
    }
}

/// Keeps the arithmetic intermediates of every fused computation in f32:
/// narrow operands are widened (exactly), arithmetic computes in f32, and the
/// value is rounded to its declared type only where something other than
/// arithmetic uses it (an explicit convert rounds it to the convert's target,
/// which is how explicit round trips stay honoured) and at the fusion's root.
///
/// ```
/// use xla_props::backend::mutant::widen_fused_arithmetic;
/// use xla_props::hlo::parse_module;
/// let m = parse_module("HloModule m\n\
///     fused { p = f16[2] parameter(0)\n a = f16[2] add(p, p)\n ROOT m = f16[2] multiply(a, p) }\n\
///     ENTRY main { x = f16[2] parameter(0)\n ROOT f = f16[2] fusion(x), kind=kLoop, calls=fused }").unwrap();
/// let wide = widen_fused_arithmetic(&m).unwrap();
/// let fused = &wide.computations[0];
/// assert!(fused.instructions.iter().any(|i| i.shape.to_string().starts_with("f32")));
/// assert!(fused.instr(fused.root).shape.to_string().starts_with("f16"));
/// ```
pub fn widen_fused_arithmetic(module: &Module) -> Option<Module> {
    let mut m = module.clone();
    (widen_fusions(&mut m) > 0).then_some(m)
}

/// Widens every fused computation in place; returns how many instructions were widened.
fn widen_fusions(m: &mut Module) -> usize {
    let mut fused: Vec<CompId> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| i.opcode == Opcode::Fusion)
        .flat_map(|i| i.attrs.calls.first().copied())
        .collect();
    fused.sort();
    fused.dedup();
    let mut widened = 0;
    for c in fused {
        let Some(comp) = m.computations.get_mut(c.index()) else {
            continue;
        };
        let Some(order) = comp.post_order() else {
            continue;
        };
        let old = std::mem::take(&mut comp.instructions);
        let mut out: Vec<Instruction> = Vec::with_capacity(old.len() * 2);
        let mut map: HashMap<InstrId, InstrId> = HashMap::new();
        let mut wide: Vec<bool> = Vec::new();
        let push = |out: &mut Vec<Instruction>, wide: &mut Vec<bool>, i: Instruction, w: bool| {
            out.push(i);
            wide.push(w);
            InstrId(out.len() as u32 - 1)
        };
        for id in order {
            let mut instr = old[id.index()].clone();
            let arith = is_arithmetic(&instr, &old);
            let mut operands = Vec::with_capacity(instr.operands.len());
            for (k, o) in instr.operands.iter().enumerate() {
                let new = map[o];
                let declared = &old[o.index()].shape;
                let is_wide = wide[new.index()];
                let operand = if arith && !is_wide {
                    let conv = Instruction::new(
                        format!("{}.widen{k}", instr.name),
                        Opcode::Convert,
                        with_dtype(declared, ElementType::F32),
                        vec![new],
                    );
                    push(&mut out, &mut wide, conv, true)
                } else if !arith && is_wide && instr.opcode != Opcode::Convert {
                    let conv = Instruction::new(
                        format!("{}.round{k}", instr.name),
                        Opcode::Convert,
                        declared.clone(),
                        vec![new],
                    );
                    push(&mut out, &mut wide, conv, false)
                } else {
                    new
                };
                operands.push(operand);
            }
            instr.operands = operands;
            if arith {
                instr.shape = with_dtype(&instr.shape, ElementType::F32);
                widened += 1;
            }
            let new = push(&mut out, &mut wide, instr, arith);
            map.insert(id, new);
        }
        let mut root = map[&comp.root];
        if wide[root.index()] {
            let declared = old[comp.root.index()].shape.clone();
            let conv = Instruction::new(
                format!("{}.round", old[comp.root.index()].name),
                Opcode::Convert,
                declared,
                vec![root],
            );
            root = push(&mut out, &mut wide, conv, false);
        }
        comp.instructions = out;
        comp.root = root;
    }
    widened
}
