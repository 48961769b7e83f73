//! `.npy` files (NumPy format versions 1.0, 2.0 and 3.0), read and written.
//!
//! # Element types
//!
//! | dtype | written as `descr` | also read from |
//! | --- | --- | --- |
//! | pred | `'\|b1'` | `'?'` |
//! | s8, s16, s32, s64 | `'\|i1'`, `'<i2'`, `'<i4'`, `'<i8'` | big-endian `'>i2'` ... |
//! | u8 ... u64 | `'\|u1'`, `'<u2'`, `'<u4'`, `'<u8'` | big-endian |
//! | f16, f32, f64 | `'<f2'`, `'<f4'`, `'<f8'` | big-endian |
//! | bf16 | `[('bfloat16', '\|V2')]` | `'<V2'` (what ml_dtypes/jax `np.save` writes) |
//! | f8e4m3fn | `[('float8_e4m3fn', '\|V1')]` | `'<V1'` (ml_dtypes) |
//! | f8e5m2 | `[('float8_e5m2', '\|V1')]` | `'<V1'`, `'<f1'` (ml_dtypes writes this one as `'<f1'`) |
//! | s4 | `[('int4', '\|V1')]`, one byte per element, value in the low nibble | `'<V1'` (ml_dtypes), `'\|i1'` with values in -8..=7 |
//! | u4 | `[('uint4', '\|V1')]`, one byte per element | `'<V1'` (ml_dtypes), `'\|u1'` with values in 0..=15 |
//!
//! NumPy has no builtin bf16, f8 or 4-bit types, and ml_dtypes saves them
//! with a bare void (`'<V2'`) descr that does not say which type it is. So we
//! write a one-field structured descr whose field name is the ml_dtypes type
//! name: our reader knows the type from it, and NumPy loads it as a structured
//! array that `arr.view(ml_dtypes.bfloat16)` turns back into the real type.
//! A bare void (or `'<f1'`) descr is accepted only when the expected shape
//! says which type to read it as (the CLI always knows the parameter's shape).
//!
//! Files in Fortran order are transposed into logical row-major order.
//! Malformed files give errors ([`LiteralError::NpyHeader`],
//! [`LiteralError::NpyData`]), never panics, and the shape in a header is
//! checked against the size budget before anything is allocated for it.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::bytes::{decode_element, encode_element_le};
use super::layout::LayoutMap;
use super::storage::{check_size, Literal, LiteralError};
use crate::hlo::{ArrayShape, ElementType, Layout};

mod header;

use header::parse_header_dict;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Headers longer than this are refused (NumPy itself refuses over 10,000 bytes by default).
const MAX_HEADER_LEN: usize = 1 << 20;

/// The ml_dtypes names of the types NumPy lacks, used as the structured field name.
const ML_DTYPES_NAMES: &[(&str, ElementType)] = &[
    ("bfloat16", ElementType::Bf16),
    ("float8_e4m3fn", ElementType::F8E4M3Fn),
    ("float8_e5m2", ElementType::F8E5M2),
    ("int4", ElementType::S4),
    ("uint4", ElementType::U4),
    ("int2", ElementType::S2),
    ("uint2", ElementType::U2),
    ("float8_e3m4", ElementType::F8E3M4),
    ("float8_e4m3", ElementType::F8E4M3),
    ("float8_e4m3fnuz", ElementType::F8E4M3Fnuz),
    ("float8_e4m3b11fnuz", ElementType::F8E4M3B11Fnuz),
    ("float8_e5m2fnuz", ElementType::F8E5M2Fnuz),
    ("float6_e2m3fn", ElementType::F6E2M3Fn),
    ("float6_e3m2fn", ElementType::F6E3M2Fn),
    ("float4_e2m1fn", ElementType::F4E2M1Fn),
    ("float8_e8m0fnu", ElementType::F8E8M0Fnu),
];

fn header_err(msg: impl Into<String>) -> LiteralError {
    LiteralError::NpyHeader(msg.into())
}

/// What a `descr` says about the element type.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Descr {
    /// A type we can name from the descr alone.
    Known(ElementType),
    /// Raw bytes of this size (`V2`): needs an expected type.
    Opaque(usize),
    /// ml_dtypes' `f1` (its float8_e5m2 says this): needs an expected f8 type.
    Float8,
}

#[derive(Clone, Debug)]
struct Header {
    descr: Descr,
    descr_text: String,
    big_endian: bool,
    fortran_order: bool,
    dims: Vec<i64>,
}

