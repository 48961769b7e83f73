//! The radius of one instruction: its operands' radii carried through
//! the op (elementwise rules here, the families in `families.rs`), then the
//! op's own rounding, budget and flush.

use super::super::OpError;
use super::dual::{f64_literal, Dual};
use super::eval::Radii;
use crate::hlo::{ElementType, FloatFormat, Instruction, Opcode};
use crate::literal::{round_to_type, Literal};

/// Relative slack for evaluating an image in f64 rather than exactly.
const F64_SLACK: f64 = 4.0 * f64::EPSILON;

/// One ULP of a value of magnitude `x` in `fmt` (at least the smallest
/// subnormal's spacing).
pub(super) fn ulp(fmt: &FloatFormat, x: f64) -> f64 {
    let x = x.abs();
    let min_exp = 1 - fmt.bias;
    let e = if x > 0.0 && x.is_finite() {
        (x.log2().floor() as i32).max(min_exp)
    } else {
        min_exp
    };
    // log2 may be off by one at powers of two: take the larger spacing
    2f64.powi(e + 1 - fmt.mantissa_bits as i32)
}

/// The unit roundoff of a float type (half its epsilon).
pub(super) fn unit_roundoff(fmt: &FloatFormat) -> f64 {
    fmt.epsilon() / 2.0
}

/// `gamma_n = n u / (1 - n u)`, infinite where `n u >= 1`.
pub(super) fn gamma(n: f64, u: f64) -> f64 {
    let nu = n * u;
    if nu >= 1.0 {
        f64::INFINITY
    } else {
        nu / (1.0 - nu)
    }
}

/// What an op does to its result beyond carrying its operands' errors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Own {
    /// The result is exact (moves, selects, max/min, negate, compare).
    Exact,
    /// Rounded once to the result's type.
    Rounded,
    /// A transcendental: rounded, with the reference's own libm error on f64.
    Transcendental,
}

fn own_error(op: Opcode) -> Own {
    use Opcode as O;
    match op {
        O::Power | O::Atan2 => Own::Transcendental,
        op if op.is_transcendental() => Own::Transcendental,
        O::Add
        | O::Subtract
        | O::Multiply
        | O::Divide
        | O::Sqrt
        | O::Rsqrt
        | O::Convert
        | O::ReducePrecision
        | O::Reduce
        | O::ReduceWindow
        | O::Dot
        | O::Convolution
        | O::Scatter
        | O::SelectAndScatter
        | O::Remainder => Own::Rounded,
        _ => Own::Exact,
    }
}

/// Operand `k`'s element `i`, a scalar operand broadcast.
fn at(l: &Literal, i: usize) -> f64 {
    if l.element_count() == 1 {
        l.get_f64(0)
    } else {
        l.get_f64(i)
    }
}
fn rad(r: &[f64], i: usize) -> f64 {
    if r.len() == 1 {
        r[0]
    } else {
        r.get(i).copied().unwrap_or(f64::INFINITY)
    }
}

impl Radii<'_, '_> {
    /// The radius of `ins`'s array result `v`, operands' errors carried and
    /// its own added.
    pub(super) fn radius(
        &mut self,
        ins: &Instruction,
        ops: &[&Dual],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let n = v.element_count();
        let arrays: Option<Vec<(&Literal, Vec<f64>)>> = ops
            .iter()
            .map(|o| o.array().map(|(l, r)| (l, self.flushed_radii(l, r))))
            .collect();
        let Some(arrays) = arrays else {
            // a token or tuple operand of an array op: exact only when all are
            let exact = ops.iter().all(|o| o.is_exact());
            return Ok(vec![if exact { 0.0 } else { f64::INFINITY }; n]);
        };
        let exact_in = arrays.iter().all(|(_, r)| r.iter().all(|&x| x == 0.0));
        let mut r = if exact_in && !sums(ins.opcode) {
            vec![0.0; n]
        } else {
            self.carried(ins, &arrays, v)?
        };
        let widening = ins.opcode == Opcode::Convert
            && arrays
                .first()
                .is_some_and(|(l, _)| widens(l.dtype(), v.dtype()));
        let unrounded = if elementwise_rounding(ins.opcode) && v.dtype().is_float() {
            let lits: Result<Vec<Literal>, OpError> = arrays
                .iter()
                .map(|(l, _)| f64_literal(l, &l.to_f64_vec()))
                .collect();
            lits.and_then(|l| self.f64_op(ins, &l, None))
                .ok()
                .map(|l| l.to_f64_vec())
                .filter(|u| u.len() == n)
        } else {
            None
        };
        let selects = self.selects_a_value(ins);
        self.add_own(ins, v, &mut r, unrounded.as_deref(), widening || selects);
        // a NaN radius (an unbounded radius times a zero: `inf * 0` in a
        // contraction's `r_a |b|`) bounds nothing; `f64::max` and the
        // comparisons downstream would read it as no error at all
        for x in &mut r {
            if x.is_nan() {
                *x = f64::INFINITY;
            }
        }
        Ok(r)
    }

