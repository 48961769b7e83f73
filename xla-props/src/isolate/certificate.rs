//! The certificate of local agreement, checked against the whole: when a
//! module's output falls outside every bound but no unit (fusion or
//! top-level instruction) disagrees on the reference's own operand values,
//! each unit's measured local error is carried through the graph with the
//! first-order sensitivities (`reference::FirstOrder::with_local`). If the
//! carried errors explain the output's deviation, the departure is
//! *amplified*: legal. If not, the compiler did something to the whole
//! program that no unit shows (a fusion it formed itself, a rounding it
//! elided across units): a *composition* mismatch, and the smallest
//! subgraph around the first departing value that departs when compiled
//! whole is its reproducer.

use std::collections::HashMap;

use serde::Serialize;

use super::localize::{candidates, operand_args, BATCH_SIZE};
use super::sides::{judge_outputs, ulp_of, Tested};
use crate::check::{default_error_spec_for_module, Numerics};
use crate::hlo::rewrite::{extract_batch, extract_region, Extracted};
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::{Literal, Value};
use crate::reference::FirstOrder;

/// How a departure with every unit in agreement is explained.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Certificate {
    /// The units' measured errors, carried through the graph, bound the
    /// output's deviation: legal.
    Amplified(Explanation),
    /// They do not: the whole departs beyond what its units explain.
    Composition(Explanation),
}

/// The numbers behind a [`Certificate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explanation {
    /// Units compared on the reference's values of their operands.
    pub units: usize,
    /// The largest error a unit makes there, in ULP of its result.
    pub worst_local_ulp: f64,
    /// The unit that makes it.
    pub worst_local_unit: String,
    /// Output elements whose deviation exceeds the carried bound.
    pub beyond: usize,
    /// The element with the largest deviation relative to its bound.
    pub output: usize,
    /// Its flat index.
    pub element: usize,
    /// Its deviation from the reference.
    pub observed: f64,
    /// The bound the units' errors predict there (0 when the basis is
    /// the backend's own run, which carries no bound).
    pub predicted: f64,
    /// What the certificate rests on.
    pub basis: Basis,
    /// Own run only: values left unexposed (reductions and contractions
    /// the compiler orders otherwise once they are outputs), judged inside
    /// the regions of the units that read them.
    pub hidden_values: usize,
    /// Own run only: units judged together with their producers (on the
    /// exposed values alone they depart: a value kept unrounded or
    /// recomputed across the boundary, as the numerics allow).
    pub grown_units: usize,
    /// Own run only: `while` units judged one iteration at a time (each
    /// step on the state the backend computed: a loop that departs judged
    /// whole, such as a continued fraction's recurrence), and their
    /// iterations in all.
    pub stepped_loops: usize,
    /// The iterations of those loops.
    pub stepped_iterations: usize,
}

/// What a certificate rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Every unit is legal on the operands it was given in the backend's
    /// own run (every value exposed, the same outputs): a composition of
    /// legal steps (`own_run`).
    OwnRun,
    /// Each unit's error, measured on the reference's operands, carried
    /// through the graph with the first-order sensitivities.
    Carried,
}

impl Certificate {
    /// The numbers.
    pub fn explanation(&self) -> &Explanation {
        match self {
            Certificate::Amplified(e) | Certificate::Composition(e) => e,
        }
    }
    /// True for an amplified (legal) departure.
    pub fn is_amplified(&self) -> bool {
        matches!(self, Certificate::Amplified(_))
    }
}

