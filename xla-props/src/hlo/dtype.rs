//! Element types (XLA's `PrimitiveType`), with their names and bit formats.

use std::fmt;
use std::str::FromStr;

/// The format of a binary floating-point type: widths and which specials it has.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatFormat {
    /// Exponent field width in bits.
    pub exponent_bits: u32,
    /// Explicit mantissa (fraction) field width in bits.
    pub mantissa_bits: u32,
    /// Whether the all-ones exponent encodes infinities (false for `f8e4m3fn`).
    pub has_inf: bool,
    /// How NaN, infinities and zero are encoded.
    pub specials: Specials,
    /// Exponent bias.
    pub bias: i32,
    /// Largest finite value.
    pub max: f64,
}

/// The value of exponent field `top` with mantissa field `2^m - 1 - less`
/// (`m` mantissa bits): `(2^(m+1) - 1 - less) * 2^(top - bias - m)`, exact
/// in f64 for every format here.
const fn max_value(bias: i32, top: i32, m: u32, less: u32) -> f64 {
    let significand = ((1u64 << (m + 1)) - 1 - less as u64) as f64;
    let e = top - bias - m as i32;
    let mut scale = 1.0;
    let mut i = 0;
    while i < e.unsigned_abs() {
        scale *= 2.0;
        i += 1;
    }
    if e < 0 {
        significand / scale
    } else {
        significand * scale
    }
}

impl FloatFormat {
    /// Total storage width in bits (a sign bit, except in `f8e8m0fnu`).
    pub const fn bit_width(&self) -> u32 {
        let sign = !matches!(self.specials, Specials::ExponentOnly) as u32;
        sign + self.exponent_bits + self.mantissa_bits
    }
    /// An IEEE-like format of these widths, with infinities, its largest finite value computed.
    pub const fn ieee(exponent_bits: u32, mantissa_bits: u32) -> FloatFormat {
        let bias = (1i32 << (exponent_bits - 1)) - 1;
        FloatFormat {
            exponent_bits,
            mantissa_bits,
            has_inf: true,
            specials: Specials::Ieee,
            bias,
            max: max_value(bias, (1 << exponent_bits) - 2, mantissa_bits, 0),
        }
    }

    /// A format without infinities, where the top exponent holds finite
    /// values (all but the all-ones pattern for `AllOnesNan`).
    const fn finite(
        exponent_bits: u32,
        mantissa_bits: u32,
        bias: i32,
        specials: Specials,
    ) -> FloatFormat {
        let less = matches!(specials, Specials::AllOnesNan) as u32;
        FloatFormat {
            exponent_bits,
            mantissa_bits,
            has_inf: false,
            specials,
            bias,
            max: max_value(bias, (1 << exponent_bits) - 1, mantissa_bits, less),
        }
    }

    /// Smallest positive normal value.
    pub fn min_normal(&self) -> f64 {
        2f64.powi(1 - self.bias)
    }
    /// Smallest positive subnormal value.
    pub fn min_subnormal(&self) -> f64 {
        2f64.powi(1 - self.bias - self.mantissa_bits as i32)
    }
    /// Unit roundoff-ish machine epsilon: the gap between 1 and the next value.
    pub fn epsilon(&self) -> f64 {
        2f64.powi(-(self.mantissa_bits as i32))
    }
}

/// How a float format encodes its special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent holds infinities (zero mantissa)
    /// and NaNs (any other mantissa).
    Ieee,
    /// `fn`: no infinities; all ones in exponent and mantissa is NaN (either
    /// sign), every other pattern is finite. Overflow gives NaN.
    AllOnesNan,
    /// `fnuz`: no infinities and no negative zero; the negative-zero pattern
    /// (sign bit alone) is the only NaN. Overflow gives NaN.
    NegativeZeroNan,
    /// `fn` without NaN (the MX f6 and f4 types): every pattern is finite.
    /// Overflow and infinities saturate to the largest magnitude; NaN, which
    /// the format cannot hold, becomes a zero of its sign.
    FiniteOnly,
    /// `f8e8m0fnu`: no sign, no mantissa, no zero, no subnormals: pattern
    /// `e` is `2^(e - bias)`, all ones is NaN. Zero and values under the
    /// smallest become the smallest; negative values, overflow and
    /// infinities become NaN.
    ExponentOnly,
}

