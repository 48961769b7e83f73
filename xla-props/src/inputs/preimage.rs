//! Preimages for the backward (HC4-revise) step of the propagation: given
//! the interval a node's value must lie in, the intervals its operands may
//! take. Each function narrows only values that cannot meet the requirement.

use super::graph::{NodeId, Reducer};
use super::interval::Interval;
use crate::hlo::{ComparisonDirection, ElementType, Opcode};

/// The preimage of `z` under a nondecreasing function whose inverse is `inv`
/// and whose range is `range`.
pub(crate) fn inverse(z: Interval, range: Interval, inv: impl Fn(f64) -> f64) -> Interval {
    let z = z.intersect(range);
    if z.is_empty() {
        return Interval::EMPTY;
    }
    let lo = if z.lo <= range.lo {
        f64::NEG_INFINITY
    } else {
        inv(z.lo)
    };
    let hi = if z.hi >= range.hi {
        f64::INFINITY
    } else {
        inv(z.hi)
    };
    Interval::new(
        if lo.is_nan() { f64::NEG_INFINITY } else { lo },
        if hi.is_nan() { f64::INFINITY } else { hi },
    )
}

/// The values of `x` whose `abs` lies in `z`, given what `x` may be.
pub(crate) fn abs_preimage(z: Interval, x: Interval) -> Interval {
    let outer = Interval::new(-z.hi, z.hi);
    if z.lo <= 0.0 {
        return outer;
    }
    // |x| >= z.lo: a hole around 0, an interval once the sign is known
    if x.lo >= 0.0 {
        Interval::new(z.lo, z.hi)
    } else if x.hi <= 0.0 {
        Interval::new(-z.hi, -z.lo)
    } else {
        outer
    }
}

/// The values of `x` whose `sign` lies in `z`.
pub(crate) fn sign_preimage(z: Interval, dtype: Option<ElementType>) -> Interval {
    // the smallest value above 0 of the operand's type
    let tiny = match dtype.and_then(|t| t.float_format()) {
        Some(f) => f.min_subnormal(),
        None => 1.0,
    };
    if z.lo > 0.0 {
        Interval::at_least(tiny)
    } else if z.hi < 0.0 {
        Interval::at_most(-tiny)
    } else if z.lo > -1.0 && z.hi < 1.0 {
        Interval::point(0.0)
    } else if z.lo > -1.0 {
        Interval::at_least(0.0)
    } else if z.hi < 1.0 {
        Interval::at_most(0.0)
    } else {
        Interval::ALL
    }
}

/// The values of a convert's operand (of type `from`) whose result (of type
/// `to`) lies in `z`: a float converted to an integer is truncated, so
/// `trunc(x)` in `[lo, hi]` is `x` in `(lo - 1, hi + 1)` around zero.
pub(crate) fn convert_preimage(
    z: Interval,
    from: Option<ElementType>,
    to: Option<ElementType>,
) -> Interval {
    let (Some(from), Some(to)) = (from, to) else {
        return z;
    };
    if !(from.is_float() && !to.is_float() && !to.is_pred()) || z.is_empty() {
        return z;
    }
    let lo = if z.lo <= 0.0 {
        crate::check::next_up(z.lo - 1.0, from)
    } else {
        z.lo
    };
    let hi = if z.hi >= 0.0 {
        crate::check::next_down(z.hi + 1.0, from)
    } else {
        z.hi
    };
    Interval::new(lo, hi)
}

/// The direction that holds when `dir` does not (NaN aside).
pub(crate) fn negated_direction(dir: ComparisonDirection) -> ComparisonDirection {
    use ComparisonDirection as D;
    match dir {
        D::Eq => D::Ne,
        D::Ne => D::Eq,
        D::Lt => D::Ge,
        D::Le => D::Gt,
        D::Gt => D::Le,
        D::Ge => D::Lt,
    }
}

/// The values of `x` and `y` for which `x dir y` can hold, given what each
/// may be (`strict`: integers, where `x < y` is `x <= y - 1`).
pub(crate) fn compare_preimage(
    dir: ComparisonDirection,
    x: Interval,
    y: Interval,
    strict: bool,
) -> (Interval, Interval) {
    use ComparisonDirection as D;
    let gap = if strict { 1.0 } else { 0.0 };
    match dir {
        D::Lt => (
            Interval::at_most(y.hi - gap),
            Interval::at_least(x.lo + gap),
        ),
        D::Le => (Interval::at_most(y.hi), Interval::at_least(x.lo)),
        D::Gt => (
            Interval::at_least(y.lo + gap),
            Interval::at_most(x.hi - gap),
        ),
        D::Ge => (Interval::at_least(y.lo), Interval::at_most(x.hi)),
        D::Eq => (y, x),
        D::Ne => (Interval::ALL, Interval::ALL),
    }
}

/// Narrows `want[o]` to `i`.
pub(crate) fn narrow(o: NodeId, i: Interval, want: &mut [Interval]) {
    want[o] = want[o].intersect(i);
}

/// `select(p, a, b)` in `z`: a decided predicate narrows its branch; a
/// branch that cannot meet `z` must not be taken.
pub(crate) fn select(z: Interval, ops: &[NodeId], want: &mut [Interval]) {
    let [x, a, b, ..] = ops else {
        return;
    };
    let (x, a, b) = (*x, *a, *b);
    let p = want[x];
    if p.lo >= 1.0 {
        narrow(a, z, want);
    } else if p.hi <= 0.0 {
        narrow(b, z, want);
    } else {
        let a_ok = !want[a].intersect(z).is_empty();
        let b_ok = !want[b].intersect(z).is_empty();
        if !a_ok {
            narrow(x, Interval::point(0.0), want);
            narrow(b, z, want);
        }
        if !b_ok {
            narrow(x, Interval::point(1.0), want);
            narrow(a, z, want);
        }
    }
}

