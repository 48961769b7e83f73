//! Reassociated reductions: a reduce, reduce-window, dot or convolution may
//! sum (or multiply) its terms in any order, and narrower floats in f32; its
//! result is then within `n * eps * sum|x|` of the reference's.

use super::reduction_root::{mapped_constants, root_instr};
use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::EvalFn;
use crate::check::{LegalReason, MagnitudeSums};
use crate::hlo::{FloatFormat, Module, Opcode};
use crate::literal::Literal;

pub(crate) struct Reassociation;

impl LegalDifference for Reassociation {
    fn reason(&self) -> LegalReason {
        LegalReason::Reassociation
    }
    fn summary(&self) -> &'static str {
        "a reduction's terms summed in another order (and narrow floats in f32, or in the declared type with `reductions_accumulate_in_declared_type` / `contractions_accumulate_in_declared_type`): within `n * eps * sum|x|` plus the subnormal floors (`Numerics::reassociates_reductions`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.reassociates_reductions
    }
    fn cheap(&self) -> bool {
        // the zero-sum sign rule is cheap; the sums are costly (see evidence)
        false
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        let n = c.numerics;
        let sums = c.expected.first().and_then(|e| {
            // a complex output flushes as its component type does
            let t = crate::literal::component_type(e.dtype()).unwrap_or(e.dtype());
            let flushes = n.flushes_outputs(t) || n.flushes_inputs(t);
            root_magnitudes(
                c.module,
                c.inputs,
                e,
                flushes,
                (
                    n.reductions_accumulate_in_declared_type,
                    n.contractions_accumulate_in_declared_type,
                ),
                c.reference,
            )
        });
        let out_count = c.expected.first().map_or(0, Literal::element_count);
        // the fallback sums real terms only
        let complex = c.expected.first().is_some_and(|e| e.dtype().is_complex());
        let sums = sums.or_else(|| {
            let fallback = crate::check::compare::root_reduction_sums;
            (!complex)
                .then(|| fallback(c.module, c.inputs))
                .flatten()
                .filter(|s| s.sum_abs.len() == out_count)
        });
        // inside a larger program the error is carried by the propagated
        // bound (per element, `reference::enclose`)
        vec![Evidence::Reassociation(sums)]
    }
}

/// How the root of a module combines terms, when it is a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    Sum,
    Product,
}

/// The root's reduction kind, its number of terms per output element, and
/// its opcode.
fn root_reduction(module: &Module) -> Option<(Combine, u64, Opcode)> {
    let (_, entry, root) = root_instr(module)?;
    let out = root.shape.as_array()?.element_count()?.max(1);
    let shape_of = |k: usize| {
        root.operands
            .get(k)
            .and_then(|o| entry.instr(*o).shape.as_array())
    };
    let count = |k: usize| shape_of(k).and_then(|a| a.element_count()).unwrap_or(0);
    let reducer = || -> Option<Combine> {
        let c = module.computations.get(root.attrs.to_apply?.index())?;
        match c.instr(c.root).opcode {
            Opcode::Add => Some(Combine::Sum),
            Opcode::Multiply => Some(Combine::Product),
            _ => None,
        }
    };
    let (combine, terms) = match root.opcode {
        Opcode::Reduce if root.operands.len() == 2 => Some((reducer()?, count(0) / out + 1)),
        Opcode::ReduceWindow if root.operands.len() == 2 => {
            let w: u64 = root
                .attrs
                .window
                .as_ref()?
                .iter()
                .map(|w| w.size.max(1) as u64)
                .product();
            Some((reducer()?, w + 1))
        }
        Opcode::Dot => {
            let d = root.attrs.dot_dims.as_ref()?;
            let lhs = shape_of(0)?;
            let k: u64 = d
                .lhs_contracting
                .iter()
                .map(|&k| lhs.dims.get(k as usize).copied().unwrap_or(1).max(1) as u64)
                .product();
            Some((Combine::Sum, k))
        }
        Opcode::Convolution => {
            let cd = root.attrs.conv_dims.as_ref()?;
            let k = shape_of(1)?;
            let outf = k
                .dims
                .get(cd.kernel_output_feature as usize)
                .copied()?
                .max(1) as u64;
            Some((Combine::Sum, (count(1) / outf).max(1)))
        }
        _ => None,
    }?;
    Some((combine, terms, root.opcode))
}

