//! Reassociated complex reductions (`c64`, `c128`): sums bounded per
//! component, products normwise. `n` is the number of terms (the init value
//! included), `u = eps / 2` the component type's unit roundoff, and the
//! bound the comparator applies to each component is `n * eps * s` with `s`
//! the element's entry in `MagnitudeSums::sum_abs` (per plane).
//!
//! **Sums** (reduce, reduce-window and cumsum with an `add` reducer). A
//! complex add is two real adds, one per component, so a complex sum in
//! any order (any tree) is, per component, a real sum in that order: each
//! component is within `(n - 1) * u * sum_i |z_i,k|` of its exact value,
//! and the reference rounds each component once (`u * |s_k|`). So
//! component `k` is bounded by the real bound on its plane,
//! `n * eps * sum_i |z_i,k|` (plus the real bound's subnormal floor),
//! magnitudes taken by the reference on the terms mapped to `(|re|, |im|)`.
//!
//! **Products** (reduce, reduce-window and cumprod with a `multiply`
//! reducer). The components of a product cancel (`re = ar*br - ai*bi`), so
//! no bound relative to a component holds; one relative to the modulus
//! does. One complex multiply computed naively in the component type has a
//! normwise relative error of at most `sqrt(5) * u` (Brent, Percival and
//! Zimmermann 2007; `2u` with a fused multiply-add; `sqrt(2) * u` when each
//! component is rounded once, as the reference and the interpreter do).
//! A product of `n` terms in any order takes `m = n - 1` multiplies, each
//! rounding a value whose modulus is its factors' moduli product times the
//! errors so far, so by induction
//! `|fl(P) - P| <= ((1 + sqrt(5) u)^m - 1) * prod|z_i| <= g_m * prod|z_i|`
//! with `g_m = m sqrt(5) u / (1 - m sqrt(5) u)`. The reference and the
//! backend both lie within that of the exact product, so each component
//! of one is within `2 g_m * prod|z_i|` of the other's. `prod|z_i|` is
//! evaluated by the reference on the terms mapped to `(|z|, 0)`: at most
//! `3n` roundings (the moduli, the partial products), so it is inflated by
//! `1 + g'`, `g' = 3n u / (1 - 3n u)`. A partial product in the subnormal
//! range (or flushed) loses at most about `2 * min_normal` per component
//! (two rounded products and their difference), later scaled by at most
//! `prod max(|z_i|, 1)`: `4n * min_normal * prod max(|z_i|, 1)` on top,
//! as for real products. Where `prod max(|z_i|, 1)` overflows the component
//! type some order overflows (and `inf - inf` is NaN): any value is legal
//! there, a component's sign included (unlike a real product's sign, a
//! component's sign depends on the order), so `product` is false.
//!
//! **Dots and convolutions** are sums of products whose components mix the
//! terms' components: each component is bounded as a real dot is, on its
//! own products' magnitudes (`Root::bilinear_magnitudes`).
//!
//! Only a reduction whose operands are parameters or constants is bounded
//! (so the mapped inputs are its terms).

use super::reduction_root::{mapped_constants, root_instr};
use crate::check::policy::EvalFn;
use crate::check::MagnitudeSums;
use crate::hlo::{Module, Opcode};
use crate::literal::{component_type, Literal};

/// A complex reduction at a module's root.
pub(super) struct Root<'a> {
    pub module: &'a Module,
    pub inputs: &'a [Literal],
    /// Terms per output element, the init value included.
    pub terms: u64,
    /// Multiplied (else added).
    pub product: bool,
    pub opcode: Opcode,
    /// The backend flushes the component type's subnormals.
    pub flushes: bool,
}

/// The inputs with every complex (and real float) element mapped by `f`
/// (a real element `x` as `(x, 0)`, keeping the real part of the result).
fn mapped(inputs: &[Literal], f: &dyn Fn((f64, f64)) -> (f64, f64)) -> Vec<Literal> {
    inputs
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if l.dtype().is_complex() {
                for i in 0..l.element_count() {
                    let (re, im) = f(l.get_complex(i));
                    l.set_complex(i, re, im);
                }
            } else if l.dtype().is_float() {
                for i in 0..l.element_count() {
                    let v = f((l.get_f64(i), 0.0)).0;
                    l.set_f64(i, v);
                }
            }
            l
        })
        .collect()
}

/// `g = k u / (1 - k u)`, or None when `k u >= 1` (no bound).
fn gamma(k: f64, u: f64) -> Option<f64> {
    let ku = k * u;
    (ku < 1.0).then(|| ku / (1.0 - ku))
}

