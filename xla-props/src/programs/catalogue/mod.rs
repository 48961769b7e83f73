//! The single-op catalogue: builds the HLO module of one op case (its op,
//! dtype, shape, layout and parameter: what a case name says) and says what
//! each parameter is for (so inputs land in a safe range). `forms.rs` builds
//! each form's module, `chain.rs` the elementwise chains, `configs/` one
//! module per attribute class.

mod builder;
mod case;
mod chain;
mod configs;
mod forms;
mod operand_forms;

pub use chain::{build_chain, fuse_entry};
pub(crate) use configs::{
    build as build_configuration, classes as op_classes, first_dims as class_operand_dims,
};
pub use operand_forms::{
    build_operand_forms, forms_operand_dims, has_operand_forms, operand_form_slots, FormsSite,
    FUSED_SUFFIX, OPERAND_FORMS, SLOT_SEPARATOR,
};

pub(crate) use builder::{
    arr, comparison_type, elementwise, highest, lowest, scalar, Builder, Init,
};
pub use builder::{elementwise_role, BuiltCase, CatalogueError};
pub(crate) use case::Res;
pub use case::{Form, OpCase};
pub use forms::build_single;
