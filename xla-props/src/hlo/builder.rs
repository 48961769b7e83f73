//! A builder for HLO modules in Rust: every method infers its result shape
//! (so a program that builds is well typed), names are generated, and
//! [`ModuleBuilder::build`] returns a verified [`Module`].

use std::collections::HashSet;

use super::dtype::ElementType;
use super::ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData, ConvDims,
    DotDims, FusionKind, GatherDims, InstrId, Instruction, Module, PadDim, ScatterDims, SliceDim,
    WindowDim,
};
use super::opcode::Opcode;
use super::shape::{Layout, Shape};
use super::shape_inference::{default_comparison_type, infer, ShapeError};
use super::verifier::{verify, VerifyError};

/// Why a builder call failed.
///
/// ```
/// use xla_props::hlo::{BuildError, ElementType::F32, ModuleBuilder, Shape};
/// let err = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![4]))?;
///         b.reshape(x, &[3])
///     })
///     .unwrap_err();
/// assert!(matches!(err, BuildError::Shape { .. }));
/// assert_eq!(
///     err.to_string(),
///     "computation 'main': cannot add reshape: reshape: cannot reshape f32[4] to dims {3} (element counts differ)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// Shape inference rejected an instruction.
    #[error("computation '{computation}': cannot add {opcode}: {source}")]
    Shape {
        /// The computation being built.
        computation: String,
        /// The opcode being added.
        opcode: Opcode,
        /// Why.
        source: ShapeError,
    },
    /// An [`InstrId`] that this computation builder did not hand out.
    #[error("computation '{computation}': unknown instruction #{id}")]
    UnknownInstruction {
        /// The computation being built.
        computation: String,
        /// The bad id.
        id: u32,
    },
    /// Bad arguments to a builder method (e.g. a layout that is not a permutation).
    #[error("computation '{computation}': {message}")]
    Invalid {
        /// The computation being built.
        computation: String,
        /// What is wrong.
        message: String,
    },
    /// The finished module failed verification.
    #[error("built module is invalid: {0}")]
    Verify(Box<VerifyError>),
}

/// Builds a [`Module`] one computation at a time.
///
/// Callees (reducers, fusion bodies, loop bodies) are added first with
/// [`ModuleBuilder::computation`]; the entry computation last with
/// [`ModuleBuilder::build`], which verifies the whole module.
///
/// ```
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// let mut m = ModuleBuilder::new("sum_of_squares");
/// let add = m.scalar_reducer(Opcode::Add, F32).unwrap();
/// let module = m
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![4, 8]))?;
///         let sq = b.binary(Opcode::Multiply, x, x)?;
///         let zero = b.constant_f64(F32, &[], &[0.0])?;
///         b.reduce(&[sq], &[zero], &[1], add)
///     })
///     .unwrap();
/// assert_eq!(module.result_shape(), &Shape::array(F32, vec![4]));
/// assert_eq!(module.computations.len(), 2);
/// ```
#[derive(Debug)]
pub struct ModuleBuilder {
    name: String,
    computations: Vec<Computation>,
    names: HashSet<String>,
    counter: u64,
}

impl ModuleBuilder {
    /// A builder for a module called `name`.
    pub fn new(name: impl Into<String>) -> ModuleBuilder {
        ModuleBuilder {
            name: name.into(),
            computations: Vec::new(),
            names: HashSet::new(),
            counter: 0,
        }
    }

    /// The computations added so far.
    pub fn computations(&self) -> &[Computation] {
        &self.computations
    }

    fn unique_computation_name(&self, name: &str) -> String {
        let taken = |n: &str| self.computations.iter().any(|c| c.name == n);
        if !taken(name) {
            return name.to_string();
        }
        (1..)
            .map(|k| format!("{name}.{k}"))
            .find(|n| !taken(n))
            .unwrap_or_else(|| name.to_string())
    }

