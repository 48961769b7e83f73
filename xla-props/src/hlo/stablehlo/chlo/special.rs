//! The special functions of `chlo` (erfc, erf_inv, lgamma, digamma) as
//! IR in the working type, with the approximations they are built from.

use super::E;
use crate::hlo::dtype::ElementType;
use crate::hlo::ir::Attrs;
use crate::hlo::ir::{ComparisonDirection, InstrId};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;

/// Lanczos approximation (g = 7, 9 terms): about 1e-15 relative in f64.
const LANCZOS_G: f64 = 7.0;
const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// Giles' single-precision erfinv polynomials (w < 5, and sqrt(w) - 3 otherwise).
const ERFINV_SMALL: [f64; 9] = [
    2.810_226_36e-08,
    3.432_739_39e-07,
    -3.523_387_7e-06,
    -4.391_506_54e-06,
    0.000_218_580_87,
    -0.001_253_725_03,
    -0.004_177_681_64,
    0.246_640_727,
    1.501_409_41,
];
const ERFINV_LARGE: [f64; 9] = [
    -0.000_200_214_257,
    0.000_100_950_558,
    0.001_349_343_22,
    -0.003_673_428_44,
    0.005_739_507_73,
    -0.007_622_461_3,
    0.009_438_870_47,
    1.001_674_06,
    2.832_976_82,
];

/// Terms of Laplace's continued fraction for erfc (converged to f64 from x = 1).
const ERFC_CF_TERMS: usize = 200;

/// erfc without cancellation: 1 - erf(x) below x = 1 (erfc(1) = 0.157, so
/// at most 3 bits cancel), and from x = 1 up Laplace's continued fraction
/// exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), whose
/// relative error is that of exp(-x^2): 1 - erf would keep none of erfc's
/// bits once erfc < 2^-53 (x > 5.9), nor its f16/bf16 bits well before.
pub(super) fn erfc(e: &mut E, x: InstrId) -> InstrId {
    use ComparisonDirection as D;
    use Opcode as O;
    let one = e.c(1.0);
    let r = e.un(O::Erf, x);
    let small = e.sub(one, r);
    // the fraction at max(x, 1): never divides by zero where it is not used
    let xs = e.bin(O::Maximum, x, one);
    let mut t = xs;
    for k in (1..=ERFC_CF_TERMS).rev() {
        let kc = e.c(k as f64 / 2.0);
        let q = e.div(kc, t);
        t = e.add(xs, q);
    }
    let x2 = e.mul(xs, xs);
    let nx2 = e.un(O::Negate, x2);
    let ex = e.un(O::Exponential, nx2);
    let sp = e.c(std::f64::consts::PI.sqrt());
    let den = e.mul(t, sp);
    let big = e.div(ex, den);
    let ge = e.cmp(D::Ge, x, one);
    e.sel(ge, big, small)
}

/// log1p(`arg`), or log(2|x|) = log(|x|) + ln 2 when `ax` (|x|) passes
/// 1e150, where x^2 overflows (asinh and acosh).
pub(super) fn log1p_or_large_log(e: &mut E, arg: InstrId, ax: InstrId) -> InstrId {
    let small = e.un(Opcode::LogPlusOne, arg);
    let l = e.un(Opcode::Log, ax);
    let ln2 = e.c(std::f64::consts::LN_2);
    let big = e.add(l, ln2);
    let lim = e.c(1e150);
    let is_big = e.cmp(ComparisonDirection::Gt, ax, lim);
    e.sel(is_big, big, small)
}

fn poly(e: &mut E, w: InstrId, coeffs: &[f64]) -> InstrId {
    let mut p = e.c(coeffs[0]);
    for &c in &coeffs[1..] {
        let k = e.c(c);
        let pw = e.mul(p, w);
        p = e.add(k, pw);
    }
    p
}

pub(super) fn erf_inv(e: &mut E, x: InstrId) -> InstrId {
    use ComparisonDirection as D;
    use Opcode as O;
    let one = e.c(1.0);
    let a = e.sub(one, x);
    let b = e.add(one, x);
    let p = e.mul(a, b);
    let l = e.un(O::Log, p);
    let w = e.un(O::Negate, l);
    let five = e.c(5.0);
    let small = e.cmp(D::Lt, w, five);
    let c25 = e.c(2.5);
    let ws = e.sub(w, c25);
    let sw = e.un(O::Sqrt, w);
    let c3 = e.c(3.0);
    let wl = e.sub(sw, c3);
    let ps = poly(e, ws, &ERFINV_SMALL);
    let pl = poly(e, wl, &ERFINV_LARGE);
    let pp = e.sel(small, ps, pl);
    let mut r = e.mul(pp, x);
    // Newton steps on erf(r) = x: r -= (erf(r) - x) / (2/sqrt(pi) exp(-r^2))
    let k = e.c(std::f64::consts::FRAC_2_SQRT_PI);
    for _ in 0..3 {
        let er = e.un(O::Erf, r);
        let d = e.sub(er, x);
        let r2 = e.mul(r, r);
        let nr2 = e.un(O::Negate, r2);
        let ex = e.un(O::Exponential, nr2);
        let der = e.mul(k, ex);
        let step = e.div(d, der);
        let next = e.sub(r, step);
        // a step that lands on a non-finite value keeps the previous one
        let fin = e.b.push(
            O::IsFinite,
            Shape::array(ElementType::Pred, e.dims.clone()),
            vec![next],
            Attrs::default(),
        );
        r = e.sel(fin, next, r);
    }
    let ax = e.un(O::Abs, x);
    let at_one = e.cmp(D::Eq, ax, one);
    let inf = e.c(f64::INFINITY);
    let sg = e.un(O::Sign, x);
    let sinf = e.mul(sg, inf);
    let r = e.sel(at_one, sinf, r);
    let out = e.cmp(D::Gt, ax, one);
    let nan = e.c(f64::NAN);
    e.sel(out, nan, r)
}

