//! A user's crate (say, their compiler) with xla-props properties in
//! `tests/my_props.rs`: the README's quickstart is copied from this crate,
//! and `tests/quickstart.rs` of the xla-props repository builds and runs it.
