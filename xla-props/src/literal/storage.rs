//! `Literal`: an array shape plus typed data, stored in logical row-major order.

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use std::sync::atomic::{AtomicU64, Ordering};

use super::float::{bf16_from_f64, bits_to_f64, f16_from_f64, round_to_bits, F8E4M3Fn, F8E5M2};
use crate::hlo::{ArrayShape, ElementType, Layout};

/// Errors from building or converting literals.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    /// The literal would exceed the size budget.
    #[error("literal of shape {shape} needs {bytes} bytes, over the budget of {budget} bytes (see literal::set_size_budget)")]
    TooLarge {
        /// The requested shape.
        shape: String,
        /// Bytes it would need (saturating).
        bytes: u64,
        /// The budget in force.
        budget: u64,
    },
    /// Dims that are negative or overflow.
    #[error("invalid dimensions in shape {0}")]
    BadDims(String),
    /// Data whose length does not match the shape.
    #[error("shape {shape} has {expected} elements but {actual} values were given")]
    LengthMismatch {
        /// The shape.
        shape: String,
        /// Its element count.
        expected: u64,
        /// Values given.
        actual: u64,
    },
    /// Raw bytes whose length does not match the shape.
    #[error("shape {shape} needs {expected} bytes but {actual} bytes were given")]
    ByteSizeMismatch {
        /// The shape.
        shape: String,
        /// Bytes the shape needs.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// A value that the element type cannot hold, in raw or `.npy` data.
    #[error("bad element data: {0}")]
    BadElement(String),
    /// A malformed `.npy` header (magic, version, header dict, descr, shape).
    #[error("bad .npy header: {0}")]
    NpyHeader(String),
    /// `.npy` data that does not match its header (too short, trailing bytes).
    #[error("bad .npy data: {0}")]
    NpyData(String),
    /// A file holding another dtype or shape than the one expected.
    #[error("{found} does not match the expected shape {expected}")]
    ShapeMismatch {
        /// The expected shape (e.g. the parameter's).
        expected: String,
        /// What the file holds.
        found: String,
    },
    /// A layout that cannot be applied to a shape (wrong rank, not a permutation, tiled).
    #[error("bad layout {layout} for dims {dims}: {reason}")]
    BadLayout {
        /// The layout.
        layout: String,
        /// The logical dims, e.g. `[2,3]`.
        dims: String,
        /// What is wrong.
        reason: String,
    },
    /// An I/O failure, with the path or stream it concerned.
    #[error("{0}")]
    Io(String),
    /// An error about the contents of a file, with its path.
    #[error("{path}: {error}")]
    InFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        error: Box<LiteralError>,
    },
    /// Anything else, described.
    #[error("{0}")]
    Other(String),
}

static SIZE_BUDGET: AtomicU64 = AtomicU64::new(1 << 30);

/// Sets the largest literal (in bytes) that may be allocated; default 1 GiB.
pub fn set_size_budget(bytes: u64) {
    SIZE_BUDGET.store(bytes, Ordering::Relaxed);
}

/// The largest literal (in bytes) that may be allocated.
pub fn size_budget() -> u64 {
    SIZE_BUDGET.load(Ordering::Relaxed)
}

/// Checks dims and the byte budget for a shape; returns the element count.
pub fn check_size(shape: &ArrayShape) -> Result<usize, LiteralError> {
    let count = shape
        .element_count()
        .ok_or_else(|| LiteralError::BadDims(shape.to_string()))?;
    let bytes = count.saturating_mul(shape.dtype.byte_size() as u64);
    let budget = size_budget();
    if bytes > budget {
        return Err(LiteralError::TooLarge {
            shape: shape.to_string(),
            bytes,
            budget,
        });
    }
    usize::try_from(count).map_err(|_| LiteralError::BadDims(shape.to_string()))
}

