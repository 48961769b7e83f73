//! Programs on many devices, seen from outside as one program on global
//! arrays ([`DeviceProgram`]), and the reference's run of them: one thread
//! per device, collectives exchanged through a [`Rendezvous`].
//!
//! Three kinds of module:
//! - **one device**: no collectives, no partitioner calls, a 1×1 grid;
//! - **partitioned** (`num_partitions`/`replica_count` above 1, as XLA's
//!   SPMD partitioner leaves it): each device runs the module on its own
//!   arguments. A parameter with a `sharding=` is cut from its global array
//!   by that sharding; one without is per device (its global array stacks
//!   the devices' arrays on a new leading axis). Outputs are put together
//!   by the root's `sharding=` (or the shardings given with
//!   [`DeviceProgram::with_output_shardings`]), else stacked the same way;
//! - **annotated with manual regions** (shard_map before partitioning:
//!   `SPMDFullToShardShape` ... collectives ... `SPMDShardToFullShape`, no
//!   device count in the header): its meaning is its one-device meaning.
//!   Every device runs the whole module on the global arguments; the
//!   manual region runs on each device's tile; the devices are as many as
//!   the module's shardings name. The outputs are device 0's.

use std::collections::HashMap;
use std::sync::Arc;

use super::collective::{self, is_multi_device, partitioner_call, DeviceContext, PartitionerCall};
use super::rendezvous::{on_threads, Rendezvous, ThreadLost};
use crate::hlo::collective::{verbatim, DeviceGrid};
use crate::hlo::sdy;
use crate::hlo::sharding::Sharding;
use crate::hlo::{ArrayShape, Instruction, Module};
use crate::literal::{Literal, Value};

/// How a module's devices relate to its global arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramKind {
    /// One device.
    OneDevice,
    /// A per-device program (after the SPMD partitioner).
    Partitioned,
    /// An annotated module whose manual regions run per device.
    Manual,
}

/// A module as a program on global arrays.
#[derive(Clone, Debug)]
pub struct DeviceProgram {
    /// The devices it runs on.
    pub grid: DeviceGrid,
    /// Its kind.
    pub kind: ProgramKind,
    params: Vec<Option<Sharding>>,
    outputs: Option<Vec<Sharding>>,
    shardings: Arc<HashMap<String, Sharding>>,
}

fn located(module: &Module, ins: &Instruction, e: String) -> String {
    format!("{}: `{}`: {e}", module.name, ins.name)
}

impl DeviceProgram {
    /// Reads the grid, the entry's shardings and the partitioner calls'.
    pub fn of(module: &Module) -> Result<DeviceProgram, String> {
        let grid = DeviceGrid::of(module)?;
        let mut shardings = HashMap::new();
        let mut span = 0usize;
        let mut multi = false;
        for comp in &module.computations {
            for ins in &comp.instructions {
                multi |= is_multi_device(ins);
                let own = match verbatim(ins, "sharding") {
                    Some(t) => Some(Sharding::parse(t).map_err(|e| located(module, ins, e))?),
                    None => None,
                };
                span = span.max(own.as_ref().map_or(0, Sharding::device_span));
                let sdy = ins
                    .attrs
                    .custom_call_target
                    .as_deref()
                    .is_some_and(|t| t.starts_with("xla.sdy."));
                let used = match partitioner_call(ins) {
                    Some(c @ (PartitionerCall::FullToShard | PartitionerCall::ShardToFull))
                        if sdy =>
                    {
                        let key = if c == PartitionerCall::FullToShard {
                            "xla.sdy.in_shardings"
                        } else {
                            "xla.sdy.out_shardings"
                        };
                        let mut v = sdy::manual_shardings(module, ins, key)
                            .map_err(|e| located(module, ins, e))?;
                        Some(if v.len() == 1 {
                            v.swap_remove(0)
                        } else {
                            Sharding::Tuple(v)
                        })
                    }
                    Some(PartitionerCall::FullToShard) => {
                        // the tiles are the operand's (a `Sharding` call)
                        match ins.operands.first().map(|&o| comp.instr(o)) {
                            Some(op) => verbatim(op, "sharding")
                                .map(Sharding::parse)
                                .transpose()
                                .map_err(|e| located(module, op, e))?,
                            None => None,
                        }
                    }
                    Some(PartitionerCall::ShardToFull) => own.clone(),
                    _ => None,
                };
                if let Some(s) = used {
                    shardings.insert(ins.name.clone(), s);
                }
            }
        }
        let span =
            span.max(sdy::mesh_devices(module).map_err(|e| format!("{}: {e}", module.name))?);
        let entry = module.entry_computation();
        let (kind, grid) = if grid.devices() > 1 {
            (ProgramKind::Partitioned, grid)
        } else if multi {
            let grid = DeviceGrid {
                replicas: 1,
                partitions: span.max(1),
            };
            (ProgramKind::Manual, grid)
        } else {
            (ProgramKind::OneDevice, grid)
        };
        let mut params = Vec::new();
        for p in entry.parameters() {
            let ins = entry.instr(p);
            let leaves = ins.shape.leaves().len();
            match verbatim(ins, "sharding") {
                Some(t) if kind == ProgramKind::Partitioned => {
                    let s = Sharding::parse(t).map_err(|e| located(module, ins, e))?;
                    params.extend(
                        s.leaves(leaves)
                            .map_err(|e| located(module, ins, e))?
                            .into_iter()
                            .map(Some),
                    );
                }
                _ => params.extend(std::iter::repeat_n(None, leaves)),
            }
        }
        let root = entry.instr(entry.root);
        let outputs = match verbatim(root, "sharding") {
            Some(t) if kind == ProgramKind::Partitioned => {
                let s = Sharding::parse(t).map_err(|e| located(module, root, e))?;
                Some(
                    s.leaves(root.shape.leaves().len())
                        .map_err(|e| located(module, root, e))?,
                )
            }
            _ => None,
        };
        Ok(DeviceProgram {
            grid,
            kind,
            params,
            outputs,
            shardings: Arc::new(shardings),
        })
    }

