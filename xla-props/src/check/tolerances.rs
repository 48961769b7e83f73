//! Default error specs per (op, dtype): const data, each entry with its reason
//! and the place in XLA's exhaustive op tests (`xla/tests/exhaustive` in
//! openxla/xla) its numbers come from.
//!
//! Numbers are kept in units of the dtype (`eps` = gap between 1 and the next
//! value, `min_normal` = smallest positive normal) so one entry serves every
//! float type. The reference rounds once from an exact result, so for ops that
//! IEEE 754 requires to be correctly rounded the default is exact: every
//! allowed difference (flushed subnormals, approximate functions,
//! reassociation) is declared by the backend's `Numerics`, never hidden in a
//! tolerance.

use super::error_spec::ErrorSpec;
use crate::hlo::{ElementType, Opcode};

/// A tolerance in units of the element type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitTolerance {
    /// Absolute bound in multiples of the type's smallest normal.
    pub abs_min_normals: f64,
    /// Relative bound in multiples of the type's epsilon.
    pub rel_eps: f64,
    /// ULP bound.
    pub ulp: u64,
    /// Whether `+0` and `-0` differ.
    pub strict_signed_zeros: bool,
}

impl UnitTolerance {
    const EXACT: UnitTolerance = UnitTolerance {
        abs_min_normals: 0.0,
        rel_eps: 0.0,
        ulp: 0,
        strict_signed_zeros: true,
    };
    const fn rel(rel_eps: f64) -> UnitTolerance {
        UnitTolerance {
            rel_eps,
            ..UnitTolerance::EXACT
        }
    }
    const fn abs_rel(abs_min_normals: f64, rel_eps: f64) -> UnitTolerance {
        UnitTolerance {
            abs_min_normals,
            rel_eps,
            ..UnitTolerance::EXACT
        }
    }
    const fn ulp(ulp: u64) -> UnitTolerance {
        UnitTolerance {
            ulp,
            ..UnitTolerance::EXACT
        }
    }

    /// The concrete spec for a dtype (integers and pred are always exact).
    pub fn resolve(&self, dtype: ElementType) -> ErrorSpec {
        let Some(fmt) = dtype.float_format() else {
            return ErrorSpec::exact();
        };
        ErrorSpec {
            abs: self.abs_min_normals * fmt.min_normal(),
            rel: self.rel_eps * fmt.epsilon(),
            ulp: self.ulp,
            strict_signed_zeros: self.strict_signed_zeros,
        }
    }
}

/// Which dtypes a rule covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dtypes {
    /// Every type.
    Any,
    /// Only these.
    Only(&'static [ElementType]),
}

impl Dtypes {
    fn contains(&self, t: ElementType) -> bool {
        match self {
            Dtypes::Any => true,
            Dtypes::Only(ts) => ts.contains(&t),
        }
    }
}

/// One row of the default tolerance table.
#[derive(Clone, Copy, Debug)]
pub struct ToleranceRule {
    /// The ops it covers.
    pub ops: &'static [Opcode],
    /// The dtypes it covers.
    pub dtypes: Dtypes,
    /// The tolerance.
    pub tolerance: UnitTolerance,
    /// Why this much.
    pub reason: &'static str,
    /// Where the number comes from.
    pub source: &'static str,
}

const F8: &[ElementType] = &[ElementType::F8E4M3Fn, ElementType::F8E5M2];
const F16: &[ElementType] = &[ElementType::F16];
const BF16: &[ElementType] = &[ElementType::Bf16];

/// Transcendental functions whose results no standard requires to be correctly rounded.
const TRANSCENDENTAL: &[Opcode] = &[
    Opcode::Exponential,
    Opcode::ExponentialMinusOne,
    Opcode::Log,
    Opcode::LogPlusOne,
    Opcode::Logistic,
    Opcode::Tanh,
    Opcode::Erf,
    Opcode::Power,
    Opcode::Atan2,
];