impl Literal {
    /// Reads a `.npy` array from `reader` (which must hold nothing after the array).
    ///
    /// With `expected`, the file must hold that dtype and those dims (the result
    /// keeps `expected`'s layout as metadata); bare void descrs written by
    /// ml_dtypes are then read as the expected type. Without it, the descr must
    /// name the type (see the module docs for the accepted descrs).
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let shape = ArrayShape::new(ElementType::Bf16, vec![2, 2]);
    /// let lit = Literal::from_f64s(&shape, &[1.0, -2.5, f64::INFINITY, 0.0]).unwrap();
    /// let bytes = lit.to_npy_bytes();
    /// assert_eq!(Literal::read_npy(&bytes[..], None).unwrap(), lit);
    /// assert_eq!(Literal::read_npy(&bytes[..], Some(&shape)).unwrap(), lit);
    /// let other = ArrayShape::new(ElementType::Bf16, vec![4]);
    /// let err = Literal::read_npy(&bytes[..], Some(&other)).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     ".npy array bf16[2,2] does not match the expected shape bf16[4]"
    /// );
    /// ```
    pub fn read_npy<R: Read>(
        reader: R,
        expected: Option<&ArrayShape>,
    ) -> Result<Literal, LiteralError> {
        let mut reader = reader;
        let header = read_header(&mut reader)?;
        let dtype = resolve_dtype(&header, expected)?;
        let found = ArrayShape::new(dtype, header.dims.clone());
        if let Some(e) = expected {
            if e.dims != header.dims {
                return Err(LiteralError::ShapeMismatch {
                    expected: e.to_string(),
                    found: format!(".npy array {found}"),
                });
            }
        }
        let shape = ArrayShape {
            layout: expected.and_then(|e| e.layout.clone()),
            ..found
        };
        // Before any allocation sized by the header.
        let count = check_size(&shape)?;
        let mut lit = Literal::zeros(&shape)?;
        // Fortran order is the layout {0,1,...,rank-1}; the file is in its physical order.
        let fortran = if header.fortran_order && shape.rank() > 1 {
            let col_major = Layout {
                minor_to_major: (0..shape.rank() as i64).collect(),
                extra: None,
            };
            Some(LayoutMap::new(lit.dims(), &col_major)?)
        } else {
            None
        };
        let file_dtype = match header.descr {
            Descr::Known(t) => t,
            Descr::Opaque(_) | Descr::Float8 => dtype,
        };
        let item = file_dtype.byte_size();
        let total = count as u64 * item as u64;
        let chunk_elems = 1usize << 16;
        let mut buf = vec![0u8; chunk_elems.min(count.max(1)) * item];
        let mut k = 0usize;
        while k < count {
            let n = chunk_elems.min(count - k);
            let got = read_full(&mut reader, &mut buf[..n * item])?;
            if got < n * item {
                return Err(LiteralError::NpyData(format!(
                    "data too short: the header promises {total} bytes for {shape} but the file has {}",
                    (k * item + got) as u64
                )));
            }
            for (j, chunk) in buf[..n * item].chunks_exact(item).enumerate() {
                let src = k + j;
                let bits = decode_element(file_dtype, chunk, header.big_endian, src)?;
                let bits = narrow(file_dtype, dtype, bits, src)?;
                let dst = fortran.as_ref().map_or(src, |m| m.physical_to_logical(src));
                lit.set_bits(dst, bits);
            }
            k += n;
        }
        let mut probe = [0u8; 1];
        if read_full(&mut reader, &mut probe)? != 0 {
            return Err(LiteralError::NpyData(format!(
                "trailing bytes after the {total} bytes of {shape}"
            )));
        }
        Ok(lit)
    }

    /// Reads a `.npy` file (see [`Literal::read_npy`]); errors name the path.
    pub fn read_npy_file(
        path: impl AsRef<Path>,
        expected: Option<&ArrayShape>,
    ) -> Result<Literal, LiteralError> {
        let path = path.as_ref();
        let file = File::open(path)
            .map_err(|e| LiteralError::Io(format!("failed to open {}: {e}", path.display())))?;
        Literal::read_npy(BufReader::new(file), expected).map_err(|e| with_path(e, path))
    }

