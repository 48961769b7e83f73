//! The client: a loaded plugin, its client on the first addressable
//! device, compiled executables and device buffers, each destroyed through
//! the plugin when dropped.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;
use std::ptr;

use super::super::config::CreateOption;
use super::api::*;
use super::{buffer_type_code, element_type_of_code, HostArray, PjrtError};

/// The PJRT C API major version this client speaks.
pub const PJRT_API_MAJOR: i32 = 0;

/// The serialized `CompileOptionsProto` with `executable_build_options {
/// num_replicas: 1 num_partitions: 1 }`. Empty options make XLA abort the
/// process (`Check failed: replica_count > 0`).
pub const COMPILE_OPTIONS: &[u8] = &[0x1a, 0x04, 0x20, 0x01, 0x28, 0x01];

/// A loaded plugin: the library and its `PJRT_Api` table.
pub struct Plugin {
    pub(super) api: *const ApiHeader,
    pub(super) api_size: usize,
    pub(super) version: (i32, i32),
    // Keeps the code behind `api` mapped; dropped last.
    _lib: libloading::Library,
}

impl Plugin {
    /// Loads the plugin at `path`, checks its API version and table size, and
    /// runs `PJRT_Plugin_Initialize`.
    pub fn load(path: &Path) -> Result<Plugin, PjrtError> {
        let load_err = |message: String| PjrtError::Load {
            path: path.display().to_string(),
            message,
        };
        // SAFETY: loading a shared library runs its initializers; the plugin is
        // a pinned XLA build whose initializers only register XLA internals.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| load_err(e.to_string()))?;
        // SAFETY: `GetPjrtApi` has the C signature `const PJRT_Api* GetPjrtApi(void)`.
        let get_api: libloading::Symbol<unsafe extern "C" fn() -> *const ApiHeader> =
            unsafe { lib.get(b"GetPjrtApi\0") }.map_err(|e| load_err(e.to_string()))?;
        // SAFETY: calling the plugin's exported entry point with no arguments.
        let api = unsafe { get_api() };
        if api.is_null() {
            return Err(load_err("GetPjrtApi returned null".into()));
        }
        // SAFETY: `api` points to the plugin's static PJRT_Api, which starts with this header.
        let (api_size, major, minor) = unsafe {
            (
                (*api).struct_size,
                (*api).version.major,
                (*api).version.minor,
            )
        };
        if major != PJRT_API_MAJOR {
            return Err(PjrtError::Incompatible(format!(
                "plugin speaks pjrt c api {major}.{minor}, this client speaks {PJRT_API_MAJOR}.x"
            )));
        }
        let needed = std::mem::size_of::<ApiHeader>() + (FN_HIGHEST_USED + 1) * 8;
        if api_size < needed {
            return Err(PjrtError::Incompatible(format!(
                "PJRT_Api struct_size is {api_size} bytes, at least {needed} are needed"
            )));
        }
        let plugin = Plugin {
            api,
            api_size,
            version: (major, minor),
            _lib: lib,
        };
        let mut args = PluginInitializeArgs::new();
        plugin.call(FN_PLUGIN_INITIALIZE, "PJRT_Plugin_Initialize", &mut args)?;
        Ok(plugin)
    }

    /// The PJRT C API version the plugin was built with, `(major, minor)`.
    pub fn api_version(&self) -> (i32, i32) {
        self.version
    }

    /// The plugin's attributes with string or integer values (`xla_version`,
    /// `stablehlo_current_version`, ...), rendered as text.
    pub fn attributes(&self) -> Result<Vec<(String, String)>, PjrtError> {
        let mut args = PluginAttributesArgs::new();
        self.call(FN_PLUGIN_ATTRIBUTES, "PJRT_Plugin_Attributes", &mut args)?;
        let mut out = Vec::new();
        for i in 0..args.num_attributes {
            // SAFETY: the plugin returned `num_attributes` values with process lifetime.
            let nv = unsafe { &*args.attributes.add(i) };
            // SAFETY: name/name_size describe a byte string owned by the plugin.
            let name = unsafe { bytes_to_string(nv.name, nv.name_size) };
            let value = match nv.kind {
                // SAFETY: kString: the union holds a `const char*` of `value_size` bytes.
                0 => unsafe { bytes_to_string(nv.value as usize as *const c_char, nv.value_size) },
                1 => (nv.value as i64).to_string(),
                2 => {
                    let p = nv.value as usize as *const i64;
                    // SAFETY: kInt64List: the union holds a pointer to `value_size` int64s.
                    let xs = unsafe { std::slice::from_raw_parts(p, nv.value_size) };
                    xs.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(".")
                }
                4 => ((nv.value & 0xff) != 0).to_string(),
                _ => continue,
            };
            out.push((name, value));
        }
        Ok(out)
    }

