//! The in-memory HLO: modules of computations of instructions.
//!
//! Operands refer to instructions of the same computation by [`InstrId`]
//! (an index into [`Computation::instructions`]); called computations are
//! referred to by [`CompId`] (an index into [`Module::computations`]).

use super::opcode::Opcode;
use super::shape::Shape;

/// An instruction's index in its computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

impl InstrId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A computation's index in its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompId(pub u32);

impl CompId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One dimension of a `slice={[start:limit:stride], ...}` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceDim {
    /// Inclusive start.
    pub start: i64,
    /// Exclusive limit.
    pub limit: i64,
    /// Stride (1 when omitted).
    pub stride: i64,
}

/// One dimension of a `padding=lo_hi_interior` attribute (values may be negative, except interior).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PadDim {
    /// Padding before the first element.
    pub low: i64,
    /// Padding after the last element.
    pub high: i64,
    /// Padding between elements.
    pub interior: i64,
}

/// One dimension of a `window={size=.. stride=.. pad=.. lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WindowDim {
    /// Window size.
    pub size: i64,
    /// Stride (default 1).
    pub stride: i64,
    /// Low padding (default 0).
    pub pad_low: i64,
    /// High padding (default 0).
    pub pad_high: i64,
    /// Base (lhs) dilation (default 1).
    pub base_dilation: i64,
    /// Window (rhs) dilation (default 1).
    pub window_dilation: i64,
    /// Window reversal (default false).
    pub reversal: bool,
}

impl WindowDim {
    /// A window dimension of `size` with all defaults.
    pub fn new(size: i64) -> WindowDim {
        WindowDim {
            size,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        }
    }
}

/// Convolution dimension numbers, from `dim_labels=b01f_01io->b01f`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvDims {
    /// Input batch dimension.
    pub input_batch: i64,
    /// Input feature dimension.
    pub input_feature: i64,
    /// Input spatial dimensions, in spatial order (0, 1, ...).
    pub input_spatial: Vec<i64>,
    /// Kernel input-feature dimension.
    pub kernel_input_feature: i64,
    /// Kernel output-feature dimension.
    pub kernel_output_feature: i64,
    /// Kernel spatial dimensions.
    pub kernel_spatial: Vec<i64>,
    /// Output batch dimension.
    pub output_batch: i64,
    /// Output feature dimension.
    pub output_feature: i64,
    /// Output spatial dimensions.
    pub output_spatial: Vec<i64>,
}

impl ConvDims {
    /// Dimension numbers from `(batch, feature, spatial)` of the input and
    /// output and `(input feature, output feature, spatial)` of the kernel.
    pub fn from_labels(
        input: (i64, i64, &[i64]),
        kernel: (i64, i64, &[i64]),
        output: (i64, i64, &[i64]),
    ) -> ConvDims {
        ConvDims {
            input_batch: input.0,
            input_feature: input.1,
            input_spatial: input.2.to_vec(),
            kernel_input_feature: kernel.0,
            kernel_output_feature: kernel.1,
            kernel_spatial: kernel.2.to_vec(),
            output_batch: output.0,
            output_feature: output.1,
            output_spatial: output.2.to_vec(),
        }
    }

    /// Feature-last dimension numbers with `spatial` spatial dimensions:
    /// `b0f_0io->b0f` for 1, `b01f_01io->b01f` for 2, `bf_io->bf` for 0.
    pub fn feature_last(spatial: i64) -> ConvDims {
        let f = spatial + 1;
        let dims: Vec<i64> = (1..=spatial).collect();
        let kernel: Vec<i64> = (0..spatial).collect();
        ConvDims::from_labels((0, f, &dims), (spatial, f, &kernel), (0, f, &dims))
    }
}

/// Dot dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    /// `lhs_batch_dims`.
    pub lhs_batch: Vec<i64>,
    /// `lhs_contracting_dims`.
    pub lhs_contracting: Vec<i64>,
    /// `rhs_batch_dims`.
    pub rhs_batch: Vec<i64>,
    /// `rhs_contracting_dims`.
    pub rhs_contracting: Vec<i64>,
}

