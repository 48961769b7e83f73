//! The PJRT C API as this client declares it: the function table's
//! indices, the header of `PJRT_Api`, and every argument struct
//! (`pjrt_args!`), written by hand from `xla/pjrt/c/pjrt_c_api.h`.

use std::ffi::{c_char, c_int, c_void};

// Function table indices in `PJRT_Api` after its header (append-only within major 0).
pub(super) const FN_ERROR_DESTROY: usize = 0;
pub(super) const FN_ERROR_MESSAGE: usize = 1;
pub(super) const FN_ERROR_GET_CODE: usize = 2;
pub(super) const FN_PLUGIN_INITIALIZE: usize = 3;
pub(super) const FN_PLUGIN_ATTRIBUTES: usize = 4;
pub(super) const FN_EVENT_DESTROY: usize = 5;
pub(super) const FN_EVENT_AWAIT: usize = 8;
pub(super) const FN_CLIENT_CREATE: usize = 10;
pub(super) const FN_CLIENT_DESTROY: usize = 11;
pub(super) const FN_CLIENT_PLATFORM_VERSION: usize = 14;
pub(super) const FN_CLIENT_ADDRESSABLE_DEVICES: usize = 16;
pub(super) const FN_CLIENT_COMPILE: usize = 20;
pub(super) const FN_CLIENT_BUFFER_FROM_HOST_BUFFER: usize = 22;
pub(super) const FN_DEVICE_DESCRIPTION_ID: usize = 23;
pub(super) const FN_DEVICE_GET_DESCRIPTION: usize = 29;
pub(super) const FN_EXECUTABLE_DESTROY: usize = 40;
pub(super) const FN_EXECUTABLE_NUM_OUTPUTS: usize = 44;
pub(super) const FN_LOADED_EXECUTABLE_DESTROY: usize = 50;
pub(super) const FN_LOADED_EXECUTABLE_GET_EXECUTABLE: usize = 51;
pub(super) const FN_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES: usize = 52;
pub(super) const FN_LOADED_EXECUTABLE_EXECUTE: usize = 55;
pub(super) const FN_BUFFER_DESTROY: usize = 58;
pub(super) const FN_BUFFER_ELEMENT_TYPE: usize = 59;
pub(super) const FN_BUFFER_DIMENSIONS: usize = 60;
pub(super) const FN_BUFFER_TO_HOST_BUFFER: usize = 70;
pub(super) const FN_HIGHEST_USED: usize = FN_BUFFER_TO_HOST_BUFFER;

/// `PJRT_Api` up to the start of its function table.
#[repr(C)]
pub(super) struct ApiHeader {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) version: ApiVersion,
}

#[repr(C)]
pub(super) struct ApiVersion {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) major: c_int,
    pub(super) minor: c_int,
}

/// `PJRT_NamedValue` (exact layout; `value` is the union of the C header).
#[repr(C)]
pub(super) struct NamedValue {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) name: *const c_char,
    pub(super) name_size: usize,
    pub(super) kind: c_int,
    pub(super) value: u64,
    pub(super) value_size: usize,
}

pub(super) type ErrFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub(super) type VoidFn = unsafe extern "C" fn(*mut c_void);

/// Declares a PJRT argument struct: `struct_size`, `extension_start`, the
/// listed fields, then zeroed space for fields of newer headers.
macro_rules! pjrt_args {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[repr(C)]
        pub(super) struct $name {
            pub(super) struct_size: usize,
            pub(super) extension_start: *mut c_void,
            $(pub(super) $field: $ty,)*
            pub(super) reserved: [u64; 24],
        }
        impl $name {
            #[allow(dead_code)]
            pub(super) fn new() -> Self {
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