/// The typed element storage of a literal.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum ArrayData {
    Pred(ArrayD<bool>),
    S4(ArrayD<i8>),
    S8(ArrayD<i8>),
    S16(ArrayD<i16>),
    S32(ArrayD<i32>),
    S64(ArrayD<i64>),
    U4(ArrayD<u8>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    F16(ArrayD<f16>),
    Bf16(ArrayD<bf16>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    F8E4M3Fn(ArrayD<F8E4M3Fn>),
    F8E5M2(ArrayD<F8E5M2>),
    C64(ArrayD<num_complex::Complex<f32>>),
    C128(ArrayD<num_complex::Complex<f64>>),
    S2(ArrayD<i8>),
    U2(ArrayD<u8>),
    /// A float type of at most 8 bits other than f8e4m3fn and f8e5m2 (see
    /// [`ElementType::is_minifloat`]), as its bit patterns.
    Minifloat(ElementType, ArrayD<u8>),
}

/// Applies `$body` to the inner array of any `ArrayData` variant, binding it to `$a`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_array_data {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            $crate::literal::ArrayData::Pred($a) => $body,
            $crate::literal::ArrayData::S4($a) => $body,
            $crate::literal::ArrayData::S8($a) => $body,
            $crate::literal::ArrayData::S16($a) => $body,
            $crate::literal::ArrayData::S32($a) => $body,
            $crate::literal::ArrayData::S64($a) => $body,
            $crate::literal::ArrayData::U4($a) => $body,
            $crate::literal::ArrayData::U8($a) => $body,
            $crate::literal::ArrayData::U16($a) => $body,
            $crate::literal::ArrayData::U32($a) => $body,
            $crate::literal::ArrayData::U64($a) => $body,
            $crate::literal::ArrayData::F16($a) => $body,
            $crate::literal::ArrayData::Bf16($a) => $body,
            $crate::literal::ArrayData::F32($a) => $body,
            $crate::literal::ArrayData::F64($a) => $body,
            $crate::literal::ArrayData::F8E4M3Fn($a) => $body,
            $crate::literal::ArrayData::F8E5M2($a) => $body,
            $crate::literal::ArrayData::C64($a) => $body,
            $crate::literal::ArrayData::C128($a) => $body,
            $crate::literal::ArrayData::S2($a) => $body,
            $crate::literal::ArrayData::U2($a) => $body,
            $crate::literal::ArrayData::Minifloat(_, $a) => $body,
        }
    };
}

/// A dense array value: element type, dims, optional layout, and data in
/// logical row-major order (the layout is metadata; see `bitcast`).
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let shape = ArrayShape::new(ElementType::F16, vec![3]);
/// let lit = Literal::from_f64s(&shape, &[1.0, 0.1, 65520.0]).unwrap();
/// assert_eq!(lit.get_f64(0), 1.0);
/// assert_eq!(lit.get_f64(1), 0.0999755859375); // 0.1 rounded once to f16
/// assert_eq!(lit.get_f64(2), f64::INFINITY); // ties to even past max
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    data: ArrayData,
    layout: Option<Layout>,
}

impl Literal {
    /// Wraps typed data (row-major logical order) with no layout.
    pub fn new(data: ArrayData) -> Literal {
        Literal { data, layout: None }
    }