/// Gather dimension numbers plus slice sizes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct GatherDims {
    /// `offset_dims`.
    pub offset_dims: Vec<i64>,
    /// `collapsed_slice_dims`.
    pub collapsed_slice_dims: Vec<i64>,
    /// `start_index_map`.
    pub start_index_map: Vec<i64>,
    /// `index_vector_dim`.
    pub index_vector_dim: i64,
    /// `operand_batching_dims`.
    pub operand_batching_dims: Vec<i64>,
    /// `start_indices_batching_dims`.
    pub start_indices_batching_dims: Vec<i64>,
    /// `slice_sizes`.
    pub slice_sizes: Vec<i64>,
}

/// Scatter dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScatterDims {
    /// `update_window_dims`.
    pub update_window_dims: Vec<i64>,
    /// `inserted_window_dims`.
    pub inserted_window_dims: Vec<i64>,
    /// `scatter_dims_to_operand_dims`.
    pub scatter_dims_to_operand_dims: Vec<i64>,
    /// `index_vector_dim`.
    pub index_vector_dim: i64,
    /// `input_batching_dims`.
    pub input_batching_dims: Vec<i64>,
    /// `scatter_indices_batching_dims`.
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `direction=` of a compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComparisonDirection {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `LT`
    Lt,
    /// `LE`
    Le,
    /// `GT`
    Gt,
    /// `GE`
    Ge,
}

impl ComparisonDirection {
    /// All six directions.
    pub const ALL: [ComparisonDirection; 6] = [
        ComparisonDirection::Eq,
        ComparisonDirection::Ne,
        ComparisonDirection::Lt,
        ComparisonDirection::Le,
        ComparisonDirection::Gt,
        ComparisonDirection::Ge,
    ];
    /// The HLO text (`EQ`).
    pub fn name(self) -> &'static str {
        match self {
            ComparisonDirection::Eq => "EQ",
            ComparisonDirection::Ne => "NE",
            ComparisonDirection::Lt => "LT",
            ComparisonDirection::Le => "LE",
            ComparisonDirection::Gt => "GT",
            ComparisonDirection::Ge => "GE",
        }
    }
    /// Parses `EQ` etc.
    pub fn from_name(s: &str) -> Option<ComparisonDirection> {
        Self::ALL.into_iter().find(|d| d.name() == s)
    }
    /// Whether `a DIR b` holds in `O`'s own (partial) order: a NaN makes
    /// every direction but `NE` false.
    ///
    /// ```
    /// use xla_props::hlo::ComparisonDirection as D;
    /// assert!(D::Le.holds(1.0, 1.0) && !D::Lt.holds(1.0, 1.0));
    /// assert!(D::Ne.holds(f64::NAN, f64::NAN) && !D::Eq.holds(f64::NAN, f64::NAN));
    /// ```
    pub fn holds<O: PartialOrd>(self, a: O, b: O) -> bool {
        match self {
            ComparisonDirection::Eq => a == b,
            ComparisonDirection::Ne => a != b,
            ComparisonDirection::Lt => a < b,
            ComparisonDirection::Le => a <= b,
            ComparisonDirection::Gt => a > b,
            ComparisonDirection::Ge => a >= b,
        }
    }
}

/// `type=` of a compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComparisonType {
    /// `FLOAT`: IEEE comparison (NaN unordered).
    Float,
    /// `TOTALORDER`: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
    TotalOrder,
    /// `SIGNED`.
    Signed,
    /// `UNSIGNED`.
    Unsigned,
}

impl ComparisonType {
    /// All four types.
    pub const ALL: [ComparisonType; 4] = [
        ComparisonType::Float,
        ComparisonType::TotalOrder,
        ComparisonType::Signed,
        ComparisonType::Unsigned,
    ];
    /// The HLO text (`TOTALORDER`).
    pub fn name(self) -> &'static str {
        match self {
            ComparisonType::Float => "FLOAT",
            ComparisonType::TotalOrder => "TOTALORDER",
            ComparisonType::Signed => "SIGNED",
            ComparisonType::Unsigned => "UNSIGNED",
        }
    }
    /// Parses `FLOAT` etc.
    pub fn from_name(s: &str) -> Option<ComparisonType> {
        Self::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// `kind=` of a fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FusionKind {
    /// `kLoop`
    Loop,
    /// `kInput`
    Input,
    /// `kOutput`
    Output,
    /// `kCustom`
    Custom,
}

