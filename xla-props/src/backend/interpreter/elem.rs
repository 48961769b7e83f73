//! Typed element access: one generic kernel per op, one dtype dispatch per op.

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

use super::math::Compute;
use crate::backend::BackendError;
use crate::hlo::ElementType;
use crate::literal::{ArrayData, F8E4M3Fn, Literal, Value, F8E5M2};

/// Shorthand for the interpreter's results.
pub(crate) type Res<T> = Result<T, BackendError>;

/// An execution error.
pub(crate) fn err<T>(msg: impl Into<String>) -> Res<T> {
    Err(BackendError::Execute(msg.into()))
}

/// A storage element type of [`ArrayData`].
pub(crate) trait Elem: Copy + Default + PartialEq + Send + Sync + 'static {
    /// The storage array of `d` when it holds this element type.
    fn view(d: &ArrayData) -> Option<&ArrayD<Self>>;
    /// Wraps storage as the variant for `dtype` (s4 and s8 share i8, u4 and u8 share u8).
    fn wrap(dtype: ElementType, a: ArrayD<Self>) -> Option<ArrayData>;
}

macro_rules! elem {
    ($t:ty, $($variant:ident),+) => {
        impl Elem for $t {
            fn view(d: &ArrayData) -> Option<&ArrayD<Self>> {
                match d {
                    $(ArrayData::$variant(a) => Some(a),)+
                    _ => None,
                }
            }
            fn wrap(dtype: ElementType, a: ArrayD<Self>) -> Option<ArrayData> {
                match dtype {
                    $(ElementType::$variant => Some(ArrayData::$variant(a)),)+
                    _ => None,
                }
            }
        }
    };
}

elem!(bool, Pred);
elem!(i8, S4, S8);
elem!(i16, S16);
elem!(i32, S32);
elem!(i64, S64);
elem!(u8, U4, U8);
elem!(u16, U16);
elem!(u32, U32);
elem!(u64, U64);
elem!(f16, F16);
elem!(bf16, Bf16);
elem!(f32, F32);
elem!(f64, F64);
elem!(F8E4M3Fn, F8E4M3Fn);
elem!(F8E5M2, F8E5M2);
elem!(num_complex::Complex<f32>, C64);
elem!(num_complex::Complex<f64>, C128);

/// The contiguous row-major elements of `lit` as `T`, or an error naming `what`.
pub(crate) fn slice_of<'a, T: Elem>(lit: &'a Literal, what: &str) -> Res<&'a [T]> {
    T::view(lit.data())
        .and_then(|a| a.as_slice())
        .ok_or_else(|| {
            BackendError::Execute(format!(
                "{what}: operand of type {} does not match the operation's type",
                lit.dtype()
            ))
        })
}

/// An error naming `op` unless `a` and `b` have one type and dims.
pub(crate) fn same_shape(op: &str, a: &Literal, b: &Literal) -> Res<()> {
    if a.dims() != b.dims() || a.dtype() != b.dtype() {
        return err(format!(
            "{op}: operand shapes differ: {} vs {}",
            a.shape(),
            b.shape()
        ));
    }
    Ok(())
}

/// Builds a literal of `dtype` and `dims` from row-major values.
pub(crate) fn make<T: Elem>(dtype: ElementType, dims: &[usize], v: Vec<T>) -> Res<Literal> {
    let a = ArrayD::from_shape_vec(IxDyn(dims), v)
        .map_err(|e| BackendError::Execute(format!("internal shape mismatch: {e}")))?;
    let mut data = T::wrap(dtype, a).ok_or_else(|| {
        BackendError::Execute(format!("internal error: storage does not match {dtype}"))
    })?;
    normalize_narrow_ints(&mut data);
    Ok(Literal::new(data))
}

/// Keeps s4 values sign-extended and u4 values masked in their byte storage.
fn normalize_narrow_ints(data: &mut ArrayData) {
    match data {
        ArrayData::S4(a) => a.mapv_inplace(|v| (v << 4) >> 4),
        ArrayData::U4(a) => a.mapv_inplace(|v| v & 0xf),
        _ => {}
    }
}

/// The storage types of the integer variants of [`ArrayData`] and
/// [`ElementType`], as `[variants] type,` rows appended to `$($args)*` for
/// the macro `$then` (`typed_match`, or `float_rows` to append those too).
macro_rules! int_rows {
    ($then:ident; $($args:tt)*) => {
        $crate::backend::interpreter::elem::$then!($($args)*
            [S4 S8] i8, [S16] i16, [S32] i32, [S64] i64,
            [U4 U8] u8, [U16] u16, [U32] u32, [U64] u64,)
    };
}
pub(crate) use int_rows;