impl std::fmt::Display for Certificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.explanation();
        let local = format!(
            "every one of {} units agrees within its declared numerics on the reference's operands (worst local error {:.0} ulp, at `{}`)",
            e.units, e.worst_local_ulp, e.worst_local_unit
        );
        match self {
            Certificate::Amplified(_) if e.basis == Basis::OwnRun => {
                let exposed = if e.hidden_values == 0 {
                    "every value exposed".to_string()
                } else {
                    format!(
                        "every value exposed but {} that a reduction or contraction computes, reads or moves, each judged inside the units that read it",
                        e.hidden_values
                    )
                };
                let grown = if e.grown_units == 0 {
                    String::new()
                } else {
                    format!(
                        "; {} of them judged together with their producers, which the compiler kept unrounded or recomputed across the boundary",
                        e.grown_units
                    )
                };
                let stepped = if e.stepped_loops == 0 {
                    String::new()
                } else {
                    format!(
                        "; {} `while` loops judged one iteration at a time ({} iterations, each on the state the backend computed, the last state the loop's result bit for bit)",
                        e.stepped_loops, e.stepped_iterations
                    )
                };
                write!(
                    f,
                    "amplified: in the backend's own run ({exposed}, the same outputs) each of {} units computes what its declared numerics allow from the operands it was given (worst local error {:.0} ulp, at `{}`{grown}{stepped}): the output is a composition of legal steps (largest deviation: output {} element {}: {:.3e})",
                    e.units, e.worst_local_ulp, e.worst_local_unit, e.output, e.element, e.observed
                )
            }
            Certificate::Amplified(_) => write!(
                f,
                "amplified: {local}, and their errors carried through the graph bound the output's deviation (largest: output {} element {}: observed {:.3e} <= predicted {:.3e})",
                e.output, e.element, e.observed, e.predicted
            ),
            Certificate::Composition(_) if !e.predicted.is_finite() => write!(
                f,
                "composition: {local}, but {} output elements depart beyond what their errors explain (worst: output {} element {}: observed {:.3e}, where the errors carried through the graph are unbounded: predicted inf, which explains nothing)",
                e.beyond, e.output, e.element, e.observed
            ),
            Certificate::Composition(_) => write!(
                f,
                "composition: {local}, but {} output elements depart beyond what their errors explain (worst: output {} element {}: observed {:.3e} > predicted {:.3e})",
                e.beyond, e.output, e.element, e.observed, e.predicted
            ),
        }
    }
}

/// One unit's measured error on the reference's values of its operands.
#[derive(Clone, Debug)]
pub(crate) struct LocalError {
    /// Per element, `|backend - reference|`.
    pub(crate) abs: Vec<f64>,
    /// The largest, in ULP of the result's type.
    pub(crate) worst_ulp: f64,
}

/// Each unit's error on the reference's values of its operands (units
/// whose runs fail are left to the declared numerics).
pub(crate) fn measure_local(
    module: &Module,
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    allow: &crate::reference::Allowances,
) -> HashMap<String, LocalError> {
    let debug = std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE").is_some();
    let entry = module.entry_computation();
    let mut out = HashMap::new();
    for chunk in candidates(module).chunks(BATCH_SIZE) {
        let batch = extract_batch(module, chunk);
        let mut args = Vec::new();
        for ops in &batch.operands {
            match operand_args(reference, ops) {
                Some(a) => args.extend(a),
                None => {
                    if debug {
                        eprintln!("certificate debug: a unit's operands have no reference value; measuring stops");
                    }
                    return out;
                }
            }
        }
        let outputs = match tested.run(&batch.module, &args) {
            Ok(o) => o,
            Err(e) => {
                if debug {
                    eprintln!(
                        "certificate debug: a batch of {} units failed: {e}",
                        chunk.len()
                    );
                }
                continue;
            }
        };
        let mut at = 0;
        for (k, &c) in chunk.iter().enumerate() {
            let n = batch.leaves[k];
            let actual = outputs.get(at..at + n).unwrap_or(&[]);
            at += n;
            let (Some(Some(Value::Array(e))), [a]) = (reference.get(c.index()), actual) else {
                if debug {
                    eprintln!(
                        "certificate debug: `{}` not measured (not one array)",
                        entry.instr(c).name
                    );
                }
                continue;
            };
            if !e.dtype().is_float() || a.element_count() != e.element_count() {
                continue;
            }
            let abs: Vec<f64> = (0..e.element_count())
                .map(|i| {
                    let (p, q) = (e.get_f64(i), a.get_f64(i));
                    if p == q || (p.is_nan() && q.is_nan()) {
                        0.0
                    } else if !p.is_finite() || !q.is_finite() {
                        f64::INFINITY
                    } else {
                        (p - q).abs()
                    }
                })
                .collect();
            // in ULP of the larger side: against an expected zero, the
            // steps of the actual value's magnitude, not of the smallest
            // subnormal (a bf16 0.2 against 0 is 2^131 of those)
            let worst_ulp = abs
                .iter()
                .enumerate()
                .map(|(i, d)| d / ulp_of(e, e.get_f64(i).abs().max(a.get_f64(i).abs())))
                .fold(0.0, f64::max);
            let abs = spread(module, c, reference, allow, abs);
            out.insert(entry.instr(c).name.clone(), LocalError { abs, worst_ulp });
        }
    }
    out
}

