use super::*;
use crate::literal::conversion_tests::SPECIALS;
use crate::literal::Fingerprint;

fn shape(t: ElementType, dims: &[i64]) -> ArrayShape {
    ArrayShape::new(t, dims.to_vec())
}

/// A `.npy` file of `dict` (as given, unpadded) and `data`.
fn npy(major: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = framed_header(major, dict);
    out.extend_from_slice(data);
    out
}

fn data_file(name: &str) -> Literal {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/npy")
        .join(name);
    Literal::read_npy_file(&path, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn data_file_as(name: &str, expected: &ArrayShape) -> Literal {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/npy")
        .join(name);
    Literal::read_npy_file(&path, Some(expected)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Deterministic bit patterns covering the whole width (and every f8 pattern).
fn patterns(t: ElementType, n: usize) -> Vec<u64> {
    let width = t.bit_width();
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (0..n as u64)
        .map(|i| match t {
            ElementType::Pred => i & 1,
            _ => (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 3)) & mask,
        })
        .collect()
}

#[test]
fn every_dtype_and_shape_round_trips() {
    let shapes: &[&[i64]] = &[&[], &[5], &[0], &[2, 0, 3], &[2, 3, 4]];
    for &t in ElementType::REAL {
        for dims in shapes {
            let s = shape(t, dims);
            let n = s.element_count().unwrap() as usize;
            let lit = Literal::from_bits(&s, &patterns(t, n)).unwrap();
            let bytes = lit.to_npy_bytes();
            let header_len = bytes.len() - n * t.byte_size();
            assert_eq!(header_len % 64, 0, "{s}: header is 64-byte aligned");
            let back = Literal::read_npy(&bytes[..], None).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(back.shape(), s);
            assert_eq!(back.to_bits_vec(), lit.to_bits_vec(), "{s}");
            let back = Literal::read_npy(&bytes[..], Some(&s)).unwrap();
            assert_eq!(back.to_bits_vec(), lit.to_bits_vec(), "{s}");
        }
    }
}

#[test]
fn written_descrs_are_the_documented_ones() {
    let cases = [
        (ElementType::Pred, "'|b1'"),
        (ElementType::S8, "'|i1'"),
        (ElementType::S16, "'<i2'"),
        (ElementType::S64, "'<i8'"),
        (ElementType::U8, "'|u1'"),
        (ElementType::U32, "'<u4'"),
        (ElementType::F16, "'<f2'"),
        (ElementType::F32, "'<f4'"),
        (ElementType::F64, "'<f8'"),
        (ElementType::Bf16, "[('bfloat16', '|V2')]"),
        (ElementType::F8E4M3Fn, "[('float8_e4m3fn', '|V1')]"),
        (ElementType::F8E5M2, "[('float8_e5m2', '|V1')]"),
        (ElementType::S4, "[('int4', '|V1')]"),
        (ElementType::U4, "[('uint4', '|V1')]"),
    ];
    for (t, descr) in cases {
        let lit = Literal::zeros(&shape(t, &[2, 1])).unwrap();
        let bytes = lit.to_npy_bytes();
        let text = String::from_utf8_lossy(&bytes[10..]).into_owned();
        let want = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (2, 1), }}");
        assert!(text.starts_with(&want), "{t}: {text}");
    }
    let scalar = Literal::scalar(ElementType::F32, 1.0).to_npy_bytes();
    assert!(String::from_utf8_lossy(&scalar).contains("'shape': (), }"));
    let vector = Literal::zeros(&shape(ElementType::F32, &[7]))
        .unwrap()
        .to_npy_bytes();
    assert!(String::from_utf8_lossy(&vector).contains("'shape': (7,), }"));
}

#[test]
fn float_specials_survive_npy() {
    // NaN of both signs, ±inf, -0, subnormals, for every float type
    for &t in ElementType::FLOATS {
        let s = shape(t, &[7]);
        let min_sub = t.float_format().unwrap().min_subnormal();
        let vals = [&SPECIALS[..], &[min_sub, -min_sub]].concat();
        let lit = Literal::from_f64s(&s, &vals).unwrap();
        let back = Literal::read_npy(&lit.to_npy_bytes()[..], None).unwrap();
        assert_eq!(back.to_bits_vec(), lit.to_bits_vec(), "{t}");
        let v = back.to_f64_vec();
        assert!(v[0].is_nan() && v[0].is_sign_positive(), "{t}");
        assert!(v[1].is_nan() && v[1].is_sign_negative(), "{t}");
        if t == ElementType::F8E4M3Fn {
            // no infinities: overflow is NaN, with the sign kept
            assert!(v[2].is_nan() && v[3].is_nan() && v[3].is_sign_negative());
        } else {
            assert_eq!((v[2], v[3]), (f64::INFINITY, f64::NEG_INFINITY), "{t}");
        }
        assert!(v[4] == 0.0 && v[4].is_sign_negative(), "{t}");
        assert_eq!((v[5], v[6]), (min_sub, -min_sub), "{t}");
    }
}

#[test]
fn reads_numpy_reference_files() {
    let l = data_file("f32_2x3.npy");
    assert_eq!(l.shape(), shape(ElementType::F32, &[2, 3]));
    assert_eq!(l.to_f64_vec(), vec![-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]);

    let l = data_file("f64_specials.npy");
    let v = l.to_f64_vec();
    assert!(v[0].is_nan() && v[0].is_sign_positive());
    assert!(v[1].is_nan() && v[1].is_sign_negative());
    assert_eq!(&v[2..4], &[f64::INFINITY, f64::NEG_INFINITY]);
    assert!(v[4] == 0.0 && v[4].is_sign_negative());
    assert_eq!(v[5].to_bits(), 1); // smallest f64 subnormal
    assert_eq!(v[6], 1.5);

    let l = data_file("f16_be.npy");
    assert_eq!(l.to_bits_vec(), vec![0x3c00, 0xc000, 0x7bff, 0x0001]);
    assert_eq!(l.to_f64_vec(), vec![1.0, -2.0, 65504.0, 2f64.powi(-24)]);

    // Fortran order, rank 3: logical values are arange(12) in row-major order
    let l = data_file("i32_fortran_2x3x2.npy");
    assert_eq!(l.shape(), shape(ElementType::S32, &[2, 3, 2]));
    assert_eq!(l.to_i128_vec(), (0..12).collect::<Vec<i128>>());

    assert_eq!(
        data_file("u16_be.npy").to_i128_vec(),
        vec![1, 0x1234, 0xffff]
    );
    assert_eq!(
        data_file("u64_max.npy").to_i128_vec(),
        vec![0, u64::MAX as i128]
    );
    assert_eq!(
        data_file("i64_min.npy").to_i128_vec(),
        vec![i64::MIN as i128, -1]
    );
    let b = data_file("bool_2x2.npy");
    assert_eq!(b.shape(), shape(ElementType::Pred, &[2, 2]));
    assert_eq!(b.to_i128_vec(), vec![1, 0, 0, 1]);
    let s = data_file("i8_scalar.npy");
    assert_eq!(
        (s.shape(), s.get_i128(0)),
        (shape(ElementType::S8, &[]), -7)
    );
    let z = data_file("f32_0x3.npy");
    assert_eq!(
        (z.shape(), z.element_count()),
        (shape(ElementType::F32, &[0, 3]), 0)
    );
    // the structured form we also write
    let n = data_file("bf16_named.npy");
    assert_eq!(
        (n.dtype(), n.to_f64_vec()),
        (ElementType::Bf16, vec![3.0, -1.0])
    );
}

#[test]
fn reads_ml_dtypes_files_given_the_expected_type() {
    let bf = data_file_as("bf16_mldtypes.npy", &shape(ElementType::Bf16, &[4]));
    assert_eq!(bf.to_bits_vec(), vec![0x3f80, 0xbf00, 0x7f80, 0x7fc0]);
    let e4 = data_file_as("f8e4m3fn_mldtypes.npy", &shape(ElementType::F8E4M3Fn, &[4]));
    // 448 = 0x7e, -2^-6 = 0x88, NaN = 0x7f, 2^-9 (smallest subnormal) = 0x01
    assert_eq!(e4.to_bits_vec(), vec![0x7e, 0x88, 0x7f, 0x01]);
    assert_eq!(e4.get_f64(1), -0.015625);
    let e5 = data_file_as("f8e5m2_mldtypes.npy", &shape(ElementType::F8E5M2, &[4]));
    // 57344 = 0x7b, -inf = 0xfc, 1.5 = 0x3e, 2^-16 (smallest subnormal) = 0x01
    assert_eq!(e5.to_bits_vec(), vec![0x7b, 0xfc, 0x3e, 0x01]);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy/f8e5m2_mldtypes.npy");
    assert!(Literal::read_npy_file(&path, Some(&shape(ElementType::U8, &[4]))).is_err());
    let s4 = data_file_as("s4_mldtypes.npy", &shape(ElementType::S4, &[4]));
    assert_eq!(s4.to_i128_vec(), vec![-8, -1, 0, 7]);
    let u4 = data_file_as("u4_mldtypes.npy", &shape(ElementType::U4, &[3]));
    assert_eq!(u4.to_i128_vec(), vec![0, 15, 9]);

    // without the expected type a bare void descr is refused, saying why
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy/bf16_mldtypes.npy");
    let err = Literal::read_npy_file(&path, None).unwrap_err().to_string();
    assert!(
        err.contains("bad .npy header: descr '<V2' does not name an element type"),
        "{err}"
    );
    assert!(err.contains("bf16_mldtypes.npy"), "{err}");
    // and a bare void of the wrong size for the expected type is a mismatch
    let err = Literal::read_npy_file(&path, Some(&shape(ElementType::F32, &[4]))).unwrap_err();
    assert!(
        err.to_string()
            .contains("does not match the expected shape f32[4]"),
        "{err}"
    );
}

#[test]
fn fortran_order_rank2_by_hand() {
    // logical [[1, 2, 3], [4, 5, 6]] stored column by column: 1 4 2 5 3 6
    let data: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let f = npy(
        1,
        "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n",
        &data,
    );
    let l = Literal::read_npy(&f[..], None).unwrap();
    assert_eq!(l.to_f64_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn versions_endianness_and_spellings() {
    let be: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    for major in [1u8, 2, 3] {
        let f = npy(
            major,
            "{\"descr\": \">f4\", \"shape\": (2L,), \"fortran_order\": False}\n",
            &be,
        );
        let l = Literal::read_npy(&f[..], None).unwrap();
        assert_eq!(l.to_f64_vec(), vec![1.5, -2.0], "version {major}");
    }
    let f = npy(
        1,
        "{'descr': '?', 'fortran_order': False, 'shape': (1,)}",
        &[1],
    );
    assert_eq!(
        Literal::read_npy(&f[..], None).unwrap().dtype(),
        ElementType::Pred
    );
    // a bare void read as the expected type, e.g. f16 saved as '<V2'
    let f = npy(
        1,
        "{'descr': '<V2', 'fortran_order': False, 'shape': (1,)}",
        &[0x00, 0x3c],
    );
    let l = Literal::read_npy(&f[..], Some(&shape(ElementType::F16, &[1]))).unwrap();
    assert_eq!(l.get_f64(0), 1.0);
    // s8 data for an s4 parameter, in range and out of range
    let f = npy(
        1,
        "{'descr': '|i1', 'fortran_order': False, 'shape': (2,)}",
        &[0xf8, 0x07],
    );
    let l = Literal::read_npy(&f[..], Some(&shape(ElementType::S4, &[2]))).unwrap();
    assert_eq!(l.to_i128_vec(), vec![-8, 7]);
    let f = npy(
        1,
        "{'descr': '|i1', 'fortran_order': False, 'shape': (2,)}",
        &[0xf7, 0x07],
    );
    let err = Literal::read_npy(&f[..], Some(&shape(ElementType::S4, &[2]))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad element data: value -9 at element 0 is not an s4 value"
    );
    let f = npy(
        1,
        "{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}",
        &[16],
    );
    assert!(Literal::read_npy(&f[..], Some(&shape(ElementType::U4, &[1]))).is_err());
    // bad pred byte
    let f = npy(
        1,
        "{'descr': '|b1', 'fortran_order': False, 'shape': (1,)}",
        &[2],
    );
    assert!(matches!(
        Literal::read_npy(&f[..], None),
        Err(LiteralError::BadElement(_))
    ));
}

#[test]
fn expected_shape_mismatches_name_the_expected_shape() {
    let lit = Literal::from_f64s(&shape(ElementType::F32, &[2, 3]), &[0.0; 6]).unwrap();
    let bytes = lit.to_npy_bytes();
    let err = Literal::read_npy(&bytes[..], Some(&shape(ElementType::F16, &[2, 3]))).unwrap_err();
    assert_eq!(
        err.to_string(),
        ".npy array f32[2,3] does not match the expected shape f16[2,3]"
    );
    let err = Literal::read_npy(&bytes[..], Some(&shape(ElementType::F32, &[3, 2]))).unwrap_err();
    assert_eq!(
        err.to_string(),
        ".npy array f32[2,3] does not match the expected shape f32[3,2]"
    );
    // the expected layout is kept as metadata
    let with_layout = ArrayShape {
        layout: Some(Layout {
            minor_to_major: vec![0, 1],
            extra: None,
        }),
        ..shape(ElementType::F32, &[2, 3])
    };
    let l = Literal::read_npy(&bytes[..], Some(&with_layout)).unwrap();
    assert_eq!(l.shape(), with_layout);
}

fn header_error(file: &[u8]) -> String {
    match Literal::read_npy(file, None) {
        Err(e @ LiteralError::NpyHeader(_)) => e.to_string(),
        other => panic!("expected a header error, got {other:?}"),
    }
}

#[test]
fn malformed_headers_are_errors() {
    assert_eq!(
        header_error(b"PK\x03\x04 not npy"),
        "bad .npy header: missing the \\x93NUMPY magic (not a .npy file)"
    );
    assert_eq!(
        header_error(b""),
        "bad .npy header: missing the \\x93NUMPY magic (not a .npy file)"
    );
    assert_eq!(
        header_error(b"\x93NUMPY\x01"),
        "bad .npy header: truncated before the format version"
    );
    assert_eq!(
        header_error(b"\x93NUMPY\x04\x00\x10\x00"),
        "bad .npy header: unsupported format version 4.0"
    );
    assert_eq!(
        header_error(b"\x93NUMPY\x01\x00\x10"),
        "bad .npy header: truncated before the header length"
    );
    assert_eq!(
        header_error(b"\x93NUMPY\x01\x00\x10\x00{'descr'"),
        "bad .npy header: truncated inside the 16-byte header"
    );
    assert!(header_error(&npy(2, "", &[])).contains("unexpected end"));
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(header_error(&huge).contains("header length 4294967295 is over the limit"));
    let bad_dicts = [
        ("[1, 2]", "the header is not a dict"),
        ("{'descr': '<f4', 'fortran_order': False}", "the header dict has no 'shape'"),
        ("{'descr': '<f4', 'shape': (1,)}", "the header dict has no 'fortran_order'"),
        ("{'fortran_order': False, 'shape': (1,)}", "the header dict has no 'descr'"),
        ("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "fortran_order is 0, not True or False"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': 3}", "shape is 3, not a tuple"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "shape dimension -1 is out of range"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}", "shape dimension 'a' is not an integer"),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
            "shape dimension 99999999999999999999 is out of range",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999999999999999999999999999,)}",
            "is out of range or malformed",
        ),
        ("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", "unsupported descr '<c8'"),
        ("{'descr': '<f3', 'fortran_order': False, 'shape': (1,)}", "unsupported descr '<f3'"),
        ("{'descr': 'O', 'fortran_order': False, 'shape': (1,)}", "unsupported descr 'O'"),
        ("{'descr': 7, 'fortran_order': False, 'shape': (1,)}", "descr 7 is not a string or a list"),
        (
            "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (1,)}",
            "only one-field structured descrs are read",
        ),
        (
            "{'descr': [('bfloat16', '|V1')], 'fortran_order': False, 'shape': (1,)}",
            "bfloat16 takes 2 bytes, not 1",
        ),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "unexpected key 'x'"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", "unexpected text after"),
        ("{'descr': '<f4' 'fortran_order': False}", "expected ',' or '}'"),
        ("{'descr': '<f4", "unterminated string"),
        ("{'descr': nope}", "unexpected name"),
        ("{'descr': @}", "unexpected character"),
        ("{'descr'", "expected ':'"),
        ("((((((((((((((((((((1))))))))))))))))))))", "nesting too deep"),
        ("{'de\\'scr': 1}", "escapes in strings are not supported"),
    ];
    for (dict, want) in bad_dicts {
        let err = header_error(&npy(1, dict, &[]));
        assert!(err.starts_with("bad .npy header: "), "{dict}: {err}");
        assert!(err.contains(want), "{dict}: {err}");
    }
    // version 3 headers are utf-8
    let mut bad_utf8 = b"\x93NUMPY\x03\x00\x02\x00\x00\x00".to_vec();
    bad_utf8.extend_from_slice(&[0xff, 0xfe]);
    assert!(header_error(&bad_utf8).contains("not valid utf-8"));
}

