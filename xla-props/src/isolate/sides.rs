//! Running both sides of a comparison during isolation, and judging the
//! results: the oracle (the exact reference evaluator or another backend),
//! the backend under test with a run counter; judging itself is the one
//! judge's (`check::Judge`), a mismatch's kind is `Verdict::kind`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::{guarded, run_module, run_reference, Backend, BackendError, Executable};
use crate::check::{judge_against_reference, Judge, Numerics, Policy, Produced, Verdict};
use crate::hlo::Module;
use crate::literal::{Literal, Value};
use crate::reference::Evaluator;

/// The side results are judged against.
pub enum Oracle {
    /// The exact reference evaluator.
    Exact,
    /// Another backend, trusted as the reference.
    Backend(Box<dyn Backend>),
}

impl Oracle {
    /// The oracle's name (`reference` for the exact evaluator).
    pub fn name(&self) -> &str {
        match self {
            Oracle::Exact => "reference",
            Oracle::Backend(b) => b.name(),
        }
    }

    /// Runs `module` on `args`: the expected side of a comparison.
    pub fn run(&self, module: &Module, args: &[Literal]) -> Produced {
        match self {
            Oracle::Exact => run_reference(module, args),
            Oracle::Backend(b) => Produced::from(run_module(b.as_ref(), module, args)),
        }
    }

    /// The value of every entry instruction (by index; None where
    /// unknown); Err is the failure, described.
    pub fn all_values(
        &self,
        module: &Module,
        args: &[Literal],
    ) -> Result<Vec<Option<Value>>, String> {
        match self {
            Oracle::Exact => Evaluator::new()
                .evaluate_all(module, args)
                .map_err(|e| e.to_string()),
            Oracle::Backend(b) => {
                let entry = module.entry_computation();
                let ids: Vec<_> = (0..entry.instructions.len())
                    .map(|k| crate::hlo::InstrId(k as u32))
                    .filter(|&i| !matches!(entry.instr(i).shape, crate::hlo::Shape::Token))
                    .collect();
                let exposed = crate::hlo::rewrite::expose_values(module, &ids);
                let flat = run_module(b.as_ref(), &exposed, args).map_err(|e| e.to_string())?;
                let mut values = vec![None; entry.instructions.len()];
                let mut it = flat.into_iter();
                for &i in &ids {
                    values[i.index()] = Some(rebuild(&entry.instr(i).shape, &mut it));
                }
                Ok(values)
            }
        }
    }

    /// The values inside fused computation of fusion `fusion`, by instruction
    /// name, from one run of `module` (exact oracle only).
    pub fn fused_values(
        &self,
        module: &Module,
        args: &[Literal],
        fusion: &str,
    ) -> Option<HashMap<String, Value>> {
        let Oracle::Exact = self else { return None };
        let mut out: HashMap<String, Value> = HashMap::new();
        {
            let mut ev = Evaluator::new().on_fusion(|fv| {
                if fv.fusion == fusion && out.is_empty() {
                    let comp = module.comp(fv.computation);
                    for (k, v) in fv.values.iter().enumerate() {
                        if let (Some(v), Some(ins)) = (v, comp.instructions.get(k)) {
                            out.insert(ins.name.clone(), v.clone());
                        }
                    }
                }
            });
            ev.evaluate(module, args).ok()?;
        }
        Some(out)
    }
}

/// One ULP of a value of magnitude `x` in a float type (1 for others).
pub(crate) fn ulp_of(l: &Literal, x: f64) -> f64 {
    match l.dtype().float_format() {
        Some(fmt) => {
            let e = if x != 0.0 && x.is_finite() {
                (x.abs().log2().floor() as i32).max(1 - fmt.bias)
            } else {
                1 - fmt.bias
            };
            2f64.powi(e - fmt.mantissa_bits as i32)
        }
        None => 1.0,
    }
}

/// Whether two flat results hold the same bits, leaf by leaf.
pub(crate) fn same_bits(a: &[Literal], b: &[Literal]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits_vec() == y.to_bits_vec())
}

/// Rebuilds a value of `shape` from flattened leaves.
pub(crate) fn rebuild(shape: &crate::hlo::Shape, it: &mut impl Iterator<Item = Literal>) -> Value {
    match shape {
        crate::hlo::Shape::Array(_) => it.next().map_or(Value::Token, Value::Array),
        crate::hlo::Shape::Tuple(items) => {
            Value::Tuple(items.iter().map(|s| rebuild(s, it)).collect())
        }
        crate::hlo::Shape::Token => Value::Token,
    }
}

