//! Each op's legal input domain, as data.
//!
//! A rule says: operand `k` of `op` must satisfy `constraint` for the op to
//! say something about the compiler (rather than produce a NaN or infinity
//! that any compiler produces too). Constraints are resolved per element type
//! into an interval, a hole around zero, or a relation between operands.

use super::interval::Interval;
use crate::check::next_up;
use crate::hlo::{ElementType, Instruction, Opcode};

/// What an operand must satisfy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Constraint {
    /// `x >= bound`.
    AtLeast(f64),
    /// `x > bound`; for floats resolved to `x >= max(next value above bound, min normal)`
    /// when `bound` is 0, so that a backend flushing subnormal inputs sees the same legal value.
    Above(f64),
    /// `x != 0`, with a margin of the smallest normal for floats (a subnormal
    /// divisor is 0 to a backend that flushes inputs).
    NonZero,
    /// `x <= ln(max)` of the result type: `exp(x)` stays finite.
    ExpNoOverflow,
    /// Inside the range of the integer type the op converts to.
    ConvertibleToResult,
    /// `0 <= x < bit width` of the element type.
    ShiftAmount,
    /// A start index such that the slice it starts lies inside the operand.
    IndexInRange,
    /// Operand 0 negative only when operand 1 is an integer (`power`).
    NegativeBaseNeedsIntegerExponent,
}

/// One row of the domain table.
#[derive(Clone, Copy, Debug)]
pub struct DomainRule {
    /// The op.
    pub op: Opcode,
    /// Which operand; `usize::MAX` means every operand from 1 on (index operands).
    pub operand: usize,
    /// The constraint.
    pub constraint: Constraint,
    /// Why.
    pub reason: &'static str,
}

/// Operand marker for "every operand from 1 on".
pub const INDEX_OPERANDS: usize = usize::MAX;

/// The legal-domain table.
pub const DOMAIN_RULES: &[DomainRule] = &[
    DomainRule {
        op: Opcode::Sqrt,
        operand: 0,
        constraint: Constraint::AtLeast(0.0),
        reason: "sqrt of a negative number is NaN",
    },
    DomainRule {
        op: Opcode::Rsqrt,
        operand: 0,
        constraint: Constraint::Above(0.0),
        reason: "rsqrt of 0 is inf and of a negative number NaN",
    },
    DomainRule {
        op: Opcode::Log,
        operand: 0,
        constraint: Constraint::Above(0.0),
        reason: "log of 0 is -inf and of a negative number NaN",
    },
    DomainRule {
        op: Opcode::LogPlusOne,
        operand: 0,
        constraint: Constraint::Above(-1.0),
        reason: "log1p of -1 is -inf and below -1 NaN",
    },
    DomainRule {
        op: Opcode::Divide,
        operand: 1,
        constraint: Constraint::NonZero,
        reason: "division by zero is inf or NaN (integers: a defined but arbitrary value)",
    },
    DomainRule {
        op: Opcode::Remainder,
        operand: 1,
        constraint: Constraint::NonZero,
        reason: "remainder by zero is NaN (integers: a defined but arbitrary value)",
    },
    DomainRule {
        op: Opcode::Power,
        operand: 0,
        constraint: Constraint::NegativeBaseNeedsIntegerExponent,
        reason: "a negative base to a non-integer power is NaN",
    },
    DomainRule {
        op: Opcode::Exponential,
        operand: 0,
        constraint: Constraint::ExpNoOverflow,
        reason: "exp above ln(max) overflows to inf",
    },
    DomainRule {
        op: Opcode::ExponentialMinusOne,
        operand: 0,
        constraint: Constraint::ExpNoOverflow,
        reason: "expm1 above ln(max) overflows to inf",
    },
    DomainRule {
        op: Opcode::Convert,
        operand: 0,
        constraint: Constraint::ConvertibleToResult,
        reason: "float to integer outside the range saturates; only saturation cases want that",
    },
    DomainRule {
        op: Opcode::ShiftLeft,
        operand: 1,
        constraint: Constraint::ShiftAmount,
        reason: "shifts by the bit width or more give a defined but degenerate value",
    },
    DomainRule {
        op: Opcode::ShiftRightLogical,
        operand: 1,
        constraint: Constraint::ShiftAmount,
        reason: "shifts by the bit width or more give a defined but degenerate value",
    },
    DomainRule {
        op: Opcode::ShiftRightArithmetic,
        operand: 1,
        constraint: Constraint::ShiftAmount,
        reason: "shifts by the bit width or more give a defined but degenerate value",
    },
    DomainRule {
        op: Opcode::DynamicSlice,
        operand: INDEX_OPERANDS,
        constraint: Constraint::IndexInRange,
        reason: "out-of-range starts are clamped; only the clamping distribution wants that",
    },
    DomainRule {
        op: Opcode::DynamicUpdateSlice,
        operand: INDEX_OPERANDS,
        constraint: Constraint::IndexInRange,
        reason: "out-of-range starts are clamped; only the clamping distribution wants that",
    },
    DomainRule {
        op: Opcode::Gather,
        operand: 1,
        constraint: Constraint::IndexInRange,
        reason: "out-of-range gather starts are clamped; only the clamping distribution wants that",
    },
    DomainRule {
        op: Opcode::Scatter,
        operand: 1,
        constraint: Constraint::IndexInRange,
        reason:
            "out-of-range scatter updates are skipped; only the clamping distribution wants that",
    },
];

