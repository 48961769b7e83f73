//! The 16-byte tensor fingerprint (DESIGN.md idea 4): it localizes where two
//! executions of a graph first part ways; it does not prove agreement.
//!
//! # Encoding
//!
//! Four little-endian f32 lanes: `min`, `max`, `mean` and `mean_abs` of the
//! finite elements (0 when there are none), computed in f64 and rounded to f32
//! (saturating at ±`f32::MAX`). The NaN and infinity counts are folded in as a
//! 32-bit *non-finite tag*
//!
//! ```text
//! tag = nan * 0x9E37_79B1 + pos_inf * 0x85EB_CA77 + neg_inf * 0xC2B2_AE3D   (mod 2^32)
//! ```
//!
//! stored in the low 8 mantissa bits of the lanes (tag byte `k` in lane `k`),
//! so each lane keeps 15 of its 23 mantissa bits. The multipliers are odd, so
//! two tensors whose counts differ in one class only (e.g. only in the number
//! of NaNs, by less than 2^32) always get different tags; a tensor with no NaN
//! or infinity has tag 0. An all-NaN tensor therefore differs from an empty
//! one (tag `nan * 0x9E3779B1` vs 0). Elements are read as f64 (integers and
//! pred too), so the result does not depend on element order except through
//! the f64 rounding of the sums.

use std::fmt;

use super::storage::Literal;

const NAN_MUL: u32 = 0x9E37_79B1;
const POS_INF_MUL: u32 = 0x85EB_CA77;
const NEG_INF_MUL: u32 = 0xC2B2_AE3D;
/// Mantissa bits of each lane that carry the non-finite tag.
const TAG_MASK: u32 = 0xff;
/// 2^-64, exact.
const SCALE_DOWN: f64 = 1.0 / 18_446_744_073_709_551_616.0;

/// Summary statistics of one tensor in 16 bytes (see the module docs).
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::{Fingerprint, Literal};
/// let shape = ArrayShape::new(ElementType::F32, vec![4]);
/// let a = Literal::from_f64s(&shape, &[-1.0, 2.0, 3.0, f64::NAN]).unwrap();
/// let fp = a.fingerprint();
/// assert_eq!((fp.min(), fp.max(), fp.mean_abs()), (-1.0, 3.0, 2.0));
/// assert!((fp.mean() - 4.0 / 3.0).abs() < 1e-4); // lanes keep 15 mantissa bits
/// assert_eq!(fp.nonfinite_tag(), 0x9E37_79B1); // one NaN
/// assert_eq!(Fingerprint::from_bytes(fp.to_bytes()), fp);
/// // localizing: a reassociated sum is close, a second NaN is not
/// let b = Literal::from_f64s(&shape, &[-1.0, 2.0, 3.0 + 1e-6, f64::NAN]).unwrap();
/// let c = Literal::from_f64s(&shape, &[-1.0, 2.0, f64::NAN, f64::NAN]).unwrap();
/// assert!(fp.close_to(&b.fingerprint(), 1e-3));
/// assert!(!fp.close_to(&c.fingerprint(), 1e-3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    lanes: [u32; 4],
}

