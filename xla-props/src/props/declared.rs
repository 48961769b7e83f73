//! Judging with the backend's declared `Numerics`: a result the property's
//! own tolerance rejects is still accepted when it differs from the
//! reference only in a way the backend declares (an approximate function
//! within its budget, flushed subnormals, a reassociated reduction). Shared
//! by the properties that compare a backend with the reference.

use crate::check::Numerics;
use crate::hlo::{ElementType, Module, Opcode};
use crate::literal::Literal;
use crate::property::{CaseContext, Outcome, Tolerance};

/// Runs the case's module on the backend and the reference and judges the
/// results with the property's tolerance, then with the backend's declared numerics.
pub(crate) fn compare_declared(ctx: &mut CaseContext<'_>) -> Outcome {
    let expected = match ctx.reference_result() {
        Ok(r) => r,
        Err(o) => return o,
    };
    let (built, inputs) = match ctx.prepared() {
        Ok(p) => p,
        Err(o) => return o,
    };
    let actual = match ctx.run_on(ctx.backend, &built.module, &inputs) {
        Ok(a) => a,
        Err(o) => return o,
    };
    let verdict = ctx.check(&expected, &actual);
    if !verdict.agrees() && reassociated_product(ctx) {
        return Outcome::Skip(
            "the backend reassociates float products, which may overflow or underflow in any order"
                .into(),
        );
    }
    if verdict.agrees() || accepted_as_declared(ctx, &built.module, &inputs, &expected, &actual) {
        return Outcome::Pass;
    }
    Outcome::from_verdict("backend vs reference", verdict)
}

/// A float multiply-reduction on a backend that reassociates reductions: no
/// error bound holds (a different order can overflow or underflow).
fn reassociated_product(ctx: &mut CaseContext<'_>) -> bool {
    let key = ctx.case.key;
    matches!(key.op, Opcode::Reduce | Opcode::ReduceWindow)
        && key.dtype.is_float()
        && key.param().is_some_and(|p| p.starts_with("mul"))
        && ctx.numerics().reassociates_reductions
}

/// The distance in units in the last place between two values of a float type
/// (by ordinal of their bit patterns: the largest finite and infinity are 1 apart).
fn ulp_distance(a: u64, b: u64, t: ElementType) -> u64 {
    let w = t.bit_width();
    let sign = 1u64 << (w - 1);
    let ord = |x: u64| -> i128 {
        if x & sign != 0 {
            -((x & !sign) as i128)
        } else {
            x as i128
        }
    };
    (ord(a) - ord(b)).unsigned_abs() as u64
}

fn is_subnormal(v: f64, t: ElementType) -> bool {
    t.float_format()
        .is_some_and(|f| v != 0.0 && v.is_finite() && v.abs() < f.min_normal())
}

fn flush(l: &Literal) -> Literal {
    let mut l = l.clone();
    for i in 0..l.element_count() {
        let v = l.get_f64(i);
        if is_subnormal(v, l.dtype()) {
            l.set_f64(i, if v < 0.0 { -0.0 } else { 0.0 });
        }
    }
    l
}

/// Terms summed into each element of a reduction-like root, when it is one.
fn reduction_terms(module: &Module, inputs: &[Literal]) -> Option<f64> {
    let entry = module.entry_computation();
    let root = entry.instr(entry.root);
    let out = root.shape.as_array()?.element_count()?.max(1) as f64;
    let shape_of = |k: usize| {
        root.operands
            .get(k)
            .and_then(|o| entry.instr(*o).shape.as_array())
    };
    let count = |k: usize| shape_of(k).and_then(|a| a.element_count()).unwrap_or(0) as f64;
    match root.opcode {
        Opcode::Reduce => Some(count(0) / out),
        Opcode::Dot => {
            let d = root.attrs.dot_dims.as_ref()?;
            let lhs = shape_of(0)?;
            Some(
                d.lhs_contracting
                    .iter()
                    .map(|&k| lhs.dims.get(k as usize).copied().unwrap_or(1) as f64)
                    .product(),
            )
        }
        Opcode::Convolution => {
            let cd = root.attrs.conv_dims.as_ref()?;
            let k = shape_of(1)?;
            let outf = k
                .dims
                .get(cd.kernel_output_feature as usize)
                .copied()?
                .max(1) as f64;
            Some(count(1) / outf)
        }
        Opcode::ReduceWindow => Some(
            root.attrs
                .window
                .as_ref()?
                .iter()
                .map(|w| w.size as f64)
                .product(),
        ),
        _ => {
            let _ = inputs;
            None
        }
    }
}

