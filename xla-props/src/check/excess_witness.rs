//! Witness runs of excess precision: the module computed in f32 (as
//! `whole_module_excess_precision_variant` does) with each narrow float
//! result either rounded to its declared type, as written, or kept in f32,
//! as a compiler that may keep narrow values in excess precision
//! (`excess_precision_anywhere`) may do at any instruction it likes. Every
//! run is a run the declared numerics allow, so the values it gives are
//! legal; the hull of them is reached, never claimed.
//!
//! Which instructions keep the excess: one probe run per rounding narrow
//! instruction (kept in f32 while every other rounds) reads the sign of its
//! effect on every output element; a run aimed at one output element in
//! one direction keeps in f32 exactly the instructions whose probe moved
//! that element that way. That is a first-order guess (the effects are not
//! additive where roundings interact), so an aimed run can fall short of
//! the extreme a legal run reaches, never past what one reaches.

use super::excess::whole_module_excess_precision_variant;
use super::excess_adjoint::{inlined, Sensitivity};
use crate::hlo::{ElementType, Instruction, Module, Opcode, Shape};
use crate::literal::{round_to_type, Literal, Value};
use crate::reference::{widen_hull, Bounds, EvalError, Evaluator};
use std::collections::{HashMap, HashSet};

/// One output element to push, and which way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aim {
    /// The output (tuples flattened).
    pub output: usize,
    /// Its flat element.
    pub element: usize,
    /// Up (towards +inf) or down.
    pub up: bool,
    /// The value to reach (the backend's): runs stop refining an aim once
    /// the hull holds it.
    pub target: f64,
}

/// What the runs reached: per output, the hull of the reference's values
/// and every run's.
pub struct ExcessWitness {
    /// Per output (tuples flattened).
    pub bounds: Vec<Bounds>,
    /// Rounding narrow instructions probed one at a time.
    pub probed: usize,
    /// Runs in all.
    pub runs: usize,
}

/// Ops that do not round: their result is one of their operands' values,
/// or a constant, or made of its operands' parts.
fn rounds(op: Opcode) -> bool {
    !(op.moves_data()
        || matches!(
            op,
            Opcode::Parameter
                | Opcode::Constant
                | Opcode::Iota
                | Opcode::GetTupleElement
                | Opcode::Tuple
                | Opcode::Fusion
                | Opcode::Call
                | Opcode::While
                | Opcode::Conditional
                | Opcode::Copy
                | Opcode::Bitcast
                | Opcode::Select
                | Opcode::Negate
                | Opcode::Abs
                | Opcode::Maximum
                | Opcode::Minimum
                | Opcode::Clamp
                | Opcode::Sort
                | Opcode::Compare
        ))
}

/// The declared narrow type of `ins`'s array result, if it rounds.
fn narrow_rounding(ins: &Instruction) -> Option<ElementType> {
    match &ins.shape {
        Shape::Array(a) if a.dtype.is_float() && a.dtype.bit_width() < 32 && rounds(ins.opcode) => {
            Some(a.dtype)
        }
        _ => None,
    }
}

/// A run's work past which no excess witness is tried: elements rounded
/// (or kept) per run, times the runs.
const MAX_WORK: u64 = 600_000_000;

/// At most this many probe runs; instructions past them follow the
/// all-f32 run's direction.
const MAX_PROBES: usize = 2048;

/// At most this many aimed runs: aims that want the same instructions kept
/// share one, and past this many, neighbouring aims of one output and
/// direction share one by majority.
const MAX_AIMED: usize = 512;

/// The widened module, and per instruction address its probe index and
/// declared narrow type.
struct Widened {
    module: Module,
    narrow: HashMap<usize, (usize, ElementType)>,
    count: usize,
    /// Per probe index, the elements of the instruction's result.
    sizes: Vec<usize>,
}

