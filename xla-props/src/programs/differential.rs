//! Glue for program properties and the fuzzer: run a program on the reference
//! and on a backend, and judge the two with the full tolerance model
//! (`check`): the same judgement `xla-props compare` makes.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::backend::{Backend, BackendError};
use crate::check::{
    context_for_module, default_error_spec_for_module, excess_precision_variant,
    flush_subnormal_inputs, judge, AlternativeKind, ErrorSpec, Numerics, Outcome, Verdict,
};
use crate::hlo::Module;
use crate::literal::Literal;

/// What one side of a run produced.
#[derive(Clone, Debug, PartialEq)]
pub enum RunResult {
    /// The outputs, tuples flattened.
    Ok(Vec<Literal>),
    /// An error (or a panic), described.
    Failed(String),
    /// The side cannot run this program.
    Unsupported(String),
}

impl RunResult {
    pub(crate) fn outcome(&self) -> Outcome<'_> {
        match self {
            RunResult::Ok(v) => Outcome::Ok(v),
            RunResult::Failed(e) => Outcome::Failed(e),
            RunResult::Unsupported(e) => Outcome::Unsupported(e),
        }
    }
    /// The outputs, when it ran.
    pub fn outputs(&self) -> Option<&[Literal]> {
        match self {
            RunResult::Ok(v) => Some(v),
            _ => None,
        }
    }
}

fn from_backend(r: Result<Vec<Literal>, BackendError>) -> RunResult {
    match r {
        Ok(v) => RunResult::Ok(v),
        Err(e @ BackendError::Unsupported { .. }) => RunResult::Unsupported(e.to_string()),
        Err(e) => RunResult::Failed(e.to_string()),
    }
}

/// Runs `module` on `backend`; a panic is a failure of this run, not of the caller.
pub fn run_backend(backend: &dyn Backend, module: &Module, args: &[Literal]) -> RunResult {
    catch_unwind(AssertUnwindSafe(|| {
        from_backend(backend.compile(module).and_then(|exe| exe.execute(args)))
    }))
    .unwrap_or_else(|_| RunResult::Failed(format!("{} panicked", backend.name())))
}

/// Runs `module` on the exact reference evaluator.
pub fn run_reference(module: &Module, args: &[Literal]) -> RunResult {
    match catch_unwind(AssertUnwindSafe(|| {
        crate::reference::evaluate(module, args)
    })) {
        Ok(Ok(v)) => RunResult::Ok(v),
        Ok(Err(e @ crate::reference::EvalError::Unsupported { .. })) => {
            RunResult::Unsupported(e.to_string())
        }
        Ok(Err(e)) => RunResult::Failed(e.to_string()),
        Err(_) => RunResult::Failed("the reference panicked".to_string()),
    }
}

/// The error spec of one output of a multi-op program: the loosest default
/// spec of its ops, widened for the rounding of every intermediate that the
/// error passes through: two ULP per arithmetic instruction (at most 64), and
/// an absolute floor of four epsilons of the output's largest finite magnitude
/// (cancellation after a rounded intermediate, e.g. `x - mean`).
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType::F32, ModuleBuilder, Opcode, Shape};
/// use xla_props::literal::Literal;
/// use xla_props::programs::program_error_spec;
/// let m = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![2]))?;
///         let y = b.binary(Opcode::Multiply, x, x)?;
///         b.binary(Opcode::Subtract, y, x)
///     })
///     .unwrap();
/// let out = Literal::from_f64s(&ArrayShape::new(F32, vec![2]), &[4.0, -2.0]).unwrap();
/// let spec = program_error_spec(&m, &out);
/// assert_eq!(spec.ulp, 4);
/// assert_eq!(spec.abs, 16.0 * f32::EPSILON as f64);
/// ```
pub fn program_error_spec(module: &Module, output: &Literal) -> ErrorSpec {
    let dtype = output.dtype();
    let base = default_error_spec_for_module(module, dtype);
    let Some(fmt) = dtype.float_format() else {
        return base;
    };
    let arithmetic = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| {
            i.opcode.is_elementwise()
                || matches!(
                    i.opcode,
                    crate::hlo::Opcode::Reduce
                        | crate::hlo::Opcode::Dot
                        | crate::hlo::Opcode::Convolution
                        | crate::hlo::Opcode::Scatter
                )
        })
        .count() as u64;
    let magnitude = (0..output.element_count())
        .map(|i| output.get_f64(i).abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let eps = (-f64::from(fmt.mantissa_bits)).exp2();
    base.loosest(ErrorSpec {
        abs: 4.0 * eps * magnitude,
        rel: 0.0,
        ulp: (2 * arithmetic).min(64),
        strict_signed_zeros: false,
    })
}

/// Judges `actual` (from a backend with `numerics`) against `expected` for `module`
/// run on `args`, with the default error specs and the alternatives the
/// numerics make admissible (flushed inputs, excess precision unless `strict_rounding`).
pub fn judge_outputs(
    module: &Module,
    args: &[Literal],
    expected: &RunResult,
    actual: &RunResult,
    numerics: &Numerics,
    strict_rounding: bool,
) -> Verdict {
    let flushed = flush_subnormal_inputs(args, numerics)
        .and_then(|a| run_reference(module, &a).outputs().map(<[Literal]>::to_vec));
    let excess = (numerics.excess_precision_in_fusions && !strict_rounding)
        .then(|| excess_precision_variant(module))
        .flatten()
        .and_then(|m| run_reference(&m, args).outputs().map(<[Literal]>::to_vec));
    let mut ctx = context_for_module(module, args);
    if strict_rounding {
        ctx = ctx.strict_rounding();
    }
    if let Some(f) = &flushed {
        ctx = ctx.with_alternative(AlternativeKind::FlushedInputs, f);
    }
    if let Some(x) = &excess {
        ctx = ctx.with_alternative(AlternativeKind::ExcessPrecision, x);
    }
    if let Some(outs) = expected.outputs() {
        for (k, l) in outs.iter().enumerate() {
            ctx = ctx.with_output_spec(k, program_error_spec(module, l));
        }
    }
    judge(
        expected.outcome(),
        actual.outcome(),
        &ErrorSpec::exact(),
        numerics,
        &ctx,
    )
}

/// A program run on the reference and on a backend, and the verdict.
#[derive(Clone, Debug)]
pub struct Differential {
    /// The reference's result.
    pub expected: RunResult,
    /// The backend's result.
    pub actual: RunResult,
    /// The judgement.
    pub verdict: Verdict,
}

/// Runs `module` on the reference and on `backend` and judges the results.
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// use xla_props::literal::Literal;
/// use xla_props::programs::differential;
/// let m = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![3]))?;
///         b.binary(Opcode::Add, x, x)
///     })
///     .unwrap();
/// let args = [Literal::zeros(m.parameter_shapes()[0].as_array().unwrap()).unwrap()];
/// let d = differential(&Interpreter::default(), &m, &args, false);
/// assert!(d.verdict.is_agreement());
/// ```
pub fn differential(
    backend: &dyn Backend,
    module: &Module,
    args: &[Literal],
    strict_rounding: bool,
) -> Differential {
    let expected = run_reference(module, args);
    let actual = run_backend(backend, module, args);
    let verdict = judge_outputs(
        module,
        args,
        &expected,
        &actual,
        &backend.numerics(),
        strict_rounding,
    );
    Differential {
        expected,
        actual,
        verdict,
    }
}
