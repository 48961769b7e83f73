//! Physical layouts: mapping between logical row-major order and the order in
//! which a layout (`minor_to_major`) stores the elements in memory.
//!
//! A `Literal` always keeps its data in logical row-major order; the layout is
//! metadata. `bitcast` reinterprets the physical buffer, so the evaluators go
//! through [`Literal::to_physical_bits`] and [`Literal::from_physical_bits`].

use super::storage::{Literal, LiteralError};
use crate::hlo::{ArrayShape, Layout};

/// The index mapping of one layout over one set of logical dims.
///
/// ```
/// use xla_props::hlo::Layout;
/// use xla_props::literal::LayoutMap;
/// // f32[2,3]{0,1}: column-major, dimension 0 is the most minor.
/// let layout = Layout { minor_to_major: vec![0, 1], extra: None };
/// let map = LayoutMap::new(&[2, 3], &layout).unwrap();
/// // logical (0,1) is row-major index 1 and lives at physical position 2
/// assert_eq!(map.logical_to_physical(1), 2);
/// assert_eq!(map.physical_to_logical(2), 1);
/// assert_eq!(map.physical_positions(), vec![0, 2, 4, 1, 3, 5]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutMap {
    dims: Vec<usize>,
    /// Physical stride (in elements) of each logical dimension.
    strides: Vec<usize>,
    /// Logical dimensions from minor to major.
    minor_to_major: Vec<usize>,
    /// Row-major stride (in elements) of each logical dimension.
    row_strides: Vec<usize>,
}

impl LayoutMap {
    /// Checks `layout` against `dims` (same rank, `minor_to_major` a
    /// permutation of `0..rank`, no tiling) and builds the mapping.
    /// Memory-space and other non-tiling extras are ignored.
    pub fn new(dims: &[usize], layout: &Layout) -> Result<LayoutMap, LiteralError> {
        let bad = |reason: String| LiteralError::BadLayout {
            layout: layout.to_string(),
            dims: format!("{dims:?}").replace(' ', ""),
            reason,
        };
        if layout.extra.as_deref().is_some_and(|e| e.contains("T(")) {
            return Err(bad("tiled layouts are not supported".into()));
        }
        let rank = dims.len();
        if layout.minor_to_major.len() != rank {
            return Err(bad(format!(
                "it names {} dimensions but the rank is {rank}",
                layout.minor_to_major.len()
            )));
        }
        let mut seen = vec![false; rank];
        let mut m2m = Vec::with_capacity(rank);
        for &d in &layout.minor_to_major {
            let ok = usize::try_from(d).ok().filter(|&d| d < rank && !seen[d]);
            let Some(d) = ok else {
                return Err(bad(
                    "minor_to_major is not a permutation of the dimensions".into()
                ));
            };
            seen[d] = true;
            m2m.push(d);
        }
        let mut strides = vec![0usize; rank];
        let mut acc = 1usize;
        for &d in &m2m {
            strides[d] = acc;
            acc = acc
                .checked_mul(dims[d])
                .ok_or_else(|| bad("element count overflows".into()))?;
        }
        let mut row_strides = vec![0usize; rank];
        let mut acc = 1usize;
        for d in (0..rank).rev() {
            row_strides[d] = acc;
            acc = acc.saturating_mul(dims[d]);
        }
        Ok(LayoutMap {
            dims: dims.to_vec(),
            strides,
            minor_to_major: m2m,
            row_strides,
        })
    }

    /// Number of elements.
    pub fn element_count(&self) -> usize {
        self.dims.iter().product()
    }

    /// The physical position of the element at row-major index `logical`
    /// (which must be below [`LayoutMap::element_count`]; otherwise the result is
    /// unspecified, but there is no panic).
    pub fn logical_to_physical(&self, logical: usize) -> usize {
        let mut rest = logical;
        let mut phys = 0;
        for (d, &n) in self.dims.iter().enumerate().rev() {
            let n = n.max(1);
            phys += (rest % n) * self.strides[d];
            rest /= n;
        }
        phys
    }

    /// The row-major index of the element at physical position `physical`
    /// (which must be below [`LayoutMap::element_count`], as above).
    pub fn physical_to_logical(&self, physical: usize) -> usize {
        let mut rest = physical;
        let mut logical = 0;
        for &d in &self.minor_to_major {
            let n = self.dims[d].max(1);
            logical += (rest % n) * self.row_strides[d];
            rest /= n;
        }
        logical
    }

    /// For every row-major index `i` (in order), its physical position.
    pub fn physical_positions(&self) -> Vec<usize> {
        let count = self.element_count();
        let mut out = Vec::with_capacity(count);
        if count == 0 {
            return out;
        }
        // odometer over the logical multi-index, tracking the physical offset
        let rank = self.dims.len();
        let mut idx = vec![0usize; rank];
        let mut phys = 0usize;
        for _ in 0..count {
            out.push(phys);
            for d in (0..rank).rev() {
                idx[d] += 1;
                phys += self.strides[d];
                if idx[d] < self.dims[d] {
                    break;
                }
                phys -= self.strides[d] * self.dims[d];
                idx[d] = 0;
            }
        }
        out
    }
}