/// `compare(x, y, dir)` in `z` (`strict`: integers).
pub(crate) fn compare(
    z: Interval,
    dir: ComparisonDirection,
    strict: bool,
    ops: &[NodeId],
    want: &mut [Interval],
) {
    let [x, y, ..] = ops else {
        return;
    };
    let (x, y) = (*x, *y);
    let dir = if z.lo >= 1.0 {
        dir
    } else if z.hi <= 0.0 {
        negated_direction(dir)
    } else {
        return;
    };
    let (xi, yi) = compare_preimage(dir, want[x], want[y], strict);
    narrow(x, xi, want);
    narrow(y, yi, want);
}

/// `clamp(lo, v, hi) = min(max(v, lo), hi)` in `z`.
pub(crate) fn clamp(z: Interval, ops: &[NodeId], want: &mut [Interval]) {
    let [x, v, hi, ..] = ops else {
        return;
    };
    let (x, v, hi) = (*x, *v, *hi);
    let (li, hii) = (want[x], want[hi]);
    narrow(x, Interval::at_most(z.hi), want);
    narrow(hi, Interval::at_least(z.lo), want);
    let mut vi = Interval::ALL;
    if z.lo > li.hi {
        vi.lo = z.lo;
    }
    if z.hi < hii.lo {
        vi.hi = z.hi;
    }
    narrow(v, vi, want);
}

/// The dividends whose remainder can lie in `z`: the result has the
/// dividend's sign and a smaller magnitude.
pub(crate) fn remainder_dividend(z: Interval) -> Interval {
    let mut xi = Interval::ALL;
    if z.lo > 0.0 {
        xi.lo = z.lo;
    }
    if z.hi < 0.0 {
        xi.hi = z.hi;
    }
    xi
}

/// `add`, `subtract`, `multiply`, `divide` (floats) in `z`.
pub(crate) fn arithmetic(op: Opcode, z: Interval, ops: &[NodeId], want: &mut [Interval]) {
    let [x, y, ..] = ops else {
        return;
    };
    let (x, y) = (*x, *y);
    let (xi, yi) = (want[x], want[y]);
    match op {
        Opcode::Add => {
            narrow(x, z.minus(yi), want);
            narrow(y, z.minus(xi), want);
        }
        Opcode::Subtract => {
            narrow(x, z.plus(yi), want);
            narrow(y, xi.minus(z), want);
        }
        Opcode::Multiply if x == y => {
            // z = x^2: |x| <= sqrt(z.hi)
            let m = z.hi.max(0.0).sqrt();
            narrow(x, Interval::new(-m, m), want);
        }
        Opcode::Multiply => {
            if !yi.contains(0.0) {
                narrow(x, z.over(yi), want);
            }
            if !xi.contains(0.0) {
                narrow(y, z.over(xi), want);
            }
        }
        Opcode::Divide => {
            if !yi.contains(0.0) {
                narrow(x, z.times(yi), want);
            }
            if !z.contains(0.0) && !xi.contains(0.0) {
                narrow(y, xi.over(z), want);
            }
        }
        _ => {}
    }
}

/// `maximum`/`minimum` in `z`: no operand passes the bound on its side, and
/// when the other operand cannot reach the far bound, this one must.
pub(crate) fn extremum(op: Opcode, z: Interval, ops: &[NodeId], want: &mut [Interval]) {
    let Some(&x) = ops.first() else {
        return;
    };
    let max = op == Opcode::Maximum;
    let near = if max {
        Interval::at_most(z.hi)
    } else {
        Interval::at_least(z.lo)
    };
    narrow(x, near, want);
    let Some(&y) = ops.get(1) else {
        return;
    };
    narrow(y, near, want);
    let (xi, yi) = (want[x], want[y]);
    if max {
        if yi.hi < z.lo {
            narrow(x, Interval::at_least(z.lo), want);
        }
        if xi.hi < z.lo {
            narrow(y, Interval::at_least(z.lo), want);
        }
    } else {
        if yi.lo > z.hi {
            narrow(x, Interval::at_most(z.hi), want);
        }
        if xi.lo > z.hi {
            narrow(y, Interval::at_most(z.hi), want);
        }
    }
}

/// A reduce of `terms` elements in `z`, by its recognized reducer.
pub(crate) fn reduce(
    reducer: Option<Reducer>,
    terms: u64,
    z: Interval,
    ops: &[NodeId],
    want: &mut [Interval],
) {
    let [x, init, ..] = ops else {
        return;
    };
    let (x, init) = (*x, *init);
    let t = terms as f64;
    match reducer {
        Some(Reducer::Add) if t >= 1.0 => {
            let (xi, ii) = (want[x], want[init]);
            // x_k in z - (sum of the other t-1 terms) - init
            let others = xi.scale(t - 1.0).plus(ii);
            narrow(x, z.minus(others), want);
            narrow(init, z.minus(xi.scale(t)), want);
        }
        Some(Reducer::Max) => {
            narrow(x, Interval::at_most(z.hi), want);
            narrow(init, Interval::at_most(z.hi), want);
        }
        Some(Reducer::Min) => {
            narrow(x, Interval::at_least(z.lo), want);
            narrow(init, Interval::at_least(z.lo), want);
        }
        _ => {}
    }
}
