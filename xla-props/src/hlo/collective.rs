//! What a collective means on a grid of devices: the module's grid
//! (`replica_count` × `num_partitions`), which devices take part in one
//! collective together (its replica groups, read in every syntax XLA
//! prints, and its group mode), and collective-permute's pairs.
//!
//! A device is `(replica, partition)`; its flattened id is
//! `replica * partitions + partition`. The group modes follow XLA's
//! (`GetCollectiveOpGroupMode`):
//!
//! | op | channel_id | use_global_device_ids | mode |
//! |----|-----------|-----------------------|------|
//! | any | absent | false/absent | cross-replica |
//! | all-to-all, collective-permute, collective-broadcast | present | — | cross-partition |
//! | all-reduce, all-gather, reduce-scatter | present | false | cross-replica-and-partition |
//! | all-reduce, all-gather, reduce-scatter | present | true | flattened ids |
//!
//! ```
//! use xla_props::hlo::collective::{parse_replica_groups, ReplicaGroups};
//! assert_eq!(parse_replica_groups("{{0,1},{2,3}}").unwrap(), ReplicaGroups::List(vec![vec![0, 1], vec![2, 3]]));
//! // the iota form: iota(4) reshaped to [2,2], transposed, as 2 groups of 2
//! assert_eq!(parse_replica_groups("[2,2]<=[2,2]T(1,0)").unwrap().groups(4).unwrap(), vec![vec![0, 2], vec![1, 3]]);
//! // the mesh form: the groups vary the named axes
//! assert_eq!(parse_replica_groups("mesh['x'=2,'y'=2] {'x'}").unwrap().groups(4).unwrap(), vec![vec![0, 2], vec![1, 3]]);
//! ```

use super::{Instruction, Module, Opcode};

/// The devices a module runs on: replicas × partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceGrid {
    /// `replica_count` (1 when absent).
    pub replicas: usize,
    /// `num_partitions` (1 when absent).
    pub partitions: usize,
}

/// One device of a grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    /// Its replica id.
    pub replica: usize,
    /// Its partition id.
    pub partition: usize,
}

impl DeviceGrid {
    /// One device.
    pub const ONE: DeviceGrid = DeviceGrid {
        replicas: 1,
        partitions: 1,
    };

    /// The grid a module declares in its header (`replica_count=`,
    /// `num_partitions=`); a malformed count is an error.
    pub fn of(module: &Module) -> Result<DeviceGrid, String> {
        let count = |key: &str| -> Result<usize, String> {
            match module.attrs.iter().find(|(k, _)| k == key) {
                None => Ok(1),
                Some((_, v)) => match v.trim().parse::<usize>() {
                    Ok(n) if (1..=MAX_DEVICES).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "module `{}`: {key}={v} is not a device count in 1..={MAX_DEVICES}",
                        module.name
                    )),
                },
            }
        };
        let grid = DeviceGrid {
            replicas: count("replica_count")?,
            partitions: count("num_partitions")?,
        };
        if grid.devices() > MAX_DEVICES {
            return Err(format!(
                "module `{}` asks for {} devices; at most {MAX_DEVICES} are evaluated",
                module.name,
                grid.devices()
            ));
        }
        Ok(grid)
    }
    /// The number of devices.
    pub fn devices(&self) -> usize {
        self.replicas * self.partitions
    }
    /// The device with this flattened id.
    pub fn device(&self, id: usize) -> Device {
        Device {
            replica: id / self.partitions,
            partition: id % self.partitions,
        }
    }
    /// A device's flattened id.
    pub fn id(&self, d: Device) -> usize {
        d.replica * self.partitions + d.partition
    }
}

/// The custom-call target the StableHLO interpreter's
/// `interpreter.run_parallel` is read as (a grid of programs run together;
/// evaluated by `reference::parallel`).
pub const RUN_PARALLEL: &str = "interpreter.run_parallel";

/// The most devices one evaluation runs (each is a thread).
pub const MAX_DEVICES: usize = 256;

/// How a collective's replica groups name devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    /// Groups of replica ids, within each partition.
    CrossReplica,
    /// Groups of partition ids, within each replica.
    CrossPartition,
    /// Groups of replica ids; each takes every partition of its replicas.
    CrossReplicaAndPartition,
    /// Groups of flattened device ids.
    FlattenedId,
}

