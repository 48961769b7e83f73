//! Evaluate, repair, retry: finite outputs on the exact reference.
//!
//! The interval propagation and the point check guarantee most of a
//! program's values, but not those of ops the point check does not model
//! (dot, convolution, gather, loops...). Where some value is left unchecked,
//! the reference runs on the drawn arguments; while one of its outputs is
//! not finite, the parameters upstream of the place where the non-finite
//! values START (an instruction whose non-finite result has only finite
//! operands) have their range narrowed to a quarter and are redrawn, for a
//! bounded number of rounds. The rounds draw from the generator's one RNG,
//! so the result is deterministic per seed. Each parameter narrowed is
//! reported (a note, and [`GeneratedInputs::narrowed`]).

use rand::rngs::ChaCha8Rng;

use super::generate::{shrink, GeneratedInputs, Sampler};
use super::interval::Interval;
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::Value;
use crate::reference::Evaluator;

/// Rounds of narrowing at most (the reference runs once more than this).
pub const MAX_FINITE_ROUNDS: usize = 8;

/// Whether some float element of `v` is NaN or infinite.
fn nonfinite(v: &Value) -> bool {
    match v {
        Value::Array(l) => {
            let t = l.dtype();
            t.is_float() && (0..l.element_count()).any(|i| !l.get_f64(i).is_finite())
        }
        Value::Tuple(items) => items.iter().any(nonfinite),
        Value::Token => false,
    }
}

/// Where the outputs' non-finite values come from: the entry instruction
/// (by name) where they start, and the entry parameters upstream of it.
#[derive(Debug, PartialEq)]
pub(crate) struct Origin {
    pub at: Vec<String>,
    pub params: Vec<usize>,
}

/// Runs the reference: `Ok(None)` when every output is finite, else where
/// the non-finite values start. Non-finite values that start at a constant
/// (a `-inf` mask) name no parameter. `Err`: the reference cannot run it.
pub(crate) fn nonfinite_origin(
    module: &Module,
    args: &[crate::literal::Literal],
) -> Result<Option<Origin>, String> {
    let values = Evaluator::new()
        .evaluate_all(module, args)
        .map_err(|e| e.to_string())?;
    let entry = module.entry_computation();
    let bad: Vec<bool> = values
        .iter()
        .map(|v| v.as_ref().is_some_and(nonfinite))
        .collect();
    if !bad.get(entry.root.index()).copied().unwrap_or(false) {
        return Ok(None);
    }
    // the non-finite instructions the outputs' non-finite values come through
    let mut blamed = vec![false; bad.len()];
    let mut stack = vec![entry.root];
    blamed[entry.root.index()] = true;
    while let Some(id) = stack.pop() {
        for &o in &entry.instr(id).operands {
            if bad.get(o.index()).copied().unwrap_or(false) && !blamed[o.index()] {
                blamed[o.index()] = true;
                stack.push(o);
            }
        }
    }
    let params = entry_dependencies(module);
    let mut origin = Origin {
        at: Vec::new(),
        params: Vec::new(),
    };
    for (i, _) in blamed.iter().enumerate().filter(|(_, &b)| b) {
        let instr = entry.instr(InstrId(i as u32));
        if instr
            .operands
            .iter()
            .any(|o| blamed.get(o.index()) == Some(&true))
        {
            continue;
        }
        origin.at.push(instr.name.clone());
        origin.params.extend(params[i].iter().copied());
    }
    origin.params.sort_unstable();
    origin.params.dedup();
    Ok(Some(origin))
}

/// The entry parameters each entry instruction depends on.
fn entry_dependencies(module: &Module) -> Vec<Vec<usize>> {
    let entry = module.entry_computation();
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); entry.instructions.len()];
    for id in entry.post_order().unwrap_or_default() {
        let instr = entry.instr(id);
        let mut d: Vec<usize> = Vec::new();
        if instr.opcode == Opcode::Parameter {
            d.extend(
                instr
                    .attrs
                    .parameter_number
                    .and_then(|n| usize::try_from(n).ok()),
            );
        }
        for o in &instr.operands {
            d.extend(deps.get(o.index()).into_iter().flatten().copied());
        }
        d.sort_unstable();
        d.dedup();
        deps[id.index()] = d;
    }
    deps
}

/// A quarter of `i` (halved twice toward 0, or toward its bound nearest 0).
fn quarter(i: Interval) -> Interval {
    shrink(shrink(i))
}

/// Evaluate, repair, retry (see the module's documentation). `redo` re-runs
/// the point repair after a redraw (a redrawn parameter may violate a
/// requirement the point check enforces).
pub(super) fn repair_nonfinite(
    module: &Module,
    samplers: &mut [Sampler],
    rng: &mut ChaCha8Rng,
    out: &mut GeneratedInputs,
    redo: &mut dyn FnMut(&mut [Sampler], &mut ChaCha8Rng, &mut GeneratedInputs),
) {
    let mut first: Vec<Option<Interval>> = vec![None; samplers.len()];
    let mut last_at = Vec::new();
    let mut finite = false;
    for round in 0..=MAX_FINITE_ROUNDS {
        let origin = match nonfinite_origin(module, &out.args) {
            Ok(None) => {
                finite = true;
                break;
            }
            Ok(Some(o)) => o,
            Err(e) => {
                out.notes.push(format!(
                    "the reference cannot evaluate the module ({e}): the finiteness of its outputs is not checked"
                ));
                return;
            }
        };
        last_at = origin.at.clone();
        if round == MAX_FINITE_ROUNDS {
            break;
        }
        let mut narrowed_any = false;
        for &p in &origin.params {
            let Some(s) = samplers.get_mut(p) else {
                continue;
            };
            if !s.dtype.is_float() || s.interval.lo >= s.interval.hi {
                continue;
            }
            let q = quarter(s.interval).round_inward(s.dtype);
            if q.is_empty() || q.lo >= q.hi || q == s.interval {
                continue;
            }
            first[p].get_or_insert(s.interval);
            s.narrow(q, rng);
            if let Some(lit) = out.args.get_mut(p) {
                for i in 0..lit.element_count() {
                    lit.set_f64(i, s.draw(rng));
                }
            }
            narrowed_any = true;
        }
        if !narrowed_any {
            break;
        }
        redo(samplers, rng, out);
    }
    for (p, from) in first.iter().enumerate() {
        let Some(from) = from else { continue };
        out.narrowed.push(p);
        if let Some(i) = out.intervals.get_mut(p) {
            *i = samplers[p].interval;
        }
        out.notes.push(format!(
            "parameter {p} ({}): range narrowed from {from} to {} so that the reference's outputs are finite",
            out.roles.get(p).map_or("data", |r| r.name()),
            samplers[p].interval
        ));
    }
    if !finite {
        out.notes.push(format!(
            "the reference's outputs are not finite (non-finite values start at {}){}",
            if last_at.is_empty() {
                "an unknown place".to_string()
            } else {
                last_at
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            if out.narrowed.is_empty() {
                ": no parameter upstream can be narrowed"
            } else {
                " after narrowing every parameter upstream"
            }
        ));
    }
}
