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

/// `list` (the attribute `name`) has one entry per dimension of the operand `a`.
fn check_per_dimension<T>(op: Opcode, name: &str, list: &[T], a: &ArrayShape) -> Result<()> {
    if list.len() != a.rank() {
        return Err(attr_err(
            op,
            format!("{name} has {} dimensions, operand {a}", list.len()),
        ));
    }
    Ok(())
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
        super::shape::write_separated(f, &self.params, ", ")?;
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

    /// Operand 0 and the one dimension of it that `dimensions` names (sort,
    /// concatenate).
    fn first_and_its_dimension(&self) -> Result<(&'a ArrayShape, usize)> {
        let dims = req(self.op, &self.attrs.dimensions, "dimensions")?;
        let first = self.arr(0)?;
        if dims.len() != 1 {
            return Err(attr_err(
                self.op,
                format!("dimensions {} must name one dimension", dims_text(dims)),
            ));
        }
        Ok((first, self.dim_index("dimension", dims[0], first.rank())?))
    }

    /// Every operand, each an array with operand 0's dims.
    fn arrays_like_first(&self) -> Result<Vec<&'a ArrayShape>> {
        let first = self.arr(0)?;
        (0..self.operands.len())
            .map(|k| {
                let a = self.arr(k)?;
                if a.dims != first.dims {
                    return Err(operand_err(
                        self.op,
                        format!("operand {k} {a} and operand 0 {first} differ in dims"),
                    ));
                }
                Ok(a)
            })
            .collect()
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

    /// The attribute `v` (written `name`): required, one entry per dimension
    /// of the operand `a`.
    fn per_dimension<'v, T>(
        &self,
        v: &'v Option<Vec<T>>,
        name: &str,
        a: &ArrayShape,
    ) -> Result<&'v [T]> {
        let list = req(self.op, v, name)?;
        check_per_dimension(self.op, name, list, a)?;
        Ok(list)
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

mod contractions;
mod control;
mod elementwise;
mod indexing;
mod reductions;
mod shapes;

#[cfg(test)]
pub(crate) mod tests;
