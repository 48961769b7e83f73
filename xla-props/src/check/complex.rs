//! Complex outputs (`c64`, `c128`), judged per component.
//!
//! Each complex output is compared as two real planes (real and imaginary
//! parts) of the component type, with every rule a real output of that type
//! gets (error specs, flushed subnormals, alternatives, ...). A complex
//! function computed element by element (multiply, divide, exp, ...) is not
//! correctly rounded per component on any backend: a component that cancels
//! (`re = ar·br - ai·bi`) carries an error relative to the whole value, not
//! to itself. So a backend declares a budget for a complex opcode at a
//! complex type (`Approximation { op: multiply, dtype: c64, .. }`), read
//! here *normwise*: a component may be off by `ulp` units of the component
//! type's epsilon times the modulus of the reference's value, plus `abs`.
//! For the naive product that bound is a theorem (Brent, Percival and
//! Zimmermann 2007: normwise relative error at most `sqrt(5)·u`, i.e. 2
//! units of epsilon); the others are measured (docs/numerics.md).
//! NaN, infinity and signed-zero class differences are never excused.

use super::numerics::Approximation;
use super::verdict::OutputMismatch;
use crate::hlo::Opcode;
use crate::literal::Literal;

/// Compares one real plane, with the normwise allowance if any.
/// Its first argument is the plane (0: real, 1: imaginary).
pub(super) type ComparePlane<'a> =
    dyn FnMut(usize, &Literal, &Literal, Option<&Normwise>) -> Option<OutputMismatch> + 'a;

/// The module's approximate ops and the backend's declared approximations.
pub(super) type Budgets<'a> = (&'a [Opcode], &'a [Approximation]);

/// The normwise allowance of one complex output, per element.
#[derive(Clone, Debug)]
pub(super) struct Normwise {
    /// `ulp · epsilon` of the component type.
    scale: f64,
    abs: f64,
    /// `|z|` of each reference element.
    moduli: Vec<f64>,
}

impl Normwise {
    /// Whether an absolute component error `err` at element `flat` is
    /// within the budget.
    pub(super) fn excuses(&self, flat: usize, err: f64) -> bool {
        let m = self.moduli.get(flat).copied().unwrap_or(f64::NAN);
        m.is_finite() && err <= self.scale * m + self.abs
    }
}

/// The normwise budget of `expected`'s type: the sum of the budgets of the
/// module's approximate ops declared at that complex type, if any.
fn normwise(expected: &Literal, (ops, approximations): Budgets<'_>) -> Option<Normwise> {
    let dtype = expected.dtype();
    let (ulp, abs) = ops
        .iter()
        .filter_map(|&op| {
            approximations
                .iter()
                .find(|a| a.op == op && a.dtype == dtype)
                .map(|a| a.budget)
        })
        .map(|b| (b.ulp, b.abs))
        .reduce(|(u1, a1), (u2, a2)| (u1 + u2, a1.max(a2)))?;
    let eps = crate::literal::component_type(dtype)?
        .float_format()?
        .epsilon();
    let moduli = expected
        .to_complex_vec()
        .into_iter()
        .map(|(re, im)| re.hypot(im))
        .collect();
    Some(Normwise {
        scale: ulp as f64 * eps,
        abs,
        moduli,
    })
}

/// Compares a complex output as its real and imaginary planes; a mismatch
/// reports the complex type and the worst component mismatches of both
/// planes (each element counted once per differing component).
/// `plane` compares one real plane (the comparator's real path).
pub(super) fn compare_complex_output(
    expected: &Literal,
    actual: &Literal,
    budgets: Budgets<'_>,
    plane: &mut ComparePlane<'_>,
) -> Option<OutputMismatch> {
    let (Some((er, ei)), Some((ar, ai))) = (expected.planes(), actual.planes()) else {
        return None;
    };
    let nw = normwise(expected, budgets);
    let re = plane(0, &er, &ar, nw.as_ref());
    let im = plane(1, &ei, &ai, nw.as_ref());
    let (mut m, other) = match (re, im) {
        (None, None) => return None,
        (Some(m), None) | (None, Some(m)) => (m, None),
        (Some(r), Some(i)) => (r, Some(i)),
    };
    if let Some(o) = other {
        m.count += o.count;
        if o.first_index.flat < m.first_index.flat {
            m.first_index = o.first_index;
        }
        let keep = m.worst.len().max(o.worst.len());
        m.worst.extend(o.worst);
        m.worst
            .sort_by_key(|w| std::cmp::Reverse(w.ulp.unwrap_or(u64::MAX)));
        m.worst.truncate(keep);
    }
    m.dtype = expected.dtype();
    m.expected_fingerprint = expected.fingerprint();
    m.actual_fingerprint = actual.fingerprint();
    Some(m)
}

#[cfg(test)]
mod tests {
    use crate::check::{ErrorBudget, Judge, Numerics, Policy};
    use crate::hlo::{parse_module, ArrayShape, ElementType, Opcode};
    use crate::literal::Literal;

    fn c64(v: &[(f32, f32)]) -> Literal {
        let p = ArrayShape::new(ElementType::F32, vec![v.len() as i64]);
        let re: Vec<f64> = v.iter().map(|z| z.0 as f64).collect();
        let im: Vec<f64> = v.iter().map(|z| z.1 as f64).collect();
        Literal::from_planes(
            &Literal::from_f64s(&p, &re).unwrap(),
            &Literal::from_f64s(&p, &im).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn complex_outputs_are_judged_per_component_with_a_normwise_budget() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = c64[1] parameter(0)\n  y = c64[1] parameter(1)\n  ROOT z = c64[1] multiply(x, y)\n}\n",
        )
        .unwrap();
        // (1 + a i)(1 + b i) = (1 - ab) + (a + b) i; a = b = 1 + 2^-12: the
        // real part cancels to -2^-11 - 2^-24, |z| about 2
        let a = 1.0 + 2f32.powi(-12);
        let args = [c64(&[(1.0, a)]), c64(&[(1.0, a)])];
        let want = crate::reference::evaluate(&m, &args).unwrap().remove(0);
        let (wr, wi) = want.to_complex_vec()[0];
        let exact = Numerics::exact();
        let budget = Numerics::exact().with_approximation(
            Opcode::Multiply,
            ElementType::C64,
            ErrorBudget::ulp(2),
        );
        // the real part off by 2^-24 (many of its own ULPs, under eps·|z|)
        let near = c64(&[(wr as f32 + 2f32.powi(-24), wi as f32)]);
        let judge = |n: &Numerics, got: &Literal| {
            Judge::new(n, &[], Policy::Reference).against_reference(
                &m,
                &args,
                std::slice::from_ref(got),
            )
        };
        assert!(judge(&exact, &want).is_agreement());
        assert!(
            judge(&exact, &near).is_disagreement(),
            "no budget: per component"
        );
        assert!(judge(&budget, &near).is_agreement(), "within 2 eps |z|");
        // off by 2^-18 (32 eps |z|): a bug, whatever the budget
        let far = c64(&[(wr as f32, wi as f32 + 2f32.powi(-18))]);
        assert!(judge(&budget, &far).is_disagreement());
        // a NaN component is never excused
        let nan = c64(&[(f32::NAN, wi as f32)]);
        assert!(judge(&budget, &nan).is_disagreement());
    }
}