    /// All zeros (false for pred) of a shape, checked against the size budget.
    pub fn zeros(shape: &ArrayShape) -> Result<Literal, LiteralError> {
        check_size(shape)?;
        let dims: Vec<usize> = shape.dims.iter().map(|&d| d as usize).collect();
        let d = IxDyn(&dims);
        let data = match shape.dtype {
            ElementType::Pred => ArrayData::Pred(ArrayD::from_elem(d, false)),
            ElementType::S4 => ArrayData::S4(ArrayD::zeros(d)),
            ElementType::S8 => ArrayData::S8(ArrayD::zeros(d)),
            ElementType::S16 => ArrayData::S16(ArrayD::zeros(d)),
            ElementType::S32 => ArrayData::S32(ArrayD::zeros(d)),
            ElementType::S64 => ArrayData::S64(ArrayD::zeros(d)),
            ElementType::U4 => ArrayData::U4(ArrayD::zeros(d)),
            ElementType::U8 => ArrayData::U8(ArrayD::zeros(d)),
            ElementType::U16 => ArrayData::U16(ArrayD::zeros(d)),
            ElementType::U32 => ArrayData::U32(ArrayD::zeros(d)),
            ElementType::U64 => ArrayData::U64(ArrayD::zeros(d)),
            ElementType::F16 => ArrayData::F16(ArrayD::from_elem(d, f16::ZERO)),
            ElementType::Bf16 => ArrayData::Bf16(ArrayD::from_elem(d, bf16::ZERO)),
            ElementType::F32 => ArrayData::F32(ArrayD::zeros(d)),
            ElementType::F64 => ArrayData::F64(ArrayD::zeros(d)),
            ElementType::F8E4M3Fn => ArrayData::F8E4M3Fn(ArrayD::from_elem(d, F8E4M3Fn(0))),
            ElementType::F8E5M2 => ArrayData::F8E5M2(ArrayD::from_elem(d, F8E5M2(0))),
            ElementType::C64 => ArrayData::C64(ArrayD::from_elem(d, num_complex::Complex::ZERO)),
            ElementType::C128 => ArrayData::C128(ArrayD::from_elem(d, num_complex::Complex::ZERO)),
            ElementType::S2 => ArrayData::S2(ArrayD::zeros(d)),
            ElementType::U2 => ArrayData::U2(ArrayD::zeros(d)),
            // the pattern of +0, or of the smallest value for f8e8m0fnu (it has no zero)
            t => ArrayData::Minifloat(t, ArrayD::zeros(d)),
        };
        Ok(Literal {
            data,
            layout: shape.layout.clone(),
        })
    }

    /// A scalar from an f64 (rounded once, or converted with wrap-around for integers).
    pub fn scalar(dtype: ElementType, v: f64) -> Literal {
        let mut l = Literal::zeros(&ArrayShape::new(dtype, vec![])).expect("scalar fits");
        l.set_f64(0, v);
        l
    }

    /// Builds from f64 values in row-major order: floats round once to nearest
    /// even; integers truncate toward zero and wrap; pred is `v != 0`.
    pub fn from_f64s(shape: &ArrayShape, values: &[f64]) -> Result<Literal, LiteralError> {
        Literal::from_each(shape, values, Literal::set_f64)
    }

    /// Builds from integer values in row-major order (wrapping to the type's width;
    /// floats get the nearest value).
    pub fn from_i128s(shape: &ArrayShape, values: &[i128]) -> Result<Literal, LiteralError> {
        Literal::from_each(shape, values, Literal::set_i128)
    }

    /// Builds from raw bit patterns (low `bit_width` bits of each word).
    pub fn from_bits(shape: &ArrayShape, bits: &[u64]) -> Result<Literal, LiteralError> {
        Literal::from_each(shape, bits, Literal::set_bits)
    }

    /// Zeros of `shape`, then `set` of each value in row-major order.
    fn from_each<T: Copy>(
        shape: &ArrayShape,
        values: &[T],
        set: fn(&mut Literal, usize, T),
    ) -> Result<Literal, LiteralError> {
        let mut l = Literal::zeros(shape)?;
        l.check_len(values.len())?;
        for (i, &v) in values.iter().enumerate() {
            set(&mut l, i, v);
        }
        Ok(l)
    }

    fn check_len(&self, n: usize) -> Result<(), LiteralError> {
        if n != self.element_count() {
            return Err(LiteralError::LengthMismatch {
                shape: self.shape().to_string(),
                expected: self.element_count() as u64,
                actual: n as u64,
            });
        }
        Ok(())
    }