/// The default tolerance table. The first rule that matches (op, dtype) wins;
/// an op no rule names is exact.
pub const DEFAULT_TOLERANCES: &[ToleranceRule] = &[
    ToleranceRule {
        ops: &[
            Opcode::Add,
            Opcode::Subtract,
            Opcode::Multiply,
            Opcode::Divide,
            Opcode::Sqrt,
            Opcode::Remainder,
        ],
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::EXACT,
        reason: "IEEE 754 requires correctly rounded results and the reference rounds once; \
                 flushed subnormals are declared in Numerics, not tolerated here",
        source: "exhaustive_binary_test_functions.cc: Add/Sub/Mul/Div use \
                 ErrorSpec::Builder().strict_signed_zeros() with no error (the CPU abs_err of \
                 min_normal there only covers subnormal flushing)",
    },
    ToleranceRule {
        ops: TRANSCENDENTAL,
        dtypes: Dtypes::Only(F8),
        tolerance: UnitTolerance::ulp(1),
        reason: "f8 results are computed in f32 and rounded again; a 1 ULP step is one of 8 or \
                 16 values per binade",
        source: "exhaustive_unary_test_functions.cc: Exp/Log1p (f8e5m2) and Logistic \
                 (f8e4m3fn) CpuError distance_err(1); exhaustive_binary_test_functions.cc Pow, \
                 Atan2 f8 distance_err(1)",
    },
    ToleranceRule {
        ops: &[Opcode::Sine, Opcode::Cosine],
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::rel(2.0),
        reason: "range-reduced polynomial; about 2 ULP",
        source: "exhaustive_unary_test_functions.cc: Sin/Cos rel_err(2 * eps), abs_err(0) \
                 (\"a maximum relative error of 2 ULP\")",
    },
    ToleranceRule {
        ops: &[Opcode::Tan],
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::rel(4.0),
        reason: "sin/cos quotient; about 4 ULP",
        source: "exhaustive_unary_test_functions.cc: Tan rel_err(4 * eps), abs_err(0)",
    },
    ToleranceRule {
        ops: &[Opcode::Rsqrt],
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::rel(2.0),
        reason: "1/sqrt(x) rounds twice unless fused",
        source: "exhaustive_unary_test_functions.cc: Rsqrt rel_err(2 * eps), abs_err(0), \
                 strict_signed_zeros",
    },
    ToleranceRule {
        ops: &[Opcode::Cbrt],
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::rel(16.0),
        reason: "cbrt is computed by iteration, not correctly rounded",
        source: "exhaustive_unary_test_functions.cc: Cbrt rel_err(16 * eps), strict_signed_zeros",
    },
    ToleranceRule {
        ops: TRANSCENDENTAL,
        dtypes: Dtypes::Only(F16),
        tolerance: UnitTolerance::abs_rel(2.0, 5.0),
        reason: "default for f16 transcendentals: f16 epsilon is large, so a slack of 5 suffices",
        source: "exhaustive_op_test_utils.h: DefaultSpecGenerator<F16>: \
                 abs = kDefaultAbsoluteToleranceSlackFactor (2) * min_normal, rel = 5 * eps",
    },
    ToleranceRule {
        ops: TRANSCENDENTAL,
        dtypes: Dtypes::Only(BF16),
        tolerance: UnitTolerance::abs_rel(2.0, 2.0),
        reason: "default for bf16 transcendentals: bf16 epsilon is larger still, slack 2",
        source: "exhaustive_op_test_utils.h: DefaultSpecGenerator<BF16>: \
                 abs = 2 * min_normal, rel = 2 * eps",
    },
    ToleranceRule {
        ops: TRANSCENDENTAL,
        dtypes: Dtypes::Any,
        tolerance: UnitTolerance::abs_rel(2.0, 20.0),
        reason: "default for f32/f64 transcendentals",
        source: "exhaustive_op_test_utils.h: DefaultSpecGenerator<F32>/<F64>: \
                 abs = kDefaultAbsoluteToleranceSlackFactor (2) * min_normal, \
                 rel = kDefaultRelativeToleranceSlackFactor (20) * eps",
    },
];

/// The table row that decides (op, dtype), if any.
pub fn tolerance_rule(op: Opcode, dtype: ElementType) -> Option<&'static ToleranceRule> {
    DEFAULT_TOLERANCES
        .iter()
        .find(|r| r.ops.contains(&op) && r.dtypes.contains(dtype))
}

/// The default error spec of one op producing `dtype` (exact when no rule names it).
///
/// ```
/// use xla_props::check::default_error_spec;
/// use xla_props::hlo::{ElementType, Opcode};
/// assert_eq!(default_error_spec(Opcode::Add, ElementType::F16).ulp, 0);
/// let sin = default_error_spec(Opcode::Sine, ElementType::F32);
/// assert_eq!(sin.rel, 2.0 * f32::EPSILON as f64);
/// ```
pub fn default_error_spec(op: Opcode, dtype: ElementType) -> ErrorSpec {
    match tolerance_rule(op, dtype) {
        Some(rule) => rule.tolerance.resolve(dtype),
        None => ErrorSpec::exact(),
    }
}

/// The loosest default spec, resolved for the output type `dtype`, over every
/// instruction of a module (fusions and calls included). A multi-op program's error
/// is bounded by its loosest op only approximately; properties with tighter
/// knowledge pass their own spec.
pub fn default_error_spec_for_module(module: &crate::hlo::Module, dtype: ElementType) -> ErrorSpec {
    let mut spec = ErrorSpec::exact();
    for comp in &module.computations {
        for instr in &comp.instructions {
            spec = spec.loosest(default_error_spec(instr.opcode, dtype));
        }
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookups_resolve_by_hand() {
        // f16: eps = 2^-10, min normal = 2^-14
        let exp16 = default_error_spec(Opcode::Exponential, ElementType::F16);
        assert_eq!(exp16.rel, 5.0 * 2f64.powi(-10));
        assert_eq!(exp16.abs, 2.0 * 2f64.powi(-14));
        // bf16: eps = 2^-7
        let log_bf16 = default_error_spec(Opcode::Log, ElementType::Bf16);
        assert_eq!(log_bf16.rel, 2.0 * 2f64.powi(-7));
        // f32: 20 eps
        let tanh32 = default_error_spec(Opcode::Tanh, ElementType::F32);
        assert_eq!(tanh32.rel, 20.0 * 2f64.powi(-23));
        // f8: one ULP, no abs/rel
        let e8 = default_error_spec(Opcode::Exponential, ElementType::F8E5M2);
        assert_eq!((e8.ulp, e8.abs, e8.rel), (1, 0.0, 0.0));
        // correctly rounded ops are exact, and integers are always exact
        assert_eq!(
            default_error_spec(Opcode::Divide, ElementType::Bf16),
            ErrorSpec::exact()
        );
        assert_eq!(
            default_error_spec(Opcode::Exponential, ElementType::S32),
            ErrorSpec::exact()
        );
    }

    #[test]
    fn every_rule_has_a_reason_and_a_source() {
        for rule in DEFAULT_TOLERANCES {
            assert!(!rule.reason.is_empty() && !rule.source.is_empty());
            assert!(!rule.ops.is_empty());
        }
    }
}