/// Replica groups as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaGroups {
    /// `{{0,1},{2,3}}`; empty (`{}`) means one group of every id.
    List(Vec<Vec<usize>>),
    /// `[G,S]<=[dims]T(perm)`: iota over `dims`, transposed, as G groups of S.
    Iota {
        /// `[G, S]`.
        groups: usize,
        /// Devices per group.
        size: usize,
        /// The iota's reshape dimensions.
        dims: Vec<usize>,
        /// The transpose permutation (identity when absent).
        perm: Vec<usize>,
    },
    /// `mesh['a'=2,'b'=4] {'b'}`: the mesh's devices in row-major order; a
    /// group varies the listed axes (sub-axes `'a':(pre)size`), in list order.
    Mesh {
        /// The axes' names and sizes.
        axes: Vec<(String, usize)>,
        /// The devices of the mesh in row-major order (iota when not given).
        devices: Option<Vec<usize>>,
        /// The grouped axes: (mesh axis index, optional (pre-size, size)).
        grouped: Vec<(usize, Option<(usize, usize)>)>,
    },
}

impl ReplicaGroups {
    /// The groups, given how many ids there are (used for an empty list).
    pub fn groups(&self, ids: usize) -> Result<Vec<Vec<usize>>, String> {
        match self {
            ReplicaGroups::List(g) if g.is_empty() => Ok(vec![(0..ids).collect()]),
            ReplicaGroups::List(g) => Ok(g.clone()),
            ReplicaGroups::Iota {
                groups,
                size,
                dims,
                perm,
            } => {
                let flat = iota_transposed(dims, perm)?;
                if flat.len() != groups * size {
                    return Err(format!(
                        "[{groups},{size}] groups but the iota has {} ids",
                        flat.len()
                    ));
                }
                Ok(flat.chunks(*size).map(<[usize]>::to_vec).collect())
            }
            ReplicaGroups::Mesh {
                axes,
                devices,
                grouped,
            } => mesh_groups(axes, devices.as_deref(), grouped),
        }
    }
}

/// `iota(prod dims)` reshaped to `dims`, transposed by `perm`, flattened.
pub fn iota_transposed(dims: &[usize], perm: &[usize]) -> Result<Vec<usize>, String> {
    let n: usize = dims.iter().product();
    let values: Vec<usize> = (0..n).collect();
    transpose_flat(&values, dims, perm)
}

