//! Literal-level conversion tests: once-rounding from f64 on values that double
//! rounding gets wrong, and every narrow-float bit pattern through a Literal.

use super::{round_to_bits, Literal};
use crate::hlo::{ArrayShape, ElementType};

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The bits `Literal::from_f64s` stores for `x` in `t`.
fn once(t: ElementType, x: f64) -> u64 {
    Literal::from_f64s(&ArrayShape::new(t, vec![1]), &[x])
        .unwrap()
        .get_bits(0)
}

/// Double rounding the way a detour through f32 does it: f64 -> f32 -> t.
fn via_f32(t: ElementType, x: f64) -> u64 {
    let y = x as f32;
    match t {
        ElementType::F16 => half::f16::from_f32(y).to_bits() as u64,
        ElementType::Bf16 => half::bf16::from_f32(y).to_bits() as u64,
        _ => round_to_bits(y as f64, &t.float_format().unwrap()),
    }
}

#[test]
fn once_rounding_beats_double_rounding() {
    // (type, x, correct bits worked out by hand, what f64->f32->type gives)
    let cases = [
        // f16 ulp at 1 is 2^-10: 1 + 2^-11 is the midpoint, 2^-40 above it is
        // below f32's half-ulp (2^-24), so the detour lands on the tie and goes
        // to even (1.0 = 0x3c00); correct is 1 + 2^-10 = 0x3c01.
        (ElementType::F16, 1.0 + p2(-11) + p2(-40), 0x3c01, 0x3c00),
        // just below the midpoint between 1+2^-10 (odd) and 1+2^-9 (even):
        // correct rounds down to 0xbc01, the detour ties up to even 0xbc02.
        (
            ElementType::F16,
            -(1.0 + 3.0 * p2(-11) - p2(-40)),
            0xbc01,
            0xbc02,
        ),
        // ulp 1 in [1024, 2048): 1024.5 + 2^-20 -> 1025 (0x6401), detour -> 1024 (0x6400)
        (ElementType::F16, 1024.5 + p2(-20), 0x6401, 0x6400),
        // subnormal: 2^-25 is half the smallest subnormal 2^-24; 2^-50 above it
        // rounds up to 2^-24 (0x0001), the detour ties to 0.
        (ElementType::F16, p2(-25) + p2(-50), 0x0001, 0x0000),
        // bf16 ulp at 1 is 2^-7: 1 + 2^-8 + 2^-40 -> 1 + 2^-7 = 0x3f81, detour -> 1.0 = 0x3f80
        (ElementType::Bf16, 1.0 + p2(-8) + p2(-40), 0x3f81, 0x3f80),
        // -2^100 (1 + 2^-8) - 2^60: exponent field 127+100 = 0xe3, so
        // -2^100 = 0xf180; correct -2^100 (1 + 2^-7) = 0xf181
        (
            ElementType::Bf16,
            -(p2(100) * (1.0 + p2(-8)) + p2(60)),
            0xf181,
            0xf180,
        ),
        // f8e4m3fn ulp at 1 is 2^-3: 1 + 2^-4 + 2^-40 -> 1.125 = 0x39, detour -> 1.0 = 0x38
        (ElementType::F8E4M3Fn, 1.0 + p2(-4) + p2(-40), 0x39, 0x38),
        // 464 is the tie between 448 (0x7e) and the NaN encoding 480: a hair above
        // it overflows to NaN (0x7f); the detour ties down to 448.
        (ElementType::F8E4M3Fn, 464.0 + p2(-30), 0x7f, 0x7e),
        // f8e5m2 ulp at 1 is 2^-2: 1 + 2^-3 + 2^-40 -> 1.25 = 0x3d, detour -> 1.0 = 0x3c
        (ElementType::F8E5M2, 1.0 + p2(-3) + p2(-40), 0x3d, 0x3c),
        // subnormal e5m2: smallest is 2^-16 (0x01); 2^-17 + 2^-45 -> 0x01, detour -> 0
        (ElementType::F8E5M2, p2(-17) + p2(-45), 0x01, 0x00),
    ];
    for (t, x, correct, double) in cases {
        assert_eq!(via_f32(t, x), double, "{t} {x:e}: double rounding");
        assert_eq!(once(t, x), correct, "{t} {x:e}: once rounding");
        assert_ne!(correct, double);
    }
}

