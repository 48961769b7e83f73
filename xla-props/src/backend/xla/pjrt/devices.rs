//! Programs on many devices through PJRT: the compile options that give XLA
//! a grid of replicas × partitions and its device assignment, the client's
//! devices, and one execution over every device of an executable.
//!
//! The device assignment puts replica `r`, partition `p` on the device with
//! id `r * partitions + p`, the flattened id of
//! [`crate::hlo::collective::DeviceGrid`]. PJRT orders an executable's
//! addressable devices (and so the argument and output lists of one
//! execution) replica-major through that assignment; [`LoadedExecutable::device_ids`]
//! reads them back so the caller can check the order instead of assuming it.

use std::ffi::{c_int, c_void};
use std::ptr;

use super::api::{
    ExecuteOptions, LoadedExecutableExecuteArgs, FN_DEVICE_DESCRIPTION_ID,
    FN_DEVICE_GET_DESCRIPTION, FN_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES,
    FN_LOADED_EXECUTABLE_EXECUTE,
};
use super::client::Buffer;
use super::{Client, HostArray, LoadedExecutable, PjrtError};

pjrt_args!(LoadedExecutableAddressableDevicesArgs {
    executable: *mut c_void,
    devices: *const *mut c_void,
    num_devices: usize,
});
pjrt_args!(DeviceGetDescriptionArgs { device: *mut c_void, description: *mut c_void });
pjrt_args!(DeviceDescriptionIdArgs { description: *mut c_void, id: c_int });

