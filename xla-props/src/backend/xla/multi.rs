//! Programs on many devices on XLA. A module already partitioned by XLA's
//! SPMD partitioner (`num_partitions=N`, `replica_count=R` in its header)
//! compiles once for its grid (replica r and partition p on device
//! `r * partitions + p`; SPMD partitioning on, as XLA:CPU requires for more
//! than one partition, with every value marked manually sharded so that the
//! partitioner leaves the program as it is) and runs once on every device.
//! Seen from outside it is a program on global arrays, like the
//! reference's and the interpreter's run of it: its executable cuts the
//! global arguments into each device's ([`DeviceProgram::cut`]), and puts
//! the devices' outputs together ([`DeviceProgram::assemble`]).
//!
//! An annotated module (no device count in its header, shardings naming
//! more than one device: JAX's program before the partitioner, with or
//! without manual (shard_map) regions between `SPMDFullToShardShape` and
//! `SPMDShardToFullShape`) is partitioned by XLA: it is lowered with its
//! shardings ([`lower_annotated`]) and compiled with SPMD partitioning on
//! for the devices its shardings name. Seen from outside it is still a
//! program on global arrays: each entry parameter is cut by its sharding
//! into the tile the partitioned executable takes (an uneven split's last
//! tiles padded, as the partitioner pads them), and the outputs are put
//! together by the root's sharding and cut back to the root's shape.

use std::sync::Arc;
use std::time::Duration;

use super::backend::{to_backend_error, Shared, XlaBackend};
use super::error::XlaError;
use super::host::{host_args, outputs_of};
use super::lower::{lower_annotated, lower_module, Lowered};
use super::pjrt::HostArray;
use super::protocol::{Request, Response};
use crate::backend::{BackendError, Executable};
use crate::hlo::collective::{verbatim, DeviceGrid};
use crate::hlo::sharding::{annotated_devices, Sharding};
use crate::hlo::{ArrayShape, Module, Shape};
use crate::literal::Literal;
use crate::reference::spmd::{DeviceProgram, ProgramKind};

/// How XLA:CPU says its thunk emitter has no code for an opcode (the
/// plugin's `collective-broadcast`: "HLO opcode `collective-broadcast` is
/// not supported by XLA:CPU ThunkEmitter"): the module is unsupported on
/// this backend, with XLA's words, not a failure.
const NOT_IMPLEMENTED: &str = "is not supported by XLA:CPU ThunkEmitter";

impl XlaBackend {
    /// How many devices the workers' client has: asked of a worker once.
    pub(super) fn device_count(&self) -> Result<usize, XlaError> {
        device_count(&self.shared, self.timeout)
    }

    /// The executable of a module on many devices, `None` for a module on
    /// one (it compiles as ever). A module that needs more devices than the
    /// client has is unsupported, saying how many each has.
    pub(super) fn compile_multi(
        &self,
        module: &Module,
    ) -> Result<Option<Box<dyn Executable>>, BackendError> {
        let name = &self.shared.name;
        let unsupported = |e: String| {
            BackendError::unsupported(format!("annotated module `{}` on xla: {e}", module.name))
        };
        // Shardy's form (JAX's default) is rewritten into GSPMD's, which
        // the annotated path lowers for XLA's partitioner
        let converted;
        let module = if crate::hlo::sdy::is_sdy_module(module) {
            converted = crate::hlo::sdy_gspmd::to_gspmd(module).map_err(unsupported)?;
            &converted
        } else {
            module
        };
        let view = if let Some(devices) = annotated_devices(module) {
            // an annotated module: XLA's partitioner runs on its shardings
            per_device_view(module, devices).map_err(unsupported)?
        } else {
            let Some(program) = DeviceProgram::multi(module).map_err(BackendError::Compile)? else {
                return Ok(None);
            };
            match program.kind {
                // one device (a collective over a group of one, a
                // partition-id of 0): the module runs as written
                _ if program.grid.devices() == 1 => return Ok(None),
                ProgramKind::OneDevice => return Ok(None),
                ProgramKind::Manual => {
                    per_device_view(module, program.grid.partitions).map_err(unsupported)?
                }
                ProgramKind::Partitioned => View {
                    module: module.clone(),
                    program,
                    shapes: None,
                    global: None,
                },
            }
        };
        let grid = view.program.grid;
        let need = grid.devices();
        let have = self.device_count().map_err(|e| to_backend_error(name, e))?;
        if need > have {
            return Err(BackendError::unsupported(format!(
                "module `{}` needs {need} devices ({} replicas x {} partitions), the backend \
                 has {have} (its client's devices: for the xla cpu plugin the `cpu_device_count` \
                 create option, or XLA_PROPS_XLA_DEVICES)",
                module.name, grid.replicas, grid.partitions
            )));
        }
        let lowered = match view.shapes {
            Some(_) => lower_annotated(module, grid.partitions),
            None => lower_module(module),
        }
        .map_err(|e| to_backend_error(name, e.into()))?;
        // the per-device signature the arguments and outputs are checked by
        let signature = match view.shapes {
            Some((params, results)) => Lowered {
                mlir: String::new(),
                params,
                results,
            },
            None => lowered.clone(),
        };
        let exe = MultiDeviceExecutable {
            timeout: self.timeout,
            shared: Arc::clone(&self.shared),
            lowered: Arc::new(lowered),
            signature,
            grid,
            program: view.program,
            module: view.module,
            global: view.global,
        };
        exe.compile().map_err(|e| match e {
            XlaError::Compile(m) if m.contains(NOT_IMPLEMENTED) => {
                BackendError::unsupported(format!("XLA does not implement an op here: {m}"))
            }
            e => to_backend_error(name, e),
        })?;
        Ok(Some(Box::new(exe)))
    }
}