    fn make<F>(&mut self, name: &str, f: F) -> Result<Computation, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let name = self.unique_computation_name(name);
        let mut b = ComputationBuilder {
            name,
            instructions: Vec::new(),
            computations: &self.computations,
            names: &mut self.names,
            counter: &mut self.counter,
            next_parameter: 0,
        };
        let root = f(&mut b)?;
        b.check(root)?;
        Ok(Computation {
            name: b.name,
            instructions: b.instructions,
            root,
            other: Vec::new(),
        })
    }

    /// Adds a (non-entry) computation built by `f`, whose return value is the root.
    /// A name already taken gets a `.N` suffix.
    pub fn computation<F>(&mut self, name: &str, f: F) -> Result<CompId, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let c = self.make(name, f)?;
        self.computations.push(c);
        Ok(CompId(self.computations.len() as u32 - 1))
    }

    /// Adds `(x: T[], y: T[]) -> T[]` computing `op(x, y)`, e.g. the add or max reducer.
    ///
    /// `op` is a binary elementwise opcode valid for `dtype`.
    pub fn scalar_reducer(&mut self, op: Opcode, dtype: ElementType) -> Result<CompId, BuildError> {
        let name = format!("{}_{}", op.name().replace('-', "_"), dtype.name());
        self.computation(&name, |b| {
            let x = b.parameter(Shape::scalar(dtype))?;
            let y = b.parameter(Shape::scalar(dtype))?;
            b.binary(op, x, y)
        })
    }

    /// Adds a sort comparator over operands of element types `dtypes`: it takes two
    /// scalars per operand and compares the first pair with `direction` (default type).
    pub fn comparator(
        &mut self,
        direction: ComparisonDirection,
        dtypes: &[ElementType],
    ) -> Result<CompId, BuildError> {
        let name = format!("compare_{}", direction.name().to_ascii_lowercase());
        self.computation(&name, |b| {
            let mut params = Vec::new();
            for &t in dtypes {
                params.push(b.parameter(Shape::scalar(t))?);
                params.push(b.parameter(Shape::scalar(t))?);
            }
            let (&lhs, &rhs, &t) = match (params.first(), params.get(1), dtypes.first()) {
                (Some(l), Some(r), Some(t)) => (l, r, t),
                _ => {
                    return Err(BuildError::Invalid {
                        computation: b.name().to_string(),
                        message: "a comparator needs at least one operand type".into(),
                    })
                }
            };
            b.compare(direction, default_comparison_type(t), lhs, rhs)
        })
    }

    /// Builds the entry computation with `f` (its return value is the root),
    /// and returns the verified module.
    pub fn build<F>(mut self, entry: &str, f: F) -> Result<Module, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let c = self.make(entry, f)?;
        self.computations.push(c);
        let module = Module {
            name: self.name,
            attrs: Vec::new(),
            entry: CompId(self.computations.len() as u32 - 1),
            computations: self.computations,
        };
        verify(&module).map_err(|e| BuildError::Verify(Box::new(e)))?;
        Ok(module)
    }
}

/// Builds one computation; handed to the closures of [`ModuleBuilder`].
///
/// Every method adds one instruction (named `opcode.N`, unique in the
/// module), infers its shape, and returns its id; an ill-typed instruction is
/// an error at the call that adds it.
///
/// ```
/// use xla_props::hlo::{ElementType::{F32, S32}, ModuleBuilder, Opcode, Shape};
/// let module = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![2, 3]))?;
///         b.set_layout(x, &[0, 1])?; // column-major
///         let t = b.transpose(x, &[1, 0])?;
///         assert_eq!(b.shape(t), Some(&Shape::array(F32, vec![3, 2])));
///         // adding f32[3,2] to s32[3,2] is rejected right here
///         let i = b.iota(S32, &[3, 2], 0)?;
///         assert!(b.binary(Opcode::Add, t, i).is_err());
///         let f = b.convert(i, F32)?;
///         b.binary(Opcode::Add, t, f)
///     })
///     .unwrap();
/// let root = module.entry_computation().root;
/// // a rejected instruction uses up no name
/// assert_eq!(module.entry_computation().instr(root).name, "add.5");
/// ```
#[derive(Debug)]
pub struct ComputationBuilder<'m> {
    name: String,
    instructions: Vec<Instruction>,
    computations: &'m [Computation],
    names: &'m mut HashSet<String>,
    counter: &'m mut u64,
    next_parameter: i64,
}