    /// A flushing backend may read a subnormal operand as zero.
    fn flushed_radii(&self, l: &Literal, r: &[f64]) -> Vec<f64> {
        let t = l.dtype();
        match t.float_format() {
            Some(fmt) if self.allow.flush_inputs.contains(&t) => r
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    // read as zero or as itself: no interval holds only those two
                    // without values no flushing produces (a steep cbrt near
                    // zero), so a flushable element bounds nothing here; the
                    // judge's flushing enclosure covers it. An interval that
                    // already holds zero (x >= |value|) holds both: flushing
                    // any value in it gives zero, inside it.
                    let a = l.get_f64(i).abs();
                    if a != 0.0 && a > x && a - x < fmt.min_normal() {
                        f64::INFINITY
                    } else {
                        x
                    }
                })
                .collect(),
            _ => r.to_vec(),
        }
    }

    /// The op's own error. Where the unrounded result is known (an
    /// elementwise op run in f64 on the reference's operands), the result
    /// lies in the rounding of the carried interval around it: rounding is
    /// monotone, so a correctly rounded backend gives a value between the
    /// roundings of its ends (no error at all on exact operands, and one
    /// step only where the interval holds a rounding boundary). Elsewhere
    /// (sums, contractions) the unrounded result is within half an ULP of
    /// the reference's. A result kept unrounded (excess precision, a
    /// multiply contracted into an fma) may be anywhere in the interval;
    /// a declared budget and flushed results widen it. An op whose result
    /// is one of its operands' values (a widening convert, a max-combining
    /// reduce or scatter) rounds nothing.
    fn add_own(
        &self,
        ins: &Instruction,
        v: &Literal,
        r: &mut [f64],
        unrounded: Option<&[f64]>,
        selects_a_value: bool,
    ) {
        let t = v.dtype();
        let Some(fmt) = t.float_format() else { return };
        let own = own_error(ins.opcode);
        if own == Own::Exact || selects_a_value {
            return;
        }
        let budget = self.allow.budgets.get(&(ins.opcode, t)).copied();
        let ulps = budget.map_or(0.0, |(u, _)| u as f64)
            + if own == Own::Transcendental && t == ElementType::F64 {
                1.0
            } else {
                0.0
            };
        let abs = budget.map_or(0.0, |(_, a)| a);
        let narrow = t.bit_width() < 32;
        let kept_unrounded = (narrow
            && (self.allow.excess_anywhere || (self.allow.excess_in_fusions && self.fused > 0)))
            || (self.allow.contracts_multiply_add && ins.opcode == Opcode::Multiply);
        let flush = self.allow.flush_outputs.contains(&t);
        // an IEEE operation on exact operands has one legal result, the
        // correctly rounded one (where no unrounded value is at hand, f64,
        // the interval below would be an ulp wide and let a rewrite such as
        // (a / b) / c = a / (b * c) pass as rounding)
        let correctly_rounded = budget.is_none()
            && !kept_unrounded
            && matches!(
                ins.opcode,
                Opcode::Add
                    | Opcode::Subtract
                    | Opcode::Multiply
                    | Opcode::Divide
                    | Opcode::Sqrt
                    | Opcode::Convert
                    | Opcode::Remainder
            );
        for (i, x) in r.iter_mut().enumerate() {
            let val = v.get_f64(i);
            if correctly_rounded
                && *x == 0.0
                && val.is_finite()
                && !(flush && val != 0.0 && val.abs() < fmt.min_normal())
            {
                continue;
            }
            if !val.is_finite() || !x.is_finite() {
                if val.is_finite() || x.is_nan() {
                    *x = f64::INFINITY;
                }
                continue;
            }
            let (mid, half) = match unrounded.and_then(|u| u.get(i)).copied() {
                Some(m) if m.is_finite() => (m, m.abs() * F64_SLACK),
                _ => (val, ulp(&fmt, val) / 2.0),
            };
            let lo = mid - *x * (1.0 + F64_SLACK) - half;
            let hi = mid + *x * (1.0 + F64_SLACK) + half;
            let (rlo, rhi) = (round_to_type(lo, t), round_to_type(hi, t));
            let mut w = (rlo - val).abs().max((rhi - val).abs());
            if kept_unrounded {
                w = w.max((lo - val).abs()).max((hi - val).abs());
            }
            let top = lo.abs().max(hi.abs());
            w += ulps * ulp(&fmt, top) + abs;
            let subnormal = |y: f64| y != 0.0 && y.abs() < fmt.min_normal();
            if flush && !(rlo <= 0.0 && rhi >= 0.0) && (subnormal(rlo) || subnormal(rhi)) {
                // flushed or not: as for flushed inputs, a two-point set.
                // An interval that holds zero holds both: a flushed value
                // in it is zero, inside it, so the radius stands
                w = f64::INFINITY;
            }
            *x = if w.is_finite() { w } else { f64::INFINITY };
        }
    }

    /// A sum's own error on exact operands, before the rounding of its
    /// result: `gamma_n sum|x|` for any order, which already holds every
    /// partial sum's rounding, the last one included (the witness runs
    /// move a sum's correctly rounded value by this much).
    pub(super) fn sum_spread(
        &mut self,
        ins: &Instruction,
        ops: &[&Literal],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let exact: Vec<(&Literal, Vec<f64>)> = ops
            .iter()
            .map(|l| (*l, vec![0.0; l.element_count()]))
            .collect();
        self.carried(ins, &exact, v)
    }

    /// The operands' radii carried through the op.
    fn carried(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        use Opcode as O;
        let n = v.element_count();
        let each = |f: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..n).map(f).collect() };
        let x = |k: usize, i: usize| at(a[k].0, i);
        let r = |k: usize, i: usize| rad(&a[k].1, i);
        let float_out = v.dtype().is_float();
        Ok(match ins.opcode {
            O::Negate | O::Abs | O::Copy if a.len() == 1 => a[0].1.clone(),
            O::Add | O::Subtract if a.len() == 2 => each(&|i| r(0, i) + r(1, i)),
            O::Multiply if a.len() == 2 => {
                each(&|i| x(0, i).abs() * r(1, i) + r(0, i) * x(1, i).abs() + r(0, i) * r(1, i))
            }
            O::Divide if a.len() == 2 && float_out => each(&|i| {
                let (p, q, rp, rq) = (x(0, i), x(1, i), r(0, i), r(1, i));
                if rq >= q.abs() {
                    f64::INFINITY
                } else {
                    (p.abs() * rq + q.abs() * rp) / (q.abs() * (q.abs() - rq))
                }
            }),
            // 1-Lipschitz; where the operands stay apart the result is the
            // winner, which moves by its own radius only (`max(x, 0)` of an
            // x well below zero is exactly 0)
            O::Maximum | O::Minimum if a.len() == 2 => each(&|i| {
                let (p, q, rp, rq) = (x(0, i), x(1, i), r(0, i), r(1, i));
                let apart = (p - q).abs() > rp + rq;
                if apart {
                    let first = (p > q) == (ins.opcode == O::Maximum);
                    if first {
                        rp
                    } else {
                        rq
                    }
                } else {
                    rp.max(rq)
                }
            }),
            O::Maximum | O::Minimum | O::Clamp => {
                each(&|i| (0..a.len()).map(|k| r(k, i)).fold(0.0, f64::max))
            }
            O::Sine | O::Cosine if a.len() == 1 => each(&|i| r(0, i).min(2.0)),
            O::Atan2 if a.len() == 2 => each(&|i| atan2_radius(x(0, i), x(1, i), r(0, i), r(1, i))),
            O::Compare if a.len() == 2 => self.compare(a, n),
            O::Select if a.len() == 3 => select_radii(a, n),
            O::And | O::Or | O::Not | O::Xor if v.dtype().is_pred() => {
                logical_radii(ins.opcode, a, n)
            }
            O::Convert if a.len() == 1 && !float_out => {
                let to_pred = v.dtype().is_pred();
                // a truncation may step by one more than the operand moved
                each(&|i| match r(0, i) {
                    0.0 => 0.0,
                    q if to_pred => {
                        if x(0, i).abs() <= q {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    q => q.ceil() + 1.0,
                })
            }
            // rsqrt is monotone on each side of 0, tan on each branch
            op if a.len() == 1
                && (op.is_nondecreasing_unary()
                    || matches!(op, O::Rsqrt | O::Convert | O::Tan)) =>
            {
                self.monotone(ins, a, v)?
            }
            O::Power if a.len() == 2 => self.power(ins, a, v)?,
            O::IsFinite => each(&|i| if r(0, i).is_finite() { 0.0 } else { 1.0 }),
            _ => return self.family(ins, a, v),
        })
    }

    /// A comparison may flip where its operands' intervals overlap.
    fn compare(&self, a: &[(&Literal, Vec<f64>)], n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let (p, q) = (at(a[0].0, i), at(a[1].0, i));
                let w = rad(&a[0].1, i) + rad(&a[1].1, i);
                if w == 0.0 {
                    return 0.0;
                }
                let d = (p - q).abs();
                // NaN operands compare false everywhere but may stop being NaN
                if d.is_nan() || !w.is_finite() || d <= w {
                    1.0
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// A monotone function (or a monotone piece, for tan): the image of
    /// `[x - r, x + r]`, evaluated in f64 at its ends.
    fn monotone(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let (x, r) = (a[0].0, &a[0].1);
        let n = v.element_count();
        let xs: Vec<f64> = (0..x.element_count()).map(|i| x.get_f64(i)).collect();
        let lo: Vec<f64> = xs.iter().zip(r).map(|(p, q)| p - q).collect();
        let hi: Vec<f64> = xs.iter().zip(r).map(|(p, q)| p + q).collect();
        let mid = self.f64_op(ins, &[f64_literal(x, &xs)?], None)?;
        let lo = self.f64_op(ins, &[f64_literal(x, &lo)?], None)?;
        let hi = self.f64_op(ins, &[f64_literal(x, &hi)?], None)?;
        let tan = ins.opcode == Opcode::Tan;
        Ok((0..n)
            .map(|i| {
                let ri = rad(r, i);
                if ri == 0.0 {
                    return 0.0;
                }
                if !ri.is_finite() {
                    return f64::INFINITY;
                }
                let (c, l, h) = (mid.get_f64(i), lo.get_f64(i), hi.get_f64(i));
                if tan && (l > c || c > h) {
                    // a pole between the ends
                    return f64::INFINITY;
                }
                let d = (l - c).abs().max((h - c).abs());
                if d.is_nan() && !c.is_nan() {
                    f64::INFINITY
                } else if d.is_nan() {
                    0.0
                } else {
                    d * (1.0 + F64_SLACK) + c.abs() * F64_SLACK
                }
            })
            .collect())
    }

    /// `pow(x, y)` is monotone in each operand for `x > 0`: the corners of
    /// the box bound it. Elsewhere it is bounded only on exact operands.
    fn power(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let n = v.element_count();
        let (x, y) = (a[0].0, a[1].0);
        let side = |s: f64, t: f64| -> (Vec<f64>, Vec<f64>) {
            (0..n)
                .map(|i| {
                    (
                        at(x, i) + s * rad(&a[0].1, i),
                        at(y, i) + t * rad(&a[1].1, i),
                    )
                })
                .unzip()
        };
        let shaped = |vals: &[f64]| -> Result<Literal, OpError> { f64_literal(v, vals) };
        let (cx, cy) = side(0.0, 0.0);
        let mid = self.f64_op(ins, &[shaped(&cx)?, shaped(&cy)?], None)?;
        let mut out = vec![0.0f64; n];
        for (s, t) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)] {
            let (px, py) = side(s, t);
            let c = self.f64_op(ins, &[shaped(&px)?, shaped(&py)?], None)?;
            for (i, o) in out.iter_mut().enumerate() {
                let d = (c.get_f64(i) - mid.get_f64(i)).abs();
                *o = o.max(if d.is_nan() { f64::INFINITY } else { d });
            }
        }
        for (i, o) in out.iter_mut().enumerate() {
            let (rx, ry) = (rad(&a[0].1, i), rad(&a[1].1, i));
            if rx == 0.0 && ry == 0.0 {
                *o = 0.0;
            } else if at(x, i) - rx <= 0.0 {
                *o = f64::INFINITY;
            } else {
                *o = *o * (1.0 + F64_SLACK) + mid.get_f64(i).abs() * F64_SLACK;
            }
        }
        Ok(out)
    }
}