/// True when every element of `actual` differs from `expected` (or from the
/// reference on flushed inputs) only as the backend's numerics allow.
fn accepted_as_declared(
    ctx: &mut CaseContext<'_>,
    module: &Module,
    inputs: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
) -> bool {
    let n: Numerics = ctx.numerics().clone();
    if n.is_exact() || ctx.spec.strict_rounding || expected.len() != actual.len() {
        return false;
    }
    let entry = module.entry_computation();
    let op = entry.instr(entry.root).opcode;
    let tolerance = match ctx.spec.tolerance {
        Tolerance::Ulp(u) => u,
        _ => 0,
    };
    let mut candidates = vec![expected.to_vec()];
    if inputs.iter().any(|l| n.flushes_inputs(l.dtype())) {
        let flushed: Vec<Literal> = inputs
            .iter()
            .map(|l| {
                if n.flushes_inputs(l.dtype()) {
                    flush(l)
                } else {
                    l.clone()
                }
            })
            .collect();
        if let Ok(r) = ctx.run_on(ctx.reference, module, &flushed) {
            candidates.push(r);
        }
    }
    // the reassociation bound: n * eps(accumulator) * sum|terms|, per element
    let sums = match reduction_terms(module, inputs) {
        Some(terms) if n.reassociates_reductions => {
            let abs: Vec<Literal> = inputs
                .iter()
                .map(|l| {
                    let mut l = l.clone();
                    if l.dtype().is_float() {
                        for i in 0..l.element_count() {
                            let v = l.get_f64(i).abs();
                            l.set_f64(i, v);
                        }
                    }
                    l
                })
                .collect();
            ctx.run_on(ctx.reference, module, &abs)
                .ok()
                .map(|s| (terms, s))
        }
        _ => None,
    };
    candidates.iter().any(|exp| {
        exp.iter().zip(actual).enumerate().all(|(o, (e, a))| {
            let t = e.dtype();
            if t != a.dtype() || e.element_count() != a.element_count() {
                return false;
            }
            let Some(f) = t.float_format() else {
                return (0..e.element_count()).all(|i| e.get_bits(i) == a.get_bits(i));
            };
            let budget = n.budget(op, t);
            let ulp = tolerance.max(budget.map_or(0, |b| b.ulp));
            let abs = budget.map_or(0.0, |b| b.abs);
            let acc_eps = if t == ElementType::F64 {
                f64::EPSILON
            } else {
                f32::EPSILON as f64
            };
            (0..e.element_count()).all(|i| {
                let (eb, ab) = (e.get_bits(i), a.get_bits(i));
                let (ev, av) = (e.get_f64(i), a.get_f64(i));
                if eb == ab || (ev.is_nan() && av.is_nan()) {
                    return true;
                }
                if n.flushes_outputs(t) && is_subnormal(ev, t) && av == 0.0 {
                    return true;
                }
                // when the magnitudes summed into an element overflow, some
                // accumulation order overflows too: inf or NaN are legal there
                let overflowing = ev.is_finite()
                    && sums
                        .as_ref()
                        .and_then(|(_, s)| s.get(o))
                        .is_some_and(|s| !s.get_f64(i).is_finite());
                let exact_inf = ev.is_infinite() && sums.is_some();
                if overflowing || (exact_inf && !av.is_finite()) {
                    return true;
                }
                if ev.is_nan() || av.is_nan() {
                    return false;
                }
                if ulp_distance(eb, ab, t) <= ulp || (av - ev).abs() <= abs {
                    return true;
                }
                match &sums {
                    Some((terms, s)) => s.get(o).is_some_and(|s| {
                        let bound = terms * acc_eps * s.get_f64(i)
                            + f.epsilon() * ev.abs()
                            + f.min_subnormal();
                        (av - ev).abs() <= bound
                    }),
                    None => false,
                }
            })
        })
    })
}
