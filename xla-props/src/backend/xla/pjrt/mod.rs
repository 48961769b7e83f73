//! A minimal PJRT C API client: load a plugin, compile StableHLO text, move
//! dense host arrays in and out, execute.
//!
//! The structs are written by hand from `xla/pjrt/c/pjrt_c_api.h` (openxla/xla,
//! PJRT C API 0.113, checked against the 0.81 header shipped in the
//! `xla-cpu-pjrt` wheel). Every argument struct carries zeroed trailing space
//! and declares its full size, so a plugin built against a newer header reads
//! zeros (= "not set") for fields this file does not know, and its
//! `struct_size >= expected` check passes.
//!
//! This module runs inside the worker process only: a plugin that aborts takes
//! the worker down, never the test run.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;
use std::ptr;

use super::config::CreateOption;
use crate::hlo::ElementType;

/// The PJRT C API major version this client speaks.
pub const PJRT_API_MAJOR: i32 = 0;

/// The serialized `CompileOptionsProto` with `executable_build_options {
/// num_replicas: 1 num_partitions: 1 }`. Empty options make XLA abort the
/// process (`Check failed: replica_count > 0`).
pub const COMPILE_OPTIONS: &[u8] = &[0x1a, 0x04, 0x20, 0x01, 0x28, 0x01];

/// An error from loading a plugin or from a PJRT call, with the plugin's message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PjrtError {
    /// The shared library could not be loaded or lacks `GetPjrtApi`.
    #[error("failed to load pjrt plugin {path}: {message}")]
    Load {
        /// The plugin path.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The plugin speaks another API major version or its function table is too short.
    #[error("incompatible pjrt plugin: {0}")]
    Incompatible(String),
    /// A PJRT call returned an error.
    #[error("{call} failed (code {code}): {message}")]
    Call {
        /// The PJRT function.
        call: &'static str,
        /// The PJRT (absl) error code.
        code: i32,
        /// The plugin's message.
        message: String,
    },
    /// Data that does not fit the call (unsupported dtype, wrong byte count).
    #[error("{0}")]
    Data(String),
}

// Function table indices in `PJRT_Api` after its header (append-only within major 0).
const FN_ERROR_DESTROY: usize = 0;
const FN_ERROR_MESSAGE: usize = 1;
const FN_ERROR_GET_CODE: usize = 2;
const FN_PLUGIN_INITIALIZE: usize = 3;
const FN_PLUGIN_ATTRIBUTES: usize = 4;
const FN_EVENT_DESTROY: usize = 5;
const FN_EVENT_AWAIT: usize = 8;
const FN_CLIENT_CREATE: usize = 10;
const FN_CLIENT_DESTROY: usize = 11;
const FN_CLIENT_PLATFORM_VERSION: usize = 14;
const FN_CLIENT_ADDRESSABLE_DEVICES: usize = 16;
const FN_CLIENT_COMPILE: usize = 20;
const FN_CLIENT_BUFFER_FROM_HOST_BUFFER: usize = 22;
const FN_DEVICE_DESCRIPTION_ID: usize = 23;
const FN_DEVICE_GET_DESCRIPTION: usize = 29;
const FN_EXECUTABLE_DESTROY: usize = 40;
const FN_EXECUTABLE_NUM_OUTPUTS: usize = 44;
const FN_LOADED_EXECUTABLE_DESTROY: usize = 50;
const FN_LOADED_EXECUTABLE_GET_EXECUTABLE: usize = 51;
const FN_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES: usize = 52;
const FN_LOADED_EXECUTABLE_EXECUTE: usize = 55;
const FN_BUFFER_DESTROY: usize = 58;
const FN_BUFFER_ELEMENT_TYPE: usize = 59;
const FN_BUFFER_DIMENSIONS: usize = 60;
const FN_BUFFER_TO_HOST_BUFFER: usize = 70;
const FN_HIGHEST_USED: usize = FN_BUFFER_TO_HOST_BUFFER;

/// `PJRT_Api` up to the start of its function table.
#[repr(C)]
struct ApiHeader {
    struct_size: usize,
    extension_start: *mut c_void,
    version: ApiVersion,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut c_void,
    major: c_int,
    minor: c_int,
}

/// `PJRT_NamedValue` (exact layout; `value` is the union of the C header).
#[repr(C)]
struct NamedValue {
    struct_size: usize,
    extension_start: *mut c_void,
    name: *const c_char,
    name_size: usize,
    kind: c_int,
    value: u64,
    value_size: usize,
}

type ErrFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type VoidFn = unsafe extern "C" fn(*mut c_void);

/// Declares a PJRT argument struct: `struct_size`, `extension_start`, the
/// listed fields, then zeroed space for fields of newer headers.
macro_rules! pjrt_args {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[repr(C)]
        struct $name {
            struct_size: usize,
            extension_start: *mut c_void,
            $($field: $ty,)*
            reserved: [u64; 24],
        }
        impl $name {
            fn new() -> Self {
                // SAFETY: every field is an integer, bool, raw pointer or array
                // of integers, for which all-zero bytes are a valid value.
                let mut s: Self = unsafe { std::mem::zeroed() };
                s.struct_size = std::mem::size_of::<Self>();
                s
            }
        }
    };
}

