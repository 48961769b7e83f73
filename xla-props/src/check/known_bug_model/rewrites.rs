//! The known-bug models that rewrite a whole module (each replaces every
//! instruction of one pattern by the formula XLA computes instead), as
//! opposed to the per-instruction templates of `known_bug_model.rs`.

use super::{replace_with_model_of, type_text, DivisionRewrite};
use crate::hlo::{ArrayShape, Computation, ElementType, InstrId, Module, Opcode};

/// Every divide at one of `dtypes` whose divisor is a constant or a
/// broadcast of a scalar constant (any scalar with `broadcast_parameters`)
/// replaced by `x * (1 / y)`; None when there is none.
pub(super) fn divide_as_reciprocal(
    m: &Module,
    dtypes: &[ElementType],
    broadcast_parameters: bool,
) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = i.shape.as_array()?;
        if i.opcode != Opcode::Divide || !dtypes.contains(&a.dtype) {
            return None;
        }
        let y = c.instructions.get(i.operands.get(1)?.index())?;
        let scalar = y
            .operands
            .first()
            .and_then(|o| c.instructions.get(o.index()))
            .filter(|s| s.shape.as_array().is_some_and(|s| s.dims.is_empty()));
        let by_constant = y.opcode == Opcode::Constant
            || (y.opcode == Opcode::Broadcast
                && scalar.is_some_and(|s| broadcast_parameters || s.opcode == Opcode::Constant));
        if !by_constant {
            return None;
        }
        let t = type_text(a);
        let text = format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
             one = {d}[] constant(1)\n  ones = {t} broadcast(one), dimensions={{}}\n  \
             r = {t} divide(ones, y)\n  ROOT q = {t} multiply(x, r)\n}}\n",
            d = a.dtype
        );
        Some((text, i.operands.clone()))
    })
}

/// Every divide at one of `dtypes` of the form `rewrite` names replaced by
/// the formula XLA computes instead; None when there is none.
pub(super) fn division_rewrite(
    m: &Module,
    rewrite: DivisionRewrite,
    dtypes: &[ElementType],
) -> Option<Module> {
    use DivisionRewrite::*;
    replace_with_model_of(m, &|c, i| {
        let a = i.shape.as_array()?;
        if i.opcode != Opcode::Divide || !dtypes.contains(&a.dtype) || i.operands.len() != 2 {
            return None;
        }
        let (x, y) = (i.operands[0], i.operands[1]);
        let ins = |id: InstrId| c.instructions.get(id.index());
        // the producer the rewrite looks through, and the formula over
        // (its operands, the divide's other operand) as p0, p1, ...
        let (producer, wanted) = match rewrite {
            DivideOfDivide => (ins(x)?, Opcode::Divide),
            DivideByDivide => (ins(y)?, Opcode::Divide),
            DivideBySqrt => (ins(y)?, Opcode::Sqrt),
            DivideByPower => (ins(y)?, Opcode::Power),
        };
        if producer.opcode != wanted || producer.shape != i.shape {
            return None;
        }
        let mut operands = producer.operands.clone();
        match rewrite {
            DivideOfDivide => operands.push(y),
            _ => operands.insert(0, x),
        }
        if operands
            .iter()
            .any(|&o| ins(o).is_none_or(|j| j.shape != i.shape))
        {
            return None;
        }
        let t = type_text(a);
        let formula = match rewrite {
            // (p0 / p1) / p2 = p0 / (p1 * p2)
            DivideOfDivide => format!("m = {t} multiply(p1, p2)\n  ROOT r = {t} divide(p0, m)"),
            // p0 / (p1 / p2) = (p0 * p2) / p1
            DivideByDivide => format!("m = {t} multiply(p0, p2)\n  ROOT r = {t} divide(m, p1)"),
            // p0 / sqrt(p1) = p0 * rsqrt(p1)
            DivideBySqrt => format!("s = {t} rsqrt(p1)\n  ROOT r = {t} multiply(p0, s)"),
            // p0 / power(p1, p2) = p0 * power(p1, -p2)
            DivideByPower => format!(
                "n = {t} negate(p2)\n  w = {t} power(p1, n)\n  ROOT r = {t} multiply(p0, w)"
            ),
        };
        let params: String = (0..operands.len())
            .map(|k| format!("  p{k} = {t} parameter({k})\n"))
            .collect();
        let text = format!("HloModule model\n\nENTRY model {{\n{params}  {formula}\n}}\n");
        Some((text, operands))
    })
}