/// A row-major array of `dims` transposed by `perm`, flattened.
fn transpose_flat(values: &[usize], dims: &[usize], perm: &[usize]) -> Result<Vec<usize>, String> {
    let rank = dims.len();
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if perm.len() != rank || sorted.iter().enumerate().any(|(i, &p)| i != p) {
        return Err(format!(
            "T{perm:?} is not a permutation of {rank} dimensions"
        ));
    }
    if values.len() != dims.iter().product::<usize>() {
        return Err(format!("{} values do not fill {dims:?}", values.len()));
    }
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let mut strides = vec![1usize; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * dims[k + 1];
    }
    let mut out = Vec::with_capacity(values.len());
    let mut idx = vec![0usize; rank];
    for _ in 0..values.len() {
        let src: usize = (0..rank).map(|k| idx[k] * strides[perm[k]]).sum();
        out.push(values[src]);
        for k in (0..rank).rev() {
            idx[k] += 1;
            if idx[k] < out_dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

fn mesh_groups(
    axes: &[(String, usize)],
    devices: Option<&[usize]>,
    grouped: &[(usize, Option<(usize, usize)>)],
) -> Result<Vec<Vec<usize>>, String> {
    let total: usize = axes.iter().map(|a| a.1).product();
    let devices: Vec<usize> = devices.map_or_else(|| (0..total).collect(), <[usize]>::to_vec);
    if devices.len() != total {
        return Err(format!("a mesh of {total} devices lists {}", devices.len()));
    }
    // reshape every axis into its pieces: a grouped sub-axis (pre, size)
    // splits its axis into [pre, size, rest]; grouped axes go last, in order
    let mut dims = Vec::new();
    let mut grouped_dims = vec![usize::MAX; grouped.len()];
    for (a, (name, n)) in axes.iter().enumerate() {
        let mut subs: Vec<(usize, usize, usize)> = grouped
            .iter()
            .enumerate()
            .filter(|(_, g)| g.0 == a)
            .map(|(k, g)| {
                let (pre, size) = g.1.unwrap_or((1, *n));
                (pre, size, k)
            })
            .collect();
        subs.sort_unstable();
        let mut covered = 1usize;
        for (pre, size, k) in subs {
            if pre % covered != 0 || pre < covered {
                return Err(format!("sub-axes of `{name}` overlap"));
            }
            if pre > covered {
                dims.push(pre / covered);
            }
            grouped_dims[k] = dims.len();
            dims.push(size);
            covered = pre * size;
        }
        if covered == 0 || n % covered != 0 {
            return Err(format!("sub-axes of `{name}` do not divide its size {n}"));
        }
        if covered < *n {
            dims.push(n / covered);
        }
    }
    let mut perm: Vec<usize> = (0..dims.len())
        .filter(|d| !grouped_dims.contains(d))
        .collect();
    perm.extend(&grouped_dims);
    let flat = transpose_flat(&devices, &dims, &perm)?;
    let size: usize = grouped_dims.iter().map(|&d| dims[d]).product();
    if size == 0 {
        return Err("an empty group".into());
    }
    Ok(flat.chunks(size).map(<[usize]>::to_vec).collect())
}

/// Parses `replica_groups=`'s value in any of XLA's three syntaxes.
pub fn parse_replica_groups(text: &str) -> Result<ReplicaGroups, String> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("mesh[") {
        return parse_mesh(rest);
    }
    if t.starts_with('[') {
        let (shape, rest) = bracket_list(t)?;
        let [groups, size] = shape[..] else {
            return Err(format!("`{t}`: the iota form needs [groups,size]"));
        };
        let rest = rest
            .trim_start()
            .strip_prefix("<=")
            .ok_or_else(|| format!("`{t}`: expected `<=` after [{groups},{size}]"))?;
        let (dims, rest) = bracket_list(rest.trim_start())?;
        let rest = rest.trim();
        let perm = if let Some(p) = rest.strip_prefix('T') {
            let inner = p
                .trim()
                .strip_prefix('(')
                .and_then(|p| p.strip_suffix(')'))
                .ok_or_else(|| format!("`{t}`: malformed transpose"))?;
            numbers(inner)?
        } else if rest.is_empty() {
            (0..dims.len()).collect()
        } else {
            return Err(format!("`{t}`: unexpected `{rest}`"));
        };
        return Ok(ReplicaGroups::Iota {
            groups,
            size,
            dims,
            perm,
        });
    }
    let inner = t
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| format!("`{t}` is not a replica group list"))?;
    Ok(ReplicaGroups::List(nested_lists(inner)?))
}

/// `{{0,1},{2,3}}`'s inside: the lists.
fn nested_lists(inner: &str) -> Result<Vec<Vec<usize>>, String> {
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let (group, after) = delimited_numbers(rest, ('{', '}'), "group")?;
        out.push(group);
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(out)
}

/// Comma-separated device ids.
fn numbers(s: &str) -> Result<Vec<usize>, String> {
    usize_list(s, "a device id")
}

/// Comma-separated non-negative integers (empty text: none); one that is
/// not is "not {what}".
pub(super) fn usize_list(s: &str, what: &str) -> Result<Vec<usize>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<usize>()
                .map_err(|_| format!("`{p}` is not {what}"))
        })
        .collect()
}

/// `[a,b,...]rest` -> the numbers and the rest.
fn bracket_list(s: &str) -> Result<(Vec<usize>, &str), String> {
    delimited_numbers(s, ('[', ']'), "`[`")
}

/// `{a,b,...}rest` (between `open` and `close`) -> the numbers and the
/// rest; a missing `close` is an "unclosed {unclosed}".
fn delimited_numbers<'s>(
    s: &'s str,
    (open, close): (char, char),
    unclosed: &str,
) -> Result<(Vec<usize>, &'s str), String> {
    let body = s
        .strip_prefix(open)
        .ok_or_else(|| format!("expected `{open}` at `{s}`"))?;
    let end = body
        .find(close)
        .ok_or_else(|| format!("unclosed {unclosed} at `{s}`"))?;
    Ok((numbers(&body[..end])?, &body[end + close.len_utf8()..]))
}

