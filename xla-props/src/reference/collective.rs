//! Collectives by the spec, for any evaluator that runs one thread per
//! device: which group a device is in ([`crate::hlo::collective`]), what it
//! sends, and what it makes of what its group sent. Only the reduction of
//! all-reduce and reduce-scatter is the evaluator's own (the reference sums
//! exactly; the interpreter folds in group order), passed in as `reduce`.
//!
//! Also the SPMD partitioner's custom calls as they appear in an annotated
//! module: `Sharding` is the identity, `SPMDFullToShardShape` takes this
//! device's tile, `SPMDShardToFullShape` puts the devices' tiles together.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::hlo::collective::{
    participants_in, source_target_pairs, verbatim, Device, DeviceGrid, GroupOrder,
};
use crate::hlo::sharding::Sharding;
use crate::hlo::{ArrayShape, ElementType, Instruction, Opcode, Shape};
use crate::literal::{Literal, Value};

use super::rendezvous::Rendezvous;

/// One device's view of a multi-device evaluation.
pub struct DeviceContext {
    /// This device.
    pub device: Device,
    /// The grid.
    pub grid: DeviceGrid,
    /// Where the devices meet.
    pub rendezvous: Arc<Rendezvous<Value>>,
    /// The sharding each partitioner custom call uses, by instruction name.
    pub shardings: Arc<HashMap<String, Sharding>>,
    /// How cross-replica-and-partition groups are ordered.
    pub order: GroupOrder,
    /// The infeed queue the devices share, if the run has one.
    infeed: Option<Arc<Mutex<VecDeque<Literal>>>>,
    counts: HashMap<String, u64>,
}

impl DeviceContext {
    /// The context of `device`.
    pub fn new(
        device: Device,
        grid: DeviceGrid,
        rendezvous: Arc<Rendezvous<Value>>,
        shardings: Arc<HashMap<String, Sharding>>,
    ) -> Self {
        DeviceContext {
            device,
            grid,
            rendezvous,
            shardings,
            order: GroupOrder::Xla,
            infeed: None,
            counts: HashMap::new(),
        }
    }

    /// The same context with groups in `order`.
    pub fn with_order(mut self, order: GroupOrder) -> Self {
        self.order = order;
        self
    }

    /// The same context reading infeed from `queue` (shared by the devices).
    pub fn with_infeed(mut self, queue: Arc<Mutex<VecDeque<Literal>>>) -> Self {
        self.infeed = Some(queue);
        self
    }

    /// The next array of the infeed queue (None: no queue, or it is empty).
    pub fn pop_infeed(&self) -> Option<Literal> {
        let q = self.infeed.as_ref()?;
        q.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    }

    /// Meets the other `size` members of the exchange named `key` (this
    /// device at `pos`; `group` tells groups of one key apart): the n-th
    /// time this device counts `counter` meets the others' n-th.
    pub(crate) fn meet(
        &mut self,
        (key, counter): (&str, &str),
        group: usize,
        size: usize,
        pos: usize,
        value: Value,
    ) -> Result<Vec<Value>, String> {
        let n = self.counts.entry(counter.to_string()).or_insert(0);
        let occurrence = *n;
        *n += 1;
        self.rendezvous
            .exchange(key, occurrence, group, size, pos, value)
    }

    /// Sends `value` to `group` (which holds this device) at `ins`; returns
    /// the group's values in group order.
    pub(super) fn exchange(
        &mut self,
        ins: &Instruction,
        group: &[Device],
        value: Value,
    ) -> Result<Vec<Value>, String> {
        let pos = group
            .iter()
            .position(|d| *d == self.device)
            .ok_or_else(|| format!("`{}`: this device is not in its own group", ins.name))?;
        let first = self.grid.id(group[0]);
        self.meet((&ins.name, &ins.name), first, group.len(), pos, value)
    }

    pub(super) fn my_group(&self, ins: &Instruction) -> Result<Vec<Device>, String> {
        self.group_if_any(ins)?.ok_or_else(|| {
            format!(
                "`{}`: device (replica {}, partition {}) is in no replica group",
                ins.name, self.device.replica, self.device.partition
            )
        })
    }

