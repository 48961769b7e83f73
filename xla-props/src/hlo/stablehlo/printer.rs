//! Lowering of our HLO IR to StableHLO MLIR text (generic operation form).
//!
//! Every HLO value becomes a list of SSA values, one per array leaf: tuples
//! are flattened, so `tuple` and `get-tuple-element` emit nothing, the entry
//! function takes one argument per parameter leaf and returns one result per
//! root leaf (what PJRT hands back untupled). Fusions and calls are inlined;
//! reductions, sorts, maps, scatters and loops get their called computation
//! as a region; conditionals inline their branches into `stablehlo.if`/`case`
//! regions, which capture the branch operands from the enclosing scope.
//!
//! Float constants are written as raw hexadecimal bit patterns, so every
//! value (signed zeros, subnormals, infinities) reaches XLA exactly.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::convert::stablehlo_rng_algorithm;
use crate::hlo::float_bits::round_to_bits;
use crate::hlo::{
    ArrayShape, CompId, ComparisonType, Computation, ConstantData, ElementType, InstrId,
    Instruction, Module, Opcode, Shape, WindowDim,
};

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

/// Lowers a module to StableHLO MLIR text.
///
/// ```
/// use xla_props::hlo::{ElementType, Instruction, Computation, InstrId, CompId, Module, Opcode, Shape};
/// use xla_props::hlo::stablehlo::lower_module;
/// let s = Shape::array(ElementType::F32, vec![2]);
/// let mut p0 = Instruction::new("p0", Opcode::Parameter, s.clone(), vec![]);
/// p0.attrs.parameter_number = Some(0);
/// let neg = Instruction::new("n", Opcode::Negate, s, vec![InstrId(0)]);
/// let comp = Computation { name: "main".into(), instructions: vec![p0, neg], root: InstrId(1), other: vec![] };
/// let m = Module { name: "m".into(), attrs: vec![], computations: vec![comp], entry: CompId(0) };
/// let lowered = lower_module(&m).unwrap();
/// assert!(lowered.mlir.contains("\"stablehlo.negate\"(%arg0)"));
/// ```
pub fn lower_module(module: &Module) -> Result<Lowered, LowerError> {
    // a custom call with a known meaning (XLA's TopK) is written as the
    // plain ops it means: StableHLO has no such custom call
    let expanded = crate::hlo::expand_known_custom_calls(module);
    let module = expanded.as_ref().unwrap_or(module);
    if module.entry.index() >= module.computations.len() {
        return Err(LowerError::Invalid("entry computation out of range".into()));
    }
    // the backends that compile this form take no complex values yet
    for c in &module.computations {
        for i in &c.instructions {
            if let Some(t) = i
                .shape
                .leaves()
                .iter()
                .map(|l| l.dtype)
                .find(|t| t.is_complex())
            {
                return unsupported(format!("{} ({}): element type {t}", i.name, i.opcode));
            }
        }
    }
    let entry = module.entry_computation();
    let mut l = Lowerer {
        module,
        next: 0,
        depth: 0,
        faithful: false,
    };
    let mut params = Vec::new();
    let mut args: Vec<Vec<Val>> = Vec::new();
    let mut arg_decls = Vec::new();
    for (k, pid) in entry.parameters().into_iter().enumerate() {
        let instr = entry.instr(pid);
        if instr.attrs.parameter_number != Some(k as i64) {
            return Err(LowerError::Invalid(format!(
                "entry parameters are not numbered 0..n (at {})",
                instr.name
            )));
        }
        let mut vals = Vec::new();
        for leaf in leaves(&instr.shape)? {
            transferable(leaf)?;
            let name = format!("%arg{}", params.len());
            let ty = tensor_type(leaf)?;
            arg_decls.push(format!("{name}: {ty}"));
            vals.push(Val { name, ty });
            params.push(leaf.clone());
        }
        args.push(vals);
    }
    let mut body = String::new();
    let results = l.computation(module.entry, &args, &mut body, 2)?;
    let result_shapes: Vec<ArrayShape> = leaves(module.result_shape())?
        .into_iter()
        .cloned()
        .collect();
    for r in &result_shapes {
        transferable(r)?;
    }
    let result_types: Vec<String> = results.iter().map(|v| v.ty.clone()).collect();
    let mut mlir = String::from("module @xla_props {\n");
    let _ = writeln!(
        mlir,
        "  func.func public @main({}) -> ({}) {{",
        arg_decls.join(", "),
        result_types.join(", ")
    );
    mlir.push_str(&body);
    let _ = writeln!(
        mlir,
        "    \"func.return\"({}) : ({}) -> ()",
        names(&results),
        result_types.join(", ")
    );
    mlir.push_str("  }\n}\n");
    Ok(Lowered {
        mlir,
        params,
        results: result_shapes,
    })
}

/// One SSA value and its MLIR type.
#[derive(Clone, Debug, PartialEq)]
struct Val {
    name: String,
    ty: String,
}