/// A unit's measured errors spread over all its elements: which element
/// errs, and by how much, depends on the operands (a sum's rounding), and
/// the backend's own operands are not the reference's. So the unit is taken
/// to use the same fraction of its declared own error (its first-order
/// radius on exact operands) everywhere: `max(abs_i, s * own_i)` with `s`
/// the largest measured fraction.
fn spread(
    module: &Module,
    c: InstrId,
    reference: &[Option<Value>],
    allow: &crate::reference::Allowances,
    abs: Vec<f64>,
) -> Vec<f64> {
    if abs.iter().all(|&a| a == 0.0) {
        return abs;
    }
    let x = crate::hlo::rewrite::extract_instruction(module, c);
    let own = operand_args(reference, &x.operands)
        .and_then(|args| FirstOrder::of(&x.module, &args, allow).ok())
        .and_then(|f| f.radii.into_iter().next())
        .filter(|o| o.len() == abs.len());
    let Some(own) = own else {
        return abs;
    };
    let s = abs
        .iter()
        .zip(&own)
        .filter(|(_, &o)| o > 0.0 && o.is_finite())
        .map(|(&a, &o)| a / o)
        .fold(0.0, f64::max);
    abs.iter()
        .zip(&own)
        .map(|(&a, &o)| if o.is_finite() { a.max(s * o) } else { a })
        .collect()
}