    pub(super) fn fn_ptr(&self, index: usize) -> *const c_void {
        let offset = std::mem::size_of::<ApiHeader>() + index * 8;
        debug_assert!(offset + 8 <= self.api_size);
        // SAFETY: `load` checked that the table holds at least FN_HIGHEST_USED + 1
        // entries, and every index used here is at most FN_HIGHEST_USED.
        unsafe { *((self.api as *const u8).add(offset) as *const *const c_void) }
    }

    /// Calls function `index` with `args`, turning a returned `PJRT_Error` into `PjrtError`.
    pub(super) fn call<T>(
        &self,
        index: usize,
        name: &'static str,
        args: &mut T,
    ) -> Result<(), PjrtError> {
        let f = self.fn_ptr(index);
        if f.is_null() {
            return Err(PjrtError::Incompatible(format!(
                "{name} is not implemented by the plugin"
            )));
        }
        // SAFETY: PJRT functions take one pointer to their argument struct and return
        // a `PJRT_Error*`; `T` is the matching `#[repr(C)]` struct declared above.
        let err = unsafe {
            let f: ErrFn = std::mem::transmute::<*const c_void, ErrFn>(f);
            f(args as *mut T as *mut c_void)
        };
        if err.is_null() {
            Ok(())
        } else {
            Err(self.take_error(name, err))
        }
    }

    /// Reads and frees a `PJRT_Error`.
    pub(super) fn take_error(&self, call: &'static str, err: *mut c_void) -> PjrtError {
        let mut msg = ErrorMessageArgs::new();
        msg.error = err;
        let message_fn = self.fn_ptr(FN_ERROR_MESSAGE);
        let message = if message_fn.is_null() {
            String::from("(no message)")
        } else {
            // SAFETY: PJRT_Error_Message takes its args struct and returns void; the
            // message has the lifetime of `err`, so it is copied before the destroy.
            unsafe {
                let f: VoidFn = std::mem::transmute::<*const c_void, VoidFn>(message_fn);
                f(&mut msg as *mut ErrorMessageArgs as *mut c_void);
                bytes_to_string(msg.message, msg.message_size)
            }
        };
        let mut code_args = ErrorGetCodeArgs::new();
        code_args.error = err;
        let code = match self.call(FN_ERROR_GET_CODE, "PJRT_Error_GetCode", &mut code_args) {
            Ok(()) => code_args.code,
            Err(_) => -1,
        };
        let mut destroy = ErrorDestroyArgs::new();
        destroy.error = err;
        let destroy_fn = self.fn_ptr(FN_ERROR_DESTROY);
        if !destroy_fn.is_null() {
            // SAFETY: PJRT_Error_Destroy frees `err`, which is not used afterwards.
            unsafe {
                let f: VoidFn = std::mem::transmute::<*const c_void, VoidFn>(destroy_fn);
                f(&mut destroy as *mut ErrorDestroyArgs as *mut c_void);
            }
        }
        PjrtError::Call {
            call,
            code,
            message,
        }
    }

    pub(super) fn await_and_destroy_event(&self, event: *mut c_void) -> Result<(), PjrtError> {
        if event.is_null() {
            return Ok(());
        }
        let mut wait = EventAwaitArgs::new();
        wait.event = event;
        let result = self.call(FN_EVENT_AWAIT, "PJRT_Event_Await", &mut wait);
        let mut destroy = EventDestroyArgs::new();
        destroy.event = event;
        let destroyed = self.call(FN_EVENT_DESTROY, "PJRT_Event_Destroy", &mut destroy);
        result.and(destroyed)
    }
}