    /// Writes this literal as a version 1.0 `.npy` array in C order (logical
    /// row-major; the layout metadata is not written). See the module docs for
    /// the `descr` of each dtype.
    ///
    /// ```
    /// use xla_props::hlo::{ArrayShape, ElementType};
    /// use xla_props::literal::Literal;
    /// let lit = Literal::from_i128s(&ArrayShape::new(ElementType::S4, vec![3]), &[-1, 7, -8]).unwrap();
    /// let mut out = Vec::new();
    /// lit.write_npy(&mut out).unwrap();
    /// assert_eq!(out.len() % 64, 3); // 64-byte aligned header, then one byte per element
    /// assert!(out.starts_with(b"\x93NUMPY\x01\x00"));
    /// assert_eq!(&out[out.len() - 3..], &[0x0f, 0x07, 0x08]);
    /// ```
    pub fn write_npy<W: Write>(&self, writer: W) -> Result<(), LiteralError> {
        let mut writer = writer;
        let io = |e: std::io::Error| LiteralError::Io(format!("failed to write .npy data: {e}"));
        writer.write_all(&self.npy_header()).map_err(io)?;
        let dtype = self.dtype();
        let mut buf = Vec::with_capacity(1 << 16);
        for i in 0..self.element_count() {
            encode_element_le(dtype, self.get_bits(i), &mut buf);
            if buf.len() >= (1 << 16) - 8 {
                writer.write_all(&buf).map_err(io)?;
                buf.clear();
            }
        }
        writer.write_all(&buf).map_err(io)?;
        writer.flush().map_err(io)
    }