/// The storage types of the float variants, as [`int_rows`] gives the integers'.
macro_rules! float_rows {
    ($then:ident; $($args:tt)*) => {
        $crate::backend::interpreter::elem::$then!($($args)*
            [F16] half::f16, [Bf16] half::bf16, [F32] f32, [F64] f64,
            [F8E4M3Fn] $crate::literal::F8E4M3Fn, [F8E5M2] $crate::literal::F8E5M2,)
    };
}
pub(crate) use float_rows;

/// A match with one arm per `[variants] type` row, binding the row's type
/// as `$t` for `$body`, and the arm `$op => $other` for the rest: on an
/// [`ArrayData`] (`on_data`, binding the array as `$a`) or on an
/// [`ElementType`] (`on_type`).
macro_rules! typed_match {
    (on_data $data:expr, $a:ident : $t:ident => $body:expr, $op:pat => $other:expr;
     $([$($v:ident)+] $ty:ty,)+) => {
        match $data {
            $($(ArrayData::$v($a))|+ => {
                type $t = $ty;
                $body
            })+
            $op => $other,
        }
    };
    (on_type $dt:expr, $t:ident => $body:expr, $op:pat => $other:expr;
     $([$($v:ident)+] $ty:ty,)+) => {
        match $dt {
            $($(ElementType::$v)|+ => {
                type $t = $ty;
                $body
            })+
            $op => $other,
        }
    };
}
pub(crate) use typed_match;

/// Applies a generic body to the typed storage of an `ArrayData`, binding the
/// element type as `$t` and the array as `$a`.
macro_rules! dispatch {
    ($data:expr, $a:ident : $t:ident => $body:expr) => {
        $crate::backend::interpreter::elem::int_rows!(float_rows; typed_match;
            on_data $data, $a : $t => $body,
            // refused when the module is compiled (`ElementType::is_extended`)
            d @ (ArrayData::S2(_) | ArrayData::U2(_) | ArrayData::Minifloat(..)) => {
                return Err($crate::backend::BackendError::Unsupported {
                    what: format!(
                        "element type {}",
                        $crate::literal::Literal::new(d.clone()).dtype()
                    ),
                })
            };
            [Pred] bool, [C64] num_complex::Complex<f32>, [C128] num_complex::Complex<f64>,)
    };
}
pub(crate) use dispatch;

/// A float storage type and the type it computes in (f32 for f32 and narrower, f64 for f64).
pub(crate) trait FloatElem: Elem {
    /// The compute type.
    type C: Compute;
    /// Widens exactly.
    fn up(self) -> Self::C;
    /// Rounds once, to nearest even.
    fn down(c: Self::C) -> Self;
    /// The bit pattern (for total order).
    fn bits(self) -> u64;
    /// Width in bits.
    const BITS: u32;
}

/// The [`FloatElem`] impls, one row each: the storage type, its compute
/// type, its width, and (with `self` and the compute value named) how it
/// widens, rounds and gives its bits.
macro_rules! float_elem {
    ($($t:ty: $c:ty, $bits:literal, |$s:ident| $up:expr, |$v:ident| $down:expr, $to_bits:expr;)+) => {$(
        impl FloatElem for $t {
            type C = $c;
            fn up($s) -> $c {
                $up
            }
            fn down($v: $c) -> $t {
                $down
            }
            fn bits($s) -> u64 {
                $to_bits
            }
            const BITS: u32 = $bits;
        }
    )+};
}

float_elem! {
    f32: f32, 32, |self| self, |c| c, self.to_bits() as u64;
    f64: f64, 64, |self| self, |c| c, self.to_bits();
    f16: f32, 16, |self| self.to_f32(), |c| f16::from_f32(c), self.to_bits() as u64;
    bf16: f32, 16, |self| self.to_f32(), |c| bf16::from_f32(c), self.to_bits() as u64;
    F8E4M3Fn: f32, 8, |self| self.to_f64() as f32, |c| F8E4M3Fn::from_f64(c as f64), self.0 as u64;
    F8E5M2: f32, 8, |self| self.to_f64() as f32, |c| F8E5M2::from_f64(c as f64), self.0 as u64;
}

