//! The simple checker: exact for integers and pred, NaN by class, signed zeros
//! distinct, a ULP (or absolute/relative) bound for floats. The full tolerance
//! model (backend numerics) lives in `check`.

use std::fmt;

use super::spec::Tolerance;
use crate::hlo::ElementType;
use crate::literal::Literal;

/// One differing element.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which output.
    pub output: usize,
    /// Multi-dimensional index.
    pub index: Vec<usize>,
    /// Input values at the same index (for elementwise cases), as text.
    pub inputs: Vec<String>,
    /// The expected value, as text.
    pub expected: String,
    /// The actual value, as text.
    pub actual: String,
    /// Distance in units in the last place (floats), or None (integers, NaN class).
    pub ulp: Option<u64>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "output {} at {:?}: ", self.output, self.index)?;
        if !self.inputs.is_empty() {
            write!(f, "inputs ({}) ", self.inputs.join(", "))?;
        }
        write!(f, "expected {} actual {}", self.expected, self.actual)?;
        match self.ulp {
            Some(u) => write!(f, " ({u} ulp)"),
            None => Ok(()),
        }
    }
}

/// The result of comparing two runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every element within tolerance.
    Agree {
        /// The largest ULP distance seen among floats (0 when bit-exact).
        max_ulp: u64,
    },
    /// Some elements differ beyond tolerance.
    Mismatch {
        /// How many elements differ.
        count: usize,
        /// The worst ones (by ULP), at most [`WORST`].
        worst: Vec<Mismatch>,
        /// The largest ULP distance.
        max_ulp: u64,
    },
    /// The outputs differ in number or shape.
    ShapeMismatch(String),
}

/// How many worst mismatches a verdict keeps.
pub const WORST: usize = 5;

impl Verdict {
    /// True for agreement.
    pub fn agrees(&self) -> bool {
        matches!(self, Verdict::Agree { .. })
    }
    /// The largest ULP distance, when known.
    pub fn max_ulp(&self) -> Option<u64> {
        match self {
            Verdict::Agree { max_ulp } | Verdict::Mismatch { max_ulp, .. } => Some(*max_ulp),
            Verdict::ShapeMismatch(_) => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Agree { max_ulp } => write!(f, "agree (max {max_ulp} ulp)"),
            Verdict::Mismatch {
                count,
                worst,
                max_ulp,
            } => {
                write!(f, "mismatch: {count} element(s) differ")?;
                if *max_ulp > 0 {
                    write!(f, ", max {max_ulp} ulp")?;
                }
                for m in worst {
                    write!(f, "\n  {m}")?;
                }
                Ok(())
            }
            Verdict::ShapeMismatch(s) => write!(f, "shape mismatch: {s}"),
        }
    }
}

/// The float's bits mapped to a monotone integer line (so ULP = difference).
fn ordered(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    if bits & sign != 0 {
        -((bits & !sign) as i128)
    } else {
        bits as i128
    }
}

/// Formats element `i` of a literal exactly enough to reproduce it.
pub fn element_text(l: &Literal, i: usize) -> String {
    let t = l.dtype();
    if t.is_float() {
        let v = l.get_f64(i);
        format!(
            "{v:?} (0x{:0w$x})",
            l.get_bits(i),
            w = (t.bit_width() as usize).div_ceil(4)
        )
    } else if t.is_pred() {
        (l.get_i128(i) != 0).to_string()
    } else {
        l.get_i128(i).to_string()
    }
}

fn unflatten(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        if dims[d] > 0 {
            idx[d] = i % dims[d];
            i /= dims[d];
        }
    }
    idx
}

/// Compares one element pair; returns (ulp distance, within tolerance).
fn compare_element(
    t: ElementType,
    e: &Literal,
    a: &Literal,
    i: usize,
    tol: Tolerance,
    strict: bool,
) -> (Option<u64>, bool) {
    let (eb, ab) = (e.get_bits(i), a.get_bits(i));
    if !t.is_float() {
        return (None, eb == ab);
    }
    let (ev, av) = (e.get_f64(i), a.get_f64(i));
    if ev.is_nan() || av.is_nan() {
        return (None, ev.is_nan() && av.is_nan());
    }
    let w = t.bit_width();
    let ulp = ordered(eb, w).abs_diff(ordered(ab, w)) as u64;
    if eb == ab {
        return (Some(0), true);
    }
    if ev.is_infinite() || av.is_infinite() || (ev == 0.0 && av == 0.0) || strict {
        // infinities and signed zeros must match exactly
        return (Some(ulp), false);
    }
    let ok = match tol {
        Tolerance::Exact => false,
        Tolerance::Ulp(n) => ulp <= n,
        Tolerance::Abs(x) => (ev - av).abs() <= x,
        Tolerance::Rel(x) => (ev - av).abs() <= x * ev.abs(),
    };
    (Some(ulp), ok)
}

/// Compares expected and actual outputs.
///
/// `inputs` are quoted in mismatches when they have the output's shape
/// (elementwise cases).
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::property::{compare, Tolerance};
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let e = Literal::from_f64s(&s, &[1.0, -0.0]).unwrap();
/// let a = Literal::from_f64s(&s, &[1.0, 0.0]).unwrap();
/// let v = compare(&[e.clone()], &[a], &[], Tolerance::Ulp(4), false);
/// assert!(!v.agrees()); // signed zeros are part of the contract
/// assert!(compare(&[e.clone()], &[e], &[], Tolerance::Exact, false).agrees());
/// ```
pub fn compare(
    expected: &[Literal],
    actual: &[Literal],
    inputs: &[Literal],
    tol: Tolerance,
    strict: bool,
) -> Verdict {
    if expected.len() != actual.len() {
        return Verdict::ShapeMismatch(format!(
            "expected {} outputs, got {}",
            expected.len(),
            actual.len()
        ));
    }
    let mut count = 0;
    let mut max_ulp = 0u64;
    let mut worst: Vec<Mismatch> = Vec::new();
    for (o, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e.dtype() != a.dtype() || e.dims() != a.dims() {
            return Verdict::ShapeMismatch(format!(
                "output {o}: expected {}, got {}",
                e.shape(),
                a.shape()
            ));
        }
        let t = e.dtype();
        for i in 0..e.element_count() {
            let (ulp, ok) = compare_element(t, e, a, i, tol, strict);
            if let Some(u) = ulp {
                max_ulp = max_ulp.max(u);
            }
            if ok {
                continue;
            }
            count += 1;
            let rank = ulp.unwrap_or(u64::MAX);
            if worst.len() < WORST || worst.iter().any(|m| m.ulp.unwrap_or(u64::MAX) < rank) {
                let m = Mismatch {
                    output: o,
                    index: unflatten(i, e.dims()),
                    inputs: inputs
                        .iter()
                        .filter(|x| x.dims() == e.dims())
                        .map(|x| element_text(x, i))
                        .collect(),
                    expected: element_text(e, i),
                    actual: element_text(a, i),
                    ulp,
                };
                worst.push(m);
                worst.sort_by_key(|m| std::cmp::Reverse(m.ulp.unwrap_or(u64::MAX)));
                worst.truncate(WORST);
            }
        }
    }
    if count == 0 {
        Verdict::Agree { max_ulp }
    } else {
        Verdict::Mismatch {
            count,
            worst,
            max_ulp,
        }
    }
}