impl Widened {
    fn of(module: &Module) -> Option<Widened> {
        // a run here is one device's; a multi-device program has none
        if !matches!(
            crate::reference::spmd::DeviceProgram::multi(module),
            Ok(None)
        ) {
            return None;
        }
        // calls and fusions inlined: every value is an entry value, which
        // the reverse pass reads
        let flat = inlined(module);
        let module = flat.as_ref().unwrap_or(module);
        let wide = whole_module_excess_precision_variant(module)?;
        // reducers, comparators and combiners stay in f32: the instruction
        // that applies them rounds (or keeps) its result
        let applied: HashSet<usize> = module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .filter(|i| i.opcode != Opcode::Call)
            .flat_map(|i| [i.attrs.to_apply, i.attrs.scatter, i.attrs.select])
            .flatten()
            .map(|c| c.index())
            .collect();
        let mut narrow = HashMap::new();
        let mut sizes = Vec::new();
        let mut count = 0;
        for (c, comp) in module.computations.iter().enumerate() {
            if applied.contains(&c) {
                continue;
            }
            for (k, ins) in comp.instructions.iter().enumerate() {
                let Some(t) = narrow_rounding(ins) else {
                    continue;
                };
                let Some(w) = wide.computations.get(c).and_then(|w| w.instructions.get(k)) else {
                    continue;
                };
                narrow.insert(w as *const Instruction as usize, (count, t));
                sizes.push(match &ins.shape {
                    Shape::Array(a) => a.element_count().map_or(0, |n| n as usize),
                    _ => 0,
                });
                count += 1;
            }
        }
        Some(Widened {
            module: wide,
            narrow,
            count,
            sizes,
        })
    }

    /// One run: element `e` of the `n` of instruction `i` (probe index)
    /// keeps its f32 value where `keep(i, e, n)`, else it is rounded to its
    /// declared type; with the elements it rounded or kept.
    fn run(
        &self,
        args: &[Literal],
        keep: &dyn Fn(usize, usize, usize) -> bool,
    ) -> Result<(Vec<Literal>, u64), EvalError> {
        let (values, _, work) = self.run_all(args, keep, false)?;
        Ok((self.outputs(&values), work))
    }

    /// A run's outputs (tuples flattened) from its entry values.
    fn outputs(&self, values: &[Option<Value>]) -> Vec<Literal> {
        let root = self.module.entry_computation().root.index();
        values
            .get(root)
            .and_then(Option::as_ref)
            .map(Value::flatten)
            .unwrap_or_default()
    }

    /// A run's every entry value, and (where `deltas`) per entry rounding
    /// instruction (probe index) each element's `x - round(x)`.
    #[allow(clippy::type_complexity)]
    fn run_all(
        &self,
        args: &[Literal],
        keep: &dyn Fn(usize, usize, usize) -> bool,
        deltas: bool,
    ) -> Result<(Vec<Option<Value>>, HashMap<usize, Vec<f64>>, u64), EvalError> {
        let mut work = 0u64;
        let mut moves: HashMap<usize, Vec<f64>> = HashMap::new();
        let entry = self.module.entry;
        let mut hook = |c: crate::hlo::CompId, ins: &Instruction, _: &[&Value], v: &mut Value| {
            let Some(&(i, t)) = self.narrow.get(&(ins as *const Instruction as usize)) else {
                return;
            };
            let Value::Array(l) = v else { return };
            let n = l.element_count();
            work += n as u64;
            let mut d = (deltas && c == entry).then(|| Vec::with_capacity(n));
            for e in 0..n {
                let kept = keep(i, e, n);
                let x = l.get_f64(e);
                let y = round_to_type(x, t);
                // a value its type cannot hold (overflow, or NaN in a
                // finite-only f8) is not kept past it: the first-order
                // bound gives no excess there
                let fixed = x.is_finite() && !y.is_finite();
                if let Some(d) = d.as_mut() {
                    d.push(if fixed { 0.0 } else { x - y });
                }
                if !kept || fixed {
                    l.set_f64(e, y);
                }
            }
            if let Some(d) = d {
                moves.insert(i, d);
            }
        };
        let values = Evaluator::new()
            .on_result(&mut hook)
            .evaluate_all(&self.module, args)?;
        Ok((values, moves, work))
    }
}

/// The element an aim names in `out`, NaN where there is none.
fn at(out: &[Literal], a: &Aim) -> f64 {
    out.get(a.output)
        .filter(|l| a.element < l.element_count())
        .map_or(f64::NAN, |l| l.get_f64(a.element))
}

