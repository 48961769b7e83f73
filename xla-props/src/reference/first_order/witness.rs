//! Witness runs: the reference run again with every instruction's result
//! moved within the error its declared numerics give it, each move in the
//! direction that pushes the outputs away from the reference's.
//!
//! A move is at most what the backend's declared numerics give the
//! instruction on the operands the run gave it: an approximate function's
//! budget in whole steps of its type (and the reference's own libm ulp on
//! f64), a sum's `gamma_n sum |x|` for any order and its rounding (as the
//! first-order rules count it), and, where multiply-adds may be contracted,
//! an f64 add or subtract of a product computed as one `fma`. A correctly
//! rounded op does not move: its result is the only legal one. So every
//! witness run is a run of the program in which each instruction is legal
//! on its own operands: its outputs are values a backend within its
//! declared numerics can produce, and the hull of them and the reference's
//! output is what a propagated bound that lost no cancellation would hold.
//! The first-order bound carries `|W2| |W1| r` through two layers where
//! the error moves by `|W2 W1| r`, and it treats the correlated errors of a
//! continued fraction's numerator and denominator as independent; a
//! witness keeps every cancellation the program has. It can only fall
//! short of the legal set, never claim a value that a bound of the same
//! numerics would not (`tests/witness.rs` checks it on random programs).
//!
//! The directions: one probe run per movable instruction (its result moved
//! up wherever it runs), the outputs' change read as the sign of each
//! element's sensitivity. That is exact where each output element depends
//! on its own lane (an elementwise program: JAX's special functions, their
//! series and recurrences in `while` loops); elsewhere it is a heuristic,
//! and a poor direction only makes the witness weaker, never unsound.

use super::eval::{aux_module, Radii};
use super::rules::{may_round, sums, transcendental};
use crate::hlo::{ArrayShape, CompId, ElementType, Instruction, Module, Opcode};
use crate::literal::{round_to_type, Literal, Value};
use crate::reference::interval::{Allowances, Bounds};
use crate::reference::{EvalError, Evaluator, Run};
use std::collections::{HashMap, HashSet};

/// The work (elements computed by movable instructions, summed over the
/// probe runs) the probes may take; past it the remaining instructions keep
/// the direction of the all-up run.
const PROBE_WORK: u64 = 60_000_000;

/// A program whose movable instructions compute more elements than this in
/// one run gets no witness: its probes would cost minutes (a whole model's
/// train step; there a reverse-mode sensitivity would be needed, not one
/// probe run per instruction).
const MAX_RUN_WORK: u64 = 2_000_000;

/// At most this many probe runs.
const MAX_PROBES: usize = 512;

/// The hull of the reference's outputs and of its witness runs' outputs,
/// per output (tuples flattened): every value inside is between outputs
/// that runs within the declared numerics `allow` produce.
pub fn witness_bounds(
    module: &Module,
    args: &[Literal],
    allow: &Allowances,
) -> Result<Vec<Bounds>, EvalError> {
    let expanded = crate::hlo::expand_known_custom_calls(module);
    let module = expanded.as_ref().unwrap_or(module);
    let multi = crate::reference::spmd::DeviceProgram::multi(module)
        .map_err(|e| EvalError::Invalid {
            instruction: module.name.clone(),
            message: e,
        })?
        .is_some();
    if multi {
        return Err(EvalError::Unsupported {
            opcode: Opcode::Fusion,
            reason: "no witness runs of a multi-device program".into(),
        });
    }
    let w = Witness::new(module, allow);
    // the reference's own run, finding what may move and how costly it is
    let mut scan = Scan::default();
    let base = w.run(args, &mut Moves::Scan(&mut scan))?;
    if scan.work > MAX_RUN_WORK {
        return Err(EvalError::Unsupported {
            opcode: Opcode::Fusion,
            reason: format!(
                "no witness runs: {} elements move per run, more than {MAX_RUN_WORK}",
                scan.work
            ),
        });
    }
    let mut runs: Vec<Vec<Literal>> = Vec::new();
    let up_all = w.run(args, &mut Moves::Uniform(1)).ok();
    let down_all = w.run(args, &mut Moves::Uniform(-1)).ok();
    let probes = scan.probes();
    let mut signs: HashMap<usize, Signs> = HashMap::new();
    for &key in &probes {
        let Ok(out) = w.run(args, &mut Moves::Probe(key)) else {
            continue;
        };
        signs.insert(key, Signs::read(&base, &out, scan.len(key)));
    }
    // instructions not probed: the all-up run's direction, as a whole
    if let Some(up) = &up_all {
        let whole = Signs::read(&base, up, 0);
        for &key in scan.movable.keys() {
            signs.entry(key).or_insert_with(|| whole.clone());
        }
    }
    for dir in [1i8, -1] {
        if let Ok(out) = w.run(args, &mut Moves::Pattern(&signs, dir)) {
            runs.push(out);
        }
    }
    runs.extend(up_all);
    runs.extend(down_all);
    if super::eval::debug_enabled() {
        eprintln!(
            "witness: {} movable, {} probed, work {} per run, {} runs",
            scan.movable.len(),
            probes.len(),
            scan.work,
            runs.len()
        );
    }
    Ok(hull(&base, &runs))
}

