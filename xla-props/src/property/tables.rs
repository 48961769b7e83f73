//! The case space's tables: each op form's shapes, layouts and parameters
//! (comparison directions, conversion targets, fusion followers, attribute
//! classes). Plain lookups: no case is built, no key is made.

use std::fmt;
use std::sync::OnceLock;

use super::groups::{bitcast_targets, CONFIG_SET};
use super::spec::{LayoutSelection, PropertySpec, Template};
use crate::hlo::{ElementType, Opcode};
use crate::programs::Form;

/// The form of a case of `template` on `op`: program templates have their own.
pub fn case_form(template: Template, op: Opcode) -> Option<Form> {
    if template == Template::Program {
        Some(Form::Program)
    } else {
        Form::of(op)
    }
}

type Dims = &'static [i64];

/// Scalars, size-1 and size-0 dims, odd sizes, ranks up to 4; at most 16 elements.
const ELEMENTWISE_SHAPES: &[Dims] = &[
    &[],
    &[1],
    &[0],
    &[7],
    &[16],
    &[3, 5],
    &[1, 7],
    &[0, 3],
    &[4, 4],
    &[2, 3, 2],
    &[1, 1, 1],
    &[3, 0, 2],
    &[2, 3, 1, 2],
    &[2, 2, 2, 2],
    &[1, 4, 1, 3],
];
/// The elementwise shapes but the scalar.
const RANKED_SHAPES: &[Dims] = ELEMENTWISE_SHAPES.split_at(1).1;
const INDEXING_SHAPES: &[Dims] = &[&[5], &[8], &[4, 3], &[1, 6], &[3, 4, 2], &[2, 2, 3, 2]];
const DOT_SHAPES: &[Dims] = &[
    &[3, 4],
    &[1, 5],
    &[4, 1],
    &[2, 0],
    &[0, 3],
    &[5, 7],
    &[2, 3, 4],
    &[1, 2, 2],
    &[3, 1, 5],
];
/// Convolution inputs, `b01f`.
const CONV_SHAPES: &[Dims] = &[
    &[1, 5, 5, 2],
    &[2, 4, 3, 1],
    &[1, 3, 3, 3],
    &[1, 2, 2, 1],
    &[2, 6, 2, 2],
];
const SMALL_SHAPES: &[Dims] = &[&[], &[1], &[0], &[7], &[3, 5], &[2, 3, 2]];
const SMALL_RANKED_SHAPES: &[Dims] = &[&[1], &[0], &[7], &[3, 5], &[2, 3, 2]];
/// Every bit pattern of a 16-bit or an 8-bit float type.
const EXHAUSTIVE_SHAPES: &[Dims] = &[&[65536], &[256]];

/// True when `dims` holds exactly one element per bit pattern of `dtype`.
pub fn is_exhaustive_shape(dims: &[i64], dtype: ElementType) -> bool {
    dtype.is_float()
        && dtype.bit_width() <= 16
        && dims.iter().product::<i64>() == 1i64 << dtype.bit_width()
}

/// The shape table of a form in a shape set (the case's first operand).
pub fn shapes(form: Form, set: &str) -> &'static [Dims] {
    if set == "exhaustive" {
        return if form == Form::Elementwise {
            EXHAUSTIVE_SHAPES
        } else {
            &[]
        };
    }
    if set == CONFIG_SET {
        // each attribute class has its own operands (`configs::first_dims`)
        return &[];
    }
    let small = set == "small";
    match form {
        Form::Structure => &[],
        Form::Program => crate::programs::TEMPLATE_SHAPES,
        Form::Elementwise
        | Form::Compare
        | Form::Convert
        | Form::BitcastConvert
        | Form::ReducePrecision
        | Form::Copy
        | Form::Broadcast
        | Form::Reshape => {
            if small {
                SMALL_SHAPES
            } else {
                ELEMENTWISE_SHAPES
            }
        }
        Form::Iota
        | Form::Transpose
        | Form::Slice
        | Form::Concatenate
        | Form::Pad
        | Form::Reverse
        | Form::Reduce
        | Form::ReduceWindow
        | Form::Sort => {
            if small {
                SMALL_RANKED_SHAPES
            } else {
                RANKED_SHAPES
            }
        }
        Form::DynamicSlice | Form::DynamicUpdateSlice | Form::Gather | Form::Scatter => {
            &INDEXING_SHAPES[..if small { 3 } else { INDEXING_SHAPES.len() }]
        }
        Form::Dot => &DOT_SHAPES[..if small { 3 } else { DOT_SHAPES.len() }],
        Form::Convolution => &CONV_SHAPES[..if small { 2 } else { CONV_SHAPES.len() }],
    }
}

const LAYOUTS_0: &[Dims] = &[&[]];
const LAYOUTS_1: &[Dims] = &[&[0]];
const LAYOUTS_2: &[Dims] = &[&[1, 0], &[0, 1]];
const LAYOUTS_3: &[Dims] = &[&[2, 1, 0], &[0, 1, 2], &[1, 0, 2]];
const LAYOUTS_4: &[Dims] = &[&[3, 2, 1, 0], &[0, 1, 2, 3], &[2, 3, 0, 1]];

/// The layouts (minor to major) of a rank: the default first, then permuted ones.
pub fn layouts(rank: usize) -> &'static [Dims] {
    match rank {
        0 => LAYOUTS_0,
        1 => LAYOUTS_1,
        2 => LAYOUTS_2,
        3 => LAYOUTS_3,
        _ => LAYOUTS_4,
    }
}