    /// The element type.
    pub fn dtype(&self) -> ElementType {
        match &self.data {
            ArrayData::Pred(_) => ElementType::Pred,
            ArrayData::S4(_) => ElementType::S4,
            ArrayData::S8(_) => ElementType::S8,
            ArrayData::S16(_) => ElementType::S16,
            ArrayData::S32(_) => ElementType::S32,
            ArrayData::S64(_) => ElementType::S64,
            ArrayData::U4(_) => ElementType::U4,
            ArrayData::U8(_) => ElementType::U8,
            ArrayData::U16(_) => ElementType::U16,
            ArrayData::U32(_) => ElementType::U32,
            ArrayData::U64(_) => ElementType::U64,
            ArrayData::F16(_) => ElementType::F16,
            ArrayData::Bf16(_) => ElementType::Bf16,
            ArrayData::F32(_) => ElementType::F32,
            ArrayData::F64(_) => ElementType::F64,
            ArrayData::F8E4M3Fn(_) => ElementType::F8E4M3Fn,
            ArrayData::F8E5M2(_) => ElementType::F8E5M2,
            ArrayData::C64(_) => ElementType::C64,
            ArrayData::C128(_) => ElementType::C128,
            ArrayData::S2(_) => ElementType::S2,
            ArrayData::U2(_) => ElementType::U2,
            ArrayData::Minifloat(t, _) => *t,
        }
    }

    /// Logical dims.
    pub fn dims(&self) -> &[usize] {
        with_array_data!(&self.data, a => a.shape())
    }

    /// The array shape, with this literal's layout.
    pub fn shape(&self) -> ArrayShape {
        ArrayShape {
            dtype: self.dtype(),
            dims: self.dims().iter().map(|&d| d as i64).collect(),
            layout: self.layout.clone(),
        }
    }

    /// The layout, if one was set.
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// The same data with another layout (metadata only; logical values unchanged).
    pub fn with_layout(mut self, layout: Option<Layout>) -> Literal {
        self.layout = layout;
        self
    }

    /// Number of elements.
    pub fn element_count(&self) -> usize {
        with_array_data!(&self.data, a => a.len())
    }

    /// The typed data.
    pub fn data(&self) -> &ArrayData {
        &self.data
    }

    /// The typed data, mutably.
    pub fn data_mut(&mut self) -> &mut ArrayData {
        &mut self.data
    }

    /// Element `i` (row-major) as f64: exact for every float and pred, and for
    /// integers up to 2^53 in magnitude (use [`Literal::get_i128`] for 64-bit integers).
    pub fn get_f64(&self, i: usize) -> f64 {
        match &self.data {
            ArrayData::Pred(a) => flat(a, i) as u8 as f64,
            ArrayData::S4(a) => flat(a, i) as f64,
            ArrayData::S8(a) => flat(a, i) as f64,
            ArrayData::S16(a) => flat(a, i) as f64,
            ArrayData::S32(a) => flat(a, i) as f64,
            ArrayData::S64(a) => flat(a, i) as f64,
            ArrayData::U4(a) => flat(a, i) as f64,
            ArrayData::U8(a) => flat(a, i) as f64,
            ArrayData::U16(a) => flat(a, i) as f64,
            ArrayData::U32(a) => flat(a, i) as f64,
            ArrayData::U64(a) => flat(a, i) as f64,
            ArrayData::F16(a) => flat(a, i).to_f64(),
            ArrayData::Bf16(a) => flat(a, i).to_f64(),
            ArrayData::F32(a) => flat(a, i) as f64,
            ArrayData::F64(a) => flat(a, i),
            ArrayData::F8E4M3Fn(a) => flat(a, i).to_f64(),
            ArrayData::F8E5M2(a) => flat(a, i).to_f64(),
            ArrayData::C64(a) => flat(a, i).re as f64,
            ArrayData::C128(a) => flat(a, i).re,
            ArrayData::S2(a) => flat(a, i) as f64,
            ArrayData::U2(a) => flat(a, i) as f64,
            ArrayData::Minifloat(t, a) => minifloat_value(*t, flat(a, i)),
        }
    }