#[test]
fn bad_data_is_an_error() {
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
    let err = Literal::read_npy(&npy(1, dict, &[0; 15])[..], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad .npy data: data too short: the header promises 16 bytes for f32[2,2] but the file has 15"
    );
    let err = Literal::read_npy(&npy(1, dict, &[0; 17])[..], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad .npy data: trailing bytes after the 16 bytes of f32[2,2]"
    );
    assert!(Literal::read_npy(&npy(1, dict, &[0; 16])[..], None).is_ok());
}

#[test]
fn header_shapes_are_checked_against_the_budget_before_allocating() {
    // 2^40 f64s = 8 TiB: refused from the header alone (an allocation would abort the test)
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }";
    match Literal::read_npy(&npy(1, dict, &[])[..], None) {
        Err(LiteralError::TooLarge { bytes, .. }) => assert_eq!(bytes, 1 << 43),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // element count overflowing u64
    let dict = "{'descr': '<f8', 'fortran_order': True, 'shape': (4294967296, 4294967296, 2), }";
    assert!(matches!(
        Literal::read_npy(&npy(1, dict, &[])[..], None),
        Err(LiteralError::BadDims(_))
    ));
    // a zero dim makes any other dim cheap
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807), }";
    assert_eq!(
        Literal::read_npy(&npy(1, dict, &[])[..], None)
            .unwrap()
            .element_count(),
        0
    );
}

