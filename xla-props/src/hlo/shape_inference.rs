//! Shape inference: the result shape of an instruction from its operand
//! shapes, its attributes and the computations it calls, following XLA's
//! `ShapeInference` (`xla/service/shape_inference.cc`) and the operation
//! semantics.
//!
//! Some results cannot be derived from operands and attributes alone (the
//! dims of a `reshape` or `broadcast`, the dtype of a `convert`, the shape of
//! a `parameter`). For those the *declared* shape supplies what is missing and
//! inference checks that it is legal (element counts, dimension mappings).
//! Parse-only ops are accepted as declared.
//!
//! Arithmetic on attribute values is done in `i128`, so hostile attributes
//! (huge strides, paddings) give an error, never an overflow panic.

use std::collections::HashSet;
use std::fmt;

use super::dtype::ElementType;
use super::ir::{
    Attrs, CompId, ComparisonType, Computation, ConstantData, ConvDims, DotDims, GatherDims,
    Instruction, Module, PadDim, ScatterDims, WindowDim,
};
use super::opcode::{Category, Opcode};
use super::shape::{ArrayShape, Shape};

/// What kind of problem shape inference found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeErrorKind {
    /// The number of operands does not fit the opcode.
    Arity,
    /// An operand has the wrong shape or element type.
    Operand,
    /// An attribute value is out of range or inconsistent.
    Attribute,
    /// A required attribute is absent.
    MissingAttribute,
    /// A called computation has the wrong signature (or does not exist).
    Callee,
    /// The op needs the declared result shape (reshape, convert, ...) and none was given.
    NeedsDeclaredShape,
}

/// Why a shape could not be inferred. The message is lowercase and names the op.
///
/// ```
/// use xla_props::hlo::{infer, Attrs, ElementType, Opcode, Shape, ShapeErrorKind};
/// let a = Shape::array(ElementType::F32, vec![2]);
/// let b = Shape::array(ElementType::F32, vec![3]);
/// let err = infer(Opcode::Add, &[&a, &b], &Attrs::default(), &[], None).unwrap_err();
/// assert_eq!(err.kind, ShapeErrorKind::Operand);
/// assert!(err.message.contains("add"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ShapeError {
    /// The class of the problem.
    pub kind: ShapeErrorKind,
    /// A lowercase, one-line description.
    pub message: String,
}

impl ShapeError {
    /// A new error.
    pub fn new(kind: ShapeErrorKind, message: impl Into<String>) -> ShapeError {
        ShapeError {
            kind,
            message: message.into(),
        }
    }
}

type Result<T> = std::result::Result<T, ShapeError>;

fn operand_err(op: Opcode, msg: impl fmt::Display) -> ShapeError {
    ShapeError::new(ShapeErrorKind::Operand, format!("{op}: {msg}"))
}

fn attr_err(op: Opcode, msg: impl fmt::Display) -> ShapeError {
    ShapeError::new(ShapeErrorKind::Attribute, format!("{op}: {msg}"))
}

fn callee_err(op: Opcode, msg: impl fmt::Display) -> ShapeError {
    ShapeError::new(ShapeErrorKind::Callee, format!("{op}: {msg}"))
}

fn missing(op: Opcode, attr: &str) -> ShapeError {
    ShapeError::new(
        ShapeErrorKind::MissingAttribute,
        format!("{op}: missing required attribute `{attr}`"),
    )
}

fn req<'a, T>(op: Opcode, v: &'a Option<T>, attr: &str) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| missing(op, attr))
}

/// The signature of a computation: parameter shapes by parameter number, and the root shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Parameter shapes, ordered by parameter number.
    pub params: Vec<Shape>,
    /// The root instruction's shape.
    pub result: Shape,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        write!(f, ") -> {}", self.result)
    }
}

/// The signature of computation `id` of `computations`, or an error when it
/// does not exist, has no valid root, or its parameters are not numbered `0..n`.
pub fn signature(computations: &[Computation], id: CompId) -> Result<Signature> {
    let comp = computations.get(id.index()).ok_or_else(|| {
        ShapeError::new(
            ShapeErrorKind::Callee,
            format!("called computation #{} does not exist", id.0),
        )
    })?;
    let root = comp.instructions.get(comp.root.index()).ok_or_else(|| {
        ShapeError::new(
            ShapeErrorKind::Callee,
            format!("called computation '{}' has no valid root", comp.name),
        )
    })?;
    let mut params: Vec<(i64, &Shape)> = comp
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .map(|i| (i.attrs.parameter_number.unwrap_or(-1), &i.shape))
        .collect();
    params.sort_by_key(|p| p.0);
    for (k, (n, _)) in params.iter().enumerate() {
        if *n != k as i64 {
            return Err(ShapeError::new(
                ShapeErrorKind::Callee,
                format!(
                    "called computation '{}' has parameters not numbered 0..{}",
                    comp.name,
                    params.len()
                ),
            ));
        }
    }
    Ok(Signature {
        params: params.into_iter().map(|(_, s)| s.clone()).collect(),
        result: root.shape.clone(),
    })
}

fn callee_sig(op: Opcode, comps: &[Computation], id: CompId) -> Result<(Signature, &str)> {
    let sig = signature(comps, id).map_err(|e| callee_err(op, e.message))?;
    let name = comps.get(id.index()).map_or("", |c| c.name.as_str());
    Ok((sig, name))
}

/// The default comparison type for an element type (`FLOAT` for floats,
/// `SIGNED` for signed integers, `UNSIGNED` for unsigned integers and pred).
///
/// ```
/// use xla_props::hlo::{default_comparison_type, ComparisonType, ElementType};
/// assert_eq!(default_comparison_type(ElementType::S8), ComparisonType::Signed);
/// ```
pub fn default_comparison_type(dtype: ElementType) -> ComparisonType {
    if dtype.is_float() || dtype.is_complex() {
        ComparisonType::Float
    } else if dtype.is_signed_int() {
        ComparisonType::Signed
    } else {
        ComparisonType::Unsigned
    }
}

/// Infers the shape of `instr` of computation `comp` in `module`, taking the
/// operand shapes as declared and using `instr.shape` where the op needs the
/// declared result shape (see the module docs).
pub fn infer_shape(module: &Module, comp: &Computation, instr: &Instruction) -> Result<Shape> {
    let mut operands = Vec::with_capacity(instr.operands.len());
    for (k, id) in instr.operands.iter().enumerate() {
        let o = comp.instructions.get(id.index()).ok_or_else(|| {
            operand_err(
                instr.opcode,
                format!("operand {k} refers to missing instruction #{}", id.0),
            )
        })?;
        operands.push(&o.shape);
    }
    infer(
        instr.opcode,
        &operands,
        &instr.attrs,
        &module.computations,
        Some(&instr.shape),
    )
}

