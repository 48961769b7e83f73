//! The syntax tree: types, scalars, dense literals, attributes, ops,
//! regions, functions and modules, and the error type of the syntax stage.

use crate::hlo::dtype::ElementType;

/// A value type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Type {
    /// `tensor<2x3xf32>`.
    Tensor(Vec<i64>, ElementType),
    /// `!stablehlo.token`.
    Token,
    /// `tuple<...>`.
    Tuple(Vec<Type>),
    /// `tensor<2x!quant.uniform<i8:f32, 0.5:-20>>`: a quantized tensor.
    Quant(Vec<i64>, Box<Quant>),
}

/// A `!quant.uniform` element type: integers of `storage` in
/// `[min, max]` meaning `(q - zero_point) * scale` of `expressed`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Quant {
    pub storage: ElementType,
    pub min: i128,
    pub max: i128,
    pub expressed: ElementType,
    /// The quantization dimension of a per-axis type.
    pub axis: Option<i64>,
    /// `(scale, zero_point)`: one per tensor, or one per index of `axis`.
    pub params: Vec<(f64, i128)>,
}

/// One scalar inside a `dense<...>`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Int(i128),
    Float(f64),
    /// A hexadecimal literal: raw bits of a float, or an integer.
    Hex(u128),
    Bool(bool),
    Complex(Box<Scalar>, Box<Scalar>),
}

/// The payload of a `dense<...>` attribute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dense {
    /// `dense<"0x...">`: little-endian bytes.
    Blob(Vec<u8>),
    /// A (possibly nested) list, flattened; `dims` are the nesting lengths.
    List(Vec<Scalar>, Vec<usize>),
    /// One value for every element.
    Splat(Scalar),
    /// `dense<>`.
    Empty,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Attr {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Unit,
    /// `array<i64: 1, 2>` (booleans as 0/1).
    Array(Vec<i64>),
    Dense(Dense, Type),
    List(Vec<Attr>),
    Symbol(String),
    /// A bare word of the pretty form (`EQ`, `FLOAT`, `e5m10`, `THREE_FRY`).
    Word(String),
    /// `#stablehlo<comparison_direction EQ>`: (kind, value).
    Enum(String, String),
    /// `#stablehlo.gather<offset_dims = [1], ...>`: (kind, fields).
    Struct(String, Vec<(String, Attr)>),
    /// `#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>` or its pretty form: three label lists.
    ConvLabels(Vec<Vec<String>>),
    Dict(Vec<(String, Attr)>),
    Type(Type),
}

/// A use of an SSA value: `%name` or `%name#k`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ValueRef {
    pub name: String,
    pub index: Option<usize>,
    pub pos: usize,
}

/// A block of a region: arguments and operations.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Region {
    pub args: Vec<(String, Type)>,
    pub ops: Vec<Op>,
    pub pos: usize,
}

/// One operation, in generic shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Op {
    pub pos: usize,
    /// `stablehlo.add`, `func.return`, `chlo.erf`, `check.expect_eq`, ...
    pub name: String,
    /// Result groups: `%0:2` is `("0", 2)`; `%a, %b` is two groups of 1.
    pub results: Vec<(String, usize)>,
    pub operands: Vec<ValueRef>,
    pub attrs: Vec<(String, Attr)>,
    pub regions: Vec<Region>,
    pub result_types: Vec<Type>,
    /// The name of a trailing `loc("name")` (the HLO instruction name the
    /// printer writes there); None without one or for other locations.
    pub loc: Option<String>,
}

impl Op {
    /// The attribute `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// How many results the text declares.
    pub fn result_count(&self) -> usize {
        self.results.iter().map(|(_, n)| n).sum()
    }
}

/// A function argument's attribute dictionary and its `loc("name")`.
pub(crate) type ArgAttrs = (Vec<(String, Attr)>, Option<String>);

/// A `func.func`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Func {
    pub pos: usize,
    pub name: String,
    pub public: bool,
    pub args: Vec<(String, Type)>,
    /// Per argument: its attribute dictionary and its `loc("name")`.
    pub arg_attrs: Vec<ArgAttrs>,
    pub results: Vec<Type>,
    /// `attributes {...}`.
    pub attrs: Vec<(String, Attr)>,
    pub body: Region,
}

/// A `module { ... }` (or the functions of a file without one).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ModuleDef {
    pub pos: usize,
    pub name: Option<String>,
    /// `module @name attributes {...}`.
    pub attrs: Vec<(String, Attr)>,
    pub funcs: Vec<Func>,
}

pub(super) type R<T> = Result<T, (usize, String)>;

pub(super) fn err<T>(pos: usize, msg: impl Into<String>) -> R<T> {
    Err((pos, msg.into()))
}