pjrt_args!(ErrorDestroyArgs { error: *mut c_void });
pjrt_args!(ErrorMessageArgs { error: *mut c_void, message: *const c_char, message_size: usize });
pjrt_args!(ErrorGetCodeArgs { error: *mut c_void, code: c_int });
pjrt_args!(PluginInitializeArgs {});
pjrt_args!(PluginAttributesArgs { attributes: *const NamedValue, num_attributes: usize });
pjrt_args!(EventDestroyArgs { event: *mut c_void });
pjrt_args!(EventAwaitArgs { event: *mut c_void });
pjrt_args!(ClientCreateArgs {
    create_options: *const c_void,
    num_options: usize,
    kv_get_callback: *const c_void,
    kv_get_user_arg: *mut c_void,
    kv_put_callback: *const c_void,
    kv_put_user_arg: *mut c_void,
    client: *mut c_void,
});
pjrt_args!(ClientDestroyArgs { client: *mut c_void });
pjrt_args!(ClientPlatformVersionArgs {
    client: *mut c_void,
    platform_version: *const c_char,
    platform_version_size: usize,
});
pjrt_args!(ClientAddressableDevicesArgs {
    client: *mut c_void,
    devices: *const *mut c_void,
    num_devices: usize,
});
pjrt_args!(Program { code: *const c_char, code_size: usize, format: *const c_char, format_size: usize });
pjrt_args!(ClientCompileArgs {
    client: *mut c_void,
    program: *const Program,
    compile_options: *const c_char,
    compile_options_size: usize,
    executable: *mut c_void,
});
pjrt_args!(BufferFromHostBufferArgs {
    client: *mut c_void,
    data: *const c_void,
    element_type: c_int,
    dims: *const i64,
    num_dims: usize,
    byte_strides: *const i64,
    num_byte_strides: usize,
    host_buffer_semantics: c_int,
    device: *mut c_void,
    memory: *mut c_void,
    device_layout: *mut c_void,
    done_with_host_buffer: *mut c_void,
    buffer: *mut c_void,
});
pjrt_args!(ExecutableDestroyArgs { executable: *mut c_void });
pjrt_args!(ExecutableNumOutputsArgs { executable: *mut c_void, num_outputs: usize });
pjrt_args!(LoadedExecutableDestroyArgs { executable: *mut c_void });
pjrt_args!(LoadedExecutableGetExecutableArgs { loaded_executable: *mut c_void, executable: *mut c_void });
pjrt_args!(ExecuteOptions {
    send_callbacks: *mut c_void,
    recv_callbacks: *mut c_void,
    num_send_ops: usize,
    num_recv_ops: usize,
    launch_id: c_int,
    non_donatable_input_indices: *const i64,
    num_non_donatable_input_indices: usize,
    context: *mut c_void,
});
pjrt_args!(LoadedExecutableExecuteArgs {
    executable: *mut c_void,
    options: *mut ExecuteOptions,
    argument_lists: *const *const *mut c_void,
    num_devices: usize,
    num_args: usize,
    output_lists: *const *mut *mut c_void,
    device_complete_events: *mut *mut c_void,
    execute_device: *mut c_void,
});
pjrt_args!(BufferDestroyArgs { buffer: *mut c_void });
pjrt_args!(BufferElementTypeArgs { buffer: *mut c_void, element_type: c_int });
pjrt_args!(BufferDimensionsArgs { buffer: *mut c_void, dims: *const i64, num_dims: usize });
pjrt_args!(BufferToHostBufferArgs {
    src: *mut c_void,
    host_layout: *mut c_void,
    dst: *mut c_void,
    dst_size: usize,
    event: *mut c_void,
});

// after `pjrt_args!`, which it uses
pub mod devices;

/// `PJRT_Buffer_Type` codes.
pub fn buffer_type_code(t: ElementType) -> Option<i32> {
    Some(match t {
        ElementType::Pred => 1,
        ElementType::S8 => 2,
        ElementType::S16 => 3,
        ElementType::S32 => 4,
        ElementType::S64 => 5,
        ElementType::U8 => 6,
        ElementType::U16 => 7,
        ElementType::U32 => 8,
        ElementType::U64 => 9,
        ElementType::F16 => 10,
        ElementType::F32 => 11,
        ElementType::F64 => 12,
        ElementType::Bf16 => 13,
        // host layout: interleaved (re, im) components, little-endian
        ElementType::C64 => 14,
        ElementType::C128 => 15,
        ElementType::F8E5M2 => 16,
        ElementType::F8E4M3Fn => 17,
        // s4/u4 host transfers are packed differently across plugin versions
        ElementType::S4 | ElementType::U4 => return None,
        // s2, u2 and the minifloats are not lowered for compiled backends
        // (`ElementType::is_extended`)
        _ => return None,
    })
}