/// Infers the result shape of `opcode` applied to `operands` with `attrs`.
///
/// `computations` are the module's computations (for ops that call one:
/// `CompId`s in `attrs` index into it). `declared` is the declared result
/// shape, needed by ops whose result is not determined by their operands
/// (parameter, constant, iota, broadcast, reshape, convert, bitcast-convert,
/// bitcast, parse-only ops); for dot and convolution it may choose the result
/// element type. The result carries no layouts.
///
/// ```
/// use xla_props::hlo::{infer, Attrs, ElementType, Opcode, Shape};
/// let a = Shape::array(ElementType::F32, vec![2, 3]);
/// let mut attrs = Attrs::default();
/// attrs.dimensions = Some(vec![1, 0]);
/// let t = infer(Opcode::Transpose, &[&a], &attrs, &[], None).unwrap();
/// assert_eq!(t, Shape::array(ElementType::F32, vec![3, 2]));
/// ```
pub fn infer(
    opcode: Opcode,
    operands: &[&Shape],
    attrs: &Attrs,
    computations: &[Computation],
    declared: Option<&Shape>,
) -> Result<Shape> {
    if !opcode.arity().accepts(operands.len()) {
        return Err(ShapeError::new(
            ShapeErrorKind::Arity,
            format!(
                "{opcode}: wrong number of operands: {} (expected {})",
                operands.len(),
                arity_text(opcode)
            ),
        ));
    }
    Infer {
        op: opcode,
        operands,
        attrs,
        comps: computations,
        declared,
    }
    .run()
}

/// `2`, or `at least 1`.
pub(crate) fn arity_text(op: Opcode) -> String {
    match op.arity() {
        super::opcode::Arity::Fixed(k) => k.to_string(),
        super::opcode::Arity::AtLeast(k) => format!("at least {k}"),
    }
}

struct Infer<'a> {
    op: Opcode,
    operands: &'a [&'a Shape],
    attrs: &'a Attrs,
    comps: &'a [Computation],
    declared: Option<&'a Shape>,
}

fn dims_text(d: &[i64]) -> String {
    let v: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("{{{}}}", v.join(","))
}

fn to_i64(op: Opcode, v: i128) -> Result<i64> {
    i64::try_from(v).map_err(|_| attr_err(op, "dimension size overflows"))
}

/// The number of elements of a window over `dim` (XLA's `StridedBound` on the padded, dilated base).
fn window_output(op: Opcode, k: usize, dim: i64, w: &WindowDim) -> Result<i64> {
    if w.size <= 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0 {
        return Err(attr_err(
            op,
            format!(
                "window dimension {k}: size, stride and dilations must be positive (size={} stride={} lhs_dilate={} rhs_dilate={})",
                w.size, w.stride, w.base_dilation, w.window_dilation
            ),
        ));
    }
    let (dim, bd, wd) = (
        dim as i128,
        w.base_dilation as i128,
        w.window_dilation as i128,
    );
    let dilated_base = if dim == 0 { 0 } else { (dim - 1) * bd + 1 };
    let padded = dilated_base + w.pad_low as i128 + w.pad_high as i128;
    if padded < 0 {
        return Err(attr_err(
            op,
            format!("window dimension {k}: padded base size {padded} is negative"),
        ));
    }
    let dilated_window = (w.size as i128 - 1) * wd + 1;
    let out = if padded < dilated_window {
        0
    } else {
        (padded - dilated_window) / w.stride as i128 + 1
    };
    to_i64(op, out)
}