/// Applies a body to float storage, binding the element type; other types run `$other`.
macro_rules! dispatch_float {
    ($data:expr, $a:ident : $t:ident => $body:expr, _ => $other:expr) => {
        $crate::backend::interpreter::elem::float_rows!(typed_match;
            on_data $data, $a : $t => $body, _ => $other;)
    };
}
pub(crate) use dispatch_float;

/// An integer storage type, computed in 64 bits.
pub(crate) trait IntElem: Elem {
    /// Sign- or zero-extends to 64 bits.
    fn to_i64(self) -> i64;
    /// Truncates to this width.
    fn from_i64(v: i64) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl IntElem for $t {
            fn to_i64(self) -> i64 { self as i64 }
            fn from_i64(v: i64) -> Self { v as $t }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Applies a body to integer storage, binding the element type; other types run `$other`.
macro_rules! dispatch_int {
    ($data:expr, $a:ident : $t:ident => $body:expr, _ => $other:expr) => {
        $crate::backend::interpreter::elem::int_rows!(typed_match;
            on_data $data, $a : $t => $body, _ => $other;)
    };
}
pub(crate) use dispatch_int;

/// A borrowed view of an instruction's value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ValRef<'a> {
    Array(&'a Literal),
    Tuple(&'a [Value]),
    Token,
}

impl<'a> ValRef<'a> {
    pub(crate) fn of(v: &'a Value) -> ValRef<'a> {
        match v {
            Value::Array(l) => ValRef::Array(l),
            Value::Tuple(t) => ValRef::Tuple(t),
            Value::Token => ValRef::Token,
        }
    }
    /// The array, or an error saying what needed one.
    pub(crate) fn array(self, what: &str) -> Res<&'a Literal> {
        match self {
            ValRef::Array(l) => Ok(l),
            _ => err(format!(
                "{what}: expected an array operand, got a tuple or token"
            )),
        }
    }
    /// An owned copy.
    pub(crate) fn to_value(self) -> Value {
        match self {
            ValRef::Array(l) => Value::Array(l.clone()),
            ValRef::Tuple(t) => Value::Tuple(t.to_vec()),
            ValRef::Token => Value::Token,
        }
    }
}

/// Row-major strides and multi-index stepping: the reference's.
pub(crate) use crate::reference::data::{next_index, strides};

/// Converts i64 dims to usize, rejecting negative ones.
pub(crate) fn udims(dims: &[i64], what: &str) -> Res<Vec<usize>> {
    dims.iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| BackendError::Execute(format!("{what}: negative dimension {d}")))
        })
        .collect()
}

/// The element of `items` at an HLO index attribute (a tuple index, a
/// parameter number); None when it is negative or past the end.
pub(crate) fn nth<T>(items: &[T], i: i64) -> Option<&T> {
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

/// Reads every element of an integer (or pred) literal as i64.
pub(crate) fn int_values(lit: &Literal, what: &str) -> Res<Vec<i64>> {
    if let ArrayData::U64(a) = lit.data() {
        // indices past i64::MAX are just as out of range
        return Ok(a
            .iter()
            .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
            .collect());
    }
    dispatch_int!(lit.data(), a: T => Ok(a.iter().map(|&v: &T| v.to_i64()).collect()),
    _ => match lit.data() {
        ArrayData::Pred(a) => Ok(a.iter().map(|&b| b as i64).collect()),
        _ => err(format!("{what}: expected an integer operand, got {}", lit.dtype())),
    })
}

/// Reads a scalar integer operand.
pub(crate) fn scalar_int(lit: &Literal, what: &str) -> Res<i64> {
    if lit.element_count() != 1 {
        return err(format!(
            "{what}: expected a scalar index, got {}",
            lit.shape()
        ));
    }
    Ok(int_values(lit, what)?[0])
}

/// Binds `$t` to the storage type of a float `ElementType`; other types run `$other`.
macro_rules! with_float_type {
    ($dt:expr, $t:ident => $body:expr, _ => $other:expr) => {
        $crate::backend::interpreter::elem::float_rows!(typed_match;
            on_type $dt, $t => $body, _ => $other;)
    };
}
pub(crate) use with_float_type;

/// Binds `$t` to the storage type of an integer `ElementType`; other types run `$other`.
macro_rules! with_int_type {
    ($dt:expr, $t:ident => $body:expr, _ => $other:expr) => {
        $crate::backend::interpreter::elem::int_rows!(typed_match;
            on_type $dt, $t => $body, _ => $other;)
    };
}
pub(crate) use with_int_type;