    /// Element `i` as a scalar literal of the same type (a complex element
    /// whole: `get_bits` holds only the real part of a `c128`).
    pub fn scalar_at(&self, i: usize) -> Result<Literal, LiteralError> {
        let shape = ArrayShape::new(self.dtype(), vec![]);
        if self.dtype().is_complex() {
            Literal::from_complex(&shape, &[self.get_complex(i)])
        } else {
            Literal::from_bits(&shape, &[self.get_bits(i)])
        }
    }

    /// Element `i` as `(re, im)` in f64 (exact for every type: a real
    /// element has a zero imaginary part).
    pub fn get_complex(&self, i: usize) -> (f64, f64) {
        match &self.data {
            ArrayData::C64(a) => {
                let c = flat(a, i);
                (c.re as f64, c.im as f64)
            }
            ArrayData::C128(a) => {
                let c = flat(a, i);
                (c.re, c.im)
            }
            _ => (self.get_f64(i), 0.0),
        }
    }

    /// Sets element `i` of a complex literal, each part rounded once to the
    /// component type (a real literal takes the real part, see [`Literal::set_f64`]).
    pub fn set_complex(&mut self, i: usize, re: f64, im: f64) {
        match &mut self.data {
            ArrayData::C64(a) => *flat_mut(a, i) = num_complex::Complex::new(re as f32, im as f32),
            ArrayData::C128(a) => *flat_mut(a, i) = num_complex::Complex::new(re, im),
            _ => self.set_f64(i, re),
        }
    }

    /// Builds a complex literal from `(re, im)` pairs in row-major order
    /// (each part rounded once to the component type).
    pub fn from_complex(
        shape: &ArrayShape,
        values: &[(f64, f64)],
    ) -> Result<Literal, LiteralError> {
        let mut l = Literal::zeros(shape)?;
        l.check_len(values.len())?;
        for (i, &(re, im)) in values.iter().enumerate() {
            l.set_complex(i, re, im);
        }
        Ok(l)
    }

    /// Element `i` as an integer: exact for integers and pred; floats truncate toward zero
    /// (NaN gives 0, infinities saturate to the i128 range).
    pub fn get_i128(&self, i: usize) -> i128 {
        match &self.data {
            ArrayData::Pred(a) => flat(a, i) as i128,
            ArrayData::S2(a) | ArrayData::S4(a) => flat(a, i) as i128,
            ArrayData::S8(a) => flat(a, i) as i128,
            ArrayData::S16(a) => flat(a, i) as i128,
            ArrayData::S32(a) => flat(a, i) as i128,
            ArrayData::S64(a) => flat(a, i) as i128,
            ArrayData::U2(a) | ArrayData::U4(a) => flat(a, i) as i128,
            ArrayData::U8(a) => flat(a, i) as i128,
            ArrayData::U16(a) => flat(a, i) as i128,
            ArrayData::U32(a) => flat(a, i) as i128,
            ArrayData::U64(a) => flat(a, i) as i128,
            _ => self.get_f64(i) as i128,
        }
    }