/// The float inputs mapped elementwise by `f` (other inputs unchanged).
fn mapped(inputs: &[Literal], f: impl Fn(f64) -> f64) -> Vec<Literal> {
    inputs
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if l.dtype().is_float() {
                for i in 0..l.element_count() {
                    let v = f(l.get_f64(i));
                    l.set_f64(i, v);
                }
            }
            l
        })
        .collect()
}

/// Per-element magnitudes of a reduction at the root, evaluated by the
/// reference on transformed inputs (so reduce, reduce-window, dot and
/// convolution are all covered, with their windows, padding and init):
///
/// - sums: `sum|x|` (the reassociation bound `n * eps * sum|x|`, with the
///   eps of f32 for narrower types, plus
///   `n * min_subnormal` for products rounded in the subnormal range, or
///   `n * min_normal` when the backend flushes the type: each product or
///   partial sum may then be flushed to zero, measured on xla-cpu dots and
///   convolutions);
///   unbounded where the finite magnitudes overflow the result type, and
///   there a NaN reference that only comes from finite terms overflowing
///   (the reference on the inputs' signs, `±1`, with infinities and NaNs
///   kept, is not NaN) is no bound either: a fused multiply-add keeps the
///   overflowing product unrounded (measured: f64 dot and convolution on
///   xla-cpu give ±inf where the rounded products give `inf - inf`);
/// - products: `prod|x| + prod max(|x|, 1) * min_normal / eps`, so the bound is
///   `n * eps * prod|x|` (each of the n roundings is relative) plus
///   `n * min_normal * prod max(|x|, 1)` (a partial product that underflows
///   loses at most a smallest normal, later scaled by at most the product of
///   the large factors); unbounded where the large factors alone overflow
///   (then some order overflows, and a zero factor makes it NaN).
pub(crate) fn root_magnitudes(
    module: &Module,
    inputs: &[Literal],
    expected: &Literal,
    flushes: bool,
    (narrow_reductions, narrow_contractions): (bool, bool),
    reference: &EvalFn<'_>,
) -> Option<MagnitudeSums> {
    let (combine, terms, opcode) = root_reduction(module)?;
    let dtype = module.result_shape().as_array()?.dtype;
    if dtype.is_complex() {
        let complex = super::reassociation_complex::Root {
            module,
            inputs,
            terms,
            product: combine == Combine::Product,
            opcode,
            flushes,
        };
        return complex.magnitudes(reference);
    }
    let fmt = dtype.float_format()?;
    let finite_abs = |v: f64| if v.is_finite() { v.abs() } else { 0.0 };
    let magnitude = reference(
        &mapped_constants(module, f64::abs, |(re, im)| (f64::abs(re), f64::abs(im))),
        &mapped(inputs, f64::abs),
    )?
    .pop()?;
    let (sum_abs, unbounded, overflow_nan) = match combine {
        Combine::Sum => {
            let finite = reference(
                &mapped_constants(module, finite_abs, |(re, im)| {
                    (finite_abs(re), finite_abs(im))
                }),
                &mapped(inputs, finite_abs),
            )?
            .pop()?;
            let n = magnitude.element_count();
            // a product of two terms (dot, convolution) that lands in the
            // subnormal range is rounded absolutely, by up to half the
            // smallest subnormal: `n * min_subnormal` on top of the bound
            let floor = if flushes {
                fmt.min_normal()
            } else {
                fmt.min_subnormal()
            } / fmt.epsilon();
            // types narrower than f32 accumulate in f32 at least (XLA promotes
            // dots to f32; so does the interpreter for every reduction):
            // n * eps(f32) * sum|x|, then one rounding of the result, at most
            // eps(type) * |result| (loosened here to n times that); a backend
            // that accumulates reduce/reduce-window in the reducer's declared
            // type (`Numerics::reductions_accumulate_in_declared_type`) rounds
            // every partial sum: n * eps(type) * sum|x|; likewise a dot or
            // convolution whose products and partial sums are rounded to the
            // declared type (`contractions_accumulate_in_declared_type`)
            let declared_type = match opcode {
                Opcode::Reduce | Opcode::ReduceWindow => narrow_reductions,
                Opcode::Dot | Opcode::Convolution => narrow_contractions,
                _ => false,
            };
            let (scale, last) = if declared_type {
                (1.0, 0.0)
            } else if fmt.epsilon() > f64::from(f32::EPSILON) {
                (f64::from(f32::EPSILON) / fmt.epsilon(), 1.0)
            } else {
                (1.0, 0.0)
            };
            let sum_abs: Vec<f64> = (0..n)
                .map(|i| {
                    let e = expected.get_f64(i).abs();
                    let last = if e.is_finite() { last * e } else { 0.0 };
                    magnitude.get_f64(i) * scale + last + floor
                })
                .collect();
            let unbounded: Vec<bool> = (0..n)
                .map(|i| !finite.get_f64(i).is_finite() || finite.get_f64(i) >= fmt.max)
                .collect();
            let overflow_nan = overflow_nan(module, inputs, expected, &unbounded, reference)?;
            (sum_abs, unbounded, overflow_nan)
        }
        Combine::Product => product_magnitudes(module, inputs, &magnitude, &fmt, reference)?,
    };
    Some(MagnitudeSums {
        terms,
        sum_abs,
        unbounded,
        product: combine == Combine::Product,
        overflow_nan,
    })
}

