//! The single-op catalogue: builds the HLO module of one op case (its op,
//! dtype, shape, layout and parameter: what a case name says) and says what
//! each parameter is for (so inputs land in a safe range). `forms.rs` builds
//! each form's module, `chain.rs` the elementwise chains, `configs/` one
//! module per attribute class.

mod chain;
mod configs;
mod forms;
mod operand_forms;

pub use chain::{build_chain, fuse_entry};
pub(crate) use configs::{
    build as build_configuration, classes as op_classes, first_dims as class_operand_dims,
};
pub use operand_forms::{
    build_operand_forms, forms_operand_dims, has_operand_forms, operand_form_slots, FormsSite,
    FUSED_SUFFIX, OPERAND_FORMS, SLOT_SEPARATOR,
};

use crate::hlo::{
    ArrayShape, Attrs, Category, CompId, ComparisonDirection, ComparisonType, Computation,
    ConstantData, ElementType, InstrId, Instruction, Layout, Module, Opcode, Shape,
};
use crate::inputs::Role;

/// A case's module and the role of each entry parameter.
#[derive(Clone, Debug)]
pub struct BuiltCase {
    /// The module (entry computation last).
    pub module: Module,
    /// One role per entry parameter, by parameter number.
    pub roles: Vec<Role>,
}

/// Why the catalogue could not build a case (a bug in the catalogue, reported as a failure).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("catalogue cannot build `{case}`: {why}")]
pub struct CatalogueError {
    /// The case.
    pub case: String,
    /// Why.
    pub why: String,
}

#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) comps: Vec<Computation>,
    pub(crate) instrs: Vec<Instruction>,
    pub(crate) roles: Vec<Role>,
}

pub(crate) fn arr(dtype: ElementType, dims: Vec<i64>, layout: Option<Layout>) -> Shape {
    let layout = Some(layout.unwrap_or_else(|| Layout::row_major(dims.len())));
    Shape::Array(ArrayShape {
        dtype,
        dims,
        layout,
    })
}

pub(crate) fn scalar(dtype: ElementType) -> Shape {
    arr(dtype, vec![], None)
}

impl Builder {
    pub(crate) fn push(
        &mut self,
        op: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        let id = InstrId(self.instrs.len() as u32);
        let name = format!("{}.{}", op.name(), id.0);
        self.instrs.push(Instruction {
            name,
            opcode: op,
            shape,
            operands,
            attrs,
        });
        id
    }
    pub(crate) fn param(&mut self, shape: Shape, role: Role) -> InstrId {
        let n = self.roles.len();
        self.roles.push(role);
        let id = self.push(
            Opcode::Parameter,
            shape,
            vec![],
            Attrs {
                parameter_number: Some(n as i64),
                ..Attrs::default()
            },
        );
        self.instrs[id.index()].name = format!("p{n}");
        id
    }
    pub(crate) fn constant(&mut self, shape: Shape, data: ConstantData) -> InstrId {
        self.push(
            Opcode::Constant,
            shape,
            vec![],
            Attrs {
                constant: Some(data),
                ..Attrs::default()
            },
        )
    }
    pub(crate) fn scalar_const(&mut self, dtype: ElementType, v: Init) -> InstrId {
        let data = match v {
            Init::F(x) if dtype.is_float() => ConstantData::Float(vec![x]),
            Init::I(i) if dtype.is_float() => ConstantData::Float(vec![i as f64]),
            Init::F(x) if dtype.is_pred() => ConstantData::Pred(vec![x != 0.0]),
            Init::I(i) if dtype.is_pred() => ConstantData::Pred(vec![i != 0]),
            Init::F(x) => ConstantData::Int(vec![x as i128]),
            Init::I(i) => ConstantData::Int(vec![i]),
        };
        self.constant(scalar(dtype), data)
    }
    /// A called computation `(a, b) -> op(a, b)` on scalars.
    pub(crate) fn binary_comp(&mut self, op: Opcode, dtype: ElementType) -> CompId {
        let mut b = Builder::default();
        let x = b.param(scalar(dtype), Role::Data);
        let y = b.param(scalar(dtype), Role::Data);
        let r = b.push(op, scalar(dtype), vec![x, y], Attrs::default());
        self.sub(b, format!("{}_{}", op.name(), dtype), r)
    }
    /// A sort comparator `(a, b) -> compare(a, b, dir)`.
    pub(crate) fn compare_comp(&mut self, dtype: ElementType, dir: ComparisonDirection) -> CompId {
        let mut b = Builder::default();
        let x = b.param(scalar(dtype), Role::Data);
        let y = b.param(scalar(dtype), Role::Data);
        let r = b.push(
            Opcode::Compare,
            scalar(ElementType::Pred),
            vec![x, y],
            Attrs {
                direction: Some(dir),
                comparison_type: Some(comparison_type(dtype, true)),
                ..Attrs::default()
            },
        );
        self.sub(b, format!("compare_{}_{}", dtype, dir.name()), r)
    }
    pub(crate) fn sub(&mut self, mut b: Builder, name: String, root: InstrId) -> CompId {
        // instruction names are unique module-wide
        for instr in &mut b.instrs {
            instr.name = format!("{name}.{}", instr.name);
        }
        let mut comps = b.comps;
        let id = CompId((self.comps.len() + comps.len()) as u32);
        self.comps.append(&mut comps);
        self.comps.push(Computation {
            name,
            instructions: b.instrs,
            root,
            other: vec![],
        });
        id
    }
    pub(crate) fn finish(mut self, root: InstrId) -> BuiltCase {
        let entry = CompId(self.comps.len() as u32);
        self.comps.push(Computation {
            name: "main".to_string(),
            instructions: self.instrs,
            root,
            other: vec![],
        });
        BuiltCase {
            module: Module {
                name: "case".to_string(),
                attrs: vec![],
                computations: self.comps,
                entry,
            },
            roles: self.roles,
        }
    }
}