/// The instructions that moved in the reference's run, with their result's
/// size, and the work of one run.
#[derive(Default)]
struct Scan {
    /// Per movable instruction (by address): its result's elements.
    movable: HashMap<usize, usize>,
    /// In the order first seen.
    order: Vec<usize>,
    /// Elements computed by movable instructions in one run.
    work: u64,
}

impl Scan {
    fn len(&self, key: usize) -> usize {
        self.movable.get(&key).copied().unwrap_or(0)
    }

    /// The instructions that get a probe run of their own, within the work.
    fn probes(&self) -> Vec<usize> {
        let per_run = self.work.max(1);
        let n = usize::try_from(PROBE_WORK / per_run)
            .unwrap_or(usize::MAX)
            .min(MAX_PROBES);
        self.order.iter().copied().take(n).collect()
    }
}

/// Per element of an instruction's result, the direction that moves the
/// outputs up (+1), down (-1) or not at all (0); one direction for all when
/// the instruction's elements do not match an output's.
#[derive(Clone, Debug)]
enum Signs {
    Each(Vec<i8>),
    All(i8),
}

impl Signs {
    /// The directions a probe's outputs show: per element where an output
    /// has the instruction's size, else the sign of the total change.
    fn read(base: &[Literal], probe: &[Literal], len: usize) -> Signs {
        let change = |b: &Literal, p: &Literal, i: usize| {
            let d = p.get_f64(i) - b.get_f64(i);
            if d.is_finite() {
                d
            } else {
                0.0
            }
        };
        let float = |l: &Literal| l.dtype().is_float();
        if len > 1 {
            if let Some((b, p)) = base
                .iter()
                .zip(probe)
                .find(|(b, p)| float(b) && b.element_count() == len && p.element_count() == len)
            {
                return Signs::Each((0..len).map(|i| sign(change(b, p, i))).collect());
            }
        }
        let total: f64 = base
            .iter()
            .zip(probe)
            .filter(|(b, p)| float(b) && b.element_count() == p.element_count())
            .map(|(b, p)| (0..b.element_count()).map(|i| change(b, p, i)).sum::<f64>())
            .sum();
        Signs::All(sign(total))
    }

    fn at(&self, i: usize) -> i8 {
        match self {
            Signs::Each(v) => v.get(i).copied().unwrap_or(0),
            Signs::All(s) => *s,
        }
    }
}

fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// What a run moves.
enum Moves<'s> {
    /// Nothing: the reference's run, recording what may move.
    Scan(&'s mut Scan),
    /// One instruction, up, wherever it runs.
    Probe(usize),
    /// Every movable instruction, the same way.
    Uniform(i8),
    /// Every instruction by its directions, times the run's direction.
    Pattern(&'s HashMap<usize, Signs>, i8),
}

/// The module, its numerics, and the computations whose instructions stay
/// put (reducers, comparators and scatter combiners: their op is counted by
/// the instruction that applies them).
struct Witness<'a> {
    module: &'a Module,
    allow: &'a Allowances,
    aux: Module,
    applied: HashSet<CompId>,
    fused: HashSet<CompId>,
}

