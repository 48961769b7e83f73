//! The check ops' own comparisons (not the tolerance model's judge): exact
//! IEEE equality, ULP distance, absolute difference.

use crate::check::ulp_distance;
use crate::hlo::stablehlo::CheckKind;
use crate::literal::Literal;

/// `expect_close`'s ULP budget when the op names none (the StableHLO interpreter's default).
pub const DEFAULT_MAX_ULP: u64 = 3;
/// `expect_almost_eq`'s absolute tolerance when the op names none.
pub const DEFAULT_ALMOST_EQ_TOLERANCE: f64 = 1e-3;

/// A check that held, with the worst difference seen.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckPass {
    /// Largest ULP distance over the elements (floats; 0 for exact checks).
    pub max_ulp: u128,
    /// Largest absolute difference over the finite elements.
    pub max_abs: f64,
}

/// The first element where a check failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckFailure {
    /// Row-major element index (None: the shapes differ).
    pub index: Option<usize>,
    /// What the program computed there.
    pub seen: String,
    /// What the check expected.
    pub expected: String,
    /// How far apart (ULP or absolute), in words.
    pub distance: String,
    /// How many elements fail.
    pub failing: usize,
}

/// A complex check: each component judged as a real one; the failure reported
/// is the first failing element in row-major order, with both components shown.
fn judge_planes(
    kind: CheckKind,
    (are, aim): (Literal, Literal),
    (ere, eim): (Literal, Literal),
    max_ulp: Option<u64>,
    tolerance: Option<f64>,
) -> Result<CheckPass, CheckFailure> {
    let re = judge_check(kind, &are, &ere, max_ulp, tolerance);
    let im = judge_check(kind, &aim, &eim, max_ulp, tolerance);
    let both = |i: usize, a: &Literal, b: &Literal| format!("({}, {})", show(a, i), show(b, i));
    // failing counts failing components (an element may count twice)
    let (f, part, failing) = match (re, im) {
        (Ok(r), Ok(i)) => {
            return Ok(CheckPass {
                max_ulp: r.max_ulp.max(i.max_ulp),
                max_abs: r.max_abs.max(i.max_abs),
            })
        }
        (Err(fr), Err(fi)) => {
            let n = fr.failing + fi.failing;
            if fi.index < fr.index {
                (fi, "imaginary", n)
            } else {
                (fr, "real", n)
            }
        }
        (Err(fr), Ok(_)) => {
            let n = fr.failing;
            (fr, "real", n)
        }
        (Ok(_), Err(fi)) => {
            let n = fi.failing;
            (fi, "imaginary", n)
        }
    };
    let k = f.index.unwrap_or(0);
    Err(CheckFailure {
        index: f.index,
        seen: both(k, &are, &aim),
        expected: both(k, &ere, &eim),
        distance: format!("{} in the {part} part", f.distance),
        failing,
    })
}

fn show(l: &Literal, i: usize) -> String {
    let t = l.dtype();
    if t.is_float() {
        format!(
            "{:e} (0x{:0w$X})",
            l.get_f64(i),
            l.get_bits(i),
            w = t.bit_width() as usize / 4
        )
    } else {
        format!("{}", l.get_i128(i))
    }
}

/// Judges `actual` against `expected` under check `kind` (`max_ulp` and
/// `tolerance` as the op gives them).
///
/// ```
/// use xla_props::filetest::stablehlo_checks::judge_check;
/// use xla_props::hlo::{ArrayShape, ElementType, stablehlo::CheckKind};
/// use xla_props::literal::Literal;
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let a = Literal::from_f64s(&s, &[1.0, 2.0]).unwrap();
/// let b = Literal::from_f64s(&s, &[1.0, 2.0000002]).unwrap();
/// assert!(judge_check(CheckKind::Eq, &a, &b, None, None).is_err());
/// assert_eq!(judge_check(CheckKind::Close, &a, &b, None, None).unwrap().max_ulp, 1);
/// ```
pub fn judge_check(
    kind: CheckKind,
    actual: &Literal,
    expected: &Literal,
    max_ulp: Option<u64>,
    tolerance: Option<f64>,
) -> Result<CheckPass, CheckFailure> {
    if actual.dtype() != expected.dtype() || actual.dims() != expected.dims() {
        return Err(CheckFailure {
            index: None,
            seen: format!("{}", actual.shape()),
            expected: format!("{}", expected.shape()),
            distance: "different shapes".into(),
            failing: actual.element_count().max(expected.element_count()),
        });
    }
    if let (Some(a), Some(e)) = (actual.planes(), expected.planes()) {
        return judge_planes(kind, a, e, max_ulp, tolerance);
    }
    let t = actual.dtype();
    let budget = u128::from(max_ulp.unwrap_or(DEFAULT_MAX_ULP));
    let tol = tolerance.unwrap_or(DEFAULT_ALMOST_EQ_TOLERANCE);
    let mut pass = CheckPass {
        max_ulp: 0,
        max_abs: 0.0,
    };
    let mut first: Option<CheckFailure> = None;
    let mut failing = 0;
    for i in 0..actual.element_count() {
        let (ok, distance) = if t.is_float() {
            let (a, e) = (actual.get_f64(i), expected.get_f64(i));
            let ulp = ulp_distance(actual.get_bits(i), expected.get_bits(i), t);
            let both_nan = a.is_nan() && e.is_nan();
            if let Some(u) = ulp.filter(|_| a.is_finite() && e.is_finite()) {
                pass.max_ulp = pass.max_ulp.max(u);
                pass.max_abs = pass.max_abs.max((a - e).abs());
            }
            match kind {
                // IEEE equality: NaN != NaN, -0 == +0
                CheckKind::Eq => (
                    a == e,
                    format!("{} ULP", ulp.map_or("?".into(), |u| u.to_string())),
                ),
                CheckKind::Close => {
                    let close = both_nan || a == e || ulp.is_some_and(|u| u <= budget);
                    (
                        close,
                        format!(
                            "{} ULP (budget {budget})",
                            ulp.map_or("?".into(), |u| u.to_string())
                        ),
                    )
                }
                CheckKind::AlmostEq => {
                    let near = both_nan || a == e || (a - e).abs() <= tol;
                    (
                        near,
                        format!("{:e} absolute (tolerance {tol:e})", (a - e).abs()),
                    )
                }
            }
        } else {
            let (a, e) = (actual.get_i128(i), expected.get_i128(i));
            (a == e, format!("{}", a.abs_diff(e)))
        };
        if !ok {
            failing += 1;
            if first.is_none() {
                first = Some(CheckFailure {
                    index: Some(i),
                    seen: show(actual, i),
                    expected: show(expected, i),
                    distance,
                    failing: 0,
                });
            }
        }
    }
    match first {
        Some(mut f) => {
            f.failing = failing;
            Err(f)
        }
        None => Ok(pass),
    }
}