impl FusionKind {
    /// The HLO text (`kLoop`).
    pub fn name(self) -> &'static str {
        match self {
            FusionKind::Loop => "kLoop",
            FusionKind::Input => "kInput",
            FusionKind::Output => "kOutput",
            FusionKind::Custom => "kCustom",
        }
    }
    /// Parses `kLoop` etc.
    pub fn from_name(s: &str) -> Option<FusionKind> {
        [
            FusionKind::Loop,
            FusionKind::Input,
            FusionKind::Output,
            FusionKind::Custom,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// `fft_type=` of fft.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftType {
    /// `FFT`: complex to complex, forward.
    Fft,
    /// `IFFT`: complex to complex, inverse.
    Ifft,
    /// `RFFT`: real to complex, forward.
    Rfft,
    /// `IRFFT`: complex to real, inverse.
    Irfft,
}

impl FftType {
    /// All four types.
    pub const ALL: [FftType; 4] = [FftType::Fft, FftType::Ifft, FftType::Rfft, FftType::Irfft];
    /// The HLO text (`RFFT`), which is also StableHLO's (`#stablehlo<fft_type RFFT>`).
    pub fn name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }
    /// Parses `FFT` etc.
    pub fn from_name(s: &str) -> Option<FftType> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// `transpose_a=` of triangular-solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransposeA {
    /// `NO_TRANSPOSE`: solve with `a`.
    NoTranspose,
    /// `TRANSPOSE`: solve with the transpose of `a`.
    Transpose,
    /// `ADJOINT`: solve with the conjugate transpose of `a`.
    Adjoint,
}

impl TransposeA {
    /// All three.
    pub const ALL: [TransposeA; 3] = [
        TransposeA::NoTranspose,
        TransposeA::Transpose,
        TransposeA::Adjoint,
    ];
    /// The HLO text (`NO_TRANSPOSE`), which is also StableHLO's (`#stablehlo<transpose NO_TRANSPOSE>`).
    pub fn name(self) -> &'static str {
        match self {
            TransposeA::NoTranspose => "NO_TRANSPOSE",
            TransposeA::Transpose => "TRANSPOSE",
            TransposeA::Adjoint => "ADJOINT",
        }
    }
    /// Parses `NO_TRANSPOSE` etc.
    pub fn from_name(s: &str) -> Option<TransposeA> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The options of a triangular-solve (`left_side=true, lower=true,
/// unit_diagonal=true, transpose_a=NO_TRANSPOSE`; a false flag is not
/// written, as XLA prints them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TriangularSolveOptions {
    /// `left_side=`: solve `op(a) x = b` (true) or `x op(a) = b` (false).
    pub left_side: bool,
    /// `lower=`: `a` is lower (true) or upper (false) triangular.
    pub lower: bool,
    /// `unit_diagonal=`: the diagonal of `a` is taken as ones.
    pub unit_diagonal: bool,
    /// `transpose_a=` (None when the text gave none).
    pub transpose_a: Option<TransposeA>,
}

/// `algorithm=` of rng-bit-generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RngAlgorithm {
    /// `rng_default`: the backend's choice.
    Default,
    /// `rng_three_fry`.
    ThreeFry,
    /// `rng_philox`.
    Philox,
}

impl RngAlgorithm {
    /// All three.
    pub const ALL: [RngAlgorithm; 3] = [
        RngAlgorithm::Default,
        RngAlgorithm::ThreeFry,
        RngAlgorithm::Philox,
    ];
    /// The HLO text (`rng_three_fry`).
    pub fn name(self) -> &'static str {
        match self {
            RngAlgorithm::Default => "rng_default",
            RngAlgorithm::ThreeFry => "rng_three_fry",
            RngAlgorithm::Philox => "rng_philox",
        }
    }
    /// Parses `rng_default` etc.
    pub fn from_name(s: &str) -> Option<RngAlgorithm> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The payload of a `constant(...)`, elements in logical row-major order.