/// The change from `base` to `out` at each aim (0 where either is not
/// finite).
fn changes(base: &[Literal], out: &[Literal], aims: &[Aim]) -> Vec<f32> {
    aims.iter()
        .map(|a| {
            let d = at(out, a) - at(base, a);
            if d.is_finite() {
                d as f32
            } else {
                0.0
            }
        })
        .collect()
}

/// The excess-precision witness of `module` on `args` (the reference's
/// outputs `reference`), aimed at `aims`. `None` when nothing narrow
/// rounds, the module has no f32 variant, or the runs would cost more than
/// the work limit.
pub fn excess_witness_bounds(
    module: &Module,
    args: &[Literal],
    reference: &[Literal],
    aims: &[Aim],
) -> Result<Option<ExcessWitness>, EvalError> {
    let started = std::time::Instant::now();
    let Some(w) = Widened::of(module) else {
        return Ok(None);
    };
    // with one choice, keeping it is the whole-module variant, which the
    // judge has tried already
    if w.count < 2 || aims.is_empty() {
        return Ok(None);
    }
    let (base, work) = w.run(args, &|_, _, _| false)?;
    let probed = w.count.min(MAX_PROBES);
    let runs_needed = probed as u64 + 1 + aims.len().min(MAX_AIMED) as u64;
    if work.saturating_mul(runs_needed) > MAX_WORK {
        return Ok(None);
    }
    let mut hull = Hull::new(reference, &base);
    let (all, _) = w.run(args, &|_, _, _| true)?;
    hull.add(&all);
    let whole = changes(&base, &all, aims);
    // per probe, its effect on each aim's element
    let mut effect: Vec<Vec<f32>> = Vec::with_capacity(probed);
    for p in 0..probed {
        let (out, _) = w.run(args, &|i, _, _| i == p)?;
        hull.add(&out);
        effect.push(changes(&base, &out, aims));
    }
    let towards = |j: usize, i: usize| -> f32 {
        let e = effect.get(i).map_or(whole[j], |e| e[j]);
        if aims[j].up {
            e
        } else {
            -e
        }
    };
    // per aim, the instructions it wants kept in f32
    let wants: Vec<Vec<bool>> = (0..aims.len())
        .map(|j| (0..w.count).map(|i| towards(j, i) > 0.0).collect())
        .collect();
    for keep in grouped(aims, &wants) {
        let (out, _) = w.run(args, &|i, _, _| keep.get(i).copied().unwrap_or(false))?;
        hull.add(&out);
    }
    let after_aimed = aims.iter().filter(|a| !hull.reaches(a)).count();
    let mut budget = (MAX_WORK / work.max(1)).saturating_sub(hull.runs as u64);
    // the aims still short: runs chosen element by element from each
    // one's reverse pass, from its wish
    if after_aimed > 0 {
        by_adjoints(&w, args, aims, &mut hull, &mut budget)?;
    }
    let after_adjoint = aims.iter().filter(|a| !hull.reaches(a)).count();
    // then passes of single flips from their wish
    let mut best: Vec<Option<Refine>> = (0..aims.len()).map(|_| None).collect();
    let short: Vec<usize> = (0..aims.len())
        .filter(|&j| !hull.reaches(&aims[j]))
        .take(MAX_REFINED)
        .collect();
    for j in short {
        let a = &aims[j];
        if hull.reaches(a) || budget == 0 {
            continue;
        }
        let effects: Vec<f32> = (0..probed).map(|i| towards(j, i).abs()).collect();
        // from its wish, then from every value kept, then from none; the
        // furthest choice found is kept for the element passes
        for start in [wants[j].clone(), vec![true; w.count], vec![false; w.count]] {
            if hull.reaches(a) || budget == 0 {
                break;
            }
            let mut r = Refine::new(&w, args, a, start, &effects)?;
            r.instructions(&mut hull, &mut budget)?;
            if best[j].as_ref().is_none_or(|b| further(a, r.best, b.best)) {
                best[j] = Some(r);
            }
        }
    }
    // then blocks of elements, for the aims still short
    for (a, r) in aims.iter().zip(best) {
        if let Some(mut r) = r {
            if !hull.reaches(a) && budget > 0 {
                r.elements(&mut hull, &mut budget)?;
            }
        }
    }
    if crate::reference::debug_enabled() {
        let short = aims.iter().filter(|a| !hull.reaches(a)).count();
        for a in aims.iter().filter(|a| !hull.reaches(a)).take(8) {
            let b = &hull.bounds[a.output];
            eprintln!(
                "  not reached: output {} [{}] reference {} target {} hull [{}, {}]",
                a.output,
                a.element,
                at(reference, a),
                a.target,
                b.lo.get_f64(a.element),
                b.hi.get_f64(a.element)
            );
        }
        eprintln!(
            "excess witness: {} narrow, {probed} probed, {} aims ({after_aimed} not reached by the aimed runs, {after_adjoint} by the reverse passes, {short} in the end), {} runs, work {work} per run, budget left {budget}, {:?}",
            w.count,
            aims.len(),
            hull.runs,
            started.elapsed()
        );
    }
    Ok(Some(ExcessWitness {
        probed,
        runs: hull.runs,
        bounds: hull.bounds,
    }))
}

