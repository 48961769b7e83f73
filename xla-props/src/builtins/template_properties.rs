//! Properties over multi-op program templates (`crate::programs`): each case
//! names a template, a dtype, a `[rows, columns]` shape and (for most) a
//! fusion configuration, e.g.
//! `template_vs_reference::fusion::bf16::bf16[4,16]{1,0}::uniform.softmax.all-in-one::interpreter`.

use crate::check::Produced;
use crate::check::Verdict;
use crate::fuzz::judge_runs;
use crate::hlo::{ElementType, Module};
use crate::inputs::{generate_inputs, Distribution};
use crate::literal::Literal;
use crate::programs::{find_template, split_case, topk_k, Configuration, ProgramTemplate};
use crate::property::{CaseContext, Outcome};
use xla_props_macros::xla_property;

/// The template, configuration (when the case names one), dtype and dims of a program case.
struct ProgramCase {
    template: &'static ProgramTemplate,
    configuration: Option<&'static Configuration>,
    dtype: ElementType,
    dims: Vec<i64>,
}

fn program_case(ctx: &CaseContext<'_>) -> Result<ProgramCase, Outcome> {
    let key = ctx.case.key;
    let param = key
        .param()
        .ok_or_else(|| Outcome::fail("a program case needs a template parameter"))?;
    let (template, configuration) = match split_case(param) {
        Some((t, c)) => (t, Some(c)),
        None => (
            find_template(param)
                .ok_or_else(|| Outcome::fail(format!("unknown template `{param}`")))?,
            None,
        ),
    };
    Ok(ProgramCase {
        template,
        configuration,
        dtype: key.dtype,
        dims: key.dims().to_vec(),
    })
}

impl ProgramCase {
    fn build(&self, configuration: &str) -> Result<Module, Outcome> {
        self.template
            .build(self.dtype, &self.dims, configuration)
            .map_err(|e| Outcome::fail(e.to_string()))
    }
    fn configuration_name(&self) -> &'static str {
        self.configuration.map_or("unfused", |c| c.name)
    }
    /// Legal inputs of the unfused program (every configuration has the same parameters).
    fn inputs(&self, ctx: &CaseContext<'_>) -> Result<Vec<Literal>, Outcome> {
        let unfused = self.build("unfused")?;
        generate_inputs(&unfused, Distribution::Uniform, ctx.seed())
            .map(|g| g.args)
            .map_err(|e| Outcome::fail(format!("failed to generate inputs: {e}")))
    }
}

/// Judges the backend's `actual` outputs of `module` on `args` against the
/// reference's `expected`, with the backend's numerics and known bugs: a
/// pass, an expected failure naming a known bug, or a failure saying `what`
/// was compared.
pub(crate) fn against_reference(
    ctx: &CaseContext<'_>,
    what: &str,
    module: &Module,
    args: &[Literal],
    expected: Vec<Literal>,
    actual: Vec<Literal>,
) -> Outcome {
    let verdict = judge_runs(
        module,
        args,
        &Produced::Ok(expected),
        &Produced::Ok(actual),
        ctx.numerics(),
        ctx.backend.known_bugs(),
        false,
    );
    outcome_of(what, &verdict)
}

/// The case's program in its own configuration and its inputs (recorded
/// for reports), run on the reference and on the backend:
/// `(module, args, expected, actual)`.
type BothRuns = (Module, Vec<Literal>, Vec<Literal>, Vec<Literal>);

fn both_runs(ctx: &mut CaseContext<'_>) -> Result<BothRuns, Outcome> {
    let pc = program_case(ctx)?;
    both_runs_of(ctx, &pc)
}

fn both_runs_of(ctx: &mut CaseContext<'_>, pc: &ProgramCase) -> Result<BothRuns, Outcome> {
    let module = pc.build(pc.configuration_name())?;
    let args = pc.inputs(ctx)?;
    ctx.record_program(&module, &args);
    let expected = ctx.run_on(ctx.reference, &module, &args)?;
    let actual = ctx.run_on(ctx.backend, &module, &args)?;
    Ok((module, args, expected, actual))
}