impl Fingerprint {
    /// Computes the fingerprint of values given as f64.
    pub fn of_values(values: impl IntoIterator<Item = f64>) -> Fingerprint {
        let (mut nan, mut pos_inf, mut neg_inf) = (0u64, 0u64, 0u64);
        let (mut n, mut sum, mut sum_abs) = (0u64, 0f64, 0f64);
        // the same sums scaled by 2^-64, used only if the plain sums overflow f64
        let (mut sum_s, mut sum_abs_s) = (0f64, 0f64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v.is_nan() {
                nan += 1;
            } else if v == f64::INFINITY {
                pos_inf += 1;
            } else if v == f64::NEG_INFINITY {
                neg_inf += 1;
            } else {
                n += 1;
                sum += v;
                sum_abs += v.abs();
                // -0 sorts below +0 so the result does not depend on order
                if v < min || (v == min && v.is_sign_negative()) {
                    min = v;
                }
                if v > max || (v == max && v.is_sign_positive()) {
                    max = v;
                }
                sum_s += v * SCALE_DOWN;
                sum_abs_s += v.abs() * SCALE_DOWN;
            }
        }
        let (mean, mean_abs) = if n == 0 {
            (min, max) = (0.0, 0.0);
            (0.0, 0.0)
        } else if sum.is_finite() && sum_abs.is_finite() {
            (sum / n as f64, sum_abs / n as f64)
        } else {
            // f64 overflow (only near f64::MAX): the scaled sums cannot overflow
            (
                sum_s / n as f64 / SCALE_DOWN,
                sum_abs_s / n as f64 / SCALE_DOWN,
            )
        };
        let tag = (nan as u32)
            .wrapping_mul(NAN_MUL)
            .wrapping_add((pos_inf as u32).wrapping_mul(POS_INF_MUL))
            .wrapping_add((neg_inf as u32).wrapping_mul(NEG_INF_MUL));
        let lane = |x: f64, k: u32| {
            let f = x.clamp(-(f32::MAX as f64), f32::MAX as f64) as f32;
            (f.to_bits() & !TAG_MASK) | ((tag >> (8 * k)) & TAG_MASK)
        };
        Fingerprint {
            lanes: [lane(min, 0), lane(max, 1), lane(mean, 2), lane(mean_abs, 3)],
        }
    }

    fn lane(&self, k: usize) -> f32 {
        f32::from_bits(self.lanes[k] & !TAG_MASK)
    }

    /// Smallest finite element (0 if none), to 15 mantissa bits.
    pub fn min(&self) -> f32 {
        self.lane(0)
    }
    /// Largest finite element (0 if none), to 15 mantissa bits.
    pub fn max(&self) -> f32 {
        self.lane(1)
    }
    /// Mean of the finite elements (0 if none), to 15 mantissa bits.
    pub fn mean(&self) -> f32 {
        self.lane(2)
    }
    /// Mean absolute value of the finite elements (0 if none), to 15 mantissa bits.
    pub fn mean_abs(&self) -> f32 {
        self.lane(3)
    }
    /// The 32-bit tag of the NaN/±inf counts (0 when there are none).
    pub fn nonfinite_tag(&self) -> u32 {
        self.lanes
            .iter()
            .enumerate()
            .fold(0, |acc, (k, &l)| acc | ((l & TAG_MASK) << (8 * k)))
    }

    /// The 16-byte form: four little-endian f32 lanes.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (k, l) in self.lanes.iter().enumerate() {
            out[4 * k..4 * k + 4].copy_from_slice(&l.to_le_bytes());
        }
        out
    }

    /// The inverse of [`Fingerprint::to_bytes`].
    pub fn from_bytes(bytes: [u8; 16]) -> Fingerprint {
        let mut lanes = [0u32; 4];
        for (k, l) in lanes.iter_mut().enumerate() {
            *l = u32::from_le_bytes([
                bytes[4 * k],
                bytes[4 * k + 1],
                bytes[4 * k + 2],
                bytes[4 * k + 3],
            ]);
        }
        Fingerprint { lanes }
    }

    /// The parts of two fingerprints that differ, as (name, this, other),
    /// each lane at the digits that tell its two values apart (the shortest
    /// text that reads back as the lane's f32); empty when they are equal.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::F32, vec![3]);
    /// let a = Literal::from_f64s(&shape, &[1.0, 2.0, 3.0]).unwrap().fingerprint();
    /// let b = Literal::from_f64s(&shape, &[1.0, 2.0, 3.01]).unwrap().fingerprint();
    /// let d = a.differences(&b);
    /// assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), ["max", "mean", "mean_abs"]);
    /// assert!(d.iter().all(|(_, x, y)| x != y));
    /// assert!(a.differences(&a).is_empty());
    /// ```
    pub fn differences(&self, other: &Fingerprint) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        for (k, name) in ["min", "max", "mean", "mean_abs"].into_iter().enumerate() {
            let (a, b) = (self.lane(k), other.lane(k));
            if a.to_bits() != b.to_bits() {
                out.push((name, a.to_string(), b.to_string()));
            }
        }
        let (a, b) = (self.nonfinite_tag(), other.nonfinite_tag());
        if a != b {
            out.push(("nonfinite", format!("{a:#010x}"), format!("{b:#010x}")));
        }
        out
    }

    /// The cheap localization check: equal non-finite tags, and every lane
    /// within `rel_tol` times the tensors' magnitude (the largest |min| or
    /// |max| of the two; the means are bounded by it, so a mean near zero from
    /// cancellation is not held to a relative tolerance of its own).
    /// True means "probably the same tensor"; the verdict needs a full comparison.
    pub fn close_to(&self, other: &Fingerprint, rel_tol: f64) -> bool {
        if self.nonfinite_tag() != other.nonfinite_tag() {
            return false;
        }
        let scale = [self.min(), self.max(), other.min(), other.max()]
            .iter()
            .fold(0f64, |m, &x| m.max((x as f64).abs()));
        (0..4).all(|k| {
            let (a, b) = (self.lane(k) as f64, other.lane(k) as f64);
            a == b || (a - b).abs() <= rel_tol * scale
        })
    }
}