/// A reverse-pass step's cost in runs: the pass (about two runs' work: a
/// contraction's two operand adjoints), and its run.
const ADJOINT_COST: u64 = 3;

/// At most this many reverse-pass steps per aim.
const ADJOINT_STEPS: usize = 3;

/// The aims still short, each pushed by reverse passes from the run with
/// every value rounded, in order, while the budget lasts.
fn by_adjoints(
    w: &Widened,
    args: &[Literal],
    aims: &[Aim],
    hull: &mut Hull,
    budget: &mut u64,
) -> Result<(), EvalError> {
    let Some(mut s) = Sensitivity::new(&w.module) else {
        return Ok(());
    };
    let (values, deltas, _) = w.run_all(args, &|_, _, _| false, true)?;
    let from = (values, deltas);
    for a in aims {
        if *budget < ADJOINT_COST {
            break;
        }
        if !hull.reaches(a) {
            by_adjoint(w, args, a, &from, &mut s, hull, budget)?;
        }
    }
    Ok(())
}

/// A run's entry values, and its rounding instructions' moves.
type Taped = (Vec<Option<Value>>, HashMap<usize, Vec<f64>>);

/// One aim pushed by reverse passes: from the run `from` (every value
/// rounded), each step takes the aim's element's sensitivity to every
/// value of the last run, keeps in f32 exactly the elements whose excess
/// moves the aim its way, and runs that; until the hull holds the target, a
/// step gains nothing, or the budget is spent.
fn by_adjoint(
    w: &Widened,
    args: &[Literal],
    a: &Aim,
    from: &Taped,
    s: &mut Sensitivity<'_>,
    hull: &mut Hull,
    budget: &mut u64,
) -> Result<(), EvalError> {
    let entry = w.module.entry_computation();
    let mut best = at(&w.outputs(&from.0), a);
    let mut choice = Choice::of(Vec::new());
    let mut last: Option<Taped> = None;
    let sign = if a.up { 1.0 } else { -1.0 };
    for _ in 0..ADJOINT_STEPS {
        if hull.reaches(a) || *budget < ADJOINT_COST {
            break;
        }
        *budget -= ADJOINT_COST;
        let (values, deltas) = last.as_ref().unwrap_or(from);
        let adj = s.backward(values, a.output, a.element);
        let mut next = Choice::of(Vec::new());
        for (k, g) in adj.iter().enumerate() {
            let (Some(g), Some(ins)) = (g, entry.instructions.get(k)) else {
                continue;
            };
            let Some(&(i, _)) = w.narrow.get(&(ins as *const Instruction as usize)) else {
                continue;
            };
            let Some(d) = deltas.get(&i) else { continue };
            let n = d.len();
            let mask = (0..n)
                .map(|e| {
                    let gain = sign * g.get(e).copied().unwrap_or(0.0) * d[e];
                    if gain == 0.0 {
                        choice.kept(i, e, n)
                    } else {
                        gain > 0.0
                    }
                })
                .collect();
            next.elements.insert(i, mask);
        }
        let (values, deltas, _) = w.run_all(args, &|i, e, n| next.kept(i, e, n), true)?;
        let out = w.outputs(&values);
        hull.add(&out);
        let v = at(&out, a);
        if crate::reference::debug_enabled() {
            let sites = adj
                .iter()
                .filter(|g| g.as_ref().is_some_and(|g| g.iter().any(|&x| x != 0.0)))
                .count();
            eprintln!("  reverse pass: output {} [{}] from {best} to {v}, target {}, {} masks, {sites} values with a sensitivity", a.output, a.element, a.target, next.elements.len());
        }
        if !further(a, v, best) {
            break;
        }
        best = v;
        choice = next;
        last = Some((values, deltas));
    }
    Ok(())
}