/// Whether `id` is a float constant whose every element equals `value`
/// (-0 equals 0), or a broadcast of one.
pub(crate) fn is_all(comp: &Computation, id: InstrId, value: f64) -> bool {
    let Some(i) = comp.instructions.get(id.index()) else {
        return false;
    };
    match i.opcode {
        Opcode::Constant => match &i.attrs.constant {
            Some(crate::hlo::ConstantData::Float(v)) => {
                !v.is_empty() && v.iter().all(|&x| x == value)
            }
            _ => false,
        },
        Opcode::Broadcast => i.operands.first().is_some_and(|&o| is_all(comp, o, value)),
        _ => false,
    }
}

/// Every add at one of `dtypes` with an operand of constant zeros replaced
/// by a copy of its other operand; None when there is none.
pub(super) fn add_zero_is_identity(m: &Module, dtypes: &[ElementType]) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = i.shape.as_array()?;
        if i.opcode != Opcode::Add || !dtypes.contains(&a.dtype) || i.operands.len() != 2 {
            return None;
        }
        let zero = |k: usize| is_all(c, i.operands[k], 0.0);
        let kept = if zero(1) {
            i.operands[0]
        } else if zero(0) {
            i.operands[1]
        } else {
            return None;
        };
        let t = type_text(a);
        let text =
            format!("HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  ROOT r = {t} copy(x)\n}}\n");
        Some((text, vec![kept]))
    })
}

/// Whether `id` is computed from constants alone: a constant or an iota,
/// or a broadcast or reshape of one.
pub(crate) fn is_folded_constant(c: &Computation, id: InstrId) -> bool {
    c.instructions
        .get(id.index())
        .is_some_and(|i| match i.opcode {
            Opcode::Constant | Opcode::Iota => true,
            Opcode::Broadcast | Opcode::Reshape => i
                .operands
                .first()
                .is_some_and(|&o| is_folded_constant(c, o)),
            _ => false,
        })
}

/// Every signed integer convolution at one of `dtypes` of two constants
/// replaced by its s64 sum clamped to the type's range; None when none.
pub(super) fn constant_integer_convolution_saturates(
    m: &Module,
    dtypes: &[ElementType],
) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = i.shape.as_array()?;
        if i.opcode != Opcode::Convolution
            || !dtypes.contains(&a.dtype)
            || !a.dtype.is_signed_int()
            || i.operands.len() != 2
            || !i.operands.iter().all(|&o| is_folded_constant(c, o))
        {
            return None;
        }
        let shape = |id: InstrId| c.instructions.get(id.index())?.shape.as_array().cloned();
        let (x, w) = (shape(i.operands[0])?, shape(i.operands[1])?);
        let wide = |s: &ArrayShape| type_text(&ArrayShape::new(ElementType::S64, s.dims.clone()));
        let bits = a.dtype.bit_width();
        let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
        let text = format!(
            "HloModule model\n\nENTRY model {{\n  x = {xt} parameter(0)\n  w = {wt} parameter(1)\n  \
             xw = {xw} convert(x)\n  ww = {ww} convert(w)\n  \
             s = {sw} convolution(xw, ww){attrs}\n  \
             lo = s64[] constant({lo})\n  hi = s64[] constant({hi})\n  \
             k = {sw} clamp(lo, s, hi)\n  ROOT r = {t} convert(k)\n}}\n",
            xt = type_text(&x),
            wt = type_text(&w),
            xw = wide(&x),
            ww = wide(&w),
            sw = wide(a),
            t = type_text(a),
            attrs = crate::hlo::attrs_text(m, i),
        );
        Some((text, i.operands.clone()))
    })
}

/// Every unsigned `power` with an operand that is neither a parameter nor
/// a constant replaced by `x^(y & mask)`; None when there is none.
pub(super) fn unsigned_power_in_forms(m: &Module, bits: u32) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let a = i.shape.as_array()?;
        let plain = |o: &InstrId| {
            c.instructions
                .get(o.index())
                .is_some_and(|p| matches!(p.opcode, Opcode::Parameter | Opcode::Constant))
        };
        (i.opcode == Opcode::Power && a.dtype.is_unsigned_int() && !i.operands.iter().all(plain))
            .then(|| (unsigned_power_low_bits(a, bits), i.operands.clone()))
    })
}