/// A complex literal as PJRT's host bytes: per element the real then the
/// imaginary component, little-endian (f32 pairs for c64, f64 for c128);
/// None for a real literal.
pub fn complex_to_host(l: &crate::literal::Literal) -> Option<HostArray> {
    let dtype = l.dtype();
    let mut bytes = Vec::with_capacity(l.element_count() * dtype.byte_size());
    for (re, im) in l.to_complex_vec() {
        match dtype {
            ElementType::C64 => {
                bytes.extend_from_slice(&(re as f32).to_le_bytes());
                bytes.extend_from_slice(&(im as f32).to_le_bytes());
            }
            ElementType::C128 => {
                bytes.extend_from_slice(&re.to_le_bytes());
                bytes.extend_from_slice(&im.to_le_bytes());
            }
            _ => return None,
        }
    }
    Some(HostArray {
        dtype,
        dims: l.dims().iter().map(|&d| d as i64).collect(),
        bytes,
    })
}

/// The complex literal of `shape` from PJRT's interleaved host bytes.
pub fn complex_from_host(
    h: &HostArray,
    shape: &crate::hlo::ArrayShape,
) -> Result<crate::literal::Literal, crate::literal::LiteralError> {
    use crate::literal::{plane_shape, Literal};
    let plane = crate::hlo::ArrayShape::new(plane_shape(shape).dtype, shape.dims.clone());
    let width = h.dtype.byte_size() / 2;
    let (mut re, mut im) = (Vec::new(), Vec::new());
    for pair in h.bytes.chunks_exact(2 * width) {
        let (r, i) = pair.split_at(width);
        re.extend_from_slice(r);
        im.extend_from_slice(i);
    }
    Literal::from_planes(
        &Literal::from_le_bytes(&plane, &re)?,
        &Literal::from_le_bytes(&plane, &im)?,
    )
}

/// The element type of a `PJRT_Buffer_Type` code.
pub fn element_type_of_code(code: i32) -> Option<ElementType> {
    ElementType::ALL
        .iter()
        .copied()
        .find(|&t| buffer_type_code(t) == Some(code))
}

/// A dense row-major host array: what crosses the PJRT boundary and the worker pipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostArray {
    /// Element type.
    pub dtype: ElementType,
    /// Dimensions, major to minor.
    pub dims: Vec<i64>,
    /// Little-endian element bytes in row-major order (one byte per pred).
    pub bytes: Vec<u8>,
}

impl HostArray {
    /// Bytes the dims and dtype call for.
    pub fn expected_bytes(&self) -> Option<usize> {
        let mut n = self.dtype.byte_size();
        for &d in &self.dims {
            n = n.checked_mul(usize::try_from(d).ok()?)?;
        }
        Some(n)
    }
}

/// A loaded plugin: the library and its `PJRT_Api` table.
pub struct Plugin {
    api: *const ApiHeader,
    api_size: usize,
    version: (i32, i32),
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

    fn fn_ptr(&self, index: usize) -> *const c_void {
        let offset = std::mem::size_of::<ApiHeader>() + index * 8;
        debug_assert!(offset + 8 <= self.api_size);
        // SAFETY: `load` checked that the table holds at least FN_HIGHEST_USED + 1
        // entries, and every index used here is at most FN_HIGHEST_USED.
        unsafe { *((self.api as *const u8).add(offset) as *const *const c_void) }
    }

    /// Calls function `index` with `args`, turning a returned `PJRT_Error` into `PjrtError`.
    fn call<T>(&self, index: usize, name: &'static str, args: &mut T) -> Result<(), PjrtError> {
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
    fn take_error(&self, call: &'static str, err: *mut c_void) -> PjrtError {
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

    fn await_and_destroy_event(&self, event: *mut c_void) -> Result<(), PjrtError> {
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
unsafe fn bytes_to_string(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// A PJRT client on the plugin's first addressable device.
pub struct Client<'p> {
    plugin: &'p Plugin,
    client: *mut c_void,
    device: *mut c_void,
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
        let mut devs = ClientAddressableDevicesArgs::new();
        devs.client = client.client;
        plugin.call(
            FN_CLIENT_ADDRESSABLE_DEVICES,
            "PJRT_Client_AddressableDevices",
            &mut devs,
        )?;
        if devs.num_devices == 0 || devs.devices.is_null() {
            return Err(PjrtError::Data(
                "the plugin has no addressable device".into(),
            ));
        }
        // SAFETY: the plugin returned `num_devices` >= 1 device pointers owned by the client.
        client.device = unsafe { *devs.devices };
        Ok(client)
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

    fn buffer_from_host(&self, array: &HostArray) -> Result<Buffer<'_>, PjrtError> {
        self.buffer_on(array, self.device)
    }

    /// `array` as a buffer on `device` (one of this client's).
    fn buffer_on(&self, array: &HostArray, device: *mut c_void) -> Result<Buffer<'_>, PjrtError> {
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
    client: &'c Client<'c>,
    exe: *mut c_void,
    num_outputs: usize,
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

struct Buffer<'c> {
    client: &'c Client<'c>,
    buffer: *mut c_void,
}

impl Buffer<'_> {
    fn to_host(&self) -> Result<HostArray, PjrtError> {
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

#[cfg(test)]
mod complex_host_tests;