/// Copies `len` bytes at `p` into a String (lossy UTF-8); empty for null.
///
/// # Safety
/// `p` must be null or point to `len` readable bytes.
pub(super) unsafe fn bytes_to_string(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// A PJRT client on the plugin's first addressable device.
pub struct Client<'p> {
    pub(super) plugin: &'p Plugin,
    pub(super) client: *mut c_void,
    pub(super) device: *mut c_void,
}

impl<'p> Client<'p> {
    /// `PJRT_Client_Create` with no options.
    pub fn create(plugin: &'p Plugin) -> Result<Client<'p>, PjrtError> {
        Self::create_with_options(plugin, &BTreeMap::new())
    }

    /// `PJRT_Client_Create` with `options` as `PJRT_NamedValue`s.
    pub fn create_with_options(
        plugin: &'p Plugin,
        options: &BTreeMap<String, CreateOption>,
    ) -> Result<Client<'p>, PjrtError> {
        // kString, kInt64, kInt64List, kFloat, kBool (pjrt_c_api.h)
        const K_STRING: c_int = 0;
        const K_INT64: c_int = 1;
        const K_INT64_LIST: c_int = 2;
        const K_FLOAT: c_int = 3;
        const K_BOOL: c_int = 4;
        let values: Vec<NamedValue> = options
            .iter()
            .map(|(name, v)| {
                let (kind, value, value_size) = match v {
                    CreateOption::Str(s) => (K_STRING, s.as_ptr() as u64, s.len()),
                    CreateOption::Int(i) => (K_INT64, *i as u64, 1),
                    CreateOption::IntList(l) => (K_INT64_LIST, l.as_ptr() as u64, l.len()),
                    CreateOption::Float(f) => (K_FLOAT, (*f as f32).to_bits() as u64, 1),
                    CreateOption::Bool(b) => (K_BOOL, *b as u64, 1),
                };
                NamedValue {
                    struct_size: std::mem::size_of::<NamedValue>(),
                    extension_start: ptr::null_mut(),
                    name: name.as_ptr() as *const c_char,
                    name_size: name.len(),
                    kind,
                    value,
                    value_size,
                }
            })
            .collect();
        let mut args = ClientCreateArgs::new();
        if !values.is_empty() {
            args.create_options = values.as_ptr() as *const c_void;
            args.num_options = values.len();
        }
        // `values` and the strings and lists they point to outlive the call
        plugin.call(FN_CLIENT_CREATE, "PJRT_Client_Create", &mut args)?;
        let mut client = Client {
            plugin,
            client: args.client,
            device: ptr::null_mut(),
        };
        let devs = client.addressable_devices_args()?;
        if devs.num_devices == 0 || devs.devices.is_null() {
            return Err(PjrtError::Data(
                "the plugin has no addressable device".into(),
            ));
        }
        // SAFETY: the plugin returned `num_devices` >= 1 device pointers owned by the client.
        client.device = unsafe { *devs.devices };
        Ok(client)
    }

    /// `PJRT_Client_AddressableDevices`: `num_devices` device pointers at
    /// `devices`, owned by the client.
    pub(super) fn addressable_devices_args(
        &self,
    ) -> Result<ClientAddressableDevicesArgs, PjrtError> {
        let mut devs = ClientAddressableDevicesArgs::new();
        devs.client = self.client;
        self.plugin.call(
            FN_CLIENT_ADDRESSABLE_DEVICES,
            "PJRT_Client_AddressableDevices",
            &mut devs,
        )?;
        Ok(devs)
    }

    /// The platform version string (e.g. the XLA CPU build).
    pub fn platform_version(&self) -> Result<String, PjrtError> {
        let mut args = ClientPlatformVersionArgs::new();
        args.client = self.client;
        self.plugin.call(
            FN_CLIENT_PLATFORM_VERSION,
            "PJRT_Client_PlatformVersion",
            &mut args,
        )?;
        // SAFETY: the string is owned by the client, which outlives this call.
        Ok(unsafe { bytes_to_string(args.platform_version, args.platform_version_size) })
    }

