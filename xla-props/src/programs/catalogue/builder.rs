//! What a case's module is built with: `Builder` (instructions, called
//! computations, parameter roles), shapes, init values, comparison types,
//! an elementwise op with its parameters' roles; and what a build returns
//! (`BuiltCase`) or fails with (`CatalogueError`).

use crate::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData,
    ElementType, InstrId, Instruction, Layout, Module, Opcode, Shape,
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
