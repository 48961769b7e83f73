//! fft: FFT, IFFT, RFFT and IRFFT over the last 1 to 3 dimensions, as
//! direct discrete Fourier transforms (no fast algorithm: no error grows with
//! the butterfly stages).
//!
//! Accuracy contract:
//!
//! - Twiddles `exp(∓2πi·m/N)` are reduced exactly to an angle in `[0, π/4]`
//!   (the octant symmetries of `m/N` in integers), so multiples of a quarter
//!   turn are exact (`±1`, `±i`, and `sin = 0` where it is 0) and every other
//!   twiddle is the platform libm's cos/sin of a double-double angle: within
//!   about 1 f64 ULP.
//! - One transform along one dimension sums every product `x·w` EXACTLY
//!   (error-free products, Shewchuk's exact sum) and rounds once: into the
//!   output's component type for the last pass (so a 1-D c64 transform is the
//!   correctly rounded value of the sum with the f64 twiddles), and into f64
//!   for earlier passes of a multi-dimensional transform (each pass adds at
//!   most about 2 f64 ULPs of `Σ|x·w|` before the last rounding).
//! - The inverse transforms scale by `1/N` after the sum: exact when `N` is a
//!   power of two; otherwise the exact sum is rounded to f64, divided in f64,
//!   and rounded again (about 1 f64 ULP more before the final rounding).
//! - IRFFT extends the half spectrum by conjugate symmetry; the imaginary
//!   parts of the `0` and (even `N`) `N/2` entries do not contribute, as in
//!   numpy's `irfft`.
//! - Non-finite inputs give the IEEE sum of the plain products (NaN where
//!   an infinity meets a zero or an opposite infinity).
//!
//! The work is `Π N · Σ N` per batch element; a transform longer than
//! [`MAX_TERMS`] multiply-adds in all is `Unsupported`.

use super::error::out;
use super::exact_sum::exact_sum;
use super::OpError;
use crate::hlo::{ElementType, FftType, Instruction};
use crate::literal::{component_type, Literal};

type C = (f64, f64);

/// Most multiply-adds one fft may take.
pub(crate) const MAX_TERMS: u128 = 1 << 34;

fn invalid<T>(msg: impl Into<String>) -> Result<T, OpError> {
    Err(OpError::Invalid(msg.into()))
}

/// `(cos φ, sin φ)` for `φ = (π/2)·r/n`, `0 <= r <= n/2` (so `φ <= π/4`).
fn octant(r: u64, n: u64) -> C {
    if r == 0 {
        return (1.0, 0.0);
    }
    const PI_2_HI: f64 = std::f64::consts::FRAC_PI_2;
    const PI_2_LO: f64 = 6.123_233_995_736_766e-17;
    let p = r as f64;
    let nf = n as f64;
    let hi = p * PI_2_HI;
    let lo = p.mul_add(PI_2_HI, -hi) + p * PI_2_LO;
    let q1 = hi / nf;
    let rem = (-q1).mul_add(nf, hi) + lo;
    let q2 = rem / nf;
    let (s, c) = q1.sin_cos();
    (c - s * q2, s + c * q2)
}

/// `(cos θ, sin θ)` for `θ = 2π·m/n`, with the symmetries applied exactly.
pub(crate) fn unit_root(m: u64, n: u64) -> C {
    let (m, n) = (u128::from(m % n), u128::from(n));
    let q4 = 4 * m;
    let (q, r) = (q4 / n, q4 % n);
    // n <= u64::MAX, so r and n - r fit in u64
    let (c, s) = if 2 * r <= n {
        octant(r as u64, n as u64)
    } else {
        let (c, s) = octant((n - r) as u64, n as u64);
        (s, c)
    };
    match q {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    }
}

/// `a·b` as the exact pair `(p, e)`, `p + e = a·b` (just `p` when not finite).
fn two_product(a: f64, b: f64, terms: &mut Vec<f64>) {
    let p = a * b;
    terms.push(p);
    if p.is_finite() {
        let e = a.mul_add(b, -p);
        if e != 0.0 {
            terms.push(e);
        }
    }
}