/// The client's device count, asked of a worker once per pool.
fn device_count(shared: &Shared, timeout: Duration) -> Result<usize, XlaError> {
    if let Some(&n) = shared.devices.get() {
        return Ok(n);
    }
    let mut state = shared.lock();
    let n = match shared.call(&mut state, &Request::Devices, "counting devices", timeout)? {
        Response::Devices(n) => usize::try_from(n).unwrap_or(usize::MAX),
        Response::Error(e) => {
            return Err(XlaError::Protocol(format!(
                "the worker cannot count its devices: {e}"
            )))
        }
        other => return Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
    };
    let _ = shared.devices.set(n);
    Ok(n)
}

/// A module on many devices as each device runs it: the module whose
/// entry parameters are the devices' (what [`DeviceProgram::cut`] cuts
/// into), its program, and for an annotated module the devices' parameter
/// and output shapes (`None`: a partitioned module's own).
struct View {
    module: Module,
    program: DeviceProgram,
    shapes: Option<(Vec<ArrayShape>, Vec<ArrayShape>)>,
    /// An annotated module's global output shapes (an uneven split's
    /// outputs are put together from padded tiles).
    global: Option<Vec<ArrayShape>>,
}

/// `a`'s tile under `s`: the shape each device holds (the ceiling of each
/// dimension over its tiles; an uneven split's last tiles are padded, as
/// XLA's partitioner pads them).
fn tile_of(s: &Sharding, a: &ArrayShape) -> Result<ArrayShape, String> {
    match s {
        Sharding::Replicated | Sharding::Maximal(_) | Sharding::Tiled { manual: false, .. } => {}
        other => return Err(format!("an entry array sharded {other:?} is not cut")),
    }
    let dims: Vec<usize> = a.dims.iter().map(|&d| d as usize).collect();
    let tile = s.tile_dims(&dims)?;
    Ok(ArrayShape::new(
        a.dtype,
        tile.iter().map(|&d| d as i64).collect::<Vec<_>>(),
    ))
}

/// Sets `ins`'s sharding to `{replicated}` when it has none; its sharding.
fn sharding_or_replicated(ins: &mut crate::hlo::Instruction) -> Result<Sharding, String> {
    match verbatim(ins, "sharding") {
        Some(text) => Sharding::parse(text),
        None => {
            ins.attrs
                .other
                .push(("sharding".to_string(), "{replicated}".to_string()));
            Ok(Sharding::Replicated)
        }
    }
}

/// An annotated module as its devices run it after XLA's partitioner on
/// `partitions` devices: the same module with that device count in its
/// header and its entry parameters' shapes the tiles their shardings cut,
/// read as a partitioned program (parameters cut by their shardings,
/// outputs put together by the root's; an entry value without a sharding
/// is replicated, as [`lower_annotated`] declares it).
fn per_device_view(module: &Module, partitions: usize) -> Result<View, String> {
    let mut local = module.clone();
    local
        .attrs
        .retain(|(k, _)| k != "num_partitions" && k != "replica_count");
    local
        .attrs
        .push(("num_partitions".to_string(), partitions.to_string()));
    let entry = local.entry.index();
    let comp = local
        .computations
        .get_mut(entry)
        .ok_or("no entry computation")?;
    let mut params = Vec::new();
    for pid in comp.parameters() {
        let ins = &mut comp.instructions[pid.index()];
        let sharding = sharding_or_replicated(ins)?;
        let array = ins
            .shape
            .as_array()
            .ok_or_else(|| format!("entry parameter `{}` is a tuple", ins.name))?;
        let tile = tile_of(&sharding, array)?;
        ins.shape = Shape::Array(tile.clone());
        params.push(tile);
    }
    let root = comp.root.index();
    let sharding = sharding_or_replicated(&mut comp.instructions[root])?;
    let leaves = comp.instructions[root].shape.leaves();
    let mut results = Vec::new();
    for (s, a) in sharding.leaves(leaves.len())?.iter().zip(&leaves) {
        results.push(tile_of(s, a)?);
    }
    let global = leaves.into_iter().cloned().collect();
    let program = DeviceProgram::of(&local)?;
    let want = DeviceGrid {
        replicas: 1,
        partitions,
    };
    if program.kind != ProgramKind::Partitioned || program.grid != want {
        return Err(format!(
            "read as {:?} on {}x{} devices, not partitioned on {partitions}",
            program.kind, program.grid.replicas, program.grid.partitions
        ));
    }
    Ok(View {
        module: local,
        program,
        shapes: Some((params, results)),
        global: Some(global),
    })
}

