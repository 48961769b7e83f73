//! `algorithm=` of a dot (XLA's `PrecisionConfig.Algorithm`): the operand
//! precision, the accumulation type and how many products of operand
//! components make up one product. Kept verbatim in the instruction's
//! `other` attributes (so the HLO text round-trips unchanged) and read here.

use super::{Attrs, ElementType};

/// How a dot algorithm rounds an operand before multiplying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandPrecision {
    /// Rounded (to nearest even) to this type.
    Type(ElementType),
    /// Rounded to TF32 (8 exponent bits, 10 mantissa bits: `reduce-precision`
    /// with `exponent_bits=8, mantissa_bits=10`).
    Tf32,
    /// Operands that already are an f8 type, used as they are.
    AnyF8,
}

impl OperandPrecision {
    /// The type an operand of type `t` is converted to; `None` when the
    /// precision is not a type (TF32) or `t` is not an f8 type for `AnyF8`.
    pub fn or_operand(self, t: ElementType) -> Option<ElementType> {
        match self {
            OperandPrecision::Type(p) => Some(p),
            OperandPrecision::Tf32 => None,
            OperandPrecision::AnyF8 => (t.is_float() && t.bit_width() == 8).then_some(t),
        }
    }
}

macro_rules! dot_algorithms {
    ($($variant:ident => $name:literal, $prec:expr, $acc:ident, $components:literal, $products:literal, $imprecise:literal;)*) => {
        /// A dot algorithm (XLA's `PrecisionConfig.Algorithm`, HLO text
        /// `algorithm=dot_bf16_bf16_f32`).
        ///
        /// ```
        /// use xla_props::hlo::{DotAlgorithm, ElementType};
        /// let a = DotAlgorithm::from_name("dot_bf16_bf16_f32").unwrap();
        /// assert_eq!(a.name(), "dot_bf16_bf16_f32");
        /// assert_eq!(a.accumulation_type(), ElementType::F32);
        /// assert_eq!(a.products(), &[(0, 0)]);
        /// assert!(DotAlgorithm::from_name("dot_bf16").is_none());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DotAlgorithm {
            $(#[doc = $name] $variant,)*
        }

        impl DotAlgorithm {
            /// Every algorithm, in XLA's order.
            pub const ALL: &'static [DotAlgorithm] = &[$(DotAlgorithm::$variant,)*];

            /// The HLO text name (`dot_bf16_bf16_f32`).
            pub fn name(self) -> &'static str {
                match self { $(DotAlgorithm::$variant => $name,)* }
            }

            /// How each operand is rounded.
            pub fn operand_precision(self) -> OperandPrecision {
                match self { $(DotAlgorithm::$variant => $prec,)* }
            }

            /// The accumulation type.
            pub fn accumulation_type(self) -> ElementType {
                match self { $(DotAlgorithm::$variant => ElementType::$acc,)* }
            }

            /// Components each operand is split into (StableHLO's
            /// `lhs_component_count` is 1 for all of XLA's; this is the
            /// split the `_x3`/`_x6`/`_x9` products are taken over).
            pub fn components(self) -> usize {
                match self { $(DotAlgorithm::$variant => $components,)* }
            }

            /// StableHLO's `num_primitive_operations`.
            pub fn primitive_operations(self) -> usize {
                match self { $(DotAlgorithm::$variant => $products,)* }
            }

            /// StableHLO's `allow_imprecise_accumulation`.
            pub fn imprecise_accumulation(self) -> bool {
                match self { $(DotAlgorithm::$variant => $imprecise,)* }
            }
        }
    };
}

use OperandPrecision::{AnyF8, Tf32, Type};