/// How one pass reads and writes along its dimension.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Complex to complex; `inverse` uses `exp(+...)` and scales by `1/N`.
    Complex { inverse: bool },
    /// Real (as complex with zero imaginary parts) to the half spectrum.
    RealToHalf,
    /// The half spectrum to real values (inverse, scaled by `1/N`).
    HalfToReal,
}

/// One pass along dimension `axis` of `data` (row-major `dims`) of length
/// `n`; the result's dims are `dims` with `axis` set to the output length.
/// Each component is rounded once into `t` (f64 for an inner pass).
fn pass(data: &[C], dims: &[usize], axis: usize, n: usize, mode: Mode, t: ElementType) -> Vec<C> {
    let len_in = dims[axis];
    let len_out = match mode {
        Mode::RealToHalf => n / 2 + 1,
        _ => n,
    };
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let inverse = !matches!(mode, Mode::Complex { inverse: false } | Mode::RealToHalf);
    let roots: Vec<C> = (0..n as u64)
        .map(|m| {
            let (c, s) = unit_root(m, n as u64);
            (c, if inverse { s } else { -s })
        })
        .collect();
    let pow2 = n.is_power_of_two();
    let finish = |terms: &[f64]| -> f64 {
        if !inverse {
            exact_sum(terms, t)
        } else if pow2 {
            exact_sum(terms, t) / n as f64
        } else {
            exact_sum(terms, ElementType::F64) / n as f64
        }
    };
    let mut res = vec![(0.0, 0.0); outer * len_out * inner];
    let (mut re, mut im) = (Vec::new(), Vec::new());
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| data[(o * len_in + k) * inner + i];
            for k in 0..len_out {
                re.clear();
                im.clear();
                for j in 0..n {
                    let x = match mode {
                        Mode::HalfToReal if j >= len_in => {
                            let (a, b) = at(n - j);
                            (a, -b)
                        }
                        _ => at(j),
                    };
                    let w = roots[((k as u128 * j as u128) % n as u128) as usize];
                    two_product(x.0, w.0, &mut re);
                    two_product(-x.1, w.1, &mut re);
                    if mode != Mode::HalfToReal {
                        two_product(x.0, w.1, &mut im);
                        two_product(x.1, w.0, &mut im);
                    }
                }
                let v = (finish(&re), if im.is_empty() { 0.0 } else { finish(&im) });
                res[(o * len_out + k) * inner + i] = v;
            }
        }
    }
    res
}

