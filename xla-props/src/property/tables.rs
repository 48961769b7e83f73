//! The case space's tables: each op form's shapes, layouts and parameters
//! (comparison directions, conversion targets, fusion followers, attribute
//! classes). Plain lookups: no case is built, no key is made.

use std::fmt;
use std::sync::OnceLock;

use super::groups::{accepted_dtypes, bitcast_targets, CONFIG_SET, FORMS_SET};
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
/// The small shapes but the scalar.
const SMALL_RANKED_SHAPES: &[Dims] = SMALL_SHAPES.split_at(1).1;
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
    if set == CONFIG_SET || set == FORMS_SET {
        // each attribute class has its own operands (`configs::first_dims`),
        // operand-form cases the op's (`forms_operand_dims`)
        return &[];
    }
    // each form's full table, and its table in the small set
    let (full, small): (&'static [Dims], &'static [Dims]) = match form {
        Form::Structure => (&[], &[]),
        Form::Program => (
            crate::programs::TEMPLATE_SHAPES,
            crate::programs::TEMPLATE_SHAPES,
        ),
        Form::Elementwise
        | Form::Compare
        | Form::Convert
        | Form::BitcastConvert
        | Form::ReducePrecision
        | Form::Copy
        | Form::Broadcast
        | Form::Reshape => (ELEMENTWISE_SHAPES, SMALL_SHAPES),
        Form::Iota
        | Form::Transpose
        | Form::Slice
        | Form::Concatenate
        | Form::Pad
        | Form::Reverse
        | Form::Reduce
        | Form::ReduceWindow
        | Form::Sort => (RANKED_SHAPES, SMALL_RANKED_SHAPES),
        Form::DynamicSlice | Form::DynamicUpdateSlice | Form::Gather | Form::Scatter => {
            (INDEXING_SHAPES, &INDEXING_SHAPES[..3])
        }
        Form::Dot => (DOT_SHAPES, &DOT_SHAPES[..3]),
        Form::Convolution => (CONV_SHAPES, &CONV_SHAPES[..2]),
    };
    if set == "small" {
        small
    } else {
        full
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
/// The float followers of `chains_vs_reference`: the divisions too, whose
/// rewrites show against the reference only (fused and unfused, a backend
/// rewrites them alike, so `fusion_invariance` does not get them).
const FOLLOW_FLOAT_VS_REFERENCE: &[&str] = &[
    "then-add",
    "then-multiply",
    "then-negate",
    "then-abs",
    "then-residual",
    "then-divide",
    "then-divide-by-it",
];
/// The property whose chains are judged against the reference.
const CHAINS_VS_REFERENCE: &str = "chains_vs_reference";
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
    } else if spec.shapes == FORMS_SET {
        form_rows(op, dtype).names.as_slice()
    } else if spec.template == Template::Program {
        crate::programs::program_params(spec.name, dtype)
    } else if spec.template == Template::ElementwiseChain
        && spec.name == CHAINS_VS_REFERENCE
        && dtype.is_float()
    {
        FOLLOW_FLOAT_VS_REFERENCE
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

/// The op form's own parameter that an operand-form case of `op` keeps
/// (the first of its single-op parameters: a direction, a target, ...).
pub fn forms_base_param(op: Opcode, dtype: ElementType) -> Option<&'static str> {
    let form = Form::of(op)?;
    params(Template::SingleOp, form, dtype).first().copied()
}

/// The operand-form rows of one (op, dtype): a covering array, with the
/// distribution and the layout turn of each row.
pub(super) struct FormRows {
    /// The row names (`param+bcast-const`, `.fused` when fused).
    pub names: Vec<&'static str>,
    /// Per row: its distribution's index in the property's list, and its layout turn.
    pub turns: Vec<(usize, usize)>,
}

/// The operand-form rows of `op` on `dtype`, a covering array rather than
/// the product. With `k` forms, `n` slots and the op's `m` dtypes, the
/// dtype at position `d` gets `k` rows per round `q`, row `j` giving slot
/// `s` the form `(j + s*r) mod k` with `r = (d + q*m) mod k`, and
/// `ceil(k/m)` rounds when `n > 1`. So every (dtype, slot, form) triple
/// appears, and across the dtypes every `r` does: every pair of forms on
/// every pair of slots (`k` = 11 is prime and 3 slots at most, so `r` and `2r`
/// both run over every residue). Fused and the distribution rotate with
/// `j + d + q`, so every (op, form) meets both fusions and every distribution.
/// Elementwise ops also get, on every dtype, each constant form in each slot
/// with parameters in the others (`STAR_FORMS`).
pub(super) fn form_rows(op: Opcode, dtype: ElementType) -> &'static FormRows {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Table = HashMap<Opcode, &'static HashMap<ElementType, FormRows>>;
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    static EMPTY: OnceLock<FormRows> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    let cached = table
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&op)
        .copied();
    let of_op = cached.unwrap_or_else(|| {
        let rows: &'static HashMap<ElementType, FormRows> = Box::leak(Box::new(op_form_rows(op)));
        table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(op, rows);
        rows
    });
    of_op.get(&dtype).unwrap_or_else(|| {
        EMPTY.get_or_init(|| FormRows {
            names: Vec::new(),
            turns: Vec::new(),
        })
    })
}

