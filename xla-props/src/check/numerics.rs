//! `Numerics`: what a backend promises about how it computes.
//!
//! The comparator accepts exactly the differences a backend declares here
//! (approximate functions within their budget, flushed subnormals, reassociated
//! reductions) and reports everything else.

use serde::{Deserialize, Serialize};

use crate::hlo::{ElementType, Opcode};

/// How far an approximate result may be from the correctly rounded one.
///
/// A result is accepted when it is within `ulp` units in the last place of the
/// result type OR within `abs` absolutely (an absolute allowance matters near
/// the zeros of a function, where a relative budget means nothing).
///
/// ```
/// use xla_props::check::ErrorBudget;
/// let b = ErrorBudget::ulp(2);
/// assert_eq!(b.ulp, 2);
/// assert_eq!(b.abs, 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorBudget {
    /// Allowed distance in units in the last place of the result type.
    pub ulp: u64,
    /// Allowed absolute difference (0 for none).
    #[serde(default)]
    pub abs: f64,
}

impl ErrorBudget {
    /// A budget of `ulp` units in the last place and no absolute allowance.
    pub const fn ulp(ulp: u64) -> ErrorBudget {
        ErrorBudget { ulp, abs: 0.0 }
    }
    /// A budget of `ulp` units in the last place, or `abs` absolutely.
    pub const fn ulp_or_abs(ulp: u64, abs: f64) -> ErrorBudget {
        ErrorBudget { ulp, abs }
    }
}

/// One approximate function: an opcode at a result type, with its budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approximation {
    /// The opcode (e.g. `exponential`), serialized by its HLO name.
    #[serde(with = "opcode_by_name")]
    pub op: Opcode,
    /// The result element type the budget applies to.
    pub dtype: ElementType,
    /// How far from correctly rounded the result may be.
    pub budget: ErrorBudget,
}