pub(crate) fn comparison_type(dtype: ElementType, total: bool) -> ComparisonType {
    if dtype.is_float() {
        if total {
            ComparisonType::TotalOrder
        } else {
            ComparisonType::Float
        }
    } else if dtype.is_signed_int() {
        ComparisonType::Signed
    } else {
        ComparisonType::Unsigned
    }
}

/// The safe-range role of operand `i` of an elementwise op.
pub fn elementwise_role(op: Opcode, i: usize) -> Role {
    use Opcode as O;
    match (op, i) {
        (O::Log | O::Sqrt | O::Rsqrt, _) => Role::Range(0.05, 8.0),
        (O::LogPlusOne, _) => Role::Range(-0.9, 8.0),
        (O::Tan, _) => Role::Range(-1.4, 1.4),
        (O::Divide | O::Remainder, 1) => Role::NonZero,
        (O::Power, 0) => Role::Range(0.25, 4.0),
        (O::Power, 1) => Role::NonNegative,
        (O::ShiftLeft | O::ShiftRightArithmetic | O::ShiftRightLogical, 1) => Role::ShiftAmount,
        _ => Role::Data,
    }
}

/// An init value: a float (exact in f64) or an integer (exact in i128).
#[derive(Clone, Copy)]
pub(crate) enum Init {
    F(f64),
    I(i128),
}

pub(crate) fn lowest(dtype: ElementType) -> Init {
    match dtype.float_format() {
        Some(f) if f.has_inf => Init::F(f64::NEG_INFINITY),
        Some(f) => Init::F(-f.max),
        None => Init::I(dtype.int_range().map_or(0, |r| r.0)),
    }
}

pub(crate) fn highest(dtype: ElementType) -> Init {
    match dtype.float_format() {
        Some(f) if f.has_inf => Init::F(f64::INFINITY),
        Some(f) => Init::F(f.max),
        None => Init::I(dtype.int_range().map_or(0, |r| r.1)),
    }
}

fn window_out(d: i64, size: i64, stride: i64, lo: i64, hi: i64) -> i64 {
    let padded = d + lo + hi;
    if padded < size {
        0
    } else {
        (padded - size) / stride + 1
    }
}

/// One single-op case, as its name says it: what the catalogue builds from.
#[derive(Clone, Copy)]
pub struct OpCase<'a> {
    /// The case's name, for errors.
    pub name: &'a dyn std::fmt::Display,
    /// The op.
    pub op: Opcode,
    /// Its element type.
    pub dtype: ElementType,
    /// The main operand's dims.
    pub dims: &'a [i64],
    /// The main operand's layout.
    pub layout: &'a Layout,
    /// The case's parameter (a comparison direction, a conversion target,
    /// an attribute class, a chain's follower), if any.
    pub param: Option<&'a str>,
}

/// What a form's builder returns.
pub(crate) type Res<T> = Result<T, CatalogueError>;

impl<'a> OpCase<'a> {
    /// What every form's builder reads of the case: element type, dims,
    /// rank, layout, the main operand's shape and the parameter (or "").
    pub(crate) fn site(&self) -> (ElementType, Vec<i64>, usize, Layout, Shape, &'a str) {
        let dims = self.dims.to_vec();
        let operand = arr(self.dtype, dims.clone(), Some(self.layout.clone()));
        let rank = dims.len();
        (
            self.dtype,
            dims,
            rank,
            self.layout.clone(),
            operand,
            self.param.unwrap_or(""),
        )
    }
    pub(crate) fn err(&self, why: &str) -> CatalogueError {
        CatalogueError {
            case: self.name.to_string(),
            why: why.to_string(),
        }
    }
}

/// How the catalogue builds an op's cases; decides its shape table and parameters (in `property`'s case space).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[expect(missing_docs)]
pub enum Form {
    Elementwise,
    Compare,
    Convert,
    BitcastConvert,
    ReducePrecision,
    Iota,
    Copy,
    Broadcast,
    Reshape,
    Transpose,
    Slice,
    Concatenate,
    Pad,
    Reverse,
    DynamicSlice,
    DynamicUpdateSlice,
    Gather,
    Scatter,
    Reduce,
    ReduceWindow,
    Sort,
    Dot,
    Convolution,
    /// while, conditional, call, map, tuple: built only as attribute classes.
    Structure,
    /// A multi-op program template (`Template::Program`).
    Program,
}

