//! Named groups of ops, dtypes and distributions, and which dtypes each op
//! accepts. All derived from the opcode table and the element type lists;
//! this is the one place that says which (op, dtype) pairs exist, with reasons.

use crate::hlo::{Category, ElementType, Opcode};
use crate::inputs::Distribution;

use ElementType as T;

const SIGNED: &[ElementType] = ElementType::SIGNED_INTS;
const UNSIGNED: &[ElementType] = ElementType::UNSIGNED_INTS;

/// Integers and floats: every real type but pred.
const NUMERIC_TYPES: &[ElementType] =
    &ElementType::concat::<16>(ElementType::INTEGERS, ElementType::FLOATS);

/// A rule saying which dtypes an op accepts, and why.
#[derive(Clone, Copy, Debug)]
pub struct DtypeRule {
    /// The accepted element types.
    pub dtypes: &'static [ElementType],
    /// Why exactly these.
    pub reason: &'static str,
}

const REAL: DtypeRule = DtypeRule {
    dtypes: ElementType::REAL,
    reason: "defined on every real element type",
};
const NUMERIC: DtypeRule = DtypeRule {
    dtypes: NUMERIC_TYPES,
    reason: "arithmetic is defined on integers and floats, not on pred",
};
const SIGNED_NUMERIC: DtypeRule = DtypeRule {
    dtypes: &ElementType::concat::<11>(SIGNED, ElementType::FLOATS),
    reason: "sign-dependent ops are defined on signed integers and floats",
};
const FLOATS: DtypeRule = DtypeRule {
    dtypes: ElementType::FLOATS,
    reason: "rounding and transcendental functions are defined on floats only",
};
const BITWISE: DtypeRule = DtypeRule {
    dtypes: &ElementType::concat::<11>(&[T::Pred], ElementType::INTEGERS),
    reason: "bitwise logic is defined on pred and integers",
};
const INTEGERS: DtypeRule = DtypeRule {
    dtypes: ElementType::INTEGERS,
    reason: "bit counting and shifts are defined on integers only",
};
const BITCASTABLE: DtypeRule = DtypeRule {
    dtypes: NUMERIC_TYPES,
    reason: "bitcast-convert needs another type of the same width; pred has none",
};
const NONE: DtypeRule = DtypeRule {
    dtypes: &[],
    reason: "the catalogue does not build this op",
};

/// Ops built only as attribute classes of their structure (the
/// `configurations` property): single-op properties such as `vs_reference`
/// have no case of their own for them.
pub(crate) const CONFIGURATION_ONLY: [Opcode; 5] = [
    Opcode::While,
    Opcode::Conditional,
    Opcode::Call,
    Opcode::Map,
    Opcode::Tuple,
];

/// Which dtypes `op` accepts in the case space (the operand dtype of its cases).
///
/// ```
/// use xla_props::hlo::{ElementType, Opcode};
/// use xla_props::property::accepted_dtypes;
/// let rule = accepted_dtypes(Opcode::Sine);
/// assert!(rule.dtypes.contains(&ElementType::Bf16));
/// assert!(!rule.dtypes.contains(&ElementType::S32));
/// assert!(!rule.reason.is_empty());
/// ```
pub fn accepted_dtypes(op: Opcode) -> DtypeRule {
    use Opcode as O;
    match op {
        O::Abs | O::Negate | O::Sign => SIGNED_NUMERIC,
        O::Not | O::And | O::Or | O::Xor => BITWISE,
        O::Popcnt
        | O::CountLeadingZeros
        | O::ShiftLeft
        | O::ShiftRightArithmetic
        | O::ShiftRightLogical => INTEGERS,
        O::Ceil
        | O::Floor
        | O::RoundNearestAfz
        | O::RoundNearestEven
        | O::Sqrt
        | O::Rsqrt
        | O::IsFinite
        | O::Atan2
        | O::ReducePrecision => FLOATS,
        op if op.is_transcendental() => FLOATS,
        O::Add | O::Subtract | O::Multiply | O::Divide | O::Remainder | O::Power | O::Clamp => {
            NUMERIC
        }
        O::Maximum | O::Minimum | O::Compare | O::Select | O::Convert => REAL,
        O::BitcastConvert => BITCASTABLE,
        O::Broadcast
        | O::Reshape
        | O::Transpose
        | O::Slice
        | O::Concatenate
        | O::Pad
        | O::Reverse
        | O::Copy
        | O::DynamicSlice
        | O::DynamicUpdateSlice
        | O::Gather
        | O::Sort => REAL,
        O::Iota => NUMERIC,
        O::Reduce | O::ReduceWindow | O::Scatter | O::Dot | O::Convolution => NUMERIC,
        op if CONFIGURATION_ONLY.contains(&op) => REAL,
        _ => NONE,
    }
}