impl<'a> Witness<'a> {
    fn new(module: &'a Module, allow: &'a Allowances) -> Self {
        let mut applied = HashSet::new();
        let mut fused = HashSet::new();
        for ins in module.computations.iter().flat_map(|c| &c.instructions) {
            let a = &ins.attrs;
            applied.extend(a.to_apply.filter(|_| !matches!(ins.opcode, Opcode::Call)));
            applied.extend(a.scatter);
            applied.extend(a.select);
            if ins.opcode == Opcode::Fusion {
                fused.extend(a.calls.iter().copied());
            }
        }
        Witness {
            module,
            allow,
            aux: aux_module(),
            applied,
            fused,
        }
    }

    /// One run with `moves`, its outputs flattened.
    fn run(&self, args: &[Literal], moves: &mut Moves<'_>) -> Result<Vec<Literal>, EvalError> {
        let mut products: HashMap<usize, (Literal, Literal)> = HashMap::new();
        let mut hook = |comp: CompId, ins: &Instruction, ops: &[&Value], v: &mut Value| {
            self.visit(comp, ins, ops, v, moves, &mut products);
        };
        let out = Evaluator::new()
            .on_result(&mut hook)
            .evaluate(self.module, args);
        out
    }

    fn visit(
        &self,
        comp: CompId,
        ins: &Instruction,
        ops: &[&Value],
        v: &mut Value,
        moves: &mut Moves<'_>,
        products: &mut HashMap<usize, (Literal, Literal)>,
    ) {
        if self.applied.contains(&comp) || !may_round(ins.opcode) {
            return;
        }
        let Value::Array(l) = v else { return };
        if !l.dtype().is_float() || l.element_count() == 0 {
            return;
        }
        let key = ins as *const Instruction as usize;
        if ins.opcode == Opcode::Multiply && self.contracts(l.dtype()) {
            if let (Some(Value::Array(a)), Some(Value::Array(b))) = (ops.first(), ops.get(1)) {
                products.insert(key, ((*a).clone(), (*b).clone()));
            }
        }
        let n = l.element_count();
        let signs: Signs = match moves {
            Moves::Scan(scan) => {
                let own = self.own(comp, ins, ops, l);
                let fused = self.contracted(comp, ins, ops, l, products);
                let moves = own.iter().any(|&x| x > 0.0)
                    || fused.iter().any(|f| (0..n).any(|i| f[i] != l.get_f64(i)));
                if moves {
                    if scan.movable.insert(key, n).is_none() {
                        scan.order.push(key);
                    }
                    scan.work += n as u64;
                }
                return;
            }
            Moves::Probe(k) if *k == key => Signs::All(1),
            Moves::Probe(_) => return,
            Moves::Uniform(s) => Signs::All(*s),
            Moves::Pattern(map, dir) => match map.get(&key) {
                Some(Signs::Each(v)) => Signs::Each(v.iter().map(|s| s * *dir).collect()),
                Some(Signs::All(s)) => Signs::All(s * *dir),
                None => return,
            },
        };
        self.centre(comp, ins, ops, l);
        let own = self.own(comp, ins, ops, l);
        let fused = self.contracted(comp, ins, ops, l, products);
        let t = l.dtype();
        for i in 0..n {
            let s = signs.at(i);
            if s == 0 {
                continue;
            }
            let x = l.get_f64(i);
            let mut y = match own.get(i) {
                Some(&r) if r > 0.0 => moved(x, r, s, t),
                _ => x,
            };
            // the multiply-add contracted: its one legal other result
            for f in &fused {
                if (f[i] - y) * f64::from(s) > 0.0 && f[i].is_finite() {
                    y = f[i];
                }
            }
            if y != x {
                if std::env::var("WITDBG").is_ok() {
                    eprintln!(
                        "move {} [{i}] x={x} y={y} r={:?} s={s}",
                        ins.name,
                        own.get(i)
                    );
                }
                l.set_f64(i, y);
            }
        }
    }