impl Root<'_> {
    /// Per component, the magnitudes of a complex dot's or convolution's
    /// products, times 2: `re = sum ar*br - ai*bi` has magnitude
    /// `sum |ar||br| + |ai||bi|`, `im = sum ar*bi + ai*br` has
    /// `sum |ar||bi| + |ai||br|`. On the terms mapped to `(|re|, |im|)`
    /// the result is `(P - Q, sum |ar||bi| + |ai||br|)` with
    /// `P = sum |ar||br|`, `Q = sum |ai||bi|`; on `(|re|, 0)` its real part
    /// is `P`: so the real magnitude is `2P - (P - Q)`. A component sums
    /// `2k` rounded products of `k` terms: `(2k - 1) u S + u S` plus the
    /// reference's `u |s|`: `(2k + 1) u S`, within `2 * k * eps * S` (the
    /// factor 2, which also covers `S` rounded to the component type).
    fn bilinear_magnitudes(&self, reference: &EvalFn<'_>) -> Option<Literal> {
        let both = self.eval(reference, &|(re, im)| (re.abs(), im.abs()))?;
        let real = self.eval(reference, &|(re, _)| (re.abs(), 0.0))?;
        let mut out = both.clone();
        for i in 0..both.element_count() {
            let ((d, im), p) = (both.get_complex(i), real.get_f64(i));
            let re = (2.0 * p - d).max(p);
            out.set_complex(i, 2.0 * re, 2.0 * im);
        }
        Some(out)
    }

    /// The module's result on the inputs and constants mapped by `f`.
    fn eval(
        &self,
        reference: &EvalFn<'_>,
        f: &dyn Fn((f64, f64)) -> (f64, f64),
    ) -> Option<Literal> {
        let m = mapped_constants(self.module, |x| f((x, 0.0)).0, f);
        reference(&m, &mapped(self.inputs, f))?.pop()
    }

    /// The magnitude sums of the root's complex output, per plane (see the
    /// module documentation); None when there is no bound.
    pub fn magnitudes(&self, reference: &EvalFn<'_>) -> Option<MagnitudeSums> {
        let (_, comp, root) = root_instr(self.module)?;
        let leaves = root
            .operands
            .iter()
            .all(|&o| matches!(comp.instr(o).opcode, Opcode::Parameter | Opcode::Constant));
        let bilinear = matches!(self.opcode, Opcode::Dot | Opcode::Convolution);
        if !leaves || !(bilinear || matches!(self.opcode, Opcode::Reduce | Opcode::ReduceWindow)) {
            return None;
        }
        let dtype = self.module.result_shape().as_array()?.dtype;
        let fmt = component_type(dtype)?.float_format()?;
        let (eps, max) = (fmt.epsilon(), fmt.max);
        let finite_abs = |v: f64| if v.is_finite() { v.abs() } else { 0.0 };
        if !self.product {
            let magnitude = if bilinear {
                self.bilinear_magnitudes(reference)?
            } else {
                self.eval(reference, &|(re, im)| (re.abs(), im.abs()))?
            };
            let finite = self.eval(reference, &|(re, im)| (finite_abs(re), finite_abs(im)))?;
            let floor = if self.flushes {
                fmt.min_normal()
            } else {
                fmt.min_subnormal()
            } / eps;
            let (m, f) = (magnitude.planes()?, finite.planes()?);
            let planes = [(&m.0, &f.0), (&m.1, &f.1)];
            let n = magnitude.element_count();
            let at = |l: &Literal, i: usize| l.get_f64(i);
            let sum_abs = planes
                .iter()
                .flat_map(|(m, _)| (0..n).map(move |i| at(m, i) + floor))
                .collect();
            let unbounded = planes
                .iter()
                .flat_map(|(_, f)| (0..n).map(move |i| !at(f, i).is_finite() || at(f, i) >= max))
                .collect();
            return Some(MagnitudeSums {
                terms: self.terms,
                sum_abs,
                unbounded,
                product: false,
                overflow_nan: Vec::new(),
            });
        }
        let modulus = self.eval(reference, &|(re, im)| (re.hypot(im), 0.0))?;
        let large = |(re, im): (f64, f64)| {
            let m = re.hypot(im);
            (
                if m.is_finite() && m != 0.0 {
                    m.max(1.0)
                } else {
                    1.0
                },
                0.0,
            )
        };
        let high = self.eval(reference, &large)?;
        let n = modulus.element_count();
        let terms = self.terms.max(1) as f64;
        let u = eps / 2.0;
        let coefficient = gamma((terms - 1.0) * 5f64.sqrt(), u)
            .zip(gamma(3.0 * terms, u))
            .map(|(g, g3)| 2.0 * g * (1.0 + g3));
        let floor = 4.0 * fmt.min_normal() / eps;
        let one: Vec<(f64, bool)> = (0..n)
            .map(|i| {
                let (p, h) = (modulus.get_f64(i), high.get_f64(i));
                let Some(c) = coefficient else {
                    return (0.0, true);
                };
                (
                    c * p / (terms * eps) + floor * h,
                    !h.is_finite() || h >= max,
                )
            })
            .collect();
        Some(MagnitudeSums {
            terms: self.terms,
            sum_abs: one.iter().chain(&one).map(|x| x.0).collect(),
            unbounded: one.iter().chain(&one).map(|x| x.1).collect(),
            product: false,
            overflow_nan: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::check::{Judge, Numerics, Policy};
    use crate::hlo::{parse_module, ArrayShape, ElementType};
    use crate::literal::Literal;

    fn c64(v: &[(f64, f64)]) -> Literal {
        let s = ArrayShape::new(ElementType::C64, vec![v.len() as i64]);
        Literal::from_complex(&s, v).unwrap()
    }

    fn module(op: &str, n: usize) -> crate::hlo::Module {
        let init = if op == "add" { "(0, 0)" } else { "(1, 0)" };
        parse_module(&format!(
            "HloModule m\nr {{\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] {op}(a, b)\n}}\nENTRY e {{\n  x = c64[{n}] parameter(0)\n  z = c64[] constant({init})\n  ROOT y = c64[1] reduce-window(x, z), window={{size={n}}}, to_apply=r\n}}\n"
        ))
        .unwrap()
    }

    fn judge(reassociates: bool, m: &crate::hlo::Module, x: &Literal, got: (f64, f64)) -> bool {
        let n = if reassociates {
            Numerics::exact().with_reassociation()
        } else {
            Numerics::exact()
        };
        Judge::new(&n, &[], Policy::Reference)
            .against_reference(m, std::slice::from_ref(x), &[c64(&[got])])
            .is_agreement()
    }

    #[test]
    fn a_complex_sum_is_bounded_per_component() {
        let m = module("add", 3);
        let e = 2f64.powi(-23);
        // real parts 1, eps/2, eps/2: exactly 1 + eps, summed in order in
        // f32: 1 (each half-eps is lost); 4 terms (with the init) * eps * 1
        let x = c64(&[(1.0, 2f64.powi(-20)), (e / 2.0, 0.0), (e / 2.0, 0.0)]);
        let want = (1.0 + e, 2f64.powi(-20));
        assert!(judge(true, &m, &x, want));
        assert!(judge(true, &m, &x, (1.0, want.1)));
        assert!(!judge(false, &m, &x, (1.0, want.1)), "not declared");
        assert!(!judge(true, &m, &x, (1.0 + 64.0 * e, want.1)));
        // the imaginary parts sum to 2^-20 only: an error of eps there is
        // 8 times its bound (a bound relative to |z| would take it)
        assert!(!judge(true, &m, &x, (want.0, want.1 + e)));
    }

    #[test]
    fn a_complex_product_is_bounded_normwise() {
        let m = module("multiply", 2);
        // (1 + a i)^2 = (1 - a^2) + 2a i, a = 1 + 2^-12: the real part
        // cancels to about -2^-11, |z|^2 products about 2; bound
        // 2 * g(2 sqrt 5) * 2 = about 8.9 eps
        let a = 1.0 + 2f64.powi(-12);
        let x = c64(&[(1.0, a), (1.0, a)]);
        let want = (1.0 - a * a, 2.0 * a);
        let e = 2f64.powi(-23);
        assert!(judge(true, &m, &x, ((want.0 as f32) as f64, want.1)));
        let near = ((want.0 as f32) as f64 + 4.0 * e, want.1);
        assert!(judge(true, &m, &x, near), "4 eps |z|: legal");
        assert!(!judge(false, &m, &x, near), "not declared");
        let far = ((want.0 as f32) as f64 + 16.0 * e, want.1);
        assert!(!judge(true, &m, &x, far), "16 eps |z|: a bug");
    }

    #[test]
    fn a_complex_dot_is_bounded_per_component_on_its_products() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = c64[1,2] parameter(0)\n  y = c64[2,1] parameter(1)\n  ROOT z = c64[1,1] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        )
        .unwrap();
        let e = 2f64.powi(-23);
        // re = 1*1 - (2^-12)(2^-12) + ... : products 1, 2^-24, eps, eps:
        // exact re = 1 - 2^-24 + 2 eps (not an f32: 1 + 2 eps nearest)
        let s = |v: &[(f64, f64)], d: Vec<i64>| {
            Literal::from_complex(&ArrayShape::new(ElementType::C64, d), v).unwrap()
        };
        let x = s(&[(1.0, 2f64.powi(-12)), (e, 0.0)], vec![1, 2]);
        let y = s(&[(1.0, 2f64.powi(-12)), (2.0, 0.0)], vec![2, 1]);
        let want = crate::reference::evaluate(&m, &[x.clone(), y.clone()]).unwrap();
        let (wr, wi) = want[0].get_complex(0);
        let n = Numerics::exact().with_reassociation();
        let j = |got: (f64, f64)| {
            Judge::new(&n, &[], Policy::Reference)
                .against_reference(&m, &[x.clone(), y.clone()], &[s(&[got], vec![1, 1])])
                .is_agreement()
        };
        assert!(j((wr, wi)));
        // the real part's products sum to about 1: 2 terms * 2 * eps * 1
        assert!(j((wr - e, wi)));
        assert!(!j((wr - 8.0 * e, wi)));
        // the imaginary part's products are 2^-12 + 2^-12: an error of eps
        // there is 2^10 times its bound
        assert!(!j((wr, wi + e)));
    }
}
