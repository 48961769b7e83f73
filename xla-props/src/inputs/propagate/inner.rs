//! Step 3, inner: where a requirement is still not guaranteed for every
//! point of the parameter box, split it between the operands so that every
//! point left is legal (`x - y >= 0` from `x >= c` and `y <= c`, `a*b + c > 0`
//! from `a*b >= t` and `c > -t`, ...).

use super::{keeps_values, wraps, Propagation};
use crate::hlo::ElementType;
use crate::hlo::Opcode;
use crate::inputs::graph::{NodeId, Reducer};
use crate::inputs::interval::Interval;
use crate::inputs::preimage::inverse;

impl Propagation<'_> {
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
            (Opcode::Parameter, _, _) => self.ensure_parameter(n, req),
            (o, Some(x), _) if keeps_values(o) => self.ensure(x, req, depth + 1),
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
            (Opcode::Maximum | Opcode::Minimum, Some(x), Some(y)) => {
                self.ensure_extremum(node.opcode == Opcode::Maximum, x, y, req, depth)
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

    /// A parameter's interval narrowed to `req`.
    fn ensure_parameter(&mut self, n: NodeId, req: Interval) -> bool {
        let node = &self.g.nodes[n];
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

    /// `maximum` (`max`) or `minimum`: one operand reaches the bound that
    /// the extremum needs, and both stay within the other bound.
    fn ensure_extremum(
        &mut self,
        max: bool,
        x: NodeId,
        y: NodeId,
        req: Interval,
        depth: usize,
    ) -> bool {
        if max {
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
        } else {
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
        let Some((mut a2, mut b2)) = product_signs(a, b, req) else {
            return false;
        };
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

/// The operands' intervals cut to the signs a product in `req` needs:
/// both of one sign for a non-negative product (the side with more room),
/// opposite signs for a non-positive one; None when no such side is left.
fn product_signs(a: Interval, b: Interval, req: Interval) -> Option<(Interval, Interval)> {
    let pos = Interval::at_least(0.0);
    let neg = Interval::at_most(0.0);
    let nonempty = |p: Interval, q: Interval| p.hi > p.lo && q.hi > q.lo;
    if req.lo >= 0.0 && a.times(b).lo < 0.0 {
        // one sign for both: the side with more room
        let (pp, nn) = (
            (a.intersect(pos), b.intersect(pos)),
            (a.intersect(neg), b.intersect(neg)),
        );
        let room = |(p, q): (Interval, Interval)| p.width().min(1e300) * q.width().min(1e300);
        return match (nonempty(pp.0, pp.1), nonempty(nn.0, nn.1)) {
            (true, true) if room(nn) > room(pp) => Some(nn),
            (true, _) => Some(pp),
            (false, true) => Some(nn),
            _ => None,
        };
    } else if req.hi <= 0.0 && a.times(b).hi > 0.0 {
        let (pn, np) = (
            (a.intersect(pos), b.intersect(neg)),
            (a.intersect(neg), b.intersect(pos)),
        );
        return match (nonempty(pn.0, pn.1), nonempty(np.0, np.1)) {
            (true, _) => Some(pn),
            (false, true) => Some(np),
            _ => None,
        };
    }
    Some((a, b))
}