/// A requirement resolved for one operand of one instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resolved {
    /// The operand's values must lie in this interval.
    Within(Interval),
    /// The operand's values must stay at least `radius` away from 0.
    AwayFromZero {
        /// The margin.
        radius: f64,
    },
    /// Operand 0 may be negative only where operand 1 is an integer.
    IntegerExponentForNegativeBase,
}

/// Whether `constraint` is an index constraint (relaxed by the clamping distribution).
pub fn is_index_constraint(c: Constraint) -> bool {
    matches!(c, Constraint::IndexInRange)
}

/// The rules that apply to operand `k` of `instr` (with operand types and dims).
pub fn rules_for(op: Opcode, k: usize) -> impl Iterator<Item = &'static DomainRule> {
    DOMAIN_RULES
        .iter()
        .filter(move |r| r.op == op && (r.operand == k || (r.operand == INDEX_OPERANDS && k >= 1)))
}

/// Resolves a rule for operand `k` of `instr`, whose operands have the given
/// types and dims. None when the rule does not apply to these types (e.g.
/// `convert` to a float type, `exp` of an integer).
pub fn resolve(
    rule: &DomainRule,
    instr: &Instruction,
    k: usize,
    operand_types: &[(ElementType, Vec<i64>)],
) -> Option<Resolved> {
    let (dtype, _) = operand_types.get(k)?;
    let dtype = *dtype;
    let result = instr.shape.as_array().map(|a| a.dtype);
    Some(match rule.constraint {
        Constraint::AtLeast(b) => Resolved::Within(Interval::at_least(b)),
        Constraint::Above(b) => {
            if let Some(fmt) = dtype.float_format() {
                let lo = if b == 0.0 {
                    fmt.min_normal()
                } else {
                    next_up(b, dtype)
                };
                Resolved::Within(Interval::at_least(lo))
            } else {
                Resolved::Within(Interval::at_least(b + 1.0))
            }
        }
        Constraint::NonZero => {
            let radius = dtype.float_format().map_or(1.0, |f| f.min_normal());
            Resolved::AwayFromZero { radius }
        }
        Constraint::ExpNoOverflow => {
            let fmt = result?.float_format()?;
            Resolved::Within(Interval::at_most(fmt.max.ln()))
        }
        Constraint::ConvertibleToResult => {
            let target = result?;
            if !dtype.is_float() || !target.is_integer() {
                return None;
            }
            let (min, max) = target.int_range()?;
            Resolved::Within(Interval::new(min as f64, max as f64))
        }
        Constraint::ShiftAmount => {
            if !dtype.is_integer() {
                return None;
            }
            Resolved::Within(Interval::new(0.0, dtype.bit_width() as f64 - 1.0))
        }
        Constraint::IndexInRange => {
            let hi = index_upper_bound(instr, k, operand_types)?;
            Resolved::Within(Interval::new(0.0, hi.max(0) as f64))
        }
        Constraint::NegativeBaseNeedsIntegerExponent => {
            if !dtype.is_float() {
                return None;
            }
            Resolved::IntegerExponentForNegativeBase
        }
    })
}

