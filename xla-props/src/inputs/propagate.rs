//! Interval propagation through the flattened graph.
//!
//! 1. Forward: each node's interval from its operands' (outer bounds).
//! 2. Backward, HC4-revise style: each requirement narrows its node, and each
//!    node's interval narrows its operands' (`z = x - y`, `z >= 0` gives
//!    `x >= y.lo` and `y <= x.hi`), down to the parameters; repeated with the
//!    forward pass to a fixpoint. This removes only values that cannot be legal.
//! 3. Where a requirement is still not guaranteed for every point of the
//!    parameter box, an inner step splits it between the operands
//!    (`x - y >= 0` from `x >= c` and `y <= c`, `a*b + c > 0` from `a*b >= t`
//!    and `c > -t`, ...) so that every point left is legal. What neither step
//!    can express (`x*x >= 1`, holes such as `x - y != 0`) is left to
//!    rejection sampling, and reported.
//!
//! Complex values have no interval: a complex node's forward interval is
//! everything, and no step narrows a complex node or a complex operand (the
//! interval of a complex parameter bounds both its parts and is only ever
//! its starting range). What a real node computed from complex values
//! requires (`log(abs(z))`) is left to sampling and the reference's checks.

use super::graph::{Graph, Node, NodeId};
use super::interval::Interval;
use super::preimage::{
    abs_preimage, arithmetic, clamp, compare, convert_preimage, extremum, inverse, narrow, reduce,
    remainder_dividend, select, sign_preimage,
};
use super::sites::{Demand, Site};
use crate::hlo::{ConstantData, ElementType, Module, Opcode};

mod forward;
mod inner;

/// The propagation state over one graph.
pub(crate) struct Propagation<'m> {
    pub module: &'m Module,
    pub g: &'m Graph,
    /// Interval per entry parameter.
    pub params: Vec<Interval>,
    /// Forward interval per node.
    pub fwd: Vec<Interval>,
    /// What the last [`Propagation::narrow`] wanted of each node.
    pub want: Vec<Interval>,
    /// Whether a node depends on a parameter.
    adjustable: Vec<bool>,
}

impl<'m> Propagation<'m> {
    pub fn new(module: &'m Module, g: &'m Graph, params: Vec<Interval>) -> Self {
        let deps = g.param_dependencies();
        let mut p = Propagation {
            module,
            g,
            params,
            fwd: Vec::new(),
            want: Vec::new(),
            adjustable: deps.iter().map(|d| !d.is_empty()).collect(),
        };
        p.forward();
        p.want = p.fwd.clone();
        p
    }