/// `x^(y & mask)`, wrapped, for an unsigned `power`.
fn unsigned_power_low_bits(a: &ArrayShape, bits: u32) -> String {
    let t = type_text(a);
    let mask = (1u64 << bits.min(63)) - 1;
    format!(
        "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  y = {t} parameter(1)\n  \
         c = {}[] constant({mask})\n  cb = {t} broadcast(c), dimensions={{}}\n  \
         low = {t} and(y, cb)\n  ROOT r = {t} power(x, low)\n}}\n",
        a.dtype
    )
}

/// Every dot `ModelSpec::DotSumsInDeclaredType` takes, replaced by a call
/// of its model: one single-term dot per contracting index (the product
/// rounded once to the type) and an add in the type per term, in order,
/// from 0.
pub(super) fn dot_sums_in_declared_type(m: &Module, dtypes: &[ElementType]) -> Option<Module> {
    replace_with_model_of(m, &|c, i| {
        let out = i.shape.as_array().filter(|a| dtypes.contains(&a.dtype))?;
        let d = i
            .attrs
            .dot_dims
            .as_ref()
            .filter(|_| i.opcode == Opcode::Dot)?;
        if crate::hlo::DotAlgorithm::of(&i.attrs).ok()?.is_some() {
            return None;
        }
        let shape = |k: usize| {
            let o = c.instructions.get(i.operands.get(k)?.index())?;
            o.shape.as_array().filter(|a| a.dtype == out.dtype)
        };
        let (a, b) = (shape(0)?, shape(1)?);
        let ([lc], [rc]) = (d.lhs_contracting.as_slice(), d.rhs_contracting.as_slice()) else {
            return None;
        };
        let (lc, rc) = (usize::try_from(*lc).ok()?, usize::try_from(*rc).ok()?);
        let leading: Vec<i64> = (0..d.rhs_batch.len() as i64).collect();
        let taken = !d.lhs_batch.is_empty() && d.rhs_batch != leading && lc + 1 != a.dims.len();
        if !taken || a.dims.get(lc)? != b.dims.get(rc)? {
            return None;
        }
        Some((summed_in_order(a, b, out, d, (lc, rc)), i.operands.clone()))
    })
}

/// The model computation of one dot of [`dot_sums_in_declared_type`]: `a`
/// and `b` its operands' types, `out` its result's, `d` its dimension
/// numbers, `(lc, rc)` the contracting dimensions.
fn summed_in_order(
    a: &ArrayShape,
    b: &ArrayShape,
    out: &ArrayShape,
    d: &crate::hlo::DotDims,
    (lc, rc): (usize, usize),
) -> String {
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let dims = format!(
        "lhs_batch_dims={{{}}}, lhs_contracting_dims={{{lc}}}, rhs_batch_dims={{{}}}, rhs_contracting_dims={{{rc}}}",
        list(&d.lhs_batch),
        list(&d.rhs_batch)
    );
    // operand `s` at contracting index `k` of its dimension `at`
    let term = |s: &ArrayShape, at: usize, k: i64| {
        let mut t = s.clone();
        t.dims[at] = 1;
        let bounds: Vec<String> = s
            .dims
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                if j == at {
                    format!("[{k}:{}]", k + 1)
                } else {
                    format!("[0:{n}]")
                }
            })
            .collect();
        (type_text(&t), bounds.join(", "))
    };
    let o = type_text(out);
    let mut t = format!(
        "HloModule m\nENTRY m {{\n  a = {} parameter(0)\n  b = {} parameter(1)\n  \
         z = {}[] constant(0)\n  s0 = {o} broadcast(z), dimensions={{}}\n",
        type_text(a),
        type_text(b),
        out.dtype
    );
    for k in 0..a.dims[lc] {
        let ((ta, sa), (tb, sb)) = (term(a, lc, k), term(b, rc, k));
        t += &format!(
            "  a{k} = {ta} slice(a), slice={{{sa}}}\n  b{k} = {tb} slice(b), slice={{{sb}}}\n  \
             p{k} = {o} dot(a{k}, b{k}), {dims}\n  s{} = {o} add(s{k}, p{k})\n",
            k + 1
        );
    }
    t += &format!("  ROOT r = {o} copy(s{})\n}}\n", a.dims[lc]);
    t
}