const COMPARE_INT: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge"];
const COMPARE_FLOAT: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge", "eq-total", "lt-total"];
const CONVERT_TARGETS: &[&str] = &[
    "to-pred",
    "to-s4",
    "to-s8",
    "to-s16",
    "to-s32",
    "to-s64",
    "to-u4",
    "to-u8",
    "to-u16",
    "to-u32",
    "to-u64",
    "to-f16",
    "to-bf16",
    "to-f32",
    "to-f64",
    "to-f8e4m3fn",
    "to-f8e5m2",
];
const FOLLOW_FLOAT: &[&str] = &[
    "then-add",
    "then-multiply",
    "then-negate",
    "then-abs",
    "then-residual",
];
const FOLLOW_INT: &[&str] = &[
    "then-add",
    "then-multiply",
    "then-xor",
    "then-maximum",
    "then-minimum",
];
const FOLLOW_PRED: &[&str] = &["then-and", "then-or", "then-xor", "then-not"];

pub(super) fn bitcast_params(dtype: ElementType) -> &'static [&'static str] {
    static TABLE: OnceLock<Vec<Vec<&'static str>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        ElementType::ALL
            .iter()
            .map(|&from| {
                bitcast_targets(from)
                    .filter_map(|t| {
                        let i = ElementType::REAL.iter().position(|&r| r == t)?;
                        Some(CONVERT_TARGETS[i])
                    })
                    .collect()
            })
            .collect()
    });
    ElementType::ALL
        .iter()
        .position(|&t| t == dtype)
        .map_or(&[], |i| table[i].as_slice())
}

/// The parameter names of a section (an op and dtype under a template); empty means none.
pub fn params(template: Template, form: Form, dtype: ElementType) -> &'static [&'static str] {
    if template == Template::Program || form == Form::Program {
        // a property's own template subset comes from `case_params`
        return crate::programs::program_params("", dtype);
    }
    if template == Template::ElementwiseChain {
        return match () {
            _ if dtype.is_float() => FOLLOW_FLOAT,
            _ if dtype.is_pred() => FOLLOW_PRED,
            _ => FOLLOW_INT,
        };
    }
    match form {
        Form::Elementwise | Form::Copy => &[],
        Form::Compare if dtype.is_float() => COMPARE_FLOAT,
        Form::Compare => COMPARE_INT,
        Form::Convert => CONVERT_TARGETS,
        Form::BitcastConvert => bitcast_params(dtype),
        Form::ReducePrecision => &["e5m10", "e8m7", "e5m2", "e4m3"],
        Form::Iota => &["first", "last"],
        Form::Broadcast => &["prepend", "append"],
        Form::Reshape => &["flatten", "unsqueeze"],
        Form::Transpose => &["reverse", "rotate"],
        Form::Slice => &["head", "stride2", "tail"],
        Form::Concatenate => &["first", "last"],
        Form::Pad => &["edge", "interior", "negative"],
        Form::Reverse => &["first", "all"],
        Form::DynamicSlice | Form::DynamicUpdateSlice => &["inbounds", "clamped"],
        Form::Gather => &["rows", "clamped"],
        Form::Scatter => &["add", "max"],
        Form::Reduce => &["add-all", "add-first", "max-last", "min-all", "mul-first"],
        Form::ReduceWindow => &["max-w2", "add-w2s2", "add-pad"],
        Form::Sort => &["asc-last", "desc-first"],
        Form::Dot => &["n1", "n3"],
        Form::Convolution => &["k1", "k3same", "k2s2"],
        Form::Program | Form::Structure => &[],
    }
}

/// The parameter names of a section of a property (program properties cover
/// their own templates, the `configurations` shape set the op's attribute classes).
pub fn case_params(
    spec: &PropertySpec,
    op: Opcode,
    form: Form,
    dtype: ElementType,
) -> &'static [&'static str] {
    if spec.shapes == CONFIG_SET {
        crate::programs::op_classes(op, dtype)
    } else if spec.template == Template::Program {
        crate::programs::program_params(spec.name, dtype)
    } else {
        params(spec.template, form, dtype)
    }
}

/// The layout indices a selection keeps for a rank.
pub(super) fn layout_indices(rank: usize, sel: LayoutSelection) -> std::ops::Range<usize> {
    let n = layouts(rank).len();
    match sel {
        LayoutSelection::All => 0..n,
        LayoutSelection::Default => 0..1,
        LayoutSelection::Permuted => 1..n,
    }
}

/// One (class index, layout index) entry per attribute class of `op` on
/// `dtype`. The layout rotates with the class and the dtype, so every class
/// meets permuted layouts across dtypes and every dtype meets every layout
/// across classes (a covering of class x dtype x layout pairs, not the product).
pub(super) fn class_entries(
    op: Opcode,
    dtype: ElementType,
    sel: LayoutSelection,
) -> Vec<(u16, u8)> {
    let dtype_pos = ElementType::ALL
        .iter()
        .position(|&t| t == dtype)
        .unwrap_or(0);
    let classes = crate::programs::op_classes(op, dtype);
    let mut entries = Vec::with_capacity(classes.len());
    for (ci, class) in classes.iter().enumerate() {
        let rank = crate::programs::class_operand_dims(op, class).len();
        let range = layout_indices(rank, sel);
        if range.is_empty() {
            continue;
        }
        let li = range.start + (ci + dtype_pos) % range.len();
        entries.push((ci as u16, li as u8));
    }
    entries
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