///
/// Floats are kept as f64: every value of every float type up to f64 is
/// exactly representable, including the sign of zero and of NaN. Equality
/// compares floats by their bits, so a constant equals itself even when it
/// holds NaN, and `-0` differs from `+0`.
///
/// ```
/// use xla_props::hlo::ConstantData;
/// assert_eq!(ConstantData::Float(vec![f64::NAN]), ConstantData::Float(vec![f64::NAN]));
/// assert_ne!(ConstantData::Float(vec![-0.0]), ConstantData::Float(vec![0.0]));
/// ```
#[derive(Clone, Debug)]
pub enum ConstantData {
    /// `pred` elements.
    Pred(Vec<bool>),
    /// Integer elements of any width.
    Int(Vec<i128>),
    /// Float elements of any float type.
    Float(Vec<f64>),
    /// Complex elements (parse-only).
    Complex(Vec<(f64, f64)>),
    /// A tuple constant.
    Tuple(Vec<ConstantData>),
}

impl PartialEq for ConstantData {
    fn eq(&self, other: &Self) -> bool {
        use ConstantData as C;
        let bits = |a: &f64, b: &f64| a.to_bits() == b.to_bits();
        match (self, other) {
            (C::Pred(a), C::Pred(b)) => a == b,
            (C::Int(a), C::Int(b)) => a == b,
            (C::Float(a), C::Float(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bits(x, y))
            }
            (C::Complex(a), C::Complex(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| bits(&x.0, &y.0) && bits(&x.1, &y.1))
            }
            (C::Tuple(a), C::Tuple(b)) => a == b,
            _ => false,
        }
    }
}

/// Typed attributes. Only the ones an opcode uses are set; everything else
/// the text carried (metadata, sharding, backend_config, ...) is in `other`
/// verbatim so it prints back.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Attrs {
    /// `parameter(N)`.
    pub parameter_number: Option<i64>,
    /// `constant(...)`.
    pub constant: Option<ConstantData>,
    /// `index=` of get-tuple-element.
    pub index: Option<i64>,
    /// `dimensions={...}`.
    pub dimensions: Option<Vec<i64>>,
    /// `iota_dimension=`.
    pub iota_dimension: Option<i64>,
    /// `slice={[a:b:s], ...}`.
    pub slice: Option<Vec<SliceDim>>,
    /// `dynamic_slice_sizes={...}`.
    pub dynamic_slice_sizes: Option<Vec<i64>>,
    /// `padding=0_0_0x1_1_0`.
    pub padding: Option<Vec<PadDim>>,
    /// `window={...}`.
    pub window: Option<Vec<WindowDim>>,
    /// `dim_labels=`.
    pub conv_dims: Option<ConvDims>,
    /// `feature_group_count=`.
    pub feature_group_count: Option<i64>,
    /// `batch_group_count=`.
    pub batch_group_count: Option<i64>,
    /// Dot dimension numbers.
    pub dot_dims: Option<DotDims>,
    /// `operand_precision={default,high}` (or the older `precision_config`).
    pub precision: Option<Vec<String>>,
    /// Gather dimension numbers.
    pub gather_dims: Option<GatherDims>,
    /// Scatter dimension numbers.
    pub scatter_dims: Option<ScatterDims>,
    /// `indices_are_sorted=true`.
    pub indices_are_sorted: bool,
    /// `unique_indices=true`.
    pub unique_indices: bool,
    /// `direction=`.
    pub direction: Option<ComparisonDirection>,
    /// `type=` of compare.
    pub comparison_type: Option<ComparisonType>,
    /// `exponent_bits=`.
    pub exponent_bits: Option<i64>,
    /// `mantissa_bits=`.
    pub mantissa_bits: Option<i64>,
    /// `is_stable=true`.
    pub is_stable: bool,
    /// `kind=` of fusion.
    pub fusion_kind: Option<FusionKind>,
    /// `calls=` (fusion, async ops) or `called_computations=` (custom-call).
    pub calls: Vec<CompId>,
    /// `to_apply=`.
    pub to_apply: Option<CompId>,
    /// `condition=` of while.
    pub condition: Option<CompId>,
    /// `body=` of while.
    pub body: Option<CompId>,
    /// `branch_computations={...}`, or `{true_computation, false_computation}` for a pred conditional.
    pub branch_computations: Vec<CompId>,
    /// True when the text used `true_computation=`/`false_computation=` (printed back that way).
    pub pred_branches: bool,
    /// `select=` of select-and-scatter.
    pub select: Option<CompId>,
    /// `scatter=` of select-and-scatter.
    pub scatter: Option<CompId>,
    /// `custom_call_target="..."`.
    pub custom_call_target: Option<String>,
    /// `fft_type=` of fft.
    pub fft_type: Option<FftType>,
    /// `fft_length={...}` of fft.
    pub fft_length: Option<Vec<i64>>,
    /// The options of a triangular-solve.
    pub triangular_solve: Option<TriangularSolveOptions>,
    /// `algorithm=` of rng-bit-generator.
    pub rng_algorithm: Option<RngAlgorithm>,
    /// Every other attribute as `(name, raw value text)`, in source order.
    pub other: Vec<(String, String)>,
}