/// The physical position, under `layout`, of the element at row-major index
/// `logical` of an array with logical `dims`.
///
/// ```
/// use xla_props::hlo::Layout;
/// use xla_props::literal::logical_to_physical_index;
/// let col_major = Layout { minor_to_major: vec![0, 1], extra: None };
/// assert_eq!(logical_to_physical_index(&[2, 3], &col_major, 4).unwrap(), 3);
/// assert_eq!(logical_to_physical_index(&[2, 3], &Layout::row_major(2), 4).unwrap(), 4);
/// ```
pub fn logical_to_physical_index(
    dims: &[usize],
    layout: &Layout,
    logical: usize,
) -> Result<usize, LiteralError> {
    Ok(LayoutMap::new(dims, layout)?.logical_to_physical(logical))
}

impl Literal {
    /// The elements' bit patterns in the physical order of `layout`.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType, Layout};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::S32, vec![2, 3]);
    /// let lit = Literal::from_i128s(&shape, &[0, 1, 2, 3, 4, 5]).unwrap();
    /// let col_major = Layout { minor_to_major: vec![0, 1], extra: None };
    /// assert_eq!(lit.to_physical_bits(&col_major).unwrap(), vec![0, 3, 1, 4, 2, 5]);
    /// ```
    pub fn to_physical_bits(&self, layout: &Layout) -> Result<Vec<u64>, LiteralError> {
        let map = LayoutMap::new(self.dims(), layout)?;
        let mut out = vec![0u64; self.element_count()];
        for (i, p) in map.physical_positions().into_iter().enumerate() {
            out[p] = self.get_bits(i);
        }
        Ok(out)
    }

    /// Builds a literal of `shape` from bit patterns given in the physical
    /// order of `layout`; the result keeps `shape`'s own layout as metadata.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType, Layout};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::S32, vec![2, 3]);
    /// let col_major = Layout { minor_to_major: vec![0, 1], extra: None };
    /// let lit = Literal::from_physical_bits(&shape, &col_major, &[0, 3, 1, 4, 2, 5]).unwrap();
    /// assert_eq!(lit.to_i128_vec(), vec![0, 1, 2, 3, 4, 5]);
    /// ```
    pub fn from_physical_bits(
        shape: &ArrayShape,
        layout: &Layout,
        bits: &[u64],
    ) -> Result<Literal, LiteralError> {
        let mut lit = Literal::zeros(shape)?;
        let map = LayoutMap::new(lit.dims(), layout)?;
        if bits.len() != map.element_count() {
            return Err(LiteralError::LengthMismatch {
                shape: shape.to_string(),
                expected: map.element_count() as u64,
                actual: bits.len() as u64,
            });
        }
        for (i, p) in map.physical_positions().into_iter().enumerate() {
            lit.set_bits(i, bits[p]);
        }
        Ok(lit)
    }

    /// XLA `bitcast`: reinterprets this literal's physical buffer (in its own
    /// layout, row-major if none) as `to` (in `to`'s layout, row-major if none).
    /// The element type and count must match.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType, Layout};
    /// use xla_props::literal::Literal;
    /// // s32[2,3]{0,1} holds memory 0 3 1 4 2 5; read back as s32[3,2]{1,0} it is a transpose
    /// let col = Layout { minor_to_major: vec![0, 1], extra: None };
    /// let src = Literal::from_i128s(&ArrayShape::new(ElementType::S32, vec![2, 3]), &[0, 1, 2, 3, 4, 5])
    ///     .unwrap()
    ///     .with_layout(Some(col));
    /// let out = src.bitcast(&ArrayShape::new(ElementType::S32, vec![3, 2])).unwrap();
    /// assert_eq!(out.to_i128_vec(), vec![0, 3, 1, 4, 2, 5]);
    /// ```
    pub fn bitcast(&self, to: &ArrayShape) -> Result<Literal, LiteralError> {
        let from = self.shape();
        // an element type of the same width is a reinterpretation of the
        // bits (XLA writes `s32[] bitcast(f32[])` in sort comparators)
        let same_width = from.dtype == to.dtype
            || (from.dtype.bit_width() == to.dtype.bit_width()
                && !from.dtype.is_complex()
                && !to.dtype.is_complex());
        if !same_width || from.element_count() != to.element_count() {
            return Err(LiteralError::Other(format!(
                "cannot bitcast {from} to {to}: element width and count must match"
            )));
        }
        let bits = self.to_physical_bits(&from.layout_or_default())?;
        Literal::from_physical_bits(to, &to.layout_or_default(), &bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::ElementType;

    fn layout(m2m: &[i64]) -> Layout {
        Layout {
            minor_to_major: m2m.to_vec(),
            extra: None,
        }
    }

    #[test]
    fn rank3_mapping_worked_by_hand() {
        // dims [2,3,4], minor_to_major {1,2,0}: dim 1 minor (stride 1), then
        // dim 2 (stride 3), then dim 0 (stride 12).
        let map = LayoutMap::new(&[2, 3, 4], &layout(&[1, 2, 0])).unwrap();
        // logical (1,2,3) = row-major 1*12 + 2*4 + 3 = 23 -> physical 1*12 + 2*1 + 3*3 = 23
        assert_eq!(map.logical_to_physical(23), 23);
        // logical (0,1,2) = 6 -> physical 1 + 2*3 = 7
        assert_eq!(map.logical_to_physical(6), 7);
        assert_eq!(map.physical_to_logical(7), 6);
        let pos = map.physical_positions();
        let mut sorted = pos.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..24).collect::<Vec<_>>());
        for (i, &p) in pos.iter().enumerate() {
            assert_eq!(map.logical_to_physical(i), p);
            assert_eq!(map.physical_to_logical(p), i);
        }
    }