/// (a, a', t) of the Lanczos sum at z = y - 1.
fn lanczos(e: &mut E, y: InstrId) -> (InstrId, InstrId, InstrId) {
    let one = e.c(1.0);
    let z = e.sub(y, one);
    let mut a = e.c(LANCZOS[0]);
    let mut da = e.c(0.0);
    for (i, &p) in LANCZOS.iter().enumerate().skip(1) {
        let pi = e.c(p);
        let ki = e.c(i as f64);
        let zi = e.add(z, ki);
        let q = e.div(pi, zi);
        a = e.add(a, q);
        let q2 = e.div(q, zi);
        da = e.sub(da, q2);
    }
    let g = e.c(LANCZOS_G + 0.5);
    let t = e.add(z, g);
    (a, da, t)
}

/// The reflection both [`lgamma`] and [`digamma`] take below 0.5: the
/// constant 0.5, whether `x` is reflected (`x < 0.5`), `y` (`1 - x` if so,
/// else `x`) and the Lanczos sums of `y`.
fn reflected_lanczos(
    e: &mut E,
    x: InstrId,
) -> (InstrId, InstrId, InstrId, (InstrId, InstrId, InstrId)) {
    let half = e.c(0.5);
    let one = e.c(1.0);
    let reflect = e.cmp(ComparisonDirection::Lt, x, half);
    let omx = e.sub(one, x);
    let y = e.sel(reflect, omx, x);
    (half, reflect, y, lanczos(e, y))
}

pub(super) fn lgamma(e: &mut E, x: InstrId) -> InstrId {
    use ComparisonDirection as D;
    use Opcode as O;
    let (half, reflect, y, (a, _, t)) = reflected_lanczos(e, x);
    // 0.5 ln(2 pi) + (z + 0.5) ln t - t + ln a, with z + 0.5 = y - 0.5
    let c = e.c(0.5 * (2.0 * std::f64::consts::PI).ln());
    let yh = e.sub(y, half);
    let lt = e.un(O::Log, t);
    let m = e.mul(yh, lt);
    let s = e.sub(m, t);
    let la = e.un(O::Log, a);
    let s2 = e.add(s, la);
    let l = e.add(c, s2);
    // reflection: ln(pi) - ln|sin(pi x)| - lgamma(1 - x)
    let sp = e.sin_pi(x);
    let asp = e.un(O::Abs, sp);
    let lsp = e.un(O::Log, asp);
    let lpi = e.c(std::f64::consts::PI.ln());
    let r1 = e.sub(lpi, lsp);
    let refl = e.sub(r1, l);
    let v = e.sel(reflect, refl, l);
    // lgamma(+-inf) = inf, and the poles: lgamma = +inf at 0, -1, -2, ...
    // (sin(pi x) in f64 is not exactly 0 there, so the reflection alone is finite)
    let ax = e.un(O::Abs, x);
    let inf = e.c(f64::INFINITY);
    let is_inf = e.cmp(D::Eq, ax, inf);
    let zero = e.c(0.0);
    let le0 = e.cmp(D::Le, x, zero);
    let fl = e.un(O::Floor, x);
    let int = e.cmp(D::Eq, x, fl);
    let pole = e.and(le0, int);
    let special = e.or(is_inf, pole);
    e.sel(special, inf, v)
}

pub(super) fn digamma(e: &mut E, x: InstrId) -> InstrId {
    use ComparisonDirection as D;
    use Opcode as O;
    let (_, reflect, _, (a, da, t)) = reflected_lanczos(e, x);
    let lt = e.un(O::Log, t);
    let g = e.c(LANCZOS_G);
    let gt = e.div(g, t);
    let q = e.div(da, a);
    let s = e.sub(lt, gt);
    let d = e.add(s, q);
    // reflection: digamma(1 - x) - pi / tan(pi x), tan reduced modulo 1
    let r = e.un(O::RoundNearestEven, x);
    let red = e.sub(x, r);
    let pi = e.c(std::f64::consts::PI);
    let arg = e.mul(red, pi);
    let tn = e.un(O::Tan, arg);
    let pt = e.div(pi, tn);
    let refl = e.sub(d, pt);
    let v = e.sel(reflect, refl, d);
    // poles at the non-positive integers
    let zero = e.c(0.0);
    let le0 = e.cmp(D::Le, x, zero);
    let int = e.cmp(D::Eq, x, r);
    let pole = e.and(le0, int);
    let nan = e.c(f64::NAN);
    let v = e.sel(pole, nan, v);
    let inf = e.c(f64::INFINITY);
    let is_inf = e.cmp(D::Eq, x, inf);
    let ninf = e.c(f64::NEG_INFINITY);
    let is_ninf = e.cmp(D::Eq, x, ninf);
    let v = e.sel(is_inf, inf, v);
    let _ = e.or(is_ninf, is_inf);
    e.sel(is_ninf, nan, v)
}
