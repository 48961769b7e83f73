//! Complex element types on the PJRT host boundary.

use super::*;
use crate::hlo::{ArrayShape, ElementType};
use crate::literal::Literal;

#[test]
fn complex_types_have_their_pjrt_codes() {
    assert_eq!(buffer_type_code(ElementType::C64), Some(14));
    assert_eq!(buffer_type_code(ElementType::C128), Some(15));
    assert_eq!(element_type_of_code(14), Some(ElementType::C64));
    assert_eq!(element_type_of_code(15), Some(ElementType::C128));
}

#[test]
fn complex_host_bytes_interleave_and_round_trip() {
    for (dt, pt) in [
        (ElementType::C64, ElementType::F32),
        (ElementType::C128, ElementType::F64),
    ] {
        let p = ArrayShape::new(pt, vec![2]);
        let re = Literal::from_f64s(&p, &[1.0, -0.0]).unwrap();
        let im = Literal::from_f64s(&p, &[2.0, f64::NAN]).unwrap();
        let z = Literal::from_planes(&re, &im).unwrap();
        let h = complex_to_host(&z).unwrap();
        assert_eq!(h.dtype, dt);
        assert_eq!(Some(h.bytes.len()), h.expected_bytes());
        let w = pt.byte_size();
        assert_eq!(&h.bytes[..w], &re.to_le_bytes()[..w], "{dt}: real first");
        assert_eq!(
            &h.bytes[w..2 * w],
            &im.to_le_bytes()[..w],
            "{dt}: then imag"
        );
        let back = complex_from_host(&h, &ArrayShape::new(dt, vec![2])).unwrap();
        let (r2, i2) = back.planes().unwrap();
        assert_eq!(r2.to_le_bytes(), re.to_le_bytes());
        assert_eq!(i2.to_le_bytes(), im.to_le_bytes());
    }
    let real = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1]), &[1.0]).unwrap();
    assert!(complex_to_host(&real).is_none());
}