impl Form {
    /// The form of an op the catalogue builds, or None.
    pub fn of(op: Opcode) -> Option<Form> {
        use Opcode as O;
        Some(match op {
            O::Compare => Form::Compare,
            O::Convert => Form::Convert,
            O::BitcastConvert => Form::BitcastConvert,
            O::ReducePrecision => Form::ReducePrecision,
            O::Iota => Form::Iota,
            O::Copy => Form::Copy,
            O::Broadcast => Form::Broadcast,
            O::Reshape => Form::Reshape,
            O::Transpose => Form::Transpose,
            O::Slice => Form::Slice,
            O::Concatenate => Form::Concatenate,
            O::Pad => Form::Pad,
            O::Reverse => Form::Reverse,
            O::DynamicSlice => Form::DynamicSlice,
            O::DynamicUpdateSlice => Form::DynamicUpdateSlice,
            O::Gather => Form::Gather,
            O::Scatter => Form::Scatter,
            O::Reduce => Form::Reduce,
            O::ReduceWindow => Form::ReduceWindow,
            O::Sort => Form::Sort,
            O::Dot => Form::Dot,
            O::Convolution => Form::Convolution,
            O::Select | O::Clamp => Form::Elementwise,
            O::While | O::Conditional | O::Call | O::Map | O::Tuple => Form::Structure,
            _ if matches!(
                op.category(),
                Category::ElementwiseUnary | Category::ElementwiseBinary
            ) =>
            {
                Form::Elementwise
            }
            _ => return None,
        })
    }
}

/// Builds the module of a single-op case of `form` (`Form::of(op)`; program
/// templates and structures are built elsewhere).
///
/// ```
/// use xla_props::hlo::{ElementType, Layout, Opcode};
/// use xla_props::programs::{build_single, Form, OpCase};
/// let case = OpCase {
///     name: &"add on f32[3,5]",
///     op: Opcode::Add,
///     dtype: ElementType::F32,
///     dims: &[3, 5],
///     layout: &Layout::row_major(2),
///     param: None,
/// };
/// let built = build_single(&case, Form::Elementwise).unwrap();
/// assert_eq!(built.module.parameter_shapes().len(), 2);
/// assert_eq!(built.module.result_shape().to_string(), "f32[3,5]{1,0}");
/// ```
pub fn build_single(c: &OpCase<'_>, form: Form) -> Result<BuiltCase, CatalogueError> {
    let mut b = Builder::default();
    let root = match form {
        Form::Program => return Err(c.err("program templates are built by `crate::programs`")),
        Form::Structure => return Err(c.err("built only as attribute classes")),
        Form::Elementwise
        | Form::Copy
        | Form::Compare
        | Form::Convert
        | Form::BitcastConvert
        | Form::ReducePrecision => forms::elementwise_forms(&mut b, form, c)?,
        Form::Iota
        | Form::Broadcast
        | Form::Reshape
        | Form::Transpose
        | Form::Slice
        | Form::Concatenate => forms::layout_forms(&mut b, form, c)?,
        Form::Pad | Form::Reverse | Form::DynamicSlice | Form::DynamicUpdateSlice => {
            forms::indexing_forms(&mut b, form, c)?
        }
        Form::Gather | Form::Scatter => forms::gather_forms(&mut b, form, c)?,
        Form::Reduce | Form::ReduceWindow | Form::Sort => forms::reduction_forms(&mut b, form, c)?,
        Form::Dot | Form::Convolution => forms::contraction_forms(&mut b, form, c)?,
    };
    Ok(b.finish(root))
}

pub(crate) fn elementwise(
    b: &mut Builder,
    op: Opcode,
    t: ElementType,
    dims: &[i64],
    layout: &Layout,
) -> Result<InstrId, CatalogueError> {
    let shape = |dt| arr(dt, dims.to_vec(), Some(layout.clone()));
    let operands = match op {
        Opcode::Select => vec![
            b.param(shape(ElementType::Pred), Role::Data),
            b.param(shape(t), Role::Data),
            b.param(shape(t), Role::Data),
        ],
        Opcode::Clamp => (0..3).map(|_| b.param(shape(t), Role::Data)).collect(),
        _ => {
            let n = match op.arity() {
                crate::hlo::Arity::Fixed(n) => n,
                crate::hlo::Arity::AtLeast(n) => n,
            };
            (0..n)
                .map(|i| b.param(shape(t), elementwise_role(op, i)))
                .collect()
        }
    };
    let out = if op == Opcode::IsFinite {
        ElementType::Pred
    } else {
        t
    };
    Ok(b.push(op, shape(out), operands, Attrs::default()))
}
