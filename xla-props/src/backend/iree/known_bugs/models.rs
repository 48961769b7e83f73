//! The value models of the IREE known bugs: each rewrites the case's module
//! (`check::replace_with_model`) so that the reference computes what IREE
//! computes, as measured.

use super::{F8_BINARY, FLOATS};
use crate::check::{is_folded_constant, replace_with_model, replace_with_model_of, type_text};
use crate::hlo::{ArrayShape, ElementType, Instruction, Module, Opcode};

/// `power(x, y)` as IREE computes it: `exp(y * log(x))` evaluated in the
/// op's own type, each step rounded to it (f8: `pow(3, 3)` = 32, f16:
/// `pow(0.5, 2)` = 0.2499, as measured).
pub(super) fn power_exp_log(m: &Module) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = array_of(i, Opcode::Power, &FLOATS)?;
        let t = type_text(&a);
        // subnormal operands are flushed to the zero of their sign first
        // (bf16, f32, f64: pow(2^-149, -0) is NaN, as exp(-0 * log(0))); not
        // f16, computed in f32 where its subnormals are normal: pow(-2^-24,
        // 1) is NaN (a negative base), pow(2^-24, -0) is 1 (measured). An
        // exponent that is a broadcast scalar constant is not flushed:
        // pow(x, broadcast(2^-149)) is 0 for a flushed base x (exp(2^-149 *
        // -inf)), in or out of a fusion, where a constant array or a
        // parameter exponent of 2^-149 gives NaN (measured on f32,
        // docs/findings.md)
        let flush = a.dtype != ElementType::F16
            && crate::backend::iree::numerics::IREE_CPU_FLUSHED.contains(&a.dtype);
        let flush_y = flush && !i.operands.get(1).is_some_and(|&y| is_splat_constant(c, y));
        let mn = a.dtype.float_format()?.min_normal();
        let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
        let p = with_dtype(&a, ElementType::Pred);
        let flushed = |v: &str, on: bool| {
            if on {
                format!(
                    "a{v} = {t} abs({v}0)\n  s{v} = {p} compare(a{v}, mnb), direction=LT\n  \
                     z{v} = {t} multiply({v}0, zb)\n  {v} = {t} select(s{v}, z{v}, {v}0)\n  "
                )
            } else {
                format!("{v} = {t} copy({v}0)\n  ")
            }
        };
        let constants = if flush {
            format!(
                "mn = f64[] constant({mn:e})\n  mnt = {ts} convert(mn)\n  mnb = {t} broadcast(mnt), dimensions={{}}\n  \
                 z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  "
            )
        } else {
            String::new()
        };
        let text = format!(
            "HloModule model\n\nENTRY model {{\n  x0 = {t} parameter(0)\n  y0 = {t} parameter(1)\n  \
             {constants}{}{}l = {t} log(x)\n  e = {t} multiply(y, l)\n  ROOT r = {t} exponential(e)\n}}\n",
            flushed("x", flush),
            flushed("y", flush_y)
        );
        Some((text, i.operands.clone()))
    })
}

/// True when `id` (in `c`) is a broadcast (or a reshape) of a scalar
/// constant: one value splatted over the array.
fn is_splat_constant(c: &crate::hlo::Computation, id: crate::hlo::InstrId) -> bool {
    c.instructions
        .get(id.index())
        .is_some_and(|i| match i.opcode {
            Opcode::Constant => i.shape.as_array().is_some_and(|a| a.dims.is_empty()),
            Opcode::Broadcast | Opcode::Reshape => {
                i.operands.first().is_some_and(|&o| is_splat_constant(c, o))
            }
            _ => false,
        })
}