fn slice_dims(starts: &[i64], limits: &[i64], strides: &[i64]) -> Option<Vec<SliceDim>> {
    (starts.len() == limits.len() && starts.len() == strides.len()).then(|| {
        starts
            .iter()
            .zip(limits)
            .zip(strides)
            .map(|((&start, &limit), &stride)| SliceDim {
                start,
                limit,
                stride,
            })
            .collect()
    })
}

impl ComputationBuilder<'_> {
    /// The name of the computation being built.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The inferred shape of an instruction added so far.
    pub fn shape(&self, id: InstrId) -> Option<&Shape> {
        self.instructions.get(id.index()).map(|i| &i.shape)
    }

    /// The instructions added so far.
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    fn check(&self, id: InstrId) -> Result<(), BuildError> {
        if id.index() < self.instructions.len() {
            Ok(())
        } else {
            Err(BuildError::UnknownInstruction {
                computation: self.name.clone(),
                id: id.0,
            })
        }
    }

    fn invalid(&self, message: impl Into<String>) -> BuildError {
        BuildError::Invalid {
            computation: self.name.clone(),
            message: message.into(),
        }
    }

    fn fresh_name(&mut self, op: Opcode) -> String {
        loop {
            *self.counter += 1;
            let n = format!("{}.{}", op.name(), self.counter);
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// Adds an instruction with explicit attributes; `declared` supplies what
    /// inference cannot derive (see [`infer`]). The general form of every other method.
    pub fn add(
        &mut self,
        opcode: Opcode,
        operands: &[InstrId],
        attrs: Attrs,
        declared: Option<&Shape>,
    ) -> Result<InstrId, BuildError> {
        let mut shapes = Vec::with_capacity(operands.len());
        for &o in operands {
            self.check(o)?;
            shapes.push(&self.instructions[o.index()].shape);
        }
        let mut shape =
            infer(opcode, &shapes, &attrs, self.computations, declared).map_err(|source| {
                BuildError::Shape {
                    computation: self.name.clone(),
                    opcode,
                    source,
                }
            })?;
        if opcode == Opcode::Parameter {
            // a parameter keeps the layout it was declared with
            if let Some(d) = declared {
                shape = d.clone();
            }
        }
        let name = self.fresh_name(opcode);
        self.instructions.push(Instruction {
            name,
            opcode,
            shape,
            operands: operands.to_vec(),
            attrs,
        });
        Ok(InstrId(self.instructions.len() as u32 - 1))
    }

    fn add_attrs(
        &mut self,
        opcode: Opcode,
        operands: &[InstrId],
        set: impl FnOnce(&mut Attrs),
    ) -> Result<InstrId, BuildError> {
        let mut attrs = Attrs::default();
        set(&mut attrs);
        self.add(opcode, operands, attrs, None)
    }

    /// Sets the layout (minor-to-major) of an array-shaped instruction.
    pub fn set_layout(&mut self, id: InstrId, minor_to_major: &[i64]) -> Result<(), BuildError> {
        self.check(id)?;
        let shape = &self.instructions[id.index()].shape;
        let rank = match shape.as_array() {
            Some(a) => a.rank(),
            None => return Err(self.invalid(format!("cannot set a layout on {shape}"))),
        };
        let mut sorted = minor_to_major.to_vec();
        sorted.sort_unstable();
        if !sorted.iter().copied().eq(0..rank as i64) {
            return Err(self.invalid(format!(
                "layout {minor_to_major:?} is not a permutation of 0..{rank}"
            )));
        }
        if let Shape::Array(a) = &mut self.instructions[id.index()].shape {
            a.layout = Some(Layout {
                minor_to_major: minor_to_major.to_vec(),
                extra: None,
            });
        }
        Ok(())
    }

    /// A parameter of `shape` (layout kept), numbered in call order from 0.
    pub fn parameter(&mut self, shape: Shape) -> Result<InstrId, BuildError> {
        let attrs = Attrs {
            parameter_number: Some(self.next_parameter),
            ..Attrs::default()
        };
        let id = self.add(Opcode::Parameter, &[], attrs, Some(&shape))?;
        self.next_parameter += 1;
        Ok(id)
    }

    /// A constant of `shape` holding `data` (elements row-major).
    pub fn constant(&mut self, shape: Shape, data: ConstantData) -> Result<InstrId, BuildError> {
        let attrs = Attrs {
            constant: Some(data),
            ..Attrs::default()
        };
        self.add(Opcode::Constant, &[], attrs, Some(&shape))
    }

    /// A float constant `dtype[dims]` from f64 values (`dims = &[]` for a scalar).
    pub fn constant_f64(
        &mut self,
        dtype: ElementType,
        dims: &[i64],
        values: &[f64],
    ) -> Result<InstrId, BuildError> {
        self.constant(
            Shape::array(dtype, dims.to_vec()),
            ConstantData::Float(values.to_vec()),
        )
    }

    /// An integer constant `dtype[dims]`.
    pub fn constant_i128(
        &mut self,
        dtype: ElementType,
        dims: &[i64],
        values: &[i128],
    ) -> Result<InstrId, BuildError> {
        self.constant(
            Shape::array(dtype, dims.to_vec()),
            ConstantData::Int(values.to_vec()),
        )
    }

    /// A pred constant `pred[dims]`.
    pub fn constant_bool(&mut self, dims: &[i64], values: &[bool]) -> Result<InstrId, BuildError> {
        self.constant(
            Shape::array(ElementType::Pred, dims.to_vec()),
            ConstantData::Pred(values.to_vec()),
        )
    }

    /// `iota` of `dtype[dims]` counting along `dimension`.
    pub fn iota(
        &mut self,
        dtype: ElementType,
        dims: &[i64],
        dimension: i64,
    ) -> Result<InstrId, BuildError> {
        let attrs = Attrs {
            iota_dimension: Some(dimension),
            ..Attrs::default()
        };
        self.add(
            Opcode::Iota,
            &[],
            attrs,
            Some(&Shape::array(dtype, dims.to_vec())),
        )
    }

    /// A tuple of the given elements.
    pub fn tuple(&mut self, elements: &[InstrId]) -> Result<InstrId, BuildError> {
        self.add(Opcode::Tuple, elements, Attrs::default(), None)
    }

    /// Element `index` of a tuple.
    pub fn get_tuple_element(&mut self, tuple: InstrId, index: i64) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::GetTupleElement, &[tuple], |a| a.index = Some(index))
    }

    /// A copy.
    pub fn copy(&mut self, x: InstrId) -> Result<InstrId, BuildError> {
        self.add(Opcode::Copy, &[x], Attrs::default(), None)
    }

    /// A bitcast to `shape` (same size in bits).
    pub fn bitcast(&mut self, x: InstrId, shape: Shape) -> Result<InstrId, BuildError> {
        self.add(Opcode::Bitcast, &[x], Attrs::default(), Some(&shape))
    }

    /// An elementwise unary op (`abs`, `exponential`, ...).
    pub fn unary(&mut self, op: Opcode, x: InstrId) -> Result<InstrId, BuildError> {
        if op.category() != super::opcode::Category::ElementwiseUnary {
            return Err(self.invalid(format!("{op} is not an elementwise unary op")));
        }
        self.add(op, &[x], Attrs::default(), None)
    }

    /// An elementwise binary op (`add`, `atan2`, ...).
    pub fn binary(&mut self, op: Opcode, a: InstrId, b: InstrId) -> Result<InstrId, BuildError> {
        if op.category() != super::opcode::Category::ElementwiseBinary {
            return Err(self.invalid(format!("{op} is not an elementwise binary op")));
        }
        self.add(op, &[a, b], Attrs::default(), None)
    }

    /// `compare` with a direction and comparison type (see [`default_comparison_type`]).
    pub fn compare(
        &mut self,
        direction: ComparisonDirection,
        ty: ComparisonType,
        a: InstrId,
        b: InstrId,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Compare, &[a, b], |at| {
            at.direction = Some(direction);
            at.comparison_type = Some(ty);
        })
    }

    /// `select(pred, on_true, on_false)`.
    pub fn select(
        &mut self,
        pred: InstrId,
        on_true: InstrId,
        on_false: InstrId,
    ) -> Result<InstrId, BuildError> {
        self.add(
            Opcode::Select,
            &[pred, on_true, on_false],
            Attrs::default(),
            None,
        )
    }

    /// `clamp(min, x, max)`; the bounds may be scalars.
    pub fn clamp(&mut self, min: InstrId, x: InstrId, max: InstrId) -> Result<InstrId, BuildError> {
        self.add(Opcode::Clamp, &[min, x, max], Attrs::default(), None)
    }

    fn with_dtype(&self, x: InstrId, dtype: ElementType) -> Result<Shape, BuildError> {
        self.check(x)?;
        match self.instructions[x.index()].shape.as_array() {
            Some(a) => Ok(Shape::array(dtype, a.dims.clone())),
            None => Err(self.invalid("expected an array operand")),
        }
    }

    /// `convert` to `dtype`.
    pub fn convert(&mut self, x: InstrId, dtype: ElementType) -> Result<InstrId, BuildError> {
        let s = self.with_dtype(x, dtype)?;
        self.add(Opcode::Convert, &[x], Attrs::default(), Some(&s))
    }

    /// `bitcast-convert` to `dtype` (a minor dimension appears or disappears when widths differ).
    pub fn bitcast_convert(
        &mut self,
        x: InstrId,
        dtype: ElementType,
    ) -> Result<InstrId, BuildError> {
        let s = self.with_dtype(x, dtype)?;
        self.add(Opcode::BitcastConvert, &[x], Attrs::default(), Some(&s))
    }

    /// `reduce-precision` to `exponent_bits`/`mantissa_bits`.
    pub fn reduce_precision(
        &mut self,
        x: InstrId,
        exponent_bits: i64,
        mantissa_bits: i64,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::ReducePrecision, &[x], |a| {
            a.exponent_bits = Some(exponent_bits);
            a.mantissa_bits = Some(mantissa_bits);
        })
    }

    /// `broadcast` to `result_dims`; operand dimension `k` becomes result dimension `dimensions[k]`.
    pub fn broadcast(
        &mut self,
        x: InstrId,
        result_dims: &[i64],
        dimensions: &[i64],
    ) -> Result<InstrId, BuildError> {
        // the element type comes from the operand; the declared shape only gives dims
        let s = Shape::array(ElementType::Pred, result_dims.to_vec());
        let attrs = Attrs {
            dimensions: Some(dimensions.to_vec()),
            ..Attrs::default()
        };
        self.add(Opcode::Broadcast, &[x], attrs, Some(&s))
    }

    /// `reshape` to `dims` (same element count).
    pub fn reshape(&mut self, x: InstrId, dims: &[i64]) -> Result<InstrId, BuildError> {
        let s = Shape::array(ElementType::Pred, dims.to_vec());
        self.add(Opcode::Reshape, &[x], Attrs::default(), Some(&s))
    }

    /// `transpose` by `permutation` (result dimension `i` is operand dimension `permutation[i]`).
    pub fn transpose(&mut self, x: InstrId, permutation: &[i64]) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Transpose, &[x], |a| {
            a.dimensions = Some(permutation.to_vec())
        })
    }

    /// `slice` with per-dimension starts, limits (exclusive) and strides.
    pub fn slice(
        &mut self,
        x: InstrId,
        starts: &[i64],
        limits: &[i64],
        strides: &[i64],
    ) -> Result<InstrId, BuildError> {
        let s = slice_dims(starts, limits, strides)
            .ok_or_else(|| self.invalid("slice starts, limits and strides differ in length"))?;
        self.add_attrs(Opcode::Slice, &[x], |a| a.slice = Some(s))
    }

    /// `dynamic-slice` of `sizes` at scalar `starts` (one per dimension).
    pub fn dynamic_slice(
        &mut self,
        x: InstrId,
        starts: &[InstrId],
        sizes: &[i64],
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = std::iter::once(x).chain(starts.iter().copied()).collect();
        self.add_attrs(Opcode::DynamicSlice, &ops, |a| {
            a.dynamic_slice_sizes = Some(sizes.to_vec())
        })
    }

    /// `dynamic-update-slice` of `update` into `x` at scalar `starts`.
    pub fn dynamic_update_slice(
        &mut self,
        x: InstrId,
        update: InstrId,
        starts: &[InstrId],
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = [x, update]
            .into_iter()
            .chain(starts.iter().copied())
            .collect();
        self.add(Opcode::DynamicUpdateSlice, &ops, Attrs::default(), None)
    }

    /// `concatenate` along `dimension`.
    pub fn concatenate(&mut self, xs: &[InstrId], dimension: i64) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Concatenate, xs, |a| {
            a.dimensions = Some(vec![dimension])
        })
    }

    /// `pad` with a scalar `value` and per-dimension padding (low/high may be negative).
    pub fn pad(
        &mut self,
        x: InstrId,
        value: InstrId,
        padding: &[PadDim],
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Pad, &[x, value], |a| {
            a.padding = Some(padding.to_vec())
        })
    }

    /// `reverse` along `dimensions`.
    pub fn reverse(&mut self, x: InstrId, dimensions: &[i64]) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Reverse, &[x], |a| {
            a.dimensions = Some(dimensions.to_vec())
        })
    }

    /// `gather` (the dimension numbers include `slice_sizes`).
    pub fn gather(
        &mut self,
        operand: InstrId,
        indices: InstrId,
        dims: GatherDims,
        indices_are_sorted: bool,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Gather, &[operand, indices], |a| {
            a.gather_dims = Some(dims);
            a.indices_are_sorted = indices_are_sorted;
        })
    }

    /// Variadic `scatter`: N `inputs`, the `indices`, N `updates`, combined by `to_apply`.
    pub fn scatter(
        &mut self,
        inputs: &[InstrId],
        indices: InstrId,
        updates: &[InstrId],
        dims: ScatterDims,
        to_apply: CompId,
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = inputs
            .iter()
            .copied()
            .chain(std::iter::once(indices))
            .chain(updates.iter().copied())
            .collect();
        self.add_attrs(Opcode::Scatter, &ops, |a| {
            a.scatter_dims = Some(dims);
            a.to_apply = Some(to_apply);
        })
    }

    /// Variadic `reduce` of `inputs` over `dimensions`, starting from `inits`.
    pub fn reduce(
        &mut self,
        inputs: &[InstrId],
        inits: &[InstrId],
        dimensions: &[i64],
        reducer: CompId,
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = inputs.iter().chain(inits).copied().collect();
        self.add_attrs(Opcode::Reduce, &ops, |a| {
            a.dimensions = Some(dimensions.to_vec());
            a.to_apply = Some(reducer);
        })
    }

    /// Variadic `reduce-window`.
    pub fn reduce_window(
        &mut self,
        inputs: &[InstrId],
        inits: &[InstrId],
        window: &[WindowDim],
        reducer: CompId,
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = inputs.iter().chain(inits).copied().collect();
        self.add_attrs(Opcode::ReduceWindow, &ops, |a| {
            a.window = Some(window.to_vec());
            a.to_apply = Some(reducer);
        })
    }

    /// `select-and-scatter`.
    pub fn select_and_scatter(
        &mut self,
        operand: InstrId,
        source: InstrId,
        init: InstrId,
        window: &[WindowDim],
        select: CompId,
        scatter: CompId,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::SelectAndScatter, &[operand, source, init], |a| {
            a.window = Some(window.to_vec());
            a.select = Some(select);
            a.scatter = Some(scatter);
        })
    }

    /// Variadic `sort` along `dimension` with a comparator (see [`ModuleBuilder::comparator`]).
    pub fn sort(
        &mut self,
        operands: &[InstrId],
        dimension: i64,
        is_stable: bool,
        comparator: CompId,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Sort, operands, |a| {
            a.dimensions = Some(vec![dimension]);
            a.is_stable = is_stable;
            a.to_apply = Some(comparator);
        })
    }

    /// `map` of a scalar computation over the operands.
    pub fn map(&mut self, operands: &[InstrId], callee: CompId) -> Result<InstrId, BuildError> {
        self.check(
            *operands
                .first()
                .ok_or_else(|| self.invalid("map needs operands"))?,
        )?;
        let rank = self.instructions[operands[0].index()]
            .shape
            .as_array()
            .map_or(0, |a| a.rank());
        self.add_attrs(Opcode::Map, operands, |a| {
            a.dimensions = Some((0..rank as i64).collect());
            a.to_apply = Some(callee);
        })
    }

    /// `dot` (dot_general); `result` overrides the result element type (preferred element type).
    pub fn dot(
        &mut self,
        lhs: InstrId,
        rhs: InstrId,
        dims: DotDims,
        result: Option<ElementType>,
    ) -> Result<InstrId, BuildError> {
        let attrs = Attrs {
            dot_dims: Some(dims),
            ..Attrs::default()
        };
        let declared = result.map(Shape::scalar);
        let id = self.add(Opcode::Dot, &[lhs, rhs], attrs, declared.as_ref())?;
        Ok(id)
    }

    /// `convolution`; `result` overrides the result element type.
    #[expect(
        clippy::too_many_arguments,
        reason = "mirrors the HLO attributes one to one"
    )]
    pub fn convolution(
        &mut self,
        input: InstrId,
        kernel: InstrId,
        dims: ConvDims,
        window: &[WindowDim],
        feature_group_count: i64,
        batch_group_count: i64,
        result: Option<ElementType>,
    ) -> Result<InstrId, BuildError> {
        let attrs = Attrs {
            conv_dims: Some(dims),
            window: Some(window.to_vec()),
            feature_group_count: Some(feature_group_count),
            batch_group_count: Some(batch_group_count),
            ..Attrs::default()
        };
        let declared = result.map(Shape::scalar);
        self.add(
            Opcode::Convolution,
            &[input, kernel],
            attrs,
            declared.as_ref(),
        )
    }

    /// A `fusion` of `kind` calling `callee` with `operands`.
    pub fn fusion(
        &mut self,
        kind: FusionKind,
        callee: CompId,
        operands: &[InstrId],
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Fusion, operands, |a| {
            a.fusion_kind = Some(kind);
            a.calls = vec![callee];
        })
    }

    /// A `call` of `callee` with `operands`.
    pub fn call(&mut self, callee: CompId, operands: &[InstrId]) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::Call, operands, |a| a.to_apply = Some(callee))
    }

    /// A `while` loop: `condition` and `body` take the loop state `init`.
    pub fn while_loop(
        &mut self,
        condition: CompId,
        body: CompId,
        init: InstrId,
    ) -> Result<InstrId, BuildError> {
        self.add_attrs(Opcode::While, &[init], |a| {
            a.condition = Some(condition);
            a.body = Some(body);
        })
    }

    /// A `conditional`: `index` (s32[], or pred[] with two branches) picks a
    /// branch, which gets the matching entry of `operands`.
    pub fn conditional(
        &mut self,
        index: InstrId,
        branches: &[CompId],
        operands: &[InstrId],
    ) -> Result<InstrId, BuildError> {
        let ops: Vec<InstrId> = std::iter::once(index)
            .chain(operands.iter().copied())
            .collect();
        self.add_attrs(Opcode::Conditional, &ops, |a| {
            a.branch_computations = branches.to_vec();
        })
    }
}

#[cfg(test)]
mod tests;