impl fmt::Display for Fingerprint {
    /// `min=-1 max=3 mean=1.3333 mean_abs=2 nonfinite=0x9e3779b1`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "min={} max={} mean={} mean_abs={} nonfinite={:#010x}",
            self.min(),
            self.max(),
            self.mean(),
            self.mean_abs(),
            self.nonfinite_tag()
        )
    }
}

impl Literal {
    /// This literal's [`Fingerprint`].
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let lit = Literal::from_i128s(&ArrayShape::new(ElementType::S32, vec![3]), &[-4, 0, 10]).unwrap();
    /// assert_eq!(lit.fingerprint().to_string(), "min=-4 max=10 mean=2 mean_abs=4.666626 nonfinite=0x00000000");
    /// ```
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of_values((0..self.element_count()).map(|i| self.get_f64(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{ArrayShape, ElementType};

    fn fp(vals: &[f64]) -> Fingerprint {
        Fingerprint::of_values(vals.iter().copied())
    }

    #[test]
    fn bytes_are_four_le_f32_lanes() {
        // all lanes 1.0 = 0x3f800000, tag 0
        let f = fp(&[1.0, 1.0]);
        assert_eq!(f.to_bytes(), [0, 0, 0x80, 0x3f].repeat(4).as_slice());
        assert_eq!(Fingerprint::from_bytes(f.to_bytes()), f);
        let g = fp(&[-2.0, f64::NAN, 5.0, f64::NEG_INFINITY]);
        assert_eq!(Fingerprint::from_bytes(g.to_bytes()), g);
        // tag 0x9E3779B1 + 0xC2B2AE3D = 0x60EA27EE (mod 2^32); byte k in lane k's low byte
        assert_eq!(g.nonfinite_tag(), 0x60EA_27EE);
        assert_eq!(g.to_bytes()[0], 0xEE);
        assert_eq!(g.to_bytes()[12], 0x60);
        assert_eq!(
            (g.min(), g.max(), g.mean(), g.mean_abs()),
            (-2.0, 5.0, 1.5, 3.5)
        );
    }

    #[test]
    fn nan_and_inf_counts_change_the_fingerprint() {
        let base = fp(&[1.0, 2.0, f64::NAN]);
        assert_ne!(base, fp(&[1.0, 2.0, f64::NAN, f64::NAN]));
        assert_ne!(base, fp(&[1.0, 2.0]));
        assert_ne!(fp(&[1.0, f64::INFINITY]), fp(&[1.0, f64::NEG_INFINITY]));
        assert_ne!(fp(&[1.0, f64::INFINITY]), fp(&[1.0, f64::NAN]));
        // sign of a NaN does not matter, its count does
        assert_eq!(fp(&[1.0, f64::NAN]), fp(&[1.0, -f64::NAN]));
        // counts 0..5000 of NaN alone all give distinct tags
        let mut tags: Vec<u32> = (0..5000)
            .map(|k| fp(&vec![f64::NAN; k]).nonfinite_tag())
            .collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), 5000);
        // and a count difference is never within tolerance
        assert!(!base.close_to(&fp(&[1.0, 2.0, f64::NAN, f64::NAN]), 1.0));
    }

    #[test]
    fn all_nan_is_not_empty() {
        let empty = fp(&[]);
        assert_eq!(empty.to_bytes(), [0; 16]);
        let nans = fp(&[f64::NAN; 3]);
        assert_ne!(nans, empty);
        assert_eq!(
            (nans.min(), nans.max(), nans.mean(), nans.mean_abs()),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(nans.nonfinite_tag(), 3u32.wrapping_mul(0x9E37_79B1));
        assert!(!nans.close_to(&empty, 1.0));
    }

    #[test]
    fn permutations_give_the_same_min_max_mean() {
        // multiples of 1/8 sum exactly, so the whole fingerprint is order-free
        let vals: Vec<f64> = (0..97)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 8.0)
            .chain([-0.0, 0.0, f64::NAN, f64::INFINITY])
            .collect();
        let mut rev = vals.clone();
        rev.reverse();
        let mut rot = vals.clone();
        rot.rotate_left(41);
        let f = fp(&vals);
        assert_eq!(f, fp(&rev));
        assert_eq!(f, fp(&rot));
        // arbitrary floats: min/max exact, means close
        let wild: Vec<f64> = (1..500)
            .map(|i| (i as f64 * 0.7).sin() * 1e3 / i as f64)
            .collect();
        let mut wild_rev = wild.clone();
        wild_rev.reverse();
        let (a, b) = (fp(&wild), fp(&wild_rev));
        assert_eq!((a.min(), a.max()), (b.min(), b.max()));
        assert!(a.close_to(&b, 1e-6));
    }

    #[test]
    fn signed_zeros_are_order_free() {
        let a = fp(&[0.0, -0.0]);
        let b = fp(&[-0.0, 0.0]);
        assert_eq!(a, b);
        assert!(a.min().is_sign_negative() && a.max().is_sign_positive());
    }

    #[test]
    fn close_to_scales_by_magnitude() {
        // mean 0 vs 5e-8: relative to the magnitude 1 that is tiny
        let a = fp(&[-1.0, 1.0]);
        let b = fp(&[-1.0, 1.0 + 1e-7]);
        assert!(a.close_to(&b, 1e-6));
        assert!(!a.close_to(&fp(&[-1.0, 1.01]), 1e-3));
        assert!(a.close_to(&a, 0.0));
    }

    #[test]
    fn f64_overflow_saturates() {
        let f = fp(&[f64::MAX, f64::MAX, -f64::MAX]);
        // f32::MAX = 0x7f7fffff with the tag byte (0) in its low 8 bits
        assert_eq!(f.max().to_bits(), 0x7f7f_ff00);
        assert_eq!(f.min().to_bits(), 0xff7f_ff00);
        assert_eq!(f.mean_abs(), f.max());
        assert_eq!(f.mean(), f.max()); // f64::MAX / 3 is still over f32::MAX
        assert!(f.mean().is_finite());
    }

    #[test]
    fn literal_fingerprint_reads_every_dtype() {
        let lit = Literal::from_i128s(
            &ArrayShape::new(ElementType::U8, vec![2, 2]),
            &[0, 255, 1, 0],
        )
        .unwrap();
        let f = lit.fingerprint();
        assert_eq!((f.min(), f.max(), f.mean()), (0.0, 255.0, 64.0));
        let h = Literal::from_f64s(
            &ArrayShape::new(ElementType::F16, vec![3]),
            &[1.0, f64::INFINITY, -1.0],
        )
        .unwrap();
        assert_eq!(h.fingerprint().nonfinite_tag(), 0x85EB_CA77);
        assert_eq!(
            h.fingerprint().to_string(),
            "min=-1 max=1 mean=0 mean_abs=1 nonfinite=0x85ebca77"
        );
    }
}
