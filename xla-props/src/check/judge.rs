//! `Judge`: the one place where a backend's result is judged. The suite's
//! properties, `xla-props compare`, isolation, the fuzzer and `.hlotest`
//! files all call it, so the same (module, inputs, backend) gets the same
//! verdict and the same reasons wherever it is asked.
//!
//! A judge is built from the backend's `Numerics` and a [`Policy`]. It
//! judges in phases, each only when the one before leaves a mismatch:
//!
//! 1. the cheap comparison: the error specs, and the registry's element
//!    rules (flushed outputs, approximate functions, unstable sorts);
//! 2. the costly evidence of every other admissible legal difference
//!    (`check::legal`): reassociation sums, the reference on flushed inputs
//!    and on variant modules (excess precision, fma, op semantics);
//! 3. the propagated bound: the module's enclosure (`reference::enclose`)
//!    and each variant's, consulted for the elements still rejected;
//! 4. known bugs: a mismatch their models explain is `Verdict::KnownBug`.
//!
//! Every phase only adds ways to accept an element, so an agreement in an
//! early phase is final.

use super::compare::{compare, CompareContext, Rules};
use super::error_spec::ErrorSpec;
use super::excess_witness::{excess_witness_bounds, Aim};
use super::known_bug_verdict::{explained_by_known_bugs, Model};
use super::known_bugs::{KnownBug, KnownBugNote};
use super::legal::{Case, Evidence, LegalDifference, Setting, REGISTRY};
use super::numerics::Numerics;
use super::policy::{EvalFn, Policy};
use super::produced::{both_outputs, Produced};
use super::tolerances::default_error_spec_for_module;
use super::unstable_sort::canonical_unstable_sort;
use super::verdict::{LegalReason, MismatchReport, Verdict};
use crate::hlo::{ElementType, Module, Opcode};
use crate::literal::Literal;
use crate::reference::{enclose, first_order_bounds, witness_bounds, Allowances, Bounds};

/// The one judge. See the module documentation.
///
/// ```
/// use xla_props::check::{Judge, Numerics, Policy};
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n").unwrap();
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let x = Literal::from_f64s(&s, &[1.0, -2.0]).unwrap();
/// let good = Literal::from_f64s(&s, &[-1.0, 2.0]).unwrap();
/// let bad = Literal::from_f64s(&s, &[-1.0, 2.5]).unwrap();
/// let n = Numerics::exact();
/// let judge = Judge::new(&n, &[], Policy::Reference);
/// assert!(judge.against_reference(&m, &[x.clone()], &[good]).is_agreement());
/// assert!(judge.against_reference(&m, &[x], &[bad]).is_disagreement());
/// ```
#[derive(Clone)]
pub struct Judge<'a> {
    numerics: &'a Numerics,
    policy: Policy,
    known_bugs: &'a [KnownBug],
    strict_rounding: bool,
    reference_failure_skips: bool,
    float_spec: ErrorSpec,
    extra: Vec<(LegalReason, Vec<Literal>)>,
}

impl<'a> Judge<'a> {
    /// The one constructor: a judge for a backend with `numerics` and
    /// `known_bugs` (a mismatch or rejection they explain is a known bug;
    /// pass none when the expected side is not the exact reference), under
    /// `policy`, with an exact property tolerance.
    pub fn new(numerics: &'a Numerics, known_bugs: &'a [KnownBug], policy: Policy) -> Self {
        Judge {
            numerics,
            policy,
            known_bugs,
            strict_rounding: false,
            reference_failure_skips: false,
            float_spec: ErrorSpec::exact(),
            extra: Vec::new(),
        }
    }

    /// The program must round exactly as written: no excess precision, no
    /// contraction, and float outputs judged exactly.
    pub fn strict_rounding(mut self, strict: bool) -> Self {
        self.strict_rounding = strict;
        self
    }

    /// A reference that fails (other than by a panic) makes the comparison
    /// a skip, whatever the backend did: for the suite's own cases, whose
    /// inputs are generated legal, so a reference that cannot evaluate one
    /// is a gap of the reference, not a finding about the backend. Without
    /// it (a user's program) the reference failing alone is a finding.
    pub fn reference_failure_skips(mut self, skips: bool) -> Self {
        self.reference_failure_skips = skips;
        self
    }

    /// The property's own tolerance for float outputs (integers stay exact).
    pub fn with_float_spec(mut self, spec: ErrorSpec) -> Self {
        self.float_spec = spec;
        self
    }

