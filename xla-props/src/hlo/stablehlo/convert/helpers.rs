//! Free helpers of the converter: result naming, attribute carrying, dead
//! instruction removal, parameter placement, broadcasts, the elementwise table.

use std::collections::HashSet;

use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{Attrs, Computation, InstrId, Instruction};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{err, Builder, R};
use crate::hlo::stablehlo::syntax::{Attr, Op, Region, Type, ValueRef};

/// The instruction an op's `loc` and `xla.*` attributes describe: its one
/// new result, or the one new tuple its results are elements of.
pub(super) fn named_result(b: &Builder, ids: &[InstrId], before: usize) -> Option<InstrId> {
    let fresh = |id: &InstrId| id.index() >= before && id.index() < b.instrs.len();
    match ids {
        [id] => fresh(id).then_some(*id),
        [first, ..] => {
            let of = |id: &InstrId| {
                let i = &b.instrs[id.index()];
                (i.opcode == Opcode::GetTupleElement && i.operands.len() == 1)
                    .then(|| i.operands[0])
            };
            let t = of(first)?;
            (ids.iter().all(|id| fresh(id) && of(id) == Some(t)) && fresh(&t)).then_some(t)
        }
        [] => None,
    }
}

/// The HLO attributes the printer carries verbatim, `xla.hlo.NAME = "value"`.
pub(super) fn hlo_attrs(attrs: &[(String, Attr)]) -> Vec<(String, String)> {
    attrs
        .iter()
        .filter_map(|(k, v)| match (k.strip_prefix("xla.hlo."), v) {
            (Some(name), Attr::Str(s)) if !name.is_empty() => Some((name.to_string(), s.clone())),
            _ => None,
        })
        .collect()
}

/// Restores what the printer carries for one HLO instruction: its name
/// (`loc("name")`), its shape with layouts (`xla.shape = "f32[2,3]{0,1}"`,
/// the same dims and types as the op's) and its verbatim attributes.
pub(super) fn annotate(
    i: &mut Instruction,
    loc: Option<&str>,
    attrs: &[(String, Attr)],
    pos: usize,
) -> R<()> {
    if let Some(name) = loc.filter(|n| !n.is_empty()) {
        i.name = name.to_string();
    }
    if let Some((_, a)) = attrs.iter().find(|(k, _)| k == "xla.shape") {
        let shape = match a {
            Attr::Str(s) => crate::hlo::parser::parse_shape_text(s),
            _ => None,
        }
        .ok_or((
            pos,
            "`xla.shape` must be an HLO shape in a string".to_string(),
        ))?;
        if shape.to_string() != with_layouts(&i.shape, &shape).to_string() {
            return err(
                pos,
                format!("`xla.shape` {shape} does not match the type {}", i.shape),
            );
        }
        i.shape = shape;
    }
    // group counts of 1 the HLO text wrote explicitly
    if let Some((_, a)) = attrs.iter().find(|(k, _)| k == "xla.explicit_group_counts") {
        let bad = || {
            (
                pos,
                "`xla.explicit_group_counts` is \"feature\", \"batch\" or both, on a convolution"
                    .to_string(),
            )
        };
        let (Attr::Str(list), Opcode::Convolution) = (a, i.opcode) else {
            return Err(bad());
        };
        for k in list.split(',') {
            let count = match k {
                "feature" => &mut i.attrs.feature_group_count,
                "batch" => &mut i.attrs.batch_group_count,
                _ => return Err(bad()),
            };
            if count.is_none() {
                *count = Some(1);
            }
        }
    }
    // an HLO op StableHLO has no op for, written as the equivalent reshape
    match attrs.iter().find(|(k, _)| k == "xla.hlo_opcode") {
        None => {}
        Some((_, Attr::Str(o))) if i.opcode == Opcode::Reshape && o == "copy" => {
            i.opcode = Opcode::Copy;
        }
        Some((_, Attr::Str(o))) if i.opcode == Opcode::Reshape && o == "bitcast" => {
            i.opcode = Opcode::Bitcast;
        }
        Some(_) => {
            return err(
                pos,
                "`xla.hlo_opcode` is \"copy\" or \"bitcast\", on a reshape",
            )
        }
    }
    i.attrs.other.extend(hlo_attrs(attrs));
    Ok(())
}