/// `atan2(y, x)` as IREE computes it: in f32 (f64 for f64) with f32
/// subnormals flushed, `atan(y / x)` turned by ±pi unless `x > 0`, `x == 0`
/// special-cased: NaN where `y / x` is NaN or both operands are zero after
/// flushing (bf16 and f32 subnormals are zero, f16 and f8 ones are normal
/// f32 numbers: f16 `atan2(2^-24, 2^-24)` = pi/4, measured); `+pi` for
/// `x < 0` and `y / x` zero (IEEE: `-pi` for a negative or `-0` `y`); else
/// the exact `atan2` in the op's type.
pub(super) fn atan2_zero_inf(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Atan2, &FLOATS)?;
        let t = type_text(&a);
        let p = with_dtype(&a, ElementType::Pred);
        let wide = if a.dtype == ElementType::F64 {
            ElementType::F64
        } else {
            ElementType::F32
        };
        let (c, cs) = (
            with_dtype(&a, wide),
            type_text(&ArrayShape::new(wide, vec![])),
        );
        let min_normal = match wide {
            ElementType::F32 => format!("{:e}", f32::MIN_POSITIVE),
            _ => "0".to_string(),
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  y0 = {t} parameter(0)\n  x0 = {t} parameter(1)\n  \
             y = {c} convert(y0)\n  x = {c} convert(x0)\n  \
             q = {c} divide(y, x)\n  qnan = {p} compare(q, q), direction=NE\n  \
             z = f64[] constant(0)\n  zt = {cs} convert(z)\n  zb = {c} broadcast(zt), dimensions={{}}\n  \
             mn = f64[] constant({min_normal})\n  mnt = {cs} convert(mn)\n  mnb = {c} broadcast(mnt), dimensions={{}}\n  \
             ay = {c} abs(y)\n  ax = {c} abs(x)\n  yz0 = {p} compare(ay, mnb), direction=LT\n  \
             yz1 = {p} compare(ay, zb), direction=EQ\n  yz = {p} or(yz0, yz1)\n  \
             xz0 = {p} compare(ax, mnb), direction=LT\n  xz1 = {p} compare(ax, zb), direction=EQ\n  \
             xz = {p} or(xz0, xz1)\n  both = {p} and(yz, xz)\n  bad = {p} or(qnan, both)\n  \
             xneg = {p} compare(x, zb), direction=LT\n  xnz = {p} not(xz)\n  xn = {p} and(xneg, xnz)\n  \
             q00 = {p} compare(q, zb), direction=EQ\n  aq = {c} abs(q)\n  \
             q01 = {p} compare(aq, mnb), direction=LT\n  q0 = {p} or(q00, q01)\n  q0y = {p} or(q0, yz)\n  flip = {p} and(xn, q0y)\n  \
             pi = f64[] constant(3.141592653589793)\n  pit = {cs} convert(pi)\n  pib = {c} broadcast(pit), dimensions={{}}\n  \
             pin = {t} convert(pib)\n  \
             nan = f64[] constant(nan)\n  nant = {cs} convert(nan)\n  nanb = {c} broadcast(nant), dimensions={{}}\n  \
             nann = {t} convert(nanb)\n  \
             at = {t} atan2(y0, x0)\n  r0 = {t} select(flip, pin, at)\n  \
             ROOT r = {t} select(bad, nann, r0)\n}}\n"
        ))
    })
}

