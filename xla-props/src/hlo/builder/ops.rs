//! One typed method per op of [`ComputationBuilder`], in the opcode
//! table's order (structure, elementwise, conversion, shape, indexing,
//! reduction, contraction, control): each names its operands and
//! attributes, and `add` infers the result's shape.

use super::ComputationBuilder;
use crate::hlo::builder::BuildError;
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::{
    Attrs, CompId, ComparisonDirection, ComparisonType, ConstantData, ConvDims, DotDims,
    FusionKind, GatherDims, InstrId, PadDim, ScatterDims, SliceDim, WindowDim,
};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

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
        if op.category() != crate::hlo::opcode::Category::ElementwiseUnary {
            return Err(self.invalid(format!("{op} is not an elementwise unary op")));
        }
        self.add(op, &[x], Attrs::default(), None)
    }

    /// An elementwise binary op (`add`, `atan2`, ...).
    pub fn binary(&mut self, op: Opcode, a: InstrId, b: InstrId) -> Result<InstrId, BuildError> {
        if op.category() != crate::hlo::opcode::Category::ElementwiseBinary {
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