    /// Another legal result the caller vouches for (e.g. the fuzzer's other
    /// readings of flushed operands), accepted element by element.
    pub fn with_alternative(mut self, reason: LegalReason, outputs: Vec<Literal>) -> Self {
        self.extra.push((reason, outputs));
        self
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The spec of one output type.
    fn spec(&self, module: &Module, dtype: ElementType) -> ErrorSpec {
        let own = if !dtype.is_float() || self.strict_rounding {
            ErrorSpec::exact()
        } else {
            self.float_spec
        };
        match self.policy {
            Policy::Reference | Policy::Instruction if !self.strict_rounding => {
                own.loosest(default_error_spec_for_module(module, dtype))
            }
            _ => own,
        }
    }

    fn setting(&self) -> Setting<'_> {
        Setting {
            numerics: self.numerics,
            policy: self.policy,
            strict_rounding: self.strict_rounding,
            known_bugs: self.known_bugs,
        }
    }

    /// The one pair classifier: judges two outcomes, failures on either
    /// side first (a side that cannot run the program is a skip, both
    /// failing alike an agreement, one failing a disagreement), then the
    /// outputs.
    pub fn judge(
        &self,
        module: &Module,
        inputs: &[Literal],
        expected: &Produced,
        actual: &Produced,
        reference: &EvalFn<'_>,
    ) -> Verdict {
        if let Some(v) = self.reference_alone(expected) {
            return v;
        }
        if let Produced::Ok(_) = expected {
            if let Some(v) = self.backend_alone(module, actual) {
                return v;
            }
        }
        match both_outputs(expected, actual) {
            Ok((e, a)) => self.outputs(module, inputs, e, a, reference),
            Err(failure) => failure,
        }
    }

    /// The verdict that the reference's side decides alone, before the
    /// backend runs (`judge` asks it first): a reference that cannot run the
    /// program is a skip, one that panicked a failure, one that failed a skip
    /// under `reference_failure_skips`. None when the backend's side counts.
    pub fn reference_alone(&self, expected: &Produced) -> Option<Verdict> {
        match expected {
            Produced::Unsupported(_) | Produced::Panicked(_) => {
                both_outputs(expected, &Produced::Ok(Vec::new())).err()
            }
            Produced::Failed(e) | Produced::Errored { error: e, .. }
                if self.reference_failure_skips =>
            {
                Some(Verdict::Skipped {
                    reason: format!("the reference failed: {e}"),
                })
            }
            _ => None,
        }
    }

    /// The verdict that the backend's side decides alone once the reference
    /// ran (`judge` asks it next): a backend that cannot run the program is
    /// a skip, a compile or execution error that a known bug declares for
    /// `module` a known rejection, any other failure or a panic a finding.
    /// None when the backend produced outputs.
    pub fn backend_alone(&self, module: &Module, actual: &Produced) -> Option<Verdict> {
        if let Produced::Errored { message, error } = actual {
            if let Some(v) = known_rejection(self.known_bugs, module, message, error.clone()) {
                return Some(v);
            }
        }
        both_outputs(&Produced::Ok(Vec::new()), actual).err()
    }

    /// Judges `actual` against the exact reference's outputs for `module` on
    /// `inputs` (evaluated here, as are all the variants).
    pub fn against_reference(
        &self,
        module: &Module,
        inputs: &[Literal],
        actual: &[Literal],
    ) -> Verdict {
        let eval = |m: &Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
        match crate::reference::evaluate(module, inputs) {
            Ok(e) => self.outputs(module, inputs, &e, actual, &eval),
            Err(e) => {
                let expected = match e {
                    crate::reference::EvalError::Unsupported { opcode, reason } => {
                        Produced::Unsupported(format!("unsupported {opcode}: {reason}"))
                    }
                    e => Produced::Failed(e.to_string()),
                };
                self.judge(
                    module,
                    inputs,
                    &expected,
                    &Produced::Ok(actual.to_vec()),
                    &eval,
                )
            }
        }
    }