/// The bitcast-convert targets: other real types of the same bit width.
pub fn bitcast_targets(from: ElementType) -> impl Iterator<Item = ElementType> {
    ElementType::REAL.iter().copied().filter(move |t| {
        *t != from && !t.is_pred() && !from.is_pred() && t.bit_width() == from.bit_width()
    })
}

/// Every op the catalogue can build a case for, in table order.
pub fn catalogue_ops() -> impl Iterator<Item = Opcode> {
    Opcode::ALL
        .iter()
        .copied()
        .filter(|&op| !accepted_dtypes(op).dtypes.is_empty())
}

/// The named op groups usable in `#[xla_property(ops = GROUP)]`, derived from op categories.
pub const OP_GROUPS: &[&str] = &[
    "all",
    "elementwise",
    "elementwise_unary",
    "elementwise_binary",
    "selection",
    "conversion",
    "shape",
    "indexing",
    "reduction",
    "contraction",
    "structure",
];

/// The ops of a named group (only ops the catalogue builds), or None for an unknown group.
///
/// ```
/// use xla_props::hlo::Opcode;
/// use xla_props::property::op_group;
/// let binary = op_group("elementwise_binary").unwrap();
/// assert!(binary.contains(&Opcode::Add));
/// assert!(!binary.contains(&Opcode::Sine));
/// assert!(op_group("nonsense").is_none());
/// ```
pub fn op_group(name: &str) -> Option<Vec<Opcode>> {
    let pick = |f: &dyn Fn(Opcode) -> bool| Some(catalogue_ops().filter(|&o| f(o)).collect());
    match name {
        "all" => pick(&|_| true),
        "elementwise" => pick(&|o| {
            matches!(
                o.category(),
                Category::ElementwiseUnary | Category::ElementwiseBinary
            )
        }),
        "elementwise_unary" => pick(&|o| o.category() == Category::ElementwiseUnary),
        "elementwise_binary" => pick(&|o| o.category() == Category::ElementwiseBinary),
        "selection" => pick(&|o| o.category() == Category::Selection),
        "conversion" => pick(&|o| o.category() == Category::Conversion),
        "shape" => pick(&|o| o.category() == Category::ShapeOp),
        "indexing" => pick(&|o| o.category() == Category::Indexing),
        "reduction" => pick(&|o| o.category() == Category::Reduction),
        "contraction" => pick(&|o| o.category() == Category::Contraction),
        "structure" => pick(&|o| o.category() == Category::Structure),
        _ => None,
    }
}

/// The named dtype groups usable in `#[xla_property(dtypes = GROUP)]`.
pub const DTYPE_GROUPS: &[&str] = &["all", "floats", "integers", "signed", "unsigned", "pred"];