/// Per element whose magnitude sum overflows and whose expected value is
/// NaN, whether the NaN comes from the overflow (the terms' signs alone
/// give no NaN): inf - inf of partial sums a reassociation may avoid.
fn overflow_nan(
    module: &Module,
    inputs: &[Literal],
    expected: &Literal,
    unbounded: &[bool],
    reference: &EvalFn<'_>,
) -> Option<Vec<bool>> {
    Some(
        if (0..unbounded.len()).any(|i| unbounded[i] && expected.get_f64(i).is_nan()) {
            let unit = |v: f64| {
                if v.is_finite() && v != 0.0 {
                    v.signum()
                } else {
                    v
                }
            };
            let signs = reference(
                &mapped_constants(module, unit, |(re, im)| (unit(re), unit(im))),
                &mapped(inputs, unit),
            )?
            .pop()?;
            (0..unbounded.len())
                .map(|i| unbounded[i] && expected.get_f64(i).is_nan() && !signs.get_f64(i).is_nan())
                .collect()
        } else {
            Vec::new()
        },
    )
}

/// A product reduction's magnitude sums: `prod |x|` plus the absolute
/// rounding of partial products that leave the normal range, and which
/// elements the products overflow.
fn product_magnitudes(
    module: &Module,
    inputs: &[Literal],
    magnitude: &Literal,
    fmt: &FloatFormat,
    reference: &EvalFn<'_>,
) -> Option<(Vec<f64>, Vec<bool>, Vec<bool>)> {
    let large = |v: f64| {
        if v.is_finite() && v != 0.0 {
            v.abs().max(1.0)
        } else {
            1.0
        }
    };
    let high = reference(
        &mapped_constants(module, large, |(re, im)| (large(re), large(im))),
        &mapped(inputs, large),
    )?
    .pop()?;
    let n = magnitude.element_count();
    let scale = fmt.min_normal() / fmt.epsilon();
    let sum_abs = (0..n)
        .map(|i| magnitude.get_f64(i) + high.get_f64(i) * scale)
        .collect();
    let unbounded = (0..n)
        .map(|i| !high.get_f64(i).is_finite() || high.get_f64(i) >= fmt.max)
        .collect();
    Some((sum_abs, unbounded, Vec::new()))
}
