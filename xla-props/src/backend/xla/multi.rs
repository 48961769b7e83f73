//! Programs on many devices on XLA: a module already partitioned by XLA's
//! SPMD partitioner (`num_partitions=N`, `replica_count=R` in its header)
//! compiles once for its grid (SPMD partitioning off, replica r and
//! partition p on device `r * partitions + p`) and runs once on every
//! device. Seen from outside it is a program on global arrays, like the
//! reference's and the interpreter's run of it: its executable cuts the
//! global arguments into each device's ([`DeviceProgram::cut`]), and puts
//! the devices' outputs together ([`DeviceProgram::assemble`]).
//!
//! An annotated module with manual (shard_map) regions is not run: see
//! [`MANUAL_UNSUPPORTED`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::backend::{to_backend_error, Shared, XlaBackend};
use super::error::XlaError;
use super::host::{host_args, outputs_of};
use super::lower::{lower_module, Lowered};
use super::pjrt::HostArray;
use super::protocol::{Request, Response};
use crate::backend::{BackendError, Executable};
use crate::hlo::collective::DeviceGrid;
use crate::hlo::Module;
use crate::literal::Literal;
use crate::reference::spmd::{DeviceProgram, ProgramKind};

/// Why an annotated module with manual regions does not run on XLA here.
pub const MANUAL_UNSUPPORTED: &str = "an annotated module with manual (shard_map) regions \
     (SPMDFullToShardShape ... SPMDShardToFullShape) is not run on xla here: it would need \
     XLA's SPMD partitioner run on its sharding annotations, the global arguments cut into \
     the partitioned executable's per-device shapes and its outputs put together by its output \
     shardings, which this backend does not do; its partitioned form (XLA's dump after the \
     partitioner, `num_partitions=N` in the header) runs";

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
        let Some(program) = DeviceProgram::multi(module).map_err(BackendError::Compile)? else {
            return Ok(None);
        };
        let need = program.grid.devices();
        match program.kind {
            // one device (a collective over a group of one, a partition-id
            // of 0): the module runs as written
            _ if need == 1 => return Ok(None),
            ProgramKind::OneDevice => return Ok(None),
            ProgramKind::Manual => return Err(BackendError::unsupported(MANUAL_UNSUPPORTED)),
            ProgramKind::Partitioned => {}
        }
        let have = self.device_count().map_err(|e| to_backend_error(name, e))?;
        if need > have {
            return Err(BackendError::unsupported(format!(
                "module `{}` needs {need} devices ({} replicas x {} partitions), the backend \
                 has {have} (its client's devices: for the xla cpu plugin the `cpu_device_count` \
                 create option, or XLA_PROPS_XLA_DEVICES)",
                module.name, program.grid.replicas, program.grid.partitions
            )));
        }
        let lowered = lower_module(module).map_err(|e| to_backend_error(name, e.into()))?;
        let exe = MultiDeviceExecutable {
            timeout: self.timeout,
            shared: Arc::clone(&self.shared),
            lowered: Arc::new(lowered),
            grid: program.grid,
            program,
            module: module.clone(),
        };
        exe.compile().map_err(|e| to_backend_error(name, e))?;
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

/// A partitioned module compiled by XLA for its grid: global arguments in,
/// global outputs out. Survives worker restarts (it recompiles from its text).
struct MultiDeviceExecutable {
    timeout: Duration,
    shared: Arc<Shared>,
    lowered: Arc<Lowered>,
    grid: DeviceGrid,
    program: DeviceProgram,
    module: Module,
}

impl MultiDeviceExecutable {
    /// Compiles in a worker now (so a compile error is the compile's), and
    /// counts the compile as the single-device ones are counted.
    fn compile(&self) -> Result<(), XlaError> {
        let mlir = &self.lowered.mlir;
        let seen_before = {
            let seen = self.shared.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.contains(mlir)
        };
        let counter = if seen_before {
            &self.shared.hits
        } else {
            &self.shared.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.shared.lock();
        self.shared
            .compiled_for(&mut state, mlir, self.grid, self.timeout)?;
        drop(state);
        if !seen_before {
            let mut seen = self.shared.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(mlir.clone());
        }
        Ok(())
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
                host_args(&self.lowered, &args).map_err(|e| to_backend_error(&self.shared.name, e))
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
            .map(|outs| outputs_of(&self.lowered, outs))
            .collect()
    }
}

impl Executable for MultiDeviceExecutable {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let host = self.device_args(args)?;
        let per_device = self
            .run(host)
            .map_err(|e| to_backend_error(&self.shared.name, e))?;
        self.program
            .assemble(per_device)
            .map_err(BackendError::Execute)
    }
}