/// The certificate for a module whose output disagrees although no unit
/// does: `expected` and `actual` are the whole module's outputs on `args`,
/// `reference` every entry instruction's reference value, `judged` the
/// judge's verdict on them (only the elements it rejects are the
/// certificate's to explain; None: every element that differs). None when
/// the first-order bound cannot be evaluated.
pub fn certify(
    module: &Module,
    args: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    judged: Option<&crate::check::Verdict>,
) -> Option<Certificate> {
    if let Some(own) =
        super::own_run::every_unit_legal_in_own_run(module, args, actual, reference, tested, &[])
    {
        return Some(Certificate::Amplified(own_run_explanation(
            own, expected, actual,
        )));
    }
    let numerics = tested.numerics();
    let allow = numerics.allowances(false);
    let measured = measure_local(module, reference, tested, &allow);
    // the measured error, element by element, on top of the rounding the
    // carried interval already holds (at the backend's own, perturbed
    // operands an element may round the other way)
    let local =
        |name: &str, _: &Literal| -> Option<Vec<f64>> { measured.get(name).map(|m| m.abs.clone()) };
    let fo = FirstOrder::with_local(module, args, &allow, &local).ok()?;
    if std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE").is_some() {
        debug_first_gap(module, args, reference, tested, &allow, &local);
    }
    // what the judge's bound already legalized stays legal
    let declared = FirstOrder::of(module, args, &allow).ok();
    let (worst_unit, worst_ulp) = measured
        .iter()
        .max_by(|a, b| a.1.worst_ulp.total_cmp(&b.1.worst_ulp))
        .map(|(n, m)| (n.clone(), m.worst_ulp))
        .unwrap_or_default();
    let mut e = Explanation {
        units: candidates(module).len(),
        worst_local_ulp: worst_ulp,
        worst_local_unit: worst_unit,
        beyond: 0,
        output: 0,
        element: 0,
        observed: 0.0,
        predicted: 0.0,
        basis: Basis::Carried,
        hidden_values: 0,
        grown_units: 0,
        stepped_loops: 0,
        stepped_iterations: 0,
    };
    let mut worst_ratio = -1.0f64;
    for (k, ((x, y), r)) in expected.iter().zip(actual).zip(&fo.radii).enumerate() {
        let spec = default_error_spec_for_module(module, x.dtype());
        let n = x.element_count().min(y.element_count());
        for (i, &ri) in r.iter().enumerate().take(n) {
            let (p, q) = (x.get_f64(i), y.get_f64(i));
            if x.get_bits(i) == y.get_bits(i)
                || (p.is_nan() && q.is_nan())
                || judged.is_some_and(|v| !v.rejects(k, i))
            {
                continue;
            }
            let observed = (p - q).abs();
            let declared_radius = declared
                .as_ref()
                .and_then(|d| d.radii.get(k))
                .and_then(|d| d.get(i))
                .copied();
            let explained = within(observed, ri)
                || declared_radius.is_some_and(|d| within(observed, d))
                || spec.accepts(x.get_bits(i), y.get_bits(i), x.dtype());
            let ratio = if ri > 0.0 && ri.is_finite() {
                observed / ri
            } else {
                f64::INFINITY
            };
            if !explained {
                e.beyond += 1;
            }
            let ratio = if ratio.is_nan() { f64::INFINITY } else { ratio };
            if ratio > worst_ratio || (ratio == worst_ratio && observed > e.observed) {
                worst_ratio = ratio;
                (e.output, e.element, e.observed, e.predicted) = (k, i, observed, ri);
            }
        }
    }
    Some(if e.beyond == 0 {
        Certificate::Amplified(e)
    } else {
        Certificate::Composition(e)
    })
}

/// A deviation a radius explains: an unbounded radius explains nothing
/// (it would certify any deviation, a bug's too).
fn within(observed: f64, radius: f64) -> bool {
    radius.is_finite() && observed <= radius
}

/// The known bugs that, with the declared numerics, explain a departing
/// output in the backend's own run: every unit computes there, from the
/// operands it was given, what its numerics allow or what one of
/// `known_bugs` models (a loop one iteration at a time, as [`certify`]
/// judges it). None when some unit is neither, or no known bug is needed.
/// What the judge's phase 4 does with whole-module models, done unit by
/// unit where a model's error is amplified past every bound (a divide
/// rewritten as a multiply by the reciprocal, inside a function that a
/// recurrence then evaluates).
pub fn known_bugs_in_own_run(
    module: &Module,
    args: &[Literal],
    actual: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    known_bugs: &[crate::check::KnownBug],
) -> Option<Vec<crate::check::KnownBugNote>> {
    if known_bugs.is_empty() {
        return None;
    }
    let own = super::own_run::every_unit_legal_in_own_run(
        module, args, actual, reference, tested, known_bugs,
    );
    if std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE").is_some() {
        eprintln!("certificate debug: the own run with known bugs: {own:?}");
    }
    let own = own?;
    (!own.known_bugs.is_empty()).then_some(own.known_bugs)
}

/// The explanation of an own-run certificate: the largest output deviation.
fn own_run_explanation(
    own: super::own_run::OwnRun,
    expected: &[Literal],
    actual: &[Literal],
) -> Explanation {
    let mut e = Explanation {
        units: own.units,
        worst_local_ulp: own.worst_ulp,
        worst_local_unit: own.worst_unit,
        beyond: 0,
        output: 0,
        element: 0,
        observed: 0.0,
        predicted: 0.0,
        basis: Basis::OwnRun,
        hidden_values: own.hidden,
        grown_units: own.grown,
        stepped_loops: own.stepped_loops,
        stepped_iterations: own.stepped,
    };
    for (k, (x, y)) in expected.iter().zip(actual).enumerate() {
        for i in 0..x.element_count().min(y.element_count()) {
            let d = (x.get_f64(i) - y.get_f64(i)).abs();
            if d > e.observed {
                (e.output, e.element, e.observed) = (k, i, d);
            }
        }
    }
    e
}