/// Every bit pattern of a narrow float: set_bits -> get_f64 -> from_f64s gives
/// the same bits, and NaNs come back as NaNs of the same sign.
fn all_patterns_round_trip(t: ElementType) {
    let n = 1usize << t.bit_width();
    let shape = ArrayShape::new(t, vec![n as i64]);
    let bits: Vec<u64> = (0..n as u64).collect();
    let lit = Literal::from_bits(&shape, &bits).unwrap();
    let values = lit.to_f64_vec();
    let back = Literal::from_f64s(&shape, &values).unwrap();
    let mut nans = 0;
    for (b, v) in bits.iter().zip(&values) {
        let got = back.get_bits(*b as usize);
        if v.is_nan() {
            nans += 1;
            let w = back.get_f64(*b as usize);
            assert!(w.is_nan(), "{t} {b:#x}");
            assert_eq!(w.is_sign_negative(), v.is_sign_negative(), "{t} {b:#x}");
        } else {
            assert_eq!(got, *b, "{t} {b:#x} = {v:e}");
        }
    }
    // NaN encodings by hand: f16 2 * (2^10 - 1), bf16 2 * (2^7 - 1),
    // f8e4m3fn only S.1111.111 (2), f8e5m2 2 * (2^2 - 1)
    let want = match t {
        ElementType::F16 => 2046,
        ElementType::Bf16 => 254,
        ElementType::F8E4M3Fn => 2,
        _ => 6,
    };
    assert_eq!(nans, want, "{t}");
}

#[test]
fn every_f16_pattern_round_trips_through_literal() {
    all_patterns_round_trip(ElementType::F16);
}

#[test]
fn every_bf16_pattern_round_trips_through_literal() {
    all_patterns_round_trip(ElementType::Bf16);
}

#[test]
fn every_f8_pattern_round_trips_through_literal() {
    all_patterns_round_trip(ElementType::F8E4M3Fn);
    all_patterns_round_trip(ElementType::F8E5M2);
}

/// NaN of both signs, +inf, -inf and -0 (npy's tests read them back too).
pub(super) const SPECIALS: [f64; 5] = [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0];

#[test]
fn specials_in_from_f64s() {
    let vals = [&SPECIALS[..], &[0.0]].concat();
    // (type, bits for each value) by hand: quiet NaN has the top mantissa bit
    let cases: [(ElementType, [u64; 6]); 5] = [
        (
            ElementType::F16,
            [0x7e00, 0xfe00, 0x7c00, 0xfc00, 0x8000, 0],
        ),
        (
            ElementType::Bf16,
            [0x7fc0, 0xffc0, 0x7f80, 0xff80, 0x8000, 0],
        ),
        // no infinities in e4m3fn: they become NaN (0x7f), keeping the sign
        (ElementType::F8E4M3Fn, [0x7f, 0xff, 0x7f, 0xff, 0x80, 0]),
        (ElementType::F8E5M2, [0x7e, 0xfe, 0x7c, 0xfc, 0x80, 0]),
        (
            ElementType::F32,
            [
                0x7fc0_0000,
                0xffc0_0000,
                0x7f80_0000,
                0xff80_0000,
                0x8000_0000,
                0,
            ],
        ),
    ];
    for (t, want) in cases {
        let lit = Literal::from_f64s(&ArrayShape::new(t, vec![6]), &vals).unwrap();
        assert_eq!(lit.to_bits_vec(), want, "{t}");
    }
    // subnormals: f16 3 * 2^-24 is subnormal pattern 3; bf16's smallest is 2^-133
    assert_eq!(once(ElementType::F16, 3.0 * p2(-24)), 3);
    assert_eq!(once(ElementType::Bf16, -p2(-133)), 0x8001);
    assert_eq!(once(ElementType::F8E4M3Fn, p2(-9)), 0x01);
}

#[test]
fn two_bit_integers_wrap_and_keep_their_bits() {
    let s2 =
        Literal::from_i128s(&ArrayShape::new(ElementType::S2, vec![4]), &[2, -3, 1, -1]).unwrap();
    assert_eq!(s2.to_i128_vec(), vec![-2, 1, 1, -1]);
    assert_eq!(s2.to_bits_vec(), vec![0b10, 0b01, 0b01, 0b11]);
    let u2 = Literal::from_i128s(&ArrayShape::new(ElementType::U2, vec![2]), &[4, 7]).unwrap();
    assert_eq!(u2.to_i128_vec(), vec![0, 3]);
    let mut b = Literal::zeros(&ArrayShape::new(ElementType::S2, vec![1])).unwrap();
    b.set_bits(0, 0b1110);
    assert_eq!(b.get_i128(0), -2);
}

#[test]
fn minifloat_literals_round_once_and_keep_their_type() {
    let shape = ArrayShape::new(ElementType::F6E3M2Fn, vec![3]);
    let l = Literal::from_f64s(&shape, &[0.3, 100.0, -0.0]).unwrap();
    assert_eq!(l.dtype(), ElementType::F6E3M2Fn);
    // 0.3 lies between 0.25 and 0.3125 (steps of 1/16 there): nearer the
    // second; 100 saturates to 28
    assert_eq!(l.to_f64_vec(), vec![0.3125, 28.0, -0.0]);
    assert_eq!(l.get_bits(1), 0x1F);
    assert_eq!(l.shape(), shape);
    let z = Literal::zeros(&ArrayShape::new(ElementType::F8E4M3, vec![2])).unwrap();
    assert_eq!(z.to_f64_vec(), vec![0.0, 0.0]);
}