/// What a backend promises about its arithmetic.
///
/// `Numerics::exact()` promises nothing approximate: every result is the
/// correctly rounded result of the exact operation, subnormals are kept, and
/// reductions are computed as if exactly and rounded once.
///
/// ```
/// use xla_props::check::{ErrorBudget, Numerics};
/// use xla_props::hlo::{ElementType, Opcode};
/// let exact = Numerics::exact();
/// assert_eq!(exact.budget(Opcode::Exponential, ElementType::F32), None);
/// let n = Numerics::exact().with_approximation(Opcode::Exponential, ElementType::F32, ErrorBudget::ulp(1));
/// assert_eq!(n.budget(Opcode::Exponential, ElementType::F32), Some(ErrorBudget::ulp(1)));
/// assert!(!n.is_exact());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Numerics {
    /// Types whose subnormal inputs the backend may treat as (signed) zero.
    pub flush_inputs: Vec<ElementType>,
    /// Types whose subnormal results the backend may flush to (signed) zero.
    pub flush_outputs: Vec<ElementType>,
    /// Approximate functions, each with a budget per result type.
    pub approximations: Vec<Approximation>,
    /// Whether intermediates inside a fusion may be kept in a wider type than declared
    /// (skipping the rounding to the declared narrow type).
    pub excess_precision_in_fusions: bool,
    /// Whether reductions (reduce, reduce-window, dot, convolution) may be computed in
    /// any order, or in a wider/narrower accumulation type than exact, so that their
    /// results carry the rounding error of some summation order.
    pub reassociates_reductions: bool,
    /// Whether `a * b + c` (and `a * b - c`, `c - a * b`) of f32 or narrower
    /// floats may be computed as one fused multiply-add: the product not
    /// rounded, the sum rounded once (`check::fma_contraction_variant`).
    #[serde(default)]
    pub contracts_multiply_add: bool,
    /// Whether narrow float values anywhere in the module (not only inside
    /// fusions) may be kept in f32, rounding only the results
    /// (`check::whole_module_excess_precision_variant`; XLA's
    /// `xla_allow_excess_precision`). Never accepted for `strict_rounding`.
    #[serde(default)]
    pub excess_precision_anywhere: bool,
    /// Whether `reduce` and `reduce-window` over a float type narrower than
    /// f32 may round every partial sum to the reducer's declared type (as the
    /// HLO's reducer computation says), instead of accumulating in f32 at
    /// least: the reassociation bound becomes `n * eps(type) * sum|x|`. Dots
    /// and convolutions still accumulate in f32.
    #[serde(default)]
    pub reductions_accumulate_in_declared_type: bool,
    /// Whether `dot` and `convolution` over a float type narrower than f32
    /// may round every product, and every partial sum, to the declared type
    /// (XLA's `ALG_DOT_F16_F16_F16` kind of algorithm, which StableHLO's
    /// implementation-defined precision allows), instead of multiplying
    /// exactly and accumulating in f32 at least: the reassociation bound
    /// becomes `n * eps(type) * sum|x|`, as for reductions above.
    #[serde(default)]
    pub contractions_accumulate_in_declared_type: bool,
    /// Float `minimum`/`maximum` computed as a compare and select that does
    /// not propagate NaN: `minimum(a, b)` is `a` unless `b < a`, `maximum(a, b)`
    /// is `a` unless `b > a` (a NaN first operand propagates, a NaN second
    /// operand is dropped; `minimum(+0, -0)` is `+0`), in every computation,
    /// reducers included; `clamp(lo, x, hi)` is `minimum(maximum(lo, x), hi)`
    /// under that rule. XLA CPU's `--xla_cpu_enable_fast_min_max` (on by
    /// default). Judged by the reference on `check::op_semantics_variant`.
    #[serde(default)]
    pub fast_min_max: bool,
    /// Types whose `reduce-precision` is computed on the operand's own bit
    /// pattern (XLA's round-and-mask rule applied to the type's exponent and
    /// mantissa fields) instead of through f32: an f16 subnormal is kept by
    /// `e5m10` (f32 would flush it below the reduced min normal) and rounds
    /// by its own mantissa bits. Judged by the reference on
    /// `check::op_semantics_variant`.
    #[serde(default)]
    pub reduce_precision_in_own_type: Vec<ElementType>,
    /// A convolution's padding is materialized as zeros that are multiplied
    /// by the kernel (`0 * w`, NaN for an infinite or NaN weight), instead of
    /// being skipped. Judged by the reference on `check::op_semantics_variant`.
    #[serde(default)]
    pub convolution_multiplies_padding: bool,
    /// A convolution's input (lhs) dilation is materialized as zero holes
    /// that are multiplied by the kernel (`0 * w`, NaN for an infinite or
    /// NaN weight), instead of being skipped (iree-cpu: a `pad` with
    /// interior padding). Judged with `convolution_multiplies_padding`.
    #[serde(default)]
    pub convolution_multiplies_dilation_holes: bool,
    /// A float -> integer `convert` of NaN, or of a value whose truncation
    /// the integer type cannot represent, may give any value of the type:
    /// the StableHLO specification leaves it open ("the behavior is TBD",
    /// openxla/stablehlo#180). Only those elements: every other element of
    /// the conversion is judged as usual. Judged on the outputs that are a
    /// `convert` of an entry parameter (`check::legal`,
    /// `unspecified_conversion`).
    #[serde(default)]
    pub out_of_range_float_to_int_unspecified: bool,
}

impl Numerics {
    /// Promises nothing approximate.
    pub fn exact() -> Numerics {
        Numerics {
            flush_inputs: Vec::new(),
            flush_outputs: Vec::new(),
            approximations: Vec::new(),
            excess_precision_in_fusions: false,
            reassociates_reductions: false,
            contracts_multiply_add: false,
            excess_precision_anywhere: false,
            reductions_accumulate_in_declared_type: false,
            contractions_accumulate_in_declared_type: false,
            fast_min_max: false,
            reduce_precision_in_own_type: Vec::new(),
            convolution_multiplies_padding: false,
            convolution_multiplies_dilation_holes: false,
            out_of_range_float_to_int_unspecified: false,
        }
    }

    /// Whether some op is declared to compute differently from the
    /// reference's default semantics (see `check::op_semantics_variant`).
    pub fn declares_op_semantics(&self) -> bool {
        self.fast_min_max
            || !self.reduce_precision_in_own_type.is_empty()
            || self.convolution_multiplies_padding
            || self.convolution_multiplies_dilation_holes
    }

    /// Adds (or replaces) the budget of `op` at result type `dtype`.
    pub fn with_approximation(
        mut self,
        op: Opcode,
        dtype: ElementType,
        budget: ErrorBudget,
    ) -> Numerics {
        self.approximations
            .retain(|a| !(a.op == op && a.dtype == dtype));
        self.approximations
            .push(Approximation { op, dtype, budget });
        self
    }

    /// The budget of `op` at result type `dtype`, or None when it is exact.
    pub fn budget(&self, op: Opcode, dtype: ElementType) -> Option<ErrorBudget> {
        self.approximations
            .iter()
            .find(|a| a.op == op && a.dtype == dtype)
            .map(|a| a.budget)
    }