    /// Compiles a program (`format` "mlir" for StableHLO text) with `options`
    /// (a serialized CompileOptionsProto; see [`COMPILE_OPTIONS`]).
    pub fn compile(
        &self,
        code: &str,
        format: &str,
        options: &[u8],
    ) -> Result<LoadedExecutable<'_>, PjrtError> {
        let mut program = Program::new();
        program.code = code.as_ptr() as *const c_char;
        program.code_size = code.len();
        program.format = format.as_ptr() as *const c_char;
        program.format_size = format.len();
        let mut args = ClientCompileArgs::new();
        args.client = self.client;
        args.program = &program;
        args.compile_options = options.as_ptr() as *const c_char;
        args.compile_options_size = options.len();
        self.plugin
            .call(FN_CLIENT_COMPILE, "PJRT_Client_Compile", &mut args)?;
        let mut exe = LoadedExecutable {
            client: self,
            exe: args.executable,
            num_outputs: 0,
        };
        let mut get = LoadedExecutableGetExecutableArgs::new();
        get.loaded_executable = exe.exe;
        self.plugin.call(
            FN_LOADED_EXECUTABLE_GET_EXECUTABLE,
            "PJRT_LoadedExecutable_GetExecutable",
            &mut get,
        )?;
        let mut outs = ExecutableNumOutputsArgs::new();
        outs.executable = get.executable;
        let counted = self.plugin.call(
            FN_EXECUTABLE_NUM_OUTPUTS,
            "PJRT_Executable_NumOutputs",
            &mut outs,
        );
        let mut destroy = ExecutableDestroyArgs::new();
        destroy.executable = get.executable;
        self.plugin.call(
            FN_EXECUTABLE_DESTROY,
            "PJRT_Executable_Destroy",
            &mut destroy,
        )?;
        counted?;
        exe.num_outputs = outs.num_outputs;
        Ok(exe)
    }

    pub(super) fn buffer_from_host(&self, array: &HostArray) -> Result<Buffer<'_>, PjrtError> {
        self.buffer_on(array, self.device)
    }

    /// `array` as a buffer on `device` (one of this client's).
    pub(super) fn buffer_on(
        &self,
        array: &HostArray,
        device: *mut c_void,
    ) -> Result<Buffer<'_>, PjrtError> {
        let code = buffer_type_code(array.dtype).ok_or_else(|| {
            PjrtError::Data(format!(
                "element type {} cannot be transferred",
                array.dtype
            ))
        })?;
        if array.expected_bytes() != Some(array.bytes.len()) {
            return Err(PjrtError::Data(format!(
                "host array {}{:?} has {} bytes",
                array.dtype,
                array.dims,
                array.bytes.len()
            )));
        }
        let mut args = BufferFromHostBufferArgs::new();
        args.client = self.client;
        args.data = array.bytes.as_ptr() as *const c_void;
        args.element_type = code;
        args.dims = array.dims.as_ptr();
        args.num_dims = array.dims.len();
        args.host_buffer_semantics = 0; // kImmutableOnlyDuringCall
        args.device = device;
        self.plugin.call(
            FN_CLIENT_BUFFER_FROM_HOST_BUFFER,
            "PJRT_Client_BufferFromHostBuffer",
            &mut args,
        )?;
        let buffer = Buffer {
            client: self,
            buffer: args.buffer,
        };
        self.plugin
            .await_and_destroy_event(args.done_with_host_buffer)?;
        Ok(buffer)
    }
}

impl Drop for Client<'_> {
    fn drop(&mut self) {
        let mut args = ClientDestroyArgs::new();
        args.client = self.client;
        // A failed destroy leaks, which is all that can be done in drop.
        let _ = self
            .plugin
            .call(FN_CLIENT_DESTROY, "PJRT_Client_Destroy", &mut args);
    }
}

/// A compiled, loaded executable.
pub struct LoadedExecutable<'c> {
    pub(super) client: &'c Client<'c>,
    pub(super) exe: *mut c_void,
    pub(super) num_outputs: usize,
}