    /// Judges outputs that both sides produced; `reference` evaluates
    /// variant programs or inputs (only when a phase needs them).
    pub fn outputs(
        &self,
        module: &Module,
        inputs: &[Literal],
        expected: &[Literal],
        actual: &[Literal],
        reference: &EvalFn<'_>,
    ) -> Verdict {
        let setting = self.setting();
        static DEBUG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let debug = *DEBUG.get_or_init(|| std::env::var_os("XLA_PROPS_DEBUG_JUDGE").is_some());
        let t0 = debug.then(std::time::Instant::now);
        let lap = |what: &str| {
            if let Some(t0) = t0 {
                eprintln!("judge: {what} at {:.3} s", t0.elapsed().as_secs_f64());
            }
        };
        let admitted: Vec<_> = REGISTRY.iter().filter(|e| e.admissible(&setting)).collect();
        let case = Case {
            policy: self.policy,
            module,
            inputs,
            expected,
            numerics: self.numerics,
            known_bugs: self.known_bugs,
            reference,
        };
        // phase 1: specs and the cheap element rules
        let (rules, sorted) = cheap_rules(&admitted, &case);
        let canonical = if sorted {
            canonical_unstable_sort(module, expected).zip(canonical_unstable_sort(module, actual))
        } else {
            None
        };
        let unstable_ties = canonical.as_ref().map(|(e, a)| {
            let raw = differing(expected, actual);
            raw.saturating_sub(differing(e, a))
        });
        let (expected, actual) = match &canonical {
            Some((e, a)) => (e.as_slice(), a.as_slice()),
            None => (expected, actual),
        };
        let mut ctx = CompareContext::new()
            .with_inputs(inputs, elementwise(module, inputs, expected))
            .with_approximate_ops(super::module_opcodes(module))
            .with_rules(rules);
        if self.strict_rounding {
            ctx = ctx.strict_rounding();
        }
        for (k, e) in expected.iter().enumerate() {
            ctx = ctx.with_output_spec(k, self.spec(module, e.dtype()));
        }
        for (reason, outs) in &self.extra {
            ctx = ctx.with_alternative(*reason, outs);
        }
        let exact = ErrorSpec::exact();
        let v = with_ties(compare(expected, actual, &exact, &ctx), unstable_ties);
        lap("phase 1 (cheap)");
        if !matches!(v, Verdict::Mismatch(_)) {
            return v;
        }
        // phase 2: the costly evidence
        let case = Case { expected, ..case };
        let costly = costly_evidence(&admitted, &case, &mut ctx, &lap);
        let mut v = v;
        if costly.any {
            let mut full = ctx.clone();
            for (reason, outs) in &costly.owned {
                full = full.with_alternative(*reason, outs);
            }
            for (reason, masks) in &costly.open {
                full = full.with_any_value(*reason, masks);
            }
            v = with_ties(compare(expected, actual, &exact, &full), unstable_ties);
            lap("phase 2 (costly evidence) compared");
            if !matches!(v, Verdict::Mismatch(_)) {
                return v;
            }
            // phase 3: the bound carried through the graph
            if costly.bound && canonical.is_none() {
                let modules: Vec<&Module> =
                    std::iter::once(module).chain(&costly.variants).collect();
                let sides = (expected, actual);
                v = self.enclosed(&modules, inputs, sides, &mut full, unstable_ties, &lap);
                if !matches!(v, Verdict::Mismatch(_)) {
                    return v;
                }
            }
            ctx = full;
        }
        // phase 4: known bugs
        let Some(kb) = admitted
            .iter()
            .find(|e| e.reason() == LegalReason::KnownBug)
        else {
            return v;
        };
        self.known_bugs_explain(
            kb.evidence(&case),
            v,
            &ctx,
            (expected, actual),
            inputs,
            &lap,
        )
    }
}

impl Judge<'_> {
    /// Phase 4: a mismatch every differing element of which the known bugs'
    /// models explain is `Verdict::KnownBug`: first by the models' exact
    /// outputs, then by what the model modules compute under the backend's
    /// own numerics (their enclosures: an approximate function in the
    /// model, or the legal differences of a deep graph around the bug).
    fn known_bugs_explain(
        &self,
        evidence: Vec<Evidence<'_>>,
        v: Verdict,
        ctx: &CompareContext,
        (expected, actual): (&[Literal], &[Literal]),
        inputs: &[Literal],
        lap: &dyn Fn(&str),
    ) -> Verdict {
        let mut models: Vec<(Vec<KnownBugNote>, Model)> = Vec::new();
        let mut modules: Vec<Module> = Vec::new();
        for ev in evidence {
            match ev {
                Evidence::KnownBug(notes, outs, m) => {
                    models.push((notes, Model::Outputs(outs, Vec::new())));
                    modules.push(m);
                }
                Evidence::KnownBugAnyValue(note, masks) => {
                    models.push((vec![note], Model::AnyValue(masks)))
                }
                _ => {}
            }
        }
        let v = explained_by_known_bugs(v, ctx, expected, actual, &models);
        let Verdict::Mismatch(report) = &v else {
            return v;
        };
        if modules.is_empty() {
            return v;
        }
        let mut modules = modules.iter();
        for (_, model) in models.iter_mut() {
            let Model::Outputs(outs, b) = model else {
                continue;
            };
            if let Some(m) = modules.next() {
                *b = self.enclosures_of(m, inputs);
                // and the runs of the model that keep narrow values in f32,
                // aimed at what is still rejected
                let w = self.excess_witness(m, inputs, outs, actual, report);
                for (k, x) in w.into_iter().flatten().enumerate() {
                    b.resize_with(b.len().max(k + 1), Vec::new);
                    b[k].push(x);
                }
            }
        }
        lap("phase 4 model enclosures");
        explained_by_known_bugs(v, ctx, expected, actual, &models)
    }
}