/// The smallest subgraph around output `output`'s root that departs when
/// compiled whole: the ancestors of the root within a growing depth
/// (doubling, then bisecting), each run on the reference's values of its
/// inputs and judged. Returns the region and its arguments, or None when
/// even the whole graph's region does not depart alone.
pub fn grow_departing_region(
    module: &Module,
    output: usize,
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    numerics: &Numerics,
) -> Option<(Extracted, Vec<Literal>)> {
    let entry = module.entry_computation();
    let root_ins = entry.instr(entry.root);
    let start = if root_ins.opcode == Opcode::Tuple {
        *root_ins.operands.get(output)?
    } else {
        entry.root
    };
    let departs = |depth: usize| -> Option<Option<(Extracted, Vec<Literal>)>> {
        let ids = ancestors_within(module, start, depth);
        let x = extract_region(module, &ids, start);
        let args = operand_args(reference, &x.operands)?;
        let expected = reference.get(start.index())?.as_ref()?.flatten();
        let verdict = match tested.run(&x.module, &args) {
            Ok(actual) => judge_outputs(&x.module, &args, &expected, &actual, numerics),
            Err(_) => return Some(None),
        };
        Some(verdict.is_disagreement().then_some((x, args)))
    };
    let total = entry.instructions.len();
    let (mut lo, mut hi) = (0usize, 1usize);
    let found = loop {
        match departs(hi)? {
            Some(f) => break f,
            None if hi >= total => return None,
            None => {
                lo = hi;
                hi = (hi * 2).min(total);
            }
        }
    };
    // the smallest depth in (lo, hi] that still departs
    let mut best = found;
    let mut top = hi;
    while top - lo > 1 {
        let mid = (lo + top) / 2;
        match departs(mid)? {
            Some(f) => {
                best = f;
                top = mid;
            }
            None => lo = mid,
        }
    }
    Some(best)
}

