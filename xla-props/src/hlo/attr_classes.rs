//! The attribute classes of each opcode: the configurations of its attributes
//! and of its operand structure that a compiler handles by different code, as
//! data next to the opcode table, each family with the reason it is worth a
//! case. The `configurations` property (`crate::property`) builds one module
//! per class and dtype; `--summary` and `docs/coverage.md` count them.
//!
//! A class name is unique within its op and is the variant parameter of its
//! cases (`configurations::transpose::f32::f32[2,3,4,5]{3,2,1,0}::uniform.perm-3120`).

use super::{ElementType, Opcode};

/// A family of classes of one attribute (or operand structure) of one op.
#[derive(Clone, Copy, Debug)]
pub struct ClassFamily {
    /// The op.
    pub op: Opcode,
    /// What varies (an attribute name or the operand structure).
    pub attribute: &'static str,
    /// Why a compiler gets these classes wrong separately.
    pub reason: &'static str,
    /// Which operand element types the classes apply to.
    pub applies: fn(ElementType) -> bool,
    /// The class names.
    pub classes: &'static [&'static str],
}

impl ClassFamily {
    /// True when the family's classes apply to operands of `dtype`.
    pub fn applies_to(&self, dtype: ElementType) -> bool {
        (self.applies)(dtype)
    }
}

fn any(_: ElementType) -> bool {
    true
}
fn floats(t: ElementType) -> bool {
    t.is_float()
}
fn signed(t: ElementType) -> bool {
    t.is_signed_int()
}
fn unsigned_or_pred(t: ElementType) -> bool {
    t.is_unsigned_int() || t.is_pred()
}
fn integers(t: ElementType) -> bool {
    t.is_integer()
}
fn at_least_16_bits(t: ElementType) -> bool {
    t.bit_width() >= 16
}
fn at_least_32_bits(t: ElementType) -> bool {
    t.bit_width() >= 32
}
fn from_8_to_32_bits(t: ElementType) -> bool {
    (8..=32).contains(&t.bit_width())
}
fn from_8_to_16_bits(t: ElementType) -> bool {
    (8..=16).contains(&t.bit_width())
}