macro_rules! element_types {
    ($($variant:ident => $name:literal, $bits:expr, $kind:ident;)*) => {
        /// An HLO element type.
        ///
        /// ```
        /// use xla_props::hlo::ElementType;
        /// let t: ElementType = "bf16".parse().unwrap();
        /// assert_eq!(t, ElementType::Bf16);
        /// assert_eq!(t.bit_width(), 16);
        /// assert!(t.is_float());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        pub enum ElementType {
            $(#[doc = $name] $variant,)*
        }

        /// Read by its HLO name (`f32`, as `xla-props.toml` writes it) or
        /// by its variant name (`F32`, as it is serialized).
        impl<'de> serde::Deserialize<'de> for ElementType {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ElementType, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                match s.as_ref() {
                    $($name | stringify!($variant) => Ok(ElementType::$variant),)*
                    other => Err(serde::de::Error::custom(format!("unknown element type `{other}`"))),
                }
            }
        }

        impl ElementType {
            /// Every element type, in declaration order.
            pub const ALL: &'static [ElementType] = &[$(ElementType::$variant,)*];

            /// The HLO text name, e.g. `f32`.
            pub const fn name(self) -> &'static str {
                match self { $(ElementType::$variant => $name,)* }
            }

            /// Storage width in bits (pred is 8 bits wide in memory but one logical bit; we say 8).
            pub const fn bit_width(self) -> u32 {
                match self { $(ElementType::$variant => $bits,)* }
            }

            /// The broad kind of the type.
            pub const fn kind(self) -> TypeKind {
                match self { $(ElementType::$variant => TypeKind::$kind,)* }
            }
        }

        impl FromStr for ElementType {
            type Err = UnknownElementType;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok(ElementType::$variant),)*
                    _ => Err(UnknownElementType(s.to_string())),
                }
            }
        }
    };
}

// The types after `c128` were added later (narrow integers, and the f8, f6
// and f4 formats the StableHLO spec has beyond f8e4m3fn and f8e5m2): they
// are read, printed and evaluated by the reference, but not in `REAL`,
// `FLOATS` or `INTEGERS`, the types property runs generate. Appending keeps
// the positions of the older types in `ALL`.
element_types! {
    Pred => "pred", 8, Pred;
    S4 => "s4", 4, Signed;
    S8 => "s8", 8, Signed;
    S16 => "s16", 16, Signed;
    S32 => "s32", 32, Signed;
    S64 => "s64", 64, Signed;
    U4 => "u4", 4, Unsigned;
    U8 => "u8", 8, Unsigned;
    U16 => "u16", 16, Unsigned;
    U32 => "u32", 32, Unsigned;
    U64 => "u64", 64, Unsigned;
    F16 => "f16", 16, Float;
    Bf16 => "bf16", 16, Float;
    F32 => "f32", 32, Float;
    F64 => "f64", 64, Float;
    F8E4M3Fn => "f8e4m3fn", 8, Float;
    F8E5M2 => "f8e5m2", 8, Float;
    C64 => "c64", 64, Complex;
    C128 => "c128", 128, Complex;
    S2 => "s2", 2, Signed;
    U2 => "u2", 2, Unsigned;
    F8E3M4 => "f8e3m4", 8, Float;
    F8E4M3 => "f8e4m3", 8, Float;
    F8E4M3Fnuz => "f8e4m3fnuz", 8, Float;
    F8E4M3B11Fnuz => "f8e4m3b11fnuz", 8, Float;
    F8E5M2Fnuz => "f8e5m2fnuz", 8, Float;
    F6E2M3Fn => "f6e2m3fn", 6, Float;
    F6E3M2Fn => "f6e3m2fn", 6, Float;
    F4E2M1Fn => "f4e2m1fn", 4, Float;
    F8E8M0Fnu => "f8e8m0fnu", 8, Float;
}

/// The broad kind of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// `pred`.
    Pred,
    /// Two's complement signed integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
    /// Binary floating point.
    Float,
    /// Complex numbers (parse-only in this tool).
    Complex,
}

/// The error for a type name that is not an HLO element type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown element type `{0}`")]
pub struct UnknownElementType(pub String);