/// The entry instructions within `depth` operand steps of `root`, in
/// topological order (parameters excluded: they stay inputs).
fn ancestors_within(module: &Module, root: InstrId, depth: usize) -> Vec<InstrId> {
    let entry = module.entry_computation();
    let mut dist: HashMap<InstrId, usize> = HashMap::from([(root, 0)]);
    let mut frontier = vec![root];
    for d in 1..=depth {
        let mut next = Vec::new();
        for id in frontier {
            for &o in &entry.instr(id).operands {
                if entry.instr(o).opcode != Opcode::Parameter && !dist.contains_key(&o) {
                    dist.insert(o, d);
                    next.push(o);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    entry
        .post_order()
        .unwrap_or_default()
        .into_iter()
        .filter(|i| dist.contains_key(i))
        .collect()
}

/// Why a module's output departs from every bound: a unit that disagrees on
/// the reference's own operand values (the first, in topological order),
/// or the certificate of the units' agreement checked against the whole.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Departure {
    /// A unit disagrees: the first culprit.
    Unit(super::deep::LocalDisagreement),
    /// Every unit agrees.
    Certified(Certificate),
}

/// Explains a disagreeing output (see [`Departure`]; `judged`: the judge's
/// verdict on it, see [`certify`]); None when the reference cannot evaluate
/// every instruction or the bound cannot be carried.
pub fn explain_departure(
    module: &Module,
    args: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
    tested: &Tested<'_>,
    judged: Option<&crate::check::Verdict>,
) -> Option<Departure> {
    let reference = super::sides::Oracle::Exact.all_values(module, args).ok()?;
    explain_departure_on(module, args, expected, actual, &reference, tested, judged)
}

/// [`explain_departure`] on `reference`, every entry instruction's exact
/// value (`Oracle::Exact.all_values`), for a caller that reads them too.
pub fn explain_departure_on(
    module: &Module,
    args: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    judged: Option<&crate::check::Verdict>,
) -> Option<Departure> {
    let oracle = super::sides::Oracle::Exact;
    let deep = super::deep::deep_check(module, reference, &oracle, tested, &mut |_| {});
    if let Some(first) = deep.local_disagreements.into_iter().next() {
        return Some(Departure::Unit(first));
    }
    certify(module, args, expected, actual, reference, tested, judged).map(Departure::Certified)
}

/// Diagnostic (`XLA_PROPS_DEBUG_CERTIFICATE`): runs the module with every
/// float entry value exposed and prints, in program order, the entry
/// instructions whose tested value leaves the certificate's radius.
fn debug_first_gap(
    module: &Module,
    args: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    allow: &crate::reference::Allowances,
    local: &dyn Fn(&str, &Literal) -> Option<Vec<f64>>,
) {
    let entry = module.entry_computation();
    let ids: Vec<InstrId> = entry
        .post_order()
        .unwrap_or_default()
        .into_iter()
        .filter(|&i| {
            entry
                .instr(i)
                .shape
                .as_array()
                .is_some_and(|a| a.dtype.is_float())
        })
        .collect();
    let exposed = crate::hlo::rewrite::expose_values(module, &ids);
    let (Ok(actual), Ok(fo)) = (
        tested.run(&exposed, args),
        FirstOrder::with_local(&exposed, args, allow, local),
    ) else {
        eprintln!("certificate debug: cannot run the exposed module");
        return;
    };
    let mut shown = 0;
    for (k, &id) in ids.iter().enumerate() {
        let (Some(Some(Value::Array(e))), Some(a), Some(r)) =
            (reference.get(id.index()), actual.get(k), fo.radii.get(k))
        else {
            continue;
        };
        let n = e.element_count().min(a.element_count()).min(r.len());
        let bad: Vec<usize> = (0..n)
            .filter(|&i| {
                let (p, q) = (e.get_f64(i), a.get_f64(i));
                e.get_bits(i) != a.get_bits(i)
                    && !(p.is_nan() && q.is_nan())
                    && (p - q).abs() > r[i]
            })
            .collect();
        if let Some(&i) = bad.first() {
            let ins = entry.instr(id);
            for o in &ins.operands {
                let Some(j) = ids.iter().position(|x| x == o) else {
                    eprintln!("  operand {} not a float value", entry.instr(*o).name);
                    continue;
                };
                let (Some(Some(Value::Array(oe))), Some(oa), Some(or)) =
                    (reference.get(o.index()), actual.get(j), fo.radii.get(j))
                else {
                    continue;
                };
                let dev = (0..oe.element_count().min(oa.element_count()))
                    .map(|x| (oe.get_f64(x) - oa.get_f64(x)).abs())
                    .fold(0.0, f64::max);
                let rad = or.iter().copied().fold(0.0, f64::max);
                eprintln!(
                    "  operand {}: max deviation {dev:e}, max radius {rad:e}",
                    entry.instr(*o).name
                );
            }
            eprintln!(
                "certificate gap: {} ({}) {} of {n} elements, first [{i}]: reference {} tested {} radius {:e}; operands {:?}",
                ins.name,
                ins.opcode,
                bad.len(),
                e.get_f64(i),
                a.get_f64(i),
                r[i],
                ins.operands.iter().map(|o| entry.instr(*o).name.clone()).collect::<Vec<_>>()
            );
            shown += 1;
            if shown >= 8 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unbounded_radius_explains_no_deviation() {
        assert!(super::within(1e-7, 2e-7));
        assert!(!super::within(3e-7, 2e-7));
        assert!(!super::within(1e-7, f64::INFINITY));
        assert!(!super::within(1e-7, f64::NAN));
    }
}
