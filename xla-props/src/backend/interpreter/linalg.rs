//! triangular-solve by substitution in the native type, as a simple CPU
//! compiler writes it: each solution element is `(b_i - sum_j t_ij x_j) /
//! t_ii`, the sum accumulated in f32 for f16, bf16 and f32 (f64 for f64;
//! `Complex<f32>` for c64 and `Complex<f64>` for c128, num_complex's
//! textbook product and quotient) in increasing distance from the
//! diagonal's start, and the element rounded to the result type before
//! later rows use it. Only the triangle `lower` names is read, not the
//! diagonal with `unit_diagonal`; an absent `transpose_a` is
//! `NO_TRANSPOSE`, `ADJOINT` conjugates complex elements; f8 types are
//! unsupported.

use std::ops::{Div, Mul, Sub};

use half::{bf16, f16};
use num_complex::Complex;

use super::elem::{err, Res};
use crate::backend::BackendError;
use crate::hlo::{ArrayShape, Attrs, ElementType, TransposeA};
use crate::literal::Literal;

/// The arithmetic of one element type: accumulate in `Self`, store rounded.
trait Solver: Copy + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
    /// `self - t * x`, each operation rounded in `Self`.
    fn sub_mul(self, t: Self, x: Self) -> Self {
        self - t * x
    }
    /// Rounded to the stored type (and back to the accumulator).
    fn store(self, t: ElementType) -> Self;
    /// The complex conjugate (a real value itself).
    fn conj(self) -> Self;
}

impl Solver for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn store(self, t: ElementType) -> f32 {
        match t {
            ElementType::F16 => f16::from_f32(self).to_f32(),
            ElementType::Bf16 => bf16::from_f32(self).to_f32(),
            _ => self,
        }
    }
    fn conj(self) -> f32 {
        self
    }
}

impl Solver for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn store(self, _: ElementType) -> f64 {
        self
    }
    fn conj(self) -> f64 {
        self
    }
}

macro_rules! complex_solver {
    ($t:ty) => {
        impl Solver for Complex<$t> {
            const ZERO: Self = Complex::new(0.0, 0.0);
            const ONE: Self = Complex::new(1.0, 0.0);
            fn store(self, _: ElementType) -> Self {
                self
            }
            fn conj(self) -> Self {
                Complex::conj(&self)
            }
        }
    };
}
complex_solver!(f32);
complex_solver!(f64);

/// The options of one solve: left side, lower, unit diagonal, transposed,
/// conjugated (the adjoint).
type Flags = (bool, bool, bool, bool, bool);

/// One batch element: `a` is `m x m` as stored, `b` is `rows x cols`.
fn solve<S: Solver>(
    a: &[S],
    b: &[S],
    m: usize,
    (rows, cols): (usize, usize),
    (left, lower, unit, transposed, conjugated): Flags,
    ty: ElementType,
    x: &mut [S],
) {
    // op(a)(i, j) from the named triangle
    let op = |i: usize, j: usize| -> S {
        let (r, c) = if transposed { (j, i) } else { (i, j) };
        if r == c && unit {
            S::ONE
        } else if (lower && c > r) || (!lower && c < r) {
            S::ZERO
        } else if conjugated {
            a[r * m + c].conj()
        } else {
            a[r * m + c]
        }
    };
    let op_lower = lower != transposed;
    // left: op(a) x = b per column; right: x op(a) = b per row, i.e. the
    // coefficient of unknown j in equation i is op(a)(j, i)
    let systems = if left { cols } else { rows };
    let mut sol: Vec<S> = vec![S::ZERO; m];
    for s in 0..systems {
        let at = |i: usize| if left { i * cols + s } else { s * cols + i };
        let coef = |i: usize, j: usize| if left { op(i, j) } else { op(j, i) };
        // forward when the system's matrix is lower triangular
        let forward = if left { op_lower } else { !op_lower };
        for step in 0..m {
            let i = if forward { step } else { m - 1 - step };
            let mut acc = b[at(i)];
            for d in 0..step {
                let j = if forward { d } else { m - 1 - d };
                acc = acc.sub_mul(coef(i, j), sol[j]);
            }
            sol[i] = (acc / coef(i, i)).store(ty);
        }
        for (i, v) in sol.iter().enumerate() {
            x[at(i)] = *v;
        }
    }
}

/// Every batch element of `a` and `b` solved in `S`.
fn solve_all<S: Solver>(
    av: &[S],
    bv: &[S],
    (batch, m, rows, cols): (usize, usize, usize, usize),
    flags: Flags,
    ty: ElementType,
) -> Vec<S> {
    let mut x = vec![S::ZERO; bv.len()];
    let (sa, sb) = (m * m, rows * cols);
    for k in 0..batch {
        let (ak, bk) = (&av[k * sa..(k + 1) * sa], &bv[k * sb..(k + 1) * sb]);
        solve(
            ak,
            bk,
            m,
            (rows, cols),
            flags,
            ty,
            &mut x[k * sb..(k + 1) * sb],
        );
    }
    x
}