/// f8 results of `convert` (from f32 or bf16), `exponential-minus-one`,
/// `log-plus-one`, `tanh`, `sine`, `tan` (the exact value, in f64) and of
/// the binary arithmetic [`F8_BINARY`] (computed and rounded in f32): that
/// value rounded once, except that one in `[lo, min_normal)` is a signed
/// zero.
pub(super) fn f8_round_up_to_min_normal(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F8E4M3Fn, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = array_of(i, i.opcode, &[F8E4M3Fn, F8E5M2])?;
        if matches!(i.opcode, Opcode::Dot | Opcode::Convolution) {
            return f8_contraction_band(m, i, &a);
        }
        let (lo, min_normal) = match a.dtype {
            F8E4M3Fn => ("0.0146484375", "0.015625"),
            _ => ("5.340576171875e-05", "6.103515625e-05"),
        };
        let src = operand_dtype(m, i)?;
        let op = match i.opcode {
            Opcode::Convert if [F32, Bf16].contains(&src) => None,
            Opcode::ExponentialMinusOne
            | Opcode::LogPlusOne
            | Opcode::Tanh
            | Opcode::Sine
            | Opcode::Tan
                if src == a.dtype =>
            {
                Some(i.opcode)
            }
            op if F8_BINARY.contains(&op) && src == a.dtype => Some(op),
            _ => return None,
        };
        let (t, x) = (type_text(&a), with_dtype(&a, src));
        let d = with_dtype(&a, ElementType::F64);
        let p = with_dtype(&a, ElementType::Pred);
        let binary = i.operands.len() == 2;
        let w = match op {
            // computed in f32 and rounded there first, as IREE does (an
            // f8e5m2 atan2 of 3.5 * 2^-16 - tiny is 3.5 * 2^-16 in f32, a tie
            // that then rounds up to the smallest normal: 0)
            Some(op) if binary => {
                let f = with_dtype(&a, F32);
                format!(
                    "y = {x} parameter(1)\n  xf = {f} convert(x)\n  yf = {f} convert(y)\n  \
                     wf = {f} {}(xf, yf)\n  w = {d} convert(wf)",
                    op.name()
                )
            }
            Some(op) => format!("w = {d} {}(xd)", op.name()),
            None => format!("w = {d} copy(xd)"),
        };
        // tan is sin / cos in the op's type: the band is the sine's
        // (tan(2^-6) = 0 in f8e4m3fn, whose exact value is above 2^-6)
        let band_of = if op == Some(Opcode::Tan) {
            format!("bw = {d} sine(xd)")
        } else {
            format!("bw = {d} copy(w)")
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {x} parameter(0)\n  xd = {d} convert(x)\n  {w}\n  \
             {band_of}\n  aw = {d} abs(bw)\n  lo = f64[] constant({lo})\n  lob = {d} broadcast(lo), dimensions={{}}\n  \
             mn = f64[] constant({min_normal})\n  mnb = {d} broadcast(mn), dimensions={{}}\n  \
             ge = {p} compare(aw, lob), direction=GE\n  lt = {p} compare(aw, mnb), direction=LT\n  \
             band = {p} and(ge, lt)\n  z = f64[] constant(0)\n  zb = {d} broadcast(z), dimensions={{}}\n  \
             neg = {p} compare(w, zb), direction=LT\n  nz = f64[] constant(-0)\n  nzb = {d} broadcast(nz), dimensions={{}}\n  \
             sz = {d} select(neg, nzb, zb)\n  zt = {t} convert(sz)\n  r0 = {t} convert(w)\n  \
             ROOT r = {t} select(band, zt, r0)\n}}\n"
        ))
    })
}

/// The model of an f8 `dot` or `convolution` (`i`, of result `a`, in `m`)
/// under the round-up bug: the op on the operands in f64 (exact), rounded
/// once, except that a result in the band below the smallest normal is a
/// signed zero (IREE sums in f32 and truncates: measured on the suite's
/// `k1` convolutions, `0.0156` for an exact `2^-6`). Built with the module
/// builder, as the op's attributes come along.
pub(super) fn f8_contraction_band(m: &Module, i: &Instruction, a: &ArrayShape) -> Option<String> {
    use crate::hlo::{ComparisonDirection as Dir, ComparisonType, ModuleBuilder, Shape};
    let (lo, min_normal) = match a.dtype {
        ElementType::F8E4M3Fn => (0.0146484375, 0.015625),
        _ => (5.340576171875e-05, 6.103515625e-05),
    };
    let shapes = operand_shapes(m, i)?;
    if shapes.len() != 2 || shapes.iter().any(|s| s.dtype != a.dtype) {
        return None;
    }
    let model = ModuleBuilder::new("model").build("model", |b| {
        let x = b.parameter(Shape::array(a.dtype, shapes[0].dims.clone()))?;
        let y = b.parameter(Shape::array(a.dtype, shapes[1].dims.clone()))?;
        let (xd, yd) = (
            b.convert(x, ElementType::F64)?,
            b.convert(y, ElementType::F64)?,
        );
        let w = b.add(i.opcode, &[xd, yd], i.attrs.clone(), None)?;
        let mut splat = |v: f64| {
            let c = b.constant_f64(ElementType::F64, &[], &[v])?;
            b.broadcast(c, &a.dims, &[])
        };
        let (lob, mnb, zb, nzb) = (splat(lo)?, splat(min_normal)?, splat(0.0)?, splat(-0.0)?);
        let cmp = |b: &mut crate::hlo::ComputationBuilder<'_>, d, p, q| {
            b.compare(d, ComparisonType::Float, p, q)
        };
        let aw = b.unary(Opcode::Abs, w)?;
        let ge = cmp(b, Dir::Ge, aw, lob)?;
        let lt = cmp(b, Dir::Lt, aw, mnb)?;
        let band = b.binary(Opcode::And, ge, lt)?;
        let neg = cmp(b, Dir::Lt, w, zb)?;
        let signed_zero = b.select(neg, nzb, zb)?;
        let v = b.select(band, signed_zero, w)?;
        b.convert(v, a.dtype)
    });
    Some(crate::hlo::print_module(&model.ok()?))
}