#[test]
fn corrupted_files_never_panic() {
    let lit = Literal::from_f64s(
        &shape(ElementType::Bf16, &[2, 3]),
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    )
    .unwrap();
    let good = lit.to_npy_bytes();
    // every truncation is an error
    for len in 0..good.len() {
        assert!(
            Literal::read_npy(&good[..len], None).is_err(),
            "prefix {len}"
        );
    }
    // every single-byte corruption is an error or a literal (never a panic)
    for i in 0..good.len() {
        for v in [
            0x00, 0x20, 0x27, 0x28, 0x29, 0x2c, 0x31, 0x39, 0x5b, 0x7b, 0x80, 0xff,
        ] {
            let mut bad = good.clone();
            bad[i] = v;
            let _ = Literal::read_npy(&bad[..], None);
        }
    }
}

#[test]
fn file_helpers_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let s = shape(ElementType::F8E5M2, &[3]);
    let lit = Literal::from_f64s(&s, &[1.0, -0.0, f64::INFINITY]).unwrap();
    let npy_path = dir.path().join("x.npy");
    lit.write_npy_file(&npy_path).unwrap();
    assert_eq!(Literal::read_npy_file(&npy_path, None).unwrap(), lit);
    assert_eq!(Literal::read_arg_file(&npy_path, &s).unwrap(), lit);
    let bin_path = dir.path().join("x.bin");
    std::fs::write(&bin_path, lit.to_le_bytes()).unwrap();
    assert_eq!(Literal::read_arg_file(&bin_path, &s).unwrap(), lit);
    let err = Literal::read_arg_file(&bin_path, &shape(ElementType::F16, &[3])).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: shape f16[3] needs 6 bytes but 3 bytes were given",
            bin_path.display()
        )
    );
    assert!(matches!(
        err,
        LiteralError::InFile { ref error, .. } if matches!(**error, LiteralError::ByteSizeMismatch { expected: 6, actual: 3, .. })
    ));
    // the inner variant survives the path wrapper
    let huge = dir.path().join("huge.npy");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }";
    std::fs::write(&huge, npy(1, dict, &[])).unwrap();
    match Literal::read_npy_file(&huge, None) {
        Err(LiteralError::InFile { path, error }) => {
            assert_eq!(path, huge.display().to_string());
            assert!(matches!(*error, LiteralError::TooLarge { .. }));
        }
        other => panic!("expected InFile(TooLarge), got {other:?}"),
    }
    let missing = dir.path().join("missing.npy");
    let err = Literal::read_npy_file(&missing, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("failed to open {}", missing.display())),
        "{err}"
    );
}

