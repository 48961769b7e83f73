//! ULP statistics of one output against another: what an exhaustive sweep
//! reports per op and dtype.

use super::ulp::{classify, ulp_distance, FloatClass};
use crate::literal::Literal;

/// ULP error statistics of `actual` against `expected` over every element.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UlpStats {
    /// Elements compared.
    pub elements: u64,
    /// Elements whose bits differ (NaNs of any payload count as equal).
    pub differing: u64,
    /// The largest ULP distance between two non-NaN values (infinities included).
    pub max_ulp: u64,
    /// The first element with that distance.
    pub worst_index: Option<usize>,
    /// Elements where exactly one side is NaN, or the signs of two zeros differ.
    pub class_mismatches: u64,
}

/// Computes [`UlpStats`]; None when the two literals differ in type or element count.
///
/// ```
/// use xla_props::check::ulp_stats;
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let s = ArrayShape::new(ElementType::F16, vec![3]);
/// let e = Literal::from_bits(&s, &[0x3c00, 0x7e00, 0x0000]).unwrap();
/// let a = Literal::from_bits(&s, &[0x3c02, 0x7e01, 0x8000]).unwrap();
/// let st = ulp_stats(&e, &a).unwrap();
/// assert_eq!((st.max_ulp, st.worst_index, st.class_mismatches), (2, Some(0), 1));
/// ```
pub fn ulp_stats(expected: &Literal, actual: &Literal) -> Option<UlpStats> {
    let dtype = expected.dtype();
    if dtype != actual.dtype() || expected.element_count() != actual.element_count() {
        return None;
    }
    let fmt = dtype.float_format();
    let mut st = UlpStats::default();
    for i in 0..expected.element_count() {
        st.elements += 1;
        let (e, a) = (expected.get_bits(i), actual.get_bits(i));
        if e == a {
            continue;
        }
        if let Some(fmt) = fmt {
            let (ce, ca) = (classify(e, &fmt), classify(a, &fmt));
            if ce == FloatClass::Nan && ca == FloatClass::Nan {
                continue;
            }
            st.differing += 1;
            if (ce == FloatClass::Nan) != (ca == FloatClass::Nan)
                || (ce == FloatClass::Zero && ca == FloatClass::Zero)
            {
                st.class_mismatches += 1;
                continue;
            }
        } else {
            st.differing += 1;
        }
        let d = ulp_distance(e, a, dtype).map_or(u64::MAX, |d| d.min(u64::MAX as u128) as u64);
        if d > st.max_ulp {
            st.max_ulp = d;
            st.worst_index = Some(i);
        }
    }
    Some(st)
}
