//! Evaluate, repair, retry: finite outputs on the exact reference.
//!
//! The interval propagation and the point check guarantee most of a
//! program's values, but not those of ops the point check does not model
//! (dot, convolution, gather, loops...). Where some value is left unchecked,
//! the reference runs on the drawn arguments; while one of its outputs is
//! not finite, the parameters upstream of the place where the non-finite
//! values START (an instruction whose non-finite result has only finite
//! operands) are repaired, for a bounded number of rounds: those shaped
//! like that instruction have its non-finite elements redrawn, as long as
//! that makes progress (a hole, `rsqrt(nu - mu * mu)`); otherwise every
//! parameter upstream has its range narrowed to a quarter and is redrawn
//! (an overflow, `exp(x . w)`). The rounds draw from the generator's one RNG,
//! so the result is deterministic per seed. Each parameter narrowed is
//! reported (a note, and [`GeneratedInputs::narrowed`]).

use rand::rngs::ChaCha8Rng;

use super::generate::{shrink, GeneratedInputs, Sampler};
use super::interval::Interval;
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::{Literal, Value};
use crate::reference::Evaluator;

/// Rounds of repair at most (the reference runs once more than this).
pub const MAX_FINITE_ROUNDS: usize = 16;

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

/// One place where the outputs' non-finite values start.
#[derive(Debug, PartialEq)]
pub(crate) struct Start {
    /// The entry instruction's name.
    pub at: String,
    /// Its non-finite elements (row-major), when it is an array.
    pub elements: Option<(usize, Vec<usize>)>,
    /// The entry parameters upstream of it.
    pub params: Vec<usize>,
}

/// Runs the reference: `Ok(None)` when every output is finite, else where
/// the non-finite values start: the non-finite instructions that the
/// outputs' non-finite values come through and whose operands are all
/// finite. Non-finite values that start at a constant (a `-inf` mask) name
/// no parameter. `Err`: the reference cannot run the module.
pub(crate) fn nonfinite_starts(
    module: &Module,
    args: &[Literal],
) -> Result<Option<Vec<Start>>, String> {
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
    let deps = entry_dependencies(module);
    let mut starts = Vec::new();
    for (i, _) in blamed.iter().enumerate().filter(|(_, &b)| b) {
        let instr = entry.instr(InstrId(i as u32));
        if instr
            .operands
            .iter()
            .any(|o| blamed.get(o.index()) == Some(&true))
        {
            continue;
        }
        let elements = match values.get(i).and_then(Option::as_ref) {
            Some(Value::Array(l)) => Some((
                l.element_count(),
                (0..l.element_count())
                    .filter(|&e| !l.get_f64(e).is_finite())
                    .collect(),
            )),
            _ => None,
        };
        starts.push(Start {
            at: instr.name.clone(),
            elements,
            params: deps[i].clone(),
        });
    }
    Ok(Some(starts))
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

/// How one round repairs.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Redraw the non-finite elements of the parameters shaped like the
    /// instruction where they start (a hole: `rsqrt(nu - mu * mu)`).
    Elements,
    /// Narrow every parameter upstream to a quarter and redraw it (an
    /// overflow: `exp(x . w)`).
    Narrow,
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
    let (mut best, mut stalled) = (usize::MAX, 0);
    for round in 0..=MAX_FINITE_ROUNDS {
        let starts = match nonfinite_starts(module, &out.args) {
            Ok(None) => {
                finite = true;
                break;
            }
            Ok(Some(s)) => s,
            Err(e) => {
                out.notes.push(format!(
                    "the reference cannot evaluate the module ({e}): the finiteness of its outputs is not checked"
                ));
                return;
            }
        };
        last_at = starts.iter().map(|s| s.at.clone()).collect();
        if round == MAX_FINITE_ROUNDS {
            break;
        }
        let bad: usize = starts
            .iter()
            .map(|s| s.elements.as_ref().map_or(usize::MAX / 4, |e| e.1.len()))
            .sum();
        if bad < best {
            (best, stalled) = (bad, 0);
        } else {
            stalled += 1;
        }
        let counts: Vec<usize> = out.args.iter().map(Literal::element_count).collect();
        let aligned = |s: &Start, p: usize| {
            s.elements
                .as_ref()
                .is_some_and(|(n, _)| counts.get(p) == Some(n))
        };
        let any_aligned = starts.iter().any(|s| {
            s.params
                .iter()
                .any(|&p| aligned(s, p) && shrinkable(&samplers[p]))
        });
        let mode = if any_aligned && stalled < 2 {
            Mode::Elements
        } else {
            (best, stalled) = (usize::MAX, 0);
            Mode::Narrow
        };
        let mut changed = false;
        let mut narrowed = vec![false; samplers.len()];
        for s in &starts {
            for &p in &s.params {
                if !shrinkable(&samplers[p]) {
                    continue;
                }
                let lit = &mut out.args[p];
                match (mode, &s.elements) {
                    (Mode::Elements, Some((_, elems))) if aligned(s, p) => {
                        for &i in elems {
                            lit.set_f64(i, samplers[p].draw(rng));
                        }
                        out.resampled_elements += elems.len() as u64;
                        changed = true;
                    }
                    (Mode::Elements, _) => {}
                    (Mode::Narrow, _) if !narrowed[p] => {
                        let sampler = &mut samplers[p];
                        let q = quarter(sampler.interval).round_inward(sampler.dtype);
                        if q.is_empty() || q.lo >= q.hi || q == sampler.interval {
                            continue;
                        }
                        first[p].get_or_insert(sampler.interval);
                        sampler.narrow(q, rng);
                        for i in 0..lit.element_count() {
                            lit.set_f64(i, sampler.draw(rng));
                        }
                        narrowed[p] = true;
                        changed = true;
                    }
                    (Mode::Narrow, _) => {}
                }
            }
        }
        if !changed {
            break;
        }
        redo(samplers, rng, out);
    }
    report(samplers, &first, finite, &last_at, out);
}

/// Whether the finite repair may redraw a parameter: a float one with a range.
fn shrinkable(s: &Sampler) -> bool {
    s.dtype.is_float() && s.interval.lo < s.interval.hi
}

/// Notes for every parameter narrowed, and for outputs left non-finite.
fn report(
    samplers: &[Sampler],
    first: &[Option<Interval>],
    finite: bool,
    last_at: &[String],
    out: &mut GeneratedInputs,
) {
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
                " after narrowing the parameters upstream"
            }
        ));
    }
}