#[test]
fn fingerprint_survives_npy() {
    let s = shape(ElementType::F16, &[4]);
    let lit = Literal::from_f64s(&s, &[1.0, f64::NAN, -3.0, f64::INFINITY]).unwrap();
    let back = Literal::read_npy(&lit.to_npy_bytes()[..], None).unwrap();
    let fp: Fingerprint = back.fingerprint();
    assert_eq!(fp, lit.fingerprint());
    assert_eq!((fp.min(), fp.max()), (-3.0, 1.0));
}

proptest::proptest! {
    #[test]
    fn arbitrary_headers_never_panic(dict in "[{}()\\[\\]',: 0-9a-zA-Z<>|?_-]{0,80}", data in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
        let _ = Literal::read_npy(&npy(1, &dict, &data)[..], None);
        let _ = Literal::read_npy(&npy(1, &dict, &data)[..], Some(&shape(ElementType::Bf16, &[2])));
    }

    #[test]
    fn plausible_headers_never_panic(
        descr in "'[<>|=]?[bifuVc?][0-9]'",
        fortran in proptest::bool::ANY,
        dims in proptest::collection::vec(0u64..5, 0..4),
        extra in 0usize..3,
    ) {
        let shape_text = format!("({})", dims.iter().map(|d| format!("{d},")).collect::<String>());
        let dict = format!(
            "{{'descr': {descr}, 'fortran_order': {}, 'shape': {shape_text}}}",
            if fortran { "True" } else { "False" }
        );
        let n: u64 = dims.iter().product();
        let data = vec![1u8; (n * 8) as usize + extra];
        let _ = Literal::read_npy(&npy(1, &dict, &data)[..], None);
    }
}