fn outcome_of(what: &str, verdict: &Verdict) -> Outcome {
    if verdict.is_agreement() {
        Outcome::Pass
    } else if matches!(verdict, Verdict::KnownBug { .. }) {
        // a known bug of the backend: the runner reports it as xfail
        Outcome::from_verdict(what, verdict.clone())
    } else if verdict.is_disagreement() {
        let text = verdict.to_string();
        Outcome::fail(format!("{what}: {}", text.lines().next().unwrap_or("")))
    } else {
        Outcome::Skip(format!("{what}: {verdict}"))
    }
}

/// Each template under each fusion configuration agrees with the reference,
/// judged by the full tolerance model.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16, f8e4m3fn, f8e5m2],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn template_vs_reference(ctx: &mut CaseContext<'_>) -> Outcome {
    match both_runs(ctx) {
        Ok((module, args, expected, actual)) => against_reference(
            ctx,
            "backend vs reference",
            &module,
            &args,
            expected,
            actual,
        ),
        Err(o) => o,
    }
}

/// Every collective on every replica-group shape of its templates
/// (`programs::COLLECTIVE_TEMPLATES`: all-reduce, all-gather, reduce-
/// scatter, all-to-all, collective-permute, collective-broadcast on 4 and 8
/// devices) agrees with the reference on global arrays; a reduction over a
/// group is judged by the reassociation bound over the group. A backend
/// with fewer devices skips, with the reason.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16, s32],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn collectives(ctx: &mut CaseContext<'_>) -> Outcome {
    template_vs_reference(ctx)
}

/// Every fusion configuration of a template agrees with every other on the
/// backend under test, within the tolerance model.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16, f8e4m3fn, f8e5m2],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn template_fusion_invariance(ctx: &mut CaseContext<'_>) -> Outcome {
    let run = || -> Result<Outcome, Outcome> {
        let pc = program_case(ctx)?;
        let args = pc.inputs(ctx)?;
        let mut results = Vec::new();
        for c in pc.template.configurations {
            let m = pc.build(c.name)?;
            let out = ctx.run_on(ctx.backend, &m, &args)?;
            results.push((c.name, m, Produced::Ok(out)));
        }
        for (i, (ni, _, ri)) in results.iter().enumerate() {
            for (nj, mj, rj) in &results[i + 1..] {
                let v = judge_runs(mj, &args, ri, rj, ctx.numerics(), &[], false);
                if !v.is_agreement() {
                    return Ok(outcome_of(&format!("{ni} vs {nj}"), &v));
                }
            }
        }
        Ok(Outcome::Pass)
    };
    run().unwrap_or_else(|o| o)
}

/// For every x not representable in the narrow type, `x - f32(narrow(x))` is
/// non-zero on the backend, and bit-equal to the reference: exact, not by tolerance.
#[xla_property(
    ops = [fusion],
    dtypes = [f16, bf16, f8e4m3fn, f8e5m2],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact,
    strict_rounding
)]
pub fn quantization_residual(ctx: &mut CaseContext<'_>) -> Outcome {
    match both_runs(ctx) {
        Ok((_, args, expected, actual)) => check_residuals(&args[0], &expected, &actual),
        Err(o) => o,
    }
}

/// The residual check on outputs `(dequantized, residual)` of the quantize template.
pub(crate) fn check_residuals(x: &Literal, expected: &[Literal], actual: &[Literal]) -> Outcome {
    let (Some(dq), Some(r_ref), Some(r)) = (expected.first(), expected.get(1), actual.get(1))
    else {
        return Outcome::fail("the quantize program has two outputs");
    };
    if r.element_count() != x.element_count() {
        return Outcome::fail("the backend's residual has the wrong size");
    }
    let (mut checked, mut zero, mut differ, mut first) = (0usize, 0usize, 0usize, None);
    for i in 0..x.element_count() {
        let xi = x.get_f64(i);
        if !xi.is_finite() || dq.get_f64(i) == xi {
            continue; // representable: the residual is legitimately zero
        }
        checked += 1;
        let (got, want) = (r.get_f64(i), r_ref.get_f64(i));
        if got == 0.0 {
            zero += 1;
        }
        if got.to_bits() != want.to_bits() {
            differ += 1;
            first.get_or_insert((i, xi, got, want));
        }
    }
    if checked == 0 {
        return Outcome::Skip("every input is representable in the narrow type".to_string());
    }
    match first {
        None => Outcome::Pass,
        Some((i, xi, got, want)) => Outcome::fail(format!(
            "{zero} of {checked} residuals of unrepresentable inputs are zero, {differ} differ from the reference; first at {i}: x={xi:e}, residual {got:e}, expected {want:e}"
        )),
    }
}