/// The tuple-shaped instruction a `stablehlo.tuple` op rebuilds: its
/// operands are `%r#0`, ..., `%r#n-1`, every result of one op, which the
/// reader took apart with `get-tuple-element`s of that instruction.
pub(super) fn whole_tuple(op: &Op, b: &Builder) -> Option<InstrId> {
    if op.name != "stablehlo.tuple" || op.results.len() != 1 || op.results[0].1 != 1 {
        return None;
    }
    let first = op.operands.first()?;
    let parts = b.scope.get(&first.name)?;
    let in_order = op.operands.len() == parts.len()
        && parts.len() > 1
        && op
            .operands
            .iter()
            .enumerate()
            .all(|(k, v)| v.name == first.name && v.index == Some(k));
    if !in_order {
        return None;
    }
    let t = match b.instrs.get(parts[0].index()) {
        Some(g) if g.opcode == Opcode::GetTupleElement && g.operands.len() == 1 => g.operands[0],
        _ => return None,
    };
    let all = parts.iter().enumerate().all(|(k, p)| {
        b.synthetic.contains(p)
            && b.instrs.get(p.index()).is_some_and(|g| {
                g.opcode == Opcode::GetTupleElement
                    && g.operands == [t]
                    && g.attrs.index == Some(k as i64)
            })
    });
    let arity = b.instrs.get(t.index())?.shape.as_tuple()?.len();
    (all && arity == parts.len()).then_some(t)
}

/// Removes `dead` instructions (nothing uses them) from `c`, renumbering the rest.
pub(super) fn drop_instructions(c: &mut Computation, dead: &[InstrId]) {
    if dead.is_empty() {
        return;
    }
    let mut new_index = vec![None; c.instructions.len()];
    let mut kept = Vec::with_capacity(c.instructions.len());
    for (k, i) in std::mem::take(&mut c.instructions).into_iter().enumerate() {
        if dead.contains(&InstrId(k as u32)) {
            continue;
        }
        new_index[k] = Some(InstrId(kept.len() as u32));
        kept.push(i);
    }
    for i in &mut kept {
        for o in &mut i.operands {
            if let Some(Some(n)) = new_index.get(o.index()) {
                *o = *n;
            }
        }
    }
    if let Some(Some(n)) = new_index.get(c.root.index()) {
        c.root = *n;
    }
    c.instructions = kept;
}

/// `s` with the layouts of `like` where the structure matches (for comparing
/// an `xla.shape` with the op's type).
pub(super) fn with_layouts(s: &Shape, like: &Shape) -> Shape {
    match (s, like) {
        (Shape::Array(a), Shape::Array(l)) => {
            let mut a = a.clone();
            a.layout = l.layout.clone();
            Shape::Array(a)
        }
        (Shape::Tuple(a), Shape::Tuple(l)) if a.len() == l.len() => {
            Shape::Tuple(a.iter().zip(l).map(|(x, y)| with_layouts(x, y)).collect())
        }
        _ => s.clone(),
    }
}

/// Moves a function's parameters (its first `n` instructions) to the
/// instruction positions the printer recorded, keeping every other
/// instruction's relative order.
pub(super) fn place_parameters(c: &mut Computation, n: usize, positions: &[i64]) -> bool {
    let total = c.instructions.len();
    if positions.len() != n || n > total {
        return false;
    }
    let mut order: Vec<Option<usize>> = vec![None; total];
    for (k, &p) in positions.iter().enumerate() {
        let Some(p) = usize::try_from(p)
            .ok()
            .filter(|&p| p < total && order[p].is_none())
        else {
            return false;
        };
        order[p] = Some(k);
    }
    let mut rest = n..total;
    let Some(order) = order
        .into_iter()
        .map(|o| o.or_else(|| rest.next()))
        .collect::<Option<Vec<usize>>>()
    else {
        return false;
    };
    let mut new_index = vec![0u32; total];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new as u32;
    }
    let mut moved: Vec<Instruction> = order.iter().map(|&o| c.instructions[o].clone()).collect();
    for i in &mut moved {
        for op in &mut i.operands {
            if let Some(&k) = new_index.get(op.index()) {
                *op = InstrId(k);
            }
        }
    }
    c.instructions = moved;
    if let Some(&k) = new_index.get(c.root.index()) {
        c.root = InstrId(k);
    }
    true
}

pub(super) fn outer_is_constant(outers: &[&Builder], name: &str) -> bool {
    for o in outers.iter().rev() {
        if let Some(ids) = o.scope.get(name) {
            return ids.len() == 1 && o.instrs[ids[0].index()].opcode == Opcode::Constant;
        }
    }
    false
}

/// Values used in `r` (and its nested regions) that it does not define, in first-use order.
pub(super) fn free_vars(
    r: &Region,
    defined: &mut HashSet<String>,
    out: &mut Vec<ValueRef>,
    seen: &mut HashSet<String>,
) {
    let mut local = defined.clone();
    for (a, _) in &r.args {
        local.insert(a.clone());
    }
    for op in &r.ops {
        for v in &op.operands {
            if !local.contains(&v.name) && seen.insert(v.name.clone()) {
                out.push(ValueRef {
                    name: v.name.clone(),
                    index: None,
                    pos: v.pos,
                });
            }
        }
        for sub in &op.regions {
            free_vars(sub, &mut local.clone(), out, seen);
        }
        for (n, _) in &op.results {
            local.insert(n.clone());
        }
    }
}