    /// The `.npy` encoding of this literal (see [`Literal::write_npy`]).
    pub fn to_npy_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write_npy(&mut out);
        out
    }

    /// Writes a `.npy` file (see [`Literal::write_npy`]); errors name the path.
    pub fn write_npy_file(&self, path: impl AsRef<Path>) -> Result<(), LiteralError> {
        let path = path.as_ref();
        let file = File::create(path)
            .map_err(|e| LiteralError::Io(format!("failed to create {}: {e}", path.display())))?;
        self.write_npy(BufWriter::new(file))
            .map_err(|e| with_path(e, path))
    }

    /// Reads an argument file for a parameter of shape `expected`: `.npy` by
    /// extension, otherwise raw little-endian bytes (see [`Literal::from_le_bytes`]).
    pub fn read_arg_file(
        path: impl AsRef<Path>,
        expected: &ArrayShape,
    ) -> Result<Literal, LiteralError> {
        let path = path.as_ref();
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
        {
            return Literal::read_npy_file(path, Some(expected));
        }
        // Check the budget and the size before reading a file of any size.
        let count = check_size(expected).map_err(|e| with_path(e, path))?;
        let want = count as u64 * expected.dtype.byte_size() as u64;
        let io =
            |e: std::io::Error| LiteralError::Io(format!("failed to read {}: {e}", path.display()));
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len != want {
            let e = LiteralError::ByteSizeMismatch {
                shape: expected.to_string(),
                expected: want,
                actual: len,
            };
            return Err(with_path(e, path));
        }
        let bytes = std::fs::read(path).map_err(io)?;
        Literal::from_le_bytes(expected, &bytes).map_err(|e| with_path(e, path))
    }

    fn npy_header(&self) -> Vec<u8> {
        let descr = match self.dtype() {
            ElementType::Pred => "'|b1'".to_string(),
            t => match ML_DTYPES_NAMES.iter().find(|(_, e)| *e == t) {
                Some((name, _)) => format!("[('{name}', '|V{}')]", t.byte_size()),
                None => {
                    let order = if t.byte_size() == 1 { '|' } else { '<' };
                    format!("'{order}{}{}'", header::npy_kind(t), t.byte_size())
                }
            },
        };
        let dims = self.dims();
        let shape = match dims {
            [] => "()".to_string(),
            [d] => format!("({d},)"),
            _ => format!(
                "({})",
                dims.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
        // Pad with spaces so magic + version + length + dict + '\n' is a multiple of 64.
        let (version, len_bytes) = if dict.len() + 11 + 64 <= u16::MAX as usize {
            (1u8, 2usize)
        } else {
            (2u8, 4usize)
        };
        let prefix = MAGIC.len() + 2 + len_bytes;
        let pad = (64 - (prefix + dict.len() + 1) % 64) % 64;
        dict.push_str(&" ".repeat(pad));
        dict.push('\n');
        framed_header(version, &dict)
    }
}

/// The magic, format version `major` (1: a 2-byte header length, else 4),
/// the little-endian length of `dict` and `dict`.
fn framed_header(major: u8, dict: &str) -> Vec<u8> {
    let len_bytes = if major == 1 { 2 } else { 4 };
    let mut out = Vec::with_capacity(MAGIC.len() + 2 + len_bytes + dict.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

fn with_path(e: LiteralError, path: &Path) -> LiteralError {
    match e {
        LiteralError::Io(_) | LiteralError::InFile { .. } => e,
        other => LiteralError::InFile {
            path: path.display().to_string(),
            error: Box::new(other),
        },
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, LiteralError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(LiteralError::Io(format!("failed to read .npy data: {e}"))),
        }
    }
    Ok(got)
}

/// Converts a value read as `file` into `target` when they differ (s8 data for
/// an s4 parameter, u8 for u4), checking the range.
fn narrow(
    file: ElementType,
    target: ElementType,
    bits: u64,
    index: usize,
) -> Result<u64, LiteralError> {
    use ElementType as E;
    let (signed, width) = match (file, target) {
        (E::S8, E::S4) => (true, 4),
        (E::U8, E::U4) => (false, 4),
        (E::S8, E::S2) => (true, 2),
        (E::U8, E::U2) => (false, 2),
        _ => return Ok(bits),
    };
    let mask = (1u64 << width) - 1;
    let bad = |v: &dyn std::fmt::Display| {
        Err(LiteralError::BadElement(format!(
            "value {v} at element {index} is not {} {target} value",
            if signed { "an" } else { "a" }
        )))
    };
    if signed {
        let v = bits as u8 as i8;
        let half = 1i8 << (width - 1);
        if (-half..half).contains(&v) {
            Ok(bits & mask)
        } else {
            bad(&v)
        }
    } else if bits > mask {
        bad(&bits)
    } else {
        Ok(bits)
    }
}

/// The element type to read, from the header and the expected shape.
fn resolve_dtype(h: &Header, expected: Option<&ArrayShape>) -> Result<ElementType, LiteralError> {
    let Some(e) = expected else {
        return match h.descr {
            Descr::Known(t) => Ok(t),
            Descr::Opaque(_) | Descr::Float8 => Err(header_err(format!(
                "descr {} does not name an element type (ml_dtypes writes bfloat16, float8 and \
                 int4 arrays this way); read it with the expected shape",
                h.descr_text
            ))),
        };
    };
    let ok = match h.descr {
        Descr::Known(t) => {
            t == e.dtype
                || (t == ElementType::S8 && e.dtype == ElementType::S4)
                || (t == ElementType::U8 && e.dtype == ElementType::U4)
                || (t == ElementType::S8 && e.dtype == ElementType::S2)
                || (t == ElementType::U8 && e.dtype == ElementType::U2)
        }
        Descr::Opaque(n) => n == e.dtype.byte_size() && !e.dtype.is_complex(),
        // a one-byte float: f8e4m3fn, f8e5m2 and the minifloats
        Descr::Float8 => e.dtype.is_float() && e.dtype.byte_size() == 1,
    };
    if ok {
        Ok(e.dtype)
    } else {
        let dims = h
            .dims
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let found = match h.descr {
            Descr::Known(t) => format!(".npy array {t}[{dims}]"),
            Descr::Opaque(_) | Descr::Float8 => {
                format!(".npy array with descr {} and dims [{dims}]", h.descr_text)
            }
        };
        Err(LiteralError::ShapeMismatch {
            expected: e.to_string(),
            found,
        })
    }
}

fn read_header<R: Read>(r: &mut R) -> Result<Header, LiteralError> {
    let mut pre = [0u8; 8];
    let got = read_full(r, &mut pre)?;
    if got < 6 || &pre[..6] != MAGIC {
        return Err(header_err("missing the \\x93NUMPY magic (not a .npy file)"));
    }
    if got < 8 {
        return Err(header_err("truncated before the format version"));
    }
    let (major, minor) = (pre[6], pre[7]);
    let len_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        _ => {
            return Err(header_err(format!(
                "unsupported format version {major}.{minor}"
            )))
        }
    };
    let mut lb = [0u8; 4];
    if read_full(r, &mut lb[..len_bytes])? < len_bytes {
        return Err(header_err("truncated before the header length"));
    }
    let len = u32::from_le_bytes(lb) as usize;
    if len > MAX_HEADER_LEN {
        return Err(header_err(format!(
            "header length {len} is over the limit of {MAX_HEADER_LEN} bytes"
        )));
    }
    let mut raw = vec![0u8; len];
    if read_full(r, &mut raw)? < len {
        return Err(header_err(format!(
            "truncated inside the {len}-byte header"
        )));
    }
    let text: String = if major == 3 {
        String::from_utf8(raw).map_err(|_| header_err("header is not valid utf-8"))?
    } else {
        // latin-1
        raw.iter().map(|&b| b as char).collect()
    };
    parse_header_dict(&text)
}

#[cfg(test)]
mod tests;
