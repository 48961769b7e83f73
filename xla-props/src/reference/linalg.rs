//! triangular-solve, as XLA's operation semantics define it: `op(a) x = b`
//! (`left_side=true`) or `x op(a) = b` (`left_side=false`) for each batch
//! element, `op` the identity, the transpose or the adjoint (the transpose,
//! for real types). Only the triangle `lower` names is read (the other half
//! may hold anything) and, with `unit_diagonal`, not the diagonal either.
//! An absent `transpose_a` is `NO_TRANSPOSE`.
//!
//! Complex systems (`c64`, `c128`) are solved the same way in f64 pairs,
//! `ADJOINT` taking the conjugate transpose.
//!
//! Substitution in f64, rounded once to the result type: not the correctly
//! rounded solution (no backend computes that either). The interval
//! evaluator bounds nothing here; the first-order one takes the classical
//! backward-error bound of substitution ([`solve_radii`]).

use super::complex_math::{self, C};
use super::OpError;
use crate::hlo::{ArrayShape, Attrs, ElementType, TransposeA, TriangularSolveOptions};
use crate::literal::Literal;

/// The problem's sizes: `batch` systems, `a` is `m x m`, `b` is `rows x cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SolveDims {
    pub batch: usize,
    pub m: usize,
    pub rows: usize,
    pub cols: usize,
}

/// Checks the operand shapes (`a` square, the batch dimensions alike, `b`'s
/// solved dimension `m`) and gives the sizes.
pub(crate) fn solve_dims(a: &[usize], b: &[usize], left_side: bool) -> Result<SolveDims, String> {
    let r = a.len();
    if r < 2 || b.len() != r || a[..r - 2] != b[..r - 2] {
        return Err(format!(
            "triangular-solve needs a and b of one rank >= 2 with the same batch dimensions, not {a:?} and {b:?}"
        ));
    }
    let m = a[r - 1];
    let (rows, cols) = (b[r - 2], b[r - 1]);
    let solved = if left_side { rows } else { cols };
    if a[r - 2] != m || solved != m {
        return Err(format!(
            "triangular-solve: a must be square and match b's {} dimension: {a:?}, {b:?}",
            if left_side { "second-last" } else { "last" }
        ));
    }
    Ok(SolveDims {
        batch: a[..r - 2].iter().product(),
        m,
        rows,
        cols,
    })
}

/// The options of `attrs` (an error when absent).
pub(crate) fn options(attrs: &Attrs) -> Result<(TriangularSolveOptions, TransposeA), String> {
    let o = attrs
        .triangular_solve
        .ok_or("triangular-solve without its options")?;
    Ok((o, o.transpose_a.unwrap_or(TransposeA::NoTranspose)))
}

/// The element arithmetic of a substitution: real (f64) or complex (f64 pairs).
trait Field: Copy {
    const ONE: Self;
    const ZERO: Self;
    /// `s - t x`.
    fn sub_mul(s: Self, t: Self, x: Self) -> Self;
    fn div(self, t: Self) -> Self;
    /// The complex conjugate (itself for a real value).
    fn conj(self) -> Self;
}

impl Field for f64 {
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
    fn sub_mul(s: f64, t: f64, x: f64) -> f64 {
        s - t * x
    }
    fn div(self, t: f64) -> f64 {
        self / t
    }
    fn conj(self) -> f64 {
        self
    }
}

impl Field for C {
    const ONE: C = (1.0, 0.0);
    const ZERO: C = (0.0, 0.0);
    fn sub_mul(s: C, t: C, x: C) -> C {
        let p = complex_math::mul(t, x);
        (s.0 - p.0, s.1 - p.1)
    }
    fn div(self, t: C) -> C {
        complex_math::div(self, t)
    }
    fn conj(self) -> C {
        (self.0, -self.1)
    }
}

