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

use super::graph::{Graph, Node, NodeId, Reducer};
use super::interval::Interval;
use super::preimage::{
    abs_preimage, arithmetic, clamp, compare, convert_preimage, extremum, inverse, narrow, reduce,
    remainder_dividend, select, sign_preimage,
};
use super::sites::{Demand, Site};
use crate::hlo::{ConstantData, ElementType, Module, Opcode};

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

    /// How many products each element of a dot sums.
    fn dot_terms(&self, n: &Node) -> f64 {
        let lhs = n.operands.first().map(|&o| &self.g.nodes[o]);
        let terms: i64 = match (lhs, self.instr(n).attrs.dot_dims.as_ref()) {
            (Some(l), Some(d)) => d
                .lhs_contracting
                .iter()
                .filter_map(|&c| usize::try_from(c).ok().and_then(|c| l.dims.get(c)))
                .product(),
            _ => 1,
        };
        terms.max(1) as f64
    }

    /// Recomputes every node's forward interval.
    pub fn forward(&mut self) {
        let mut fwd = Vec::with_capacity(self.g.nodes.len());
        for n in &self.g.nodes {
            let v = self.forward_node(n, &fwd);
            fwd.push(v);
        }
        self.fwd = fwd;
    }

    fn forward_node(&self, n: &Node, fwd: &[Interval]) -> Interval {
        let Some(dtype) = n.dtype.filter(|t| !t.is_complex()) else {
            return Interval::ALL;
        };
        let full = Interval::of_type(dtype);
        let op = |k: usize| n.operands.get(k).map_or(Interval::ALL, |&o| fwd[o]);
        let pos = Interval::at_least(0.0);
        if wraps(n) {
            return full;
        }
        let raw = match n.opcode {
            Opcode::Parameter => match n.param {
                Some(k) => self.params[k],
                None => full,
            },
            Opcode::Constant => constant_hull(self.instr(n).attrs.constant.as_ref()),
            Opcode::Iota => {
                let d = self.instr(n).attrs.iota_dimension.unwrap_or(0);
                let size = usize::try_from(d)
                    .ok()
                    .and_then(|d| n.dims.get(d))
                    .copied()
                    .unwrap_or(1);
                Interval::new(0.0, (size - 1).max(0) as f64)
            }
            Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Copy
            | Opcode::Transpose
            | Opcode::Slice
            | Opcode::Reverse
            | Opcode::DynamicSlice
            | Opcode::Gather
            | Opcode::Sort
            | Opcode::ReducePrecision
            | Opcode::Convert => op(0),
            Opcode::Bitcast
                if n.operands.first().and_then(|&o| self.g.nodes[o].dtype) == Some(dtype) =>
            {
                op(0)
            }
            Opcode::Pad | Opcode::DynamicUpdateSlice => op(0).hull(op(1)),
            Opcode::Concatenate => n
                .operands
                .iter()
                .fold(Interval::EMPTY, |acc, &o| acc.hull(fwd[o])),
            Opcode::Select => op(1).hull(op(2)),
            Opcode::Clamp => op(1).max(op(0)).min(op(2)),
            Opcode::Compare | Opcode::IsFinite => Interval::new(0.0, 1.0),
            Opcode::Negate => op(0).negated(),
            Opcode::Abs => op(0).abs(),
            Opcode::Sign => {
                let x = op(0);
                Interval::new(
                    if x.lo > 0.0 {
                        1.0
                    } else if x.lo >= 0.0 {
                        0.0
                    } else {
                        -1.0
                    },
                    if x.hi < 0.0 {
                        -1.0
                    } else if x.hi <= 0.0 {
                        0.0
                    } else {
                        1.0
                    },
                )
            }
            Opcode::Ceil => op(0).monotone(Interval::ALL, f64::ceil),
            Opcode::Floor => op(0).monotone(Interval::ALL, f64::floor),
            Opcode::RoundNearestAfz | Opcode::RoundNearestEven => {
                op(0).monotone(Interval::ALL, f64::round)
            }
            Opcode::Exponential => op(0).monotone(Interval::ALL, f64::exp),
            Opcode::ExponentialMinusOne => op(0).monotone(Interval::ALL, f64::exp_m1),
            Opcode::Log => op(0).monotone(pos, f64::ln),
            Opcode::LogPlusOne => op(0).monotone(Interval::at_least(-1.0), f64::ln_1p),
            Opcode::Logistic => op(0).monotone(Interval::ALL, |x| 1.0 / (1.0 + (-x).exp())),
            Opcode::Tanh => op(0).monotone(Interval::ALL, f64::tanh),
            Opcode::Erf => Interval::new(-1.0, 1.0),
            Opcode::Sine | Opcode::Cosine => Interval::new(-1.0, 1.0),
            Opcode::Atan2 => Interval::new(-std::f64::consts::PI, std::f64::consts::PI),
            Opcode::Sqrt => op(0).monotone(pos, f64::sqrt),
            Opcode::Cbrt => op(0).monotone(Interval::ALL, f64::cbrt),
            Opcode::Rsqrt => op(0).antitone(pos, |x| 1.0 / x.sqrt()),
            Opcode::Add => op(0).plus(op(1)),
            Opcode::Subtract => op(0).minus(op(1)),
            Opcode::Multiply if n.operands.len() == 2 && n.operands[0] == n.operands[1] => {
                op(0).square()
            }
            Opcode::Multiply => op(0).times(op(1)),
            Opcode::Divide if dtype.is_float() => op(0).over(op(1)),
            Opcode::Maximum => op(0).max(op(1)),
            Opcode::Minimum => op(0).min(op(1)),
            Opcode::Remainder => {
                // the sign of the dividend, smaller in magnitude than the divisor
                // (integers: by at least 1; `x rem 0` is `x`)
                let (x, y) = (op(0), op(1));
                let m = if dtype.is_float() {
                    y.abs().hi
                } else if y.contains(0.0) {
                    f64::INFINITY
                } else {
                    y.abs().hi - 1.0
                };
                Interval::new(x.lo.max(-m).min(0.0), x.hi.min(m).max(0.0))
            }
            Opcode::Power if op(0).lo >= 0.0 => {
                let (b, e) = (op(0), op(1));
                let c = [
                    b.lo.powf(e.lo),
                    b.lo.powf(e.hi),
                    b.hi.powf(e.lo),
                    b.hi.powf(e.hi),
                ];
                let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if lo.is_nan() || hi.is_nan() {
                    full
                } else {
                    Interval::new(lo, hi)
                }
            }
            Opcode::Reduce => {
                let (x, init) = (op(0), op(1));
                let t = n.terms as f64;
                match n.reducer {
                    Some(Reducer::Add) => x.scale(t).plus(init),
                    Some(Reducer::Max) => x.max(init),
                    Some(Reducer::Min) => x.min(init),
                    _ => full,
                }
            }
            Opcode::Dot => op(0).times(op(1)).scale(self.dot_terms(n)),
            Opcode::Real | Opcode::Imag => self.part_interval(n, fwd),
            _ => full,
        };
        if !dtype.is_float() && !full.contains_interval(raw) {
            // the exact result may leave the integer range and wrap
            return full;
        }
        let r = raw.round_outward(dtype);
        if r.is_empty() || dtype.is_float() {
            r
        } else {
            r.intersect(full)
        }
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

    /// The forward interval of `real(x)` or `imag(x)`: of a complex entry
    /// parameter, its interval (which bounds both parts; a parameter drawn as
    /// a single real value has imaginary part 0); of a real value, the value
    /// or 0; of any other complex value, everything.
    fn part_interval(&self, n: &Node, fwd: &[Interval]) -> Interval {
        let real = n.opcode == Opcode::Real;
        let Some(&o) = n.operands.first() else {
            return Interval::ALL;
        };
        let x = &self.g.nodes[o];
        match (x.dtype, x.opcode, x.param) {
            (Some(t), Opcode::Parameter, Some(k)) if t.is_complex() => {
                let i = self.params.get(k).copied().unwrap_or(Interval::ALL);
                if !real && i.lo == i.hi {
                    Interval::point(0.0)
                } else {
                    i
                }
            }
            (Some(t), _, _) if t.is_complex() => Interval::ALL,
            _ if real => fwd.get(o).copied().unwrap_or(Interval::ALL),
            _ => Interval::point(0.0),
        }
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

    /// Inner step: changes parameter intervals so that node `n` lies in `req`
    /// for every point of the box. Returns false when it cannot.
    pub fn ensure(&mut self, n: NodeId, req: Interval, depth: usize) -> bool {
        let cur = self.fwd[n];
        if req.contains_interval(cur) {
            return true;
        }
        let node = &self.g.nodes[n];
        if depth > 48
            || !self.adjustable[n]
            || req.intersect(cur).is_empty()
            || wraps(node)
            || self.touches_complex(node)
        {
            return false;
        }
        let req = req.intersect(cur);
        let x = node.operands.first().copied();
        let y = node.operands.get(1).copied();
        match (node.opcode, x, y) {
            (Opcode::Parameter, _, _) => {
                let Some(k) = node.param else { return false };
                let dtype = node.dtype.unwrap_or(ElementType::F64);
                let old = self.params[k];
                let new = old.intersect(req).round_inward(dtype);
                // an inner step never collapses a parameter to one value:
                // that requirement is better left to sampling and repair
                if new.is_empty() || (new.lo == new.hi && old.lo != old.hi) {
                    return false;
                }
                self.params[k] = new;
                true
            }
            (
                Opcode::Broadcast
                | Opcode::Reshape
                | Opcode::Copy
                | Opcode::Transpose
                | Opcode::Slice
                | Opcode::Reverse
                | Opcode::Convert
                | Opcode::ReducePrecision,
                Some(x),
                _,
            ) => self.ensure(x, req, depth + 1),
            (Opcode::Concatenate, _, _) => {
                let ops = node.operands.clone();
                ops.into_iter().all(|o| self.ensure(o, req, depth + 1))
            }
            (Opcode::Negate, Some(x), _) => self.ensure(x, req.negated(), depth + 1),
            (Opcode::Add, Some(x), Some(y)) => self.ensure_sum(x, 1.0, y, 1.0, req, depth),
            (Opcode::Subtract, Some(x), Some(y)) => self.ensure_sum(x, 1.0, y, -1.0, req, depth),
            (Opcode::Multiply, Some(x), Some(y)) if x != y => self.ensure_product(x, y, req, depth),
            (Opcode::Dot, Some(x), Some(y)) if x != y => {
                let t = self.dot_terms(node);
                self.ensure_product(x, y, Interval::new(req.lo / t, req.hi / t), depth)
            }
            (Opcode::Exponential, Some(x), _) => {
                self.ensure(x, inverse(req, Interval::at_least(0.0), f64::ln), depth + 1)
            }
            (Opcode::ExponentialMinusOne, Some(x), _) => self.ensure(
                x,
                inverse(req, Interval::at_least(-1.0), f64::ln_1p),
                depth + 1,
            ),
            (Opcode::Log, Some(x), _) => {
                self.ensure(x, inverse(req, Interval::ALL, f64::exp), depth + 1)
            }
            (Opcode::LogPlusOne, Some(x), _) => {
                self.ensure(x, inverse(req, Interval::ALL, f64::exp_m1), depth + 1)
            }
            (Opcode::Sqrt, Some(x), _) => self.ensure(
                x,
                inverse(req, Interval::at_least(0.0), |v| v * v),
                depth + 1,
            ),
            (Opcode::Select, _, Some(a)) => {
                let Some(&b) = node.operands.get(2) else {
                    return false;
                };
                self.ensure(a, req, depth + 1) && self.ensure(b, req, depth + 1)
            }
            (Opcode::Maximum, Some(x), Some(y)) => {
                let lower_ok = if self.fwd[x].lo.max(self.fwd[y].lo) >= req.lo {
                    true
                } else {
                    let pick = if self.fwd[x].hi >= self.fwd[y].hi {
                        x
                    } else {
                        y
                    };
                    self.ensure(pick, Interval::at_least(req.lo), depth + 1)
                };
                lower_ok
                    && self.ensure(x, Interval::at_most(req.hi), depth + 1)
                    && self.ensure(y, Interval::at_most(req.hi), depth + 1)
            }
            (Opcode::Minimum, Some(x), Some(y)) => {
                let upper_ok = if self.fwd[x].hi.min(self.fwd[y].hi) <= req.hi {
                    true
                } else {
                    let pick = if self.fwd[x].lo <= self.fwd[y].lo {
                        x
                    } else {
                        y
                    };
                    self.ensure(pick, Interval::at_most(req.hi), depth + 1)
                };
                upper_ok
                    && self.ensure(x, Interval::at_least(req.lo), depth + 1)
                    && self.ensure(y, Interval::at_least(req.lo), depth + 1)
            }
            (Opcode::Reduce, Some(x), Some(init)) => {
                let t = node.terms as f64;
                let ii = self.fwd[init];
                match node.reducer {
                    Some(Reducer::Add) if t >= 1.0 => {
                        let want = Interval::new((req.lo - ii.lo) / t, (req.hi - ii.hi) / t);
                        self.ensure(x, want, depth + 1)
                    }
                    Some(Reducer::Max) if ii.hi <= req.hi => self.ensure(x, req, depth + 1),
                    Some(Reducer::Min) if ii.lo >= req.lo => self.ensure(x, req, depth + 1),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// `sx * x + sy * y` in `req` (`sx`, `sy` are +1 or -1): shifts the
    /// operands' bounds in proportion to their widths.
    fn ensure_sum(
        &mut self,
        x: NodeId,
        sx: f64,
        y: NodeId,
        sy: f64,
        req: Interval,
        depth: usize,
    ) -> bool {
        // a and b are the intervals of the signed terms
        let a = if sx > 0.0 {
            self.fwd[x]
        } else {
            self.fwd[x].negated()
        };
        let b = if sy > 0.0 {
            self.fwd[y]
        } else {
            self.fwd[y].negated()
        };
        let wa = if self.adjustable[x] { a.width() } else { 0.0 };
        let wb = if self.adjustable[y] { b.width() } else { 0.0 };
        let total = wa + wb;
        if !(total.is_finite() && total > 0.0) {
            return false;
        }
        let (mut a2, mut b2) = (a, b);
        let deficit = req.lo - (a.lo + b.lo);
        if deficit > 0.0 {
            a2.lo = a.lo + deficit * wa / total;
            b2.lo = req.lo - a2.lo;
        }
        let excess = (a.hi + b.hi) - req.hi;
        if excess > 0.0 {
            a2.hi = a.hi - excess * wa / total;
            b2.hi = req.hi - a2.hi;
        }
        let back = |i: Interval, s: f64| if s > 0.0 { i } else { i.negated() };
        self.ensure(x, back(a2, sx), depth + 1) && self.ensure(y, back(b2, sy), depth + 1)
    }

    /// `x * y` in `req`: first the signs (a product that must not be
    /// negative takes both factors of one sign; a requirement lopsided
    /// around 0 is met that way too, rather than by a tiny magnitude), then
    /// the largest magnitude, then the smallest.
    fn ensure_product(&mut self, x: NodeId, y: NodeId, req: Interval, depth: usize) -> bool {
        let (a, b) = (self.fwd[x], self.fwd[y]);
        let mut req = req;
        if req.lo < 0.0 && req.hi > 0.0 {
            if -req.lo * 16.0 < req.hi {
                req.lo = 0.0;
            } else if req.hi * 16.0 < -req.lo {
                req.hi = 0.0;
            }
        }
        let pos = Interval::at_least(0.0);
        let neg = Interval::at_most(0.0);
        let nonempty = |p: Interval, q: Interval| p.hi > p.lo && q.hi > q.lo;
        let (mut a2, mut b2) = (a, b);
        if req.lo >= 0.0 && a.times(b).lo < 0.0 {
            // one sign for both: the side with more room
            let (pp, nn) = (
                (a.intersect(pos), b.intersect(pos)),
                (a.intersect(neg), b.intersect(neg)),
            );
            let room = |(p, q): (Interval, Interval)| p.width().min(1e300) * q.width().min(1e300);
            (a2, b2) = match (nonempty(pp.0, pp.1), nonempty(nn.0, nn.1)) {
                (true, true) if room(nn) > room(pp) => nn,
                (true, _) => pp,
                (false, true) => nn,
                _ => return false,
            };
        } else if req.hi <= 0.0 && a.times(b).hi > 0.0 {
            let (pn, np) = (
                (a.intersect(pos), b.intersect(neg)),
                (a.intersect(neg), b.intersect(pos)),
            );
            (a2, b2) = match (nonempty(pn.0, pn.1), nonempty(np.0, np.1)) {
                (true, _) => pn,
                (false, true) => np,
                _ => return false,
            };
        }
        // the largest magnitude: |x * y| <= m
        let m = if req.lo >= 0.0 {
            req.hi
        } else if req.hi <= 0.0 {
            -req.lo
        } else {
            req.hi.min(-req.lo)
        };
        if m.is_nan() || m <= 0.0 {
            return false;
        }
        let (ma, mb) = (a2.abs().hi, b2.abs().hi);
        if ma.is_infinite() || mb.is_infinite() {
            // an unbounded factor: only it can be bounded, against the
            // other's magnitude (scaling both by sqrt(m / inf) would
            // collapse the bounded one to exactly 0)
            if ma.is_infinite() && mb.is_infinite() {
                return false;
            }
            let (other, adjustable) = if ma.is_infinite() {
                (mb, self.adjustable[x])
            } else {
                (ma, self.adjustable[y])
            };
            if other > 0.0 {
                if !adjustable {
                    return false;
                }
                let bound = Interval::new(-m / other, m / other);
                if ma.is_infinite() {
                    a2 = a2.intersect(bound);
                } else {
                    b2 = b2.intersect(bound);
                }
            }
        } else if ma * mb > m {
            let (fa, fb) = match (self.adjustable[x], self.adjustable[y]) {
                (true, true) => {
                    let f = (m / (ma * mb)).sqrt();
                    (f, f)
                }
                (true, false) => (m / (ma * mb), 1.0),
                (false, true) => (1.0, m / (ma * mb)),
                (false, false) => return false,
            };
            a2 = a2.intersect(Interval::new(-ma * fa, ma * fa));
            b2 = b2.intersect(Interval::new(-mb * fb, mb * fb));
        }
        // the smallest magnitude: |x| |y| >= t, for a product kept off 0
        let t = if req.lo > 0.0 {
            req.lo
        } else if req.hi < 0.0 {
            -req.hi
        } else {
            0.0
        };
        if t > 0.0 {
            let (pa, pb) = (a2.abs(), b2.abs());
            if pa.lo * pb.lo < t {
                // alpha in [max(pa.lo, t / pb.hi), pa.hi]: the geometric middle
                let lo = pa.lo.max(t / pb.hi).max(f64::MIN_POSITIVE);
                if lo > pa.hi {
                    return false;
                }
                let alpha = if self.adjustable[x] {
                    (lo * pa.hi).sqrt()
                } else {
                    pa.lo
                };
                if alpha <= 0.0 {
                    return false;
                }
                let beta = (t / alpha).max(pb.lo);
                if beta > pb.hi {
                    return false;
                }
                // keep the sign each factor already has
                let oriented = |i: Interval, least: f64| {
                    if i.lo >= 0.0 {
                        Interval::new(least.max(i.lo), i.hi)
                    } else if i.hi <= 0.0 {
                        Interval::new(i.lo, (-least).min(i.hi))
                    } else {
                        Interval::EMPTY
                    }
                };
                a2 = oriented(a2, alpha);
                b2 = oriented(b2, beta);
                if a2.is_empty() || b2.is_empty() {
                    return false;
                }
            }
        }
        self.ensure(x, a2, depth + 1) && self.ensure(y, b2, depth + 1)
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