/// At most this many of the aims the aimed runs leave short get flips of
/// their own (the first, in the order given).
const MAX_REFINED: usize = 64;

/// At most this many passes of single flips per aim.
const PASSES: usize = 4;

/// Per-element choices: after the instruction passes, the instructions of
/// largest effect get their elements flipped a block at a time (a backend
/// may keep some elements of a result and round others: a vector loop and
/// its scalar remainder), so many instructions, in so many blocks.
const BLOCK_PASSES: [(usize, usize); 2] = [(8, 16), (2, 128)];

/// One run's choices: per instruction kept or rounded, and per instruction
/// the blocks of its elements that do the opposite.
struct Choice {
    keep: Vec<bool>,
    flipped: HashMap<usize, (usize, Vec<bool>)>,
    /// Per instruction, each element's own choice (the reverse pass's).
    elements: HashMap<usize, Vec<bool>>,
}

impl Choice {
    fn of(keep: Vec<bool>) -> Choice {
        Choice {
            keep,
            flipped: HashMap::new(),
            elements: HashMap::new(),
        }
    }

    fn kept(&self, i: usize, e: usize, n: usize) -> bool {
        if let Some(&k) = self.elements.get(&i).and_then(|m| m.get(e)) {
            return k;
        }
        let k = self.keep.get(i).copied().unwrap_or(false);
        match self.flipped.get(&i) {
            Some((blocks, f)) if n > 0 => k != f[e * blocks / n],
            _ => k,
        }
    }

    fn run(&self, w: &Widened, args: &[Literal]) -> Result<Vec<Literal>, EvalError> {
        w.run(args, &|i, e, n| self.kept(i, e, n)).map(|(o, _)| o)
    }
}

/// Whether `v` is further than `best` in the aim's direction.
fn further(a: &Aim, v: f64, best: f64) -> bool {
    v.is_finite() && (!best.is_finite() || (v > best) == a.up && v != best)
}

/// One aim pushed further from a run's choices, flip by flip: a flip is
/// kept where it moves the aim's element its way, until the hull holds the
/// aim's target, a pass gains nothing, or the budget of runs is spent.
/// Every run is legal, so each goes into the hull.
struct Refine<'w> {
    w: &'w Widened,
    args: &'w [Literal],
    aim: Aim,
    choice: Choice,
    /// The aim's element in the choice's run.
    best: f64,
    /// Probe indices, largest effect on the aim first.
    by_effect: Vec<usize>,
}

impl<'w> Refine<'w> {
    fn new(
        w: &'w Widened,
        args: &'w [Literal],
        aim: &Aim,
        keep: Vec<bool>,
        effects: &[f32],
    ) -> Result<Self, EvalError> {
        let choice = Choice::of(keep);
        let best = at(&choice.run(w, args)?, aim);
        let mut by_effect: Vec<usize> = (0..effects.len()).collect();
        by_effect.sort_by(|&p, &q| effects[q].total_cmp(&effects[p]));
        Ok(Refine {
            w,
            args,
            aim: *aim,
            choice,
            best,
            by_effect,
        })
    }