    /// The program, when `module` needs more than one plain evaluation
    /// (None for a one-device module without collectives).
    pub fn multi(module: &Module) -> Result<Option<DeviceProgram>, String> {
        let plain = module.attrs.iter().all(|(k, v)| {
            !matches!(k.as_str(), "replica_count" | "num_partitions") || v.trim() == "1"
        }) && !module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .any(is_multi_device);
        if plain {
            return Ok(None);
        }
        DeviceProgram::of(module).map(Some)
    }

    /// The outputs put together by these shardings (one per output array).
    pub fn with_output_shardings(mut self, outputs: Vec<Sharding>) -> Self {
        self.outputs = Some(outputs);
        self
    }

    /// Whether the outputs have shardings to be put together by.
    pub fn has_output_shardings(&self) -> bool {
        self.outputs.is_some()
    }

    /// The global shape of each entry array parameter.
    pub fn global_parameter_shapes(&self, module: &Module) -> Result<Vec<ArrayShape>, String> {
        let leaves = entry_leaves(module)?;
        if self.kind != ProgramKind::Partitioned {
            return Ok(leaves);
        }
        leaves
            .iter()
            .zip(&self.params)
            .map(|(local, s)| {
                let dims: Vec<usize> = local.dims.iter().map(|&d| d as usize).collect();
                let global: Vec<i64> = match s {
                    Some(s) => s.global_dims(&dims)?.iter().map(|&d| d as i64).collect(),
                    None => std::iter::once(self.grid.devices() as i64)
                        .chain(local.dims.iter().copied())
                        .collect(),
                };
                Ok(ArrayShape::new(local.dtype, global))
            })
            .collect()
    }

    /// Each device's arguments, cut from the global ones.
    pub fn cut(&self, module: &Module, global: &[Literal]) -> Result<Vec<Vec<Literal>>, String> {
        let n = self.grid.devices();
        match self.kind {
            ProgramKind::OneDevice => Ok(vec![global.to_vec()]),
            ProgramKind::Manual => Ok(vec![global.to_vec(); n]),
            ProgramKind::Partitioned => {
                let local = entry_leaves(module)?;
                if global.len() != local.len() {
                    return Err(format!(
                        "{} arguments for {} parameter arrays",
                        global.len(),
                        local.len()
                    ));
                }
                let mut out = vec![Vec::with_capacity(global.len()); n];
                for ((g, l), s) in global.iter().zip(&local).zip(&self.params) {
                    for (d, args) in out.iter_mut().enumerate() {
                        let device = self.grid.device(d);
                        let at: Vec<(usize, usize)> = match s {
                            Some(s) => s.tile_of(device.partition, g.dims())?,
                            None => std::iter::once((d, 1))
                                .chain(g.dims().iter().skip(1).map(|&k| (0, k)))
                                .collect(),
                        };
                        let b = collective::block(g, &at)?;
                        args.push(reshaped(&b, l)?);
                    }
                }
                Ok(out)
            }
        }
    }