/// `'a'=2,'b'=4] {'b'}` (after `mesh[`), optionally with
/// `device_ids=[...]` inside the brackets.
fn parse_mesh(rest: &str) -> Result<ReplicaGroups, String> {
    let end = rest
        .find(']')
        .ok_or_else(|| format!("unclosed mesh at `mesh[{rest}`"))?;
    let (head, tail) = (&rest[..end], &rest[end + 1..]);
    let mut axes = Vec::new();
    let mut devices = None;
    let mut parts = head.split(',').map(str::trim).peekable();
    while let Some(p) = parts.next() {
        if p.is_empty() {
            continue;
        }
        if let Some(ids) = p.strip_prefix("device_ids=") {
            // device_ids=(0,1,2,3) or device_ids=[...]: the rest of the list
            let mut text = ids.trim_start_matches(['(', '[']).to_string();
            for q in parts.by_ref() {
                text.push(',');
                text.push_str(q);
            }
            devices = Some(numbers(text.trim_end_matches([')', ']']))?);
            break;
        }
        let (name, size) = p
            .split_once('=')
            .ok_or_else(|| format!("mesh axis `{p}` has no size"))?;
        let size = size
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("mesh axis `{p}`: bad size"))?;
        axes.push((unquote(name), size));
    }
    let body = tail
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("mesh replica groups need `{{axes}}` after the mesh: `{tail}`"))?;
    let mut grouped = Vec::new();
    for a in body.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let (name, sub) = match a.split_once(':') {
            Some((n, s)) => (n, Some(sub_axis(s)?)),
            None => (a, None),
        };
        let name = unquote(name);
        let index = axes
            .iter()
            .position(|(n, _)| *n == name)
            .ok_or_else(|| format!("grouped axis `{name}` is not in the mesh"))?;
        grouped.push((index, sub));
    }
    if grouped.is_empty() {
        return Err("mesh replica groups name no axis".into());
    }
    Ok(ReplicaGroups::Mesh {
        axes,
        devices,
        grouped,
    })
}

/// `(pre)size` of a sub-axis.
fn sub_axis(s: &str) -> Result<(usize, usize), String> {
    let s = s.trim();
    let inner = s
        .strip_prefix('(')
        .ok_or_else(|| format!("sub-axis `{s}` is not `(pre)size`"))?;
    let (pre, size) = inner
        .split_once(')')
        .ok_or_else(|| format!("sub-axis `{s}` is not `(pre)size`"))?;
    let parse = |x: &str| {
        x.trim()
            .parse::<usize>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("sub-axis `{s}`: bad number `{x}`"))
    };
    Ok((parse(pre)?, parse(size)?))
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['\'', '"']).to_string()
}

/// The text of an attribute that the IR keeps verbatim.
pub fn verbatim<'i>(ins: &'i Instruction, key: &str) -> Option<&'i str> {
    ins.attrs
        .other
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A collective's group mode (see the module docs).
pub fn group_mode(ins: &Instruction) -> Result<GroupMode, String> {
    let channel = verbatim(ins, "channel_id").is_some();
    let global = verbatim(ins, "use_global_device_ids").map(|v| v.trim() == "true");
    let takes_global = matches!(
        ins.opcode,
        Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::ReduceScatter
            | Opcode::CollectiveReduce
    );
    match (channel, takes_global, global.unwrap_or(false)) {
        (false, _, false) => Ok(GroupMode::CrossReplica),
        (false, _, true) => Err(format!(
            "`{}`: use_global_device_ids=true needs a channel_id",
            ins.name
        )),
        (true, false, _) => Ok(GroupMode::CrossPartition),
        (true, true, false) => Ok(GroupMode::CrossReplicaAndPartition),
        (true, true, true) => Ok(GroupMode::FlattenedId),
    }
}

/// The order of the devices within a cross-replica-and-partition group
/// (the only mode where XLA and the StableHLO spec differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GroupOrder {
    /// XLA's (`GetParticipatingDevicesGroups`): replica-major, each listed
    /// replica with all its partitions.
    #[default]
    Xla,
    /// The StableHLO spec's (`cross_replica_and_partition`): partition-major,
    /// for each partition the listed replicas.
    StableHlo,
}