impl ElementType {
    /// `a` followed by `b`: a type list built from others at compile time
    /// (`N`, their total length, is checked).
    pub const fn concat<const N: usize>(a: &[ElementType], b: &[ElementType]) -> [ElementType; N] {
        assert!(a.len() + b.len() == N);
        let mut out = [ElementType::Pred; N];
        let mut i = 0;
        while i < N {
            out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
            i += 1;
        }
        out
    }

    /// The real (non-complex) types this tool evaluates: pred, the
    /// integers, the floats.
    pub const REAL: &'static [ElementType] = &Self::concat::<17>(
        &[ElementType::Pred],
        &Self::concat::<16>(Self::INTEGERS, Self::FLOATS),
    );
    /// Floating-point types.
    pub const FLOATS: &'static [ElementType] = &[
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F64,
        ElementType::F8E4M3Fn,
        ElementType::F8E5M2,
    ];
    /// Signed integer types.
    pub const SIGNED_INTS: &'static [ElementType] =
        &[Self::S4, Self::S8, Self::S16, Self::S32, Self::S64];
    /// Unsigned integer types.
    pub const UNSIGNED_INTS: &'static [ElementType] =
        &[Self::U4, Self::U8, Self::U16, Self::U32, Self::U64];
    /// Integer types (signed and unsigned, not pred).
    pub const INTEGERS: &'static [ElementType] =
        &Self::concat::<10>(Self::SIGNED_INTS, Self::UNSIGNED_INTS);

    /// True for binary floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), TypeKind::Float)
    }
    /// True for signed integer types.
    pub const fn is_signed_int(self) -> bool {
        matches!(self.kind(), TypeKind::Signed)
    }
    /// True for unsigned integer types.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(self.kind(), TypeKind::Unsigned)
    }
    /// True for signed or unsigned integer types (not pred).
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), TypeKind::Signed | TypeKind::Unsigned)
    }
    /// True for `pred`.
    pub const fn is_pred(self) -> bool {
        matches!(self.kind(), TypeKind::Pred)
    }
    /// True for the float types of at most 8 bits other than `f8e4m3fn`
    /// and `f8e5m2` (stored as bit patterns in `ArrayData::Minifloat`).
    pub const fn is_minifloat(self) -> bool {
        matches!(
            self,
            ElementType::F8E3M4
                | ElementType::F8E4M3
                | ElementType::F8E4M3Fnuz
                | ElementType::F8E4M3B11Fnuz
                | ElementType::F8E5M2Fnuz
                | ElementType::F6E2M3Fn
                | ElementType::F6E3M2Fn
                | ElementType::F4E2M1Fn
                | ElementType::F8E8M0Fnu
        )
    }
    /// True for the types added for the StableHLO spec (s2, u2 and the
    /// minifloats): the reference reads, prints and evaluates them; the
    /// compiled backends and the interpreter answer `Unsupported`.
    pub const fn is_extended(self) -> bool {
        matches!(self, ElementType::S2 | ElementType::U2) || self.is_minifloat()
    }
    /// True for complex types.
    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), TypeKind::Complex)
    }
    /// The width of a value's bits in `bitcast-convert`: 1 for pred (the
    /// spec's `i1`, and XLA's `primitive_util::BitWidth(PRED)`), otherwise
    /// [`ElementType::bit_width`].
    ///
    /// ```
    /// use xla_props::hlo::ElementType;
    /// assert_eq!(ElementType::Pred.bitcast_width(), 1);
    /// assert_eq!(ElementType::S2.bitcast_width(), 2);
    /// ```
    pub const fn bitcast_width(self) -> u32 {
        if self.is_pred() {
            1
        } else {
            self.bit_width()
        }
    }
    /// Bytes per element in a dense host buffer (s4/u4 take a whole byte, as PJRT's unpacked form).
    pub const fn byte_size(self) -> usize {
        let bits = self.bit_width();
        if bits < 8 {
            1
        } else {
            (bits / 8) as usize
        }
    }

    /// The unsigned integer type `bits` wide (8, 16, 32 or 64): the type a
    /// float's bit pattern is read as.
    ///
    /// ```
    /// use xla_props::hlo::ElementType;
    /// assert_eq!(ElementType::unsigned_of_width(ElementType::Bf16.bit_width()), Some(ElementType::U16));
    /// assert_eq!(ElementType::unsigned_of_width(4), None);
    /// ```
    pub const fn unsigned_of_width(bits: u32) -> Option<ElementType> {
        match bits {
            8 => Some(ElementType::U8),
            16 => Some(ElementType::U16),
            32 => Some(ElementType::U32),
            64 => Some(ElementType::U64),
            _ => None,
        }
    }

    /// The float format, for float types.
    pub const fn float_format(self) -> Option<FloatFormat> {
        match self {
            ElementType::F16 => Some(FloatFormat {
                exponent_bits: 5,
                mantissa_bits: 10,
                has_inf: true,
                specials: Specials::Ieee,
                bias: 15,
                max: 65504.0,
            }),
            ElementType::Bf16 => Some(FloatFormat {
                exponent_bits: 8,
                mantissa_bits: 7,
                has_inf: true,
                specials: Specials::Ieee,
                bias: 127,
                max: 3.3895313892515355e38,
            }),
            ElementType::F32 => Some(FloatFormat {
                exponent_bits: 8,
                mantissa_bits: 23,
                has_inf: true,
                specials: Specials::Ieee,
                bias: 127,
                max: f32::MAX as f64,
            }),
            ElementType::F64 => Some(FloatFormat {
                exponent_bits: 11,
                mantissa_bits: 52,
                has_inf: true,
                specials: Specials::Ieee,
                bias: 1023,
                max: f64::MAX,
            }),
            ElementType::F8E4M3Fn => Some(FloatFormat {
                exponent_bits: 4,
                mantissa_bits: 3,
                has_inf: false,
                specials: Specials::AllOnesNan,
                bias: 7,
                max: 448.0,
            }),
            ElementType::F8E5M2 => Some(FloatFormat {
                exponent_bits: 5,
                mantissa_bits: 2,
                has_inf: true,
                specials: Specials::Ieee,
                bias: 15,
                max: 57344.0,
            }),
            ElementType::F8E3M4 => Some(FloatFormat::ieee(3, 4)),
            ElementType::F8E4M3 => Some(FloatFormat::ieee(4, 3)),
            ElementType::F8E4M3Fnuz => {
                Some(FloatFormat::finite(4, 3, 8, Specials::NegativeZeroNan))
            }
            ElementType::F8E4M3B11Fnuz => {
                Some(FloatFormat::finite(4, 3, 11, Specials::NegativeZeroNan))
            }
            ElementType::F8E5M2Fnuz => {
                Some(FloatFormat::finite(5, 2, 16, Specials::NegativeZeroNan))
            }
            ElementType::F6E2M3Fn => Some(FloatFormat::finite(2, 3, 1, Specials::FiniteOnly)),
            ElementType::F6E3M2Fn => Some(FloatFormat::finite(3, 2, 3, Specials::FiniteOnly)),
            ElementType::F4E2M1Fn => Some(FloatFormat::finite(2, 1, 1, Specials::FiniteOnly)),
            // no sign bit: 8 exponent bits and nothing else (see `bit_width`)
            ElementType::F8E8M0Fnu => Some(FloatFormat {
                exponent_bits: 8,
                mantissa_bits: 0,
                has_inf: false,
                specials: Specials::ExponentOnly,
                bias: 127,
                max: max_value(127, 254, 0, 0),
            }),
            _ => None,
        }
    }

    /// The inclusive value range of an integer type, as i128.
    pub const fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.bit_width();
        match self.kind() {
            TypeKind::Signed => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
            TypeKind::Unsigned => Some((0, (1i128 << bits) - 1)),
            TypeKind::Pred => Some((0, 1)),
            _ => None,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &t in ElementType::ALL {
            assert_eq!(t.name().parse::<ElementType>().unwrap(), t);
        }
        assert!("f17".parse::<ElementType>().is_err());
    }

    #[test]
    fn float_formats_are_consistent() {
        for &t in ElementType::FLOATS {
            let f = t.float_format().unwrap();
            assert_eq!(f.bit_width(), t.bit_width());
        }
        let f16 = ElementType::F16.float_format().unwrap();
        assert_eq!(f16.min_normal(), 6.103515625e-05);
        assert_eq!(f16.min_subnormal(), 5.960464477539063e-08);
    }

    #[test]
    fn int_ranges() {
        assert_eq!(ElementType::S4.int_range(), Some((-8, 7)));
        assert_eq!(ElementType::U64.int_range(), Some((0, u64::MAX as i128)));
    }
}