    /// Element `i`'s bit pattern in the low `bit_width` bits.
    pub fn get_bits(&self, i: usize) -> u64 {
        match &self.data {
            ArrayData::Pred(a) => flat(a, i) as u64,
            ArrayData::S4(a) => (flat(a, i) as u64) & 0xf,
            ArrayData::S8(a) => flat(a, i) as u8 as u64,
            ArrayData::S16(a) => flat(a, i) as u16 as u64,
            ArrayData::S32(a) => flat(a, i) as u32 as u64,
            ArrayData::S64(a) => flat(a, i) as u64,
            ArrayData::U4(a) => flat(a, i) as u64 & 0xf,
            ArrayData::U8(a) => flat(a, i) as u64,
            ArrayData::U16(a) => flat(a, i) as u64,
            ArrayData::U32(a) => flat(a, i) as u64,
            ArrayData::U64(a) => flat(a, i),
            ArrayData::F16(a) => flat(a, i).to_bits() as u64,
            ArrayData::Bf16(a) => flat(a, i).to_bits() as u64,
            ArrayData::F32(a) => flat(a, i).to_bits() as u64,
            ArrayData::F64(a) => flat(a, i).to_bits(),
            ArrayData::F8E4M3Fn(a) => flat(a, i).0 as u64,
            ArrayData::F8E5M2(a) => flat(a, i).0 as u64,
            ArrayData::C64(a) => {
                let c = flat(a, i);
                c.re.to_bits() as u64 | (c.im.to_bits() as u64) << 32
            }
            // 128 bits do not fit: the real part's (use `get_complex`)
            ArrayData::C128(a) => flat(a, i).re.to_bits(),
            ArrayData::S2(a) => (flat(a, i) as u64) & 0x3,
            ArrayData::U2(a) => flat(a, i) as u64 & 0x3,
            ArrayData::Minifloat(_, a) => flat(a, i) as u64,
        }
    }

    /// Sets element `i` from f64: floats round once to nearest even, integers
    /// truncate toward zero and wrap (NaN gives 0), pred is `v != 0`.
    pub fn set_f64(&mut self, i: usize, v: f64) {
        match &mut self.data {
            ArrayData::F16(a) => *flat_mut(a, i) = f16_from_f64(v),
            ArrayData::Bf16(a) => *flat_mut(a, i) = bf16_from_f64(v),
            ArrayData::F32(a) => *flat_mut(a, i) = v as f32,
            ArrayData::F64(a) => *flat_mut(a, i) = v,
            ArrayData::F8E4M3Fn(a) => *flat_mut(a, i) = F8E4M3Fn::from_f64(v),
            ArrayData::F8E5M2(a) => *flat_mut(a, i) = F8E5M2::from_f64(v),
            ArrayData::Minifloat(t, a) => *flat_mut(a, i) = minifloat_bits(*t, v),
            ArrayData::Pred(a) => *flat_mut(a, i) = v != 0.0,
            ArrayData::C64(a) => *flat_mut(a, i) = num_complex::Complex::new(v as f32, 0.0),
            ArrayData::C128(a) => *flat_mut(a, i) = num_complex::Complex::new(v, 0.0),
            _ => {
                let w = if v.is_nan() { 0 } else { v.trunc() as i128 };
                self.set_i128(i, w)
            }
        }
    }

    /// Sets element `i` from an integer, wrapping to the type's width (floats get the nearest value).
    pub fn set_i128(&mut self, i: usize, v: i128) {
        let t = self.dtype();
        if t.is_pred() {
            self.set_bits(i, u64::from(v != 0))
        } else if t.is_integer() {
            // two's complement: the low `bit_width` bits are the wrapped value
            self.set_bits(i, v as u64)
        } else {
            // i128 -> f64 rounds to nearest (once); then once more into the narrow type only
            // when the integer needs more than 53 bits, which no narrow float can hold anyway.
            self.set_f64(i, v as f64)
        }
    }

