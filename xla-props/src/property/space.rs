//! The lazy case space: a deterministic product op × dtype × shape × layout ×
//! distribution × parameter (comparison direction, conversion target, fusion
//! follower, ...). Counting and indexing never materialize cases.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use super::groups::{accepted_dtypes, bitcast_targets, distribution_group, dtype_group, op_group};
use super::id::{BackendId, CaseId, CaseKey};
use super::spec::{LayoutSelection, PropertySpec, Selection, Template};
use crate::hlo::{ElementType, Opcode};
use crate::inputs::CaseDistribution;
use crate::programs::Form;

/// The shape sets usable in `#[xla_property(shapes = ...)]`.
/// `exhaustive`: one vector of `2^bits` elements per float type of at most
/// 16 bits (every bit pattern once), elementwise ops only.
/// `configurations`: one case per attribute class of the op
/// ([`crate::hlo::ATTRIBUTE_CLASSES`]), each class with its own operand shapes.
pub const SHAPE_SETS: &[&str] = &["default", "small", "exhaustive", CONFIG_SET];

/// The shape set of the attribute-class cases.
pub const CONFIG_SET: &str = "configurations";

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
const RANKED_SHAPES: &[Dims] = &[
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

fn bitcast_params(dtype: ElementType) -> &'static [&'static str] {
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
fn layout_indices(rank: usize, sel: LayoutSelection) -> std::ops::Range<usize> {
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
fn class_entries(op: Opcode, dtype: ElementType, sel: LayoutSelection) -> Vec<(u16, u8)> {
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

/// Restricts a case space (from `--op`/`--dtype`); empty lists restrict nothing.
#[derive(Clone, Debug, Default)]
pub struct SpaceFilter {
    /// Keep only these ops.
    pub ops: Vec<Opcode>,
    /// Keep only these dtypes.
    pub dtypes: Vec<ElementType>,
}

/// One (op, dtype) block of a property's cases.
#[derive(Clone, Debug)]
struct Section {
    op: Opcode,
    dtype: ElementType,
    /// (shape index, layout index) pairs; for a tied section (attribute
    /// classes) (class index, layout index), one per class.
    shapes: Vec<(u16, u8)>,
    dists: Vec<CaseDistribution>,
    params: &'static [&'static str],
    /// The parameter is the class the shape entry names (not a product with it).
    tied: bool,
    /// Index of the first case of this section.
    start: u64,
}

impl Section {
    fn nparams(&self) -> u64 {
        if self.tied {
            1
        } else {
            self.params.len().max(1) as u64
        }
    }
    fn variants(&self) -> u64 {
        self.dists.len() as u64 * self.nparams()
    }
    fn count(&self) -> u64 {
        self.shapes.len() as u64 * self.variants()
    }
}

/// The cases of one property (for any backend), counted and indexed lazily.
///
/// ```
/// use xla_props::property::{find_property, CaseSpace, SpaceFilter};
/// let (idx, spec) = find_property("vs_reference").unwrap();
/// let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
/// assert!(space.len() > 10_000);
/// let key = space.get(1234).unwrap();
/// assert_eq!(space.index_of(&key), Some(1234));
/// ```
#[derive(Clone, Debug)]
pub struct CaseSpace {
    property: u16,
    spec: &'static PropertySpec,
    sections: Vec<Section>,
    by_pair: HashMap<(Opcode, ElementType), usize>,
    natural: u64,
}

/// Why a property's selections do not resolve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpaceError {
    /// An unknown group or name in a selection.
    #[error("property `{property}`: unknown {what} `{name}`")]
    Unknown {
        /// The property.
        property: String,
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
    },
}

fn resolve_ops(spec: &PropertySpec) -> Result<Vec<Opcode>, SpaceError> {
    let unknown = |name: &str| SpaceError::Unknown {
        property: spec.name.to_string(),
        what: "op",
        name: name.to_string(),
    };
    match spec.ops {
        Selection::Group(g) => op_group(g).ok_or_else(|| unknown(g)),
        Selection::List(names) => names
            .iter()
            .map(|n| n.parse::<Opcode>().map_err(|_| unknown(n)))
            .collect(),
    }
}

fn resolve_dtypes(spec: &PropertySpec) -> Result<Vec<ElementType>, SpaceError> {
    let unknown = |name: &str| SpaceError::Unknown {
        property: spec.name.to_string(),
        what: "dtype",
        name: name.to_string(),
    };
    match spec.dtypes {
        Selection::Group(g) => dtype_group(g).map(<[_]>::to_vec).ok_or_else(|| unknown(g)),
        Selection::List(names) => names
            .iter()
            .map(|n| n.parse::<ElementType>().map_err(|_| unknown(n)))
            .collect(),
    }
}

fn resolve_dists(spec: &PropertySpec) -> Result<Vec<CaseDistribution>, SpaceError> {
    let unknown = |name: &str| SpaceError::Unknown {
        property: spec.name.to_string(),
        what: "distribution",
        name: name.to_string(),
    };
    match spec.distributions {
        Selection::Group(g) => distribution_group(g)
            .map(<[_]>::to_vec)
            .ok_or_else(|| unknown(g)),
        Selection::List(names) => names
            .iter()
            .map(|n| CaseDistribution::from_name(n).ok_or_else(|| unknown(n)))
            .collect(),
    }
}

impl CaseSpace {
    /// The case space of property number `property` (its index in [`super::registry`]).
    pub fn new(
        property: u16,
        spec: &'static PropertySpec,
        filter: &SpaceFilter,
    ) -> Result<CaseSpace, SpaceError> {
        let ops = resolve_ops(spec)?;
        let dtypes = resolve_dtypes(spec)?;
        let dists = resolve_dists(spec)?;
        if !SHAPE_SETS.contains(&spec.shapes) {
            return Err(SpaceError::Unknown {
                property: spec.name.to_string(),
                what: "shape set",
                name: spec.shapes.to_string(),
            });
        }
        let mut sections = Vec::new();
        let mut start = 0u64;
        for op in ops {
            if !filter.ops.is_empty() && !filter.ops.contains(&op) {
                continue;
            }
            let Some(form) = case_form(spec.template, op) else {
                continue;
            };
            if spec.template == Template::ElementwiseChain
                && (form != Form::Elementwise || op == Opcode::IsFinite)
            {
                continue;
            }
            let accepted = accepted_dtypes(op).dtypes;
            for &dtype in &dtypes {
                if (form != Form::Program && !accepted.contains(&dtype))
                    || (!filter.dtypes.is_empty() && !filter.dtypes.contains(&dtype))
                {
                    continue;
                }
                let tied = spec.shapes == CONFIG_SET;
                let mut shape_entries = Vec::new();
                if tied {
                    shape_entries = class_entries(op, dtype, spec.layouts);
                }
                for (si, dims) in shapes(form, spec.shapes).iter().enumerate() {
                    if spec.shapes == "exhaustive" && !is_exhaustive_shape(dims, dtype) {
                        continue;
                    }
                    for li in layout_indices(dims.len(), spec.layouts) {
                        shape_entries.push((si as u16, li as u8));
                    }
                }
                let section_dists = if form == Form::Iota {
                    dists.iter().copied().take(1).collect()
                } else {
                    dists.clone()
                };
                let section = Section {
                    op,
                    dtype,
                    shapes: shape_entries,
                    dists: section_dists,
                    params: case_params(spec, op, form, dtype),
                    tied,
                    start,
                };
                if section.count() == 0 {
                    continue;
                }
                start += section.count();
                sections.push(section);
            }
        }
        let by_pair = sections
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.op, s.dtype), i))
            .collect();
        Ok(CaseSpace {
            property,
            spec,
            sections,
            by_pair,
            natural: start,
        })
    }

    /// The property.
    pub fn spec(&self) -> &'static PropertySpec {
        self.spec
    }

    /// The property's index in the registry.
    pub fn property_index(&self) -> u16 {
        self.property
    }

    /// The number of cases (per backend), after the property's budget.
    pub fn len(&self) -> u64 {
        match self.spec.budget {
            Some(b) => self.natural.min(b),
            None => self.natural,
        }
    }

    /// True when the property has no case.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn natural_of(&self, i: u64) -> u64 {
        match self.spec.budget {
            Some(b) if self.natural > b => ((i as u128 * self.natural as u128) / b as u128) as u64,
            _ => i,
        }
    }

    /// The `i`-th case, without generating anything.
    pub fn get(&self, i: u64) -> Option<CaseKey> {
        if i >= self.len() {
            return None;
        }
        let n = self.natural_of(i);
        let si = self.sections.partition_point(|s| s.start <= n) - 1;
        let s = &self.sections[si];
        let mut r = n - s.start;
        let nparams = s.nparams();
        let mut param = r % nparams;
        r /= nparams;
        let dist = r % s.dists.len() as u64;
        r /= s.dists.len() as u64;
        let (shape, layout) = s.shapes[r as usize];
        if s.tied {
            param = u64::from(shape);
        }
        Some(CaseKey {
            property: self.property,
            op: s.op,
            dtype: s.dtype,
            shape,
            layout,
            dist: s.dists[dist as usize],
            param: param as u16,
        })
    }

    /// The index of a case in this space, or None when it is not a case of it.
    pub fn index_of(&self, key: &CaseKey) -> Option<u64> {
        if key.property != self.property {
            return None;
        }
        let s = &self.sections[*self.by_pair.get(&(key.op, key.dtype))?];
        let shape_pos =
            s.shapes
                .iter()
                .position(|&(sh, l)| sh == key.shape && l == key.layout)? as u64;
        let dist_pos = s.dists.iter().position(|&d| d == key.dist)? as u64;
        let nparams = s.nparams();
        let param = if s.tied {
            if key.param != key.shape {
                return None;
            }
            0
        } else {
            u64::from(key.param)
        };
        if param >= nparams {
            return None;
        }
        let n = s.start + (shape_pos * s.dists.len() as u64 + dist_pos) * nparams + param;
        match self.spec.budget {
            Some(b) if self.natural > b => {
                let (nn, bb, nat) = (n as u128, b as u128, self.natural as u128);
                let j = (nn * bb).div_ceil(nat);
                (j < bb && j * nat / bb == nn).then_some(j as u64)
            }
            _ => Some(n),
        }
    }

    /// Every case key, in order.
    pub fn iter(&self) -> impl Iterator<Item = CaseKey> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// Case counts per (op, dtype), for the composition summary.
    pub fn composition(&self) -> Vec<(Opcode, ElementType, u64)> {
        let budget_scale = |c: u64| match self.spec.budget {
            Some(b) if self.natural > b => ((c as u128 * b as u128) / self.natural as u128) as u64,
            _ => c,
        };
        self.sections
            .iter()
            .map(|s| (s.op, s.dtype, budget_scale(s.count())))
            .collect()
    }

    /// A case for a backend.
    pub fn case(&self, i: u64, backend: BackendId) -> Option<CaseId> {
        self.get(i).map(|key| CaseId { key, backend })
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