impl LoadedExecutable<'_> {
    /// Outputs per execution (tuple results come back untupled).
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Transfers `args`, executes on the client's device, and reads every output back.
    pub fn execute(&self, args: &[HostArray]) -> Result<Vec<HostArray>, PjrtError> {
        let plugin = self.client.plugin;
        let inputs = args
            .iter()
            .map(|a| self.client.buffer_from_host(a))
            .collect::<Result<Vec<_>, _>>()?;
        let input_ptrs: Vec<*mut c_void> = inputs.iter().map(|b| b.buffer).collect();
        let arg_list: *const *mut c_void = input_ptrs.as_ptr();
        let mut outputs: Vec<*mut c_void> = vec![ptr::null_mut(); self.num_outputs];
        let output_list: *mut *mut c_void = outputs.as_mut_ptr();
        let mut done: *mut c_void = ptr::null_mut();
        let mut options = ExecuteOptions::new();
        let mut exec = LoadedExecutableExecuteArgs::new();
        exec.executable = self.exe;
        exec.options = &mut options;
        exec.argument_lists = &arg_list;
        exec.num_devices = 1;
        exec.num_args = input_ptrs.len();
        exec.output_lists = &output_list;
        exec.device_complete_events = &mut done;
        plugin.call(
            FN_LOADED_EXECUTABLE_EXECUTE,
            "PJRT_LoadedExecutable_Execute",
            &mut exec,
        )?;
        // Own the outputs first so they are destroyed on every path below.
        let owned: Vec<Buffer<'_>> = outputs
            .iter()
            .map(|&b| Buffer {
                client: self.client,
                buffer: b,
            })
            .collect();
        plugin.await_and_destroy_event(done)?;
        drop(inputs);
        owned.iter().map(Buffer::to_host).collect()
    }
}

impl Drop for LoadedExecutable<'_> {
    fn drop(&mut self) {
        let mut args = LoadedExecutableDestroyArgs::new();
        args.executable = self.exe;
        let _ = self.client.plugin.call(
            FN_LOADED_EXECUTABLE_DESTROY,
            "PJRT_LoadedExecutable_Destroy",
            &mut args,
        );
    }
}

pub(super) struct Buffer<'c> {
    pub(super) client: &'c Client<'c>,
    pub(super) buffer: *mut c_void,
}

impl Buffer<'_> {
    pub(super) fn to_host(&self) -> Result<HostArray, PjrtError> {
        let plugin = self.client.plugin;
        if self.buffer.is_null() {
            return Err(PjrtError::Data(
                "the executable returned a null buffer".into(),
            ));
        }
        let mut ty = BufferElementTypeArgs::new();
        ty.buffer = self.buffer;
        plugin.call(FN_BUFFER_ELEMENT_TYPE, "PJRT_Buffer_ElementType", &mut ty)?;
        let dtype = element_type_of_code(ty.element_type).ok_or_else(|| {
            PjrtError::Data(format!(
                "unsupported output buffer type code {}",
                ty.element_type
            ))
        })?;
        let mut dims_args = BufferDimensionsArgs::new();
        dims_args.buffer = self.buffer;
        plugin.call(
            FN_BUFFER_DIMENSIONS,
            "PJRT_Buffer_Dimensions",
            &mut dims_args,
        )?;
        let dims = if dims_args.num_dims == 0 {
            Vec::new()
        } else {
            // SAFETY: the plugin returned `num_dims` dims owned by the live buffer.
            unsafe { std::slice::from_raw_parts(dims_args.dims, dims_args.num_dims) }.to_vec()
        };
        let mut host = HostArray {
            dtype,
            dims,
            bytes: Vec::new(),
        };
        let n = host
            .expected_bytes()
            .ok_or_else(|| PjrtError::Data("output buffer size overflows".into()))?;
        host.bytes = vec![0u8; n];
        let mut args = BufferToHostBufferArgs::new();
        args.src = self.buffer;
        args.dst = host.bytes.as_mut_ptr() as *mut c_void;
        args.dst_size = n;
        plugin.call(
            FN_BUFFER_TO_HOST_BUFFER,
            "PJRT_Buffer_ToHostBuffer",
            &mut args,
        )?;
        plugin.await_and_destroy_event(args.event)?;
        Ok(host)
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        if self.buffer.is_null() {
            return;
        }
        let mut args = BufferDestroyArgs::new();
        args.buffer = self.buffer;
        let _ = self
            .client
            .plugin
            .call(FN_BUFFER_DESTROY, "PJRT_Buffer_Destroy", &mut args);
    }
}

/// A short description of the plugin for logs: API version and XLA/StableHLO versions.
pub fn describe(plugin: &Plugin) -> String {
    let (major, minor) = plugin.api_version();
    let mut s = format!("pjrt c api {major}.{minor}");
    if let Ok(attrs) = plugin.attributes() {
        for (k, v) in attrs {
            if k.contains("version") {
                s.push_str(&format!(", {k}={v}"));
            }
        }
    }
    s
}
