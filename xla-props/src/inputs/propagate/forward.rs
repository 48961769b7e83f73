//! Step 1, forward: each node's interval from its operands' (outer bounds).

use super::{constant_hull, keeps_values, wraps, Propagation};
use crate::hlo::Opcode;
use crate::inputs::graph::{Node, Reducer};
use crate::inputs::interval::Interval;

impl Propagation<'_> {
    /// How many products each element of a dot sums.
    pub(super) fn dot_terms(&self, n: &Node) -> f64 {
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

    pub(super) fn forward_node(&self, n: &Node, fwd: &[Interval]) -> Interval {
        let Some(dtype) = n.dtype.filter(|t| !t.is_complex()) else {
            return Interval::ALL;
        };
        let full = Interval::of_type(dtype);
        let op = |k: usize| n.operands.get(k).map_or(Interval::ALL, |&o| fwd[o]);
        if wraps(n) {
            return full;
        }
        let unary = unary_image(n.opcode, op(0));
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
            o if keeps_values(o) => op(0),
            Opcode::DynamicSlice | Opcode::Gather | Opcode::Sort => op(0),
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
            Opcode::Atan2 => Interval::new(-std::f64::consts::PI, std::f64::consts::PI),
            _ if unary.is_some() => unary.unwrap_or(full),
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

    /// The forward interval of `real(x)` or `imag(x)`: of a complex entry
    /// parameter, its interval (which bounds both parts; a parameter drawn as
    /// a single real value has imaginary part 0); of a real value, the value
    /// or 0; of any other complex value, everything.
    pub(super) fn part_interval(&self, n: &Node, fwd: &[Interval]) -> Interval {
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
}

/// The image of `x` under an elementwise unary function (outer bounds, in
/// f64), or None for any other op.
fn unary_image(op: Opcode, x: Interval) -> Option<Interval> {
    let pos = Interval::at_least(0.0);
    Some(match op {
        Opcode::Negate => x.negated(),
        Opcode::Abs => x.abs(),
        Opcode::Sign => Interval::new(
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
        ),
        Opcode::Ceil => x.monotone(Interval::ALL, f64::ceil),
        Opcode::Floor => x.monotone(Interval::ALL, f64::floor),
        Opcode::RoundNearestAfz | Opcode::RoundNearestEven => x.monotone(Interval::ALL, f64::round),
        Opcode::Exponential => x.monotone(Interval::ALL, f64::exp),
        Opcode::ExponentialMinusOne => x.monotone(Interval::ALL, f64::exp_m1),
        Opcode::Log => x.monotone(pos, f64::ln),
        Opcode::LogPlusOne => x.monotone(Interval::at_least(-1.0), f64::ln_1p),
        Opcode::Logistic => x.monotone(Interval::ALL, |x| 1.0 / (1.0 + (-x).exp())),
        Opcode::Tanh => x.monotone(Interval::ALL, f64::tanh),
        Opcode::Erf => Interval::new(-1.0, 1.0),
        Opcode::Sine | Opcode::Cosine => Interval::new(-1.0, 1.0),
        Opcode::Sqrt => x.monotone(pos, f64::sqrt),
        Opcode::Cbrt => x.monotone(Interval::ALL, f64::cbrt),
        Opcode::Rsqrt => x.antitone(pos, |x| 1.0 / x.sqrt()),
        _ => return None,
    })
}
