//! `Numerics`: what a backend promises about its arithmetic.
//!
//! Temporary home, mirroring the interpreter branch's `check::Numerics`
//! field for field; it is replaced by that type once it is on main.

use crate::hlo::{ElementType, Opcode};

/// How far an approximate result may be from the correctly rounded one:
/// within `ulp` units in the last place OR within `abs` absolutely.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ErrorBudget {
    /// Allowed distance in units in the last place of the result type.
    pub ulp: u64,
    /// Allowed absolute difference (0 for none).
    pub abs: f64,
}

impl ErrorBudget {
    /// A budget of `ulp` units in the last place.
    pub const fn ulp(ulp: u64) -> ErrorBudget {
        ErrorBudget { ulp, abs: 0.0 }
    }
    /// A budget of `ulp` units in the last place, or `abs` absolutely.
    pub const fn ulp_or_abs(ulp: u64, abs: f64) -> ErrorBudget {
        ErrorBudget { ulp, abs }
    }
}

/// One approximate function: an opcode at a result type, with its budget.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Approximation {
    /// The opcode.
    #[serde(serialize_with = "serialize_opcode")]
    pub op: Opcode,
    /// The result type the budget applies to.
    pub dtype: ElementType,
    /// The budget.
    pub budget: ErrorBudget,
}

/// The numerics a backend promises; the comparator accepts exactly these differences.
///
/// ```
/// use xla_props::check_model::{ErrorBudget, Numerics};
/// use xla_props::hlo::{ElementType, Opcode};
/// let n = Numerics::exact()
///     .with_ftz(ElementType::F32, true, true)
///     .with_approximation(Opcode::Exponential, ElementType::F16, ErrorBudget::ulp(2));
/// assert!(n.flushes_outputs(ElementType::F32));
/// assert!(!n.flushes_outputs(ElementType::F16));
/// assert_eq!(n.budget(Opcode::Exponential, ElementType::F16), Some(ErrorBudget::ulp(2)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Numerics {
    /// Types whose subnormal inputs may be read as zero.
    pub flush_inputs: Vec<ElementType>,
    /// Types whose subnormal results may be written as zero.
    pub flush_outputs: Vec<ElementType>,
    /// Approximate functions with their budgets.
    pub approximations: Vec<Approximation>,
    /// May keep intermediates in a wider type inside fusions.
    pub excess_precision_in_fusions: bool,
    /// May reassociate reductions and dot products.
    pub reassociates_reductions: bool,
}

impl Numerics {
    /// Exact IEEE arithmetic, once-rounded, no flushing, no reassociation.
    pub fn exact() -> Numerics {
        Numerics::default()
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
    /// Declares flushing of subnormal inputs and/or outputs of `dtype`.
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
    /// Whether subnormal inputs of `dtype` may be flushed.
    pub fn flushes_inputs(&self, dtype: ElementType) -> bool {
        self.flush_inputs.contains(&dtype)
    }
    /// Whether subnormal results of `dtype` may be flushed.
    pub fn flushes_outputs(&self, dtype: ElementType) -> bool {
        self.flush_outputs.contains(&dtype)
    }
}

fn serialize_opcode<S: serde::Serializer>(op: &Opcode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(op.name())
}