/// The groups of devices that run collective `ins` together on `grid`,
/// each in its group order (which orders gathers and all-to-all chunks).
/// Every device is in exactly one group.
pub fn participants(ins: &Instruction, grid: DeviceGrid) -> Result<Vec<Vec<Device>>, String> {
    let groups = participants_in(ins, grid, GroupOrder::Xla)?;
    let mut seen = vec![false; grid.devices()];
    for d in groups.iter().flatten() {
        seen[grid.id(*d)] = true;
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        let d = grid.device(missing);
        return Err(format!(
            "`{}`: device (replica {}, partition {}) is in no replica group",
            ins.name, d.replica, d.partition
        ));
    }
    Ok(groups)
}

/// The groups of devices that run collective `ins` together on `grid`, in
/// `order`; no device is in two groups, but a device may be in none (the
/// spec gives collective-broadcast's outsiders zeros).
pub fn participants_in(
    ins: &Instruction,
    grid: DeviceGrid,
    order: GroupOrder,
) -> Result<Vec<Vec<Device>>, String> {
    let mode = group_mode(ins)?;
    let written = match verbatim(ins, "replica_groups") {
        Some(t) => parse_replica_groups(t).map_err(|e| format!("`{}`: {e}", ins.name))?,
        None => ReplicaGroups::List(vec![]),
    };
    let ids = match mode {
        GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => grid.replicas,
        GroupMode::CrossPartition => grid.partitions,
        GroupMode::FlattenedId => grid.devices(),
    };
    let groups = written
        .groups(ids)
        .map_err(|e| format!("`{}`: {e}", ins.name))?;
    if let Some(bad) = groups.iter().flatten().find(|&&g| g >= ids) {
        return Err(format!(
            "`{}`: replica group id {bad} is out of range: {ids} ids on a {}x{} grid",
            ins.name, grid.replicas, grid.partitions
        ));
    }
    let mut out: Vec<Vec<Device>> = Vec::new();
    // the groups of one kind of id, once for each id of the other kind
    let mut per_other = |others: usize, device: fn(usize, usize) -> Device| {
        for other in 0..others {
            for g in &groups {
                out.push(g.iter().map(|&id| device(id, other)).collect());
            }
        }
    };
    match mode {
        GroupMode::CrossReplica => per_other(grid.partitions, |replica, partition| Device {
            replica,
            partition,
        }),
        GroupMode::CrossPartition => per_other(grid.replicas, |partition, replica| Device {
            replica,
            partition,
        }),
        GroupMode::CrossReplicaAndPartition => {
            for g in &groups {
                out.push(match order {
                    GroupOrder::Xla => g
                        .iter()
                        .flat_map(|&replica| {
                            (0..grid.partitions).map(move |partition| Device { replica, partition })
                        })
                        .collect(),
                    GroupOrder::StableHlo => (0..grid.partitions)
                        .flat_map(|partition| {
                            g.iter().map(move |&replica| Device { replica, partition })
                        })
                        .collect(),
                });
            }
        }
        GroupMode::FlattenedId => {
            for g in &groups {
                out.push(g.iter().map(|&id| grid.device(id)).collect());
            }
        }
    }
    let mut seen = vec![false; grid.devices()];
    for d in out.iter().flatten() {
        let id = grid.id(*d);
        if std::mem::replace(&mut seen[id], true) {
            return Err(format!(
                "`{}`: device (replica {}, partition {}) is in two replica groups",
                ins.name, d.replica, d.partition
            ));
        }
    }
    Ok(out)
}

