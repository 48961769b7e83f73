//! A scatter-add whose indices are inexact (an argmax's indices where the
//! selection may flip, the max-pool gradient XLA writes as a value-and-index
//! reduce-window and a scatter): each update may land where any index within
//! its radius points, so every element it may leave or reach may differ by
//! its magnitude (and its own radius), and its sum may have one more term.

use std::collections::HashSet;

use super::super::indexing::scatter_targets;
use super::super::OpError;
use crate::hlo::Instruction;
use crate::literal::Literal;

/// The most index offsets tried per index vector.
const MAX_COMBOS: usize = 4096;
/// The widest index radius followed (an index that may be anything bounds nothing).
const MAX_INDEX_RADIUS: f64 = 8.0;

/// Per operand element: the magnitude of the updates that may reach or
/// leave it, and how many may reach it.
pub(super) struct Moves {
    pub(super) magnitude: Vec<f64>,
    pub(super) gained: Vec<f64>,
}

/// The updates of `ins` (a scatter of `upd` into an operand of `dims` at
/// `idx`, whose elements have radii `ridx`) that may move, and where.
pub(super) fn moving_updates(
    ins: &Instruction,
    dims: &[usize],
    idx: &Literal,
    ridx: &[f64],
    upd: &Literal,
    ru: &[f64],
) -> Result<Moves, OpError> {
    let inexact = |m: &str| OpError::Invalid(format!("inexact scatter indices: {m}"));
    let s = ins
        .attrs
        .scatter_dims
        .as_ref()
        .ok_or_else(|| inexact("no dimension numbers"))?;
    let id = idx.dims();
    let ivd = usize::try_from(s.index_vector_dim).unwrap_or(usize::MAX);
    let components = id.get(ivd).copied().unwrap_or(1).max(1);
    let inner: usize = id.iter().skip(ivd.saturating_add(1)).product();
    let component = |e: usize| {
        if ivd >= id.len() {
            0
        } else {
            (e / inner.max(1)) % components
        }
    };
    if ridx.iter().any(|&q| q.is_nan() || q > MAX_INDEX_RADIUS) {
        return Err(inexact("an index may move too far"));
    }
    let rho: Vec<i128> = ridx.iter().map(|&q| q.ceil() as i128).collect();
    let reach = rho.iter().copied().max().unwrap_or(0);
    let side = (2 * reach + 1) as usize;
    let combos = (0..components).try_fold(1usize, |n, _| n.checked_mul(side));
    let combos = combos
        .filter(|&n| n <= MAX_COMBOS)
        .ok_or_else(|| inexact("too many index offsets to follow"))?;
    let base = scatter_targets(ins, dims, idx, upd.dims())?;
    let n: usize = dims.iter().product();
    let mut moved = vec![false; base.len()];
    let mut landed: HashSet<(usize, usize)> = HashSet::new();
    let mut shifted = idx.clone();
    for combo in 1..combos {
        // offsets per component, each in -reach..=reach
        let mut rest = combo;
        let delta: Vec<i128> = (0..components)
            .map(|_| {
                let d = (rest % side) as i128 - reach;
                rest /= side;
                d
            })
            .collect();
        if delta.iter().all(|&d| d == 0) {
            continue;
        }
        for (e, &r) in rho.iter().enumerate() {
            let d = delta[component(e)].clamp(-r, r);
            shifted.set_i128(e, idx.get_i128(e) + d);
        }
        let targets = scatter_targets(ins, dims, &shifted, upd.dims())?;
        for (k, (t, t0)) in targets.iter().zip(&base).enumerate() {
            if t != t0 {
                moved[k] = true;
                if let Some(t) = t {
                    landed.insert((k, *t));
                }
            }
        }
    }
    let mut magnitude = vec![0.0; n];
    let mut gained = vec![0.0; n];
    let weight = |k: usize| upd.get_f64(k).abs() + ru.get(k).copied().unwrap_or(f64::INFINITY);
    for &(k, t) in &landed {
        if let Some(m) = magnitude.get_mut(t) {
            *m += weight(k);
            gained[t] += 1.0;
        }
    }
    for (k, t0) in base.iter().enumerate() {
        if let (true, Some(t0)) = (moved[k], t0) {
            if let Some(m) = magnitude.get_mut(*t0) {
                *m += weight(k);
            }
        }
    }
    Ok(Moves { magnitude, gained })
}