/// f64 `log-plus-one(x)` as IREE computes it: `log(1 + x)`.
pub(super) fn f64_log1p(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::LogPlusOne, &[ElementType::F64])?;
        let t = type_text(&a);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  \
             one = f64[] constant(1)\n  oneb = {t} broadcast(one), dimensions={{}}\n  \
             s = {t} add(x, oneb)\n  ROOT r = {t} log(s)\n}}\n"
        ))
    })
}

/// f64 `exponential-minus-one(x)` as IREE computes it: `exp(x) - 1`.
pub(super) fn f64_expm1(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::ExponentialMinusOne, &[ElementType::F64])?;
        let t = type_text(&a);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  e = {t} exponential(x)\n  \
             one = f64[] constant(1)\n  oneb = {t} broadcast(one), dimensions={{}}\n  \
             ROOT r = {t} subtract(e, oneb)\n}}\n"
        ))
    })
}

/// `sine` and `tan`: a zero input gives +0.
pub(super) fn sine_of_minus_zero(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F8E4M3Fn, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = [Opcode::Sine, Opcode::Tan]
            .iter()
            .find_map(|&op| array_of(i, op, &[F8E4M3Fn, F8E5M2, Bf16, F32]))?;
        let (t, p) = (type_text(&a), with_dtype(&a, ElementType::Pred));
        let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  \
             z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  \
             zero = {p} compare(x, zb), direction=EQ\n  y = {t} {}(x)\n  \
             ROOT r = {t} select(zero, zb, y)\n}}\n",
            i.opcode.name()
        ))
    })
}

/// f8e4m3fn `logistic`: NaN where `exp(-x)` rounded to f8e4m3fn is NaN
/// (`0xff`, -NaN, counts as -480), else the exact result.
pub(super) fn f8e4m3fn_logistic_nan(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Logistic, &[ElementType::F8E4M3Fn])?;
        Some(minus_nan_as_480(&a, 1, |t, d, p| {
            format!(
                "  nv = {d} negate(v0)\n  e = {d} exponential(nv)\n  \
                 e8 = {t} convert(e)\n  over = {p} compare(e8, e8), direction=NE\n  \
                 nan = f64[] constant(nan)\n  nanb = {d} broadcast(nan), dimensions={{}}\n  \
                 l = {d} logistic(v0)\n  w = {d} select(over, nanb, l)\n  ROOT r = {t} convert(w)\n"
            )
        }))
    })
}

/// f8e4m3fn transcendentals and binary arithmetic ([`F8_BINARY`]): `0xff`
/// (-NaN) counts as -480; the function is computed in f64 and rounded once
/// (other elements: the exact result).
pub(super) fn f8e4m3fn_minus_nan(m: &Module) -> Option<Module> {
    use Opcode::*;
    replace_with_model(m, &|i| {
        let a = [
            Exponential,
            ExponentialMinusOne,
            Sine,
            Cosine,
            Tan,
            Tanh,
            Cbrt,
        ]
        .iter()
        .chain(&F8_BINARY)
        .find_map(|&op| array_of(i, op, &[ElementType::F8E4M3Fn]))?;
        let arity = i.operands.len();
        let args: Vec<String> = (0..arity).map(|k| format!("v{k}")).collect();
        let op = i.opcode.name();
        Some(minus_nan_as_480(&a, arity, |t, d, _| {
            format!(
                "  w = {d} {op}({})\n  ROOT r = {t} convert(w)\n",
                args.join(", ")
            )
        }))
    })
}