/// Every dtype's rows of `op`; then, for a (slot, form) that the rotation
/// met only fused or only unfused across the dtypes, one more row with the
/// other fusion (on the dtype that has the row to flip).
fn op_form_rows(op: Opcode) -> std::collections::HashMap<ElementType, FormRows> {
    use crate::programs::{FUSED_SUFFIX, SLOT_SEPARATOR};
    use std::collections::{HashMap, HashSet};
    let mut all: HashMap<ElementType, FormRows> = accepted_dtypes(op)
        .dtypes
        .iter()
        .map(|&t| (t, make_form_rows(op, t)))
        .collect();
    let split = |name: &'static str| {
        let (forms, fused) = match name.strip_suffix(FUSED_SUFFIX) {
            Some(r) => (r, true),
            None => (name, false),
        };
        (forms, fused)
    };
    let mut seen: HashSet<(usize, &str, bool)> = HashSet::new();
    for rows in all.values() {
        for &name in &rows.names {
            let (forms, fused) = split(name);
            for (s, f) in forms.split(SLOT_SEPARATOR).enumerate() {
                seen.insert((s, f, fused));
            }
        }
    }
    let mut dtypes: Vec<ElementType> = all.keys().copied().collect();
    dtypes.sort();
    for t in dtypes {
        let Some(rows) = all.get_mut(&t) else {
            continue;
        };
        let mut extra = Vec::new();
        for (i, &name) in rows.names.iter().enumerate() {
            let (forms, fused) = split(name);
            let missing = forms
                .split(SLOT_SEPARATOR)
                .enumerate()
                .any(|(s, f)| !seen.contains(&(s, f, !fused)));
            if missing {
                for (s, f) in forms.split(SLOT_SEPARATOR).enumerate() {
                    seen.insert((s, f, !fused));
                }
                let flipped = if fused {
                    forms.to_string()
                } else {
                    format!("{forms}{FUSED_SUFFIX}")
                };
                let (turn, layout_turn) = rows.turns[i];
                extra.push((flipped, turn + 1, layout_turn));
            }
        }
        for (name, turn, layout_turn) in extra {
            if !rows.names.contains(&name.as_str()) {
                rows.names.push(Box::leak(name.into_boxed_str()));
                rows.turns.push((turn, layout_turn));
            }
        }
    }
    all
}

fn make_form_rows(op: Opcode, dtype: ElementType) -> FormRows {
    use crate::programs::{operand_form_slots, FUSED_SUFFIX, OPERAND_FORMS, SLOT_SEPARATOR};
    let mut rows = FormRows {
        names: Vec::new(),
        turns: Vec::new(),
    };
    let accepted = accepted_dtypes(op).dtypes;
    let Some(d) = accepted.iter().position(|&t| t == dtype) else {
        return rows;
    };
    if !crate::programs::has_operand_forms(op) {
        return rows;
    }
    let n = operand_form_slots(op, dtype, forms_base_param(op, dtype));
    if n == 0 {
        return rows;
    }
    let (k, m) = (OPERAND_FORMS.len(), accepted.len());
    let rounds = if n == 1 { 1 } else { k.div_ceil(m) };
    let mut push = |forms: Vec<&str>, turn: usize, layout_turn: usize| {
        let mut name = forms.join(&SLOT_SEPARATOR.to_string());
        if turn % 2 == 1 {
            name.push_str(FUSED_SUFFIX);
        }
        if !rows.names.contains(&name.as_str()) {
            rows.names.push(Box::leak(name.into_boxed_str()));
            rows.turns.push((turn, layout_turn));
        }
    };
    for q in 0..rounds {
        let r = (d + q * m) % k;
        for j in 0..k {
            let forms: Vec<&str> = (0..n).map(|s| OPERAND_FORMS[(j + s * r) % k]).collect();
            push(forms, j + d + q, j + d);
        }
    }
    // elementwise ops: every constant form against parameters in the
    // other slots, on every dtype (the pair covering meets a constant
    // against a parameter on only some dtypes, and a constant against a
    // broadcast or another constant hides a misread operand)
    if n > 1 && is_elementwise_form(op) {
        for s in 0..n {
            for (fi, f) in STAR_FORMS.iter().enumerate() {
                let mut forms = vec!["param"; n];
                forms[s] = f;
                push(forms, d + s + fi, d + s + fi);
            }
        }
    }
    rows
}

/// The forms each slot of an elementwise op meets with parameters in the
/// other slots, on every dtype: the constants simplifiers and code
/// generators special-case, and an iota.
const STAR_FORMS: &[&str] = &["const", "bcast-const", "bcast-one", "bcast-zero", "iota"];

fn is_elementwise_form(op: Opcode) -> bool {
    matches!(Form::of(op), Some(Form::Elementwise | Form::Compare))
}

/// One (row index, layout index, distribution) entry per operand-form row
/// of `op` on `dtype`: the distribution rotates over `dists`, the main
/// operand's layout over the selection's layouts of its rank.
pub(super) fn form_entries(
    op: Opcode,
    dtype: ElementType,
    sel: LayoutSelection,
    dists: &[crate::inputs::Distribution],
) -> Vec<(u16, u8, crate::inputs::Distribution)> {
    let rows = form_rows(op, dtype);
    let rank = crate::programs::forms_operand_dims(op).len();
    let range = layout_indices(rank, sel);
    if range.is_empty() || dists.is_empty() {
        return Vec::new();
    }
    rows.turns
        .iter()
        .enumerate()
        .map(|(i, &(turn, layout_turn))| {
            let li = range.start + layout_turn % range.len();
            (i as u16, li as u8, dists[turn % dists.len()])
        })
        .collect()
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
