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

// the argument structs' macro first: `client` and `devices` use it
#[macro_use]
mod api;
mod client;
pub mod devices;
mod error;
mod host;

pub use client::{describe, Client, LoadedExecutable, Plugin, COMPILE_OPTIONS, PJRT_API_MAJOR};
pub use error::PjrtError;
pub use host::{
    buffer_type_code, complex_from_host, complex_to_host, element_type_of_code, HostArray,
};

#[cfg(test)]
mod complex_host_tests;