/// The dtypes of a named group, or None for an unknown group.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::property::dtype_group;
/// assert_eq!(dtype_group("floats").unwrap(), ElementType::FLOATS);
/// assert!(dtype_group("doubles").is_none());
/// ```
pub fn dtype_group(name: &str) -> Option<&'static [ElementType]> {
    match name {
        "all" => Some(ElementType::REAL),
        "floats" => Some(ElementType::FLOATS),
        "integers" => Some(ElementType::INTEGERS),
        "signed" => Some(SIGNED),
        "unsigned" => Some(UNSIGNED),
        "pred" => Some(&[ElementType::Pred]),
        _ => None,
    }
}

/// The shape sets usable in `#[xla_property(shapes = ...)]`.
/// `exhaustive`: one vector of `2^bits` elements per float type of at most
/// 16 bits (every bit pattern once), elementwise ops only.
/// `configurations`: one case per attribute class of the op
/// ([`crate::hlo::ATTRIBUTE_CLASSES`]), each class with its own operand shapes.
/// `operand_forms`: one case per row of the op's operand-form covering
/// array (`crate::programs::OPERAND_FORMS` per slot, fused or not), on the
/// op's own operand shape.
pub const SHAPE_SETS: &[&str] = &["default", "small", "exhaustive", CONFIG_SET, FORMS_SET];

/// The shape set of the attribute-class cases.
pub const CONFIG_SET: &str = "configurations";

/// The shape set of the operand-form cases.
pub const FORMS_SET: &str = "operand_forms";

/// The named distribution groups.
pub const DISTRIBUTION_GROUPS: &[&str] = &[
    "default",
    "all",
    "uniform",
    "special",
    "mixed",
    "exhaustive",
];

/// The distributions of a named group.
pub fn distribution_group(name: &str) -> Option<&'static [Distribution]> {
    match name {
        "default" | "all" => Some(Distribution::SUITE),
        "uniform" => Some(&[Distribution::Uniform]),
        "special" => Some(&[Distribution::Special]),
        "mixed" => Some(&[Distribution::Mixed]),
        "exhaustive" => Some(&[Distribution::Exhaustive]),
        _ => None,
    }
}

/// Compile-time name checks emitted by `#[xla_property]` (a `const` item per
/// name, so a misspelt name is a span-located compile error).
#[doc(hidden)]
pub mod validate {
    use crate::hlo::Opcode;

    const fn eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    const fn any(list: &[&str], name: &str) -> bool {
        let mut i = 0;
        while i < list.len() {
            if eq(list[i], name) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Panics (at compile time) with `msg` unless `name` is an opcode name.
    pub const fn op(name: &str, msg: &str) {
        let mut i = 0;
        while i < Opcode::ALL.len() {
            if eq(Opcode::ALL[i].name(), name) {
                return;
            }
            i += 1;
        }
        panic!("{}", msg);
    }
    /// Panics with `msg` unless `name` is an op group.
    pub const fn op_group(name: &str, msg: &str) {
        if !any(super::OP_GROUPS, name) {
            panic!("{}", msg);
        }
    }
    /// Panics with `msg` unless `name` is a real element type name.
    pub const fn dtype(name: &str, msg: &str) {
        let mut i = 0;
        while i < crate::hlo::ElementType::REAL.len() {
            if eq(crate::hlo::ElementType::REAL[i].name(), name) {
                return;
            }
            i += 1;
        }
        panic!("{}", msg);
    }
    /// Panics with `msg` unless `name` is a dtype group.
    pub const fn dtype_group(name: &str, msg: &str) {
        if !any(super::DTYPE_GROUPS, name) {
            panic!("{}", msg);
        }
    }
    /// Panics with `msg` unless `name` is a distribution or distribution group.
    pub const fn distribution(name: &str, msg: &str) {
        if !any(super::DISTRIBUTION_GROUPS, name) {
            panic!("{}", msg);
        }
    }
    /// Panics with `msg` unless `name` is a shape set.
    pub const fn shapes(name: &str, msg: &str) {
        if !any(super::SHAPE_SETS, name) {
            panic!("{}", msg);
        }
    }
}