/// A model module over `arity` f8e4m3fn arrays of shape `a`: `v0`, `v1`,
/// .. are the inputs in f64 with `0xff` (-NaN) read as -480; `body` (given
/// the input, f64 and pred type texts) computes the root from them.
pub(super) fn minus_nan_as_480(
    a: &ArrayShape,
    arity: usize,
    body: impl FnOnce(&str, &str, &str) -> String,
) -> String {
    let t = type_text(a);
    let (d, u, p) = (
        with_dtype(a, ElementType::F64),
        with_dtype(a, ElementType::U8),
        with_dtype(a, ElementType::Pred),
    );
    let mut text = format!(
        "HloModule model\n\nENTRY model {{\n  ff = u8[] constant(255)\n  \
         ffb = {u} broadcast(ff), dimensions={{}}\n  c = f64[] constant(-480)\n  \
         cb = {d} broadcast(c), dimensions={{}}\n"
    );
    for k in 0..arity {
        text += &format!(
            "  x{k} = {t} parameter({k})\n  b{k} = {u} bitcast-convert(x{k})\n  \
             neg{k} = {p} compare(b{k}, ffb), direction=EQ\n  xd{k} = {d} convert(x{k})\n  \
             v{k} = {d} select(neg{k}, cb, xd{k})\n"
        );
    }
    text + &body(&t, &d, &p) + "}\n"
}

pub(super) fn array_of(i: &Instruction, op: Opcode, dtypes: &[ElementType]) -> Option<ArrayShape> {
    let a = i.shape.as_array()?;
    (i.opcode == op && dtypes.contains(&a.dtype)).then(|| a.clone())
}

pub(super) fn with_dtype(a: &ArrayShape, t: ElementType) -> String {
    type_text(&ArrayShape::new(t, a.dims.clone()))
}

/// `cbrt`: an infinite input gives NaN, others `cbrt`.
pub(super) fn cbrt_inf(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F16, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Cbrt, &[F16, Bf16, F32, F8E5M2])?;
        let t = type_text(&a);
        let f = with_dtype(&a, F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             ax = {f} abs(xf)\n  inf = f32[] constant(inf)\n  infb = {f} broadcast(inf), dimensions={{}}\n  \
             isinf = {p} compare(ax, infb), direction=EQ\n  c = {t} cbrt(x)\n  \
             nan = f32[] constant(nan)\n  nanb = {f} broadcast(nan), dimensions={{}}\n  \
             nant = {t} convert(nanb)\n  ROOT r = {t} select(isinf, nant, c)\n}}\n"
        ))
    })
}

/// f8e4m3fn `is-finite`: false everywhere.
pub(super) fn f8e4m3fn_is_finite(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::IsFinite, &[ElementType::Pred])?;
        (operand_dtype(m, i)? == ElementType::F8E4M3Fn).then(|| {
            format!(
                "HloModule model\n\nENTRY model {{\n  x = {} parameter(0)\n  f = pred[] constant(false)\n  \
                 ROOT r = {} broadcast(f), dimensions={{}}\n}}\n",
                with_dtype(&a, ElementType::F8E4M3Fn),
                type_text(&a)
            )
        })
    })
}

/// The element type of `i`'s first operand (`i` an instruction of `m`).
pub(super) fn operand_dtype(m: &Module, i: &Instruction) -> Option<ElementType> {
    operand_shapes(m, i)?.first().map(|a| a.dtype)
}

/// The array shapes of `i`'s operands (`i` an instruction of `m`); None
/// when one is not an array.
pub(super) fn operand_shapes(m: &Module, i: &Instruction) -> Option<Vec<ArrayShape>> {
    let c = m
        .computations
        .iter()
        .find(|c| c.instructions.iter().any(|x| std::ptr::eq(x, i)))?;
    i.operands
        .iter()
        .map(|o| c.instructions.get(o.index())?.shape.as_array().cloned())
        .collect()
}

/// `dynamic-slice` and `dynamic-update-slice` with s8 or s16 start
/// indices: each start is read as unsigned (a negative start becomes
/// large and clamps to the last window instead of the first).
pub(super) fn narrow_start_unsigned(m: &Module) -> Option<Module> {
    start_index_reread(m, &|t| match t {
        ElementType::S8 => Some(("u8", "s32")),
        ElementType::S16 => Some(("u16", "s32")),
        _ => None,
    })
}

