//! Magnitude sums of a reduced output: what the reassociation bound of each
//! element is computed from (`check::legal::reassociation`).

use crate::hlo::ElementType;

/// Per-element magnitude sums of one reduced output, for the reassociation bound.
#[derive(Clone, Debug, PartialEq)]
pub struct MagnitudeSums {
    /// Terms summed into each element (the reduction length).
    pub terms: u64,
    /// `sum |x|` over the terms of each element, row-major over the output.
    /// For a complex output, the real plane's elements then the imaginary
    /// plane's (`2n` values, see [`MagnitudeSums::plane`]): each component
    /// of a complex sum is a real sum of that component of the terms.
    pub sum_abs: Vec<f64>,
    /// Elements whose terms admit an order of accumulation that leaves the
    /// finite range of the result type (their magnitudes overflow it): there
    /// a reassociated result is bounded by nothing (inf or NaN included),
    /// unless the reference's own result is NaN, which every order gives.
    /// Empty means none.
    pub unbounded: Vec<bool>,
    /// The terms are multiplied, not added: an unbounded element still keeps
    /// the reference's sign (or is NaN), since a product's sign does not
    /// depend on the order.
    pub product: bool,
    /// Unbounded elements whose reference NaN comes only from finite terms
    /// overflowing (`inf - inf` of rounded products, no NaN term and no
    /// opposite infinite inputs): another order, or a fused multiply-add
    /// that keeps a product unrounded, gives an infinity or a finite value
    /// instead. Empty means none (a NaN reference is then kept).
    pub overflow_nan: Vec<bool>,
}

impl MagnitudeSums {
    /// The largest legal error of element `i` of a reassociated sum in `dtype`:
    /// `n * eps * sum|x|` (recursive summation is within `(n-1) * u * sum|x|`
    /// with `u = eps/2`; the reference's own once-rounding adds `u * |s|`).
    pub fn bound(&self, i: usize, dtype: ElementType) -> f64 {
        let eps = dtype.float_format().map_or(0.0, |f| f.epsilon());
        self.terms as f64 * eps * self.sum_abs.get(i).copied().unwrap_or(0.0)
    }

    /// Whether element `i` of a reassociated result may be any value
    /// (see [`MagnitudeSums::unbounded`]) given the reference's `expected`
    /// and the backend's `actual` values.
    pub fn excuses(&self, i: usize, expected: f64, actual: f64) -> bool {
        if !self.unbounded.get(i).copied().unwrap_or(false) {
            return false;
        }
        if expected.is_nan() {
            return self.overflow_nan.get(i).copied().unwrap_or(false);
        }
        !self.product || actual.is_nan() || actual.is_sign_negative() == expected.is_sign_negative()
    }

    /// The sums of plane `k` (0: real, 1: imaginary) of a complex output of
    /// `n` elements, laid out as [`MagnitudeSums::sum_abs`] says; None when
    /// they were not computed per plane (`2n` values).
    pub fn plane(&self, k: usize, n: usize) -> Option<MagnitudeSums> {
        if k > 1 || self.sum_abs.len() != 2 * n {
            return None;
        }
        let half = |v: &[bool]| {
            if v.len() == 2 * n {
                v[k * n..(k + 1) * n].to_vec()
            } else {
                Vec::new()
            }
        };
        Some(MagnitudeSums {
            terms: self.terms,
            sum_abs: self.sum_abs[k * n..(k + 1) * n].to_vec(),
            unbounded: half(&self.unbounded),
            product: self.product,
            overflow_nan: half(&self.overflow_nan),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::MagnitudeSums;
    use crate::hlo::ElementType;

    #[test]
    fn a_complex_output_splits_into_its_planes() {
        let s = MagnitudeSums {
            terms: 4,
            sum_abs: vec![1.0, 2.0, 10.0, 20.0],
            unbounded: vec![false, true, true, false],
            product: false,
            overflow_nan: Vec::new(),
        };
        let im = s.plane(1, 2).unwrap();
        assert_eq!(im.sum_abs, [10.0, 20.0]);
        assert_eq!(im.unbounded, [true, false]);
        assert!(im.overflow_nan.is_empty());
        // 4 terms * eps(f32) * 20
        assert_eq!(
            im.bound(1, ElementType::F32),
            80.0 * f64::from(f32::EPSILON)
        );
        assert_eq!(s.plane(0, 2).unwrap().sum_abs, [1.0, 2.0]);
        // not laid out per plane: none
        assert!(s.plane(0, 4).is_none());
        assert!(s.plane(2, 2).is_none());
    }
}
