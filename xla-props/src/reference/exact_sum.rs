//! The exact sum of many f64 values (Shewchuk's non-overlapping partials,
//! ending as Python's `fsum`), rounded so that one more rounding into the
//! target type is correct: what a plain float `add` reduction and the fft
//! sum with.

use crate::hlo::ElementType;

/// The exact sum of `xs`, as an f64 that rounds ONCE into `t` correctly:
/// the correctly rounded f64 sum for f64, and the sum rounded to odd (a
/// sticky last bit) for narrower types. NaN and opposite infinities give NaN.
pub(crate) fn exact_sum(xs: &[f64], t: ElementType) -> f64 {
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let pinf = xs.contains(&f64::INFINITY);
    let ninf = xs.contains(&f64::NEG_INFINITY);
    match (pinf, ninf) {
        (true, true) => return f64::NAN,
        (true, false) => return f64::INFINITY,
        (false, true) => return f64::NEG_INFINITY,
        _ => {}
    }
    let mut partials: Vec<f64> = Vec::new();
    for &x in xs {
        msum_add(&mut partials, x);
    }
    if partials.iter().any(|p| !p.is_finite()) {
        // only f64 inputs near f64::MAX get here: the sum overflows
        return xs.iter().sum();
    }
    let hi = fsum_round(&partials);
    if hi == 0.0 {
        return if xs.iter().all(|&x| x == 0.0 && x.is_sign_negative()) && !xs.is_empty() {
            -0.0
        } else {
            0.0
        };
    }
    if t == ElementType::F64 {
        return hi;
    }
    // sign of the residual exact - hi
    let mut rest = partials.clone();
    msum_add(&mut rest, -hi);
    let residual = rest
        .iter()
        .rev()
        .copied()
        .find(|&p| p != 0.0)
        .unwrap_or(0.0);
    if residual == 0.0 {
        return hi;
    }
    // truncation toward zero, then force the last bit odd
    let toward_zero = |v: f64| f64::from_bits(v.to_bits() - 1);
    let away = |v: f64| f64::from_bits(v.to_bits() + 1);
    let trunc = if (residual > 0.0) == (hi > 0.0) {
        hi
    } else {
        toward_zero(hi)
    };
    if trunc.to_bits() & 1 == 1 {
        trunc
    } else {
        away(trunc)
    }
}

/// Shewchuk's exact addition into non-overlapping partials (increasing magnitude).
fn msum_add(partials: &mut Vec<f64>, mut x: f64) {
    let mut i = 0;
    for j in 0..partials.len() {
        let mut y = partials[j];
        if x.abs() < y.abs() {
            std::mem::swap(&mut x, &mut y);
        }
        let hi = x + y;
        let lo = y - (hi - x);
        if lo != 0.0 {
            partials[i] = lo;
            i += 1;
        }
        x = hi;
    }
    partials.truncate(i);
    partials.push(x);
}

/// The correctly rounded f64 value of a partials expansion (Python's fsum ending).
fn fsum_round(partials: &[f64]) -> f64 {
    let mut n = partials.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        let yr = x - hi;
        if y == yr {
            hi = x;
        }
    }
    hi
}