impl<'a> Infer<'a> {
    fn arr(&self, k: usize) -> Result<&'a ArrayShape> {
        let s = self
            .operands
            .get(k)
            .ok_or_else(|| operand_err(self.op, format!("missing operand {k}")))?;
        s.as_array()
            .ok_or_else(|| operand_err(self.op, format!("operand {k} must be an array, got {s}")))
    }

    fn declared(&self) -> Result<&'a Shape> {
        self.declared.ok_or_else(|| {
            ShapeError::new(
                ShapeErrorKind::NeedsDeclaredShape,
                format!("{}: the result shape must be given", self.op),
            )
        })
    }

    fn declared_array(&self) -> Result<&'a ArrayShape> {
        let d = self.declared()?;
        d.as_array()
            .ok_or_else(|| operand_err(self.op, format!("result must be an array, declared {d}")))
    }

    fn dim_index(&self, what: &str, d: i64, rank: usize) -> Result<usize> {
        if d < 0 || d as u64 >= rank as u64 {
            Err(attr_err(
                self.op,
                format!("{what} {d} out of range for rank {rank}"),
            ))
        } else {
            Ok(d as usize)
        }
    }

    /// Checks each index is in `0..rank` and distinct (and ascending when `sorted`).
    fn dim_set(&self, what: &str, ds: &[i64], rank: usize, sorted: bool) -> Result<Vec<usize>> {
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(ds.len());
        for (k, &d) in ds.iter().enumerate() {
            let i = self.dim_index(what, d, rank)?;
            if !seen.insert(i) {
                return Err(attr_err(
                    self.op,
                    format!("{what} {} repeats dimension {d}", dims_text(ds)),
                ));
            }
            if sorted && k > 0 && ds[k - 1] > d {
                return Err(attr_err(
                    self.op,
                    format!("{what} {} must be sorted", dims_text(ds)),
                ));
            }
            out.push(i);
        }
        Ok(out)
    }

    fn run(&self) -> Result<Shape> {
        use Opcode as O;
        let op = self.op;
        match op.category() {
            Category::ParseOnly => return Ok(self.declared()?.without_layouts()),
            Category::ElementwiseUnary => return self.unary(),
            Category::ElementwiseBinary => return self.binary(),
            _ => {}
        }
        match op {
            O::Parameter => {
                req(op, &self.attrs.parameter_number, "parameter_number")?;
                Ok(self.declared()?.without_layouts())
            }
            O::Constant => self.constant(),
            O::Iota => self.iota(),
            O::Tuple => Ok(Shape::Tuple(
                self.operands.iter().map(|s| s.without_layouts()).collect(),
            )),
            O::GetTupleElement => {
                let index = *req(op, &self.attrs.index, "index")?;
                let t = self.operands[0].as_tuple().ok_or_else(|| {
                    operand_err(
                        op,
                        format!("operand must be a tuple, got {}", self.operands[0]),
                    )
                })?;
                usize::try_from(index)
                    .ok()
                    .and_then(|i| t.get(i))
                    .map(Shape::without_layouts)
                    .ok_or_else(|| {
                        attr_err(
                            op,
                            format!("index {index} out of range for a tuple of {}", t.len()),
                        )
                    })
            }
            O::Copy => Ok(self.operands[0].without_layouts()),
            O::Bitcast => self.bitcast(),
            O::Compare => self.compare(),
            O::Select => self.select(),
            O::Clamp => self.clamp(),
            O::Convert => self.convert(),
            O::BitcastConvert => self.bitcast_convert(),
            O::ReducePrecision => self.reduce_precision(),
            O::Broadcast => self.broadcast(),
            O::Reshape => self.reshape(),
            O::Transpose => self.transpose(),
            O::Slice => self.slice(),
            O::Concatenate => self.concatenate(),
            O::Pad => self.pad(),
            O::Reverse => {
                let a = self.arr(0)?;
                let dims = req(op, &self.attrs.dimensions, "dimensions")?;
                self.dim_set("dimensions", dims, a.rank(), false)?;
                Ok(Shape::Array(ArrayShape::new(a.dtype, a.dims.clone())))
            }
            O::DynamicSlice => self.dynamic_slice(),
            O::DynamicUpdateSlice => self.dynamic_update_slice(),
            O::Gather => self.gather(),
            O::Scatter => self.scatter(),
            O::Reduce => self.reduce(),
            O::ReduceWindow => self.reduce_window(),
            O::SelectAndScatter => self.select_and_scatter(),
            O::Sort => self.sort(),
            O::Map => self.map(),
            O::Dot => self.dot(),
            O::Convolution => self.convolution(),
            O::Fusion | O::Call => self.call(),
            O::While => self.while_loop(),
            O::Conditional => self.conditional(),
            _ => Ok(self.declared()?.without_layouts()),
        }
    }

    // ---- elementwise ----

    fn unary(&self) -> Result<Shape> {
        use Opcode as O;
        let op = self.op;
        let a = self.arr(0)?;
        let t = a.dtype;
        let (ok, expected) = match op {
            O::Abs | O::Sign => (
                t.is_signed_int() || t.is_float() || t.is_complex(),
                "signed integer, float or complex",
            ),
            O::Negate => (
                t.is_integer() || t.is_float() || t.is_complex(),
                "integer, float or complex",
            ),
            O::Not => (t.is_pred() || t.is_integer(), "pred or integer"),
            O::Popcnt | O::CountLeadingZeros => (t.is_integer(), "integer"),
            O::Ceil
            | O::Floor
            | O::RoundNearestAfz
            | O::RoundNearestEven
            | O::IsFinite
            | O::Erf => (t.is_float(), "float"),
            _ => (t.is_float() || t.is_complex(), "float or complex"),
        };
        if !ok {
            return Err(operand_err(
                op,
                format!("expects {expected} elements, got {a}"),
            ));
        }
        let dtype = match (op, t) {
            (O::IsFinite, _) => ElementType::Pred,
            (O::Abs, ElementType::C64) => ElementType::F32,
            (O::Abs, ElementType::C128) => ElementType::F64,
            _ => t,
        };
        Ok(Shape::array(dtype, a.dims.clone()))
    }

    fn same_array_shapes(&self, a: &ArrayShape, b: &ArrayShape) -> Result<()> {
        if a.dtype != b.dtype || a.dims != b.dims {
            return Err(operand_err(
                self.op,
                format!("operands must have the same shape, got {a} and {b}"),
            ));
        }
        Ok(())
    }

    fn binary(&self) -> Result<Shape> {
        use Opcode as O;
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        self.same_array_shapes(a, b)?;
        let t = a.dtype;
        let (ok, expected) = match op {
            O::Add | O::Multiply | O::Maximum | O::Minimum => (true, ""),
            O::Subtract | O::Divide | O::Remainder | O::Power => (
                t.is_integer() || t.is_float() || t.is_complex(),
                "integer, float or complex",
            ),
            O::Atan2 => (t.is_float() || t.is_complex(), "float or complex"),
            O::And | O::Or | O::Xor => (t.is_pred() || t.is_integer(), "pred or integer"),
            _ => (t.is_integer(), "integer"),
        };
        if !ok {
            return Err(operand_err(
                op,
                format!("expects {expected} elements, got {a}"),
            ));
        }
        Ok(Shape::array(t, a.dims.clone()))
    }

    fn compare(&self) -> Result<Shape> {
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        self.same_array_shapes(a, b)?;
        req(op, &self.attrs.direction, "direction")?;
        if let Some(ty) = self.attrs.comparison_type {
            let t = a.dtype;
            let ok = match ty {
                ComparisonType::Float | ComparisonType::TotalOrder => {
                    t.is_float() || t.is_complex()
                }
                ComparisonType::Signed => t.is_signed_int(),
                ComparisonType::Unsigned => t.is_unsigned_int() || t.is_pred(),
            };
            if !ok {
                return Err(attr_err(
                    op,
                    format!("comparison type {} does not apply to {t}", ty.name()),
                ));
            }
        }
        Ok(Shape::array(ElementType::Pred, a.dims.clone()))
    }

    fn select(&self) -> Result<Shape> {
        let (p, t, f) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        self.same_array_shapes(t, f)?;
        if p.dtype != ElementType::Pred {
            return Err(operand_err(
                self.op,
                format!("predicate must be pred, got {p}"),
            ));
        }
        if p.rank() != 0 && p.dims != t.dims {
            return Err(operand_err(
                self.op,
                format!("predicate {p} must be a scalar or have the dims of {t}"),
            ));
        }
        Ok(Shape::array(t.dtype, t.dims.clone()))
    }

    fn clamp(&self) -> Result<Shape> {
        let (lo, x, hi) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        for bound in [lo, hi] {
            if bound.dtype != x.dtype || (bound.rank() != 0 && bound.dims != x.dims) {
                return Err(operand_err(
                    self.op,
                    format!("bound {bound} must be a scalar or the shape of the operand {x}"),
                ));
            }
        }
        if x.dtype.is_complex() {
            return Err(operand_err(self.op, format!("complex operand {x}")));
        }
        Ok(Shape::array(x.dtype, x.dims.clone()))
    }

    // ---- conversions ----

    fn convert(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        if a.dtype.is_complex() && !d.dtype.is_complex() {
            return Err(operand_err(
                self.op,
                format!("cannot convert complex {a} to real {}", d.dtype),
            ));
        }
        Ok(Shape::array(d.dtype, a.dims.clone()))
    }

    fn bitcast_convert(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let to = self.declared_array()?.dtype;
        if a.dtype.is_complex() != to.is_complex() {
            return Err(operand_err(
                op,
                format!("cannot bitcast-convert between complex and real ({a} to {to})"),
            ));
        }
        let (from_bits, to_bits) = (a.dtype.bit_width(), to.bit_width());
        let mut dims = a.dims.clone();
        if from_bits > to_bits {
            // wider input: a new minor dimension of from/to elements
            if from_bits % to_bits != 0 {
                return Err(operand_err(
                    op,
                    format!("{from_bits} bits do not split into {to}"),
                ));
            }
            dims.push((from_bits / to_bits) as i64);
        } else if from_bits < to_bits {
            // narrower input: the minor dimension must hold exactly to/from elements
            let ratio = (to_bits / from_bits) as i64;
            if to_bits % from_bits != 0 || dims.last() != Some(&ratio) {
                return Err(operand_err(
                    op,
                    format!("bitcast-convert of {a} to {to} needs a minor dimension of {ratio}"),
                ));
            }
            dims.pop();
        }
        Ok(Shape::array(to, dims))
    }

    fn reduce_precision(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        if !a.dtype.is_float() {
            return Err(operand_err(op, format!("expects float elements, got {a}")));
        }
        let e = *req(op, &self.attrs.exponent_bits, "exponent_bits")?;
        let m = *req(op, &self.attrs.mantissa_bits, "mantissa_bits")?;
        if e < 1 || m < 0 {
            return Err(attr_err(
                op,
                format!("exponent_bits={e} must be at least 1 and mantissa_bits={m} at least 0"),
            ));
        }
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    fn bitcast(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        let bytes = |s: &ArrayShape| {
            s.element_count()
                .and_then(|n| n.checked_mul(s.dtype.bit_width() as u64))
        };
        if bytes(a).is_none() || bytes(a) != bytes(d) {
            return Err(operand_err(
                self.op,
                format!("bitcast of {a} to {d} changes the size in bits"),
            ));
        }
        Ok(Shape::array(d.dtype, d.dims.clone()))
    }

    // ---- structure ----

    fn constant(&self) -> Result<Shape> {
        let op = self.op;
        let data = req(op, &self.attrs.constant, "constant")?;
        let d = self.declared()?;
        check_constant(data, d).map_err(|m| attr_err(op, m))?;
        Ok(d.without_layouts())
    }

    fn iota(&self) -> Result<Shape> {
        let op = self.op;
        let dim = *req(op, &self.attrs.iota_dimension, "iota_dimension")?;
        let d = self.declared_array()?;
        self.dim_index("iota_dimension", dim, d.rank())?;
        if d.dtype.is_pred() {
            return Err(operand_err(op, "iota of pred"));
        }
        Ok(Shape::array(d.dtype, d.dims.clone()))
    }

    // ---- shape ops ----

    fn broadcast(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        // like XLA's parser, `dimensions` may be omitted when broadcasting a scalar
        let dims: &[i64] = match &self.attrs.dimensions {
            Some(d) => d,
            None if a.rank() == 0 => &[],
            None => return Err(missing(op, "dimensions")),
        };
        if dims.len() != a.rank() {
            return Err(attr_err(
                op,
                format!(
                    "dimensions {} must have one entry per operand dimension of {a}",
                    dims_text(dims)
                ),
            ));
        }
        let idx = self.dim_set("dimensions", dims, d.rank(), false)?;
        for (k, &i) in idx.iter().enumerate() {
            if d.dims[i] != a.dims[k] {
                return Err(operand_err(
                    op,
                    format!(
                        "operand dimension {k} of {a} (size {}) maps to result dimension {i} of size {}",
                        a.dims[k], d.dims[i]
                    ),
                ));
            }
        }
        Ok(Shape::array(a.dtype, d.dims.clone()))
    }

    fn reshape(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        if a.element_count().is_none() || a.element_count() != d.element_count() {
            return Err(operand_err(
                self.op,
                format!(
                    "cannot reshape {a} to dims {} (element counts differ)",
                    dims_text(&d.dims)
                ),
            ));
        }
        Ok(Shape::array(a.dtype, d.dims.clone()))
    }

    fn transpose(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let perm = req(self.op, &self.attrs.dimensions, "dimensions")?;
        if perm.len() != a.rank() {
            return Err(attr_err(
                self.op,
                format!(
                    "dimensions {} is not a permutation of the dims of {a}",
                    dims_text(perm)
                ),
            ));
        }
        let idx = self.dim_set("dimensions", perm, a.rank(), false)?;
        Ok(Shape::array(
            a.dtype,
            idx.iter().map(|&i| a.dims[i]).collect::<Vec<_>>(),
        ))
    }

    fn slice(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let s = req(op, &self.attrs.slice, "slice")?;
        if s.len() != a.rank() {
            return Err(attr_err(
                op,
                format!("slice has {} dimensions, operand {a}", s.len()),
            ));
        }
        let mut dims = Vec::with_capacity(s.len());
        for (k, sd) in s.iter().enumerate() {
            if sd.start < 0 || sd.start > sd.limit || sd.limit > a.dims[k] || sd.stride < 1 {
                return Err(attr_err(
                    op,
                    format!(
                        "slice [{}:{}:{}] is invalid for dimension {k} of {a}",
                        sd.start, sd.limit, sd.stride
                    ),
                ));
            }
            let len =
                (sd.limit as i128 - sd.start as i128 + sd.stride as i128 - 1) / sd.stride as i128;
            dims.push(to_i64(op, len)?);
        }
        Ok(Shape::array(a.dtype, dims))
    }

    fn concatenate(&self) -> Result<Shape> {
        let op = self.op;
        let dims = req(op, &self.attrs.dimensions, "dimensions")?;
        let first = self.arr(0)?;
        if dims.len() != 1 {
            return Err(attr_err(
                op,
                format!("dimensions {} must name one dimension", dims_text(dims)),
            ));
        }
        let d = self.dim_index("dimension", dims[0], first.rank())?;
        let mut total: i128 = 0;
        for k in 0..self.operands.len() {
            let a = self.arr(k)?;
            let same = a.dtype == first.dtype
                && a.rank() == first.rank()
                && a.dims
                    .iter()
                    .zip(&first.dims)
                    .enumerate()
                    .all(|(i, (x, y))| i == d || x == y);
            if !same {
                return Err(operand_err(
                    op,
                    format!("operand {k} {a} does not match {first} outside dimension {d}"),
                ));
            }
            total += a.dims[d] as i128;
        }
        let mut out = first.dims.clone();
        out[d] = to_i64(op, total)?;
        Ok(Shape::array(first.dtype, out))
    }

    fn pad(&self) -> Result<Shape> {
        let op = self.op;
        let (a, v) = (self.arr(0)?, self.arr(1)?);
        if v.rank() != 0 || v.dtype != a.dtype {
            return Err(operand_err(
                op,
                format!("padding value {v} must be a {}[] scalar", a.dtype),
            ));
        }
        let p: &Vec<PadDim> = req(op, &self.attrs.padding, "padding")?;
        if p.len() != a.rank() {
            return Err(attr_err(
                op,
                format!("padding has {} dimensions, operand {a}", p.len()),
            ));
        }
        let mut dims = Vec::with_capacity(p.len());
        for (k, pd) in p.iter().enumerate() {
            if pd.interior < 0 {
                return Err(attr_err(
                    op,
                    format!("negative interior padding {} in dimension {k}", pd.interior),
                ));
            }
            let n = a.dims[k] as i128;
            let size = pd.low as i128 + pd.high as i128 + n + (n - 1).max(0) * pd.interior as i128;
            if size < 0 {
                return Err(attr_err(
                    op,
                    format!("padding makes dimension {k} of {a} negative ({size})"),
                ));
            }
            dims.push(to_i64(op, size)?);
        }
        Ok(Shape::array(a.dtype, dims))
    }

    // ---- indexing ----

    fn scalar_indices(&self, from: usize, count: usize) -> Result<()> {
        let op = self.op;
        if self.operands.len() != from + count {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!(
                    "{op}: expects {count} start indices (one per dimension), got {}",
                    self.operands.len().saturating_sub(from)
                ),
            ));
        }
        let mut dtype = None;
        for k in from..from + count {
            let i = self.arr(k)?;
            if i.rank() != 0 || !i.dtype.is_integer() {
                return Err(operand_err(
                    op,
                    format!(
                        "start index {} must be an integer scalar, got {i}",
                        k - from
                    ),
                ));
            }
            if *dtype.get_or_insert(i.dtype) != i.dtype {
                return Err(operand_err(
                    op,
                    "start indices must all have the same element type",
                ));
            }
        }
        Ok(())
    }

    fn dynamic_slice(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        self.scalar_indices(1, a.rank())?;
        let sizes = req(op, &self.attrs.dynamic_slice_sizes, "dynamic_slice_sizes")?;
        if sizes.len() != a.rank() {
            return Err(attr_err(
                op,
                format!("dynamic_slice_sizes {} do not match {a}", dims_text(sizes)),
            ));
        }
        for (k, (&s, &d)) in sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || s > d {
                return Err(attr_err(
                    op,
                    format!("slice size {s} of dimension {k} is outside 0..={d}"),
                ));
            }
        }
        Ok(Shape::array(a.dtype, sizes.clone()))
    }

    fn dynamic_update_slice(&self) -> Result<Shape> {
        let op = self.op;
        let (a, u) = (self.arr(0)?, self.arr(1)?);
        if u.dtype != a.dtype
            || u.rank() != a.rank()
            || u.dims.iter().zip(&a.dims).any(|(x, y)| x > y)
        {
            return Err(operand_err(op, format!("update {u} does not fit into {a}")));
        }
        self.scalar_indices(2, a.rank())?;
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    fn gather(&self) -> Result<Shape> {
        let op = self.op;
        let (a, ind) = (self.arr(0)?, self.arr(1)?);
        let g: &GatherDims = req(op, &self.attrs.gather_dims, "gather dimension numbers")?;
        if !ind.dtype.is_integer() {
            return Err(operand_err(
                op,
                format!("start indices must be integers, got {ind}"),
            ));
        }
        let (orank, irank) = (a.rank(), ind.rank());
        let ivd = g.index_vector_dim;
        if ivd < 0 || ivd as u64 > irank as u64 {
            return Err(attr_err(
                op,
                format!("index_vector_dim {ivd} out of range for indices {ind}"),
            ));
        }
        let ivd = ivd as usize;
        let mut expanded = ind.dims.clone();
        if ivd == irank {
            expanded.push(1);
        }
        let index_len = expanded[ivd];
        let batch: Vec<i64> = expanded
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != ivd)
            .map(|(_, &d)| d)
            .collect();
        let out_rank = g.offset_dims.len() + batch.len();
        self.dim_set("offset_dims", &g.offset_dims, out_rank, true)?;
        let collapsed =
            self.dim_set("collapsed_slice_dims", &g.collapsed_slice_dims, orank, true)?;
        let obatch = self.dim_set(
            "operand_batching_dims",
            &g.operand_batching_dims,
            orank,
            true,
        )?;
        let sbatch = self.dim_set(
            "start_indices_batching_dims",
            &g.start_indices_batching_dims,
            irank,
            false,
        )?;
        let sim = self.dim_set("start_index_map", &g.start_index_map, orank, false)?;
        if sim.len() as i64 != index_len {
            return Err(attr_err(
                op,
                format!("start_index_map {} must have {index_len} entries (the index vector size of {ind})", dims_text(&g.start_index_map)),
            ));
        }
        if sbatch.contains(&ivd) {
            return Err(attr_err(
                op,
                "start_indices_batching_dims contains index_vector_dim",
            ));
        }
        if obatch.len() != sbatch.len() {
            return Err(attr_err(
                op,
                "operand_batching_dims and start_indices_batching_dims differ in length",
            ));
        }
        if collapsed.iter().any(|d| obatch.contains(d)) || sim.iter().any(|d| obatch.contains(d)) {
            return Err(attr_err(
                op,
                "operand_batching_dims overlap collapsed_slice_dims or start_index_map",
            ));
        }
        if g.offset_dims.len() + collapsed.len() + obatch.len() != orank {
            return Err(attr_err(
                op,
                format!("offset_dims, collapsed_slice_dims and operand_batching_dims must cover the {orank} operand dimensions"),
            ));
        }
        if g.slice_sizes.len() != orank {
            return Err(attr_err(
                op,
                format!("slice_sizes {} do not match {a}", dims_text(&g.slice_sizes)),
            ));
        }
        for (k, (&s, &d)) in g.slice_sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || s > d {
                return Err(attr_err(
                    op,
                    format!("slice size {s} of dimension {k} is outside 0..={d}"),
                ));
            }
            if (collapsed.contains(&k) || obatch.contains(&k)) && s > 1 {
                return Err(attr_err(op, format!("collapsed or batching dimension {k} must have slice size at most 1, got {s}")));
            }
        }
        for (&o, &s) in obatch.iter().zip(&sbatch) {
            if a.dims[o] != ind.dims[s] {
                return Err(operand_err(op, format!("operand batching dimension {o} and indices batching dimension {s} differ in size")));
            }
        }
        let offsets: Vec<i64> = (0..orank)
            .filter(|k| !collapsed.contains(k) && !obatch.contains(k))
            .map(|k| g.slice_sizes[k])
            .collect();
        let (mut oi, mut bi) = (offsets.iter(), batch.iter());
        let mut dims = Vec::with_capacity(out_rank);
        for i in 0..out_rank {
            let next = if g.offset_dims.contains(&(i as i64)) {
                oi.next()
            } else {
                bi.next()
            };
            dims.push(*next.ok_or_else(|| attr_err(op, "inconsistent gather dimension numbers"))?);
        }
        Ok(Shape::array(a.dtype, dims))
    }

    fn scatter(&self) -> Result<Shape> {
        let op = self.op;
        let n_ops = self.operands.len();
        if n_ops.is_multiple_of(2) {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!(
                    "{op}: expects N inputs, indices and N updates (an odd count), got {n_ops}"
                ),
            ));
        }
        let n = (n_ops - 1) / 2;
        let sd: &ScatterDims = req(op, &self.attrs.scatter_dims, "scatter dimension numbers")?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let a = self.arr(0)?;
        let ind = self.arr(n)?;
        let u0 = self.arr(n + 1)?;
        for k in 0..n {
            let (x, u) = (self.arr(k)?, self.arr(n + 1 + k)?);
            if x.dims != a.dims || u.dims != u0.dims || u.dtype != x.dtype {
                return Err(operand_err(op, format!("input {k} {x} and update {u} do not agree with input 0 {a} and update 0 {u0}")));
            }
        }
        if !ind.dtype.is_integer() {
            return Err(operand_err(
                op,
                format!("scatter indices must be integers, got {ind}"),
            ));
        }
        let (orank, irank, urank) = (a.rank(), ind.rank(), u0.rank());
        let ivd = sd.index_vector_dim;
        if ivd < 0 || ivd as u64 > irank as u64 {
            return Err(attr_err(
                op,
                format!("index_vector_dim {ivd} out of range for indices {ind}"),
            ));
        }
        let ivd = ivd as usize;
        let mut expanded = ind.dims.clone();
        if ivd == irank {
            expanded.push(1);
        }
        let index_len = expanded[ivd];
        let scatter_dims: Vec<i64> = expanded
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != ivd)
            .map(|(_, &d)| d)
            .collect();
        let uwd = self.dim_set("update_window_dims", &sd.update_window_dims, urank, true)?;
        let inserted = self.dim_set(
            "inserted_window_dims",
            &sd.inserted_window_dims,
            orank,
            true,
        )?;
        let ibatch = self.dim_set("input_batching_dims", &sd.input_batching_dims, orank, true)?;
        let sbatch = self.dim_set(
            "scatter_indices_batching_dims",
            &sd.scatter_indices_batching_dims,
            irank,
            false,
        )?;
        let map = self.dim_set(
            "scatter_dims_to_operand_dims",
            &sd.scatter_dims_to_operand_dims,
            orank,
            false,
        )?;
        if map.len() as i64 != index_len {
            return Err(attr_err(op, format!("scatter_dims_to_operand_dims must have {index_len} entries (the index vector size of {ind})")));
        }
        if sbatch.contains(&ivd) {
            return Err(attr_err(
                op,
                "scatter_indices_batching_dims contains index_vector_dim",
            ));
        }
        if ibatch.len() != sbatch.len() {
            return Err(attr_err(
                op,
                "input_batching_dims and scatter_indices_batching_dims differ in length",
            ));
        }
        if inserted.iter().any(|d| ibatch.contains(d)) || map.iter().any(|d| ibatch.contains(d)) {
            return Err(attr_err(
                op,
                "input_batching_dims overlap inserted_window_dims or scatter_dims_to_operand_dims",
            ));
        }
        if uwd.len() + inserted.len() + ibatch.len() != orank {
            return Err(attr_err(op, format!("update_window_dims, inserted_window_dims and input_batching_dims must cover the {orank} input dimensions")));
        }
        if urank != uwd.len() + scatter_dims.len() {
            return Err(operand_err(
                op,
                format!(
                    "updates {u0} must have rank {}",
                    uwd.len() + scatter_dims.len()
                ),
            ));
        }
        let window_bounds: Vec<i64> = (0..orank)
            .filter(|k| !inserted.contains(k) && !ibatch.contains(k))
            .map(|k| a.dims[k])
            .collect();
        let (mut wi, mut si) = (window_bounds.iter(), scatter_dims.iter());
        for (k, &ud) in u0.dims.iter().enumerate() {
            if uwd.contains(&k) {
                let bound = *wi
                    .next()
                    .ok_or_else(|| attr_err(op, "inconsistent scatter dimension numbers"))?;
                if ud > bound {
                    return Err(operand_err(
                        op,
                        format!("update window dimension {k} of {u0} exceeds input bound {bound}"),
                    ));
                }
            } else {
                let want = *si
                    .next()
                    .ok_or_else(|| attr_err(op, "inconsistent scatter dimension numbers"))?;
                if ud != want {
                    return Err(operand_err(op, format!("update scatter dimension {k} of {u0} must be {want} (from indices {ind})")));
                }
            }
        }
        for (&o, &s) in ibatch.iter().zip(&sbatch) {
            if a.dims[o] != ind.dims[s] {
                return Err(operand_err(op, format!("input batching dimension {o} and indices batching dimension {s} differ in size")));
            }
        }
        let dtypes: Vec<ElementType> = (0..n)
            .map(|k| self.arr(k).map(|x| x.dtype))
            .collect::<Result<_>>()?;
        self.check_reducer(to_apply, &dtypes, &dtypes)?;
        Ok(self.maybe_tuple(
            (0..n)
                .map(|k| self.arr(k).map(|x| Shape::array(x.dtype, x.dims.clone())))
                .collect::<Result<_>>()?,
        ))
    }

    fn maybe_tuple(&self, mut shapes: Vec<Shape>) -> Shape {
        if shapes.len() == 1 {
            shapes.pop().unwrap_or(Shape::Tuple(Vec::new()))
        } else {
            Shape::Tuple(shapes)
        }
    }

    // ---- reductions ----

    /// A reducer takes N accumulators then N inputs (all scalars) and returns N accumulators
    /// (a scalar when N is 1, else a tuple). Inputs may differ from accumulators in float precision.
    fn check_reducer(&self, id: CompId, acc: &[ElementType], inputs: &[ElementType]) -> Result<()> {
        let op = self.op;
        let (sig, name) = callee_sig(op, self.comps, id)?;
        let n = acc.len();
        let bad = |why: String| callee_err(op, format!("reducer '{name}' {sig}: {why}"));
        if sig.params.len() != 2 * n {
            return Err(bad(format!("expected {} scalar parameters", 2 * n)));
        }
        for (k, p) in sig.params.iter().enumerate() {
            let want = if k < n { acc[k] } else { inputs[k - n] };
            let ok = p.as_array().is_some_and(|a| {
                a.rank() == 0
                    && (a.dtype == want || (k >= n && a.dtype.is_float() && want.is_float()))
            });
            if !ok {
                return Err(bad(format!("parameter {k} must be {want}[]")));
            }
        }
        let ret_ok = if n == 1 {
            sig.result.compatible(&Shape::scalar(acc[0]))
        } else {
            sig.result.compatible(&Shape::Tuple(
                acc.iter().map(|&t| Shape::scalar(t)).collect(),
            ))
        };
        if !ret_ok {
            return Err(bad(format!(
                "must return the accumulator type{}",
                if n == 1 { "" } else { "s as a tuple" }
            )));
        }
        Ok(())
    }

    /// Splits 2N operands into N inputs (same dims) and N scalar inits; returns (inputs, init dtypes).
    fn inputs_and_inits(&self) -> Result<(Vec<&'a ArrayShape>, Vec<ElementType>)> {
        let op = self.op;
        let total = self.operands.len();
        if !total.is_multiple_of(2) {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!("{op}: expects N inputs and N init values (an even count), got {total}"),
            ));
        }
        let n = total / 2;
        let mut inputs = Vec::with_capacity(n);
        let mut inits = Vec::with_capacity(n);
        for k in 0..n {
            let (x, init) = (self.arr(k)?, self.arr(n + k)?);
            if x.dims != self.arr(0)?.dims {
                return Err(operand_err(
                    op,
                    format!("input {k} {x} and input 0 {} differ in dims", self.arr(0)?),
                ));
            }
            if init.rank() != 0 {
                return Err(operand_err(
                    op,
                    format!("init value {k} must be a scalar, got {init}"),
                ));
            }
            inputs.push(x);
            inits.push(init.dtype);
        }
        Ok((inputs, inits))
    }

    fn reduce(&self) -> Result<Shape> {
        let op = self.op;
        let (inputs, inits) = self.inputs_and_inits()?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let dims = req(op, &self.attrs.dimensions, "dimensions")?;
        let rank = inputs[0].rank();
        let reduced = self.dim_set("dimensions", dims, rank, false)?;
        let in_types: Vec<ElementType> = inputs.iter().map(|x| x.dtype).collect();
        self.check_reducer(to_apply, &inits, &in_types)?;
        let kept: Vec<i64> = (0..rank)
            .filter(|k| !reduced.contains(k))
            .map(|k| inputs[0].dims[k])
            .collect();
        Ok(self.maybe_tuple(
            inits
                .iter()
                .map(|&t| Shape::array(t, kept.clone()))
                .collect(),
        ))
    }

    fn windowed(&self, a: &ArrayShape, window: &[WindowDim]) -> Result<Vec<i64>> {
        if window.len() != a.rank() {
            return Err(attr_err(
                self.op,
                format!("window has {} dimensions, operand {a}", window.len()),
            ));
        }
        a.dims
            .iter()
            .zip(window)
            .enumerate()
            .map(|(k, (&d, w))| window_output(self.op, k, d, w))
            .collect()
    }

    fn reduce_window(&self) -> Result<Shape> {
        let op = self.op;
        let (inputs, inits) = self.inputs_and_inits()?;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let window = req(op, &self.attrs.window, "window")?;
        let dims = self.windowed(inputs[0], window)?;
        let in_types: Vec<ElementType> = inputs.iter().map(|x| x.dtype).collect();
        self.check_reducer(to_apply, &inits, &in_types)?;
        Ok(self.maybe_tuple(
            inits
                .iter()
                .map(|&t| Shape::array(t, dims.clone()))
                .collect(),
        ))
    }

    fn select_and_scatter(&self) -> Result<Shape> {
        let op = self.op;
        let (a, src, init) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        let window = req(op, &self.attrs.window, "window")?;
        let select = *req(op, &self.attrs.select, "select")?;
        let scatter = *req(op, &self.attrs.scatter, "scatter")?;
        if init.rank() != 0 || init.dtype != src.dtype {
            return Err(operand_err(
                op,
                format!("init value {init} must be a {}[] scalar", src.dtype),
            ));
        }
        if window
            .iter()
            .any(|w| w.base_dilation != 1 || w.window_dilation != 1)
        {
            return Err(attr_err(op, "window dilation is not allowed"));
        }
        let out = self.windowed(a, window)?;
        if src.dims != out {
            return Err(operand_err(
                op,
                format!(
                    "source {src} must have the windowed dims {} of {a}",
                    dims_text(&out)
                ),
            ));
        }
        let (sel, name) = callee_sig(op, self.comps, select)?;
        let t = Shape::scalar(a.dtype);
        if sel.params.len() != 2
            || !sel.params.iter().all(|p| p.compatible(&t))
            || !sel.result.compatible(&Shape::scalar(ElementType::Pred))
        {
            return Err(callee_err(
                op,
                format!("select '{name}' {sel} must be ({t}, {t}) -> pred[]"),
            ));
        }
        let s = Shape::scalar(src.dtype);
        self.check_reducer(scatter, &[src.dtype], &[src.dtype])
            .map_err(|_| {
                callee_err(op, format!("scatter computation must be ({s}, {s}) -> {s}"))
            })?;
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    fn sort(&self) -> Result<Shape> {
        let op = self.op;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let dims = req(op, &self.attrs.dimensions, "dimensions")?;
        let first = self.arr(0)?;
        if dims.len() != 1 {
            return Err(attr_err(
                op,
                format!("dimensions {} must name one dimension", dims_text(dims)),
            ));
        }
        self.dim_index("dimension", dims[0], first.rank())?;
        let mut shapes = Vec::new();
        let mut want = Vec::new();
        for k in 0..self.operands.len() {
            let a = self.arr(k)?;
            if a.dims != first.dims {
                return Err(operand_err(
                    op,
                    format!("operand {k} {a} and operand 0 {first} differ in dims"),
                ));
            }
            shapes.push(Shape::array(a.dtype, a.dims.clone()));
            want.push(Shape::scalar(a.dtype));
            want.push(Shape::scalar(a.dtype));
        }
        let (sig, name) = callee_sig(op, self.comps, to_apply)?;
        let ok = sig.params.len() == want.len()
            && sig.params.iter().zip(&want).all(|(p, w)| p.compatible(w))
            && sig.result.compatible(&Shape::scalar(ElementType::Pred));
        if !ok {
            return Err(callee_err(
                op,
                format!(
                    "comparator '{name}' {sig} must take two scalars per operand and return pred[]"
                ),
            ));
        }
        Ok(self.maybe_tuple(shapes))
    }

    fn map(&self) -> Result<Shape> {
        let op = self.op;
        let to_apply = *req(op, &self.attrs.to_apply, "to_apply")?;
        let first = self.arr(0)?;
        let mut want = Vec::new();
        for k in 0..self.operands.len() {
            let a = self.arr(k)?;
            if a.dims != first.dims {
                return Err(operand_err(
                    op,
                    format!("operand {k} {a} and operand 0 {first} differ in dims"),
                ));
            }
            want.push(Shape::scalar(a.dtype));
        }
        if let Some(dims) = &self.attrs.dimensions {
            if !dims.iter().copied().eq(0..first.rank() as i64) {
                return Err(attr_err(
                    op,
                    format!(
                        "dimensions {} must be all dimensions in order",
                        dims_text(dims)
                    ),
                ));
            }
        }
        let (sig, name) = callee_sig(op, self.comps, to_apply)?;
        let ret = sig.result.as_array().filter(|r| r.rank() == 0);
        let ok = sig.params.len() == want.len()
            && sig.params.iter().zip(&want).all(|(p, w)| p.compatible(w));
        match ret {
            Some(r) if ok => Ok(Shape::array(r.dtype, first.dims.clone())),
            _ => Err(callee_err(op, format!("mapped computation '{name}' {sig} must take one scalar per operand and return a scalar"))),
        }
    }

    // ---- contractions ----

    /// The result dtype of dot/convolution: the declared one when given, else the wider operand type.
    fn contraction_dtype(&self, a: &ArrayShape, b: &ArrayShape) -> Result<ElementType> {
        if a.dtype != b.dtype && !(a.dtype.is_float() && b.dtype.is_float()) {
            return Err(operand_err(
                self.op,
                format!("operand element types differ: {a} and {b}"),
            ));
        }
        if let Some(d) = self.declared.and_then(Shape::as_array) {
            return Ok(d.dtype);
        }
        Ok(if a.dtype.bit_width() >= b.dtype.bit_width() {
            a.dtype
        } else {
            b.dtype
        })
    }

    fn dot(&self) -> Result<Shape> {
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        let default = DotDims::default();
        let d = self.attrs.dot_dims.as_ref().unwrap_or(&default);
        if d.lhs_batch.len() != d.rhs_batch.len()
            || d.lhs_contracting.len() != d.rhs_contracting.len()
        {
            return Err(attr_err(
                op,
                "lhs and rhs must have as many batch and contracting dimensions",
            ));
        }
        let lhs_all: Vec<i64> = d
            .lhs_batch
            .iter()
            .chain(&d.lhs_contracting)
            .copied()
            .collect();
        let rhs_all: Vec<i64> = d
            .rhs_batch
            .iter()
            .chain(&d.rhs_contracting)
            .copied()
            .collect();
        let l = self.dim_set(
            "lhs batch and contracting dimensions",
            &lhs_all,
            a.rank(),
            false,
        )?;
        let r = self.dim_set(
            "rhs batch and contracting dimensions",
            &rhs_all,
            b.rank(),
            false,
        )?;
        for (&i, &j) in l.iter().zip(&r) {
            if a.dims[i] != b.dims[j] {
                return Err(operand_err(
                    op,
                    format!("lhs dimension {i} of {a} and rhs dimension {j} of {b} differ in size"),
                ));
            }
        }
        let dtype = self.contraction_dtype(a, b)?;
        let mut dims: Vec<i64> = l[..d.lhs_batch.len()].iter().map(|&i| a.dims[i]).collect();
        dims.extend((0..a.rank()).filter(|k| !l.contains(k)).map(|k| a.dims[k]));
        dims.extend((0..b.rank()).filter(|k| !r.contains(k)).map(|k| b.dims[k]));
        Ok(Shape::array(dtype, dims))
    }

    fn labels(
        &self,
        what: &str,
        batch: i64,
        feature: i64,
        spatial: &[i64],
        rank: usize,
    ) -> Result<Vec<usize>> {
        let all: Vec<i64> = [batch, feature]
            .into_iter()
            .chain(spatial.iter().copied())
            .collect();
        if all.len() != rank {
            return Err(attr_err(
                self.op,
                format!(
                    "dim_labels give {} {what} dimensions but it has rank {rank}",
                    all.len()
                ),
            ));
        }
        self.dim_set(&format!("{what} dim_labels"), &all, rank, false)
    }

    fn convolution(&self) -> Result<Shape> {
        let op = self.op;
        let (x, k) = (self.arr(0)?, self.arr(1)?);
        let c: &ConvDims = req(op, &self.attrs.conv_dims, "dim_labels")?;
        let window: &[WindowDim] = self.attrs.window.as_deref().unwrap_or(&[]);
        let n = c.input_spatial.len();
        if c.kernel_spatial.len() != n || c.output_spatial.len() != n || window.len() != n {
            return Err(attr_err(
                op,
                format!("dim_labels and window disagree on the spatial dimension count ({n})"),
            ));
        }
        let xi = self.labels(
            "input",
            c.input_batch,
            c.input_feature,
            &c.input_spatial,
            x.rank(),
        )?;
        let ki = self.labels(
            "kernel",
            c.kernel_input_feature,
            c.kernel_output_feature,
            &c.kernel_spatial,
            k.rank(),
        )?;
        let oi = self.labels(
            "output",
            c.output_batch,
            c.output_feature,
            &c.output_spatial,
            n + 2,
        )?;
        let fgc = self.attrs.feature_group_count.unwrap_or(1);
        let bgc = self.attrs.batch_group_count.unwrap_or(1);
        if fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1) {
            return Err(attr_err(op, format!("feature_group_count={fgc} and batch_group_count={bgc} must be positive and not both above 1")));
        }
        let (batch, in_feat) = (x.dims[xi[0]], x.dims[xi[1]]);
        let (k_in, k_out) = (k.dims[ki[0]], k.dims[ki[1]]);
        if in_feat % fgc != 0 || in_feat / fgc != k_in {
            return Err(operand_err(op, format!("input features {in_feat} must equal kernel input features {k_in} times feature_group_count {fgc}")));
        }
        if k_out % fgc != 0 || k_out % bgc != 0 {
            return Err(operand_err(
                op,
                format!("kernel output features {k_out} must be divisible by the group counts"),
            ));
        }
        if batch % bgc != 0 {
            return Err(operand_err(
                op,
                format!("input batch {batch} must be divisible by batch_group_count {bgc}"),
            ));
        }
        let dtype = self.contraction_dtype(x, k)?;
        let mut dims = vec![0i64; n + 2];
        dims[oi[0]] = batch / bgc;
        dims[oi[1]] = k_out;
        for s in 0..n {
            let ks = k.dims[ki[2 + s]];
            if window[s].size != ks {
                return Err(attr_err(
                    op,
                    format!(
                        "window size {} of spatial dimension {s} differs from kernel size {ks}",
                        window[s].size
                    ),
                ));
            }
            dims[oi[2 + s]] = window_output(op, s, x.dims[xi[2 + s]], &window[s])?;
        }
        Ok(Shape::array(dtype, dims))
    }

    // ---- control ----

    fn call(&self) -> Result<Shape> {
        let op = self.op;
        let callee = if op == Opcode::Fusion {
            req(op, &self.attrs.fusion_kind, "kind")?;
            match self.attrs.calls.as_slice() {
                [c] => *c,
                [] => return Err(missing(op, "calls")),
                _ => return Err(attr_err(op, "a fusion calls exactly one computation")),
            }
        } else {
            *req(op, &self.attrs.to_apply, "to_apply")?
        };
        let (sig, name) = callee_sig(op, self.comps, callee)?;
        let ok = sig.params.len() == self.operands.len()
            && sig
                .params
                .iter()
                .zip(self.operands)
                .all(|(p, o)| p.compatible(o));
        if !ok {
            let ops: Vec<String> = self.operands.iter().map(|s| s.to_string()).collect();
            return Err(callee_err(
                op,
                format!(
                    "computation '{name}' {sig} does not take the operands ({})",
                    ops.join(", ")
                ),
            ));
        }
        Ok(sig.result.without_layouts())
    }

    fn while_loop(&self) -> Result<Shape> {
        let op = self.op;
        let cond = *req(op, &self.attrs.condition, "condition")?;
        let body = *req(op, &self.attrs.body, "body")?;
        let s = self.operands[0];
        let (c, cname) = callee_sig(op, self.comps, cond)?;
        if c.params.len() != 1
            || !c.params[0].compatible(s)
            || !c.result.compatible(&Shape::scalar(ElementType::Pred))
        {
            return Err(callee_err(
                op,
                format!("condition '{cname}' {c} must be ({s}) -> pred[]"),
            ));
        }
        let (b, bname) = callee_sig(op, self.comps, body)?;
        if b.params.len() != 1 || !b.params[0].compatible(s) || !b.result.compatible(s) {
            return Err(callee_err(
                op,
                format!("body '{bname}' {b} must be ({s}) -> {s}"),
            ));
        }
        Ok(s.without_layouts())
    }

    fn conditional(&self) -> Result<Shape> {
        let op = self.op;
        let branches = &self.attrs.branch_computations;
        if branches.is_empty() {
            return Err(missing(op, "branch_computations"));
        }
        if self.operands.len() != branches.len() + 1 {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!("{op}: expects one operand per branch after the index, got {} operands for {} branches", self.operands.len(), branches.len()),
            ));
        }
        let index = self.arr(0)?;
        // `true_computation=`/`false_computation=` is the pred form only
        let index_ok = index.rank() == 0
            && ((index.dtype == ElementType::S32 && !self.attrs.pred_branches)
                || (index.dtype == ElementType::Pred && branches.len() == 2));
        if !index_ok {
            return Err(operand_err(
                op,
                format!("branch index {index} must be s32[] (or pred[] with two branches)"),
            ));
        }
        let mut result: Option<Shape> = None;
        for (k, &b) in branches.iter().enumerate() {
            let (sig, name) = callee_sig(op, self.comps, b)?;
            let arg = self.operands[k + 1];
            if sig.params.len() != 1 || !sig.params[0].compatible(arg) {
                return Err(callee_err(
                    op,
                    format!("branch {k} '{name}' {sig} does not take {arg}"),
                ));
            }
            match &result {
                Some(r) if !r.compatible(&sig.result) => {
                    return Err(callee_err(
                        op,
                        format!(
                            "branch {k} '{name}' returns {} but branch 0 returns {r}",
                            sig.result
                        ),
                    ));
                }
                Some(_) => {}
                None => result = Some(sig.result.without_layouts()),
            }
        }
        result.ok_or_else(|| missing(op, "branch_computations"))
    }
}

