//! Selecting reductions on inexact operands: a variadic reduce or
//! reduce-window whose reducer only compares and selects (the value-and-index
//! argmax XLA writes for a max-pool's gradient, `jnp.argmax`).
//!
//! Each result element of such a reducer is one element of its group (the
//! window, or the reduced elements) or the init value, component by
//! component from the same place. Where no comparison inside the group can
//! flip (every two candidates whose values differ stay apart by more than
//! their radii, and no two candidates that tie differ elsewhere), the
//! winner is the reference's and each component carries the winner's
//! radius. Where one may flip, each component is any candidate's: its radius
//! is the farthest candidate's distance plus that candidate's radius.

use super::super::reduction::select_and_scatter_windows;
use super::dual::Dual;
use super::eval::Radii;
use crate::hlo::{CompId, Computation, InstrId, Instruction, Opcode};
use crate::literal::{Literal, Value};

/// The most candidates one result element is checked among (pairwise).
const MAX_GROUP: usize = 512;

/// One operand of the reduction: its values and radii.
type Part<'a> = (&'a Literal, &'a [f64]);

impl Radii<'_, '_> {
    /// The radii of each result of a selecting reduction, or `None` when
    /// the reducer does not route each component from its own operands.
    pub(super) fn selecting_reduction(
        &mut self,
        ins: &Instruction,
        ops: &[Part<'_>],
        outs: &[&Literal],
    ) -> Option<Vec<Vec<f64>>> {
        let k = outs.len();
        if ops.len() != 2 * k || k == 0 {
            return None;
        }
        if !self.routes_by_component(ins.attrs.to_apply?, k) {
            return None;
        }
        let (xs, inits) = ops.split_at(k);
        let xd = xs[0].0.dims().to_vec();
        let groups = match ins.opcode {
            Opcode::ReduceWindow => select_and_scatter_windows(ins, &xd, outs[0].dims()).ok()?,
            Opcode::Reduce => reduce_groups(&xd, ins.attrs.dimensions.as_deref()?)?,
            _ => return None,
        };
        if groups.len() != outs[0].element_count() {
            return None;
        }
        let mut radii = vec![Vec::with_capacity(groups.len()); k];
        // a candidate: Some(flat index into xs) or None for the init values
        let mut cands: Vec<Option<usize>> = Vec::new();
        for (o, group) in groups.iter().enumerate() {
            if group.len() > MAX_GROUP {
                return None;
            }
            cands.clear();
            cands.extend(group.iter().map(|&i| Some(i)));
            cands.push(None);
            let at = |c: usize, cand: Option<usize>| -> (f64, f64) {
                let (l, r) = match cand {
                    Some(i) => (xs[c].0, xs[c].1.get(i).copied()),
                    None => (inits[c].0, inits[c].1.first().copied()),
                };
                let i = cand.unwrap_or(0);
                (l.get_f64(i), r.unwrap_or(f64::INFINITY))
            };
            let bits = |c: usize, cand: Option<usize>| match cand {
                Some(i) => xs[c].0.get_bits(i),
                None => inits[c].0.get_bits(0),
            };
            // the winner: the candidate every component of the result is
            let winner = cands
                .iter()
                .position(|&cand| (0..k).all(|c| bits(c, cand) == outs[c].get_bits(o)));
            // the candidates that may take its place: those linked to it by
            // comparisons that may flip (all of them without a winner); an
            // exact tie the reducer settles the same in either order is none
            let reducer = ins.attrs.to_apply?;
            let mut settled = |p: Option<usize>, q: Option<usize>| {
                let args = |first: Option<usize>, second: Option<usize>| -> Option<Vec<Value>> {
                    let one = |c: usize, cand: Option<usize>| {
                        let (l, i) = match cand {
                            Some(i) => (xs[c].0, i),
                            None => (inits[c].0, 0),
                        };
                        l.scalar_at(i).ok().map(Value::Array)
                    };
                    (0..k)
                        .map(|c| one(c, first))
                        .chain((0..k).map(|c| one(c, second)))
                        .collect()
                };
                let (Some(pq), Some(qp)) = (args(p, q), args(q, p)) else {
                    return false;
                };
                let (Ok(a), Ok(b)) = (self.run.call(reducer, pq), self.run.call(reducer, qp))
                else {
                    return false;
                };
                a == b
            };
            let reach = match winner {
                Some(w) => linked(k, &cands, w, &at, &bits, &mut settled),
                None => vec![true; cands.len()],
            };
            if let (Some(w), 1) = (winner, reach.iter().filter(|&&x| x).count()) {
                for (c, r) in radii.iter_mut().enumerate() {
                    r.push(at(c, cands[w]).1);
                }
                continue;
            }
            for (c, r) in radii.iter_mut().enumerate() {
                let y = outs[c].get_f64(o);
                let linked = cands.iter().zip(&reach).filter(|x| *x.1).map(|x| x.0);
                let far = linked.fold(0.0f64, |m, &cand| {
                    let (x, q) = at(c, cand);
                    let d = (x - y).abs() + q;
                    if d.is_nan() {
                        f64::INFINITY
                    } else {
                        m.max(d)
                    }
                });
                r.push(far);
            }
        }
        Some(radii)
    }

    /// Whether the root of `comp` (a reducer of `k` components, parameters
    /// `0..k` the left and `k..2k` the right operands) gives component `c`
    /// only through `select`/`maximum`/`minimum` of parameters `c` and `c+k`.
    fn routes_by_component(&self, comp: CompId, k: usize) -> bool {
        let Some(comp) = self.module.computations.get(comp.index()) else {
            return false;
        };
        let root = comp.instr(comp.root);
        let parts: Vec<_> = if k == 1 && root.opcode != Opcode::Tuple {
            vec![comp.root]
        } else if root.opcode == Opcode::Tuple && root.operands.len() == k {
            root.operands.clone()
        } else {
            return false;
        };
        parts.iter().enumerate().all(|(c, &id)| {
            let mut stack = vec![id];
            let mut seen = 0usize;
            while let Some(id) = stack.pop() {
                seen += 1;
                if seen > 4096 {
                    return false;
                }
                let i = comp.instr(id);
                match i.opcode {
                    Opcode::Parameter => {
                        let p = i.attrs.parameter_number.unwrap_or(-1);
                        if p != c as i64 && p != (c + k) as i64 {
                            return false;
                        }
                    }
                    Opcode::Select => stack.extend(i.operands.iter().skip(1).copied()),
                    Opcode::Maximum | Opcode::Minimum => stack.extend(i.operands.iter().copied()),
                    _ => return false,
                }
            }
            true
        })
    }
}

impl Radii<'_, '_> {
    /// A comparison of a value with its own maximum or minimum against
    /// another (`x == max(x, k)`, JAX's derivative of `maximum`): where the
    /// `max` cannot flip (`x` and `k` stay apart by more than their radii)
    /// it returns one operand's bits, so the comparison is decided; the
    /// operands' radii alone would call it undecided.
    pub(super) fn steady_compare(
        &self,
        comp: &Computation,
        ins: &Instruction,
        values: &[Option<Dual>],
        d: Dual,
    ) -> Dual {
        let Dual::Array(l, mut r) = d else { return d };
        if ins.opcode != Opcode::Compare || ins.operands.len() != 2 || r.iter().all(|&x| x == 0.0) {
            return Dual::Array(l, r);
        }
        let (a, b) = (ins.operands[0], ins.operands[1]);
        let extreme = |m: InstrId, other: InstrId| {
            let i = comp.instr(m);
            let pair = matches!(i.opcode, Opcode::Maximum | Opcode::Minimum)
                && i.operands.len() == 2
                && i.operands.contains(&other);
            pair.then(|| (i.operands[0], i.operands[1]))
        };
        let Some((x, k)) = extreme(b, a).or_else(|| extreme(a, b)) else {
            return Dual::Array(l, r);
        };
        let get = |id: InstrId| values.get(id.index()).and_then(Option::as_ref)?.array();
        let (Some((xv, xr)), Some((kv, kr))) = (get(x), get(k)) else {
            return Dual::Array(l, r);
        };
        if xv.element_count() != r.len() || kv.element_count() != r.len() {
            return Dual::Array(l, r);
        }
        for (i, q) in r.iter_mut().enumerate() {
            let gap = (xv.get_f64(i) - kv.get_f64(i)).abs();
            if gap > xr[i] + kr[i] && (xr[i] + kr[i]).is_finite() {
                *q = 0.0;
            }
        }
        Dual::Array(l, r)
    }
}

/// Whether a comparison between candidates `p` and `q` may go the other
/// way in some component: values within their radii (one of them inexact),
/// or an exact tie while they differ in another component (the order the
/// reduction meets them decides).
fn may_flip(
    k: usize,
    p: Option<usize>,
    q: Option<usize>,
    at: &dyn Fn(usize, Option<usize>) -> (f64, f64),
    bits: &dyn Fn(usize, Option<usize>) -> u64,
    settled: &mut dyn FnMut(Option<usize>, Option<usize>) -> bool,
) -> bool {
    let mut tie = false;
    for c in 0..k {
        let ((x, r), (y, s)) = (at(c, p), at(c, q));
        let d = if x == y { 0.0 } else { (x - y).abs() };
        if d.is_nan() || !(r + s).is_finite() || (r + s > 0.0 && d <= r + s) {
            return true;
        }
        tie |= d == 0.0 && (0..k).any(|e| bits(e, p) != bits(e, q));
    }
    tie && !settled(p, q)
}

/// The candidates reachable from `from` through comparisons that may flip.
/// One that is not keeps every comparison with each reachable candidate as
/// the reference made it, so (for a reducer that selects by an order, the
/// argmax and argmin that XLA and JAX write) it cannot become the result.
fn linked(
    k: usize,
    cands: &[Option<usize>],
    from: usize,
    at: &dyn Fn(usize, Option<usize>) -> (f64, f64),
    bits: &dyn Fn(usize, Option<usize>) -> u64,
    settled: &mut dyn FnMut(Option<usize>, Option<usize>) -> bool,
) -> Vec<bool> {
    let mut reach = vec![false; cands.len()];
    reach[from] = true;
    let mut todo = vec![from];
    while let Some(a) = todo.pop() {
        for b in 0..cands.len() {
            if !reach[b] && may_flip(k, cands[a], cands[b], at, bits, settled) {
                reach[b] = true;
                todo.push(b);
            }
        }
    }
    reach
}

/// The flat input elements each result element of a reduce over `dims`
/// reads, results in row-major order.
fn reduce_groups(xd: &[usize], dims: &[i64]) -> Option<Vec<Vec<usize>>> {
    let rank = xd.len();
    let mut reduced = vec![false; rank];
    for &d in dims {
        *reduced.get_mut(usize::try_from(d).ok()?)? = true;
    }
    let mut strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * xd[d + 1];
    }
    let kept: Vec<usize> = (0..rank).filter(|&d| !reduced[d]).collect();
    let red: Vec<usize> = (0..rank).filter(|&d| reduced[d]).collect();
    let offsets = |ds: &[usize]| -> Vec<usize> {
        let mut out = vec![0usize];
        for &d in ds {
            let step = strides[d];
            out = out
                .iter()
                .flat_map(|&b| (0..xd[d]).map(move |i| b + i * step))
                .collect();
        }
        out
    };
    let (bases, offs) = (offsets(&kept), offsets(&red));
    if offs.len() > 1 << 16 || bases.len().saturating_mul(offs.len()) > 1 << 24 {
        return None;
    }
    Some(
        bases
            .iter()
            .map(|&b| offs.iter().map(|&o| b + o).collect())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_groups_follow_row_major_order() {
        // [2,3] reduced over dim 1: rows
        assert_eq!(
            reduce_groups(&[2, 3], &[1]).unwrap(),
            vec![vec![0, 1, 2], vec![3, 4, 5]]
        );
        // over dim 0: columns
        assert_eq!(
            reduce_groups(&[2, 3], &[0]).unwrap(),
            vec![vec![0, 3], vec![1, 4], vec![2, 5]]
        );
        assert!(reduce_groups(&[2, 3], &[2]).is_none());
    }

    #[test]
    fn candidates_apart_do_not_flip_but_close_or_tied_ones_do() {
        let vals: [[f64; 2]; 4] = [[1.0, 0.0], [2.0, 1.0], [2.0, 2.0], [5.0, 3.0]];
        let radii = [[0.1, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]];
        let at = |c: usize, p: Option<usize>| {
            let i = p.unwrap_or(0);
            (vals[i][c], radii[i][c])
        };
        let bits = |c: usize, p: Option<usize>| vals[p.unwrap_or(0)][c].to_bits();
        let mut unsettled = |_: Option<usize>, _: Option<usize>| false;
        let mut settled = |_: Option<usize>, _: Option<usize>| true;
        assert!(!may_flip(2, Some(0), Some(1), &at, &bits, &mut unsettled));
        // 2.0 and 2.0 tie exactly with different indices: the order decides,
        // unless the reducer picks the same one in either order
        assert!(may_flip(2, Some(1), Some(2), &at, &bits, &mut unsettled));
        assert!(!may_flip(2, Some(1), Some(2), &at, &bits, &mut settled));
        let cands = [Some(0), Some(1), Some(2), Some(3)];
        assert_eq!(
            linked(2, &cands, 1, &at, &bits, &mut unsettled),
            vec![false, true, true, false]
        );
        assert_eq!(
            linked(2, &cands, 3, &at, &bits, &mut unsettled),
            vec![false, false, false, true]
        );
        let wide = |c: usize, p: Option<usize>| {
            let (x, r) = at(c, p);
            (x, if c == 0 { r * 10.0 } else { r })
        };
        assert!(may_flip(2, Some(0), Some(1), &wide, &bits, &mut settled));
        assert_eq!(
            linked(2, &cands, 0, &wide, &bits, &mut unsettled),
            vec![true, true, true, false]
        );
    }
}