/// Solves one system in place: `a` is the row-major `m x m` matrix as
/// stored, `x` the row-major `b` on entry and the solution on return.
fn solve_one<T: Field>(
    a: &[T],
    x: &mut [T],
    d: SolveDims,
    o: TriangularSolveOptions,
    t: TransposeA,
) {
    let m = d.m;
    // the effective matrix t(i, j) = op(a)(i, j), only the named triangle read
    let stored = |i: usize, j: usize| -> T {
        if i == j && o.unit_diagonal {
            T::ONE
        } else if (o.lower && j > i) || (!o.lower && j < i) {
            T::ZERO
        } else {
            a[i * m + j]
        }
    };
    let transposed = t != TransposeA::NoTranspose;
    let adjoint = t == TransposeA::Adjoint;
    let op = |i: usize, j: usize| {
        if adjoint {
            stored(j, i).conj()
        } else if transposed {
            stored(j, i)
        } else {
            stored(i, j)
        }
    };
    // op(a) is lower triangular when exactly one of lower, transposed holds
    let op_lower = o.lower != transposed;
    if o.left_side {
        // op(a) X = B, column by column
        for c in 0..d.cols {
            substitute(m, op_lower, &op, &|i| i * d.cols + c, x);
        }
    } else {
        // X op(a) = B  <=>  op(a)^T X^T = B^T, row by row
        let op_t = |i: usize, j: usize| op(j, i);
        for r in 0..d.rows {
            substitute(m, !op_lower, &op_t, &|j| r * d.cols + j, x);
        }
    }
}

/// Forward (lower) or back (upper) substitution of `t y = x` on the
/// elements `at(0..m)` of `x`.
fn substitute<T: Field>(
    m: usize,
    lower: bool,
    t: &dyn Fn(usize, usize) -> T,
    at: &dyn Fn(usize) -> usize,
    x: &mut [T],
) {
    let order: Box<dyn Iterator<Item = usize>> = if lower {
        Box::new(0..m)
    } else {
        Box::new((0..m).rev())
    };
    for i in order {
        let mut s = x[at(i)];
        let known: Box<dyn Iterator<Item = usize>> = if lower {
            Box::new(0..i)
        } else {
            Box::new(i + 1..m)
        };
        for j in known {
            s = T::sub_mul(s, t(i, j), x[at(j)]);
        }
        let k = at(i);
        x[k] = s.div(t(i, i));
    }
}

/// Checks that the operands are of the result's type `ok` accepts and the
/// result has `b`'s shape; gives the options and sizes.
fn checked(
    a: &Literal,
    b: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
    ok: fn(ElementType) -> bool,
) -> Result<(TriangularSolveOptions, TransposeA, SolveDims), OpError> {
    let (o, t) = options(attrs).map_err(OpError::Invalid)?;
    let d = solve_dims(a.dims(), b.dims(), o.left_side).map_err(OpError::Invalid)?;
    let ty = out.dtype;
    if !ok(ty) || a.dtype() != ty || b.dtype() != ty {
        return Err(OpError::Invalid(format!(
            "triangular-solve takes floats or complex values of the result's type: {} and {} to {ty}",
            a.dtype(),
            b.dtype()
        )));
    }
    if out
        .dims
        .iter()
        .map(|&x| x as usize)
        .ne(b.dims().iter().copied())
    {
        return Err(OpError::Invalid(format!(
            "triangular-solve's result has b's shape {}, not {out}",
            b.shape()
        )));
    }
    Ok((o, t, d))
}

/// Every batch element's system solved in place.
fn solve_all<T: Field>(
    av: &[T],
    xv: &mut [T],
    d: SolveDims,
    o: TriangularSolveOptions,
    t: TransposeA,
) {
    let (sa, sb) = (d.m * d.m, d.rows * d.cols);
    for k in 0..d.batch {
        solve_one(
            &av[k * sa..(k + 1) * sa],
            &mut xv[k * sb..(k + 1) * sb],
            d,
            o,
            t,
        );
    }
}