/// One HLO instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// Its name, without any `%` prefix.
    pub name: String,
    /// Its opcode.
    pub opcode: Opcode,
    /// Its result shape.
    pub shape: Shape,
    /// Operands, in order.
    pub operands: Vec<InstrId>,
    /// Attributes.
    pub attrs: Attrs,
}

impl Instruction {
    /// An instruction with no attributes.
    pub fn new(
        name: impl Into<String>,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
    ) -> Self {
        Instruction::with_attrs(name, opcode, shape, operands, Attrs::default())
    }
    /// An instruction with attributes `attrs`.
    pub fn with_attrs(
        name: impl Into<String>,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> Self {
        Instruction {
            name: name.into(),
            opcode,
            shape,
            operands,
            attrs,
        }
    }
    /// Makes this instruction `opcode` of `operands`, with no attributes
    /// (a rewrite's new last step under the old name).
    pub fn become_op(&mut self, opcode: Opcode, operands: Vec<InstrId>) {
        self.opcode = opcode;
        self.operands = operands;
        self.attrs = Attrs::default();
    }

    /// The `to_apply` computation, or why there is none.
    pub fn to_apply(&self) -> Result<CompId, String> {
        self.attrs
            .to_apply
            .ok_or_else(|| format!("`{}` has no to_apply", self.name))
    }

    /// Computations this instruction calls (fusion, to_apply, while, branches, ...).
    pub fn called_computations(&self) -> Vec<CompId> {
        let a = &self.attrs;
        let mut out = a.calls.clone();
        out.extend(a.to_apply);
        out.extend(a.condition);
        out.extend(a.body);
        out.extend(a.branch_computations.iter().copied());
        out.extend(a.select);
        out.extend(a.scatter);
        out
    }
}

/// A named computation: a list of instructions with one root.
#[derive(Clone, Debug, PartialEq)]
pub struct Computation {
    /// Its name, without any `%` prefix.
    pub name: String,
    /// Instructions in text order (not necessarily topological; see [`Computation::post_order`]).
    pub instructions: Vec<Instruction>,
    /// The root instruction.
    pub root: InstrId,
    /// Attributes after the computation header (e.g. `execution_thread="main"`), verbatim.
    pub other: Vec<(String, String)>,
}

impl Computation {
    /// A computation of `instructions` with root `root` and no other
    /// attributes.
    pub fn new(name: impl Into<String>, instructions: Vec<Instruction>, root: InstrId) -> Self {
        Computation {
            name: name.into(),
            instructions,
            root,
            other: Vec::new(),
        }
    }
    /// The instruction with this id.
    pub fn instr(&self, id: InstrId) -> &Instruction {
        &self.instructions[id.index()]
    }
    /// Parameters ordered by parameter number.
    pub fn parameters(&self) -> Vec<InstrId> {
        let mut ps: Vec<(i64, InstrId)> = self
            .instructions
            .iter()
            .enumerate()
            .filter(|(_, i)| i.opcode == Opcode::Parameter)
            .map(|(k, i)| (i.attrs.parameter_number.unwrap_or(-1), InstrId(k as u32)))
            .collect();
        ps.sort();
        ps.into_iter().map(|(_, id)| id).collect()
    }
    /// Looks an instruction up by name.
    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.instructions
            .iter()
            .position(|i| i.name == name)
            .map(|k| InstrId(k as u32))
    }
    /// Instructions reachable from the root, operands before users; None on a cycle.
    /// Unreachable instructions are appended afterwards (in a valid order too), so
    /// that every instruction is visited exactly once.
    pub fn post_order(&self) -> Option<Vec<InstrId>> {
        // 0 = unvisited, 1 = on stack, 2 = done
        let n = self.instructions.len();
        let mut state = vec![0u8; n];
        let mut order = Vec::with_capacity(n);
        let roots = std::iter::once(self.root.index()).chain(0..n);
        for start in roots {
            if start >= n || state[start] != 0 {
                continue;
            }
            // iterative DFS: (node, next operand index)
            let mut stack = vec![(start, 0usize)];
            state[start] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let ops = &self.instructions[node].operands;
                if *next < ops.len() {
                    let child = ops[*next].index();
                    *next += 1;
                    if child >= n {
                        return None;
                    }
                    match state[child] {
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        1 => return None,
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    order.push(InstrId(node as u32));
                    stack.pop();
                }
            }
        }
        Some(order)
    }
}