    fn fork(&self) -> Propagation<'m> {
        Propagation {
            module: self.module,
            g: self.g,
            params: self.params.clone(),
            fwd: self.fwd.clone(),
            want: self.want.clone(),
            adjustable: self.adjustable.clone(),
        }
    }

    /// Constructive disjunction over selects: for each select whose
    /// predicate is undecided and whose users want less than its forward
    /// interval, narrows once assuming the predicate true (the requirements
    /// of the first branch then hold) and once assuming it false, and keeps
    /// the hull of the two parameter boxes. `select(i < 0, i + n, i)` in
    /// `[0, n - 1]` gives `i` in `[-n, n - 1]`, not the empty intersection of
    /// both branches. `sites` are all the requirements, conditional ones
    /// included. Returns whether some parameter changed.
    pub fn split_selects(&mut self, sites: &[Site]) -> bool {
        let mut changed = false;
        for s in 0..self.g.nodes.len() {
            let n = &self.g.nodes[s];
            if n.opcode != Opcode::Select || n.operands.len() != 3 || !self.adjustable[s] {
                continue;
            }
            let p = n.operands[0];
            let pf = self.fwd[p];
            let z = self.want.get(s).copied().unwrap_or(Interval::ALL);
            if pf.lo >= 1.0 || pf.hi <= 0.0 || z.contains_interval(self.fwd[s]) {
                continue;
            }
            let mut boxes: Vec<Vec<Interval>> = Vec::new();
            for taken in [true, false] {
                let mut sub = self.fork();
                let live = live_nodes(self.g, &self.fwd, &[(s, taken)]);
                let mut sub_sites: Vec<Site> =
                    sites.iter().filter(|x| live[x.node]).cloned().collect();
                sub_sites.push(Site {
                    node: p,
                    demand: Demand::Within(Interval::point(if taken { 1.0 } else { 0.0 })),
                    is_index: false,
                    what: String::new(),
                });
                if sub.narrow(&sub_sites) {
                    boxes.push(sub.params);
                }
            }
            let new: Vec<Interval> = match boxes.as_slice() {
                [one] => one.clone(),
                [a, b] => a.iter().zip(b).map(|(a, b)| a.hull(*b)).collect(),
                _ => continue,
            };
            let new: Vec<Interval> = new
                .iter()
                .zip(&self.params)
                .map(|(n, o)| n.intersect(*o))
                .collect();
            if new != self.params && new.iter().all(|i| !i.is_empty()) {
                self.params = new;
                self.forward();
                changed = true;
            }
        }
        changed
    }

    fn instr(&self, n: &Node) -> &'m crate::hlo::Instruction {
        self.module.comp(n.comp).instr(n.instr)
    }

    /// HC4-revise: narrows nodes by the sites' intervals and each node's
    /// operands by the node, down to the parameters; repeated with the forward
    /// pass until nothing changes. Returns false when some parameter became
    /// empty (the requirements cannot all hold).
    pub fn narrow(&mut self, sites: &[Site]) -> bool {
        for _round in 0..32 {
            self.forward();
            let mut want = self.fwd.clone();
            for s in sites {
                if let Some(i) = s.interval(self.g.nodes[s.node].dtype) {
                    want[s.node] = want[s.node].intersect(i);
                }
            }
            for id in (0..self.g.nodes.len()).rev() {
                self.project(id, &mut want);
            }
            self.want = want;
            // a requirement no value of its node can meet, on a node the
            // parameters decide: no input is legal
            if sites.iter().any(|s| {
                self.adjustable[s.node]
                    && !self.fwd[s.node].is_empty()
                    && self.want[s.node].is_empty()
            }) {
                return false;
            }
            let mut changed = false;
            for (k, &p) in self.g.params.iter().enumerate() {
                let dtype = self.g.nodes[p].dtype.unwrap_or(ElementType::F64);
                let new = self.params[k].intersect(self.want[p]).round_inward(dtype);
                if new.is_empty() {
                    return false;
                }
                if new != self.params[k] {
                    // stop on changes too small to matter (slow convergence)
                    let w = self.params[k].width();
                    if !(w.is_finite() && (w - new.width()).abs() <= w * 1e-9) {
                        changed = true;
                    }
                    self.params[k] = new;
                }
            }
            if !changed {
                break;
            }
        }
        self.forward();
        true
    }

    /// Whether node `n` or one of its operands is complex: no interval
    /// describes it, so nothing is narrowed through it.
    fn touches_complex(&self, n: &Node) -> bool {
        let complex = |t: Option<ElementType>| t.is_some_and(ElementType::is_complex);
        complex(n.dtype)
            || n.operands
                .iter()
                .any(|&o| complex(self.g.nodes.get(o).and_then(|x| x.dtype)))
    }

    /// Narrows the operands of node `id` given its wanted interval.
    fn project(&self, id: NodeId, want: &mut [Interval]) {
        let n = &self.g.nodes[id];
        let z = want[id];
        let full = n.dtype.map_or(Interval::ALL, Interval::of_type);
        // only integer arithmetic wraps; a select or clamp spanning its whole
        // type has merely wide operands
        let linear = matches!(
            n.opcode,
            Opcode::Add | Opcode::Subtract | Opcode::Multiply | Opcode::Negate | Opcode::Abs
        );
        let may_wrap = n.dtype.is_some_and(|t| t.is_integer()) && linear && self.fwd[id] == full;
        // integer add, subtract, multiply and negate that may wrap: a narrower
        // requirement is met by the operands whose exact result does not wrap
        // (values that meet it only by wrapping are dropped: an inner step,
        // never a reason to refuse; a wrapped index says nothing more)
        let follow_unwrapped = may_wrap && n.opcode != Opcode::Abs && !z.contains_interval(full);
        if z.is_empty()
            || n.operands.is_empty()
            || wraps(n)
            || (may_wrap && !follow_unwrapped)
            || self.touches_complex(n)
        {
            return;
        }
        let x = n.operands[0];
        match n.opcode {
            Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Copy
            | Opcode::Transpose
            | Opcode::Reverse
            | Opcode::ReducePrecision => narrow(x, z, want),
            Opcode::Convert => narrow(x, convert_preimage(z, self.g.nodes[x].dtype, n.dtype), want),
            Opcode::Bitcast if self.g.nodes[x].dtype == n.dtype => narrow(x, z, want),
            Opcode::Negate => narrow(x, z.negated(), want),
            Opcode::Abs => narrow(x, abs_preimage(z, want[x]), want),
            Opcode::Sign => narrow(x, sign_preimage(z, self.g.nodes[x].dtype), want),
            Opcode::Select => select(z, &n.operands, want),
            // every element of every operand is an element of the result
            Opcode::Concatenate => {
                for &o in &n.operands {
                    narrow(o, z, want);
                }
            }
            Opcode::Compare => {
                let Some(dir) = self.instr(n).attrs.direction else {
                    return;
                };
                let strict = self.g.nodes[x].dtype.is_some_and(|t| !t.is_float());
                compare(z, dir, strict, &n.operands, want);
            }
            Opcode::Clamp => clamp(z, &n.operands, want),
            Opcode::Remainder => narrow(x, remainder_dividend(z), want),
            Opcode::Add | Opcode::Subtract | Opcode::Multiply => {
                arithmetic(n.opcode, z, &n.operands, want)
            }
            Opcode::Divide if n.dtype.is_some_and(|t| t.is_float()) => {
                arithmetic(n.opcode, z, &n.operands, want)
            }
            Opcode::Exponential => narrow(x, inverse(z, Interval::at_least(0.0), f64::ln), want),
            Opcode::ExponentialMinusOne => {
                narrow(x, inverse(z, Interval::at_least(-1.0), f64::ln_1p), want)
            }
            Opcode::Log => narrow(x, inverse(z, Interval::ALL, f64::exp), want),
            Opcode::LogPlusOne => narrow(x, inverse(z, Interval::ALL, f64::exp_m1), want),
            Opcode::Sqrt => narrow(x, inverse(z, Interval::at_least(0.0), |v| v * v), want),
            Opcode::Tanh => narrow(x, inverse(z, Interval::new(-1.0, 1.0), f64::atanh), want),
            Opcode::Maximum | Opcode::Minimum => extremum(n.opcode, z, &n.operands, want),
            Opcode::Reduce => reduce(n.reducer, n.terms, z, &n.operands, want),
            _ => {}
        }
    }
}

