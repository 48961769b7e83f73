//! Complex literals as two real planes: the real and the imaginary parts as
//! literals of the component type (`c64` -> `f32`, `c128` -> `f64`).

use super::{ArrayData, Literal, LiteralError};
use crate::hlo::{ArrayShape, ElementType};

/// The component type of a complex type (`c64` -> `f32`, `c128` -> `f64`); None for others.
pub fn component_type(t: ElementType) -> Option<ElementType> {
    match t {
        ElementType::C64 => Some(ElementType::F32),
        ElementType::C128 => Some(ElementType::F64),
        _ => None,
    }
}

/// The complex type with component type `t` (`f32` -> `c64`, `f64` -> `c128`); None for others.
pub fn complex_type(t: ElementType) -> Option<ElementType> {
    match t {
        ElementType::F32 => Some(ElementType::C64),
        ElementType::F64 => Some(ElementType::C128),
        _ => None,
    }
}

impl Literal {
    /// The real and imaginary planes of a complex literal (same dims and layout,
    /// component type); None for a real literal.
    pub fn planes(&self) -> Option<(Literal, Literal)> {
        let (re, im) = match self.data() {
            ArrayData::C64(a) => (
                ArrayData::F32(a.mapv(|c| c.re)),
                ArrayData::F32(a.mapv(|c| c.im)),
            ),
            ArrayData::C128(a) => (
                ArrayData::F64(a.mapv(|c| c.re)),
                ArrayData::F64(a.mapv(|c| c.im)),
            ),
            _ => return None,
        };
        let layout = self.layout().cloned();
        Some((
            Literal::new(re).with_layout(layout.clone()),
            Literal::new(im).with_layout(layout),
        ))
    }

    /// The complex literal with these real and imaginary planes (both `f32`
    /// or both `f64`, of one shape).
    pub fn from_planes(re: &Literal, im: &Literal) -> Result<Literal, LiteralError> {
        let bad = || {
            LiteralError::Other(format!(
                "planes {} and {} do not make a complex literal",
                re.shape(),
                im.shape()
            ))
        };
        if re.dims() != im.dims() {
            return Err(bad());
        }
        let data = match (re.data(), im.data()) {
            (ArrayData::F32(r), ArrayData::F32(i)) => ArrayData::C64(
                ndarray::Zip::from(r)
                    .and(i)
                    .map_collect(|&r, &i| num_complex::Complex::new(r, i)),
            ),
            (ArrayData::F64(r), ArrayData::F64(i)) => ArrayData::C128(
                ndarray::Zip::from(r)
                    .and(i)
                    .map_collect(|&r, &i| num_complex::Complex::new(r, i)),
            ),
            _ => return Err(bad()),
        };
        Ok(Literal::new(data).with_layout(re.layout().cloned()))
    }

    /// Every element as `(re, im)` in f64 (see [`Literal::get_complex`]).
    pub fn to_complex_vec(&self) -> Vec<(f64, f64)> {
        (0..self.element_count())
            .map(|i| self.get_complex(i))
            .collect()
    }
}

/// The shape with every complex element type replaced by its component type.
pub fn plane_shape(s: &ArrayShape) -> ArrayShape {
    let mut p = s.clone();
    if let Some(c) = component_type(s.dtype) {
        p.dtype = c;
    }
    p
}