/// The backend under test, counting its runs.
pub struct Tested<'b> {
    /// The backend.
    pub backend: &'b dyn Backend,
    runs: AtomicU64,
}

impl<'b> Tested<'b> {
    /// Wraps `backend` with a zero run count.
    pub fn new(backend: &'b dyn Backend) -> Self {
        Tested {
            backend,
            runs: AtomicU64::new(0),
        }
    }
    /// Backend runs so far (an execution or a probe each; compiles are not counted).
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }
    /// Counts one run.
    pub fn count(&self) {
        self.runs.fetch_add(1, Ordering::Relaxed);
    }
    /// Compiles `module`, a panic caught as its failure.
    pub fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        guarded(self.backend.name(), || self.backend.compile(module))
    }
    /// Compiles and runs `module` once, a panic in either step caught as
    /// this run's failure.
    pub fn run(&self, module: &Module, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let exe = self.compile(module)?;
        self.count();
        guarded(self.backend.name(), || exe.execute(args))
    }
    /// The backend's name.
    pub fn name(&self) -> &str {
        self.backend.name()
    }
    /// The backend's numerics.
    pub fn numerics(&self) -> Numerics {
        self.backend.numerics()
    }
}

/// Judges `actual` against `expected` for `module` run on `args`: the one
/// judge (`check::Judge`) against the reference, with the backend's numerics.
pub fn judge_outputs(
    module: &Module,
    args: &[Literal],
    expected: &[Literal],
    actual: &[Literal],
    numerics: &Numerics,
) -> Verdict {
    judge_against_reference(module, args, expected, actual, numerics, &[], false)
}

/// Judges the outcome of both sides of one module (the backend's known bugs
/// aside: isolation looks for where a module departs, explained or not).
pub fn judge_module(
    module: &Module,
    args: &[Literal],
    oracle: &Oracle,
    tested: &Tested<'_>,
) -> Verdict {
    let expected = oracle.run(module, args);
    let actual = Produced::from(tested.run(module, args));
    let eval = |m: &Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
    Judge::new(&tested.numerics(), &[], Policy::Reference)
        .judge(module, args, &expected, &actual, &eval)
}

/// The largest float difference between two flat results, in ULP of the
/// larger of the two values.
pub(crate) fn worst_ulp(expected: &[Literal], got: &[Literal]) -> f64 {
    let mut worst = 0.0f64;
    for (e, g) in expected.iter().zip(got) {
        if !e.dtype().is_float() {
            continue;
        }
        for i in 0..e.element_count().min(g.element_count()) {
            let (p, q) = (e.get_f64(i), g.get_f64(i));
            if e.get_bits(i) != g.get_bits(i) && p.is_finite() && q.is_finite() {
                // in ULP of the larger side: a value against an expected
                // zero counts the steps of its own magnitude, not
                // multiples of the smallest subnormal
                worst = worst.max((p - q).abs() / ulp_of(e, p.abs().max(q.abs())));
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;

    /// Compiles, then panics when run.
    struct PanicsOnRun;
    struct Panicking;
    impl Executable for Panicking {
        fn execute(&self, _: &[Literal]) -> Result<Vec<Literal>, BackendError> {
            panic!("the executable fell over")
        }
    }
    impl Backend for PanicsOnRun {
        fn name(&self) -> &str {
            "panics-on-run"
        }
        fn compile(&self, _: &Module) -> Result<Box<dyn Executable>, BackendError> {
            Ok(Box::new(Panicking))
        }
    }

    #[test]
    fn a_panic_in_the_tested_backend_is_that_runs_failure() {
        let m = parse_module("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n").unwrap();
        let tested = Tested::new(&PanicsOnRun);
        let err = tested.run(&m, &[]).unwrap_err();
        assert!(
            matches!(&err, BackendError::Panicked { message, .. } if message.contains("fell over")),
            "{err}"
        );
        assert_eq!(tested.runs(), 1);
        let verdict = judge_module(&m, &[], &Oracle::Exact, &tested);
        assert!(
            verdict.is_disagreement(),
            "a panicking backend agreed: {verdict:?}"
        );
    }
}