pub(super) fn one_result(op: &Op) -> R<(Vec<i64>, ElementType)> {
    match op.result_types.as_slice() {
        [Type::Tensor(d, e)] => Ok((d.clone(), *e)),
        _ => err(op.pos, format!("`{}` has one tensor result", op.name)),
    }
}

/// StableHLO's broadcast_in_dim may expand size-1 dimensions; HLO's
/// broadcast may not, so those are reshaped away first.
pub(crate) fn broadcast_in_dim(
    b: &mut Builder,
    x: InstrId,
    dims: &[i64],
    out: (Vec<i64>, ElementType),
    pos: usize,
) -> R<InstrId> {
    let (in_dims, dtype) = b.array(x, pos)?;
    if in_dims.len() != dims.len() {
        return err(
            pos,
            "broadcast_dimensions must name every operand dimension",
        );
    }
    let mut keep = Vec::new();
    let mut keep_dims = Vec::new();
    for (k, &d) in dims.iter().enumerate() {
        let target = usize::try_from(d).ok().and_then(|d| out.0.get(d)).copied();
        let Some(target) = target else {
            return err(pos, format!("broadcast dimension {d} out of range"));
        };
        if in_dims[k] == target {
            keep.push(in_dims[k]);
            keep_dims.push(d);
        } else if in_dims[k] != 1 {
            return err(
                pos,
                format!(
                    "cannot broadcast dimension of size {} to {target}",
                    in_dims[k]
                ),
            );
        }
    }
    let src = if keep.len() == in_dims.len() {
        x
    } else {
        b.push(
            Opcode::Reshape,
            Shape::array(dtype, keep),
            vec![x],
            Attrs::default(),
        )
    };
    if keep_dims.len() == out.0.len() && keep_dims.iter().enumerate().all(|(i, &d)| d == i as i64) {
        // an identity broadcast: keep it a broadcast so the text reads back the same
    }
    Ok(b.push(
        Opcode::Broadcast,
        Shape::array(out.1, out.0),
        vec![src],
        Attrs {
            dimensions: Some(keep_dims),
            ..Attrs::default()
        },
    ))
}

/// Select and clamp take scalar operands in StableHLO; HLO wants them broadcast.
pub(super) fn broadcast_scalars(b: &mut Builder, op: &Op, ops: Vec<InstrId>) -> R<Vec<InstrId>> {
    let Some(Type::Tensor(dims, _)) = op.result_types.first() else {
        return Ok(ops);
    };
    if dims.is_empty() {
        return Ok(ops);
    }
    let mut out = Vec::new();
    for x in ops {
        let (d, e) = b.array(x, op.pos)?;
        if d.is_empty() {
            out.push(broadcast_in_dim(b, x, &[], (dims.clone(), e), op.pos)?);
        } else {
            out.push(x);
        }
    }
    Ok(out)
}

/// StableHLO op name -> elementwise HLO opcode.
pub(crate) fn elementwise(name: &str) -> Option<Opcode> {
    use Opcode as O;
    let short = name.strip_prefix("stablehlo.").unwrap_or(name);
    Some(match short {
        "abs" => O::Abs,
        "negate" => O::Negate,
        "sign" => O::Sign,
        "not" => O::Not,
        "ceil" => O::Ceil,
        "floor" => O::Floor,
        "round_nearest_afz" => O::RoundNearestAfz,
        "round_nearest_even" => O::RoundNearestEven,
        "exponential" => O::Exponential,
        "exponential_minus_one" => O::ExponentialMinusOne,
        "log" => O::Log,
        "log_plus_one" => O::LogPlusOne,
        "logistic" => O::Logistic,
        "sine" => O::Sine,
        "cosine" => O::Cosine,
        "tan" => O::Tan,
        "tanh" => O::Tanh,
        "sqrt" => O::Sqrt,
        "rsqrt" => O::Rsqrt,
        "cbrt" => O::Cbrt,
        "is_finite" => O::IsFinite,
        "popcnt" => O::Popcnt,
        "count_leading_zeros" => O::CountLeadingZeros,
        "add" => O::Add,
        "subtract" => O::Subtract,
        "multiply" => O::Multiply,
        "divide" => O::Divide,
        "remainder" => O::Remainder,
        "power" => O::Power,
        "maximum" => O::Maximum,
        "minimum" => O::Minimum,
        "atan2" => O::Atan2,
        "and" => O::And,
        "or" => O::Or,
        "xor" => O::Xor,
        "shift_left" => O::ShiftLeft,
        "shift_right_arithmetic" => O::ShiftRightArithmetic,
        "shift_right_logical" => O::ShiftRightLogical,
        "select" => O::Select,
        "clamp" => O::Clamp,
        "convert" => O::Convert,
        "bitcast_convert" => O::BitcastConvert,
        "reshape" => O::Reshape,
        _ => return None,
    })
}

// ---- attribute readers ----
