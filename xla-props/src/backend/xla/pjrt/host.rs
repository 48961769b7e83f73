//! Host arrays: the dense row-major bytes that cross the PJRT boundary and
//! the worker pipe, and the `PJRT_Buffer_Type` codes of their element types.

use crate::hlo::ElementType;

/// `PJRT_Buffer_Type` codes.
pub fn buffer_type_code(t: ElementType) -> Option<i32> {
    Some(match t {
        ElementType::Pred => 1,
        ElementType::S8 => 2,
        ElementType::S16 => 3,
        ElementType::S32 => 4,
        ElementType::S64 => 5,
        ElementType::U8 => 6,
        ElementType::U16 => 7,
        ElementType::U32 => 8,
        ElementType::U64 => 9,
        ElementType::F16 => 10,
        ElementType::F32 => 11,
        ElementType::F64 => 12,
        ElementType::Bf16 => 13,
        // host layout: interleaved (re, im) components, little-endian
        ElementType::C64 => 14,
        ElementType::C128 => 15,
        ElementType::F8E5M2 => 16,
        ElementType::F8E4M3Fn => 17,
        // s4/u4 host transfers are packed differently across plugin versions
        ElementType::S4 | ElementType::U4 => return None,
        // s2, u2 and the minifloats are not lowered for compiled backends
        // (`ElementType::is_extended`)
        _ => return None,
    })
}

/// A complex literal as PJRT's host bytes: per element the real then the
/// imaginary component, little-endian (f32 pairs for c64, f64 for c128);
/// None for a real literal.
pub fn complex_to_host(l: &crate::literal::Literal) -> Option<HostArray> {
    let dtype = l.dtype();
    let mut bytes = Vec::with_capacity(l.element_count() * dtype.byte_size());
    for (re, im) in l.to_complex_vec() {
        match dtype {
            ElementType::C64 => {
                bytes.extend_from_slice(&(re as f32).to_le_bytes());
                bytes.extend_from_slice(&(im as f32).to_le_bytes());
            }
            ElementType::C128 => {
                bytes.extend_from_slice(&re.to_le_bytes());
                bytes.extend_from_slice(&im.to_le_bytes());
            }
            _ => return None,
        }
    }
    Some(HostArray {
        dtype,
        dims: l.dims().iter().map(|&d| d as i64).collect(),
        bytes,
    })
}

/// The complex literal of `shape` from PJRT's interleaved host bytes.
pub fn complex_from_host(
    h: &HostArray,
    shape: &crate::hlo::ArrayShape,
) -> Result<crate::literal::Literal, crate::literal::LiteralError> {
    use crate::literal::{plane_shape, Literal};
    let plane = crate::hlo::ArrayShape::new(plane_shape(shape).dtype, shape.dims.clone());
    let width = h.dtype.byte_size() / 2;
    let (mut re, mut im) = (Vec::new(), Vec::new());
    for pair in h.bytes.chunks_exact(2 * width) {
        let (r, i) = pair.split_at(width);
        re.extend_from_slice(r);
        im.extend_from_slice(i);
    }
    Literal::from_planes(
        &Literal::from_le_bytes(&plane, &re)?,
        &Literal::from_le_bytes(&plane, &im)?,
    )
}

/// The element type of a `PJRT_Buffer_Type` code.
pub fn element_type_of_code(code: i32) -> Option<ElementType> {
    ElementType::ALL
        .iter()
        .copied()
        .find(|&t| buffer_type_code(t) == Some(code))
}

/// A dense row-major host array: what crosses the PJRT boundary and the worker pipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostArray {
    /// Element type.
    pub dtype: ElementType,
    /// Dimensions, major to minor.
    pub dims: Vec<i64>,
    /// Little-endian element bytes in row-major order (one byte per pred).
    pub bytes: Vec<u8>,
}

impl HostArray {
    /// Bytes the dims and dtype call for.
    pub fn expected_bytes(&self) -> Option<usize> {
        let mut n = self.dtype.byte_size();
        for &d in &self.dims {
            n = n.checked_mul(usize::try_from(d).ok()?)?;
        }
        Some(n)
    }
}