    /// The global outputs from each device's.
    pub fn assemble(&self, per_device: Vec<Vec<Literal>>) -> Result<Vec<Literal>, String> {
        let mut devices = per_device.into_iter();
        let first = devices.next().ok_or("no device produced outputs")?;
        if self.kind != ProgramKind::Partitioned {
            return Ok(first);
        }
        let rest: Vec<Vec<Literal>> = devices.collect();
        let all: Vec<&Vec<Literal>> = std::iter::once(&first).chain(&rest).collect();
        let mut out = Vec::with_capacity(first.len());
        for k in 0..first.len() {
            let local = &first[k];
            let sharding = self.outputs.as_ref().and_then(|o| o.get(k));
            match sharding {
                Some(s) => {
                    let global = s.global_dims(local.dims())?;
                    let mut full = Literal::zeros(&ArrayShape::new(
                        local.dtype(),
                        global.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                    ))
                    .map_err(|e| e.to_string())?;
                    let mut placed = std::collections::HashSet::new();
                    for (d, outs) in all.iter().enumerate() {
                        let at = s.tile_of(self.grid.device(d).partition, &global)?;
                        if placed.insert(at.clone()) {
                            collective::place(&mut full, &outs[k], &at)?;
                        }
                    }
                    out.push(full);
                }
                None => {
                    let tiles: Vec<Literal> = all
                        .iter()
                        .map(|outs| reshaped(&outs[k], &stacked_shape(&outs[k], 1)))
                        .collect::<Result<_, _>>()?;
                    let refs: Vec<&Literal> = tiles.iter().collect();
                    out.push(collective::concat(&refs, 0)?);
                }
            }
        }
        Ok(out)
    }

    /// The shardings of the partitioner custom calls, by instruction name.
    pub fn partitioner_shardings(&self) -> Arc<HashMap<String, Sharding>> {
        Arc::clone(&self.shardings)
    }

    /// A fresh context for each device of one run.
    pub fn device_contexts(&self) -> Vec<DeviceContext> {
        let rendezvous = Arc::new(Rendezvous::<Value>::new(self.grid.devices()));
        (0..self.grid.devices())
            .map(|d| {
                DeviceContext::new(
                    self.grid.device(d),
                    self.grid,
                    Arc::clone(&rendezvous),
                    Arc::clone(&self.shardings),
                )
            })
            .collect()
    }
}

/// `[1, ...dims]` of `x`'s type.
fn stacked_shape(x: &Literal, n: i64) -> ArrayShape {
    ArrayShape::new(
        x.dtype(),
        std::iter::once(n)
            .chain(x.dims().iter().map(|&d| d as i64))
            .collect::<Vec<_>>(),
    )
}

fn reshaped(x: &Literal, to: &ArrayShape) -> Result<Literal, String> {
    let bits: Vec<u64> = (0..x.element_count()).map(|i| x.get_bits(i)).collect();
    let plain = ArrayShape::new(to.dtype, to.dims.clone());
    Literal::from_bits(&plain, &bits)
        .map(|l| l.with_layout(to.layout.clone()))
        .map_err(|e| e.to_string())
}

fn entry_leaves(module: &Module) -> Result<Vec<ArrayShape>, String> {
    let entry = module.entry_computation();
    let mut out = Vec::new();
    for p in entry.parameters() {
        for leaf in entry.instr(p).shape.leaves() {
            out.push(leaf.clone());
        }
    }
    Ok(out)
}

/// [`on_threads`] for the devices of a multi-device run: device `d` runs
/// `run(&per_device[d], contexts[d])`, and a device that fails leaves its
/// rendezvous (`device {d}: {error}`) so that the others stop waiting for it.
pub fn on_device_threads<'a, A: Sync, T: Send, E: std::fmt::Display + Send>(
    per_device: &'a [A],
    contexts: Vec<DeviceContext>,
    name: &str,
    run: impl Fn(&'a A, DeviceContext) -> Result<T, E> + Sync,
) -> Vec<Result<Result<T, E>, ThreadLost>> {
    let each = |d: usize, (args, ctx): (&'a A, DeviceContext)| {
        let rendezvous = std::sync::Arc::clone(&ctx.rendezvous);
        let r = run(args, ctx);
        rendezvous.leave(r.as_ref().err().map(|e| format!("device {d}: {e}")));
        r
    };
    on_threads(per_device.iter().zip(contexts), name, each, |_, _| {})
}
