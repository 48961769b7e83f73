//! The suite's judgement as a library call, for code outside the runner
//! (`xla-props compare`, tests that run whole modules such as the shared
//! corpus): the same full tolerance model a property case gets.

use super::judge::{judge_for, Against};
use super::spec::Tolerance;
use crate::check::{KnownBug, Numerics, Verdict};
use crate::hlo::Module;
use crate::literal::Literal;

/// Judges a backend's outputs (`actual`) for `module` on `inputs` against the
/// exact reference's (`expected`), with the backend's declared `numerics`:
/// default error specs per (op, dtype), reassociation bounds and the legal
/// alternatives the reference evaluates on demand (flushed inputs, excess
/// precision unless `strict_rounding`), and the backend's `known_bugs`
/// (a mismatch they fully explain is `Verdict::KnownBug`), exactly as
/// `vs_reference` judges.
///
/// ```
/// use xla_props::check::Numerics;
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::property::judge_against_reference;
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n").unwrap();
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let x = Literal::from_f64s(&s, &[1.0, -2.0]).unwrap();
/// let good = Literal::from_f64s(&s, &[-1.0, 2.0]).unwrap();
/// let bad = Literal::from_f64s(&s, &[-1.0, 2.5]).unwrap();
/// let n = Numerics::exact();
/// assert!(judge_against_reference(&m, &[x.clone()], &[good.clone()], &[good.clone()], &n, &[], false).is_agreement());
/// assert!(judge_against_reference(&m, &[x], &[good], &[bad], &n, &[], false).is_disagreement());
/// ```
pub fn judge_against_reference(
    module: &Module,
    inputs: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
    numerics: &Numerics,
    known_bugs: &[KnownBug],
    strict_rounding: bool,
) -> Verdict {
    let eval = |m: &Module, args: &[Literal]| crate::reference::evaluate(m, args).ok();
    judge_for(
        numerics,
        Tolerance::Exact,
        strict_rounding,
        Against::Reference,
        known_bugs,
    )
    .outputs(module, inputs, expected, actual, &eval)
}