    /// One flip tried: kept where it gains; `None` when the aim is reached
    /// or the budget spent.
    fn try_flip(
        &mut self,
        flip: &dyn Fn(&mut Choice),
        hull: &mut Hull,
        budget: &mut u64,
    ) -> Result<Option<bool>, EvalError> {
        if hull.reaches(&self.aim) || *budget == 0 {
            return Ok(None);
        }
        *budget -= 1;
        flip(&mut self.choice);
        let out = self.choice.run(self.w, self.args)?;
        hull.add(&out);
        let v = at(&out, &self.aim);
        if further(&self.aim, v, self.best) {
            self.best = v;
            Ok(Some(true))
        } else {
            flip(&mut self.choice);
            Ok(Some(false))
        }
    }

    /// Passes over the instructions, each flipped whole (every other pass
    /// the probes of largest effect first).
    fn instructions(&mut self, hull: &mut Hull, budget: &mut u64) -> Result<(), EvalError> {
        for pass in 0..PASSES {
            let order: Vec<usize> = if pass % 2 == 0 {
                (0..self.by_effect.len()).collect()
            } else {
                self.by_effect.clone()
            };
            let mut gained = false;
            for i in order {
                match self.try_flip(&|c: &mut Choice| c.keep[i] = !c.keep[i], hull, budget)? {
                    None => return Ok(()),
                    Some(g) => gained |= g,
                }
            }
            if !gained {
                break;
            }
        }
        Ok(())
    }

    /// Blocks of the elements of the instructions of largest effect,
    /// flipped the same way, coarse blocks first.
    fn elements(&mut self, hull: &mut Hull, budget: &mut u64) -> Result<(), EvalError> {
        for (top, blocks) in BLOCK_PASSES {
            for i in self.by_effect.clone().into_iter().take(top) {
                // no finer blocks than elements; one element is the whole
                let blocks = blocks.min(self.w.sizes.get(i).copied().unwrap_or(0));
                if blocks < 2 {
                    continue;
                }
                // a coarser mask kept so far, refined (its blocks nest)
                let mask = match self.choice.flipped.get(&i) {
                    Some((coarse, f)) => (0..blocks).map(|b| f[b * coarse / blocks]).collect(),
                    None => vec![false; blocks],
                };
                self.choice.flipped.insert(i, (blocks, mask));
                for b in 0..blocks {
                    let flip = |c: &mut Choice| {
                        if let Some((_, f)) = c.flipped.get_mut(&i) {
                            f[b] = !f[b];
                        }
                    };
                    if self.try_flip(&flip, hull, budget)?.is_none() {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The hull of the reference's outputs and of the runs so far.
struct Hull {
    bounds: Vec<Bounds>,
    runs: usize,
}

impl Hull {
    fn new(reference: &[Literal], base: &[Literal]) -> Hull {
        let mut h = Hull {
            bounds: reference.iter().map(Bounds::point).collect(),
            runs: 0,
        };
        h.add(base);
        h
    }

    fn add(&mut self, run: &[Literal]) {
        widen_hull(&mut self.bounds, run);
        self.runs += 1;
    }

    /// Whether the hull holds the aim's target.
    fn reaches(&self, a: &Aim) -> bool {
        self.bounds.get(a.output).is_some_and(|b| {
            a.element < b.lo.element_count()
                && b.lo.get_f64(a.element) <= a.target
                && a.target <= b.hi.get_f64(a.element)
        })
    }
}

/// The aimed runs' choices: one per distinct wish; past `MAX_AIMED`,
/// consecutive aims (by output, direction and element) share one, each
/// instruction kept where most of them want it kept.
fn grouped(aims: &[Aim], wants: &[Vec<bool>]) -> Vec<Vec<bool>> {
    let mut order: Vec<usize> = (0..aims.len()).collect();
    order.sort_by_key(|&j| (aims[j].output, aims[j].up, aims[j].element));
    let mut distinct: Vec<Vec<bool>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for j in order {
        if seen.insert(wants[j].clone()) {
            distinct.push(wants[j].clone());
        }
    }
    if distinct.len() <= MAX_AIMED {
        return distinct;
    }
    let per = distinct.len().div_ceil(MAX_AIMED);
    distinct
        .chunks(per)
        .map(|chunk| {
            (0..chunk[0].len())
                .map(|i| 2 * chunk.iter().filter(|c| c[i]).count() > chunk.len())
                .collect()
        })
        .collect()
}