impl Judge<'_> {
    /// Phase 3: the reference's enclosures carried through the graph, the
    /// module's own first (`modules[0]`), each variant's only while elements
    /// are still rejected (each costs a few reference evaluations). Returns
    /// the first verdict that is not a mismatch, or the last mismatch.
    fn enclosed(
        &self,
        modules: &[&Module],
        inputs: &[Literal],
        (expected, actual): (&[Literal], &[Literal]),
        full: &mut CompareContext,
        unstable_ties: Option<u64>,
        lap: &dyn Fn(&str),
    ) -> Verdict {
        let exact = ErrorSpec::exact();
        full.enclosures = vec![Vec::new(); expected.len()];
        full.witnessed = vec![Vec::new(); expected.len()];
        let mut last = None;
        // the enclosures one at a time, compared after each: an element
        // inside any of them is legal, so the verdict is the same as with
        // all of them at once, and a module accepted early is not made to
        // pay for the rest (interval dots of a large module cost minutes);
        // the witness runs last, where every bound fell short (a few
        // reference runs per movable instruction)
        for steps in [self.enclosure_steps(), self.witness_steps()] {
            for m in modules {
                for step in &steps {
                    let Some(bs) = step.bounds(m, inputs) else {
                        continue;
                    };
                    if bs.len() != expected.len() {
                        continue;
                    }
                    let into = match step.kind {
                        StepKind::Witness => &mut full.witnessed,
                        _ => &mut full.enclosures,
                    };
                    for (k, b) in bs.into_iter().enumerate() {
                        into[k].push(b);
                    }
                    lap(step.kind.lap());
                    let v = with_ties(compare(expected, actual, &exact, full), unstable_ties);
                    if !matches!(v, Verdict::Mismatch(_)) {
                        return v;
                    }
                    last = Some(v);
                }
            }
        }
        if let (Some(Verdict::Mismatch(m)), Some(module)) = (&last, modules.first()) {
            if let Some(b) = self.excess_witness(module, inputs, expected, actual, m) {
                for (k, b) in b.into_iter().enumerate() {
                    full.witnessed[k].push(b);
                }
                lap("phase 3 excess witness");
                return with_ties(compare(expected, actual, &exact, full), unstable_ties);
            }
        }
        last.unwrap_or_else(|| with_ties(compare(expected, actual, &exact, full), unstable_ties))
    }

    /// Where the numerics let narrow values stay in f32 anywhere: the
    /// excess-precision witness (`check::excess_witness_bounds`) of
    /// `module`, whose own outputs are `expected`, aimed at every element
    /// `m` still rejects, towards the backend's value.
    fn excess_witness(
        &self,
        module: &Module,
        inputs: &[Literal],
        expected: &[Literal],
        actual: &[Literal],
        m: &MismatchReport,
    ) -> Option<Vec<Bounds>> {
        if !allowances(self.numerics, self.strict_rounding).excess_anywhere
            || self.policy == Policy::Itself
        {
            return None;
        }
        let aims: Vec<Aim> = m
            .outputs
            .iter()
            .flat_map(|o| o.rejected.iter().map(move |&i| (o.output, i)))
            .filter_map(|(k, i)| {
                let (e, a) = (expected.get(k)?, actual.get(k)?);
                if i >= e.element_count() || i >= a.element_count() {
                    return None;
                }
                let (x, y) = (e.get_f64(i), a.get_f64(i));
                (x.is_finite() && y.is_finite() && x != y).then_some(Aim {
                    output: k,
                    element: i,
                    up: y > x,
                    target: y,
                })
            })
            .collect();
        let w = excess_witness_bounds(module, inputs, expected, &aims).ok()??;
        (w.bounds.len() == expected.len()).then_some(w.bounds)
    }
}