    /// Sets element `i` from a bit pattern (low `bit_width` bits).
    pub fn set_bits(&mut self, i: usize, b: u64) {
        match &mut self.data {
            ArrayData::Pred(a) => *flat_mut(a, i) = b & 1 != 0,
            ArrayData::S2(a) => *flat_mut(a, i) = (((b as u8) << 6) as i8) >> 6,
            ArrayData::S4(a) => *flat_mut(a, i) = (((b as u8) << 4) as i8) >> 4,
            ArrayData::S8(a) => *flat_mut(a, i) = b as i8,
            ArrayData::S16(a) => *flat_mut(a, i) = b as i16,
            ArrayData::S32(a) => *flat_mut(a, i) = b as i32,
            ArrayData::S64(a) => *flat_mut(a, i) = b as i64,
            ArrayData::U2(a) => *flat_mut(a, i) = (b as u8) & 0x3,
            ArrayData::U4(a) => *flat_mut(a, i) = (b as u8) & 0xf,
            ArrayData::U8(a) => *flat_mut(a, i) = b as u8,
            ArrayData::U16(a) => *flat_mut(a, i) = b as u16,
            ArrayData::U32(a) => *flat_mut(a, i) = b as u32,
            ArrayData::U64(a) => *flat_mut(a, i) = b,
            ArrayData::F16(a) => *flat_mut(a, i) = f16::from_bits(b as u16),
            ArrayData::Bf16(a) => *flat_mut(a, i) = bf16::from_bits(b as u16),
            ArrayData::F32(a) => *flat_mut(a, i) = f32::from_bits(b as u32),
            ArrayData::F64(a) => *flat_mut(a, i) = f64::from_bits(b),
            ArrayData::F8E4M3Fn(a) => *flat_mut(a, i) = F8E4M3Fn(b as u8),
            ArrayData::F8E5M2(a) => *flat_mut(a, i) = F8E5M2(b as u8),
            ArrayData::C64(a) => {
                *flat_mut(a, i) = num_complex::Complex::new(
                    f32::from_bits(b as u32),
                    f32::from_bits((b >> 32) as u32),
                )
            }
            // the real part's bits (see `get_bits`)
            ArrayData::C128(a) => {
                *flat_mut(a, i) = num_complex::Complex::new(f64::from_bits(b), 0.0)
            }
            ArrayData::Minifloat(t, a) => {
                *flat_mut(a, i) = (b & ((1u64 << t.bit_width()) - 1)) as u8
            }
        }
    }

    /// All elements as f64 (see [`Literal::get_f64`]).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        (0..self.element_count()).map(|i| self.get_f64(i)).collect()
    }

    /// All elements as integers (see [`Literal::get_i128`]).
    pub fn to_i128_vec(&self) -> Vec<i128> {
        (0..self.element_count())
            .map(|i| self.get_i128(i))
            .collect()
    }

    /// All elements' bit patterns.
    pub fn to_bits_vec(&self) -> Vec<u64> {
        (0..self.element_count())
            .map(|i| self.get_bits(i))
            .collect()
    }
}

/// The exact value of a minifloat pattern.
pub(crate) fn minifloat_value(t: ElementType, bits: u8) -> f64 {
    t.float_format()
        .map_or(f64::NAN, |f| bits_to_f64(bits as u64, &f))
}

/// `v` rounded once (to nearest even) into minifloat type `t`, as its pattern.
pub(crate) fn minifloat_bits(t: ElementType, v: f64) -> u8 {
    t.float_format().map_or(0, |f| round_to_bits(v, &f) as u8)
}

// Literals are built by this module in standard (row-major, contiguous) layout,
// so flat indexing goes through the contiguous slice.
fn flat<T: Copy>(a: &ArrayD<T>, i: usize) -> T {
    match a.as_slice() {
        Some(s) => s[i],
        None => *a.iter().nth(i).expect("index in range"),
    }
}

fn flat_mut<T>(a: &mut ArrayD<T>, i: usize) -> &mut T {
    if a.is_standard_layout() {
        &mut a.as_slice_mut().expect("standard layout")[i]
    } else {
        a.iter_mut().nth(i).expect("index in range")
    }
}

/// Formats element `i` of a literal exactly enough to reproduce it.
pub fn element_text(l: &Literal, i: usize) -> String {
    let t = l.dtype();
    if t.is_float() {
        let v = l.get_f64(i);
        format!(
            "{v:?} (0x{:0w$x})",
            l.get_bits(i),
            w = (t.bit_width() as usize).div_ceil(4)
        )
    } else if t.is_pred() {
        (l.get_i128(i) != 0).to_string()
    } else {
        l.get_i128(i).to_string()
    }
}