/// `x` cut to `shape`'s dims from its origin: an output put together from
/// padded tiles (an uneven split) loses the padding.
fn trimmed(x: Literal, shape: &ArrayShape) -> Result<Literal, String> {
    let dims: Vec<usize> = shape.dims.iter().map(|&d| d as usize).collect();
    if x.dims() == dims.as_slice() {
        return Ok(x);
    }
    if x.dims().len() != dims.len() || x.dims().iter().zip(&dims).any(|(a, b)| a < b) {
        return Err(format!("an output of {:?} for {shape}", x.dims()));
    }
    let at: Vec<(usize, usize)> = dims.iter().map(|&d| (0, d)).collect();
    crate::reference::collective::block(&x, &at)
}

/// A module compiled by XLA for its grid: global arguments in, global
/// outputs out. Survives worker restarts (it recompiles from its text).
struct MultiDeviceExecutable {
    timeout: Duration,
    shared: Arc<Shared>,
    lowered: Arc<Lowered>,
    /// Each device's parameters and outputs.
    signature: Lowered,
    grid: DeviceGrid,
    program: DeviceProgram,
    module: Module,
    /// The global output shapes the assembled outputs are cut to.
    global: Option<Vec<ArrayShape>>,
}

impl MultiDeviceExecutable {
    /// Compiles in a worker now (so a compile error is the compile's), and
    /// counts the compile as the single-device ones are counted.
    fn compile(&self) -> Result<(), XlaError> {
        let mlir = &self.lowered.mlir;
        self.shared.compile_counted(mlir, self.grid, self.timeout)
    }

    /// Each device's arguments as host arrays, checked against the entry.
    fn device_args(&self, global: &[Literal]) -> Result<Vec<Vec<HostArray>>, BackendError> {
        let per_device = self
            .program
            .cut(&self.module, global)
            .map_err(BackendError::BadArguments)?;
        per_device
            .iter()
            .map(|args| {
                let args: Vec<&Literal> = args.iter().collect();
                host_args(&self.signature, &args)
                    .map_err(|e| to_backend_error(&self.shared.name, e))
            })
            .collect()
    }

    /// Runs on every device; each device's outputs, in device id order.
    fn run(&self, host: Vec<Vec<HostArray>>) -> Result<Vec<Vec<Literal>>, XlaError> {
        let mut state = self.shared.lock();
        let exe_id =
            self.shared
                .compiled_for(&mut state, &self.lowered.mlir, self.grid, self.timeout)?;
        let request = Request::ExecuteDevices { exe_id, args: host };
        let lists = match self
            .shared
            .call(&mut state, &request, "executing", self.timeout)?
        {
            Response::DeviceOutputs(lists) => lists,
            Response::Error(e) => return Err(XlaError::Execute(e)),
            other => return Err(XlaError::Protocol(format!("unexpected reply {other:?}"))),
        };
        drop(state);
        if lists.len() != self.grid.devices() {
            return Err(XlaError::Output(format!(
                "xla returned the outputs of {} devices, the grid has {}",
                lists.len(),
                self.grid.devices()
            )));
        }
        lists
            .into_iter()
            .map(|outs| outputs_of(&self.signature, outs))
            .collect()
    }
}

