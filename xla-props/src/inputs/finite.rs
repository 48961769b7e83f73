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
//! reported (a note each, and `GeneratedInputs::narrowed`).

use super::interval::Interval;
use super::rng::SplitMix;
use super::sampler::{shrink, Sampler};
use super::scale::ParameterRole;
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::{Literal, Value};
use crate::reference::Evaluator;

/// Rounds of repair at most (the reference runs once more than this).
pub const MAX_FINITE_ROUNDS: usize = 16;

/// Whether element `i` of `l` is NaN or infinite (a complex element: either part).
fn element_nonfinite(l: &Literal, i: usize) -> bool {
    let t = l.dtype();
    if t.is_complex() {
        let (re, im) = l.get_complex(i);
        !(re.is_finite() && im.is_finite())
    } else {
        t.is_float() && !l.get_f64(i).is_finite()
    }
}

/// Whether some float or complex element of `v` is NaN or infinite.
fn nonfinite(v: &Value) -> bool {
    match v {
        Value::Array(l) => (0..l.element_count()).any(|i| element_nonfinite(l, i)),
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
    let entry = module.entry_computation();
    if crate::reference::spmd::DeviceProgram::multi(module)?.is_some() {
        // on many devices: the global outputs only; the start is the root,
        // and every parameter is upstream of it
        let outs = Evaluator::new()
            .evaluate(module, args)
            .map_err(|e| e.to_string())?;
        if !outs.iter().any(|l| nonfinite(&Value::Array(l.clone()))) {
            return Ok(None);
        }
        return Ok(Some(vec![Start {
            at: entry.instr(entry.root).name.clone(),
            elements: None,
            params: (0..entry.parameters().len()).collect(),
        }]));
    }
    let values = Evaluator::new()
        .evaluate_all(module, args)
        .map_err(|e| e.to_string())?;
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
                    .filter(|&e| element_nonfinite(l, e))
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

/// Whether to run the reference again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Something was redrawn: run again.
    Again,
    /// The outputs are finite, or nothing more can be done.
    Done,
}

/// The state of the evaluate-repair-retry loop over one module's arguments.
pub(super) struct FiniteRepair {
    /// Per parameter, its interval before the first narrowing.
    first: Vec<Option<Interval>>,
    /// Where the non-finite values started at the last evaluation.
    last_at: Vec<String>,
    /// The fewest non-finite elements seen since the last narrowing, and
    /// the rounds since it went down.
    best: usize,
    stalled: usize,
    rounds: usize,
    /// The reference's error, when it cannot evaluate the module.
    error: Option<String>,
    finite: bool,
    /// Elements redrawn one by one.
    pub resampled: u64,
}

impl FiniteRepair {
    pub fn new(params: usize) -> Self {
        FiniteRepair {
            first: vec![None; params],
            last_at: Vec::new(),
            best: usize::MAX,
            stalled: 0,
            rounds: 0,
            error: None,
            finite: false,
            resampled: 0,
        }
    }

    /// Evaluates the reference on `args` and, while an output is not finite
    /// and the budget lasts, repairs the parameters upstream of where the
    /// non-finite values start (see the module's documentation).
    pub fn round(
        &mut self,
        module: &Module,
        samplers: &mut [Sampler],
        rng: &mut SplitMix,
        args: &mut [Literal],
    ) -> Step {
        let starts = match nonfinite_starts(module, args) {
            Ok(None) => {
                self.finite = true;
                return Step::Done;
            }
            Ok(Some(s)) => s,
            Err(e) => {
                self.error = Some(e);
                return Step::Done;
            }
        };
        self.last_at = starts.iter().map(|s| s.at.clone()).collect();
        if self.rounds == MAX_FINITE_ROUNDS {
            return Step::Done;
        }
        self.rounds += 1;
        let bad: usize = starts
            .iter()
            .map(|s| s.elements.as_ref().map_or(usize::MAX / 4, |e| e.1.len()))
            .sum();
        if bad < self.best {
            (self.best, self.stalled) = (bad, 0);
        } else {
            self.stalled += 1;
        }
        let counts: Vec<usize> = args.iter().map(Literal::element_count).collect();
        let aligned = |s: &Start, p: usize| {
            s.elements
                .as_ref()
                .is_some_and(|(n, _)| counts.get(p) == Some(n))
        };
        let any_aligned = starts.iter().any(|s| {
            s.params
                .iter()
                .any(|&p| aligned(s, p) && samplers.get(p).is_some_and(shrinkable))
        });
        let mode = if any_aligned && self.stalled < 2 {
            Mode::Elements
        } else {
            (self.best, self.stalled) = (usize::MAX, 0);
            Mode::Narrow
        };
        let mut changed = false;
        let mut narrowed = vec![false; samplers.len()];
        for s in &starts {
            for &p in &s.params {
                let (Some(sampler), Some(lit)) = (samplers.get_mut(p), args.get_mut(p)) else {
                    continue;
                };
                if !shrinkable(sampler) {
                    continue;
                }
                match (mode, &s.elements) {
                    (Mode::Elements, Some((_, elems))) if aligned(s, p) => {
                        for &i in elems {
                            sampler.redraw(lit, i, rng);
                        }
                        self.resampled += elems.len() as u64;
                        changed = true;
                    }
                    (Mode::Narrow, _) if !narrowed[p] => {
                        let q = quarter(sampler.interval).round_inward(sampler.dtype);
                        if q.is_empty() || q.lo >= q.hi || q == sampler.interval {
                            continue;
                        }
                        self.first[p].get_or_insert(sampler.interval);
                        sampler.narrow(q, rng);
                        for i in 0..lit.element_count() {
                            sampler.redraw(lit, i, rng);
                        }
                        narrowed[p] = true;
                        changed = true;
                    }
                    _ => {}
                }
            }
        }
        if changed {
            Step::Again
        } else {
            Step::Done
        }
    }

    /// The parameters whose range was narrowed.
    pub fn narrowed(&self) -> impl Iterator<Item = usize> + '_ {
        self.first
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_some())
            .map(|(p, _)| p)
    }

    /// A note for every parameter narrowed, and for outputs left non-finite.
    pub fn notes(&self, samplers: &[Sampler], roles: &[ParameterRole]) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(e) = &self.error {
            notes.push(format!(
                "the reference cannot evaluate the module ({e}): the finiteness of its outputs is not checked"
            ));
            return notes;
        }
        for (p, from) in self.first.iter().enumerate() {
            let (Some(from), Some(s)) = (from, samplers.get(p)) else {
                continue;
            };
            notes.push(format!(
                "parameter {p} ({}): range narrowed from {from} to {} so that the reference's outputs are finite",
                roles.get(p).map_or("data", |r| r.name()),
                s.interval
            ));
        }
        if !self.finite {
            let at: Vec<String> = self.last_at.iter().map(|n| format!("`{n}`")).collect();
            notes.push(format!(
                "the reference's outputs are not finite (non-finite values start at {}){}",
                if at.is_empty() {
                    "an unknown place".to_string()
                } else {
                    at.join(", ")
                },
                if self.narrowed().next().is_none() {
                    ": no parameter upstream can be narrowed"
                } else {
                    " after narrowing the parameters upstream"
                }
            ));
        }
        notes
    }
}

/// Whether the finite repair may redraw a parameter: a float one with a range.
fn shrinkable(s: &Sampler) -> bool {
    s.dtype.is_float() && s.interval.lo < s.interval.hi
}