fn names(vals: &[Val]) -> String {
    vals.iter()
        .map(|v| v.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn types(vals: &[Val]) -> String {
    vals.iter()
        .map(|v| v.ty.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn unsupported<T>(msg: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported(msg.into()))
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, LowerError> {
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
        ElementType::C64 | ElementType::C128 => return unsupported(format!("element type {t}")),
    })
}

/// `tensor<2x3xf32>`, or `tensor<f32>` for a scalar (`complex<f32>` and
/// `complex<f64>` elements too, which [`lower_module`] refuses up front).
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

fn leaves(s: &Shape) -> Result<Vec<&ArrayShape>, LowerError> {
    fn has_token(s: &Shape) -> bool {
        match s {
            Shape::Token => true,
            Shape::Tuple(t) => t.iter().any(has_token),
            Shape::Array(_) => false,
        }
    }
    if has_token(s) {
        return unsupported("token values");
    }
    Ok(s.leaves())
}

fn transferable(a: &ArrayShape) -> Result<(), LowerError> {
    match a.dtype {
        ElementType::S4 | ElementType::U4 => unsupported(format!(
            "{} at the entry signature (host transfer)",
            a.dtype
        )),
        _ => Ok(()),
    }
}

fn array_attr(xs: &[i64]) -> String {
    if xs.is_empty() {
        "array<i64>".into()
    } else {
        format!(
            "array<i64: {}>",
            xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        )
    }
}

fn list(xs: &[i64]) -> String {
    format!(
        "[{}]",
        xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
    )
}

fn padding_attr(pairs: &[(i64, i64)]) -> String {
    let body = pairs
        .iter()
        .map(|(lo, hi)| format!("[{lo}, {hi}]"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("dense<[{body}]> : tensor<{}x2xi64>", pairs.len())
}

fn precision_attr(p: &Option<Vec<String>>) -> Result<Option<String>, LowerError> {
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

fn float_hex(data: &[f64], t: ElementType) -> Result<String, LowerError> {
    let width = t.byte_size();
    let mut s = String::with_capacity(4 + data.len() * width * 2);
    s.push_str("\"0x");
    for &x in data {
        let bits = match t {
            ElementType::F64 => x.to_bits(),
            _ => match t.float_format() {
                Some(fmt) => round_to_bits(x, &fmt),
                None => return invalid(format!("float constant of type {t}")),
            },
        };
        for byte in &bits.to_le_bytes()[..width] {
            let _ = write!(s, "{byte:02X}");
        }
    }
    s.push('"');
    Ok(s)
}

/// Complex values as a `dense<"0x...">` blob: per element the real then the
/// imaginary part, little-endian, each in the component type (f32 for c64).
fn complex_hex(data: &[(f64, f64)], t: ElementType) -> String {
    let mut s = String::with_capacity(4 + data.len() * t.byte_size() * 2);
    s.push_str("\"0x");
    for &(re, im) in data {
        for part in [re, im] {
            let bytes = if t == ElementType::C64 {
                (part as f32).to_le_bytes().to_vec()
            } else {
                part.to_le_bytes().to_vec()
            };
            for byte in bytes {
                let _ = write!(s, "{byte:02X}");
            }
        }
    }
    s.push('"');
    s
}

/// A finite float as an MLIR float literal that reads back as the same f64.
fn mlir_float(x: f64) -> Result<String, LowerError> {
    if !x.is_finite() {
        return unsupported("a non-finite complex constant component");
    }
    let s = format!("{x:?}");
    Ok(match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s,
    })
}

/// Writes row-major `items` as nested lists of shape `dims`.
fn nested(items: &[String], dims: &[i64]) -> String {
    fn go(items: &[String], dims: &[usize], out: &mut String) {
        match dims.split_first() {
            None => out.push_str(&items[0]),
            Some((&n, rest)) => {
                let stride: usize = rest.iter().product();
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(&items[i * stride..(i + 1) * stride], rest, out);
                }
                out.push(']');
            }
        }
    }
    let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let mut out = String::new();
    go(items, &dims, &mut out);
    out
}

fn dense_attr(data: &ConstantData, a: &ArrayShape) -> Result<String, LowerError> {
    let count = a
        .element_count()
        .ok_or_else(|| LowerError::Invalid(format!("bad dims in {a}")))? as usize;
    let ty = tensor_type(a)?;
    let len = match data {
        ConstantData::Pred(v) => v.len(),
        ConstantData::Int(v) => v.len(),
        ConstantData::Float(v) => v.len(),
        ConstantData::Complex(v) => v.len(),
        ConstantData::Tuple(_) => return invalid("tuple constant data for an array shape"),
    };
    if len != count {
        return invalid(format!(
            "constant of shape {a} has {len} values, {count} expected"
        ));
    }
    if count == 0 {
        return Ok(format!("dense<> : {ty}"));
    }
    let body = match data {
        ConstantData::Float(v) if a.dtype.is_float() => float_hex(v, a.dtype)?,
        // a non-finite component has no MLIR float literal: raw bytes
        ConstantData::Complex(v)
            if a.dtype.is_complex()
                && v.iter()
                    .any(|&(re, im)| !(re.is_finite() && im.is_finite())) =>
        {
            complex_hex(v, a.dtype)
        }
        ConstantData::Complex(v) if a.dtype.is_complex() => {
            let items = v
                .iter()
                .map(|&(re, im)| Ok(format!("({}, {})", mlir_float(re)?, mlir_float(im)?)))
                .collect::<Result<Vec<_>, LowerError>>()?;
            nested(&items, &a.dims)
        }
        ConstantData::Pred(v) => nested(
            &v.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
            &a.dims,
        ),
        ConstantData::Int(v) if a.dtype.is_integer() || a.dtype.is_pred() => {
            let items: Vec<String> = if a.dtype.is_pred() {
                v.iter().map(|&x| (x != 0).to_string()).collect()
            } else {
                v.iter().map(i128::to_string).collect()
            };
            nested(&items, &a.dims)
        }
        ConstantData::Int(v) if a.dtype.is_float() => {
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            float_hex(&f, a.dtype)?
        }
        _ => {
            return invalid(format!(
                "constant data does not match element type {}",
                a.dtype
            ))
        }
    };
    Ok(format!("dense<{body}> : {ty}"))
}

fn elementwise_name(op: Opcode) -> Option<&'static str> {
    Some(match op {
        Opcode::Abs => "stablehlo.abs",
        Opcode::Negate => "stablehlo.negate",
        Opcode::Sign => "stablehlo.sign",
        Opcode::Not => "stablehlo.not",
        Opcode::Ceil => "stablehlo.ceil",
        Opcode::Floor => "stablehlo.floor",
        Opcode::RoundNearestAfz => "stablehlo.round_nearest_afz",
        Opcode::RoundNearestEven => "stablehlo.round_nearest_even",
        Opcode::Exponential => "stablehlo.exponential",
        Opcode::ExponentialMinusOne => "stablehlo.exponential_minus_one",
        Opcode::Log => "stablehlo.log",
        Opcode::LogPlusOne => "stablehlo.log_plus_one",
        Opcode::Logistic => "stablehlo.logistic",
        Opcode::Sine => "stablehlo.sine",
        Opcode::Cosine => "stablehlo.cosine",
        Opcode::Tan => "stablehlo.tan",
        Opcode::Tanh => "stablehlo.tanh",
        Opcode::Sqrt => "stablehlo.sqrt",
        Opcode::Rsqrt => "stablehlo.rsqrt",
        Opcode::Cbrt => "stablehlo.cbrt",
        // StableHLO has no erf; CHLO's is what JAX emits and XLA accepts.
        Opcode::Erf => "chlo.erf",
        Opcode::IsFinite => "stablehlo.is_finite",
        Opcode::Popcnt => "stablehlo.popcnt",
        Opcode::CountLeadingZeros => "stablehlo.count_leading_zeros",
        Opcode::Add => "stablehlo.add",
        Opcode::Subtract => "stablehlo.subtract",
        Opcode::Multiply => "stablehlo.multiply",
        Opcode::Divide => "stablehlo.divide",
        Opcode::Remainder => "stablehlo.remainder",
        Opcode::Power => "stablehlo.power",
        Opcode::Maximum => "stablehlo.maximum",
        Opcode::Minimum => "stablehlo.minimum",
        Opcode::Atan2 => "stablehlo.atan2",
        Opcode::And => "stablehlo.and",
        Opcode::Or => "stablehlo.or",
        Opcode::Xor => "stablehlo.xor",
        Opcode::ShiftLeft => "stablehlo.shift_left",
        Opcode::ShiftRightArithmetic => "stablehlo.shift_right_arithmetic",
        Opcode::ShiftRightLogical => "stablehlo.shift_right_logical",
        Opcode::Select => "stablehlo.select",
        Opcode::Clamp => "stablehlo.clamp",
        Opcode::Convert => "stablehlo.convert",
        Opcode::BitcastConvert => "stablehlo.bitcast_convert",
        Opcode::Reshape => "stablehlo.reshape",
        _ => return None,
    })
}

/// True when the lowering handles `op` (for some operands and attributes).
pub fn lowers(op: Opcode) -> bool {
    elementwise_name(op).is_some()
        || matches!(
            op,
            Opcode::Parameter
                | Opcode::Constant
                | Opcode::Iota
                | Opcode::Tuple
                | Opcode::GetTupleElement
                | Opcode::Copy
                | Opcode::Bitcast
                | Opcode::Compare
                | Opcode::ReducePrecision
                | Opcode::Broadcast
                | Opcode::Transpose
                | Opcode::Slice
                | Opcode::Concatenate
                | Opcode::Pad
                | Opcode::Reverse
                | Opcode::DynamicSlice
                | Opcode::DynamicUpdateSlice
                | Opcode::Gather
                | Opcode::Scatter
                | Opcode::Reduce
                | Opcode::ReduceWindow
                | Opcode::SelectAndScatter
                | Opcode::Sort
                | Opcode::TopK
                | Opcode::Map
                | Opcode::Dot
                | Opcode::Convolution
                | Opcode::Fusion
                | Opcode::Call
                | Opcode::While
                | Opcode::Conditional
        )
}

/// Most nested calls/fusions/regions followed before giving up (guards recursion; each level costs stack).
const MAX_DEPTH: usize = 24;

struct Lowerer<'m> {
    module: &'m Module,
    next: usize,
    depth: usize,
    /// Writing [`print_module`]'s faithful form: regions forward to the
    /// functions of their computations, compares keep an absent type absent.
    faithful: bool,
}

fn pad(indent: usize) -> String {
    " ".repeat(indent * 2)
}

impl<'m> Lowerer<'m> {
    fn fresh(&mut self) -> String {
        let n = self.next;
        self.next += 1;
        format!("%{n}")
    }

    fn comp_checked(&self, id: CompId) -> Result<&'m Computation, LowerError> {
        self.module
            .computations
            .get(id.index())
            .ok_or_else(|| LowerError::Invalid(format!("computation id {} out of range", id.0)))
    }

    /// Emits one operation; returns its results.
    #[allow(clippy::too_many_arguments)]
    fn op(
        &mut self,
        out: &mut String,
        indent: usize,
        name: &str,
        operands: &[Val],
        regions: &[String],
        attrs: &[String],
        result_types: &[String],
    ) -> Vec<Val> {
        let id = self.fresh();
        let mut line = pad(indent);
        let results: Vec<Val> = match result_types.len() {
            0 => Vec::new(),
            1 => {
                let _ = write!(line, "{id} = ");
                vec![Val {
                    name: id.clone(),
                    ty: result_types[0].clone(),
                }]
            }
            n => {
                let _ = write!(line, "{id}:{n} = ");
                result_types
                    .iter()
                    .enumerate()
                    .map(|(k, t)| Val {
                        name: format!("{id}#{k}"),
                        ty: t.clone(),
                    })
                    .collect()
            }
        };
        let _ = write!(line, "\"{name}\"({})", names(operands));
        if !regions.is_empty() {
            let _ = write!(line, " ({})", regions.join(", "));
        }
        if !attrs.is_empty() {
            let _ = write!(line, " {{{}}}", attrs.join(", "));
        }
        let result_sig = if result_types.len() == 1 {
            result_types[0].clone()
        } else {
            format!("({})", result_types.join(", "))
        };
        let _ = writeln!(line, " : ({}) -> {result_sig}", types(operands));
        out.push_str(&line);
        results
    }

    /// A region whose block arguments are the leaves of `comp`'s parameters.
    fn region(&mut self, comp: CompId, indent: usize) -> Result<String, LowerError> {
        if self.faithful {
            if let Some(r) = self.forwarding_region(comp, indent)? {
                return Ok(r);
            }
        }
        let c = self.comp_checked(comp)?;
        let mut block_args = Vec::new();
        let mut params = Vec::new();
        for pid in c.parameters() {
            let mut vals = Vec::new();
            for leaf in leaves(&c.instr(pid).shape)? {
                let name = format!("%b{}", self.next);
                self.next += 1;
                let v = Val {
                    name,
                    ty: tensor_type(leaf)?,
                };
                block_args.push(format!("{}: {}", v.name, v.ty));
                vals.push(v);
            }
            params.push(vals);
        }
        let mut body = String::new();
        let results = self.computation(comp, &params, &mut body, indent + 1)?;
        let s = region(indent, &block_args, &body, &results);
        Ok(s)
    }

    /// A region without block arguments: `comp` inlined with `params`, which
    /// the region captures from the enclosing scope.
    fn capturing_region(
        &mut self,
        comp: CompId,
        params: &[Vec<Val>],
        indent: usize,
    ) -> Result<String, LowerError> {
        let mut body = String::new();
        let results = self.computation(comp, params, &mut body, indent + 1)?;
        let mut s = String::from("{\n");
        s.push_str(&body);
        let _ = writeln!(
            s,
            "{}\"stablehlo.return\"({}) : ({}) -> ()",
            pad(indent + 1),
            names(&results),
            types(&results)
        );
        let _ = write!(s, "{}}}", pad(indent));
        Ok(s)
    }

    /// Emits the instructions of `comp` reachable from its root, with its
    /// parameters bound to `params`; returns the root's leaf values.
    fn computation(
        &mut self,
        comp: CompId,
        params: &[Vec<Val>],
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return unsupported("calls nested deeper than 24 (recursive computations?)");
        }
        let c = self.comp_checked(comp)?;
        let order = c
            .post_order()
            .ok_or_else(|| LowerError::Invalid(format!("cycle in computation {}", c.name)))?;
        let reachable = reachable_from_root(c);
        let mut values: Vec<Option<Vec<Val>>> = vec![None; c.instructions.len()];
        for id in order {
            if !reachable.contains(&id) {
                continue;
            }
            let instr = c.instr(id);
            let operands: Vec<&[Val]> = instr
                .operands
                .iter()
                .map(|o| {
                    values
                        .get(o.index())
                        .and_then(|v| v.as_deref())
                        .ok_or_else(|| {
                            LowerError::Invalid(format!("operand of {} is undefined", instr.name))
                        })
                })
                .collect::<Result<_, _>>()?;
            let vals = self
                .instruction(c, instr, &operands, params, out, indent)
                .map_err(|e| match e {
                    LowerError::Unsupported(m) => {
                        LowerError::Unsupported(format!("{} ({}): {m}", instr.name, instr.opcode))
                    }
                    LowerError::Invalid(m) => {
                        LowerError::Invalid(format!("{} ({}): {m}", instr.name, instr.opcode))
                    }
                })?;
            values[id.index()] = Some(vals);
        }
        self.depth -= 1;
        values
            .get(c.root.index())
            .and_then(|v| v.clone())
            .ok_or_else(|| LowerError::Invalid(format!("root of {} is undefined", c.name)))
    }

    fn instruction(
        &mut self,
        c: &Computation,
        instr: &Instruction,
        operands: &[&[Val]],
        params: &[Vec<Val>],
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        let a = &instr.attrs;
        let op = instr.opcode;
        if !op.arity().accepts(operands.len()) {
            return invalid(format!("{} operands", operands.len()));
        }
        // Single-array operands, for ops that take arrays only.
        let arrays = || -> Result<Vec<Val>, LowerError> {
            operands
                .iter()
                .map(|o| match o {
                    [v] => Ok(v.clone()),
                    _ => invalid("a tuple operand where an array is expected"),
                })
                .collect()
        };
        let result_types = || -> Result<Vec<String>, LowerError> {
            leaves(&instr.shape)?.into_iter().map(tensor_type).collect()
        };
        let array_shape = || -> Result<&ArrayShape, LowerError> {
            instr
                .shape
                .as_array()
                .ok_or_else(|| LowerError::Invalid("expected an array shape".into()))
        };
        let need = |v: &Option<Vec<i64>>, what: &str| -> Result<Vec<i64>, LowerError> {
            v.clone()
                .ok_or_else(|| LowerError::Invalid(format!("missing {what}")))
        };
        let called = |c: Option<CompId>, what: &str| -> Result<CompId, LowerError> {
            c.ok_or_else(|| LowerError::Invalid(format!("missing {what}")))
        };

        if let Some(name) = elementwise_name(op) {
            let ops = arrays()?;
            return Ok(self.op(out, indent, name, &ops, &[], &[], &result_types()?));
        }
        Ok(match op {
            Opcode::Parameter => {
                let n = a
                    .parameter_number
                    .ok_or_else(|| LowerError::Invalid("missing parameter number".into()))?;
                usize::try_from(n)
                    .ok()
                    .and_then(|n| params.get(n))
                    .cloned()
                    .ok_or_else(|| {
                        LowerError::Invalid(format!("parameter {n} is not bound by the caller"))
                    })?
            }
            Opcode::Constant => {
                let data = a
                    .constant
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing constant data".into()))?;
                self.constant(&instr.shape, data, out, indent)?
            }
            Opcode::Iota => {
                let d = a
                    .iota_dimension
                    .ok_or_else(|| LowerError::Invalid("missing iota_dimension".into()))?;
                let attrs = [format!("iota_dimension = {d} : i64")];
                self.op(
                    out,
                    indent,
                    "stablehlo.iota",
                    &[],
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Tuple => operands.iter().flat_map(|o| o.iter().cloned()).collect(),
            Opcode::GetTupleElement => {
                let index = a
                    .index
                    .ok_or_else(|| LowerError::Invalid("missing index".into()))?;
                let src = &operand_shape(c, instr, 0)?;
                let elems = src
                    .as_tuple()
                    .ok_or_else(|| LowerError::Invalid("operand is not a tuple".into()))?;
                let index = usize::try_from(index)
                    .ok()
                    .filter(|&i| i < elems.len())
                    .ok_or_else(|| LowerError::Invalid(format!("index {index} out of range")))?;
                let start: usize = elems[..index].iter().map(|e| e.leaves().len()).sum();
                let n = elems[index].leaves().len();
                operands[0]
                    .get(start..start + n)
                    .ok_or_else(|| LowerError::Invalid("tuple leaf count mismatch".into()))?
                    .to_vec()
            }
            Opcode::Copy => operands[0].to_vec(),
            Opcode::Bitcast => {
                let src = operand_shape(c, instr, 0)?;
                let src = src
                    .as_array()
                    .ok_or_else(|| LowerError::Invalid("bitcast of a tuple".into()))?;
                let dst = array_shape()?.clone();
                if src.dtype.bit_width() != dst.dtype.bit_width()
                    || src.dtype.is_complex() != dst.dtype.is_complex()
                    || src.element_count() != dst.element_count()
                {
                    return unsupported("bitcast that changes the element width or count");
                }
                // a physical reinterpretation: the operand's elements in its
                // physical order (a transpose to major-to-minor order), the
                // bits reinterpreted, then laid out in the result's physical
                // order (a reshape to its major-to-minor dims and the inverse
                // transpose)
                let major_to_minor = |s: &ArrayShape| -> Result<Vec<usize>, LowerError> {
                    let rank = s.dims.len();
                    let order: Vec<usize> = match &s.layout {
                        Some(l) if !l.minor_to_major.is_empty() => l
                            .minor_to_major
                            .iter()
                            .rev()
                            .map(|&d| usize::try_from(d).ok().filter(|&d| d < rank))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| LowerError::Invalid(format!("bad layout in {s}")))?,
                        _ => (0..rank).collect(),
                    };
                    let mut seen = order.clone();
                    seen.sort_unstable();
                    if seen != (0..rank).collect::<Vec<_>>() {
                        return invalid(format!("layout of {s} is not a permutation"));
                    }
                    Ok(order)
                };
                let (ps, pd) = (major_to_minor(src)?, major_to_minor(&dst)?);
                let identity = |p: &[usize]| p.iter().enumerate().all(|(i, &d)| i == d);
                let permuted = |s: &ArrayShape, p: &[usize], dtype: ElementType| {
                    let mut a =
                        ArrayShape::new(dtype, p.iter().map(|&d| s.dims[d]).collect::<Vec<i64>>());
                    a.layout = None;
                    a
                };
                let mut vals = arrays()?;
                if !identity(&ps) {
                    let t = tensor_type(&permuted(src, &ps, src.dtype))?;
                    let attrs = [format!(
                        "permutation = {}",
                        array_attr(&ps.iter().map(|&d| d as i64).collect::<Vec<_>>())
                    )];
                    vals = self.op(out, indent, "stablehlo.transpose", &vals, &[], &attrs, &[t]);
                }
                let flat = permuted(&dst, &pd, dst.dtype);
                if src.dtype != dst.dtype {
                    let t = tensor_type(&permuted(src, &ps, dst.dtype))?;
                    vals = self.op(
                        out,
                        indent,
                        "stablehlo.bitcast_convert",
                        &vals,
                        &[],
                        &[],
                        &[t],
                    );
                }
                if identity(&pd) {
                    self.op(
                        out,
                        indent,
                        "stablehlo.reshape",
                        &vals,
                        &[],
                        &[],
                        &result_types()?,
                    )
                } else {
                    let t = tensor_type(&flat)?;
                    vals = self.op(out, indent, "stablehlo.reshape", &vals, &[], &[], &[t]);
                    let mut inverse = vec![0usize; pd.len()];
                    for (j, &q) in pd.iter().enumerate() {
                        inverse[q] = j;
                    }
                    let attrs = [format!(
                        "permutation = {}",
                        array_attr(&inverse.iter().map(|&d| d as i64).collect::<Vec<_>>())
                    )];
                    self.op(
                        out,
                        indent,
                        "stablehlo.transpose",
                        &vals,
                        &[],
                        &attrs,
                        &result_types()?,
                    )
                }
            }
            Opcode::Compare => {
                let dir = a
                    .direction
                    .ok_or_else(|| LowerError::Invalid("missing direction".into()))?;
                let src = operand_shape(c, instr, 0)?;
                let dtype = src
                    .as_array()
                    .ok_or_else(|| LowerError::Invalid("compare of a tuple".into()))?
                    .dtype;
                let ty = a.comparison_type.unwrap_or(if dtype.is_float() {
                    ComparisonType::Float
                } else if dtype.is_signed_int() {
                    ComparisonType::Signed
                } else {
                    ComparisonType::Unsigned
                });
                let mut attrs = vec![format!(
                    "comparison_direction = #stablehlo<comparison_direction {}>",
                    dir.name()
                )];
                // the faithful form leaves an absent type absent (its default)
                if !self.faithful || a.comparison_type.is_some() {
                    attrs.push(format!(
                        "compare_type = #stablehlo<comparison_type {}>",
                        ty.name()
                    ));
                }
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.compare",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::ReducePrecision => {
                let (Some(e), Some(m)) = (a.exponent_bits, a.mantissa_bits) else {
                    return invalid("missing exponent_bits or mantissa_bits");
                };
                let attrs = [
                    format!("exponent_bits = {e} : i32"),
                    format!("mantissa_bits = {m} : i32"),
                ];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.reduce_precision",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Broadcast => {
                // `dimensions={}` may be left out for a scalar operand.
                let scalar_operand = operand_shape(c, instr, 0)?
                    .as_array()
                    .is_some_and(|s| s.rank() == 0);
                let dims = match &a.dimensions {
                    None if scalar_operand => Vec::new(),
                    d => need(d, "dimensions")?,
                };
                let attrs = [format!("broadcast_dimensions = {}", array_attr(&dims))];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.broadcast_in_dim",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Transpose => {
                let dims = need(&a.dimensions, "dimensions")?;
                let attrs = [format!("permutation = {}", array_attr(&dims))];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.transpose",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Slice => {
                let s = a
                    .slice
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing slice".into()))?;
                let starts: Vec<i64> = s.iter().map(|d| d.start).collect();
                let limits: Vec<i64> = s.iter().map(|d| d.limit).collect();
                let strides: Vec<i64> = s.iter().map(|d| d.stride).collect();
                let attrs = [
                    format!("start_indices = {}", array_attr(&starts)),
                    format!("limit_indices = {}", array_attr(&limits)),
                    format!("strides = {}", array_attr(&strides)),
                ];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.slice",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Concatenate => {
                let dims = need(&a.dimensions, "dimensions")?;
                let [d] = dims[..] else {
                    return invalid("concatenate needs exactly one dimension");
                };
                let attrs = [format!("dimension = {d} : i64")];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.concatenate",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Pad => {
                let p = a
                    .padding
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing padding".into()))?;
                let lo: Vec<i64> = p.iter().map(|d| d.low).collect();
                let hi: Vec<i64> = p.iter().map(|d| d.high).collect();
                let interior: Vec<i64> = p.iter().map(|d| d.interior).collect();
                let attrs = [
                    format!("edge_padding_low = {}", array_attr(&lo)),
                    format!("edge_padding_high = {}", array_attr(&hi)),
                    format!("interior_padding = {}", array_attr(&interior)),
                ];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.pad",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Reverse => {
                let dims = need(&a.dimensions, "dimensions")?;
                let attrs = [format!("dimensions = {}", array_attr(&dims))];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.reverse",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::DynamicSlice => {
                let sizes = need(&a.dynamic_slice_sizes, "dynamic_slice_sizes")?;
                let ops = arrays()?;
                let ops = self.scalar_indices(ops, 1, out, indent)?;
                let attrs = [format!("slice_sizes = {}", array_attr(&sizes))];
                self.op(
                    out,
                    indent,
                    "stablehlo.dynamic_slice",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::DynamicUpdateSlice => {
                let ops = arrays()?;
                let ops = self.scalar_indices(ops, 2, out, indent)?;
                self.op(
                    out,
                    indent,
                    "stablehlo.dynamic_update_slice",
                    &ops,
                    &[],
                    &[],
                    &result_types()?,
                )
            }
            Opcode::Gather => {
                let g = a.gather_dims.as_ref().ok_or_else(|| {
                    LowerError::Invalid("missing gather dimension numbers".into())
                })?;
                let mut fields = vec![format!("offset_dims = {}", list(&g.offset_dims))];
                if !g.collapsed_slice_dims.is_empty() {
                    fields.push(format!(
                        "collapsed_slice_dims = {}",
                        list(&g.collapsed_slice_dims)
                    ));
                }
                if !g.operand_batching_dims.is_empty() {
                    fields.push(format!(
                        "operand_batching_dims = {}",
                        list(&g.operand_batching_dims)
                    ));
                }
                if !g.start_indices_batching_dims.is_empty() {
                    fields.push(format!(
                        "start_indices_batching_dims = {}",
                        list(&g.start_indices_batching_dims)
                    ));
                }
                fields.push(format!("start_index_map = {}", list(&g.start_index_map)));
                fields.push(format!("index_vector_dim = {}", g.index_vector_dim));
                let attrs = [
                    format!(
                        "dimension_numbers = #stablehlo.gather<{}>",
                        fields.join(", ")
                    ),
                    format!("indices_are_sorted = {}", a.indices_are_sorted),
                    format!("slice_sizes = {}", array_attr(&g.slice_sizes)),
                ];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.gather",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Scatter => {
                let s = a.scatter_dims.as_ref().ok_or_else(|| {
                    LowerError::Invalid("missing scatter dimension numbers".into())
                })?;
                let f = called(a.to_apply, "to_apply")?;
                let mut fields = vec![format!(
                    "update_window_dims = {}",
                    list(&s.update_window_dims)
                )];
                if !s.inserted_window_dims.is_empty() {
                    fields.push(format!(
                        "inserted_window_dims = {}",
                        list(&s.inserted_window_dims)
                    ));
                }
                if !s.input_batching_dims.is_empty() {
                    fields.push(format!(
                        "input_batching_dims = {}",
                        list(&s.input_batching_dims)
                    ));
                }
                if !s.scatter_indices_batching_dims.is_empty() {
                    fields.push(format!(
                        "scatter_indices_batching_dims = {}",
                        list(&s.scatter_indices_batching_dims)
                    ));
                }
                fields.push(format!(
                    "scatter_dims_to_operand_dims = {}",
                    list(&s.scatter_dims_to_operand_dims)
                ));
                fields.push(format!("index_vector_dim = {}", s.index_vector_dim));
                let attrs = [
                    format!(
                        "scatter_dimension_numbers = #stablehlo.scatter<{}>",
                        fields.join(", ")
                    ),
                    format!("indices_are_sorted = {}", a.indices_are_sorted),
                    format!("unique_indices = {}", a.unique_indices),
                ];
                let region = self.region(f, indent + 1)?;
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.scatter",
                    &ops,
                    &[region],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Reduce => {
                let dims = need(&a.dimensions, "dimensions")?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                let attrs = [format!("dimensions = {}", array_attr(&dims))];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.reduce",
                    &ops,
                    &[region],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::ReduceWindow => {
                let w = a
                    .window
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing window".into()))?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                if w.iter().any(|d| d.reversal) {
                    return unsupported("window reversal in reduce-window");
                }
                let attrs = window_attrs(w, true);
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.reduce_window",
                    &ops,
                    &[region],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::SelectAndScatter => {
                let w = a
                    .window
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing window".into()))?;
                if w.iter()
                    .any(|d| d.base_dilation != 1 || d.window_dilation != 1 || d.reversal)
                {
                    return unsupported("dilated or reversed select-and-scatter window");
                }
                let select = self.region(called(a.select, "select")?, indent + 1)?;
                let scatter = self.region(called(a.scatter, "scatter")?, indent + 1)?;
                let attrs = window_attrs(w, false);
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.select_and_scatter",
                    &ops,
                    &[select, scatter],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::TopK => {
                // CHLO's top_k: the k largest along the last dimension, ties by
                // the lower index (as the reference); no smallest-first form
                let raw = |name: &str| {
                    a.other
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v.trim().to_string())
                };
                let Some(k) = raw("k").and_then(|k| k.parse::<i64>().ok()) else {
                    return invalid("topk needs k=");
                };
                if raw("largest").is_some_and(|l| l == "false") {
                    return unsupported("topk with largest=false (chlo.top_k takes the largest)");
                }
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "chlo.top_k",
                    &ops,
                    &[],
                    &[format!("k = {k} : i64")],
                    &result_types()?,
                )
            }
            Opcode::Sort => {
                let dims = need(&a.dimensions, "dimensions")?;
                let [d] = dims[..] else {
                    return invalid("sort needs exactly one dimension");
                };
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                let attrs = [
                    format!("dimension = {d} : i64"),
                    format!("is_stable = {}", a.is_stable),
                ];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.sort",
                    &ops,
                    &[region],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Map => {
                let f = called(a.to_apply, "to_apply")?;
                let rank = array_shape()?.rank() as i64;
                let region = self.region(f, indent + 1)?;
                let all: Vec<i64> = (0..rank).collect();
                let attrs = [format!("dimensions = {}", array_attr(&all))];
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.map",
                    &ops,
                    &[region],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Dot => {
                let d = a.dot_dims.clone().unwrap_or_default();
                if a.other.iter().any(|(k, _)| k == "algorithm") {
                    return unsupported("dot algorithm");
                }
                let mut fields = Vec::new();
                if !d.lhs_batch.is_empty() {
                    fields.push(format!("lhs_batching_dimensions = {}", list(&d.lhs_batch)));
                    fields.push(format!("rhs_batching_dimensions = {}", list(&d.rhs_batch)));
                }
                fields.push(format!(
                    "lhs_contracting_dimensions = {}",
                    list(&d.lhs_contracting)
                ));
                fields.push(format!(
                    "rhs_contracting_dimensions = {}",
                    list(&d.rhs_contracting)
                ));
                let mut attrs = vec![format!(
                    "dot_dimension_numbers = #stablehlo.dot<{}>",
                    fields.join(", ")
                )];
                attrs.extend(precision_attr(&a.precision)?);
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.dot_general",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Convolution => {
                let dn = a
                    .conv_dims
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing dim_labels".into()))?;
                let rank = array_shape()?.rank();
                let labels = |batch: i64, feature: i64, spatial: &[i64], b: &str, f: &str| {
                    let mut v = vec![String::from("?"); rank];
                    let mut set = |i: i64, s: String| {
                        if let Some(slot) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
                            *slot = s;
                        }
                    };
                    set(batch, b.into());
                    set(feature, f.into());
                    for (k, &d) in spatial.iter().enumerate() {
                        set(d, k.to_string());
                    }
                    format!("[{}]", v.join(", "))
                };
                let input = labels(
                    dn.input_batch,
                    dn.input_feature,
                    &dn.input_spatial,
                    "b",
                    "f",
                );
                let kernel = labels(
                    dn.kernel_input_feature,
                    dn.kernel_output_feature,
                    &dn.kernel_spatial,
                    "i",
                    "o",
                );
                let output = labels(
                    dn.output_batch,
                    dn.output_feature,
                    &dn.output_spatial,
                    "b",
                    "f",
                );
                if [&input, &kernel, &output].iter().any(|s| s.contains('?')) {
                    return invalid("dim_labels do not cover every dimension");
                }
                let spatial = dn.input_spatial.len();
                let w: Vec<WindowDim> = match &a.window {
                    Some(w) => w.clone(),
                    None => vec![WindowDim::new(1); spatial],
                };
                if w.len() != spatial {
                    return invalid("window rank differs from the spatial rank");
                }
                let mut attrs = Vec::new();
                if spatial > 0 {
                    let strides: Vec<i64> = w.iter().map(|d| d.stride).collect();
                    let padding: Vec<(i64, i64)> =
                        w.iter().map(|d| (d.pad_low, d.pad_high)).collect();
                    let lhs: Vec<i64> = w.iter().map(|d| d.base_dilation).collect();
                    let rhs: Vec<i64> = w.iter().map(|d| d.window_dilation).collect();
                    let rev: Vec<String> = w.iter().map(|d| d.reversal.to_string()).collect();
                    attrs.push(format!("window_strides = {}", array_attr(&strides)));
                    attrs.push(format!("padding = {}", padding_attr(&padding)));
                    attrs.push(format!("lhs_dilation = {}", array_attr(&lhs)));
                    attrs.push(format!("rhs_dilation = {}", array_attr(&rhs)));
                    attrs.push(format!("window_reversal = array<i1: {}>", rev.join(", ")));
                }
                attrs.push(format!(
                    "dimension_numbers = #stablehlo.conv<{input}x{kernel}->{output}>"
                ));
                attrs.push(format!(
                    "feature_group_count = {} : i64",
                    a.feature_group_count.unwrap_or(1)
                ));
                attrs.push(format!(
                    "batch_group_count = {} : i64",
                    a.batch_group_count.unwrap_or(1)
                ));
                attrs.extend(precision_attr(&a.precision)?);
                let ops = arrays()?;
                self.op(
                    out,
                    indent,
                    "stablehlo.convolution",
                    &ops,
                    &[],
                    &attrs,
                    &result_types()?,
                )
            }
            Opcode::Fusion | Opcode::Call => {
                let f = if op == Opcode::Fusion {
                    a.calls
                        .first()
                        .copied()
                        .ok_or_else(|| LowerError::Invalid("missing calls".into()))?
                } else {
                    called(a.to_apply, "to_apply")?
                };
                let args: Vec<Vec<Val>> = operands.iter().map(|o| o.to_vec()).collect();
                self.computation(f, &args, out, indent)?
            }
            Opcode::While => {
                let cond = self.region(called(a.condition, "condition")?, indent + 1)?;
                let body = self.region(called(a.body, "body")?, indent + 1)?;
                let init = operands[0].to_vec();
                let tys: Vec<String> = init.iter().map(|v| v.ty.clone()).collect();
                self.op(
                    out,
                    indent,
                    "stablehlo.while",
                    &init,
                    &[cond, body],
                    &[],
                    &tys,
                )
            }
            Opcode::Conditional => {
                let branches = &a.branch_computations;
                if branches.is_empty() || operands.len() != branches.len() + 1 {
                    return invalid("branch count does not match the operands");
                }
                let selector = match operands[0] {
                    [v] => v.clone(),
                    _ => return invalid("tuple branch selector"),
                };
                let mut regions = Vec::new();
                for (k, &b) in branches.iter().enumerate() {
                    let params = vec![operands[k + 1].to_vec()];
                    regions.push(self.capturing_region(b, &params, indent + 1)?);
                }
                let is_pred = selector.ty == "tensor<i1>";
                if is_pred && regions.len() != 2 {
                    return invalid("a pred conditional needs two branches");
                }
                let name = if is_pred {
                    "stablehlo.if"
                } else {
                    "stablehlo.case"
                };
                self.op(
                    out,
                    indent,
                    name,
                    &[selector],
                    &regions,
                    &[],
                    &result_types()?,
                )
            }
            _ => return unsupported("no stablehlo lowering for this opcode"),
        })
    }

    /// Dynamic-slice/update-slice operands with index operands from `first`
    /// on; the older form with one rank-1 index vector is split into scalars.
    fn scalar_indices(
        &mut self,
        ops: Vec<Val>,
        first: usize,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        if ops.len() != first + 1 {
            return Ok(ops);
        }
        let idx = &ops[first];
        if idx.ty.starts_with("tensor<") && !idx.ty.contains('x') {
            return Ok(ops); // already a scalar
        }
        // tensor<Nxi32>: slice and reshape each component.
        let inner = &idx.ty["tensor<".len()..idx.ty.len() - 1];
        let (n, elem) = inner
            .split_once('x')
            .ok_or_else(|| LowerError::Invalid("bad index vector type".into()))?;
        let n: i64 = n
            .parse()
            .map_err(|_| LowerError::Invalid("bad index vector length".into()))?;
        let mut result = ops[..first].to_vec();
        for k in 0..n {
            let one = format!("tensor<1x{elem}>");
            let attrs = [
                format!("start_indices = {}", array_attr(&[k])),
                format!("limit_indices = {}", array_attr(&[k + 1])),
                format!("strides = {}", array_attr(&[1])),
            ];
            let s = self.op(
                out,
                indent,
                "stablehlo.slice",
                std::slice::from_ref(idx),
                &[],
                &attrs,
                &[one],
            );
            let scalar = format!("tensor<{elem}>");
            let r = self.op(out, indent, "stablehlo.reshape", &s, &[], &[], &[scalar]);
            result.extend(r);
        }
        Ok(result)
    }

    fn constant(
        &mut self,
        shape: &Shape,
        data: &ConstantData,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        match (shape, data) {
            (Shape::Tuple(shapes), ConstantData::Tuple(items)) => {
                if shapes.len() != items.len() {
                    return invalid("tuple constant arity");
                }
                let mut vals = Vec::new();
                for (s, d) in shapes.iter().zip(items) {
                    vals.extend(self.constant(s, d, out, indent)?);
                }
                Ok(vals)
            }
            (Shape::Array(a), d) => {
                let attr = format!("value = {}", dense_attr(d, a)?);
                let ty = tensor_type(a)?;
                Ok(self.op(out, indent, "stablehlo.constant", &[], &[], &[attr], &[ty]))
            }
            _ => invalid("constant data does not match its shape"),
        }
    }
}

fn window_attrs(w: &[WindowDim], dilations: bool) -> Vec<String> {
    let sizes: Vec<i64> = w.iter().map(|d| d.size).collect();
    let strides: Vec<i64> = w.iter().map(|d| d.stride).collect();
    let padding: Vec<(i64, i64)> = w.iter().map(|d| (d.pad_low, d.pad_high)).collect();
    let mut attrs = vec![
        format!("window_dimensions = {}", array_attr(&sizes)),
        format!("window_strides = {}", array_attr(&strides)),
    ];
    if dilations {
        let base: Vec<i64> = w.iter().map(|d| d.base_dilation).collect();
        let win: Vec<i64> = w.iter().map(|d| d.window_dilation).collect();
        attrs.push(format!("base_dilations = {}", array_attr(&base)));
        attrs.push(format!("window_dilations = {}", array_attr(&win)));
    }
    if !w.is_empty() {
        attrs.push(format!("padding = {}", padding_attr(&padding)));
    }
    attrs
}

fn operand_shape(c: &Computation, instr: &Instruction, k: usize) -> Result<Shape, LowerError> {
    instr
        .operands
        .get(k)
        .filter(|id| id.index() < c.instructions.len())
        .map(|id| c.instr(*id).shape.clone())
        .ok_or_else(|| LowerError::Invalid("operand shape unknown".into()))
}

fn reachable_from_root(c: &Computation) -> HashSet<InstrId> {
    let mut seen = HashSet::new();
    let mut stack = vec![c.root];
    while let Some(id) = stack.pop() {
        if id.index() >= c.instructions.len() || !seen.insert(id) {
            continue;
        }
        stack.extend(c.instr(id).operands.iter().copied());
    }
    seen
}

/// Prints a module as StableHLO in the faithful form: reading it back
/// ([`super::parse_stablehlo`]) gives the same module, so HLO -> StableHLO
/// -> HLO is the identity where the module's instructions each have one
/// StableHLO operation (see `docs/stablehlo.md` for the exceptions).
///
/// Unlike [`lower_module`] (the form backends compile, whose entry takes and
/// returns array leaves), every computation is a function named after it
/// (the entry public, the others private), in module order, with tuple
/// parameters and results kept; its instructions are written in their
/// order, unreachable ones included, each with its name as the location
/// `loc("name")` (as XLA's own HLO -> MHLO import does). Calls are
/// `func.call`s, fusions `func.call`s with `xla.fusion_kind`; a reduction's
/// or sort's region forwards its arguments to its computation's function,
/// so the computation keeps its name and stays shared. What StableHLO has no
/// field for is carried in discardable `xla.*` attributes: layouts
/// (`xla.shape = "f32[2,3]{0,1}"`), XLA's verbatim attributes (`metadata`,
/// `sharding`, ... as `xla.hlo.metadata = "..."`, also on functions and the
/// module), where a computation's parameters stand among its instructions
/// (`xla.parameter_positions`).
///
/// ```
/// use xla_props::hlo::{parse_module, stablehlo::{parse_stablehlo, print_module}};
/// let hlo = "HloModule m\n\nENTRY e {\n  c = f32[] constant(1)\n  p = f32[2]{0} parameter(0)\n  \
///            b = f32[2]{0} broadcast(c), dimensions={}\n  dead = f32[2]{0} negate(p)\n  \
///            ROOT a.7 = f32[2]{0} add(p, b)\n}\n";
/// let m = parse_module(hlo).unwrap();
/// let text = print_module(&m).unwrap();
/// assert!(text.contains("loc(\"a.7\")"));
/// let back = parse_stablehlo(&text).unwrap().remove(0);
/// assert_eq!(back.to_string(), m.to_string());
/// ```
pub fn print_module(module: &Module) -> Result<String, LowerError> {
    if module.entry.index() >= module.computations.len() {
        return Err(LowerError::Invalid("entry computation out of range".into()));
    }
    let mut l = Lowerer {
        module,
        next: 0,
        depth: 0,
        faithful: true,
    };
    let mut out = format!("module {}", symbol(&module.name));
    let attrs = carried_attrs(&module.attrs);
    if !attrs.is_empty() {
        let _ = write!(out, " attributes {{{}}}", attrs.join(", "));
    }
    out.push_str(" {\n");
    for k in 0..module.computations.len() {
        l.function(CompId(k as u32), &mut out)?;
    }
    out.push_str("}\n");
    Ok(out)
}

/// `@name`, quoted where MLIR's bare identifiers do not reach.
fn symbol(name: &str) -> String {
    let bare = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'));
    if bare {
        format!("@{name}")
    } else {
        format!("@{}", quote(name))
    }
}

/// An MLIR string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out.push('"');
    out
}

/// XLA's verbatim attributes as `xla.hlo.NAME = "value"`.
fn carried_attrs(attrs: &[(String, String)]) -> Vec<String> {
    attrs
        .iter()
        .map(|(k, v)| format!("{} = {}", quote(&format!("xla.hlo.{k}")), quote(v)))
        .collect()
}

/// What an instruction carries besides its name: its layouts and XLA's verbatim attributes.
fn instruction_extras(instr: &Instruction) -> Vec<String> {
    let mut extras = Vec::new();
    if instr
        .shape
        .leaves()
        .iter()
        .any(|leaf| leaf.layout.is_some())
    {
        extras.push(format!("xla.shape = {}", quote(&instr.shape.to_string())));
    }
    // StableHLO always has the group counts; HLO may leave a count of 1 out
    // or write it: which ones it wrote
    let a = &instr.attrs;
    let explicit: Vec<&str> = [
        ("feature", a.feature_group_count),
        ("batch", a.batch_group_count),
    ]
    .iter()
    .filter(|(_, n)| *n == Some(1))
    .map(|(k, _)| *k)
    .collect();
    if instr.opcode == Opcode::Convolution && !explicit.is_empty() {
        extras.push(format!(
            "xla.explicit_group_counts = {}",
            quote(&explicit.join(","))
        ));
    }
    extras.extend(carried_attrs(&instr.attrs.other));
    extras
}

/// The MLIR type of an HLO shape: `tensor<...>`, or `tuple<...>` of them.
fn mlir_type(s: &Shape) -> Result<String, LowerError> {
    match s {
        Shape::Array(a) => tensor_type(a),
        Shape::Tuple(items) => Ok(format!(
            "tuple<{}>",
            items
                .iter()
                .map(mlir_type)
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        )),
        Shape::Token => unsupported("token values"),
    }
}

/// Writes `extras` into the attribute dictionary of the last operation in
/// `text` and its location after it.
fn annotate_last(text: &mut String, start: usize, extras: &[String], name: &str) {
    if !extras.is_empty() {
        if let Some(at) = text[start..].rfind(" : (").map(|k| start + k) {
            if text[..at].ends_with('}') {
                text.insert_str(at - 1, &format!(", {}", extras.join(", ")));
            } else {
                text.insert_str(at, &format!(" {{{}}}", extras.join(", ")));
            }
        }
    }
    if text.ends_with('\n') {
        text.pop();
    }
    let _ = writeln!(text, " loc({})", quote(name));
}

impl Lowerer<'_> {
    /// One computation as a function of the faithful form.
    fn function(&mut self, cid: CompId, out: &mut String) -> Result<(), LowerError> {
        let c = self.comp_checked(cid)?;
        let params = c.parameters();
        let mut values: Vec<Option<Val>> = vec![None; c.instructions.len()];
        let mut arg_decls = Vec::new();
        for (k, &pid) in params.iter().enumerate() {
            let instr = c.instr(pid);
            if instr.attrs.parameter_number != Some(k as i64) {
                return invalid(format!(
                    "parameters of {} are not numbered 0..n (at {})",
                    c.name, instr.name
                ));
            }
            let v = Val {
                name: format!("%arg{k}"),
                ty: mlir_type(&instr.shape)?,
            };
            let extras = instruction_extras(instr);
            let attrs = if extras.is_empty() {
                String::new()
            } else {
                format!(" {{{}}}", extras.join(", "))
            };
            arg_decls.push(format!(
                "{}: {}{attrs} loc({})",
                v.name,
                v.ty,
                quote(&instr.name)
            ));
            values[pid.index()] = Some(v);
        }
        // text order when every operand comes before its use, else post order
        let in_order = c.instructions.iter().enumerate().all(|(k, i)| {
            i.operands.iter().all(|o| {
                o.index() < k
                    || c.instructions
                        .get(o.index())
                        .is_some_and(|p| p.opcode == Opcode::Parameter)
            })
        });
        let order: Vec<InstrId> = if in_order {
            (0..c.instructions.len() as u32).map(InstrId).collect()
        } else {
            c.post_order()
                .ok_or_else(|| LowerError::Invalid(format!("cycle in computation {}", c.name)))?
        };
        let mut body = String::new();
        for id in order {
            let instr = c.instr(id);
            if instr.opcode == Opcode::Parameter {
                continue;
            }
            let operands: Vec<Val> = instr
                .operands
                .iter()
                .map(|o| {
                    values.get(o.index()).cloned().flatten().ok_or_else(|| {
                        LowerError::Invalid(format!("operand of {} is undefined", instr.name))
                    })
                })
                .collect::<Result<_, _>>()?;
            let start = body.len();
            let v = self
                .faithful_instruction(c, instr, &operands, &mut body, 2)
                .map_err(|e| match e {
                    LowerError::Unsupported(m) => {
                        LowerError::Unsupported(format!("{} ({}): {m}", instr.name, instr.opcode))
                    }
                    LowerError::Invalid(m) => {
                        LowerError::Invalid(format!("{} ({}): {m}", instr.name, instr.opcode))
                    }
                })?;
            if body.len() > start {
                annotate_last(&mut body, start, &instruction_extras(instr), &instr.name);
            }
            values[id.index()] = Some(v);
        }
        let root = values
            .get(c.root.index())
            .cloned()
            .flatten()
            .ok_or_else(|| LowerError::Invalid(format!("root of {} is undefined", c.name)))?;
        let entry = cid == self.module.entry;
        let mut attrs = carried_attrs(&c.other);
        let positions: Vec<i64> = params.iter().map(|p| i64::from(p.0)).collect();
        if positions.iter().enumerate().any(|(k, &p)| p != k as i64) {
            attrs.push(format!(
                "xla.parameter_positions = {}",
                array_attr(&positions)
            ));
        }
        let _ = write!(
            out,
            "  func.func {} {}({}) -> {}",
            if entry { "public" } else { "private" },
            symbol(&c.name),
            arg_decls.join(", "),
            root.ty
        );
        if !attrs.is_empty() {
            let _ = write!(out, " attributes {{{}}}", attrs.join(", "));
        }
        out.push_str(" {\n");
        out.push_str(&body);
        let _ = writeln!(
            out,
            "    \"func.return\"({}) : ({}) -> ()\n  }}",
            root.name, root.ty
        );
        Ok(())
    }

    /// One instruction of the faithful form: one value, of the instruction's type.
    fn faithful_instruction(
        &mut self,
        c: &Computation,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let one = |vals: Vec<Val>| -> Result<Val, LowerError> {
            match <[Val; 1]>::try_from(vals) {
                Ok([v]) => Ok(v),
                Err(_) => invalid("expected one value"),
            }
        };
        match instr.opcode {
            Opcode::Tuple => {
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, "stablehlo.tuple", operands, &[], &[], &[ty]))
            }
            Opcode::GetTupleElement if operands.len() == 1 => {
                let index = a
                    .index
                    .ok_or_else(|| LowerError::Invalid("missing index".into()))?;
                let ty = mlir_type(&instr.shape)?;
                let attrs = [format!("index = {index} : i32")];
                one(self.op(
                    out,
                    indent,
                    "stablehlo.get_tuple_element",
                    operands,
                    &[],
                    &attrs,
                    &[ty],
                ))
            }
            Opcode::Fusion | Opcode::Call => {
                let f = if instr.opcode == Opcode::Fusion {
                    a.calls.first().copied()
                } else {
                    a.to_apply
                }
                .ok_or_else(|| LowerError::Invalid("missing called computation".into()))?;
                let callee = self.comp_checked(f)?;
                let mut attrs = vec![format!("callee = {}", symbol(&callee.name))];
                if instr.opcode == Opcode::Fusion {
                    let kind = a.fusion_kind.unwrap_or(crate::hlo::FusionKind::Loop);
                    attrs.push(format!("xla.fusion_kind = {}", quote(kind.name())));
                }
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, "func.call", operands, &[], &attrs, &[ty]))
            }
            // HLO ops StableHLO has no op for: the equivalent reshape, marked
            Opcode::Copy if operands.len() == 1 && !operands[0].ty.starts_with("tuple") => {
                let attrs = ["xla.hlo_opcode = \"copy\"".to_string()];
                let ty = mlir_type(&instr.shape)?;
                one(self.op(
                    out,
                    indent,
                    "stablehlo.reshape",
                    operands,
                    &[],
                    &attrs,
                    &[ty],
                ))
            }
            Opcode::Copy if operands.len() == 1 => Ok(operands[0].clone()),
            Opcode::Conditional
                if !a.branch_computations.is_empty()
                    && operands.len() == a.branch_computations.len() + 1 =>
            {
                self.faithful_conditional(instr, operands, out, indent)
            }
            // complex parts (the compile form refuses complex values)
            Opcode::Real | Opcode::Imag | Opcode::Complex => {
                let name = match instr.opcode {
                    Opcode::Real => "stablehlo.real",
                    Opcode::Imag => "stablehlo.imag",
                    _ => "stablehlo.complex",
                };
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, name, operands, &[], &[], &[ty]))
            }
            // parse-only ops with attributes (the compile form has no lowering for them)
            Opcode::Fft | Opcode::TriangularSolve | Opcode::RngBitGenerator => {
                self.faithful_parse_only(instr, operands, out, indent)
            }
            Opcode::CustomCall => {
                let target = a
                    .custom_call_target
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing custom_call_target".into()))?;
                let attrs = [format!("call_target_name = {}", quote(target))];
                let result_types: Vec<String> = match &instr.shape {
                    Shape::Tuple(items) => items.iter().map(mlir_type).collect::<Result<_, _>>()?,
                    s => vec![mlir_type(s)?],
                };
                let vals = self.op(
                    out,
                    indent,
                    "stablehlo.custom_call",
                    operands,
                    &[],
                    &attrs,
                    &result_types,
                );
                if instr.shape.as_tuple().is_some() {
                    let ty = mlir_type(&instr.shape)?;
                    return one(self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]));
                }
                one(vals)
            }
            Opcode::Bitcast if operands.len() == 1 => {
                let start = out.len();
                let v = self.instruction(
                    c,
                    instr,
                    &[std::slice::from_ref(&operands[0])],
                    &[],
                    out,
                    indent,
                )?;
                let single_reshape = out[start..].lines().count() == 1
                    && out[start..].contains("\"stablehlo.reshape\"");
                if single_reshape {
                    if let Some(at) = out[start..].rfind(" : (").map(|k| start + k) {
                        out.insert_str(at, " {xla.hlo_opcode = \"bitcast\"}");
                    }
                }
                one(v)
            }
            _ => {
                // the normal form's lowering, on array leaves
                let mut leaves_of = Vec::new();
                for (k, v) in operands.iter().enumerate() {
                    let shape = operand_shape(c, instr, k)?;
                    leaves_of.push(self.unpack(v, &shape, out, indent)?);
                }
                let slices: Vec<&[Val]> = leaves_of.iter().map(Vec::as_slice).collect();
                let vals = self.instruction(c, instr, &slices, &[], out, indent)?;
                let mut it = vals.into_iter();
                let v = self.pack(&mut it, &instr.shape, out, indent)?;
                if it.next().is_some() {
                    return invalid("more values than the shape has leaves");
                }
                Ok(v)
            }
        }
    }

    /// fft, triangular-solve and rng-bit-generator with their attributes
    /// (`#stablehlo<fft_type ..>`, `#stablehlo<transpose ..>`,
    /// `#stablehlo<rng_algorithm ..>`); rng-bit-generator's two results are
    /// put together by a `stablehlo.tuple`, as other multi-result ops'.
    fn faithful_parse_only(
        &mut self,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let missing = |what: &str| LowerError::Invalid(format!("missing {what}"));
        if operands.iter().any(|v| !v.ty.starts_with("tensor<")) {
            return invalid("a tuple operand where an array is expected");
        }
        let one = |vals: Vec<Val>| -> Result<Val, LowerError> {
            match <[Val; 1]>::try_from(vals) {
                Ok([v]) => Ok(v),
                Err(_) => invalid("expected one value"),
            }
        };
        let (name, attrs) = match instr.opcode {
            Opcode::Fft => {
                let t = a.fft_type.ok_or_else(|| missing("fft_type"))?;
                let len = a.fft_length.as_ref().ok_or_else(|| missing("fft_length"))?;
                (
                    "stablehlo.fft",
                    vec![
                        format!("fft_type = #stablehlo<fft_type {}>", t.name()),
                        format!("fft_length = {}", array_attr(len)),
                    ],
                )
            }
            Opcode::TriangularSolve => {
                let t = a
                    .triangular_solve
                    .as_ref()
                    .ok_or_else(|| missing("triangular-solve options"))?;
                let x = t.transpose_a.ok_or_else(|| missing("transpose_a"))?;
                (
                    "stablehlo.triangular_solve",
                    vec![
                        format!("left_side = {}", t.left_side),
                        format!("lower = {}", t.lower),
                        format!("transpose_a = #stablehlo<transpose {}>", x.name()),
                        format!("unit_diagonal = {}", t.unit_diagonal),
                    ],
                )
            }
            Opcode::RngBitGenerator => {
                let r = a.rng_algorithm.ok_or_else(|| missing("algorithm"))?;
                let (state, output) = match instr.shape.as_tuple() {
                    Some([s, o]) if s.as_array().is_some() && o.as_array().is_some() => (s, o),
                    _ => return invalid("rng-bit-generator's shape is (state, output)"),
                };
                let attrs = [format!(
                    "rng_algorithm = #stablehlo<rng_algorithm {}>",
                    stablehlo_rng_algorithm(r)
                )];
                let types = [mlir_type(state)?, mlir_type(output)?];
                let vals = self.op(
                    out,
                    indent,
                    "stablehlo.rng_bit_generator",
                    operands,
                    &[],
                    &attrs,
                    &types,
                );
                let ty = mlir_type(&instr.shape)?;
                return one(self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]));
            }
            _ => return invalid("not fft, triangular-solve or rng-bit-generator"),
        };
        let ty = mlir_type(&instr.shape)?;
        one(self.op(out, indent, name, operands, &[], &attrs, &[ty]))
    }

    /// A conditional whose regions each call their branch's function on
    /// the branch's operand (from the enclosing scope).
    fn faithful_conditional(
        &mut self,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let selector = &operands[0];
        let is_pred = selector.ty == "tensor<i1>";
        if is_pred && a.branch_computations.len() != 2 {
            return invalid("a pred conditional needs two branches");
        }
        let result_shapes: Vec<&Shape> = match &instr.shape {
            Shape::Tuple(items) => items.iter().collect(),
            s => vec![s],
        };
        let result_types: Vec<String> = result_shapes
            .iter()
            .map(|s| mlir_type(s))
            .collect::<Result<_, _>>()?;
        let mut regions = Vec::new();
        for (k, &branch) in a.branch_computations.iter().enumerate() {
            let c = self.comp_checked(branch)?;
            let mut body = String::new();
            let callee = format!("callee = {}", symbol(&c.name));
            let r = self.op(
                &mut body,
                indent + 2,
                "func.call",
                std::slice::from_ref(&operands[k + 1]),
                &[],
                &[callee],
                &[mlir_type(&instr.shape)?],
            );
            let results = if instr.shape.as_tuple().is_some() {
                let mut rs = Vec::new();
                for (i, t) in result_types.iter().enumerate() {
                    let attrs = [format!("index = {i} : i32")];
                    rs.extend(self.op(
                        &mut body,
                        indent + 2,
                        "stablehlo.get_tuple_element",
                        &r,
                        &[],
                        &attrs,
                        std::slice::from_ref(t),
                    ));
                }
                rs
            } else {
                r
            };
            let mut s = String::from("{\n");
            s.push_str(&body);
            let _ = writeln!(
                s,
                "{}\"stablehlo.return\"({}) : ({}) -> ()",
                pad(indent + 2),
                names(&results),
                types(&results)
            );
            let _ = write!(s, "{}}}", pad(indent + 1));
            regions.push(s);
        }
        let name = if is_pred {
            "stablehlo.if"
        } else {
            "stablehlo.case"
        };
        let vals = self.op(
            out,
            indent,
            name,
            std::slice::from_ref(selector),
            &regions,
            &[],
            &result_types,
        );
        if instr.shape.as_tuple().is_some() {
            let ty = mlir_type(&instr.shape)?;
            let v = self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]);
            return v
                .into_iter()
                .next()
                .ok_or_else(|| LowerError::Invalid("tuple op without a result".into()));
        }
        vals.into_iter()
            .next()
            .ok_or_else(|| LowerError::Invalid("conditional without a result".into()))
    }

    /// The array leaves of `v` (of HLO shape `s`), taken apart with `get_tuple_element`.
    fn unpack(
        &mut self,
        v: &Val,
        s: &Shape,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        match s {
            Shape::Tuple(items) => {
                let mut leaves = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let attrs = [format!("index = {k} : i32")];
                    let e = self.op(
                        out,
                        indent,
                        "stablehlo.get_tuple_element",
                        std::slice::from_ref(v),
                        &[],
                        &attrs,
                        &[mlir_type(item)?],
                    );
                    for x in &e {
                        leaves.extend(self.unpack(x, item, out, indent)?);
                    }
                }
                Ok(leaves)
            }
            _ => Ok(vec![v.clone()]),
        }
    }

    /// One value of HLO shape `s` from array leaves, tuples put together with `stablehlo.tuple`.
    fn pack(
        &mut self,
        leaves: &mut std::vec::IntoIter<Val>,
        s: &Shape,
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        match s {
            Shape::Tuple(items) => {
                let mut elems = Vec::new();
                for item in items {
                    elems.push(self.pack(leaves, item, out, indent)?);
                }
                let ty = mlir_type(s)?;
                let v = self.op(out, indent, "stablehlo.tuple", &elems, &[], &[], &[ty]);
                v.into_iter()
                    .next()
                    .ok_or_else(|| LowerError::Invalid("tuple op without a result".into()))
            }
            _ => leaves.next().ok_or_else(|| {
                LowerError::Invalid("fewer values than the shape has leaves".into())
            }),
        }
    }

    /// A region that forwards its arguments to `comp`'s function (the
    /// reader takes such a region as that computation); None where `comp`
    /// has a tuple parameter or a nested tuple result.
    fn forwarding_region(
        &mut self,
        comp: CompId,
        indent: usize,
    ) -> Result<Option<String>, LowerError> {
        let c = self.comp_checked(comp)?;
        let mut args = Vec::new();
        // one flat tuple parameter (a while's state): the block takes its
        // elements and puts the tuple together for the call
        let mut packed: Option<String> = None;
        let params = c.parameters();
        let param_shapes: Vec<&Shape> = params.iter().map(|&p| &c.instr(p).shape).collect();
        let arrays: Vec<&ArrayShape> = match param_shapes.as_slice() {
            [Shape::Tuple(items)] => {
                packed = Some(mlir_type(param_shapes[0])?);
                match items
                    .iter()
                    .map(Shape::as_array)
                    .collect::<Option<Vec<_>>>()
                {
                    Some(a) => a,
                    None => return Ok(None),
                }
            }
            _ => match param_shapes
                .iter()
                .map(|s| s.as_array())
                .collect::<Option<Vec<_>>>()
            {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        for s in arrays {
            let v = Val {
                name: format!("%b{}", self.next),
                ty: tensor_type(s)?,
            };
            self.next += 1;
            args.push(v);
        }
        let Some(root) = c.instructions.get(c.root.index()).map(|r| &r.shape) else {
            return invalid(format!("root of {} is undefined", c.name));
        };
        let parts: Vec<&ArrayShape> = match root {
            Shape::Array(a) => vec![a],
            Shape::Tuple(items) => match items
                .iter()
                .map(Shape::as_array)
                .collect::<Option<Vec<_>>>()
            {
                Some(p) => p,
                None => return Ok(None),
            },
            Shape::Token => return Ok(None),
        };
        let mut body = String::new();
        let callee = format!("callee = {}", symbol(&c.name));
        let call_args = match packed {
            Some(ty) => self.op(
                &mut body,
                indent + 1,
                "stablehlo.tuple",
                &args,
                &[],
                &[],
                &[ty],
            ),
            None => args.clone(),
        };
        let r = self.op(
            &mut body,
            indent + 1,
            "func.call",
            &call_args,
            &[],
            &[callee],
            &[mlir_type(root)?],
        );
        let results = if root.as_tuple().is_some() {
            let mut rs = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                let attrs = [format!("index = {k} : i32")];
                rs.extend(self.op(
                    &mut body,
                    indent + 1,
                    "stablehlo.get_tuple_element",
                    &r,
                    &[],
                    &attrs,
                    &[tensor_type(p)?],
                ));
            }
            rs
        } else {
            r
        };
        let decls: Vec<String> = args
            .iter()
            .map(|v| format!("{}: {}", v.name, v.ty))
            .collect();
        let s = region(indent, &decls, &body, &results);
        Ok(Some(s))
    }
}

/// A region in the generic form: its block arguments, its body and the
/// `stablehlo.return` of `results`.
fn region(indent: usize, block_args: &[String], body: &str, results: &[Val]) -> String {
    let mut s = String::from("{\n");
    let _ = writeln!(s, "{}^bb0({}):", pad(indent), block_args.join(", "));
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
