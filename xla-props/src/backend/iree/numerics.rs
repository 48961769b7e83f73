//! What IREE's llvm-cpu target (3.13.0, generic x86-64) really computes, as
//! measured (evidence: docs/numerics.md, "iree-cpu"), and what it does not
//! support. Declared by the `iree-cpu` backend as its `Numerics`.

use crate::check::{ErrorBudget, Numerics};
use crate::hlo::{ElementType, Module, Opcode};

/// One measured approximation: op, result type, ulp budget, absolute allowance.
pub type MeasuredBudget = (Opcode, ElementType, u64, f64);

/// Maximum measured error per transcendental and type.
pub const IREE_CPU_BUDGETS: &[MeasuredBudget] = &[];

/// What IREE does not support, each with the reason a case is skipped.
pub const UNSUPPORTED_OPS: &[(Opcode, &str)] = &[];

/// Element types IREE does not support, each with the reason.
pub const UNSUPPORTED_TYPES: &[(ElementType, &str)] = &[];

/// iree-cpu's `Numerics`.
pub fn iree_cpu_numerics() -> Numerics {
    let mut n = Numerics::exact();
    for &(op, dtype, ulp, abs) in IREE_CPU_BUDGETS {
        n = n.with_approximation(op, dtype, ErrorBudget::ulp_or_abs(ulp, abs));
    }
    n
}

/// The first declared unsupported op or type `module` uses, as a reason.
pub fn unsupported_in(module: &Module) -> Option<String> {
    for c in &module.computations {
        for i in &c.instructions {
            if let Some((op, why)) = UNSUPPORTED_OPS.iter().find(|(op, _)| *op == i.opcode) {
                return Some(format!("iree-cpu: {op}: {why}"));
            }
            for leaf in i.shape.leaves() {
                if let Some((t, why)) = UNSUPPORTED_TYPES.iter().find(|(t, _)| *t == leaf.dtype) {
                    return Some(format!("iree-cpu: {t}: {why}"));
                }
            }
        }
    }
    None
}
