//! quickcheck interop (feature `quickcheck`): `Arbitrary` for element types,
//! array shapes and literals, so quickcheck users can reuse the generators.
//!
//! ```
//! use quickcheck::{Arbitrary, Gen};
//! use xla_props::hlo::ArrayShape;
//! use xla_props::literal::Literal;
//! let mut g = Gen::new(8);
//! let shape = ArrayShape::arbitrary(&mut g);
//! assert!(shape.rank() <= 4);
//! let lit = Literal::arbitrary(&mut g);
//! assert_eq!(lit.element_count() as u64, lit.shape().element_count().unwrap());
//! ```

use quickcheck::{Arbitrary, Gen};

use crate::hlo::{ArrayShape, ElementType, Layout};
use crate::inputs::Distribution;
use crate::inputs::{generate, Role, SplitMix};
use crate::literal::Literal;

impl Arbitrary for ElementType {
    fn arbitrary(g: &mut Gen) -> ElementType {
        *g.choose(ElementType::REAL).unwrap_or(&ElementType::F32)
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = ElementType>> {
        // towards f32, the most common type
        if *self == ElementType::F32 {
            Box::new(std::iter::empty())
        } else {
            Box::new(std::iter::once(ElementType::F32))
        }
    }
}

impl Arbitrary for ArrayShape {
    /// Ranks 0..=4, dims 0..=5 (so at most 625 elements), a default or reversed layout.
    fn arbitrary(g: &mut Gen) -> ArrayShape {
        let rank = usize::arbitrary(g) % 5;
        let dims: Vec<i64> = (0..rank).map(|_| (u8::arbitrary(g) % 6) as i64).collect();
        let layout = if bool::arbitrary(g) {
            Layout::row_major(rank)
        } else {
            Layout {
                minor_to_major: (0..rank as i64).collect(),
                extra: None,
            }
        };
        ArrayShape {
            dtype: ElementType::arbitrary(g),
            dims,
            layout: Some(layout),
        }
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = ArrayShape>> {
        let mut out = Vec::new();
        for i in 0..self.dims.len() {
            if self.dims[i] > 1 {
                let mut s = self.clone();
                s.dims[i] -= 1;
                out.push(s);
            }
        }
        if !self.dims.is_empty() {
            let mut dims = self.dims.clone();
            dims.pop();
            out.push(ArrayShape {
                dtype: self.dtype,
                layout: Some(Layout::row_major(dims.len())),
                dims,
            });
        }
        Box::new(out.into_iter())
    }
}

impl Arbitrary for Literal {
    /// An arbitrary shape filled with the `mixed` distribution (edge values half the time).
    fn arbitrary(g: &mut Gen) -> Literal {
        let shape = ArrayShape::arbitrary(g);
        let mut rng = SplitMix::new(u64::arbitrary(g));
        generate(&shape, Role::Data, Distribution::Mixed, &mut rng)
            .unwrap_or_else(|_| Literal::scalar(shape.dtype, 0.0))
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Literal>> {
        if self.element_count() == 0 {
            return Box::new(std::iter::empty());
        }
        let shape = self.shape();
        let smaller: Vec<Literal> = shape
            .shrink()
            .filter_map(|s| {
                let n = s.element_count()? as usize;
                let bits: Vec<u64> = (0..n)
                    .map(|i| self.get_bits(i.min(self.element_count().saturating_sub(1))))
                    .collect();
                Literal::from_bits(&s, &bits).ok()
            })
            .collect();
        Box::new(smaller.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{QuickCheck, TestResult};

    #[test]
    fn literals_rebuild_from_their_bits_and_shrink_to_smaller_shapes() {
        fn prop(lit: Literal) -> TestResult {
            let again = Literal::from_bits(&lit.shape(), &lit.to_bits_vec()).unwrap();
            let shrinks_smaller = lit
                .shrink()
                .all(|s| s.element_count() <= lit.element_count() && s.dtype() == lit.dtype());
            TestResult::from_bool(again.to_bits_vec() == lit.to_bits_vec() && shrinks_smaller)
        }
        QuickCheck::new()
            .tests(200)
            .quickcheck(prop as fn(Literal) -> TestResult);
    }
}