    pub(super) fn group_if_any(&self, ins: &Instruction) -> Result<Option<Vec<Device>>, String> {
        Ok(participants_in(ins, self.grid, self.order)?
            .into_iter()
            .find(|g| g.contains(&self.device)))
    }
}

/// Whether `ins` needs the other devices (or its device's identity).
pub fn is_multi_device(ins: &Instruction) -> bool {
    is_collective_opcode(ins.opcode)
        || matches!(
            partitioner_call(ins),
            Some(PartitionerCall::FullToShard | PartitionerCall::ShardToFull)
        )
}

/// The collectives and device ids this module evaluates (`-done` ops aside).
pub fn is_collective_opcode(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::AllReduce
            | O::AllReduceStart
            | O::AllGather
            | O::AllGatherStart
            | O::ReduceScatter
            | O::AllToAll
            | O::CollectivePermute
            | O::CollectivePermuteStart
            | O::CollectiveBroadcast
            | O::CollectiveReduce
            | O::ReplicaId
            | O::PartitionId
    )
}

/// Whether `ins` belongs to multi-device programs: a collective (or its
/// `-done`), replica-id, partition-id, or a partitioner custom call.
pub fn is_spmd_instruction(ins: &Instruction) -> bool {
    is_multi_device(ins) || is_collective_done(ins.opcode) || partitioner_call(ins).is_some()
}

/// The SPMD partitioner's custom calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionerCall {
    /// `Sharding`: an annotation; the identity.
    Sharding,
    /// `SPMDFullToShardShape`: this device's tile.
    FullToShard,
    /// `SPMDShardToFullShape`: the tiles put together.
    ShardToFull,
}

/// Which partitioner custom call `ins` is, if any.
pub fn partitioner_call(ins: &Instruction) -> Option<PartitionerCall> {
    if ins.opcode != Opcode::CustomCall {
        return None;
    }
    match ins.attrs.custom_call_target.as_deref()? {
        "Sharding" => Some(PartitionerCall::Sharding),
        "SPMDFullToShardShape" => Some(PartitionerCall::FullToShard),
        "SPMDShardToFullShape" => Some(PartitionerCall::ShardToFull),
        // Shardy's forms of the same three (`hlo::sdy`)
        "xla.sdy.FuncResultSharding" => Some(PartitionerCall::Sharding),
        "xla.sdy.GlobalToLocalShape" => Some(PartitionerCall::FullToShard),
        "xla.sdy.LocalToGlobalShape" => Some(PartitionerCall::ShardToFull),
        _ => None,
    }
}

/// Ops that only pass a started collective's result on.
pub fn is_collective_done(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::AllReduceDone | Opcode::AllGatherDone | Opcode::CollectivePermuteDone
    )
}

/// The result of a `-done` op from its `-start`'s value.
pub fn collective_done(ins: &Instruction, started: &Value) -> Result<Value, String> {
    match (ins.opcode, started) {
        (Opcode::AllReduceDone, v) => Ok(v.clone()),
        (_, Value::Tuple(items)) if items.len() >= 2 => Ok(items[1].clone()),
        _ => Err(format!(
            "`{}`: its operand is not a started collective",
            ins.name
        )),
    }
}

/// A reduction of a group's arrays (in group order) into one array.
pub type GroupReduce<'r> = dyn FnMut(&Instruction, &[&Literal]) -> Result<Literal, String> + 'r;