/// The largest legal start index for index operand `k` of an indexing op.
fn index_upper_bound(
    instr: &Instruction,
    k: usize,
    operand_types: &[(ElementType, Vec<i64>)],
) -> Option<i64> {
    let operand_dims = &operand_types.first()?.1;
    match instr.opcode {
        Opcode::DynamicSlice => {
            let d = k.checked_sub(1)?;
            let size = instr.attrs.dynamic_slice_sizes.as_ref()?.get(d)?;
            Some(operand_dims.get(d)? - size)
        }
        Opcode::DynamicUpdateSlice => {
            let d = k.checked_sub(2)?;
            let update = &operand_types.get(1)?.1;
            Some(operand_dims.get(d)? - update.get(d)?)
        }
        // an index vector's components index different dimensions: one
        // interval for the whole operand is the smallest bound, which every
        // component meets (strict for the others; the requirement sites give
        // a concatenated index vector's pieces their own bounds)
        Opcode::Gather | Opcode::Scatter => {
            let (_, bounds) = index_component_bounds(instr, operand_types)?;
            bounds.into_iter().min()
        }
        _ => None,
    }
}

/// For gather and scatter: the index vector dimension and, per component of
/// the index vector, the largest legal start index (the operand dimension
/// it indexes, less the slice: gather's slice size, scatter's 1).
pub(crate) fn index_component_bounds(
    instr: &Instruction,
    operand_types: &[(ElementType, Vec<i64>)],
) -> Option<(usize, Vec<i64>)> {
    let operand_dims = &operand_types.first()?.1;
    let (ivd, map, slice): (i64, &[i64], Option<&[i64]>) = match instr.opcode {
        Opcode::Gather => {
            let g = instr.attrs.gather_dims.as_ref()?;
            (g.index_vector_dim, &g.start_index_map, Some(&g.slice_sizes))
        }
        Opcode::Scatter => {
            let s = instr.attrs.scatter_dims.as_ref()?;
            (s.index_vector_dim, &s.scatter_dims_to_operand_dims, None)
        }
        _ => return None,
    };
    let bounds = map
        .iter()
        .map(|&d| {
            let d = usize::try_from(d).ok()?;
            let size = slice.map_or(Some(1), |s| s.get(d).copied())?;
            Some(operand_dims.get(d)? - size)
        })
        .collect::<Option<Vec<i64>>>()?;
    Some((usize::try_from(ivd).ok()?, bounds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{Instruction, Shape};

    fn instr(op: Opcode, dtype: ElementType) -> Instruction {
        Instruction::new("i", op, Shape::scalar(dtype), vec![])
    }

    fn one(op: Opcode, k: usize, dtype: ElementType, result: ElementType) -> Option<Resolved> {
        let i = instr(op, result);
        let rule = rules_for(op, k).next()?;
        resolve(rule, &i, k, &[(dtype, vec![]), (dtype, vec![])])
    }

    #[test]
    fn resolved_by_hand() {
        use ElementType::*;
        assert_eq!(
            one(Opcode::Log, 0, F16, F16),
            Some(Resolved::Within(Interval::at_least(2f64.powi(-14))))
        );
        // f16: next value above -1 is -1 + 2^-11
        assert_eq!(
            one(Opcode::LogPlusOne, 0, F16, F16),
            Some(Resolved::Within(Interval::at_least(-1.0 + 2f64.powi(-11))))
        );
        assert_eq!(
            one(Opcode::Exponential, 0, F16, F16),
            Some(Resolved::Within(Interval::at_most(65504f64.ln())))
        );
        assert_eq!(
            one(Opcode::Convert, 0, F32, S8),
            Some(Resolved::Within(Interval::new(-128.0, 127.0)))
        );
        assert_eq!(one(Opcode::Convert, 0, F32, F16), None);
        assert_eq!(
            one(Opcode::ShiftLeft, 1, U16, U16),
            Some(Resolved::Within(Interval::new(0.0, 15.0)))
        );
        assert_eq!(
            one(Opcode::Divide, 1, S32, S32),
            Some(Resolved::AwayFromZero { radius: 1.0 })
        );
        assert_eq!(one(Opcode::Divide, 0, S32, S32), None);
    }

    #[test]
    fn dynamic_slice_bounds() {
        let mut i = Instruction::new(
            "ds",
            Opcode::DynamicSlice,
            Shape::array(ElementType::F32, vec![2, 3]),
            vec![],
        );
        i.attrs.dynamic_slice_sizes = Some(vec![2, 3]);
        let types = vec![
            (ElementType::F32, vec![10, 4]),
            (ElementType::S32, vec![]),
            (ElementType::S32, vec![]),
        ];
        let rule = rules_for(Opcode::DynamicSlice, 2).next().unwrap();
        assert_eq!(
            resolve(rule, &i, 1, &types),
            Some(Resolved::Within(Interval::new(0.0, 8.0)))
        );
        assert_eq!(
            resolve(rule, &i, 2, &types),
            Some(Resolved::Within(Interval::new(0.0, 1.0)))
        );
    }
}