/// `dynamic-slice` / `dynamic-update-slice`: a u64 start index is read as
/// s64 (2^64 - 1 is -1, clamped to the first window).
pub(super) fn u64_start_signed(m: &Module) -> Option<Module> {
    start_index_reread(m, &|t| (t == ElementType::U64).then_some(("s64", "s64")))
}

/// The dynamic slices whose start indices `reread` picks (the type their
/// bits are read as, and the index type that value is converted to)
/// replaced by models reading them so.
fn start_index_reread(
    m: &Module,
    reread: &dyn Fn(ElementType) -> Option<(&'static str, &'static str)>,
) -> Option<Module> {
    replace_with_model(m, &|i| {
        let first_index = match i.opcode {
            Opcode::DynamicSlice => 1,
            Opcode::DynamicUpdateSlice => 2,
            _ => return None,
        };
        let shapes = operand_shapes(m, i)?;
        if !shapes[first_index..]
            .iter()
            .any(|a| reread(a.dtype).is_some())
        {
            return None;
        }
        let mut body = String::new();
        let mut args = Vec::new();
        for (k, a) in shapes.iter().enumerate() {
            body += &format!("  p{k} = {} parameter({k})\n", type_text(a));
            let Some((u, w)) = reread(a.dtype).filter(|_| k >= first_index) else {
                args.push(format!("p{k}"));
                continue;
            };
            body +=
                &format!("  u{k} = {u}[] bitcast-convert(p{k})\n  w{k} = {w}[] convert(u{k})\n");
            args.push(format!("w{k}"));
        }
        let sizes = match &i.attrs.dynamic_slice_sizes {
            Some(v) if i.opcode == Opcode::DynamicSlice => format!(
                ", dynamic_slice_sizes={{{}}}",
                v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            ),
            _ => String::new(),
        };
        Some(format!(
            "HloModule model\n\nENTRY model {{\n{body}  ROOT r = {} {}({}){sizes}\n}}\n",
            type_text(i.shape.as_array()?),
            i.opcode.name(),
            args.join(", ")
        ))
    })
}

/// bf16/f32 `floor`: a negative subnormal input is returned as it is.
pub(super) fn floor_bf16_subnormal(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Floor, &[ElementType::Bf16, ElementType::F32])?;
        let t = type_text(&a);
        let f = with_dtype(&a, ElementType::F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             z = f32[] constant(0)\n  zb = {f} broadcast(z), dimensions={{}}\n  \
             mn = f32[] constant(-1.1754943508222875e-38)\n  mnb = {f} broadcast(mn), dimensions={{}}\n  \
             lo = {p} compare(xf, mnb), direction=GT\n  hi = {p} compare(xf, zb), direction=LT\n  \
             sub = {p} and(lo, hi)\n  fl = {t} floor(x)\n  ROOT r = {t} select(sub, x, fl)\n}}\n"
        ))
    })
}

/// A `convert` from bf16 to f16, f32 or f64 whose operand is a `convert` to
/// bf16 from f16, f32 or f64: the bf16 rounding is dropped, the result is
/// the source converted directly (an f64 source through f32, the step IREE
/// narrows f64 to bf16 by), at any shape when f16 is the source or the
/// destination, else on one-element values only. Measured: rank-0, `[1]`
/// and `[1,1]` shapes in the entry computation, a fusion and a reduce body;
/// 4,096 random values per pair at `[4096]` (f16 pairs elided, f32/f64
/// pairs rounded right).
pub(super) fn bf16_round_trip_elided(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F16, F32, F64};
    replace_with_model_of(m, &|c, i| {
        let a = array_of(i, Opcode::Convert, &[F16, F32, F64])?;
        let n = c.instructions.get(i.operands.first()?.index())?;
        if n.opcode != Opcode::Convert || n.shape.as_array()?.dtype != Bf16 {
            return None;
        }
        let x = *n.operands.first()?;
        let src = c.instructions.get(x.index())?.shape.as_array()?.dtype;
        let f16_end = src == F16 || a.dtype == F16;
        if ![F16, F32, F64].contains(&src) || !(f16_end || a.element_count() == Some(1)) {
            return None;
        }
        let (t, s, f) = (type_text(&a), with_dtype(&a, src), with_dtype(&a, F32));
        let narrow = match src {
            F64 => format!("v = {f} convert(x)"),
            _ => format!("v = {s} copy(x)"),
        };
        let text = format!(
            "HloModule model\n\nENTRY model {{\n  x = {s} parameter(0)\n  {narrow}\n  \
             ROOT r = {t} convert(v)\n}}\n"
        );
        Some((text, vec![x]))
    })
}