/// Ops that sum many terms: they round at every step, also on exact
/// operands, and their unrounded result is not the f64 run's.
pub(super) fn sums(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Reduce
            | O::ReduceWindow
            | O::Dot
            | O::Convolution
            | O::Scatter
            | O::SelectAndScatter
            | O::TriangularSolve
    )
}

/// Ops that may have more than one legal result on exact operands: every
/// rounding op and every sum (the witness runs move only these).
pub(super) fn may_round(op: Opcode) -> bool {
    own_error(op) != Own::Exact || sums(op)
}

/// Whether the reference computes `op` with libm (one ulp of its own on f64).
pub(super) fn transcendental(op: Opcode) -> bool {
    own_error(op) == Own::Transcendental
}

/// Elementwise ops whose unrounded result the f64 run gives: every
/// rounding op but the sums.
fn elementwise_rounding(op: Opcode) -> bool {
    own_error(op) != Own::Exact && !sums(op)
}

/// Whether converting `from` to `to` is exact (a float widening).
fn widens(from: ElementType, to: ElementType) -> bool {
    match (from.float_format(), to.float_format()) {
        (Some(a), Some(b)) => {
            a.mantissa_bits <= b.mantissa_bits
                && a.exponent_bits <= b.exponent_bits
                && (b.has_inf || !a.has_inf)
        }
        _ => false,
    }
}

