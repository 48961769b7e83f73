//! Requirement sites: what each op demands of its operands' values (from the
//! domain table), and finiteness of every float value when the distribution
//! wants finite outputs. The propagation narrows the parameters until every
//! site holds.
//!
//! A complex operand gets no domain requirement: the table's rules are about
//! reals (`log` of a complex number is defined off 0, `sqrt` everywhere).
//! A complex value that must be finite has no interval form: its requirement
//! is never guaranteed by the intervals, so the point check (which does not
//! evaluate complex values) leaves it to the reference's finite repair.

use super::domain::{resolve, rules_for, Resolved};
use super::graph::{Graph, NodeId};
use super::interval::Interval;
use crate::hlo::{ElementType, Module, Opcode};

/// What a requirement site demands of its node's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Demand {
    Within(Interval),
    AwayFromZero(f64),
    Finite,
}

/// One requirement on one node's values.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pub node: NodeId,
    pub demand: Demand,
    /// True for index-range requirements (waived by the clamping distribution).
    pub is_index: bool,
    /// `op(operand k)` for reports.
    pub what: String,
}

impl Site {
    /// The interval form of the demand, if it has one.
    pub fn interval(&self, dtype: Option<ElementType>) -> Option<Interval> {
        match self.demand {
            Demand::Within(i) => Some(i),
            Demand::Finite => dtype
                .filter(|t| !t.is_complex())
                .map(Interval::finite_of_type),
            Demand::AwayFromZero(_) => None,
        }
    }
}

/// Collects requirement sites: the domain table for every op, and finiteness
/// of every float value when the distribution wants finite outputs.
pub(crate) fn collect_sites(
    module: &Module,
    g: &Graph,
    want_finite: bool,
    fwd: &[Interval],
) -> Vec<Site> {
    let mut sites = Vec::new();
    for (id, n) in g.nodes.iter().enumerate() {
        let instr = module.comp(n.comp).instr(n.instr);
        let types: Vec<(ElementType, Vec<i64>)> = n
            .operands
            .iter()
            .map(|&o| {
                let on = &g.nodes[o];
                (on.dtype.unwrap_or(ElementType::Pred), on.dims.clone())
            })
            .collect();
        for (k, &operand) in n.operands.iter().enumerate() {
            if g.nodes[operand].dtype.is_none_or(ElementType::is_complex) {
                continue;
            }
            for rule in rules_for(n.opcode, k) {
                let Some(resolved) = resolve(rule, instr, k, &types) else {
                    continue;
                };
                let demand = match resolved {
                    Resolved::Within(i) => Demand::Within(i),
                    Resolved::AwayFromZero { radius } => Demand::AwayFromZero(radius),
                    Resolved::IntegerExponentForNegativeBase => {
                        // An exponent known to be an integer allows any base.
                        let e = n.operands.get(1).copied();
                        let integral = e.is_some_and(|e| {
                            let f = fwd[e];
                            (f.lo == f.hi && f.lo.fract() == 0.0)
                                || (g.nodes[e].opcode == Opcode::Convert
                                    && g.nodes[e]
                                        .operands
                                        .first()
                                        .and_then(|&o| g.nodes[o].dtype)
                                        .is_some_and(|t| !t.is_float()))
                        });
                        if integral {
                            continue;
                        }
                        Demand::Within(Interval::at_least(0.0))
                    }
                };
                let is_index = super::domain::is_index_constraint(rule.constraint);
                if is_index {
                    if let Some(pieces) = index_pieces(module, g, operand, instr, &types) {
                        for (node, bound) in pieces {
                            sites.push(Site {
                                node,
                                demand: Demand::Within(Interval::new(0.0, bound.max(0) as f64)),
                                is_index,
                                what: format!("{}(operand {k}) in {}", n.opcode, instr.name),
                            });
                        }
                        continue;
                    }
                }
                sites.push(Site {
                    node: operand,
                    demand,
                    is_index,
                    what: format!("{}(operand {k}) in {}", n.opcode, instr.name),
                });
            }
        }
        if want_finite
            && n.dtype.is_some_and(|t| t.is_float() || t.is_complex())
            && !matches!(n.opcode, Opcode::Parameter | Opcode::Constant)
        {
            sites.push(Site {
                node: id,
                demand: Demand::Finite,
                is_index: false,
                what: format!("finite {} in {}", n.opcode, instr.name),
            });
        }
    }
    sites
}

/// The index vectors of a gather or scatter built by a concatenate along the
/// index vector dimension (XLA's batch index beside the data's, JAX's
/// `take_along_axis`): each piece indexes its own dimensions, so each gets
/// the requirement of its components (the whole operand's would be their
/// hull, or an intersection no batch iota meets).
fn index_pieces(
    module: &Module,
    g: &Graph,
    operand: NodeId,
    instr: &crate::hlo::Instruction,
    types: &[(ElementType, Vec<i64>)],
) -> Option<Vec<(NodeId, i64)>> {
    let (mut ivd, bounds) = super::domain::index_component_bounds(instr, types)?;
    // through reshapes that keep the index vector as the last dimension
    // (XLA's `s32[2,8,1,3] -> s32[16,3]` bitcast of the batched vectors)
    let mut operand = operand;
    while matches!(
        g.nodes[operand].opcode,
        Opcode::Reshape | Opcode::Bitcast | Opcode::Copy
    ) {
        let n = &g.nodes[operand];
        let &[src] = n.operands.as_slice() else {
            return None;
        };
        let from = &g.nodes[src].dims;
        let last = n.dims.len().checked_sub(1)?;
        if ivd != last || from.last() != n.dims.last() || from.is_empty() {
            return None;
        }
        ivd = from.len() - 1;
        operand = src;
    }
    let concat = &g.nodes[operand];
    if concat.opcode != Opcode::Concatenate || bounds.len() < 2 {
        return None;
    }
    let dims = &concat.dims;
    let along = module
        .comp(concat.comp)
        .instr(concat.instr)
        .attrs
        .dimensions
        .as_ref()?
        .first()
        .and_then(|&d| usize::try_from(d).ok())?;
    if along != ivd || dims.get(ivd).copied()? as usize != bounds.len() {
        return None;
    }
    let mut at = 0usize;
    let mut pieces = Vec::new();
    for &o in &concat.operands {
        let w = usize::try_from(*g.nodes[o].dims.get(ivd)?).ok()?;
        let b = bounds.get(at..at + w)?.iter().copied().min()?;
        pieces.push((o, b));
        at += w;
    }
    Some(pieces)
}