/// `reduce-precision` with `mantissa_bits=0` keeps a NaN input (the StableHLO
/// interpreter and XLA's evaluator give +inf: no mantissa bit is left to
/// tell a NaN from an infinity), in every float type: xla-cpu's model
/// (`ModelSpec::ReducePrecisionKeepsNan`), whose NaN is read on the bits
/// (f8e4m3fn: also its finite 0x79..0x7e).
pub(super) fn reduce_precision_nan_without_mantissa(m: &Module) -> Option<Module> {
    let spec = crate::check::ModelSpec::ReducePrecisionKeepsNan {
        dtypes: FLOATS.to_vec(),
    };
    crate::check::apply_model_specs(&[spec], m)
}

/// A `dot` of `pred` operands: the products summed modulo 2 (an odd count
/// of true products is true), where XLA's `pred` dot is true for any true
/// product (measured: `[1, 1] . [1, 1]` is false on iree-cpu).
pub(super) fn pred_dot_xor(m: &Module) -> Option<Module> {
    use crate::hlo::{ComparisonDirection as Dir, ComparisonType, ModuleBuilder, Shape};
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Dot, &[ElementType::Pred])?;
        let shapes = operand_shapes(m, i)?;
        if shapes.len() != 2 || shapes.iter().any(|s| s.dtype != ElementType::Pred) {
            return None;
        }
        let model = ModuleBuilder::new("model").build("model", |b| {
            let x = b.parameter(Shape::array(ElementType::Pred, shapes[0].dims.clone()))?;
            let y = b.parameter(Shape::array(ElementType::Pred, shapes[1].dims.clone()))?;
            let (xs, ys) = (
                b.convert(x, ElementType::S32)?,
                b.convert(y, ElementType::S32)?,
            );
            let d = b.add(i.opcode, &[xs, ys], i.attrs.clone(), None)?;
            let mut splat = |v: i128| {
                let c = b.constant_i128(ElementType::S32, &[], &[v])?;
                b.broadcast(c, &a.dims, &[])
            };
            let (one, zero) = (splat(1)?, splat(0)?);
            let odd = b.binary(Opcode::And, d, one)?;
            b.compare(Dir::Ne, ComparisonType::Signed, odd, zero)
        });
        Some(crate::hlo::print_module(&model.ok()?))
    })
}

/// `power(c, y)` whose base `c` is computed from constants alone (a
/// constant, or a broadcast or reshape of one), as
/// IREE computes it: 0 at every element where the base is negative,
/// whatever the exponent (`pow(-2, 2)` = 0, `pow(-0.5, 0)` = 0, `pow(-1,
/// 0.5)` = 0 where a base given as a parameter gives NaN, as measured);
/// elsewhere `power` itself.
pub(super) fn power_of_negative_constant_base(m: &Module) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = array_of(i, Opcode::Power, &FLOATS)?;
        if !is_folded_constant(c, *i.operands.first()?) {
            return None;
        }
        let t = type_text(&a);
        let ts = type_text(&ArrayShape::new(a.dtype, vec![]));
        let p = with_dtype(&a, ElementType::Pred);
        let text = format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
             z = f64[] constant(0)\n  zt = {ts} convert(z)\n  zb = {t} broadcast(zt), dimensions={{}}\n  \
             neg = {p} compare(x, zb), direction=LT\n  r0 = {t} power(x, y)\n  \
             ROOT r = {t} select(neg, zb, r0)\n}}\n"
        );
        Some((text, i.operands.clone()))
    })
}