/// An HLO module.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// The module name from `HloModule NAME`.
    pub name: String,
    /// Header attributes (`is_scheduled=true`, `entry_computation_layout={...}`), verbatim.
    pub attrs: Vec<(String, String)>,
    /// Computations; callees usually come before callers.
    pub computations: Vec<Computation>,
    /// The entry computation.
    pub entry: CompId,
}

impl Module {
    /// The computation with this id.
    pub fn comp(&self, id: CompId) -> &Computation {
        &self.computations[id.index()]
    }
    /// The entry computation.
    pub fn entry_computation(&self) -> &Computation {
        self.comp(self.entry)
    }
    /// Looks a computation up by name.
    pub fn find_computation(&self, name: &str) -> Option<CompId> {
        self.computations
            .iter()
            .position(|c| c.name == name)
            .map(|k| CompId(k as u32))
    }
    /// The first element type, over every instruction's shape, that is one
    /// of the [`ElementType::is_extended`] types (which only the reference
    /// evaluates), if any.
    pub fn extended_type(&self) -> Option<super::ElementType> {
        self.computations
            .iter()
            .flat_map(|c| &c.instructions)
            .flat_map(|i| i.shape.leaves())
            .map(|a| a.dtype)
            .find(|t| t.is_extended())
    }
    /// Total instruction count over all computations.
    pub fn instruction_count(&self) -> usize {
        self.computations.iter().map(|c| c.instructions.len()).sum()
    }
    /// Parameter shapes of the entry computation, by parameter number.
    pub fn parameter_shapes(&self) -> Vec<&Shape> {
        let entry = self.entry_computation();
        entry
            .parameters()
            .into_iter()
            .map(|p| &entry.instr(p).shape)
            .collect()
    }
    /// The entry computation's outputs: the operands of a root tuple, else
    /// the root itself.
    pub fn outputs(&self) -> Vec<&Instruction> {
        let entry = self.entry_computation();
        let root = entry.instr(entry.root);
        if root.opcode == Opcode::Tuple {
            root.operands.iter().map(|&o| entry.instr(o)).collect()
        } else {
            vec![root]
        }
    }
    /// The entry computation's result shape.
    pub fn result_shape(&self) -> &Shape {
        let entry = self.entry_computation();
        &entry.instr(entry.root).shape
    }
}