/// collective-permute's `source_target_pairs={{0,1},{1,2}}`, in the ids of
/// its mode (replicas without a channel, partitions with one).
pub fn source_target_pairs(ins: &Instruction) -> Result<Vec<(usize, usize)>, String> {
    let text = verbatim(ins, "source_target_pairs")
        .ok_or_else(|| format!("`{}` has no source_target_pairs", ins.name))?;
    let inner = text
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| format!("`{}`: malformed source_target_pairs `{text}`", ins.name))?;
    nested_lists(inner)
        .map_err(|e| format!("`{}`: {e}", ins.name))?
        .into_iter()
        .map(|p| match p[..] {
            [s, t] => Ok((s, t)),
            _ => Err(format!(
                "`{}`: a source-target pair has {} ids",
                ins.name,
                p.len()
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;

    fn ins(text: &str) -> (Module, DeviceGrid) {
        let m = parse_module(text).unwrap();
        let g = DeviceGrid::of(&m).unwrap();
        (m, g)
    }

    #[test]
    fn iota_groups_transpose_before_chunking() {
        let g = parse_replica_groups("[4,2]<=[2,4]T(1,0)")
            .unwrap()
            .groups(8)
            .unwrap();
        assert_eq!(g, vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
        let g = parse_replica_groups("[1,4]<=[4]")
            .unwrap()
            .groups(4)
            .unwrap();
        assert_eq!(g, vec![vec![0, 1, 2, 3]]);
        assert!(parse_replica_groups("[3,2]<=[4]")
            .unwrap()
            .groups(4)
            .is_err());
    }

    #[test]
    fn mesh_groups_vary_the_named_axes() {
        let g = parse_replica_groups("mesh['axis_0'=1,'axis_1'=4] {'axis_1'}").unwrap();
        assert_eq!(g.groups(4).unwrap(), vec![vec![0, 1, 2, 3]]);
        let g = parse_replica_groups("mesh['a'=2,'b'=4] {'b'}").unwrap();
        assert_eq!(
            g.groups(8).unwrap(),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        // a sub-axis: a=8 as [1,2,4], grouping the 2
        let g = parse_replica_groups("mesh['a'=8] {'a':(1)2}").unwrap();
        assert_eq!(
            g.groups(8).unwrap(),
            vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
        );
        assert!(parse_replica_groups("mesh['a'=2] {'c'}").is_err());
    }

    #[test]
    fn modes_build_groups_of_devices() {
        let (m, grid) = ins("HloModule m, replica_count=2, num_partitions=2\nsum { a = f32[] parameter(0) b = f32[] parameter(1) ROOT s = f32[] add(a, b) }\nENTRY e { p = f32[4] parameter(0) ROOT r = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1}}, to_apply=sum }\n");
        let r = m.entry_computation().instr(m.entry_computation().root);
        assert_eq!(group_mode(r).unwrap(), GroupMode::CrossReplicaAndPartition);
        let p = participants(r, grid).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].len(), 4);
        let (m, grid) = ins("HloModule m, num_partitions=4\nsum { a = f32[] parameter(0) b = f32[] parameter(1) ROOT s = f32[] add(a, b) }\nENTRY e { p = f32[4] parameter(0) ROOT r = f32[4] all-reduce(p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=sum }\n");
        let r = m.entry_computation().instr(m.entry_computation().root);
        let p = participants(r, grid).unwrap();
        assert_eq!(p[1], vec![grid.device(2), grid.device(3)]);
        // a group id past the grid is an error, not a panic
        let (m, grid) = ins("HloModule m, num_partitions=2\nsum { a = f32[] parameter(0) b = f32[] parameter(1) ROOT s = f32[] add(a, b) }\nENTRY e { p = f32[4] parameter(0) ROOT r = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,5}}, use_global_device_ids=true, to_apply=sum }\n");
        let r = m.entry_computation().instr(m.entry_computation().root);
        assert!(participants(r, grid).unwrap_err().contains("out of range"));
    }

    #[test]
    fn the_spec_orders_replica_and_partition_groups_partition_major() {
        let (m, grid) = ins("HloModule m, replica_count=2, num_partitions=2\nENTRY e { p = f32[4] parameter(0) ROOT r = f32[8] all-gather(p), channel_id=1, replica_groups={{1,0}}, dimensions={0} }\n");
        let r = m.entry_computation().instr(m.entry_computation().root);
        let d = |replica, partition| Device { replica, partition };
        let xla = participants_in(r, grid, GroupOrder::Xla).unwrap();
        assert_eq!(xla, vec![vec![d(1, 0), d(1, 1), d(0, 0), d(0, 1)]]);
        let spec = participants_in(r, grid, GroupOrder::StableHlo).unwrap();
        assert_eq!(spec, vec![vec![d(1, 0), d(0, 0), d(1, 1), d(0, 1)]]);
        // a device left out: an error for `participants`, not for `participants_in`
        let (m, grid) = ins("HloModule m, replica_count=3\nENTRY e { p = f32[4] parameter(0) ROOT r = f32[4] collective-broadcast(p), replica_groups={{2,1}} }\n");
        let r = m.entry_computation().instr(m.entry_computation().root);
        assert!(participants(r, grid)
            .unwrap_err()
            .contains("no replica group"));
        assert_eq!(
            participants_in(r, grid, GroupOrder::Xla).unwrap(),
            vec![vec![d(2, 0), d(1, 0)]]
        );
    }
}