    /// Whether a multiply of type `t` may be contracted into its add (f64:
    /// narrower types get the contracted module as a variant of their own).
    fn contracts(&self, t: ElementType) -> bool {
        self.allow.contracts_multiply_add && t == ElementType::F64
    }

    /// An f64 add or subtract of a product this run recorded: the results
    /// with the product contracted into it (one rounding, `fma`), per
    /// product operand.
    fn contracted(
        &self,
        comp: CompId,
        ins: &Instruction,
        ops: &[&Value],
        l: &Literal,
        products: &HashMap<usize, (Literal, Literal)>,
    ) -> Vec<Vec<f64>> {
        let negate = match ins.opcode {
            Opcode::Add => false,
            Opcode::Subtract => true,
            _ => return Vec::new(),
        };
        if !self.contracts(l.dtype()) || ops.len() != 2 {
            return Vec::new();
        }
        let Some(c) = self.module.computations.get(comp.index()) else {
            return Vec::new();
        };
        let n = l.element_count();
        let mut out = Vec::new();
        for k in 0..2 {
            let Some(p) = ins
                .operands
                .get(k)
                .and_then(|&o| c.instructions.get(o.index()))
            else {
                continue;
            };
            if p.opcode != Opcode::Multiply {
                continue;
            }
            let key = p as *const Instruction as usize;
            let (Some((a, b)), Some(Value::Array(other))) = (products.get(&key), ops.get(1 - k))
            else {
                continue;
            };
            if a.element_count() != n || b.element_count() != n || other.element_count() != n {
                continue;
            }
            // a*b + c, a*b - c, or c - a*b
            let (sa, sc) = match (negate, k) {
                (false, _) => (1.0, 1.0),
                (true, 0) => (1.0, -1.0),
                (true, _) => (-1.0, 1.0),
            };
            out.push(
                (0..n)
                    .map(|i| (sa * a.get_f64(i)).mul_add(b.get_f64(i), sc * other.get_f64(i)))
                    .collect(),
            );
        }
        out
    }