dot_algorithms! {
    AnyF8AnyF8F32 => "dot_any_f8_any_f8_f32", AnyF8, F32, 1, 1, false;
    AnyF8AnyF8F32FastAccum => "dot_any_f8_any_f8_f32_fast_accum", AnyF8, F32, 1, 1, true;
    F16F16F16 => "dot_f16_f16_f16", Type(ElementType::F16), F16, 1, 1, false;
    F16F16F32 => "dot_f16_f16_f32", Type(ElementType::F16), F32, 1, 1, false;
    Bf16Bf16Bf16 => "dot_bf16_bf16_bf16", Type(ElementType::Bf16), Bf16, 1, 1, false;
    Bf16Bf16F32 => "dot_bf16_bf16_f32", Type(ElementType::Bf16), F32, 1, 1, false;
    Bf16Bf16F32X3 => "dot_bf16_bf16_f32_x3", Type(ElementType::Bf16), F32, 2, 3, false;
    Bf16Bf16F32X6 => "dot_bf16_bf16_f32_x6", Type(ElementType::Bf16), F32, 3, 6, false;
    Bf16Bf16F32X9 => "dot_bf16_bf16_f32_x9", Type(ElementType::Bf16), F32, 3, 9, false;
    Tf32Tf32F32 => "dot_tf32_tf32_f32", Tf32, F32, 1, 1, false;
    Tf32Tf32F32X3 => "dot_tf32_tf32_f32_x3", Tf32, F32, 2, 3, false;
    F32F32F32 => "dot_f32_f32_f32", Type(ElementType::F32), F32, 1, 1, false;
    F64F64F64 => "dot_f64_f64_f64", Type(ElementType::F64), F64, 1, 1, false;
}

impl DotAlgorithm {
    /// The algorithm of this HLO text name.
    pub fn from_name(name: &str) -> Option<DotAlgorithm> {
        DotAlgorithm::ALL.iter().copied().find(|a| a.name() == name)
    }

    /// The algorithm of a dot's attributes (`algorithm=` kept verbatim);
    /// `Err` names an unknown one.
    pub fn of(attrs: &Attrs) -> Result<Option<DotAlgorithm>, String> {
        let Some((_, v)) = attrs.other.iter().find(|(k, _)| k == "algorithm") else {
            return Ok(None);
        };
        let v = v.trim();
        match DotAlgorithm::from_name(v) {
            // `unset` is XLA's name for no algorithm
            _ if v == "unset" => Ok(None),
            Some(a) => Ok(Some(a)),
            None => Err(format!(
                "unknown dot algorithm `{v}` (expected one of {})",
                DotAlgorithm::ALL
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The component pairs `(lhs, rhs)` whose products make up one product,
    /// component 0 being the operand rounded, 1 the rounded remainder, ...
    pub fn products(self) -> &'static [(usize, usize)] {
        match self.primitive_operations() {
            3 => &[(0, 0), (0, 1), (1, 0)],
            6 => &[(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (2, 0)],
            9 => &[
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (0, 2),
                (2, 0),
                (1, 2),
                (2, 1),
                (2, 2),
            ],
            _ => &[(0, 0)],
        }
    }

    /// The operand precision as a type when the algorithm takes one
    /// component per operand (`None`: several components).
    pub fn single_component_type(self) -> Option<OperandPrecision> {
        (self.components() == 1).then_some(self.operand_precision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_unknown_ones_are_errors() {
        for &a in DotAlgorithm::ALL {
            assert_eq!(DotAlgorithm::from_name(a.name()), Some(a));
            assert_eq!(a.products().len(), a.primitive_operations());
        }
        let mut attrs = Attrs::default();
        assert_eq!(DotAlgorithm::of(&attrs), Ok(None));
        attrs
            .other
            .push(("algorithm".into(), "dot_tf32_tf32_f32".into()));
        assert_eq!(
            DotAlgorithm::of(&attrs),
            Ok(Some(DotAlgorithm::Tf32Tf32F32))
        );
        attrs.other[0].1 = "unset".into();
        assert_eq!(DotAlgorithm::of(&attrs), Ok(None));
        attrs.other[0].1 = "dot_x".into();
        assert!(DotAlgorithm::of(&attrs)
            .unwrap_err()
            .contains("unknown dot algorithm `dot_x`"));
    }
}