/// Which nodes' values reach the root whatever the select predicates are:
/// a node used only as a branch of selects (or by such nodes) is
/// conditional, and its requirements hold only where the branch is taken
/// (the point check tests them on those elements). `decided` fixes some
/// selects' predicates (true: the first branch is taken); a predicate whose
/// forward interval is one value is decided by it.
pub(crate) fn live_nodes(g: &Graph, fwd: &[Interval], decided: &[(NodeId, bool)]) -> Vec<bool> {
    let mut live = vec![false; g.nodes.len()];
    if let Some(r) = live.get_mut(g.root) {
        *r = true;
    }
    for id in (0..g.nodes.len()).rev() {
        if !live[id] {
            continue;
        }
        let n = &g.nodes[id];
        let branch = if n.opcode == Opcode::Select && n.operands.len() == 3 {
            let p = fwd.get(n.operands[0]).copied().unwrap_or(Interval::ALL);
            match decided.iter().find(|(s, _)| *s == id) {
                Some(&(_, t)) => Some(Some(t)),
                None if p.lo >= 1.0 => Some(Some(true)),
                None if p.hi <= 0.0 => Some(Some(false)),
                None => Some(None),
            }
        } else {
            None
        };
        for (k, &o) in n.operands.iter().enumerate() {
            let on = match (branch, k) {
                (Some(Some(t)), 1) => t,
                (Some(Some(t)), 2) => !t,
                (Some(None), 1 | 2) => false,
                _ => true,
            };
            if on {
                live[o] = true;
            }
        }
    }
    live
}

/// Ops whose every result element is an element of their first operand,
/// moved or rounded: the result's range is the operand's, forward and back.
fn keeps_values(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Copy
            | Opcode::Transpose
            | Opcode::Slice
            | Opcode::Reverse
            | Opcode::Convert
            | Opcode::ReducePrecision
    )
}

/// Integer ops whose values intervals do not follow: bitwise ops, shifts,
/// division, and reductions (which may wrap anywhere along the way). The
/// linear ops (add, subtract, multiply, negate, abs) are followed as long as
/// their exact result fits the type; where it may not, they wrap, and the node
/// takes the whole range of its type.
fn wraps(n: &Node) -> bool {
    let int = n.dtype.is_some_and(|t| t.is_integer());
    int && (matches!(
        n.opcode,
        Opcode::Reduce | Opcode::Dot | Opcode::ReduceWindow
    ) || (n.opcode.is_elementwise()
        && !matches!(
            n.opcode,
            Opcode::Select
                | Opcode::Clamp
                | Opcode::Convert
                | Opcode::Maximum
                | Opcode::Minimum
                | Opcode::Compare
                | Opcode::Add
                | Opcode::Subtract
                | Opcode::Multiply
                | Opcode::Negate
                | Opcode::Abs
                | Opcode::Sign
                | Opcode::Remainder
        )))
}

fn constant_hull(c: Option<&ConstantData>) -> Interval {
    fn walk(c: &ConstantData, acc: Interval) -> Interval {
        match c {
            ConstantData::Pred(v) => v
                .iter()
                .fold(acc, |a, &b| a.hull(Interval::point(b as u8 as f64))),
            ConstantData::Int(v) => v
                .iter()
                .fold(acc, |a, &x| a.hull(Interval::point(x as f64))),
            ConstantData::Float(v) => v.iter().fold(acc, |a, &x| {
                if x.is_nan() {
                    Interval::ALL
                } else {
                    a.hull(Interval::point(x))
                }
            }),
            ConstantData::Complex(_) => Interval::ALL,
            ConstantData::Tuple(t) => t.iter().fold(acc, |a, c| walk(c, a)),
        }
    }
    match c {
        Some(c) => walk(c, Interval::EMPTY),
        None => Interval::ALL,
    }
}