/// Evaluates `fft` on operand `x`.
pub(crate) fn fft(ins: &Instruction, x: &Literal) -> Result<Literal, OpError> {
    let o = out(ins)?;
    let kind = ins
        .attrs
        .fft_type
        .ok_or_else(|| OpError::Invalid("fft without fft_type".into()))?;
    let lens: Vec<usize> = ins
        .attrs
        .fft_length
        .as_ref()
        .ok_or_else(|| OpError::Invalid("fft without fft_length".into()))?
        .iter()
        .map(|&l| usize::try_from(l).unwrap_or(0))
        .collect();
    let rank = x.dims().len();
    if lens.is_empty() || lens.len() > 3 || lens.len() > rank || lens.contains(&0) {
        return invalid(format!("fft_length {lens:?} of a rank-{rank} operand"));
    }
    let first = rank - lens.len();
    let last = *lens.last().unwrap_or(&1);
    let mut in_fft = lens.clone();
    let mut out_fft = lens.clone();
    match kind {
        FftType::Rfft => *out_fft.last_mut().unwrap_or(&mut 0) = last / 2 + 1,
        FftType::Irfft => *in_fft.last_mut().unwrap_or(&mut 0) = last / 2 + 1,
        _ => {}
    }
    let in_dims = x.dims().to_vec();
    let want_out: Vec<usize> = in_dims[..first].iter().chain(&out_fft).copied().collect();
    let out_dims: Vec<usize> = o.dims.iter().map(|&d| d.max(0) as usize).collect();
    if in_dims[first..] != in_fft[..] || out_dims != want_out {
        return invalid(format!(
            "fft {kind:?} with fft_length {lens:?}: operand {:?} and result {out_dims:?} do not fit",
            in_dims
        ));
    }
    let complex_in = x.dtype().is_complex();
    if complex_in == (kind == FftType::Rfft) || o.dtype.is_complex() == (kind == FftType::Irfft) {
        return invalid(format!("fft {kind:?} from {} to {}", x.dtype(), o.dtype));
    }
    let t = component_type(o.dtype).unwrap_or(o.dtype);
    let batch: usize = in_dims[..first].iter().product();
    let work: u128 = lens.iter().map(|&n| n as u128).product::<u128>()
        * lens.iter().map(|&n| n as u128).sum::<u128>()
        * batch as u128;
    if work > MAX_TERMS {
        return Err(OpError::Unsupported(format!(
            "fft of {work} multiply-adds (the reference's direct transform takes at most {MAX_TERMS})"
        )));
    }
    let mut data: Vec<C> = if complex_in {
        x.to_complex_vec()
    } else {
        x.to_f64_vec().into_iter().map(|v| (v, 0.0)).collect()
    };
    let mut dims = in_dims;
    // the order of the passes: RFFT's real pass first, IRFFT's last
    let axes: Vec<usize> = (first..rank).collect();
    let order: Vec<usize> = match kind {
        FftType::Rfft => axes.iter().rev().copied().collect(),
        _ => axes.clone(),
    };
    for (step, &axis) in order.iter().enumerate() {
        let n = lens[axis - first];
        let mode = match kind {
            FftType::Fft => Mode::Complex { inverse: false },
            FftType::Ifft => Mode::Complex { inverse: true },
            FftType::Rfft if axis == rank - 1 => Mode::RealToHalf,
            FftType::Rfft => Mode::Complex { inverse: false },
            FftType::Irfft if axis == rank - 1 => Mode::HalfToReal,
            FftType::Irfft => Mode::Complex { inverse: true },
        };
        let final_pass = step + 1 == order.len();
        let pt = if final_pass { t } else { ElementType::F64 };
        data = pass(&data, &dims, axis, n, mode, pt);
        dims[axis] = if mode == Mode::RealToHalf {
            n / 2 + 1
        } else {
            n
        };
    }
    let lit = if kind == FftType::Irfft {
        let v: Vec<f64> = data.iter().map(|c| c.0).collect();
        Literal::from_f64s(o, &v)?
    } else {
        Literal::from_complex(o, &data)?
    };
    Ok(lit)
}

#[cfg(test)]
mod tests {
    use super::unit_root;

    #[test]
    fn quarter_turns_are_exact_and_others_within_an_ulp() {
        assert_eq!(unit_root(0, 7), (1.0, 0.0));
        assert_eq!(unit_root(1, 4), (0.0, 1.0));
        assert_eq!(unit_root(2, 4), (-1.0, 0.0));
        assert_eq!(unit_root(6, 8), (0.0, -1.0));
        assert_eq!(unit_root(9, 4), (0.0, 1.0));
        let (c, s) = unit_root(1, 8);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((c - h).abs() <= f64::EPSILON / 2.0 && (s - h).abs() <= f64::EPSILON / 2.0);
        // 2π/12 = π/6: cos √3/2, sin 1/2; 5/12 turns: cos -√3/2, sin 1/2
        let (c, s) = unit_root(1, 12);
        assert!((c - 0.75f64.sqrt()).abs() <= f64::EPSILON && (s - 0.5).abs() <= f64::EPSILON);
        let (c, s) = unit_root(5, 12);
        assert!((c + 0.75f64.sqrt()).abs() <= f64::EPSILON && (s - 0.5).abs() <= f64::EPSILON);
    }
}