impl Executable for MultiDeviceExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let host = self.device_args(args)?;
        let per_device = self
            .run(host)
            .map_err(|e| to_backend_error(&self.shared.name, e))?;
        let outs = self
            .program
            .assemble(per_device)
            .map_err(BackendError::Execute)?;
        match &self.global {
            None => Ok(outs),
            Some(shapes) if shapes.len() == outs.len() => outs
                .into_iter()
                .zip(shapes)
                .map(|(x, s)| trimmed(x, s).map_err(BackendError::Execute))
                .collect(),
            Some(shapes) => Err(BackendError::Execute(format!(
                "{} outputs for {} results",
                outs.len(),
                shapes.len()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARD_MAP: &str = r#"HloModule m

%body (x: f32[2,3]) -> f32[2,3] {
  ROOT %x = f32[2,3]{1,0} parameter(0)
}

ENTRY %main (p: f32[8,3], q: f32[5]) -> (f32[8,3], f32[5]) {
  %p = f32[8,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %q = f32[5]{0} parameter(1), sharding={replicated}
  %f = f32[2,3]{1,0} custom-call(%p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %c = f32[2,3]{1,0} call(%f), to_apply=%body
  %g = f32[8,3]{1,0} custom-call(%c), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
  ROOT %t = (f32[8,3]{1,0}, f32[5]{0}) tuple(%g, %q), sharding={{devices=[4,1]<=[4]}, {replicated}}
}
"#;

    /// `SHARD_MAP`'s global arguments: an f32[rows, 3] counting up from
    /// `first`, and f32[5] zeros.
    fn shard_map_args(rows: i32, first: i32) -> (Literal, Literal) {
        let x = Literal::from_f64s(
            &ArrayShape::new(crate::hlo::ElementType::F32, vec![rows as i64, 3]),
            &(first..first + 3 * rows).map(f64::from).collect::<Vec<_>>(),
        )
        .unwrap();
        let y = Literal::zeros(&ArrayShape::new(crate::hlo::ElementType::F32, vec![5])).unwrap();
        (x, y)
    }

    #[test]
    fn an_annotated_module_is_cut_into_its_tiles() {
        let m = crate::hlo::parse_module(SHARD_MAP).unwrap();
        let v = per_device_view(&m, 4).unwrap();
        let (params, results) = v.shapes.unwrap();
        assert_eq!(params[0].dims, vec![2, 3]);
        assert_eq!(params[1].dims, vec![5]);
        assert_eq!(results[0].dims, vec![2, 3]);
        assert_eq!(results[1].dims, vec![5]);
        assert_eq!(v.program.kind, ProgramKind::Partitioned);
        // the global arguments cut per device: device 2 holds rows 4 and 5
        let (x, y) = shard_map_args(8, 0);
        let cut = v.program.cut(&v.module, &[x.clone(), y]).unwrap();
        assert_eq!(cut.len(), 4);
        assert_eq!(
            cut[2][0].to_f64_vec(),
            (12..18).map(f64::from).collect::<Vec<_>>()
        );
        assert_eq!(cut[3][1].dims(), &[5]);
        // and put back together
        let outs: Vec<Vec<Literal>> = cut.clone();
        let global = v.program.assemble(outs).unwrap();
        assert_eq!(global[0].to_f64_vec(), x.to_f64_vec());
    }

    #[test]
    fn an_uneven_split_is_cut_into_padded_tiles_and_trimmed_back() {
        let m = crate::hlo::parse_module(&SHARD_MAP.replace("f32[8,3]", "f32[7,3]")).unwrap();
        let v = per_device_view(&m, 4).unwrap();
        let (params, _) = v.shapes.unwrap();
        // ceil(7 / 4) = 2 rows each; device 3 holds row 6 and a zero row
        assert_eq!(params[0].dims, vec![2, 3]);
        let (x, y) = shard_map_args(7, 1);
        let cut = v.program.cut(&v.module, &[x.clone(), y]).unwrap();
        assert_eq!(
            cut[3][0].to_f64_vec(),
            vec![19.0, 20.0, 21.0, 0.0, 0.0, 0.0]
        );
        let global = v.program.assemble(cut).unwrap();
        assert_eq!(global[0].dims(), &[8, 3]);
        let back = trimmed(global[0].clone(), &v.global.unwrap()[0]).unwrap();
        assert_eq!(back.to_f64_vec(), x.to_f64_vec());
    }

    #[test]
    fn unannotated_entry_values_are_replicated() {
        const TEXT: &str = "HloModule m\n\nENTRY %e (p: f32[4], q: f32[3]) -> f32[4] {\n  %p = f32[4] parameter(0), sharding={devices=[2]<=[2]}\n  %q = f32[3] parameter(1)\n  ROOT %n = f32[4] negate(%p)\n}\n";
        let m = crate::hlo::parse_module(TEXT).unwrap();
        assert_eq!(annotated_devices(&m), Some(2));
        let v = per_device_view(&m, 2).unwrap();
        let (params, results) = v.shapes.unwrap();
        assert_eq!(params[0].dims, vec![2]);
        assert_eq!(params[1].dims, vec![3]);
        assert_eq!(results[0].dims, vec![4]);
        // without shardings it is a one-device module
        let plain =
            crate::hlo::parse_module(&TEXT.replace(", sharding={devices=[2]<=[2]}", "")).unwrap();
        assert_eq!(annotated_devices(&plain), None);
    }
}