/// The tables below, one family per row.
pub const ATTRIBUTE_CLASSES: &[ClassFamily] = &[
    ClassFamily {
        op: Opcode::Transpose,
        attribute: "permutation",
        reason: "transpose emitters pick a path per permutation class (identity, minor swap, major-only, minor-moving); every permutation up to rank 4",
        applies: any,
        classes: &[
            "perm-0", "perm-01", "perm-10", "perm-012", "perm-021", "perm-102", "perm-120",
            "perm-201", "perm-210", "perm-0123", "perm-0132", "perm-0213", "perm-0231",
            "perm-0312", "perm-0321", "perm-1023", "perm-1032", "perm-1203", "perm-1230",
            "perm-1302", "perm-1320", "perm-2013", "perm-2031", "perm-2103", "perm-2130",
            "perm-2301", "perm-2310", "perm-3012", "perm-3021", "perm-3102", "perm-3120",
            "perm-3201", "perm-3210",
        ],
    },
    ClassFamily {
        op: Opcode::Reverse,
        attribute: "dimensions",
        reason: "every subset of reversed dimensions of a rank-3 and a rank-4 operand (minor, major, several, none)",
        applies: any,
        classes: &[
            "r3-none", "r3-0", "r3-1", "r3-2", "r3-01", "r3-02", "r3-12", "r3-012", "r4-none",
            "r4-0", "r4-1", "r4-2", "r4-3", "r4-01", "r4-02", "r4-03", "r4-12", "r4-13", "r4-23",
            "r4-012", "r4-013", "r4-023", "r4-123", "r4-0123",
        ],
    },
    ClassFamily {
        op: Opcode::Slice,
        attribute: "slice (start, limit, stride)",
        reason: "unit and non-unit strides on the minor and major dimensions, offsets with strides, strides beyond the extent, empty and full slices",
        applies: any,
        classes: &[
            "unit-stride", "stride2-minor", "stride2-major", "stride3-all", "stride-over-extent",
            "offset-stride2", "empty", "full", "r1-stride2", "r3-mixed",
        ],
    },
    ClassFamily {
        op: Opcode::Pad,
        attribute: "padding (low, high, interior)",
        reason: "edge padding, negative low/high (cropping, down to nothing), interior padding alone and with a negative edge",
        applies: any,
        classes: &[
            "low-high", "negative-low", "negative-high", "negative-both", "interior",
            "interior-negative-low", "interior-major-only", "none", "crop-all",
        ],
    },
    ClassFamily {
        op: Opcode::Concatenate,
        attribute: "operand count x dimension",
        reason: "running offsets over 1 to 4 operands of different extents, along every dimension of a rank-3 operand",
        applies: any,
        classes: &[
            "n1-d0", "n1-d1", "n1-d2", "n2-d0", "n2-d1", "n2-d2", "n3-d0", "n3-d1", "n3-d2",
            "n4-d0", "n4-d1", "n4-d2",
        ],
    },
    ClassFamily {
        op: Opcode::Broadcast,
        attribute: "dimensions (operand to output mapping)",
        reason: "every dimension mapping of a rank 0 to 3 operand into rank 3, and of a rank-2 operand into rank 4",
        applies: any,
        classes: &[
            "to3-none", "to3-0", "to3-1", "to3-2", "to3-01", "to3-02", "to3-12", "to3-012",
            "to4-01", "to4-02", "to4-03", "to4-12", "to4-13", "to4-23",
        ],
    },
    ClassFamily {
        op: Opcode::Reshape,
        attribute: "dimension regrouping",
        reason: "flattening, merging the minor dims, splitting the major dim, inserting unit dims, down to a scalar",
        applies: any,
        classes: &["flatten", "merge-minor", "split-major", "unit-dims", "to-scalar"],
    },
    ClassFamily {
        op: Opcode::Iota,
        attribute: "iota_dimension",
        reason: "every dimension of ranks 1 to 4",
        applies: any,
        classes: &[
            "r1-d0", "r2-d0", "r2-d1", "r3-d0", "r3-d1", "r3-d2", "r4-d0", "r4-d1", "r4-d2",
            "r4-d3",
        ],
    },
    ClassFamily {
        op: Opcode::Select,
        attribute: "predicate shape",
        reason: "an array predicate, a scalar predicate over arrays (implicitly broadcast), all scalars",
        applies: any,
        classes: &["array-pred", "scalar-pred", "rank0"],
    },
    ClassFamily {
        op: Opcode::Clamp,
        attribute: "bound shapes",
        reason: "array bounds, scalar bounds (implicitly broadcast), one of each",
        applies: any,
        classes: &["array-bounds", "scalar-bounds", "scalar-min", "scalar-max"],
    },
    ClassFamily {
        op: Opcode::Compare,
        attribute: "direction x type FLOAT/TOTALORDER",
        reason: "every direction under IEEE and total-order comparison (NaN, -0)",
        applies: floats,
        classes: &[
            "eq-float", "ne-float", "lt-float", "le-float", "gt-float", "ge-float",
            "eq-totalorder", "ne-totalorder", "lt-totalorder", "le-totalorder", "gt-totalorder",
            "ge-totalorder",
        ],
    },
    ClassFamily {
        op: Opcode::Compare,
        attribute: "direction x type SIGNED",
        reason: "every direction as a signed comparison",
        applies: signed,
        classes: &[
            "eq-signed", "ne-signed", "lt-signed", "le-signed", "gt-signed", "ge-signed",
        ],
    },
    ClassFamily {
        op: Opcode::Compare,
        attribute: "direction x type UNSIGNED",
        reason: "every direction as an unsigned comparison (unsigned integers and pred)",
        applies: unsigned_or_pred,
        classes: &[
            "eq-unsigned", "ne-unsigned", "lt-unsigned", "le-unsigned", "gt-unsigned",
            "ge-unsigned",
        ],
    },
    ClassFamily {
        op: Opcode::BitcastConvert,
        attribute: "target width (same width)",
        reason: "a same-width bitcast to the other type family (vs_reference covers every same-width pair)",
        applies: any,
        classes: &["same-width"],
    },
    ClassFamily {
        op: Opcode::BitcastConvert,
        attribute: "target width (narrower: a new minor dimension)",
        reason: "a width-changing bitcast splits each element into a new minor dimension, in lane order",
        applies: at_least_16_bits,
        classes: &["split-2"],
    },
    ClassFamily {
        op: Opcode::BitcastConvert,
        attribute: "target width (a quarter)",
        reason: "four lanes per element",
        applies: at_least_32_bits,
        classes: &["split-4"],
    },
    ClassFamily {
        op: Opcode::BitcastConvert,
        attribute: "target width (wider: the minor dimension joined)",
        reason: "a width-changing bitcast joins the minor dimension of 2 elements into one",
        applies: from_8_to_32_bits,
        classes: &["join-2"],
    },
    ClassFamily {
        op: Opcode::BitcastConvert,
        attribute: "target width (four times)",
        reason: "four lanes joined",
        applies: from_8_to_16_bits,
        classes: &["join-4"],
    },
    ClassFamily {
        op: Opcode::ReducePrecision,
        attribute: "exponent_bits x mantissa_bits",
        reason: "exponent and mantissa counts below, at and above the operand type's own (no mantissa, one exponent bit, wider than the type)",
        applies: any,
        classes: &[
            "e1m0", "e2m1", "e3m4", "e4m3", "e5m2", "e5m10", "e8m0", "e8m7", "e8m23", "e11m52",
        ],
    },
    ClassFamily {
        op: Opcode::DynamicSlice,
        attribute: "start index dtype x range",
        reason: "every index type; in-bounds starts and starts clamped from above and (signed) from below; unsigned starts with the high bit set (past the end; negative if misread as signed); the type's minimum and maximum; a zero-size window",
        applies: any,
        classes: &[
            "s8-inbounds", "s8-oob-high", "s8-oob-low", "s16-inbounds", "s16-oob-low",
            "s32-inbounds", "s32-oob-high", "s32-oob-low", "s64-inbounds", "s64-oob-high",
            "u8-inbounds", "u8-oob-high", "u16-oob-high", "u32-inbounds", "u32-oob-high",
            "u64-oob-high", "u8-high-bit", "u16-high-bit", "u32-high-bit", "u64-high-bit",
            "s8-extremes", "s32-extremes", "s64-extremes", "u8-extremes", "u64-extremes",
            "s32-empty-window", "u32-empty-window",
        ],
    },
    ClassFamily {
        op: Opcode::DynamicUpdateSlice,
        attribute: "start index dtype x range",
        reason: "every index type; in-bounds starts and starts clamped from above and (signed) from below; unsigned starts with the high bit set (past the end; negative if misread as signed); the type's minimum and maximum; a zero-size window",
        applies: any,
        classes: &[
            "s8-inbounds", "s8-oob-high", "s8-oob-low", "s16-inbounds", "s16-oob-low",
            "s32-inbounds", "s32-oob-high", "s32-oob-low", "s64-inbounds", "s64-oob-high",
            "u8-inbounds", "u8-oob-high", "u16-oob-high", "u32-inbounds", "u32-oob-high",
            "u64-oob-high", "u8-high-bit", "u16-high-bit", "u32-high-bit", "u64-high-bit",
            "s8-extremes", "s32-extremes", "s64-extremes", "u8-extremes", "u64-extremes",
            "s32-empty-window", "u32-empty-window",
        ],
    },
    ClassFamily {
        op: Opcode::Gather,
        attribute: "dimension numbers",
        reason: "index_vector_dim first, last and implicit; no, one or every collapsed dim; offset dims before the batch; an index into a minor dim; partial windows; operand batching dims",
        applies: any,
        classes: &[
            "ivd-last", "ivd-first", "ivd-implicit", "collapse-none", "collapse-all",
            "start-map-minor", "offset-dims-leading", "window-partial", "batching",
        ],
    },
    ClassFamily {
        op: Opcode::Gather,
        attribute: "indices_are_sorted",
        reason: "a sortedness promise honoured by sorted indices",
        applies: any,
        classes: &["sorted"],
    },
    ClassFamily {
        op: Opcode::Gather,
        attribute: "start index type x value class",
        reason: "start indices of every width and signedness: unsigned with the high bit set (past the end; negative if misread as signed), the type's minimum and maximum, negative (clamped to 0)",
        applies: any,
        classes: &[
            "u8-high-bit", "u16-high-bit", "u32-high-bit", "u64-high-bit", "s8-extremes",
            "s16-extremes", "s64-extremes", "u8-extremes", "u64-extremes", "s32-oob-low",
        ],
    },
    ClassFamily {
        op: Opcode::Scatter,
        attribute: "combiner",
        reason: "every combiner (add, multiply, minimum, maximum, overwrite) over duplicate indices (overwrite with unique ones)",
        applies: any,
        classes: &[
            "combine-add", "combine-multiply", "combine-minimum", "combine-maximum",
            "combine-overwrite",
        ],
    },
    ClassFamily {
        op: Opcode::Scatter,
        attribute: "dimension numbers and flags",
        reason: "index_vector_dim implicit, a minor scattered dim, no inserted window dims, operand batching dims, sorted and unique indices",
        applies: any,
        classes: &[
            "ivd-implicit", "scatter-minor", "window-full", "batching", "sorted-unique",
        ],
    },
    ClassFamily {
        op: Opcode::Reduce,
        attribute: "dimensions",
        reason: "every subset of the dimensions of a rank-3 operand (none, major, minor, several, all)",
        applies: any,
        classes: &[
            "add-none", "add-0", "add-1", "add-2", "add-01", "add-02", "add-12", "add-012",
        ],
    },
    ClassFamily {
        op: Opcode::Reduce,
        attribute: "reducer",
        reason: "each reducer (multiply over two elements, minimum and maximum with a non-identity init) and a variadic reduce of two operands",
        applies: any,
        classes: &["multiply-0", "minimum-02", "maximum-0", "maximum-012", "variadic-2"],
    },
    ClassFamily {
        op: Opcode::Reduce,
        attribute: "reducer (bitwise)",
        reason: "and/or reducers on integers",
        applies: integers,
        classes: &["and-1", "or-02"],
    },
    ClassFamily {
        op: Opcode::ReduceWindow,
        attribute: "window",
        reason: "windows along one or both dimensions and the whole extent, strides, low, asymmetric and two-sided padding, base and window dilation",
        applies: any,
        classes: &[
            "win-d0", "win-d1", "win-both", "win-full", "stride2", "pad-low", "pad-asym",
            "pad-both", "base-dilation", "window-dilation",
        ],
    },
    ClassFamily {
        op: Opcode::ReduceWindow,
        attribute: "reducer",
        reason: "each reducer (multiply over windows of two), and a variadic reduce-window of two operands",
        applies: any,
        classes: &["maximum", "minimum", "multiply", "variadic-2"],
    },
    ClassFamily {
        op: Opcode::Sort,
        attribute: "operands x dimension",
        reason: "1 to 3 operands (the values carried by the keys' permutation), along every dimension of rank 2 and the middle of rank 3",
        applies: any,
        classes: &["n1-d0", "n1-d1", "n2-d0", "n2-d1", "n3-d0", "n3-d1", "r3-d1"],
    },
    ClassFamily {
        op: Opcode::Sort,
        attribute: "is_stable x comparator",
        reason: "an unstable sort, a descending comparator, a comparator on the carried operand, a two-key (lexicographic) comparator",
        applies: any,
        classes: &["unstable-n2", "cmp-gt", "cmp-on-values", "cmp-two-keys"],
    },
    ClassFamily {
        op: Opcode::Dot,
        attribute: "contracting dimensions",
        reason: "the contracting dimension in every position of rank 1 and 2 operands, two contracting dims (in both orders), none (an outer product); each also with square operands (every dim 3), where a kernel can mistake one dim for another",
        applies: any,
        classes: &[
            "vv", "mv", "vm", "mk-kn", "km-kn", "mk-nk", "km-nk", "two-contract",
            "two-contract-swapped", "outer", "no-contract-r2", "mv-square", "vm-square",
            "mk-kn-square", "km-kn-square", "mk-nk-square", "km-nk-square",
            "two-contract-square", "two-contract-swapped-square", "no-contract-r2-square",
        ],
    },
    ClassFamily {
        op: Opcode::Dot,
        attribute: "batch dimensions",
        reason: "the batch dimension first, in the middle, last, in different positions on the two sides, two batch dims, and batch only; each also with square operands (every dim 3)",
        applies: any,
        classes: &[
            "batch-first", "batch-middle", "batch-last", "batch-mixed", "batch-two",
            "batch-only", "batch-first-square", "batch-middle-square", "batch-last-square",
            "batch-mixed-square", "batch-two-square", "batch-only-square",
        ],
    },
    ClassFamily {
        op: Opcode::Convolution,
        attribute: "dim_labels",
        reason: "input, kernel and output dimension orders other than b01f_01io->b01f; each with a square kernel (2 input, 2 output features) and a non-square one (`-o3`: 3 output features)",
        applies: any,
        classes: &[
            "b01f", "bf01", "f01b", "kernel-oi01", "kernel-i01o", "output-bf01", "b01f-o3",
            "bf01-o3", "f01b-o3", "kernel-oi01-o3", "kernel-i01o-o3", "output-bf01-o3",
        ],
    },
    ClassFamily {
        op: Opcode::Convolution,
        attribute: "groups",
        reason: "feature groups (2, and depthwise) and batch groups",
        applies: any,
        classes: &["feature-groups-2", "depthwise", "batch-groups-2"],
    },
    ClassFamily {
        op: Opcode::Convolution,
        attribute: "window",
        reason: "strides, negative and asymmetric padding, lhs and rhs dilation, window reversal, one spatial dim and none",
        applies: any,
        classes: &[
            "stride-2x1", "pad-negative", "pad-asym", "lhs-dilation", "rhs-dilation", "reversal",
            "spatial-1", "spatial-0",
        ],
    },
    ClassFamily {
        op: Opcode::While,
        attribute: "loop structure",
        reason: "a counted loop, a loop that never runs its body, a loop carrying state it does not change",
        applies: any,
        classes: &["counted", "zero-trip", "carry-3"],
    },
    ClassFamily {
        op: Opcode::Conditional,
        attribute: "branch structure",
        reason: "a pred with two branches, an index with three, and an out-of-range index (the last branch)",
        applies: any,
        classes: &["pred", "index-3", "index-out-of-range"],
    },
    ClassFamily {
        op: Opcode::Call,
        attribute: "call structure",
        reason: "one call, and a call of a computation that calls another",
        applies: any,
        classes: &["single", "nested"],
    },
    ClassFamily {
        op: Opcode::Map,
        attribute: "mapped computation",
        reason: "a unary and a binary mapped computation, and a map over a scalar",
        applies: any,
        classes: &["unary", "binary", "rank0"],
    },
    ClassFamily {
        op: Opcode::Tuple,
        attribute: "tuple structure",
        reason: "a tuple root of several shapes, a nested tuple taken apart by get-tuple-element",
        applies: any,
        classes: &["flat", "nested-gte"],
    },
];

/// The families of `op`, in table order.
pub fn class_families(op: Opcode) -> impl Iterator<Item = &'static ClassFamily> {
    ATTRIBUTE_CLASSES.iter().filter(move |f| f.op == op)
}

/// The family a class of `op` belongs to.
///
/// ```
/// use xla_props::hlo::{class_family, Opcode};
/// let f = class_family(Opcode::Transpose, "perm-3120").unwrap();
/// assert_eq!(f.attribute, "permutation");
/// assert!(class_family(Opcode::Transpose, "perm-9").is_none());
/// ```
pub fn class_family(op: Opcode, class: &str) -> Option<&'static ClassFamily> {
    class_families(op).find(|f| f.classes.contains(&class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_are_unique_per_op_and_usable_in_case_names() {
        for &op in Opcode::ALL {
            let mut seen = std::collections::HashSet::new();
            for f in class_families(op) {
                assert!(!f.reason.is_empty() && !f.attribute.is_empty());
                for c in f.classes {
                    assert!(seen.insert(*c), "{op}: duplicate class {c}");
                    assert!(
                        c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-'),
                        "{op}: {c}"
                    );
                }
            }
            if op.is_parse_only() {
                assert!(seen.is_empty(), "{op} is not evaluated");
            }
        }
    }
}
