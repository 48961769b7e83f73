//! The printer's error and value types, MLIR type names, and attribute and
//! region text.

use std::fmt::Write as _;

use crate::hlo::{ArrayShape, ElementType, Shape};

/// Why a module cannot be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// StableHLO (or this lowering) cannot express something in the module.
    #[error("unsupported by the stablehlo lowering: {0}")]
    Unsupported(String),
    /// The module is malformed (a missing attribute, a bad operand count).
    #[error("cannot lower malformed module: {0}")]
    Invalid(String),
}

impl LowerError {
    /// The error with the instruction it arose in: `name (opcode): ...`.
    pub(super) fn at(self, instr: &crate::hlo::Instruction) -> LowerError {
        let locate = |m: String| format!("{} ({}): {m}", instr.name, instr.opcode);
        match self {
            LowerError::Unsupported(m) => LowerError::Unsupported(locate(m)),
            LowerError::Invalid(m) => LowerError::Invalid(locate(m)),
        }
    }
}

/// A lowered module: MLIR text plus the flattened entry signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The StableHLO module text, entry function `@main`.
    pub mlir: String,
    /// Entry argument shapes (parameter leaves in parameter order).
    pub params: Vec<ArrayShape>,
    /// Entry result shapes (root leaves in depth-first order).
    pub results: Vec<ArrayShape>,
}

/// One SSA value and its MLIR type.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Val {
    pub(super) name: String,
    pub(super) ty: String,
}

pub(super) fn names(vals: &[Val]) -> String {
    vals.iter()
        .map(|v| v.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn types(vals: &[Val]) -> String {
    vals.iter()
        .map(|v| v.ty.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn unsupported<T>(msg: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported(msg.into()))
}

pub(super) fn invalid<T>(msg: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Invalid(msg.into()))
}

/// The MLIR element type name.
pub fn mlir_element_type(t: ElementType) -> Result<&'static str, LowerError> {
    Ok(match t {
        ElementType::Pred => "i1",
        ElementType::S4 => "i4",
        ElementType::S8 => "i8",
        ElementType::S16 => "i16",
        ElementType::S32 => "i32",
        ElementType::S64 => "i64",
        ElementType::U4 => "ui4",
        ElementType::U8 => "ui8",
        ElementType::U16 => "ui16",
        ElementType::U32 => "ui32",
        ElementType::U64 => "ui64",
        ElementType::F16 => "f16",
        ElementType::Bf16 => "bf16",
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
        ElementType::F8E4M3Fn => "f8E4M3FN",
        ElementType::F8E5M2 => "f8E5M2",
        ElementType::C64 => "complex<f32>",
        ElementType::C128 => "complex<f64>",
        ElementType::S2 => "i2",
        ElementType::U2 => "ui2",
        ElementType::F8E3M4 => "f8E3M4",
        ElementType::F8E4M3 => "f8E4M3",
        ElementType::F8E4M3Fnuz => "f8E4M3FNUZ",
        ElementType::F8E4M3B11Fnuz => "f8E4M3B11FNUZ",
        ElementType::F8E5M2Fnuz => "f8E5M2FNUZ",
        ElementType::F6E2M3Fn => "f6E2M3FN",
        ElementType::F6E3M2Fn => "f6E3M2FN",
        ElementType::F4E2M1Fn => "f4E2M1FN",
        ElementType::F8E8M0Fnu => "f8E8M0FNU",
    })
}

/// `tensor<2x3xf32>`, or `tensor<f32>` for a scalar (`complex<f32>` and
/// `complex<f64>` elements too, which [`lower_module`](super::lower_module) refuses up front).
pub fn tensor_type(a: &ArrayShape) -> Result<String, LowerError> {
    let mut s = String::from("tensor<");
    for d in &a.dims {
        if *d < 0 {
            return invalid(format!("negative dimension in {a}"));
        }
        let _ = write!(s, "{d}x");
    }
    s.push_str(match a.dtype {
        ElementType::C64 => "complex<f32>",
        ElementType::C128 => "complex<f64>",
        t => mlir_element_type(t)?,
    });
    s.push('>');
    Ok(s)
}

pub(super) fn leaves(s: &Shape) -> Result<Vec<&ArrayShape>, LowerError> {
    if s.has_token() {
        return unsupported("token values");
    }
    Ok(s.leaves())
}

pub(super) fn transferable(a: &ArrayShape) -> Result<(), LowerError> {
    match a.dtype {
        // what the skip says is what happens: the arrays never reach XLA
        ElementType::S4 | ElementType::U4 => unsupported(format!(
            "{} parameters and results: xla-props does not pack 4-bit arrays \
             into PJRT host buffers (two elements per byte), so a module with {} \
             at its entry signature is not run on a PJRT plugin",
            a.dtype, a.dtype
        )),
        _ => Ok(()),
    }
}

pub(super) fn array_attr(xs: &[i64]) -> String {
    if xs.is_empty() {
        "array<i64>".into()
    } else {
        format!(
            "array<i64: {}>",
            xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        )
    }
}

pub(super) fn list(xs: &[i64]) -> String {
    format!(
        "[{}]",
        xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
    )
}

pub(super) fn padding_attr(pairs: &[(i64, i64)]) -> String {
    let body = pairs
        .iter()
        .map(|(lo, hi)| format!("[{lo}, {hi}]"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("dense<[{body}]> : tensor<{}x2xi64>", pairs.len())
}

pub(super) fn precision_attr(p: &Option<Vec<String>>) -> Result<Option<String>, LowerError> {
    let Some(p) = p else { return Ok(None) };
    let items = p
        .iter()
        .map(|s| match s.to_ascii_lowercase().as_str() {
            "default" => Ok("#stablehlo<precision DEFAULT>"),
            "high" => Ok("#stablehlo<precision HIGH>"),
            "highest" => Ok("#stablehlo<precision HIGHEST>"),
            other => unsupported(format!("operand precision {other}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(format!("precision_config = [{}]", items.join(", "))))
}

pub(super) fn pad(indent: usize) -> String {
    " ".repeat(indent * 2)
}

/// A region in the generic form: its block arguments, its body and the
/// `stablehlo.return` of `results`.
pub(super) fn region(indent: usize, block_args: &[String], body: &str, results: &[Val]) -> String {
    let head = format!("{}^bb0({}):\n", pad(indent), block_args.join(", "));
    block(indent, &(head + body), results)
}

/// A region without block arguments: `body` and the `stablehlo.return` of
/// `results`, closed at `indent`.
pub(super) fn block(indent: usize, body: &str, results: &[Val]) -> String {
    let mut s = String::from("{\n");
    s.push_str(body);
    let _ = writeln!(
        s,
        "{}\"stablehlo.return\"({}) : ({}) -> ()",
        pad(indent + 1),
        names(results),
        types(results)
    );
    let _ = write!(s, "{}}}", pad(indent));
    s
}