/// triangular-solve of `a` and `b` to a result of shape `out`.
pub(super) fn triangular_solve(
    a: &Literal,
    b: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Res<Literal> {
    let o = attrs
        .triangular_solve
        .ok_or_else(|| BackendError::Execute("triangular-solve: missing options".into()))?;
    let ty = out.dtype;
    if !matches!(
        ty,
        ElementType::F16
            | ElementType::Bf16
            | ElementType::F32
            | ElementType::F64
            | ElementType::C64
            | ElementType::C128
    ) && ty.is_float()
    {
        return Err(BackendError::unsupported(format!("{ty} triangular-solve")));
    }
    if !(ty.is_float() || ty.is_complex()) || a.dtype() != ty || b.dtype() != ty {
        return err(format!(
            "triangular-solve: {} and {} to {ty}",
            a.dtype(),
            b.dtype()
        ));
    }
    let (ad, bd) = (a.dims(), b.dims());
    let r = ad.len();
    if r < 2 || bd.len() != r || ad[..r - 2] != bd[..r - 2] || ad[r - 2] != ad[r - 1] {
        return err(format!("triangular-solve: operands {ad:?} and {bd:?}"));
    }
    let m = ad[r - 1];
    let (rows, cols) = (bd[r - 2], bd[r - 1]);
    if (o.left_side && rows != m) || (!o.left_side && cols != m) {
        return err(format!("triangular-solve: a {ad:?} does not fit b {bd:?}"));
    }
    if out.dims.iter().map(|&d| d as usize).ne(bd.iter().copied()) {
        return err(format!("triangular-solve: result {out} is not b's shape"));
    }
    let t = o.transpose_a.unwrap_or(TransposeA::NoTranspose);
    let flags = (
        o.left_side,
        o.lower,
        o.unit_diagonal,
        t != TransposeA::NoTranspose,
        t == TransposeA::Adjoint,
    );
    let sizes = (ad[..r - 2].iter().product(), m, rows, cols);
    let lit = |r: Result<Literal, crate::literal::LiteralError>| {
        r.map_err(|e| BackendError::Execute(e.to_string()))
    };
    match ty {
        ElementType::C64 | ElementType::C128 => {
            let c = |l: &Literal| -> Vec<Complex<f64>> {
                l.to_complex_vec()
                    .into_iter()
                    .map(|(re, im)| Complex::new(re, im))
                    .collect()
            };
            let (av, bv) = (c(a), c(b));
            let x: Vec<(f64, f64)> = if ty == ElementType::C128 {
                solve_all(&av, &bv, sizes, flags, ty)
                    .into_iter()
                    .map(|z| (z.re, z.im))
                    .collect()
            } else {
                let n = |v: &[Complex<f64>]| -> Vec<Complex<f32>> {
                    v.iter()
                        .map(|z| Complex::new(z.re as f32, z.im as f32))
                        .collect()
                };
                solve_all(&n(&av), &n(&bv), sizes, flags, ty)
                    .into_iter()
                    .map(|z| (z.re as f64, z.im as f64))
                    .collect()
            };
            lit(Literal::from_complex(out, &x))
        }
        ElementType::F64 => {
            let x = solve_all(&a.to_f64_vec(), &b.to_f64_vec(), sizes, flags, ty);
            lit(Literal::from_f64s(out, &x))
        }
        _ => {
            let n =
                |l: &Literal| -> Vec<f32> { l.to_f64_vec().iter().map(|&v| v as f32).collect() };
            let x: Vec<f64> = solve_all(&n(a), &n(b), sizes, flags, ty)
                .into_iter()
                .map(f64::from)
                .collect();
            lit(Literal::from_f64s(out, &x))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::{Backend, Interpreter};
    use crate::hlo::{parse_module, ArrayShape, ElementType, Module};
    use crate::literal::Literal;

    /// `x = triangular-solve(a, b)` of `ty` with `attrs`, `a` and `b` (and
    /// `x`) of dims `dims.0` and `dims.1`.
    fn solve_module(ty: &str, attrs: &str, dims: (&str, &str)) -> Module {
        let text = format!(
            "HloModule m\nENTRY e {{\n  a = {ty}[{}] parameter(0)\n  b = {ty}[{}] parameter(1)\n  \
             ROOT x = {ty}[{}] triangular-solve(a, b), {attrs}\n}}\n",
            dims.0, dims.1, dims.1
        );
        parse_module(&text).unwrap()
    }

    /// The interpreter's output of `m` on `args`, and the reference's.
    fn ours_and_reference(m: &Module, args: &[Literal]) -> (Literal, Literal) {
        let ours = Interpreter::default()
            .compile(m)
            .unwrap()
            .execute(args)
            .unwrap();
        let reference = crate::reference::evaluate(m, args).unwrap();
        (ours[0].clone(), reference[0].clone())
    }

    fn solve(
        ty: &str,
        attrs: &str,
        a: &[f64],
        b: &[f64],
        dims: (&str, &str),
    ) -> (Vec<f64>, Vec<f64>) {
        let m = solve_module(ty, attrs, dims);
        let t: ElementType = ty.parse().unwrap();
        let lit = |d: &str, v: &[f64]| {
            let dims: Vec<i64> = d.split(',').map(|x| x.parse().unwrap()).collect();
            Literal::from_f64s(&ArrayShape::new(t, dims), v).unwrap()
        };
        let (ours, reference) = ours_and_reference(&m, &[lit(dims.0, a), lit(dims.1, b)]);
        (ours.to_f64_vec(), reference.to_f64_vec())
    }

    #[test]
    fn substitution_follows_the_options_as_the_reference_does() {
        // garbage (1e30) off the read triangles and on a unit diagonal
        let g = 1e30;
        let lower = [2.0, g, g, 1.0, 4.0, g, -1.0, 0.5, 8.0];
        let upper = [2.0, 1.0, -1.0, g, 4.0, 0.5, g, g, 8.0];
        let b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        for (a, lo) in [(lower, "true"), (upper, "false")] {
            for t in ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] {
                for (side, bd) in [("true", "3,2"), ("false", "2,3")] {
                    let attrs = format!("left_side={side}, lower={lo}, transpose_a={t}");
                    let (ours, reference) = solve("f64", &attrs, &a, &b, ("3,3", bd));
                    for (o, r) in ours.iter().zip(&reference) {
                        assert!(
                            (o - r).abs() <= 1e-15 * r.abs().max(1.0),
                            "{attrs}: {ours:?} {reference:?}"
                        );
                        assert!(o.abs() < 10.0, "{attrs}: garbage read: {ours:?}");
                    }
                }
            }
        }
        let mut unit = lower;
        unit[0] = g;
        unit[4] = g;
        unit[8] = g;
        let attrs = "left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE";
        let (ours, _) = solve("f64", attrs, &unit, &b, ("3,3", "3,2"));
        // [[1,0,0],[1,1,0],[-1,0.5,1]] x = [[1,2],[3,4],[5,6]]
        assert_eq!(ours, [1.0, 2.0, 2.0, 2.0, 5.0, 7.0]);
    }

    #[test]
    fn narrow_types_round_each_solved_element() {
        // f16: x0 = 1/3 rounded to f16 before x1 = (1 - x0) / 3 uses it
        let attrs = "left_side=true, lower=true, transpose_a=NO_TRANSPOSE";
        let solve_in = |ty| {
            solve(
                ty,
                attrs,
                &[3.0, 0.0, 1.0, 3.0],
                &[1.0, 1.0],
                ("2,2", "2,1"),
            )
        };
        let (ours, _) = solve_in("f16");
        let x0 = half::f16::from_f64(1.0 / 3.0).to_f32();
        let x1 = half::f16::from_f32((1.0 - x0) / 3.0).to_f64();
        assert_eq!(ours, [x0 as f64, x1]);
        let (ours, reference) = solve_in("f32");
        assert_eq!(ours[0], reference[0]);
        assert!((ours[1] - reference[1]).abs() <= 2.0 * f32::EPSILON as f64);
    }

    #[test]
    fn complex_adjoint_conjugates_the_named_triangle() {
        // a = [[1+i, 9], [2i, 2]] lower: adjoint = [[1-i, -2i], [0, 2]];
        // x1 = 4/2 = 2; x0 = (3 + 2i*2) / (1-i) = (3+4i)(1+i)/2 = (-1+7i)/2
        let attrs = "left_side=true, lower=true, transpose_a=ADJOINT";
        let m = solve_module("c128", attrs, ("2,2", "2,1"));
        let a = Literal::from_complex(
            &ArrayShape::new(ElementType::C128, vec![2, 2]),
            &[(1.0, 1.0), (9.0, 0.0), (0.0, 2.0), (2.0, 0.0)],
        )
        .unwrap();
        let b = Literal::from_complex(
            &ArrayShape::new(ElementType::C128, vec![2, 1]),
            &[(3.0, 0.0), (4.0, 0.0)],
        )
        .unwrap();
        let (ours, reference) = ours_and_reference(&m, &[a, b]);
        assert_eq!(ours.to_complex_vec(), vec![(-0.5, 3.5), (2.0, 0.0)]);
        assert_eq!(reference.to_complex_vec(), ours.to_complex_vec());
    }
}
