//! The opcode table: every HLO opcode this tool knows, declared once.
//!
//! Parser, printer, verifier, evaluators and the case catalogue all derive
//! from this table; adding an op starts here.

use std::fmt;
use std::str::FromStr;

/// How many operands an opcode takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Fixed(usize),
    /// At least this many.
    AtLeast(usize),
}

impl Arity {
    /// True when `n` operands are acceptable.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Fixed(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        }
    }
}

/// The family an opcode belongs to (used for grouping cases and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// parameter, constant, iota, tuple, get-tuple-element, copy, bitcast.
    Structure,
    /// Elementwise ops of one operand.
    ElementwiseUnary,
    /// Elementwise ops of two operands.
    ElementwiseBinary,
    /// compare, select, clamp.
    Selection,
    /// convert, bitcast-convert, reduce-precision.
    Conversion,
    /// broadcast, reshape, transpose, slices, concatenate, pad, reverse.
    ShapeOp,
    /// gather, scatter, dynamic slices.
    Indexing,
    /// reduce, reduce-window, select-and-scatter, sort, topk, map.
    Reduction,
    /// dot, convolution.
    Contraction,
    /// fusion, call, while, conditional.
    Control,
    /// Ops that this tool parses and prints but does not evaluate.
    ParseOnly,
}

impl Category {
    /// A short lowercase name for reports (`elementwise-unary`).
    pub fn name(self) -> &'static str {
        match self {
            Category::Structure => "structure",
            Category::ElementwiseUnary => "elementwise-unary",
            Category::ElementwiseBinary => "elementwise-binary",
            Category::Selection => "selection",
            Category::Conversion => "conversion",
            Category::ShapeOp => "shape",
            Category::Indexing => "indexing",
            Category::Reduction => "reduction",
            Category::Contraction => "contraction",
            Category::Control => "control",
            Category::ParseOnly => "parse-only",
        }
    }
}

macro_rules! opcodes {
    ($($variant:ident => $name:literal, $arity:expr, $cat:ident, [$($attr:literal),*];)*) => {
        /// An HLO opcode.
        ///
        /// ```
        /// use xla_props::hlo::{Category, Opcode};
        /// let op: Opcode = "round-nearest-afz".parse().unwrap();
        /// assert_eq!(op, Opcode::RoundNearestAfz);
        /// assert_eq!(op.category(), Category::ElementwiseUnary);
        /// assert_eq!(op.to_string(), "round-nearest-afz");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode {
            $(#[doc = $name] $variant,)*
        }

        impl Opcode {
            /// Every opcode in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The HLO text name.
            pub const fn name(self) -> &'static str {
                match self { $(Opcode::$variant => $name,)* }
            }
            /// How many operands it takes.
            pub const fn arity(self) -> Arity {
                match self { $(Opcode::$variant => $arity,)* }
            }
            /// Its family.
            pub const fn category(self) -> Category {
                match self { $(Opcode::$variant => Category::$cat,)* }
            }
            /// The attributes it requires or accepts (besides the generic ones:
            /// metadata, sharding, backend_config, frontend_attributes, ...).
            pub const fn attributes(self) -> &'static [&'static str] {
                match self { $(Opcode::$variant => &[$($attr),*],)* }
            }
        }

        impl FromStr for Opcode {
            type Err = UnknownOpcode;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok(Opcode::$variant),)*
                    _ => Err(UnknownOpcode(s.to_string())),
                }
            }
        }
    };
}

use Arity::{AtLeast, Fixed};

