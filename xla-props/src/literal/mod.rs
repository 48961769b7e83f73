//! Literals: typed array values with exact dtype conversions, raw-byte and
//! `.npy` I/O, physical layouts, and the 16-byte fingerprint.

mod bytes;
mod complex;
#[cfg(test)]
mod conversion_tests;
mod fingerprint;
mod float;
mod layout;
pub mod npy;
mod storage;
mod value;

pub use complex::{complex_type, component_type, plane_shape};
pub use fingerprint::Fingerprint;
pub use float::{
    bf16_from_f64, bits_to_f64, f16_from_f64, round_to_bits, round_to_type, F8E4M3Fn, F8E5M2,
};
pub use layout::{logical_to_physical_index, LayoutMap};
pub use storage::{
    check_size, element_text, set_size_budget, size_budget, ArrayData, Literal, LiteralError,
};
pub use value::Value;