/// Runs multi-device instruction `ins` on this device.
pub fn step(
    ctx: &mut DeviceContext,
    ins: &Instruction,
    ops: &[&Value],
    reduce: &mut GroupReduce<'_>,
) -> Result<Value, String> {
    use Opcode as O;
    match ins.opcode {
        O::ReplicaId => u32_scalar(ctx.device.replica),
        O::PartitionId => u32_scalar(ctx.device.partition),
        O::AllReduce | O::AllReduceStart | O::CollectiveReduce => {
            let group = ctx.my_group(ins)?;
            let got = ctx.exchange(ins, &group, tuple_of(ops))?;
            let per = columns(&got, ops.len())?;
            let root = group[0] == ctx.device;
            let outs = per
                .iter()
                .map(|xs| match ins.opcode {
                    // collective-reduce: the group's first member gets the
                    // reduction, the others zeros
                    O::CollectiveReduce if !root => {
                        Literal::zeros(&xs[0].shape()).map_err(|e| e.to_string())
                    }
                    _ => reduce(ins, xs),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(untuple(outs))
        }
        O::ReduceScatter => {
            let group = ctx.my_group(ins)?;
            let pos = position(&group, ctx.device);
            let dim = one_dimension(ins)?;
            let got = ctx.exchange(ins, &group, tuple_of(ops))?;
            let per = columns(&got, ops.len())?;
            let mut outs = Vec::new();
            for xs in &per {
                let full = reduce(ins, xs)?;
                outs.push(split(&full, dim, group.len())?.swap_remove(pos));
            }
            Ok(untuple(outs))
        }
        O::AllGather | O::AllGatherStart => {
            let group = ctx.my_group(ins)?;
            let dim = one_dimension(ins)?;
            let got = ctx.exchange(ins, &group, tuple_of(ops))?;
            let per = columns(&got, ops.len())?;
            let outs = per
                .iter()
                .map(|xs| concat(xs, dim))
                .collect::<Result<Vec<_>, _>>()?;
            let result = untuple(outs);
            if ins.opcode == O::AllGatherStart {
                let sent = match ops {
                    [one] => (*one).clone(),
                    _ => tuple_of(ops),
                };
                Ok(Value::Tuple(vec![sent, result]))
            } else {
                Ok(result)
            }
        }
        O::AllToAll => all_to_all(ctx, ins, ops),
        O::CollectivePermute | O::CollectivePermuteStart => collective_permute(ctx, ins, ops),
        O::CollectiveBroadcast => broadcast(ctx, ins, ops),
        O::CustomCall => partitioner_step(ctx, ins, ops),
        op => Err(format!("{op} is not a multi-device op")),
    }
}

/// collective-broadcast: every member of a group gets its root's operands
/// (the group's first member, or with `has_dynamic_root=true` the member
/// the last operand names, one index per operand); a device in no group
/// gets zeros.
fn broadcast(ctx: &mut DeviceContext, ins: &Instruction, ops: &[&Value]) -> Result<Value, String> {
    let dynamic = verbatim(ins, "has_dynamic_root").is_some_and(|v| v.trim() == "true");
    let (data, roots) = match (dynamic, ops.split_last()) {
        (true, Some((Value::Array(r), data))) => (data, Some(r)),
        (true, _) => {
            return Err(format!(
                "`{}`: has_dynamic_root needs a last operand of root indices",
                ins.name
            ))
        }
        (false, _) => (ops, None),
    };
    let Some(group) = ctx.group_if_any(ins)? else {
        let zeros = data
            .iter()
            .map(|v| match v {
                Value::Array(x) => Literal::zeros(&x.shape()).map_err(|e| e.to_string()),
                _ => Err(format!("`{}`: an operand is not an array", ins.name)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(untuple(zeros));
    };
    let got = ctx.exchange(ins, &group, tuple_of(data))?;
    let cols = columns(&got, data.len())?;
    let mut out = Vec::with_capacity(cols.len());
    for (k, xs) in cols.into_iter().enumerate() {
        let root = match roots {
            None => 0,
            Some(r) if k < r.element_count() && r.dtype().is_integer() => {
                let i = r.get_i128(k);
                usize::try_from(i)
                    .ok()
                    .filter(|&i| i < xs.len())
                    .ok_or_else(|| {
                        format!(
                            "`{}`: root index {i} is outside its group of {}",
                            ins.name,
                            xs.len()
                        )
                    })?
            }
            Some(_) => {
                return Err(format!(
                    "`{}`: the roots are not {} integers",
                    ins.name,
                    data.len()
                ))
            }
        };
        out.push(xs[root].clone());
    }
    Ok(untuple(out))
}

pub(super) fn u32_scalar(v: usize) -> Result<Value, String> {
    Literal::from_i128s(&ArrayShape::new(ElementType::U32, vec![]), &[v as i128])
        .map(Value::Array)
        .map_err(|e| e.to_string())
}

fn position(group: &[Device], d: Device) -> usize {
    group.iter().position(|g| *g == d).unwrap_or(0)
}

fn tuple_of(ops: &[&Value]) -> Value {
    Value::Tuple(ops.iter().map(|v| (*v).clone()).collect())
}

fn untuple(mut outs: Vec<Literal>) -> Value {
    if outs.len() == 1 {
        Value::Array(outs.remove(0))
    } else {
        Value::Tuple(outs.into_iter().map(Value::Array).collect())
    }
}

/// The group's values (each a tuple of `n` arrays) as `n` columns.
fn columns(got: &[Value], n: usize) -> Result<Vec<Vec<&Literal>>, String> {
    let mut out: Vec<Vec<&Literal>> = vec![Vec::with_capacity(got.len()); n];
    for v in got {
        let Value::Tuple(items) = v else {
            return Err("a device sent a malformed value".into());
        };
        if items.len() != n {
            return Err("devices sent different numbers of operands".into());
        }
        for (k, item) in items.iter().enumerate() {
            let Value::Array(l) = item else {
                return Err("a collective's operand is not an array".into());
            };
            out[k].push(l);
        }
    }
    Ok(out)
}

fn one_dimension(ins: &Instruction) -> Result<usize, String> {
    match ins.attrs.dimensions.as_deref() {
        Some([d]) if *d >= 0 => Ok(*d as usize),
        _ => Err(format!("`{}` needs one dimension", ins.name)),
    }
}

fn all_to_all(ctx: &mut DeviceContext, ins: &Instruction, ops: &[&Value]) -> Result<Value, String> {
    let group = ctx.my_group(ins)?;
    let pos = position(&group, ctx.device);
    let n = group.len();
    if let Some(dim) = ins.attrs.dimensions.as_deref() {
        // the array form: split along the dimension, chunk j to member j,
        // the received chunks concatenated in group order
        let [d] = dim else {
            return Err(format!("`{}` needs one split dimension", ins.name));
        };
        let d = usize::try_from(*d).map_err(|_| format!("`{}`: negative dimension", ins.name))?;
        let [Value::Array(x)] = ops else {
            return Err(format!("`{}`: the array form takes one array", ins.name));
        };
        let chunks = split(x, d, n)?;
        let sent = Value::Tuple(chunks.into_iter().map(Value::Array).collect());
        let got = ctx.exchange(ins, &group, sent)?;
        let mine = columns(&got, n)?.swap_remove(pos);
        return concat(&mine, d).map(Value::Array);
    }
    // the tuple form: operand j goes to member j
    if ops.len() != n {
        return Err(format!(
            "`{}`: {} operands for a group of {n}",
            ins.name,
            ops.len()
        ));
    }
    let got = ctx.exchange(ins, &group, tuple_of(ops))?;
    let mine = columns(&got, n)?.swap_remove(pos);
    Ok(Value::Tuple(
        mine.into_iter().map(|l| Value::Array(l.clone())).collect(),
    ))
}

fn collective_permute(
    ctx: &mut DeviceContext,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, String> {
    let [Value::Array(x)] = ops else {
        return Err(format!(
            "`{}`: only the one-operand collective-permute is evaluated",
            ins.name
        ));
    };
    let cross_partition = verbatim(ins, "channel_id").is_some();
    let me = ctx.device;
    // everyone whose ids the pairs name: the replicas of this partition, or
    // the partitions of this replica
    let scope: Vec<Device> = if cross_partition {
        (0..ctx.grid.partitions)
            .map(|partition| Device {
                replica: me.replica,
                partition,
            })
            .collect()
    } else {
        (0..ctx.grid.replicas)
            .map(|replica| Device {
                replica,
                partition: me.partition,
            })
            .collect()
    };
    let my_id = if cross_partition {
        me.partition
    } else {
        me.replica
    };
    let pairs = source_target_pairs(ins)?;
    if let Some(&(s, t)) = pairs
        .iter()
        .find(|(s, t)| *s >= scope.len() || *t >= scope.len())
    {
        return Err(format!(
            "`{}`: pair {{{s},{t}}} names a device past the {} there are",
            ins.name,
            scope.len()
        ));
    }
    let got = ctx.exchange(ins, &scope, Value::Tuple(vec![ops[0].clone()]))?;
    let from = pairs.iter().find(|(_, t)| *t == my_id).map(|(s, _)| *s);
    let result = match from {
        Some(s) => columns(&got, 1)?[0][s].clone(),
        None => Literal::zeros(&x.shape()).map_err(|e| e.to_string())?,
    };
    if ins.opcode == Opcode::CollectivePermuteStart {
        let Shape::Tuple(parts) = &ins.shape else {
            return Err(format!(
                "`{}`: a started permute has a tuple shape",
                ins.name
            ));
        };
        let mut items = vec![ops[0].clone(), Value::Array(result)];
        for p in parts.iter().skip(2) {
            let a = p
                .as_array()
                .ok_or_else(|| format!("`{}`: a context that is not an array", ins.name))?;
            items.push(Value::Array(
                Literal::zeros(&ArrayShape::new(a.dtype, a.dims.clone()))
                    .map_err(|e| e.to_string())?,
            ));
        }
        return Ok(Value::Tuple(items));
    }
    Ok(Value::Array(result))
}

fn partitioner_step(
    ctx: &mut DeviceContext,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, String> {
    let xs: Vec<&Literal> = ops
        .iter()
        .map(|v| match v {
            Value::Array(x) => Ok(x),
            _ => Err(format!("`{}` takes arrays", ins.name)),
        })
        .collect::<Result<_, _>>()?;
    if xs.is_empty() {
        return Err(format!("`{}` takes at least one array", ins.name));
    }
    // one sharding per operand (a tuple sharding for several)
    let shardings = || -> Result<Vec<Sharding>, String> {
        let s = ctx
            .shardings
            .get(&ins.name)
            .cloned()
            .ok_or_else(|| format!("`{}`: no sharding says how to split it", ins.name))?;
        s.leaves(xs.len())
    };
    let outs: Vec<&ArrayShape> = ins.shape.leaves();
    if outs.len() != xs.len() {
        return Err(format!(
            "`{}`: {} operands for {} results",
            ins.name,
            xs.len(),
            outs.len()
        ));
    }
    let wrap = |mut v: Vec<Literal>| {
        if matches!(ins.shape, Shape::Tuple(_)) {
            Value::Tuple(v.into_iter().map(Value::Array).collect())
        } else {
            Value::Array(v.swap_remove(0))
        }
    };
    match partitioner_call(ins) {
        Some(PartitionerCall::Sharding) => Ok(ops[0].clone()),
        Some(PartitionerCall::FullToShard) => {
            let mut v = Vec::with_capacity(xs.len());
            for (x, s) in xs.iter().zip(shardings()?) {
                let tile = s.tile_of(ctx.device.partition, x.dims())?;
                v.push(block(x, &tile)?);
            }
            Ok(wrap(v))
        }
        Some(PartitionerCall::ShardToFull) => {
            let shardings = shardings()?;
            let me = ctx.device;
            let scope: Vec<Device> = (0..ctx.grid.partitions)
                .map(|partition| Device {
                    replica: me.replica,
                    partition,
                })
                .collect();
            let sent = Value::Tuple(ops.iter().map(|v| (*v).clone()).collect());
            let got = ctx.exchange(ins, &scope, sent)?;
            let cols = columns(&got, xs.len())?;
            let mut v = Vec::with_capacity(xs.len());
            for (((tiles, s), out), x) in cols.iter().zip(&shardings).zip(&outs).zip(&xs) {
                let dims: Vec<usize> = out.dims.iter().map(|&d| d as usize).collect();
                // the operand's type: the first-order bound sends f64 radii this way
                let mut full = Literal::zeros(&ArrayShape::new(x.dtype(), out.dims.clone()))
                    .map_err(|e| e.to_string())?;
                for (p, t) in tiles.iter().enumerate() {
                    let at = s.tile_of(p, &dims)?;
                    place(&mut full, t, &at)?;
                }
                v.push(full);
            }
            Ok(wrap(v))
        }
        None => Err(format!("`{}` is not a partitioner custom call", ins.name)),
    }
}

/// The block of `x` at `(start, size)` per dimension; elements past the
/// end are zero (a padded tile).
pub fn block(x: &Literal, at: &[(usize, usize)]) -> Result<Literal, String> {
    wide_complex(x.dtype())?;
    let dims = x.dims();
    if at.len() != dims.len() {
        return Err(format!(
            "a block of rank {} from rank {}",
            at.len(),
            dims.len()
        ));
    }
    let out_dims: Vec<i64> = at.iter().map(|&(_, s)| s as i64).collect();
    let mut out =
        Literal::zeros(&ArrayShape::new(x.dtype(), out_dims)).map_err(|e| e.to_string())?;
    let sizes: Vec<usize> = at.iter().map(|&(_, s)| s).collect();
    for_each_inside(dims, at, &sizes, |flat, src| {
        out.set_bits(flat, x.get_bits(src))
    });
    Ok(out)
}

/// Writes `tile` into `full` at the block `at` (parts past the end dropped).
pub fn place(full: &mut Literal, tile: &Literal, at: &[(usize, usize)]) -> Result<(), String> {
    wide_complex(full.dtype())?;
    let dims = full.dims().to_vec();
    let tdims = tile.dims().to_vec();
    if at.len() != dims.len() || tdims.len() != dims.len() {
        return Err("a tile of another rank".into());
    }
    for_each_inside(&dims, at, &tdims, |flat, dst| {
        full.set_bits(dst, tile.get_bits(flat))
    });
    Ok(())
}

/// For each element of a block of `sizes` at the starts of `at` in an array
/// of `dims` (row-major in the block) that lies inside the array: `f(flat
/// index in the block, flat index in the array)`.
fn for_each_inside(
    dims: &[usize],
    at: &[(usize, usize)],
    sizes: &[usize],
    mut f: impl FnMut(usize, usize),
) {
    let total: usize = sizes.iter().product();
    let mut idx = vec![0usize; dims.len()];
    for flat in 0..total {
        let mut whole = 0usize;
        let mut inside = true;
        for k in 0..dims.len() {
            let g = at[k].0 + idx[k];
            inside &= g < dims[k];
            whole = whole * dims[k] + g.min(dims[k].saturating_sub(1));
        }
        if inside {
            f(flat, whole);
        }
        bump(&mut idx, sizes);
    }
}

/// c128 elements do not fit the 64-bit element moves used here.
fn wide_complex(t: ElementType) -> Result<(), String> {
    if t == ElementType::C128 {
        return Err("c128 arrays are not moved between devices".into());
    }
    Ok(())
}

fn bump(idx: &mut [usize], dims: &[usize]) {
    for k in (0..dims.len()).rev() {
        idx[k] += 1;
        if idx[k] < dims[k] {
            return;
        }
        idx[k] = 0;
    }
}

/// `x` split along `dim` into `n` equal chunks.
pub fn split(x: &Literal, dim: usize, n: usize) -> Result<Vec<Literal>, String> {
    let dims = x.dims();
    let len = *dims.get(dim).ok_or("split dimension out of range")?;
    if n == 0 || len % n != 0 {
        return Err(format!(
            "dimension {dim} of size {len} does not split {n} ways"
        ));
    }
    let part = len / n;
    (0..n)
        .map(|j| {
            let at: Vec<(usize, usize)> = dims
                .iter()
                .enumerate()
                .map(|(k, &d)| if k == dim { (j * part, part) } else { (0, d) })
                .collect();
            block(x, &at)
        })
        .collect()
}

/// `xs` concatenated along `dim`.
pub fn concat(xs: &[&Literal], dim: usize) -> Result<Literal, String> {
    let first = xs.first().ok_or("nothing to concatenate")?;
    let mut dims: Vec<usize> = first.dims().to_vec();
    if dim >= dims.len() {
        return Err("concatenation dimension out of range".into());
    }
    dims[dim] = xs
        .iter()
        .map(|x| x.dims().get(dim).copied().unwrap_or(0))
        .sum();
    let mut out = Literal::zeros(&ArrayShape::new(
        first.dtype(),
        dims.iter().map(|&d| d as i64).collect::<Vec<_>>(),
    ))
    .map_err(|e| e.to_string())?;
    let mut offset = 0;
    for x in xs {
        if x.dtype() != first.dtype() || x.dims().len() != dims.len() {
            return Err("concatenating arrays of different types or ranks".into());
        }
        let at: Vec<(usize, usize)> = x
            .dims()
            .iter()
            .enumerate()
            .map(|(k, &d)| if k == dim { (offset, d) } else { (0, d) })
            .collect();
        place(&mut out, x, &at)?;
        offset += x.dims()[dim];
    }
    Ok(out)
}
