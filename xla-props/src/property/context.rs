//! The case context a property body receives, and the typed outcome it returns.

use std::sync::{Arc, OnceLock};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

use super::build::build_case;
use super::id::CaseId;
use super::spec::{CaseContext, Outcome, ReferenceCache, HISTOGRAM_BUCKETS};
use crate::backend::{reference_error, run_module, Backend};
use crate::check::{Judge, Numerics, Policy, Produced, Verdict};
use crate::hlo::Module;
use crate::inputs::{generate_with_roles, Distribution};
use crate::literal::Literal;
use crate::programs::BuiltCase;

/// The case's inputs: the one input generator, on the catalogue's roles.
fn generate_inputs(
    built: &BuiltCase,
    seed: u64,
    dist: Distribution,
) -> Result<Vec<Literal>, String> {
    generate_with_roles(&built.module, &built.roles, dist, seed).map_err(|e| e.to_string())
}

impl<'a> CaseContext<'a> {
    /// A context for `case` on `backend`; `cache_users` is how many runs
    /// (backends) of this case share its module, inputs and reference result.
    pub fn new(
        case: CaseId,
        backend: &'a dyn Backend,
        reference: &'a dyn Backend,
        cache: &'a ReferenceCache,
        cache_users: usize,
        run_seed: u64,
    ) -> CaseContext<'a> {
        CaseContext {
            case,
            spec: case.key.spec(),
            backend,
            reference,
            cache,
            shared: cache.take(case.key, cache_users),
            run_seed,
            local: None,
            recorded: None,
            numerics: OnceLock::new(),
            direct_reference: false,
            max_ulp: None,
            legal: Default::default(),
            last_verdict: None,
            ulp_histogram: None,
            keep_histogram: true,
            draws: 0,
        }
    }

    /// Uses `numerics` as the backend's promises (the runner computes them once per backend).
    pub fn with_numerics(self, numerics: Arc<Numerics>) -> CaseContext<'a> {
        let _ = self.numerics.set(numerics);
        self
    }

    /// Whether judging records the per-case ULP histogram (default: true).
    pub(crate) fn with_ulp_histogram(mut self, keep: bool) -> CaseContext<'a> {
        self.keep_histogram = keep;
        self
    }

    /// Calls the reference evaluator directly for expected results (when the
    /// reference is [`crate::backend::ReferenceBackend`]), skipping its compiled copy.
    pub(crate) fn with_direct_reference(mut self, direct: bool) -> CaseContext<'a> {
        self.direct_reference = direct;
        self
    }

    /// What the backend under test promises about its arithmetic.
    pub fn numerics(&self) -> &Numerics {
        self.numerics
            .get_or_init(|| Arc::new(self.backend.numerics()))
    }

    /// The deterministic seed of this case (the same on every backend).
    pub fn seed(&self) -> u64 {
        self.case.key.seed(self.run_seed)
    }

    fn built(&self) -> Result<Arc<BuiltCase>, Outcome> {
        if let Some((b, _)) = &self.local {
            return Ok(b.clone());
        }
        let key = self.case.key;
        self.shared
            .built
            .get_or_init(|| build_case(&key).map(Arc::new).map_err(|e| e.to_string()))
            .clone()
            .map_err(Outcome::fail)
    }

    /// The module of this case, built by the catalogue from the case key.
    pub fn module(&mut self) -> Result<&Module, Outcome> {
        self.built()?;
        match &self.local {
            Some((b, _)) => Ok(&b.module),
            None => match self.shared.built.get() {
                Some(Ok(b)) => Ok(&b.module),
                _ => Err(Outcome::fail("no module")),
            },
        }
    }

    /// Replaces the module (a property that builds its own program); inputs are regenerated.
    pub fn set_module(&mut self, built: BuiltCase) {
        self.local = Some((Arc::new(built), None));
    }

    fn inputs_arc(&mut self) -> Result<Arc<Vec<Literal>>, Outcome> {
        let (seed, dist) = (self.seed(), self.case.key.dist);
        if let Some((b, inputs)) = &mut self.local {
            if inputs.is_none() {
                *inputs = Some(Arc::new(
                    generate_inputs(b, seed, dist).map_err(Outcome::fail)?,
                ));
            }
            return inputs.clone().ok_or_else(|| Outcome::fail("no inputs"));
        }
        let built = self.built()?;
        self.shared
            .inputs
            .get_or_init(|| generate_inputs(&built, seed, dist).map(Arc::new))
            .clone()
            .map_err(Outcome::fail)
    }

    /// The generated inputs: seeded from the case key, in each parameter's safe range.
    pub fn inputs(&mut self) -> Result<&[Literal], Outcome> {
        self.inputs_arc()?;
        let inputs = match &self.local {
            Some((_, Some(i))) => i,
            _ => match self.shared.inputs.get() {
                Some(Ok(i)) => i,
                _ => return Err(Outcome::fail("no inputs")),
            },
        };
        Ok(inputs.as_slice())
    }

    /// The case's module and inputs, shared (no copies).
    pub fn prepared(&mut self) -> Result<(Arc<BuiltCase>, Arc<Vec<Literal>>), Outcome> {
        let inputs = self.inputs_arc()?;
        Ok((self.built()?, inputs))
    }

    /// Records the program a property built and ran itself (a template
    /// program), so that a failure's reproducer is that program.
    pub fn record_program(&mut self, module: &Module, args: &[Literal]) {
        self.recorded = Some((module.clone(), args.to_vec()));
    }

    /// The module and inputs (cloned) for a reproducer: what the property
    /// recorded, else the case's.
    pub fn artifacts(&self) -> Option<(Module, Vec<Literal>)> {
        if let Some(r) = &self.recorded {
            return Some(r.clone());
        }
        let (built, inputs) = match &self.local {
            Some((b, Some(i))) => (b.clone(), i.clone()),
            Some((_, None)) => return None,
            None => match (self.shared.built.get(), self.shared.inputs.get()) {
                (Some(Ok(b)), Some(Ok(i))) => (b.clone(), i.clone()),
                _ => return None,
            },
        };
        Some((built.module.clone(), inputs.to_vec()))
    }

    /// The reference result of this case's module and inputs, computed once per case key
    /// (when the property did not replace the module).
    pub fn reference_result(&mut self) -> Result<Arc<Vec<Literal>>, Outcome> {
        let inputs = self.inputs_arc()?;
        let built = self.built()?;
        let compute = || {
            self.cache
                .computed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let result = if self.direct_reference {
                crate::reference::evaluate(&built.module, &inputs).map_err(reference_error)
            } else {
                run_module(self.reference, &built.module, &inputs)
            };
            result.map(Arc::new)
        };
        let r = if self.local.is_some() {
            compute()
        } else {
            self.shared.reference.get_or_init(compute).clone()
        };
        r.map_err(|e| {
            // the one judge decides what a failing reference makes of the case
            let expected = Produced::from(Err::<Vec<Literal>, _>(e));
            let judge =
                Judge::new(self.numerics(), &[], Policy::Reference).reference_failure_skips(true);
            side_outcome(
                "backend vs reference",
                judge.reference_alone(&expected),
                &expected,
            )
        })
    }

    /// Runs a module on a backend; what a failed run makes of the case is the
    /// one judge's (`Judge::backend_alone`): an unsupported op or an
    /// unavailable backend a skip, a declared rejection an expected failure,
    /// any other error or a panic a failure.
    pub fn run_on(
        &self,
        backend: &dyn Backend,
        module: &Module,
        inputs: &[Literal],
    ) -> Result<Vec<Literal>, Outcome> {
        match Produced::from(run_module(backend, module, inputs)) {
            Produced::Ok(outputs) => Ok(outputs),
            actual => {
                let judge = Judge::new(self.numerics(), backend.known_bugs(), Policy::Reference);
                let verdict = judge.backend_alone(module, &actual);
                Err(side_outcome(backend.name(), verdict, &actual))
            }
        }
    }

    /// Compares two runs of the backend under test (layouts, fusions) with the
    /// property's tolerance and the backend's numerics (approximate functions,
    /// flushed outputs, reassociation bounds); records the ULP histogram, the
    /// worst ULP and the verdict for reports.
    pub fn check(&mut self, expected: &[Literal], actual: &[Literal]) -> Verdict {
        self.judge(Policy::Itself, None, expected, actual)
    }

    /// Judges the backend's `actual` outputs of `module` (run on the case's
    /// inputs) against the reference's `expected` with the full tolerance
    /// model: the property's tolerance, loosened to the default error specs
    /// per (op, dtype) of `check::DEFAULT_TOLERANCES` (unless the property is
    /// `strict_rounding`), and every difference the backend's `Numerics`
    /// declares legal (approximate functions within budget, flushed
    /// subnormals, reassociated reductions within `n * eps * sum|x|`, the
    /// reference on flushed inputs, and without intermediate rounding in
    /// fusions unless `strict_rounding`).
    pub fn check_against_reference(
        &mut self,
        module: &Module,
        expected: &[Literal],
        actual: &[Literal],
    ) -> Verdict {
        self.judge(Policy::Reference, Some(module), expected, actual)
    }

    fn judge(
        &mut self,
        policy: Policy,
        module: Option<&Module>,
        expected: &[Literal],
        actual: &[Literal],
    ) -> Verdict {
        let inputs = self.inputs_arc().unwrap_or_default();
        let case_module = match module {
            Some(_) => None,
            None => self.built().ok(),
        };
        let module = match (module, &case_module) {
            (Some(m), _) => Some(m),
            (None, Some(b)) => Some(&b.module),
            (None, None) => None,
        };
        let numerics = self.numerics().clone();
        let reference = self.reference;
        let direct = self.direct_reference;
        let v = match module {
            Some(module) => {
                let j = self.spec.tolerance.judge(
                    &numerics,
                    self.spec.strict_rounding,
                    policy,
                    self.backend.known_bugs(),
                );
                let eval = |m: &Module, args: &[Literal]| {
                    if direct {
                        crate::reference::evaluate(m, args).ok()
                    } else {
                        run_module(reference, m, args).ok()
                    }
                };
                j.outputs(module, &inputs, expected, actual, &eval)
            }
            None => crate::check::compare(
                expected,
                actual,
                &crate::check::ErrorSpec::exact(),
                &crate::check::CompareContext::new(),
            ),
        };
        if self.keep_histogram {
            self.record_ulp_histogram(expected, actual);
        }
        let accepted = match &v {
            Verdict::Agree(a) => Some(a),
            Verdict::Mismatch(r) | Verdict::KnownBug { mismatch: r, .. } => Some(&r.agreement),
            _ => None,
        };
        for (reason, n) in accepted.into_iter().flat_map(|a| a.legal.iter()) {
            *self.legal.entry(*reason).or_insert(0) += n;
        }
        if let Some(u) = max_ulp_of(&v) {
            self.max_ulp = Some(self.max_ulp.map_or(u, |m| m.max(u)));
        }
        self.last_verdict = Some(v.clone());
        v
    }

    /// The worst mismatching element of the last judged comparison, as one
    /// line (output, index, inputs, expected, actual, ULP), when it mismatched.
    pub fn worst_mismatch(&self) -> Option<String> {
        let (Some(Verdict::Mismatch(r)) | Some(Verdict::KnownBug { mismatch: r, .. })) =
            &self.last_verdict
        else {
            return None;
        };
        let o = r.outputs.first()?;
        let m = o.worst.first()?;
        let mut line = format!("output {} at {}: ", o.output, m.index);
        if !m.inputs.is_empty() {
            let ins: Vec<String> = m.inputs.iter().map(|v| v.to_string()).collect();
            line.push_str(&format!("inputs ({}) ", ins.join(", ")));
        }
        line.push_str(&format!("expected {} actual {}", m.expected, m.actual));
        match m.ulp {
            Some(u) => line.push_str(&format!(" ({u} ulp)")),
            None => line.push_str(&format!(" ({})", m.failure.describe())),
        }
        Some(line)
    }

    /// Adds the ULP distances of every float element of `actual` against
    /// `expected` (outputs of equal dtype and size) to the case's histogram.
    /// Class differences (NaN against a number, different infinities) go to
    /// the `nan/inf/sign` bucket. The runner reports it per case.
    pub fn record_ulp_histogram(&mut self, expected: &[Literal], actual: &[Literal]) {
        for (e, a) in expected.iter().zip(actual) {
            let dtype = e.dtype();
            if !dtype.is_float() || a.dtype() != dtype || a.element_count() != e.element_count() {
                continue;
            }
            let h = self.ulp_histogram.get_or_insert([0; HISTOGRAM_BUCKETS]);
            for i in 0..e.element_count() {
                let (eb, ab) = (e.get_bits(i), a.get_bits(i));
                let u = if eb == ab || (e.get_f64(i).is_nan() && a.get_f64(i).is_nan()) {
                    Some(0)
                } else {
                    crate::check::ulp_distance(eb, ab, dtype)
                        .map(|u| u.min(u64::MAX as u128) as u64)
                };
                h[crate::check::histogram_bucket(u)] += 1;
            }
        }
    }

    /// The case's ULP histogram (non-empty buckets, in order), when it compared floats.
    pub fn ulp_histogram(&self) -> Option<Vec<crate::check::HistogramBucket>> {
        self.ulp_histogram.map(|h| {
            h.iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(b, &count)| crate::check::HistogramBucket {
                    ulp: crate::check::histogram_label(b),
                    count,
                })
                .collect()
        })
    }

    /// The common body: the one judge's pair classifier (`Judge::judge`) in
    /// its three steps, each taken only when the one before leaves the case
    /// open, so that the backend does not run when the reference decides
    /// alone and the reference's outputs are not copied: the reference's
    /// side ([`CaseContext::reference_result`]), the backend's side
    /// ([`CaseContext::run_on`]), then the outputs with the full tolerance
    /// model ([`CaseContext::check_against_reference`]).
    pub fn compare_with_reference(&mut self) -> Outcome {
        let expected = match self.reference_result() {
            Ok(r) => r,
            Err(o) => return o,
        };
        let (built, inputs) = match (self.built(), self.inputs_arc()) {
            (Ok(b), Ok(i)) => (b, i),
            (Err(o), _) | (_, Err(o)) => return o,
        };
        let actual = match self.run_on(self.backend, &built.module, &inputs) {
            Ok(a) => a,
            Err(o) => return o,
        };
        let verdict = self.check_against_reference(&built.module, &expected, &actual);
        Outcome::from_verdict("backend vs reference", verdict)
    }

    /// Draws an extra parameter from a proptest strategy, seeded from the case.
    ///
    /// ```
    /// # use xla_props::property::*;
    /// # use xla_props::backend::Unavailable;
    /// let case: CaseId = "vs_reference::add::f32::f32[7]{0}::uniform::interpreter".parse().unwrap();
    /// let b = Unavailable::new("interpreter", "test");
    /// let cache = ReferenceCache::new();
    /// let mut ctx = CaseContext::new(case, &b, &b, &cache, 1, 0);
    /// let (x, y) = (ctx.draw(0u32..1000), ctx.draw(0u32..1000));
    /// let mut again = CaseContext::new(case, &b, &b, &cache, 1, 0);
    /// assert_eq!((x, y), (again.draw(0u32..1000), again.draw(0u32..1000)));
    /// ```
    pub fn draw<S: Strategy>(&mut self, strategy: S) -> S::Value {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.seed().to_le_bytes());
        seed[8..16].copy_from_slice(&self.draws.to_le_bytes());
        self.draws += 1;
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let mut runner = TestRunner::new_with_rng(proptest::test_runner::Config::default(), rng);
        loop {
            if let Ok(tree) = strategy.new_tree(&mut runner) {
                return tree.current();
            }
        }
    }
}

/// The largest ULP distance among the elements a verdict compared (accepted
/// or not), when it compared floats.
fn max_ulp_of(v: &Verdict) -> Option<u64> {
    match v {
        Verdict::Agree(a) => Some(a.max_ulp),
        Verdict::Mismatch(r) | Verdict::KnownBug { mismatch: r, .. } => Some(
            r.outputs
                .iter()
                .flat_map(|o| o.worst.iter().filter_map(|m| m.ulp))
                .chain([r.agreement.max_ulp])
                .max()
                .unwrap_or(0),
        ),
        _ => None,
    }
}

/// The outcome of a case that one side's failure decides: the judge's
/// verdict on that side alone (`Judge::reference_alone`/`backend_alone`),
/// which every failed side has; a failure naming the side's error if not.
fn side_outcome(what: &str, verdict: Option<Verdict>, side: &Produced) -> Outcome {
    match verdict {
        Some(v) => Outcome::from_verdict(what, v),
        None => Outcome::fail(format!("{what}: {}", side.failure().unwrap_or_default())),
    }
}