    /// How far the instruction's result may move per element, on the
    /// operands this run gave it. A sum (reduce, dot, convolution, ...):
    /// its own error as the first-order rules count it, `gamma_n sum |x|`
    /// for any order plus its rounding. An elementwise op: its declared
    /// budget in ulps of its type (and the reference's own libm ulp on
    /// f64), in whole steps of the type; none for a correctly rounded op,
    /// whose result is the only legal one (an unrounded value kept in
    /// excess precision is not a value of the type, so it is not moved to).
    fn own(&self, comp: CompId, ins: &Instruction, ops: &[&Value], l: &Literal) -> Vec<f64> {
        if sums(ins.opcode) {
            return self.sum_error(comp, ins, ops, l);
        }
        let t = l.dtype();
        let (ulps, abs) = self
            .allow
            .budgets
            .get(&(ins.opcode, t))
            .copied()
            .unwrap_or((0, 0.0));
        let steps = ulps + u64::from(transcendental(ins.opcode) && t == ElementType::F64);
        if steps == 0 && abs == 0.0 {
            return vec![0.0; l.element_count()];
        }
        (0..l.element_count())
            .map(|i| {
                let x = l.get_f64(i);
                if !x.is_finite() {
                    return 0.0;
                }
                // the smaller spacing either side: whole steps, never more
                let up = step_toward(x, true, t).map_or(f64::INFINITY, |y| y - x);
                let down = step_toward(x, false, t).map_or(f64::INFINITY, |y| x - y);
                let spacing = up.min(down);
                let m = steps as f64 * spacing + abs;
                if m.is_finite() {
                    m
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// `f` with the first-order rules' context for an instruction of `comp`.
    fn with_radii<R>(&self, comp: CompId, f: impl FnOnce(&mut Radii<'_, '_>) -> R) -> R {
        let no_local = |_: &str, _: &Literal| None;
        let mut cx = Radii {
            run: Run::new(self.module),
            aux: &self.aux,
            module: self.module,
            allow: self.allow,
            depth: 1,
            fused: usize::from(self.fused.contains(&comp)),
            local: &no_local,
        };
        f(&mut cx)
    }

    /// A sum's own error by the first-order rules, on exact operands:
    /// `gamma_n sum|x|` about its correctly rounded value (which is within
    /// half a step of the exact sum; the bound's `gamma_n` counts one more
    /// rounding than any order makes, and that covers it).
    fn sum_error(&self, comp: CompId, ins: &Instruction, ops: &[&Value], l: &Literal) -> Vec<f64> {
        let arrays: Option<Vec<&Literal>> = ops.iter().map(|o| array(o)).collect();
        let Some(arrays) = arrays else {
            return Vec::new();
        };
        match self.with_radii(comp, |cx| cx.sum_spread(ins, &arrays, l)) {
            Ok(r) => r
                .into_iter()
                .map(|x| if x.is_finite() { x } else { 0.0 })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// An add-combining scatter is taken at its exact sums rounded once
    /// before it moves: the reference folds colliding updates in one order,
    /// and a move by every order's own error from that one order's value
    /// could reach past what any order gives.
    fn centre(&self, comp: CompId, ins: &Instruction, ops: &[&Value], l: &mut Literal) {
        if ins.opcode != Opcode::Scatter {
            return;
        }
        let arrays: Option<Vec<&Literal>> = ops.iter().map(|o| array(o)).collect();
        let Some(arrays) = arrays else { return };
        let Some(c) = self.with_radii(comp, |cx| cx.scatter_centre(ins, &arrays)) else {
            return;
        };
        let t = l.dtype();
        for (i, &y) in c.iter().enumerate().take(l.element_count()) {
            if y.is_finite() {
                l.set_f64(i, round_to_type(y, t));
            }
        }
    }
}

/// An array operand, or `None` for a tuple or token.
fn array(v: &Value) -> Option<&Literal> {
    match v {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

/// `x` moved by at most `r` in direction `s`, onto a value of type `t`.
fn moved(x: f64, r: f64, s: i8, t: ElementType) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let target = x + f64::from(s) * r;
    let mut y = round_to_type(target, t);
    if (y - x).abs() > r {
        y = step_toward(y, s < 0, t).unwrap_or(x);
    }
    if y.is_finite() && (y - x).abs() <= r {
        y
    } else {
        x
    }
}

/// The value of type `t` next to `y`, up (towards +inf) or down.
fn step_toward(y: f64, up: bool, t: ElementType) -> Option<f64> {
    let fmt = t.float_format()?;
    let mut l = Literal::zeros(&ArrayShape::new(t, Vec::<i64>::new())).ok()?;
    l.set_f64(0, y);
    let b = l.get_bits(0);
    let sign = 1u64 << (fmt.bit_width() - 1);
    let (neg, mag) = (b & sign != 0, b & !sign);
    let next = match (up, neg) {
        (true, false) | (false, true) => b + 1,
        (true, true) if mag == 0 => 1,
        (false, false) if mag == 0 => sign | 1,
        _ => b - 1,
    };
    l.set_bits(0, next);
    let z = l.get_f64(0);
    z.is_finite().then_some(z)
}

/// Per output, the reference's values widened to every run's value.
fn hull(base: &[Literal], runs: &[Vec<Literal>]) -> Vec<Bounds> {
    let mut out: Vec<Bounds> = base.iter().map(Bounds::point).collect();
    for run in runs {
        widen_hull(&mut out, run);
    }
    out
}

/// Each output's bounds widened to a run's finite values (float outputs of
/// the same type and size only).
pub(crate) fn widen_hull(out: &mut [Bounds], run: &[Literal]) {
    for (b, w) in out.iter_mut().zip(run) {
        let t = b.lo.dtype();
        let n = b.lo.element_count();
        if !t.is_float() || w.dtype() != t || w.element_count() != n {
            continue;
        }
        for i in 0..n {
            let x = w.get_f64(i);
            if !x.is_finite() || !b.lo.get_f64(i).is_finite() || !b.hi.get_f64(i).is_finite() {
                continue;
            }
            if x < b.lo.get_f64(i) {
                b.lo.set_bits(i, w.get_bits(i));
            }
            if x > b.hi.get_f64(i) {
                b.hi.set_bits(i, w.get_bits(i));
            }
        }
    }
}