/// Checks that constant data fits a shape: element count and element kind
/// (and integer values within the type's range).
pub fn check_constant(data: &ConstantData, shape: &Shape) -> std::result::Result<(), String> {
    match (shape, data) {
        (Shape::Tuple(ts), ConstantData::Tuple(ds)) => {
            if ts.len() != ds.len() {
                return Err(format!(
                    "tuple constant has {} elements, shape {shape}",
                    ds.len()
                ));
            }
            ts.iter()
                .zip(ds)
                .try_for_each(|(t, d)| check_constant(d, t))
        }
        (Shape::Array(a), d) => {
            let count = a
                .element_count()
                .ok_or("constant element count overflows")?;
            let (len, ok) = match d {
                ConstantData::Pred(v) => (v.len(), a.dtype.is_pred()),
                ConstantData::Int(v) => {
                    let in_range = a
                        .dtype
                        .int_range()
                        .is_some_and(|(lo, hi)| v.iter().all(|x| (lo..=hi).contains(x)));
                    if a.dtype.is_integer() && !in_range {
                        return Err(format!("constant value out of range for {}", a.dtype));
                    }
                    (v.len(), a.dtype.is_integer())
                }
                ConstantData::Float(v) => (v.len(), a.dtype.is_float()),
                ConstantData::Complex(v) => (v.len(), a.dtype.is_complex()),
                ConstantData::Tuple(_) => (0, false),
            };
            if !ok {
                return Err(format!(
                    "constant data does not match element type {}",
                    a.dtype
                ));
            }
            if len as u64 != count {
                return Err(format!(
                    "constant has {len} elements but {shape} needs {count}"
                ));
            }
            Ok(())
        }
        _ => Err(format!("constant data does not match shape {shape}")),
    }
}

#[cfg(test)]
mod tests;
