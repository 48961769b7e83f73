//! Shapes: arrays with optional layouts, tuples and tokens.

use std::fmt;

use super::dtype::ElementType;

/// A physical layout: dimension numbers from minor to major, plus any
/// XLA layout extras (tiling, memory space) kept verbatim for printing.
///
/// ```
/// use xla_props::hlo::Layout;
/// let l = Layout::row_major(3);
/// assert_eq!(l.minor_to_major, vec![2, 1, 0]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// `{1,0}` in `f32[2,3]{1,0}`: dimension 1 is the most minor (row-major).
    pub minor_to_major: Vec<i64>,
    /// Text after `:` inside the braces (e.g. `T(8,128)S(1)`), kept but not interpreted.
    pub extra: Option<String>,
}

impl Layout {
    /// The default (row-major) layout of a rank-`rank` array: `{rank-1,...,0}`.
    pub fn row_major(rank: usize) -> Layout {
        Layout {
            minor_to_major: (0..rank as i64).rev().collect(),
            extra: None,
        }
    }
    /// True when this is the row-major layout without extras.
    pub fn is_row_major(&self) -> bool {
        self.extra.is_none()
            && self
                .minor_to_major
                .iter()
                .rev()
                .enumerate()
                .all(|(i, &d)| d == i as i64)
    }
}

/// A dense array shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// Element type.
    pub dtype: ElementType,
    /// Dimension sizes, major to minor in logical order.
    pub dims: Vec<i64>,
    /// The physical layout, when the text gave one.
    pub layout: Option<Layout>,
}

impl ArrayShape {
    /// A shape without a layout.
    pub fn new(dtype: ElementType, dims: impl Into<Vec<i64>>) -> ArrayShape {
        ArrayShape {
            dtype,
            dims: dims.into(),
            layout: None,
        }
    }
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// Number of elements, or None on overflow.
    pub fn element_count(&self) -> Option<u64> {
        self.dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
    }
    /// The layout, or row-major when none is given.
    pub fn layout_or_default(&self) -> Layout {
        self.layout
            .clone()
            .unwrap_or_else(|| Layout::row_major(self.dims.len()))
    }
    /// True when the two shapes have the same type and dims (layouts ignored).
    pub fn compatible(&self, other: &ArrayShape) -> bool {
        self.dtype == other.dtype && self.dims == other.dims
    }
}

/// An HLO shape.
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType, Shape};
/// let s = Shape::Array(ArrayShape::new(ElementType::F32, vec![2, 3]));
/// assert_eq!(s.to_string(), "f32[2,3]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A dense array.
    Array(ArrayShape),
    /// A tuple of shapes.
    Tuple(Vec<Shape>),
    /// A token (ordering only, no data).
    Token,
}

impl Shape {
    /// An array shape without layout.
    pub fn array(dtype: ElementType, dims: impl Into<Vec<i64>>) -> Shape {
        Shape::Array(ArrayShape::new(dtype, dims))
    }
    /// A scalar shape.
    pub fn scalar(dtype: ElementType) -> Shape {
        Shape::array(dtype, Vec::new())
    }
    /// The array shape, if this is an array.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The tuple elements, if this is a tuple.
    pub fn as_tuple(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(t) => Some(t),
            _ => None,
        }
    }
    /// True for tuples.
    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }
    /// True when it is a token or a tuple holding one.
    pub fn has_token(&self) -> bool {
        match self {
            Shape::Token => true,
            Shape::Tuple(t) => t.iter().any(Shape::has_token),
            Shape::Array(_) => false,
        }
    }
    /// Leaf array shapes in depth-first order (tuples flattened; tokens skipped).
    pub fn leaves(&self) -> Vec<&ArrayShape> {
        let mut out = Vec::new();
        fn walk<'a>(s: &'a Shape, out: &mut Vec<&'a ArrayShape>) {
            match s {
                Shape::Array(a) => out.push(a),
                Shape::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
                Shape::Token => {}
            }
        }
        walk(self, &mut out);
        out
    }
    /// Equal up to layouts.
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => a.compatible(b),
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (Shape::Token, Shape::Token) => true,
            _ => false,
        }
    }
    /// The same shape with every layout removed.
    pub fn without_layouts(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(Shape::without_layouts).collect()),
            Shape::Token => Shape::Token,
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        write_separated(f, &self.minor_to_major, ",")?;
        if let Some(extra) = &self.extra {
            write!(f, ":{extra}")?;
        }
        f.write_str("}")
    }
}

/// Writes `items` separated by `sep` (the lists of the text forms: dims,
/// layouts, indices, parameters).
pub(crate) fn write_separated<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
    sep: &str,
) -> fmt::Result {
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        write_separated(f, &self.dims, ",")?;
        f.write_str("]")?;
        if let Some(l) = &self.layout {
            write!(f, "{l}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => a.fmt(f),
            Shape::Tuple(t) => {
                f.write_str("(")?;
                for (i, e) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    e.fmt(f)?;
                }
                f.write_str(")")
            }
            Shape::Token => f.write_str("token[]"),
        }
    }
}