    #[test]
    fn row_major_is_identity_and_zero_sized_dims_work() {
        let map = LayoutMap::new(&[3, 1, 2], &Layout::row_major(3)).unwrap();
        assert_eq!(map.physical_positions(), (0..6).collect::<Vec<_>>());
        let map = LayoutMap::new(&[3, 0, 2], &layout(&[0, 1, 2])).unwrap();
        assert!(map.physical_positions().is_empty());
        // out-of-range indices into an empty array do not panic
        let _ = (map.logical_to_physical(5), map.physical_to_logical(5));
        let scalar = LayoutMap::new(&[], &layout(&[])).unwrap();
        assert_eq!(scalar.physical_positions(), vec![0]);
    }

    #[test]
    fn bad_layouts_are_errors() {
        let e = LayoutMap::new(&[2, 3], &layout(&[0])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad layout {0} for dims [2,3]: it names 1 dimensions but the rank is 2"
        );
        assert!(LayoutMap::new(&[2, 3], &layout(&[0, 0])).is_err());
        assert!(LayoutMap::new(&[2, 3], &layout(&[0, 2])).is_err());
        assert!(LayoutMap::new(&[2, 3], &layout(&[-1, 0])).is_err());
        let tiled = Layout {
            minor_to_major: vec![1, 0],
            extra: Some("T(8,128)".into()),
        };
        assert!(LayoutMap::new(&[2, 3], &tiled).is_err());
        let mem_space = Layout {
            minor_to_major: vec![1, 0],
            extra: Some("S(1)".into()),
        };
        assert!(LayoutMap::new(&[2, 3], &mem_space).is_ok());
    }

    #[test]
    fn physical_bits_round_trip_and_bitcast_checks() {
        let shape = ArrayShape::new(ElementType::F16, vec![2, 2, 3]);
        let bits: Vec<u64> = (0..12).map(|i| 0x3c00 + i).collect();
        let lit = Literal::from_bits(&shape, &bits).unwrap();
        let l = layout(&[0, 2, 1]);
        let phys = lit.to_physical_bits(&l).unwrap();
        // logical (0,0,1) = row-major 1 -> physical stride of dim 2 is 2 -> position 2
        assert_eq!(phys[2], 0x3c01);
        let back = Literal::from_physical_bits(&shape, &l, &phys).unwrap();
        assert_eq!(back, lit);
        assert!(Literal::from_physical_bits(&shape, &l, &phys[..11]).is_err());
        let bitcast = |t, n| lit.bitcast(&ArrayShape::new(t, vec![n]));
        assert!(bitcast(ElementType::F16, 13).is_err());
        // another element type of the same width reinterprets the bits
        let as_bf16 = bitcast(ElementType::Bf16, 12).unwrap();
        assert_eq!(as_bf16.get_bits(1), lit.get_bits(1));
        assert!(bitcast(ElementType::F32, 12).is_err());
        // row-major to row-major bitcast is a reshape
        let flat = bitcast(ElementType::F16, 12).unwrap();
        assert_eq!(flat.to_bits_vec(), bits);
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use crate::hlo::ElementType;
    use proptest::prelude::*;

    fn dims_and_layout() -> impl Strategy<Value = (Vec<usize>, Vec<i64>)> {
        proptest::collection::vec(0usize..5, 0..5).prop_flat_map(|dims| {
            let rank = dims.len();
            let perm = Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle();
            (Just(dims), perm)
        })
    }

    proptest! {
        #[test]
        fn physical_order_is_a_bijection((dims, m2m) in dims_and_layout()) {
            let layout = Layout { minor_to_major: m2m, extra: None };
            let map = LayoutMap::new(&dims, &layout).unwrap();
            let pos = map.physical_positions();
            let mut seen = vec![false; pos.len()];
            for (i, &p) in pos.iter().enumerate() {
                prop_assert!(!seen[p]);
                seen[p] = true;
                prop_assert_eq!(map.logical_to_physical(i), p);
                prop_assert_eq!(map.physical_to_logical(p), i);
            }
            let shape = ArrayShape::new(ElementType::U16, dims.iter().map(|&d| d as i64).collect::<Vec<_>>());
            let bits: Vec<u64> = (0..pos.len() as u64).collect();
            let lit = Literal::from_bits(&shape, &bits).unwrap();
            let phys = lit.to_physical_bits(&layout).unwrap();
            prop_assert_eq!(Literal::from_physical_bits(&shape, &layout, &phys).unwrap(), lit);
        }
    }
}