/// The backend's top-k has recall >= 0.99 against the reference's top-k;
/// ties at the k-th value count as hits, so any tie order is accepted.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn topk_recall(ctx: &mut CaseContext<'_>) -> Outcome {
    let mut run = || -> Result<Outcome, Outcome> {
        let pc = program_case(ctx)?;
        let (_, args, expected, actual) = both_runs_of(ctx, &pc)?;
        let (rows, cols) = (pc.dims[0] as usize, pc.dims[1] as usize);
        Ok(check_topk(&args[0], rows, cols, &expected, &actual))
    };
    run().unwrap_or_else(|o| o)
}

/// The recall check on outputs `(values[rows, k], indices[rows, k])`.
pub(crate) fn check_topk(
    x: &Literal,
    rows: usize,
    cols: usize,
    expected: &[Literal],
    actual: &[Literal],
) -> Outcome {
    let k = topk_k(cols as i64) as usize;
    let (Some(ev), Some(av), Some(ai)) = (expected.first(), actual.first(), actual.get(1)) else {
        return Outcome::fail("top-k has two outputs");
    };
    if av.element_count() != rows * k || ai.element_count() != rows * k {
        return Outcome::fail("the backend's top-k has the wrong size");
    }
    let mut hits = 0usize;
    for r in 0..rows {
        let threshold = ev.get_f64(r * k + k - 1);
        let mut seen = Vec::with_capacity(k);
        for j in 0..k {
            let v = av.get_f64(r * k + j);
            let idx = ai.get_f64(r * k + j);
            let consistent = idx >= 0.0
                && (idx as usize) < cols
                && !seen.contains(&(idx as usize))
                && x.get_f64(r * cols + idx as usize) == v;
            if consistent && v >= threshold {
                hits += 1;
            }
            seen.push(idx as usize);
        }
    }
    let total = rows * k;
    let recall = if total == 0 {
        1.0
    } else {
        hits as f64 / total as f64
    };
    if recall >= 0.99 {
        Outcome::Pass
    } else {
        Outcome::fail(format!(
            "top-k recall {recall:.4} < 0.99 ({hits} of {total} entries)"
        ))
    }
}

/// Unit roundoff of a float type.
fn unit_roundoff(dtype: ElementType) -> f64 {
    let mantissa = dtype.float_format().map_or(52, |f| f.mantissa_bits);
    (-(f64::from(mantissa) + 1.0)).exp2()
}

/// How far a softmax row's sum may be from 1: a few roundings of each
/// element in the compute type, and the f32 accumulation of `n` terms.
pub fn softmax_row_bound(n: usize, dtype: ElementType) -> f64 {
    6.0 * unit_roundoff(dtype) + 2.0 * n as f64 * unit_roundoff(ElementType::F32)
}

/// Each softmax row sums to 1 within a bound derived from the row length and dtype.
#[xla_property(
    ops = [fusion],
    dtypes = [f32, f16, bf16],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    template = program,
    tolerance = exact
)]
pub fn softmax_rows(ctx: &mut CaseContext<'_>) -> Outcome {
    let run = || -> Result<Outcome, Outcome> {
        let pc = program_case(ctx)?;
        let module = pc.build(pc.configuration_name())?;
        let args = pc.inputs(ctx)?;
        let out = ctx.run_on(ctx.backend, &module, &args)?;
        let (rows, cols) = (pc.dims[0] as usize, pc.dims[1] as usize);
        let Some(y) = out.first().filter(|y| y.element_count() == rows * cols) else {
            return Ok(Outcome::fail("softmax output has the wrong size"));
        };
        let bound = softmax_row_bound(cols, pc.dtype);
        for r in 0..rows {
            let s: f64 = (0..cols).map(|c| y.get_f64(r * cols + c)).sum();
            if (s - 1.0).abs() > bound || s.is_nan() {
                return Ok(Outcome::fail(format!(
                    "row {r} sums to {s}, more than {bound:e} from 1"
                )));
            }
        }
        Ok(Outcome::Pass)
    };
    run().unwrap_or_else(|o| o)
}

#[cfg(test)]
mod tests;