/// triangular-solve of complex `a` and `b`: substitution in f64 pairs
/// (products and quotients as `complex_math`'s), each component rounded
/// once to `out`'s component type. `ADJOINT` conjugates the transpose.
pub(crate) fn triangular_solve_complex(
    a: &Literal,
    b: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let (o, t, d) = checked(a, b, attrs, out, ElementType::is_complex)?;
    let (av, mut xv) = (a.to_complex_vec(), b.to_complex_vec());
    solve_all(&av, &mut xv, d, o, t);
    Ok(Literal::from_complex(out, &xv)?)
}

/// triangular-solve of real `a` and `b` (rounded once to `out`'s type).
pub(crate) fn triangular_solve(
    a: &Literal,
    b: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Result<Literal, OpError> {
    let (o, t, d) = checked(a, b, attrs, out, ElementType::is_float)?;
    let (av, mut xv) = (a.to_f64_vec(), b.to_f64_vec());
    solve_all(&av, &mut xv, d, o, t);
    Ok(Literal::from_f64s(out, &xv)?)
}

/// First-order radii of a triangular solve's result `x`: where each
/// element of a solution computed by substitution (in any order of its
/// sums, forward or back) may lie, given the radii `ra` of `a` and `rb` of
/// `b`. Substitution is backward stable, `(T + dT) x' = b` with `|dT| <=
/// gamma_m |T|` (Higham, Accuracy and Stability of Numerical Algorithms,
/// Theorem 8.5), so `|x' - x| <= |T^-1| ((g |T| + |dA|) |x| + |db|)` to
/// first order; `|T^-1|` is bounded by the inverse of the comparison matrix
/// `M(T)` (|diagonal|, -|off-diagonal|), whose solve adds only non-negative
/// terms. `g` is `2 gamma_m(u)`: the backend's rounding and the reference's
/// own (its substitution in f64, rounded once). None when a shape or the
/// options do not fit.
pub(crate) fn solve_radii(
    a: &Literal,
    ra: &[f64],
    rb: &[f64],
    x: &Literal,
    attrs: &Attrs,
    u: f64,
) -> Result<Vec<f64>, String> {
    let (o, t) = options(attrs)?;
    let d = solve_dims(a.dims(), x.dims(), o.left_side)?;
    let (av, xv) = (a.to_f64_vec(), x.to_f64_vec());
    if ra.len() != av.len() || rb.len() != xv.len() {
        return Err("triangular-solve radii of the wrong length".into());
    }
    let m = d.m;
    let mu = m as f64 * u;
    let g = if mu < 1.0 {
        2.0 * mu / (1.0 - mu)
    } else {
        f64::INFINITY
    };
    let (sa, sb) = (m * m, d.rows * d.cols);
    let mut r = rb.to_vec();
    let transposed = t != TransposeA::NoTranspose;
    let op_lower = o.lower != transposed;
    for k in 0..d.batch {
        let (a_k, ra_k) = (&av[k * sa..(k + 1) * sa], &ra[k * sa..(k + 1) * sa]);
        let x_k = &xv[k * sb..(k + 1) * sb];
        let r_k = &mut r[k * sb..(k + 1) * sb];
        // the stored entry (i, j) as read: the named triangle, a unit
        // diagonal exact 1
        let read = |v: &[f64], i: usize, j: usize, unit: f64| -> f64 {
            if i == j && o.unit_diagonal {
                unit
            } else if (o.lower && j > i) || (!o.lower && j < i) {
                0.0
            } else {
                v[i * m + j]
            }
        };
        // the system's matrix entry (i, j): op(a), transposed again for a
        // right-side solve (x op(a) = b is op(a)^T x^T = b^T)
        let flip = transposed == o.left_side;
        let at_m = |v: &[f64], i: usize, j: usize, unit: f64| {
            if flip {
                read(v, j, i, unit)
            } else {
                read(v, i, j, unit)
            }
        };
        let lower = if o.left_side { op_lower } else { !op_lower };
        let lines = if o.left_side { d.cols } else { d.rows };
        for line in 0..lines {
            let at = |i: usize| {
                if o.left_side {
                    i * d.cols + line
                } else {
                    line * d.cols + i
                }
            };
            for i in 0..m {
                let w: f64 = (0..m)
                    .map(|j| {
                        let e = g * at_m(a_k, i, j, 1.0).abs() + at_m(ra_k, i, j, 0.0);
                        e * x_k[at(j)].abs()
                    })
                    .sum();
                r_k[at(i)] += w;
            }
            let order: Vec<usize> = if lower {
                (0..m).collect()
            } else {
                (0..m).rev().collect()
            };
            for (n, &i) in order.iter().enumerate() {
                let s: f64 = order[..n]
                    .iter()
                    .map(|&j| at_m(a_k, i, j, 1.0).abs() * r_k[at(j)])
                    .sum();
                let diag = at_m(a_k, i, i, 1.0).abs() - at_m(ra_k, i, i, 0.0);
                r_k[at(i)] = if diag > 0.0 {
                    (r_k[at(i)] + s) / diag
                } else {
                    f64::INFINITY
                };
            }
        }
    }
    // the bound's own f64 arithmetic, rounded up
    let up = 1.0 + 4.0 * (m as f64 + 2.0) * f64::EPSILON;
    Ok(r.into_iter().map(|q| q * up).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::ElementType;

    fn lit(dims: &[i64], v: &[f64]) -> Literal {
        Literal::from_f64s(&ArrayShape::new(ElementType::F64, dims.to_vec()), v).unwrap()
    }

    fn solve(a: &Literal, b: &Literal, o: TriangularSolveOptions) -> Vec<f64> {
        let attrs = Attrs {
            triangular_solve: Some(o),
            ..Attrs::default()
        };
        triangular_solve(a, b, &attrs, &b.shape())
            .unwrap()
            .to_f64_vec()
    }

    /// op(a) as the test reads it: the named triangle, the unit diagonal, the transpose.
    fn op_matrix(a: &[f64], m: usize, o: TriangularSolveOptions) -> Vec<f64> {
        let mut t = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                let keep = if o.lower { j <= i } else { j >= i };
                let v = if i == j && o.unit_diagonal {
                    1.0
                } else if keep {
                    a[i * m + j]
                } else {
                    0.0
                };
                let transposed = o.transpose_a != Some(TransposeA::NoTranspose);
                if transposed {
                    t[j * m + i] = v;
                } else {
                    t[i * m + j] = v;
                }
            }
        }
        t
    }

    #[test]
    fn every_option_combination_solves_its_system() {
        let m = 3;
        // two batch elements; garbage of 1e3 off the named triangles
        let a: Vec<f64> = (0..18)
            .map(|k| [4.0, 1e3, -1.5, 0.5][k % 4] + k as f64 * 0.25)
            .collect();
        let b: Vec<f64> = (0..12).map(|k| k as f64 - 5.5).collect();
        for bits in 0..8u32 {
            for t in TransposeA::ALL {
                let o = TriangularSolveOptions {
                    left_side: bits & 1 != 0,
                    lower: bits & 2 != 0,
                    unit_diagonal: bits & 4 != 0,
                    transpose_a: Some(t),
                };
                // left: b is [2, 3, 2]; right: b is [2, 2, 3]
                let bd: [i64; 3] = if o.left_side { [2, 3, 2] } else { [2, 2, 3] };
                let x = solve(&lit(&[2, 3, 3], &a), &lit(&bd, &b), o);
                for k in 0..2 {
                    let t = op_matrix(&a[k * 9..k * 9 + 9], m, o);
                    let (xs, bs) = (&x[k * 6..k * 6 + 6], &b[k * 6..k * 6 + 6]);
                    let (rows, cols) = (bd[1] as usize, bd[2] as usize);
                    for r in 0..rows {
                        for c in 0..cols {
                            let terms: Vec<f64> = if o.left_side {
                                (0..m).map(|j| t[r * m + j] * xs[j * cols + c]).collect()
                            } else {
                                (0..m).map(|j| xs[r * cols + j] * t[j * m + c]).collect()
                            };
                            let got: f64 = terms.iter().sum();
                            let scale: f64 = terms.iter().map(|x| x.abs()).sum();
                            let want = bs[r * cols + c];
                            assert!(
                                (got - want).abs() <= 1e-12 * (1.0 + scale),
                                "{o:?} batch {k}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_other_triangle_and_a_unit_diagonal_are_not_read() {
        let o = TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: false,
            transpose_a: Some(TransposeA::NoTranspose),
        };
        let b = lit(&[2, 1], &[2.0, 5.0]);
        // [[2, *], [1, 4]] x = [2, 5]: x = [1, 1] whatever * is
        for garbage in [0.0, 7.0, f64::NAN] {
            let a = lit(&[2, 2], &[2.0, garbage, 1.0, 4.0]);
            assert_eq!(solve(&a, &b, o), [1.0, 1.0]);
        }
        // unit diagonal: [[1, *], [1, 1]] x = [2, 5]: x = [2, 3]
        let unit = TriangularSolveOptions {
            unit_diagonal: true,
            ..o
        };
        let a = lit(&[2, 2], &[f64::NAN, 9.0, 1.0, 0.0]);
        assert_eq!(solve(&a, &b, unit), [2.0, 3.0]);
    }

    #[test]
    fn the_result_is_rounded_once_and_shapes_are_checked() {
        let o = TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: false,
            transpose_a: Some(TransposeA::NoTranspose),
        };
        let s = |d: &[i64]| ArrayShape::new(ElementType::F32, d.to_vec());
        let a = Literal::from_f64s(&s(&[1, 1]), &[3.0]).unwrap();
        let b = Literal::from_f64s(&s(&[1, 1]), &[1.0]).unwrap();
        let attrs = Attrs {
            triangular_solve: Some(o),
            ..Attrs::default()
        };
        let x = triangular_solve(&a, &b, &attrs, &s(&[1, 1])).unwrap();
        assert_eq!(x.get_f64(0), (1.0f32 / 3.0f32) as f64);
        // left: b's rows are a's size; right: its columns
        let tall = Literal::from_f64s(&s(&[2, 1]), &[1.0, 2.0]).unwrap();
        assert!(triangular_solve(&a, &tall, &attrs, &s(&[2, 1])).is_err());
        let right = Attrs {
            triangular_solve: Some(TriangularSolveOptions {
                left_side: false,
                ..o
            }),
            ..Attrs::default()
        };
        assert!(triangular_solve(&a, &tall, &right, &s(&[2, 1])).is_ok());
        assert!(triangular_solve(&a, &tall, &right, &s(&[1, 2])).is_err());
        assert!(solve_dims(&[2, 3], &[2, 3], true).is_err());
        assert!(solve_dims(&[4, 2, 2], &[3, 2, 5], true).is_err());
        assert_eq!(
            solve_dims(&[4, 2, 2], &[4, 5, 2], false).unwrap(),
            SolveDims {
                batch: 4,
                m: 2,
                rows: 5,
                cols: 2
            }
        );
    }

    #[test]
    fn complex_systems_solve_with_the_conjugate_transpose_for_adjoint() {
        // a = [[1+i, 0], [2-2i, 3+4i]] (lower), b = [7-2i, 8+4i]
        let m = crate::hlo::parse_module(
            "HloModule m\nENTRY e {\n  a = c128[2,2] parameter(0)\n  b = c128[2,1] parameter(1)\n  ROOT x = c128[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT\n}\n",
        )
        .unwrap();
        let c = |dims: &[i64], v: &[(f64, f64)]| {
            Literal::from_complex(&ArrayShape::new(ElementType::C128, dims.to_vec()), v).unwrap()
        };
        let a = c(&[2, 2], &[(1.0, 1.0), (9.0, 9.0), (2.0, -2.0), (3.0, 4.0)]);
        let b = c(&[2, 1], &[(7.0, -2.0), (8.0, 4.0)]);
        let x = crate::reference::evaluate(&m, &[a, b]).unwrap()[0].to_complex_vec();
        // a^H = [[1-i, 2+2i], [0, 3-4i]]: x1 = (8+4i)/(3-4i) = 0.32+1.76i,
        // x0 = ((7-2i) - (2+2i) x1)/(1-i) = (9.88-6.16i)/(1-i) = 8.02+1.86i
        let want = [(8.02, 1.86), (0.32, 1.76)];
        for (got, want) in x.iter().zip(want) {
            assert!(
                (got.0 - want.0).abs() < 1e-12 && (got.1 - want.1).abs() < 1e-12,
                "{x:?}"
            );
        }
    }

    #[test]
    fn solve_radii_bound_a_perturbed_substitution() {
        use crate::hlo::{parse_module, TransposeA};
        // every option: the f32 solution of the system, solved with each
        // operand nudged by an ulp, stays inside the radii
        for (left, lower, t) in [
            (true, true, "NO_TRANSPOSE"),
            (true, false, "TRANSPOSE"),
            (false, true, "NO_TRANSPOSE"),
            (false, false, "ADJOINT"),
        ] {
            let text = format!(
                "HloModule m\nENTRY e {{\n  a = f32[3,3] parameter(0)\n  b = f32[3,3] parameter(1)\n  ROOT x = f32[3,3] triangular-solve(a, b), left_side={left}, lower={lower}, transpose_a={t}\n}}\n"
            );
            let m = parse_module(&text).unwrap();
            let root = m
                .entry_computation()
                .instr(m.entry_computation().root)
                .clone();
            let f32s = |v: &[f64]| {
                Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![3, 3]), v).unwrap()
            };
            let a = f32s(&[3.0, 0.5, -0.25, 1.5, -2.0, 0.75, 0.1, 0.2, 5.0]);
            let b = f32s(&[1.0, -2.0, 3.0, 0.5, 0.25, -1.0, 7.0, 1.0, 2.0]);
            let x = triangular_solve(
                &a,
                &b,
                &root.attrs,
                &ArrayShape::new(ElementType::F32, vec![3, 3]),
            )
            .unwrap();
            let u = f64::from(f32::EPSILON) / 2.0;
            let r = solve_radii(&a, &[0.0; 9], &[0.0; 9], &x, &root.attrs, u).unwrap();
            assert!(r.iter().all(|&q| q > 0.0 && q < 1e-4), "{r:?}");
            // the same system solved in f32 arithmetic lies inside
            let (o, tr) = options(&root.attrs).unwrap();
            let d = solve_dims(a.dims(), b.dims(), o.left_side).unwrap();
            let a32: Vec<f64> = a.to_f64_vec();
            let mut x32: Vec<f64> = b.to_f64_vec();
            solve_one_f32(&a32, &mut x32, d, o, tr);
            for (i, (&p, &q)) in x32.iter().zip(&x.to_f64_vec()).enumerate() {
                assert!(
                    (p - q).abs() <= r[i],
                    "{t} element {i}: {p} vs {q}, radius {}",
                    r[i]
                );
            }
            let _ = TransposeA::NoTranspose;
        }
    }

    /// `solve_one` with every step rounded to f32.
    fn solve_one_f32(
        a: &[f64],
        x: &mut [f64],
        d: SolveDims,
        o: TriangularSolveOptions,
        t: TransposeA,
    ) {
        let r = |v: f64| f64::from(v as f32);
        let a: Vec<f64> = a.iter().map(|&v| r(v)).collect();
        solve_one(&a, x, d, o, t);
        // solve_one runs in f64: round the result, a model of one more
        // rounding per element (the radii must cover it)
        for v in x.iter_mut() {
            *v = r(*v);
        }
    }
}