/// A protobuf varint.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field (wire type 0).
fn field_varint(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

/// A length-delimited field (wire type 2).
fn field_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, (field << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The serialized `CompileOptionsProto` for a `replicas` × `partitions`
/// grid: `executable_build_options { num_replicas num_partitions
/// use_spmd_partitioning device_assignment }`, the assignment putting
/// (replica r, partition p) on device `r * partitions + p`.
/// `spmd_partitioning` asks XLA to run its SPMD partitioner (an annotated
/// module); off, the module is taken as already partitioned.
pub fn compile_options(replicas: usize, partitions: usize, spmd_partitioning: bool) -> Vec<u8> {
    // DeviceAssignmentProto { replica_count = 1; computation_count = 2;
    // repeated ComputationDevice computation_devices = 3 } with
    // ComputationDevice { repeated int64 replica_device_ids = 1 } (packed)
    let mut assignment = Vec::new();
    field_varint(&mut assignment, 1, replicas as u64);
    field_varint(&mut assignment, 2, partitions as u64);
    for p in 0..partitions {
        let mut ids = Vec::new();
        for r in 0..replicas {
            varint(&mut ids, (r * partitions + p) as u64);
        }
        let mut computation = Vec::new();
        field_bytes(&mut computation, 1, &ids);
        field_bytes(&mut assignment, 3, &computation);
    }
    // ExecutableBuildOptionsProto { num_replicas = 4; num_partitions = 5;
    // use_spmd_partitioning = 6; device_assignment = 9 }
    let mut build = Vec::new();
    field_varint(&mut build, 4, replicas as u64);
    field_varint(&mut build, 5, partitions as u64);
    if spmd_partitioning {
        field_varint(&mut build, 6, 1);
    }
    field_bytes(&mut build, 9, &assignment);
    // CompileOptionsProto { executable_build_options = 3 }
    let mut options = Vec::new();
    field_bytes(&mut options, 3, &build);
    options
}

/// A PJRT device's global id.
fn device_id(client: &Client<'_>, device: *mut c_void) -> Result<i64, PjrtError> {
    let mut describe = DeviceGetDescriptionArgs::new();
    describe.device = device;
    client.plugin.call(
        FN_DEVICE_GET_DESCRIPTION,
        "PJRT_Device_GetDescription",
        &mut describe,
    )?;
    let mut id = DeviceDescriptionIdArgs::new();
    id.description = describe.description;
    client.plugin.call(
        FN_DEVICE_DESCRIPTION_ID,
        "PJRT_DeviceDescription_Id",
        &mut id,
    )?;
    Ok(i64::from(id.id))
}

impl Client<'_> {
    /// How many devices this client can address (the CPU plugin: its
    /// `cpu_device_count` create option).
    pub fn addressable_device_count(&self) -> Result<usize, PjrtError> {
        Ok(self.addressable_devices_args()?.num_devices)
    }
}

impl LoadedExecutable<'_> {
    /// The executable's addressable devices, in the order of its argument
    /// and output lists.
    fn addressable_devices(&self) -> Result<Vec<*mut c_void>, PjrtError> {
        let mut args = LoadedExecutableAddressableDevicesArgs::new();
        args.executable = self.exe;
        self.client.plugin.call(
            FN_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES,
            "PJRT_LoadedExecutable_AddressableDevices",
            &mut args,
        )?;
        if args.num_devices == 0 {
            return Ok(Vec::new());
        }
        if args.devices.is_null() {
            return Err(PjrtError::Data(
                "the executable listed its devices as null".into(),
            ));
        }
        // SAFETY: the plugin returned `num_devices` device pointers owned by the executable.
        Ok(unsafe { std::slice::from_raw_parts(args.devices, args.num_devices) }.to_vec())
    }

    /// The global ids of the executable's devices, in execution order.
    pub fn device_ids(&self) -> Result<Vec<i64>, PjrtError> {
        self.addressable_devices()?
            .into_iter()
            .map(|d| device_id(self.client, d))
            .collect()
    }

    /// Runs once on every device of the executable: `per_device[k]` are
    /// the arguments of its `k`-th device (placed there), and the result's
    /// `k`-th entry that device's outputs.
    pub fn execute_on_devices(
        &self,
        per_device: &[Vec<HostArray>],
    ) -> Result<Vec<Vec<HostArray>>, PjrtError> {
        let plugin = self.client.plugin;
        let devices = self.addressable_devices()?;
        if devices.len() != per_device.len() {
            return Err(PjrtError::Data(format!(
                "{} argument lists for an executable on {} devices",
                per_device.len(),
                devices.len()
            )));
        }
        let num_args = per_device.first().map_or(0, Vec::len);
        if per_device.iter().any(|a| a.len() != num_args) {
            return Err(PjrtError::Data(
                "the devices' argument lists differ in length".into(),
            ));
        }
        let inputs: Vec<Vec<Buffer<'_>>> = per_device
            .iter()
            .zip(&devices)
            .map(|(args, &d)| args.iter().map(|a| self.client.buffer_on(a, d)).collect())
            .collect::<Result<_, _>>()?;
        let input_ptrs: Vec<Vec<*mut c_void>> = inputs
            .iter()
            .map(|bs| bs.iter().map(|b| b.buffer).collect())
            .collect();
        let arg_lists: Vec<*const *mut c_void> = input_ptrs.iter().map(|v| v.as_ptr()).collect();
        let mut outputs: Vec<Vec<*mut c_void>> =
            vec![vec![ptr::null_mut(); self.num_outputs]; devices.len()];
        let output_lists: Vec<*mut *mut c_void> =
            outputs.iter_mut().map(|v| v.as_mut_ptr()).collect();
        let mut done: Vec<*mut c_void> = vec![ptr::null_mut(); devices.len()];
        let mut options = ExecuteOptions::new();
        let mut exec = LoadedExecutableExecuteArgs::new();
        exec.executable = self.exe;
        exec.options = &mut options;
        exec.argument_lists = arg_lists.as_ptr();
        exec.num_devices = devices.len();
        exec.num_args = num_args;
        exec.output_lists = output_lists.as_ptr();
        exec.device_complete_events = done.as_mut_ptr();
        plugin.call(
            FN_LOADED_EXECUTABLE_EXECUTE,
            "PJRT_LoadedExecutable_Execute",
            &mut exec,
        )?;
        // Own the outputs first so they are destroyed on every path below.
        let owned: Vec<Vec<Buffer<'_>>> = outputs
            .iter()
            .map(|list| {
                list.iter()
                    .map(|&b| Buffer {
                        client: self.client,
                        buffer: b,
                    })
                    .collect()
            })
            .collect();
        // every event is awaited (and freed) before the first error is reported
        let waited: Vec<Result<(), PjrtError>> = done
            .iter()
            .map(|&e| plugin.await_and_destroy_event(e))
            .collect();
        waited.into_iter().collect::<Result<(), _>>()?;
        drop(inputs);
        owned
            .iter()
            .map(|list| list.iter().map(Buffer::to_host).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_carry_the_grid_and_a_replica_major_assignment() {
        // 2 replicas x 2 partitions: partition 0 on devices 0 and 2, partition 1 on 1 and 3
        let o = compile_options(2, 2, false);
        let assignment = [
            0x08, 2, 0x10, 2, // replica_count, computation_count
            0x1a, 4, 0x0a, 2, 0, 2, // computation 0: replica_device_ids [0, 2]
            0x1a, 4, 0x0a, 2, 1, 3, // computation 1: [1, 3]
        ];
        let mut build = vec![0x20, 2, 0x28, 2, 0x4a, assignment.len() as u8];
        build.extend_from_slice(&assignment);
        let mut want = vec![0x1a, build.len() as u8];
        want.extend_from_slice(&build);
        assert_eq!(o, want);
        // spmd partitioning on: field 6 set, between the counts and the assignment
        let on = compile_options(1, 4, true);
        assert_eq!(&on[2..8], &[0x20, 1, 0x28, 4, 0x30, 1]);
    }

    #[test]
    fn varints_take_seven_bits_a_byte() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, vec![0xac, 0x02]);
    }
}