    /// True when nothing approximate is promised.
    pub fn is_exact(&self) -> bool {
        *self == Numerics::exact()
    }

    /// Declares flushing of subnormal inputs and/or outputs of `dtype`.
    ///
    /// ```
    /// use xla_props::check::Numerics;
    /// use xla_props::hlo::ElementType;
    /// let n = Numerics::exact().with_ftz(ElementType::F32, false, true);
    /// assert!(n.flushes_outputs(ElementType::F32) && !n.flushes_inputs(ElementType::F32));
    /// ```
    pub fn with_ftz(mut self, dtype: ElementType, inputs: bool, outputs: bool) -> Numerics {
        if inputs && !self.flush_inputs.contains(&dtype) {
            self.flush_inputs.push(dtype);
        }
        if outputs && !self.flush_outputs.contains(&dtype) {
            self.flush_outputs.push(dtype);
        }
        self
    }

    /// Allows excess precision inside fusions.
    pub fn with_excess_precision(mut self) -> Numerics {
        self.excess_precision_in_fusions = true;
        self
    }

    /// Allows reassociated reductions.
    pub fn with_reassociation(mut self) -> Numerics {
        self.reassociates_reductions = true;
        self
    }

    /// Allows multiply-adds contracted into fused multiply-adds.
    pub fn with_fma_contraction(mut self) -> Numerics {
        self.contracts_multiply_add = true;
        self
    }

    /// What the reference's bounds (interval and first-order) may assume
    /// of a backend with these numerics (`strict_rounding`: no elided
    /// rounding).
    pub fn allowances(&self, strict_rounding: bool) -> crate::reference::Allowances {
        crate::reference::Allowances {
            contracts_multiply_add: self.contracts_multiply_add && !strict_rounding,
            excess_anywhere: self.excess_precision_anywhere && !strict_rounding,
            excess_in_fusions: self.excess_precision_in_fusions && !strict_rounding,
            budgets: self
                .approximations
                .iter()
                .map(|a| ((a.op, a.dtype), (a.budget.ulp, a.budget.abs)))
                .collect(),
            flush_inputs: self.flush_inputs.clone(),
            flush_outputs: self.flush_outputs.clone(),
            reassociates: self.reassociates_reductions,
            accumulate_in_declared_type: self.reductions_accumulate_in_declared_type,
            contract_in_declared_type: self.contractions_accumulate_in_declared_type,
        }
    }

    /// Whether subnormal inputs of `dtype` may be flushed.
    pub fn flushes_inputs(&self, dtype: ElementType) -> bool {
        self.flush_inputs.contains(&dtype)
    }

    /// Whether subnormal results of `dtype` may be flushed.
    pub fn flushes_outputs(&self, dtype: ElementType) -> bool {
        self.flush_outputs.contains(&dtype)
    }
}

impl Default for Numerics {
    fn default() -> Numerics {
        Numerics::exact()
    }
}

pub(crate) mod opcode_by_name {
    use crate::hlo::Opcode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(op: &Opcode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Opcode, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_round_trip_uses_opcode_names() {
        let n = Numerics {
            flush_inputs: vec![ElementType::F32],
            reassociates_reductions: true,
            ..Numerics::exact()
        }
        .with_approximation(
            Opcode::Tanh,
            ElementType::F16,
            ErrorBudget::ulp_or_abs(1, 1e-6),
        );
        let json = serde_json::to_string(&n).unwrap();
        assert!(json.contains("\"tanh\""), "{json}");
        let back: Numerics = serde_json::from_str(&json).unwrap();
        assert_eq!(back, n);
        assert!(serde_json::from_str::<Numerics>(&json.replace("tanh", "tahn")).is_err());
    }

    #[test]
    fn replacing_a_budget_keeps_one_entry() {
        let n = Numerics::exact()
            .with_approximation(Opcode::Log, ElementType::F32, ErrorBudget::ulp(1))
            .with_approximation(Opcode::Log, ElementType::F32, ErrorBudget::ulp(3));
        assert_eq!(n.approximations.len(), 1);
        assert_eq!(
            n.budget(Opcode::Log, ElementType::F32),
            Some(ErrorBudget::ulp(3))
        );
        assert_eq!(n.budget(Opcode::Log, ElementType::F16), None);
        assert!(Numerics::exact().is_exact());
        assert!(!n.is_exact());
    }
}