/// `atan2(y, x)` moves by at most the box's diagonal over the smallest
/// distance from the origin inside it (its gradient is `1 / |(x, y)|`);
/// unbounded where the box touches the branch cut (x < 0, y = 0) or
/// the origin.
fn atan2_radius(y: f64, x: f64, ry: f64, rx: f64) -> f64 {
    if rx == 0.0 && ry == 0.0 {
        return 0.0;
    }
    let diag = rx.hypot(ry);
    let rho = x.hypot(y);
    if rho <= diag || (x - rx < 0.0 && y.abs() <= ry) || !diag.is_finite() {
        return f64::INFINITY;
    }
    diag / (rho - diag) * (1.0 + F64_SLACK)
}

/// A select's radius: the chosen branch's, or, where the predicate may
/// flip, the distance to the other branch too.
fn select_radii(a: &[(&Literal, Vec<f64>)], n: usize) -> Vec<f64> {
    let x = |k: usize, i: usize| at(a[k].0, i);
    let r = |k: usize, i: usize| rad(&a[k].1, i);
    (0..n)
        .map(|i| {
            let chosen = if at(a[0].0, i) != 0.0 { 1 } else { 2 };
            if r(0, i) == 0.0 {
                r(chosen, i)
            } else {
                let other = 3 - chosen;
                let d = (x(1, i) - x(2, i)).abs();
                let w = d + r(other, i);
                if w.is_nan() {
                    f64::INFINITY
                } else {
                    r(chosen, i).max(w)
                }
            }
        })
        .collect()
}

/// A logical op on predicates may flip (radius 1) where an operand may,
/// unless a certain operand decides it (a false decides an `and`, a true
/// an `or`).
fn logical_radii(op: Opcode, a: &[(&Literal, Vec<f64>)], n: usize) -> Vec<f64> {
    let x = |k: usize, i: usize| at(a[k].0, i);
    let r = |k: usize, i: usize| rad(&a[k].1, i);
    let absorbing = match op {
        Opcode::And => Some(false),
        Opcode::Or => Some(true),
        _ => None,
    };
    (0..n)
        .map(|i| {
            let decided = absorbing
                .is_some_and(|b| (0..a.len()).any(|k| r(k, i) == 0.0 && (x(k, i) != 0.0) == b));
            if !decided && (0..a.len()).any(|k| r(k, i) > 0.0) {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}