impl Judge<'_> {
    /// Per output, the enclosures of `m` on `inputs` under the backend's
    /// numerics: the interval enclosure, and the first-order bound that
    /// stays finite where intervals of dependent operands explode; a
    /// flushing backend flushes everywhere or nowhere, so both modes (the
    /// element may be in either).
    fn enclosures_of(&self, m: &Module, inputs: &[Literal]) -> Vec<Vec<Bounds>> {
        let mut out: Vec<Vec<Bounds>> = Vec::new();
        // a model's witness runs too: what its module computes within the
        // backend's numerics, where the bounds of a deep graph fall short
        for bs in self
            .enclosure_steps()
            .into_iter()
            .chain(self.witness_steps())
            .filter_map(|s| s.bounds(m, inputs))
        {
            out.resize_with(out.len().max(bs.len()), Vec::new);
            for (k, b) in bs.into_iter().enumerate() {
                out[k].push(b);
            }
        }
        out
    }

    /// The enclosures `enclosures_of` computes, as separate steps, cheapest
    /// first: the first-order bound, then the interval enclosure, without
    /// flushing and then (on a flushing backend) with it.
    fn enclosure_steps(&self) -> Vec<EnclosureStep> {
        let flushing = allowances(self.numerics, self.strict_rounding);
        let mut modes = vec![Allowances {
            flush_inputs: Vec::new(),
            flush_outputs: Vec::new(),
            ..flushing.clone()
        }];
        if !flushing.flush_inputs.is_empty() || !flushing.flush_outputs.is_empty() {
            modes.push(flushing);
        }
        modes
            .into_iter()
            .flat_map(|a| {
                [
                    EnclosureStep {
                        kind: StepKind::FirstOrder,
                        allow: a.clone(),
                    },
                    EnclosureStep {
                        kind: StepKind::Interval,
                        allow: a,
                    },
                ]
            })
            .collect()
    }

    /// The witness runs, one per mode the first-order steps take (without
    /// flushing, and on a flushing backend with it).
    fn witness_steps(&self) -> Vec<EnclosureStep> {
        self.enclosure_steps()
            .into_iter()
            .filter(|s| s.kind == StepKind::FirstOrder)
            .map(|s| EnclosureStep {
                kind: StepKind::Witness,
                allow: s.allow,
            })
            .collect()
    }
}

/// One enclosure of a module's outputs (the first-order bound or the
/// interval enclosure), or the hull of its witness runs, under one set of
/// allowances.
struct EnclosureStep {
    kind: StepKind,
    allow: Allowances,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StepKind {
    FirstOrder,
    Interval,
    /// Not an enclosure: legal values it reaches (`reference::witness_bounds`).
    Witness,
}

impl StepKind {
    fn lap(self) -> &'static str {
        match self {
            StepKind::Witness => "phase 3 witness",
            _ => "phase 3 enclosure",
        }
    }
}

impl EnclosureStep {
    fn bounds(&self, m: &Module, inputs: &[Literal]) -> Option<Vec<Bounds>> {
        match self.kind {
            StepKind::FirstOrder => first_order_bounds(m, inputs, &self.allow).ok(),
            StepKind::Interval => enclose(m, inputs, &self.allow).ok(),
            StepKind::Witness => witness_bounds(m, inputs, &self.allow).ok(),
        }
    }
}

/// Phase 1's element rules, from the admissible cheap entries, and whether
/// an unstable sort's outputs compare in canonical order.
fn cheap_rules<'n>(
    admitted: &[&&'static dyn LegalDifference],
    case: &Case<'n, '_>,
) -> (Rules<'n>, bool) {
    let mut rules = Rules::default();
    let mut sorted = false;
    for e in admitted.iter().filter(|e| e.cheap()) {
        for ev in e.evidence(case) {
            match ev {
                Evidence::FlushOutputs(t) => rules.flush_outputs = t,
                Evidence::Approximations(a) => rules.approximations = a,
                Evidence::UnstableSort => sorted = true,
                _ => {}
            }
        }
    }
    (rules, sorted)
}

/// Phase 2's evidence: what every admissible costly entry (known bugs
/// aside) builds.
#[derive(Default)]
struct Costly {
    /// Some entry was asked.
    any: bool,
    /// Other legal outputs, by reason.
    owned: Vec<(LegalReason, Vec<Literal>)>,
    /// Elements that may be any value, by reason.
    open: Vec<(LegalReason, Vec<Vec<bool>>)>,
    /// Variant modules whose enclosures are legal too.
    variants: Vec<Module>,
    /// The propagated bound applies.
    bound: bool,
}