opcodes! {
    // structure
    Parameter => "parameter", Fixed(0), Structure, [];
    Constant => "constant", Fixed(0), Structure, [];
    Iota => "iota", Fixed(0), Structure, ["iota_dimension"];
    Tuple => "tuple", AtLeast(0), Structure, [];
    GetTupleElement => "get-tuple-element", Fixed(1), Structure, ["index"];
    Copy => "copy", Fixed(1), Structure, [];
    Bitcast => "bitcast", Fixed(1), Structure, [];
    // elementwise unary
    Abs => "abs", Fixed(1), ElementwiseUnary, [];
    Negate => "negate", Fixed(1), ElementwiseUnary, [];
    Sign => "sign", Fixed(1), ElementwiseUnary, [];
    Not => "not", Fixed(1), ElementwiseUnary, [];
    Ceil => "ceil", Fixed(1), ElementwiseUnary, [];
    Floor => "floor", Fixed(1), ElementwiseUnary, [];
    RoundNearestAfz => "round-nearest-afz", Fixed(1), ElementwiseUnary, [];
    RoundNearestEven => "round-nearest-even", Fixed(1), ElementwiseUnary, [];
    Exponential => "exponential", Fixed(1), ElementwiseUnary, [];
    ExponentialMinusOne => "exponential-minus-one", Fixed(1), ElementwiseUnary, [];
    Log => "log", Fixed(1), ElementwiseUnary, [];
    LogPlusOne => "log-plus-one", Fixed(1), ElementwiseUnary, [];
    Logistic => "logistic", Fixed(1), ElementwiseUnary, [];
    Sine => "sine", Fixed(1), ElementwiseUnary, [];
    Cosine => "cosine", Fixed(1), ElementwiseUnary, [];
    Tan => "tan", Fixed(1), ElementwiseUnary, [];
    Tanh => "tanh", Fixed(1), ElementwiseUnary, [];
    Sqrt => "sqrt", Fixed(1), ElementwiseUnary, [];
    Rsqrt => "rsqrt", Fixed(1), ElementwiseUnary, [];
    Cbrt => "cbrt", Fixed(1), ElementwiseUnary, [];
    Erf => "erf", Fixed(1), ElementwiseUnary, [];
    IsFinite => "is-finite", Fixed(1), ElementwiseUnary, [];
    Popcnt => "popcnt", Fixed(1), ElementwiseUnary, [];
    CountLeadingZeros => "count-leading-zeros", Fixed(1), ElementwiseUnary, [];
    // elementwise binary
    Add => "add", Fixed(2), ElementwiseBinary, [];
    Subtract => "subtract", Fixed(2), ElementwiseBinary, [];
    Multiply => "multiply", Fixed(2), ElementwiseBinary, [];
    Divide => "divide", Fixed(2), ElementwiseBinary, [];
    Remainder => "remainder", Fixed(2), ElementwiseBinary, [];
    Power => "power", Fixed(2), ElementwiseBinary, [];
    Maximum => "maximum", Fixed(2), ElementwiseBinary, [];
    Minimum => "minimum", Fixed(2), ElementwiseBinary, [];
    Atan2 => "atan2", Fixed(2), ElementwiseBinary, [];
    And => "and", Fixed(2), ElementwiseBinary, [];
    Or => "or", Fixed(2), ElementwiseBinary, [];
    Xor => "xor", Fixed(2), ElementwiseBinary, [];
    ShiftLeft => "shift-left", Fixed(2), ElementwiseBinary, [];
    ShiftRightArithmetic => "shift-right-arithmetic", Fixed(2), ElementwiseBinary, [];
    ShiftRightLogical => "shift-right-logical", Fixed(2), ElementwiseBinary, [];
    // selection
    Compare => "compare", Fixed(2), Selection, ["direction", "type", "order"];
    Select => "select", Fixed(3), Selection, [];
    Clamp => "clamp", Fixed(3), Selection, [];
    // conversion
    Convert => "convert", Fixed(1), Conversion, [];
    BitcastConvert => "bitcast-convert", Fixed(1), Conversion, [];
    ReducePrecision => "reduce-precision", Fixed(1), Conversion, ["exponent_bits", "mantissa_bits"];
    // shape ops
    Broadcast => "broadcast", Fixed(1), ShapeOp, ["dimensions"];
    Reshape => "reshape", Fixed(1), ShapeOp, [];
    Transpose => "transpose", Fixed(1), ShapeOp, ["dimensions"];
    Slice => "slice", Fixed(1), ShapeOp, ["slice"];
    Concatenate => "concatenate", AtLeast(1), ShapeOp, ["dimensions"];
    Pad => "pad", Fixed(2), ShapeOp, ["padding"];
    Reverse => "reverse", Fixed(1), ShapeOp, ["dimensions"];
    // indexing
    DynamicSlice => "dynamic-slice", AtLeast(1), Indexing, ["dynamic_slice_sizes"];
    DynamicUpdateSlice => "dynamic-update-slice", AtLeast(2), Indexing, [];
    Gather => "gather", Fixed(2), Indexing, ["offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim", "slice_sizes", "operand_batching_dims", "start_indices_batching_dims", "indices_are_sorted"];
    Scatter => "scatter", AtLeast(3), Indexing, ["update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "index_vector_dim", "input_batching_dims", "scatter_indices_batching_dims", "indices_are_sorted", "unique_indices", "to_apply"];
    // reductions
    Reduce => "reduce", AtLeast(2), Reduction, ["dimensions", "to_apply"];
    ReduceWindow => "reduce-window", AtLeast(2), Reduction, ["window", "to_apply"];
    SelectAndScatter => "select-and-scatter", Fixed(3), Reduction, ["window", "select", "scatter"];
    Sort => "sort", AtLeast(1), Reduction, ["dimensions", "is_stable", "to_apply"];
    Map => "map", AtLeast(1), Reduction, ["dimensions", "to_apply"];
    // contractions
    Dot => "dot", Fixed(2), Contraction, ["lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims", "operand_precision", "algorithm"];
    Convolution => "convolution", Fixed(2), Contraction, ["window", "dim_labels", "feature_group_count", "batch_group_count", "operand_precision"];
    // control
    Fusion => "fusion", AtLeast(0), Control, ["kind", "calls"];
    Call => "call", AtLeast(0), Control, ["to_apply"];
    While => "while", Fixed(1), Control, ["condition", "body"];
    Conditional => "conditional", AtLeast(1), Control, ["branch_computations", "true_computation", "false_computation"];
    // parse-only
    CustomCall => "custom-call", AtLeast(0), ParseOnly, ["custom_call_target", "api_version", "called_computations", "operand_layout_constraints", "custom_call_has_side_effect", "output_to_operand_aliasing", "schedule"];
    RngBitGenerator => "rng-bit-generator", Fixed(1), ParseOnly, ["algorithm"];
    Rng => "rng", AtLeast(2), ParseOnly, ["distribution"];
    AllReduce => "all-reduce", AtLeast(1), ParseOnly, ["replica_groups", "to_apply", "channel_id", "use_global_device_ids"];
    AllReduceStart => "all-reduce-start", AtLeast(1), ParseOnly, ["replica_groups", "to_apply", "channel_id", "use_global_device_ids"];
    AllReduceDone => "all-reduce-done", Fixed(1), ParseOnly, [];
    AllGather => "all-gather", AtLeast(1), ParseOnly, ["replica_groups", "dimensions", "channel_id", "use_global_device_ids"];
    AllGatherStart => "all-gather-start", AtLeast(1), ParseOnly, ["replica_groups", "dimensions", "channel_id", "use_global_device_ids"];
    AllGatherDone => "all-gather-done", Fixed(1), ParseOnly, [];
    ReduceScatter => "reduce-scatter", AtLeast(1), ParseOnly, ["replica_groups", "dimensions", "to_apply", "channel_id", "use_global_device_ids"];
    AllToAll => "all-to-all", AtLeast(1), ParseOnly, ["replica_groups", "dimensions", "channel_id"];
    CollectivePermute => "collective-permute", AtLeast(1), ParseOnly, ["source_target_pairs", "channel_id"];
    CollectivePermuteStart => "collective-permute-start", AtLeast(1), ParseOnly, ["source_target_pairs", "channel_id"];
    CollectivePermuteDone => "collective-permute-done", Fixed(1), ParseOnly, [];
    CollectiveBroadcast => "collective-broadcast", AtLeast(1), ParseOnly, ["replica_groups", "channel_id", "has_dynamic_root"];
    CollectiveReduce => "collective-reduce", AtLeast(1), ParseOnly, ["replica_groups", "to_apply", "channel_id", "use_global_device_ids"];
    ReplicaId => "replica-id", Fixed(0), ParseOnly, [];
    PartitionId => "partition-id", Fixed(0), ParseOnly, [];
    AfterAll => "after-all", AtLeast(0), ParseOnly, [];
    AddDependency => "add-dependency", Fixed(2), ParseOnly, [];
    OptimizationBarrier => "opt-barrier", Fixed(1), ParseOnly, [];
    Domain => "domain", Fixed(1), ParseOnly, ["domain"];
    Send => "send", Fixed(2), ParseOnly, ["channel_id", "is_host_transfer"];
    SendDone => "send-done", Fixed(1), ParseOnly, ["channel_id", "is_host_transfer"];
    Recv => "recv", Fixed(1), ParseOnly, ["channel_id", "is_host_transfer"];
    RecvDone => "recv-done", Fixed(1), ParseOnly, ["channel_id", "is_host_transfer"];
    Infeed => "infeed", Fixed(1), ParseOnly, ["infeed_config"];
    Outfeed => "outfeed", Fixed(2), ParseOnly, ["outfeed_shape", "outfeed_config"];
    CopyStart => "copy-start", Fixed(1), ParseOnly, ["cross_program_prefetch_index"];
    CopyDone => "copy-done", Fixed(1), ParseOnly, [];
    AsyncStart => "async-start", AtLeast(0), ParseOnly, ["calls", "async_execution_thread"];
    AsyncUpdate => "async-update", Fixed(1), ParseOnly, ["calls"];
    AsyncDone => "async-done", Fixed(1), ParseOnly, ["calls"];
    Real => "real", Fixed(1), ParseOnly, [];
    Imag => "imag", Fixed(1), ParseOnly, [];
    Complex => "complex", Fixed(2), ParseOnly, [];
    Cholesky => "cholesky", Fixed(1), ParseOnly, ["lower"];
    TriangularSolve => "triangular-solve", Fixed(2), ParseOnly, ["left_side", "lower", "unit_diagonal", "transpose_a"];
    Fft => "fft", Fixed(1), ParseOnly, ["fft_type", "fft_length"];
    TopK => "topk", Fixed(1), Reduction, ["k", "largest", "is_stable"];
    StochasticConvert => "stochastic-convert", Fixed(2), ParseOnly, [];
    BatchNormTraining => "batch-norm-training", Fixed(3), ParseOnly, ["epsilon", "feature_index"];
    BatchNormInference => "batch-norm-inference", Fixed(5), ParseOnly, ["epsilon", "feature_index"];
    BatchNormGrad => "batch-norm-grad", Fixed(5), ParseOnly, ["epsilon", "feature_index"];
    GetDimensionSize => "get-dimension-size", Fixed(1), ParseOnly, ["dimensions"];
    SetDimensionSize => "set-dimension-size", Fixed(2), ParseOnly, ["dimensions"];
    DynamicReshape => "dynamic-reshape", AtLeast(1), ParseOnly, [];
}

/// The error for a name that is not in the opcode table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown opcode `{0}`")]
pub struct UnknownOpcode(pub String);

impl Opcode {
    /// True for ops the evaluators do not run (they yield `Unsupported`).
    pub fn is_parse_only(self) -> bool {
        self.category() == Category::ParseOnly
    }
    /// True for elementwise ops (unary, binary, select, clamp, compare, convert, reduce-precision).
    pub fn is_elementwise(self) -> bool {
        matches!(
            self.category(),
            Category::ElementwiseUnary | Category::ElementwiseBinary
        ) || matches!(
            self,
            Opcode::Compare
                | Opcode::Select
                | Opcode::Clamp
                | Opcode::Convert
                | Opcode::ReducePrecision
        )
    }
    /// True for the unary transcendental functions (computed with libm-style
    /// approximations; no standard requires them correctly rounded).
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            Opcode::Exponential
                | Opcode::ExponentialMinusOne
                | Opcode::Log
                | Opcode::LogPlusOne
                | Opcode::Logistic
                | Opcode::Sine
                | Opcode::Cosine
                | Opcode::Tan
                | Opcode::Tanh
                | Opcode::Cbrt
                | Opcode::Erf
        )
    }
    /// True for the unary ops whose real function is non-decreasing on its
    /// whole domain, so that the image of an interval is spanned by the
    /// images of its ends: the transcendentals but the periodic ones, sqrt,
    /// the roundings, sign and reduce-precision.
    pub fn is_nondecreasing_unary(self) -> bool {
        let periodic = matches!(self, Opcode::Sine | Opcode::Cosine | Opcode::Tan);
        (self.is_transcendental() && !periodic)
            || matches!(
                self,
                Opcode::Sqrt
                    | Opcode::Floor
                    | Opcode::Ceil
                    | Opcode::RoundNearestAfz
                    | Opcode::RoundNearestEven
                    | Opcode::Sign
                    | Opcode::ReducePrecision
            )
    }
    /// True for the ops whose every result element is one of their operands'
    /// elements, read at a place fixed by the attributes alone: the shape ops,
    /// copy and bitcast.
    pub fn copies_elements(self) -> bool {
        self.category() == Category::ShapeOp || matches!(self, Opcode::Copy | Opcode::Bitcast)
    }
    /// True for the data-movement ops: the shape ops and the indexing ops
    /// that only read (dynamic-slice, gather) or overwrite
    /// (dynamic-update-slice) elements; no arithmetic on any element.
    pub fn moves_data(self) -> bool {
        self.category() == Category::ShapeOp
            || matches!(
                self,
                Opcode::DynamicSlice | Opcode::DynamicUpdateSlice | Opcode::Gather
            )
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Attributes XLA defines for every instruction that the IR does not model:
/// read and printed verbatim (`Attrs::other`). The one list; together with
/// an opcode's own [`Opcode::attributes`] and [`XLA_OP_ATTRIBUTES`] it is
/// everything the HLO text reader accepts (any other attribute is a located
/// error, as in XLA's parser).
pub const XLA_GENERIC_ATTRIBUTES: &[&str] = &[
    "metadata",
    "sharding",
    "backend_config",
    "frontend_attributes",
    "statistics_viz",
    "control-predecessors",
    "original_value",
    "result_accuracy",
];

/// Attributes XLA defines for particular opcodes that the opcode table does
/// not list (the IR does not model them): read and printed verbatim.
pub const XLA_OP_ATTRIBUTES: &[(Opcode, &[&str])] = &[
    (Opcode::Parameter, &["parameter_replication"]),
    (Opcode::Fusion, &["output_to_operand_aliasing"]),
    (Opcode::Dot, &["sparsity"]),
    (
        Opcode::CustomCall,
        &[
            "window",
            "dim_labels",
            "feature_group_count",
            "batch_group_count",
            "operand_precision",
            "literal",
            "padding_type",
            "custom_call_schedule",
        ],
    ),
    (Opcode::AllReduce, &["constrain_layout"]),
    (Opcode::AllReduceStart, &["constrain_layout"]),
    (Opcode::AllGather, &["constrain_layout"]),
    (Opcode::AllGatherStart, &["constrain_layout"]),
    (Opcode::ReduceScatter, &["constrain_layout"]),
    (Opcode::AllToAll, &["constrain_layout", "split_dimension"]),
    (Opcode::CollectivePermute, &["slice_sizes"]),
    (Opcode::CollectivePermuteStart, &["slice_sizes"]),
    (Opcode::CopyStart, &["is_cross_program_prefetch"]),
    (Opcode::AsyncStart, &["async_group_id"]),
];

/// Whether HLO text may give `attr` on an instruction of `op` (typed or verbatim).
pub fn accepts_attribute(op: Opcode, attr: &str) -> bool {
    op.attributes().contains(&attr)
        || XLA_GENERIC_ATTRIBUTES.contains(&attr)
        || XLA_OP_ATTRIBUTES
            .iter()
            .any(|(o, attrs)| *o == op && attrs.contains(&attr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &op in Opcode::ALL {
            assert!(seen.insert(op.name()), "duplicate {}", op.name());
            assert_eq!(op.name().parse::<Opcode>().unwrap(), op);
        }
        assert!("frobnicate".parse::<Opcode>().is_err());
    }
}
