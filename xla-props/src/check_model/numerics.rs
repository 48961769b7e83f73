//! `Numerics`: what a backend promises about its arithmetic.
//!
//! Temporary home: the interpreter branch owns `check/numerics.rs`; this file
//! moves there (and merges with its `Numerics`) once that lands.

use crate::hlo::{ElementType, Opcode};

/// Subnormal flushing for one element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ftz {
    /// The element type.
    pub dtype: ElementType,
    /// Subnormal inputs may be read as zero.
    pub inputs: bool,
    /// Subnormal results may be written as zero.
    pub outputs: bool,
}

/// An op a backend computes approximately, with its error budget.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ApproxFunction {
    /// The op.
    #[serde(serialize_with = "serialize_opcode")]
    pub op: Opcode,
    /// The dtype it applies to (None: every float type).
    pub dtype: Option<ElementType>,
    /// Budget in ULP of the result type.
    pub ulp: u64,
    /// Or an absolute budget (0 for none).
    pub abs: f64,
}

/// The numerics a backend promises; the comparator accepts exactly these differences.
///
/// ```
/// use xla_props::check_model::Numerics;
/// use xla_props::hlo::{ElementType, Opcode};
/// let n = Numerics::exact()
///     .with_ftz(ElementType::F32, true, true)
///     .with_approx(Opcode::Exponential, None, 2, 0.0);
/// assert!(n.flushes_outputs(ElementType::F32));
/// assert!(!n.flushes_outputs(ElementType::F16));
/// assert_eq!(n.approx_budget(Opcode::Exponential, ElementType::F16).unwrap().0, 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Numerics {
    /// Subnormal flushing per dtype.
    pub ftz: Vec<Ftz>,
    /// Approximate functions with their budgets.
    pub approximate: Vec<ApproxFunction>,
    /// May keep intermediates in a wider type inside fusions.
    pub excess_precision: bool,
    /// May reassociate reductions and dot products.
    pub reassociation: bool,
}

impl Numerics {
    /// Exact IEEE arithmetic, once-rounded, no flushing, no reassociation.
    pub fn exact() -> Numerics {
        Numerics::default()
    }
    /// Adds a flush-to-zero rule.
    pub fn with_ftz(mut self, dtype: ElementType, inputs: bool, outputs: bool) -> Numerics {
        self.ftz.push(Ftz {
            dtype,
            inputs,
            outputs,
        });
        self
    }
    /// Adds an approximate function.
    pub fn with_approx(
        mut self,
        op: Opcode,
        dtype: Option<ElementType>,
        ulp: u64,
        abs: f64,
    ) -> Numerics {
        self.approximate.push(ApproxFunction {
            op,
            dtype,
            ulp,
            abs,
        });
        self
    }
    /// Allows excess precision inside fusions.
    pub fn with_excess_precision(mut self) -> Numerics {
        self.excess_precision = true;
        self
    }
    /// Allows reassociated reductions.
    pub fn with_reassociation(mut self) -> Numerics {
        self.reassociation = true;
        self
    }
    /// Whether subnormal inputs of `dtype` may be flushed.
    pub fn flushes_inputs(&self, dtype: ElementType) -> bool {
        self.ftz.iter().any(|f| f.dtype == dtype && f.inputs)
    }
    /// Whether subnormal results of `dtype` may be flushed.
    pub fn flushes_outputs(&self, dtype: ElementType) -> bool {
        self.ftz.iter().any(|f| f.dtype == dtype && f.outputs)
    }
    /// The (ulp, abs) budget of `op` producing `dtype`, if it is approximate.
    pub fn approx_budget(&self, op: Opcode, dtype: ElementType) -> Option<(u64, f64)> {
        self.approximate
            .iter()
            .find(|a| a.op == op && a.dtype.is_none_or(|d| d == dtype))
            .map(|a| (a.ulp, a.abs))
    }
}

fn serialize_opcode<S: serde::Serializer>(op: &Opcode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(op.name())
}