/// Asks every admissible costly entry (known bugs aside) for its evidence;
/// the reassociation rule and its magnitude sums go into `ctx` directly.
fn costly_evidence(
    admitted: &[&&'static dyn LegalDifference],
    case: &Case<'_, '_>,
    ctx: &mut CompareContext<'_>,
    lap: &dyn Fn(&str),
) -> Costly {
    let mut c = Costly::default();
    for e in admitted.iter().filter(|e| !e.cheap()) {
        if e.reason() == LegalReason::KnownBug {
            continue;
        }
        c.any = true;
        let evidence = e.evidence(case);
        lap(e.reason().name());
        for ev in evidence {
            match ev {
                Evidence::Reassociation(sums) => {
                    ctx.rules.reassociation = true;
                    if let Some(s) = sums {
                        *ctx = std::mem::take(ctx).with_magnitude_sums(0, s);
                    }
                }
                Evidence::Outputs(o) => c.owned.push((e.reason(), o)),
                Evidence::AnyValue(m) => c.open.push((e.reason(), m)),
                Evidence::Variant(m) => c.variants.push(m),
                Evidence::PropagatedBound => c.bound = true,
                _ => {}
            }
        }
    }
    c
}

/// The backend's numerics as the interval evaluator's allowances (no
/// elided rounding under `strict_rounding`).
pub(crate) fn allowances(n: &Numerics, strict_rounding: bool) -> Allowances {
    n.allowances(strict_rounding)
}

/// Elements whose bits differ (NaNs by class), over all outputs.
fn differing(e: &[Literal], a: &[Literal]) -> u64 {
    e.iter()
        .zip(a)
        .map(|(x, y)| {
            (0..x.element_count().min(y.element_count()))
                .filter(|&i| {
                    let (p, q) = (x.get_f64(i), y.get_f64(i));
                    !(p.is_nan() && q.is_nan()) && x.get_bits(i) != y.get_bits(i)
                })
                .count() as u64
        })
        .sum()
}

/// Counts the elements an unstable sort's canonical order made equal.
fn with_ties(v: Verdict, ties: Option<u64>) -> Verdict {
    let Some(n) = ties.filter(|&n| n > 0) else {
        return v;
    };
    match v {
        Verdict::Agree(mut a) => {
            a.exact = a.exact.saturating_sub(n);
            *a.legal.entry(LegalReason::UnstableSort).or_insert(0) += n;
            Verdict::Agree(a)
        }
        Verdict::Mismatch(mut r) => {
            r.agreement.exact = r.agreement.exact.saturating_sub(n);
            *r.agreement
                .legal
                .entry(LegalReason::UnstableSort)
                .or_insert(0) += n;
            Verdict::Mismatch(r)
        }
        v => v,
    }
}

/// Whether output element `i` comes from input element `i` (for reporting inputs).
fn elementwise(module: &Module, inputs: &[Literal], expected: &[Literal]) -> bool {
    let Some(n) = expected.first().map(Literal::element_count) else {
        return false;
    };
    module.computations.iter().all(|c| {
        c.instructions.iter().all(|i| {
            i.opcode.is_elementwise()
                || matches!(
                    i.opcode,
                    Opcode::Parameter
                        | Opcode::Constant
                        | Opcode::Broadcast
                        | Opcode::Fusion
                        | Opcode::Call
                        | Opcode::Copy
                )
        })
    }) && inputs
        .iter()
        .all(|a| a.element_count() == n || a.element_count() == 1)
}

/// A compile error that the backend's `known_bugs` declare for `module`
/// (`BugModel::Rejects`, matched on the compile error's `message`):
/// `Verdict::KnownRejection` naming them, with the whole `error`; None when
/// none declares it.
pub fn known_rejection(
    known_bugs: &[KnownBug],
    module: &Module,
    message: &str,
    error: String,
) -> Option<Verdict> {
    let bugs: Vec<KnownBugNote> = known_bugs
        .iter()
        .filter(|b| b.rejects(module, message))
        .map(KnownBug::note)
        .collect();
    (!bugs.is_empty()).then_some(Verdict::KnownRejection { bugs, error })
}

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
/// use xla_props::check::judge_against_reference;
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
    Judge::new(numerics, known_bugs, Policy::Reference)
        .strict_rounding(strict_rounding)
        .with_float_spec(ErrorSpec::exact())
        .outputs(module, inputs, expected, actual, &eval)
}
