//! The comparator: expected (reference) outputs against actual (backend)
//! outputs, under an `ErrorSpec` and the backend's `Numerics`.

use super::error_spec::{ElementCheck, ElementFailure, ErrorSpec};
use super::ulp::{classify, ulp_distance, FloatClass};
use super::verdict::{
    histogram_bucket, histogram_label, Agreement, ElementBound, ElementIndex, ElementMismatch,
    ElementValue, HistogramBucket, LegalReason, MismatchReport, OutputMismatch, Verdict,
};
use crate::hlo::{ElementType, Opcode};
use crate::literal::Literal;
use crate::reference::Bounds;

/// Another result the backend may legally return instead of the reference's,
/// with the reason that makes it legal (its admissibility is decided by the
/// registry of legal differences, `check::legal`, before it gets here).
#[derive(Clone, Debug)]
pub(crate) struct Alternative<'a> {
    /// Why it is legal.
    pub reason: LegalReason,
    /// Its outputs, shaped like the expected outputs.
    pub outputs: &'a [Literal],
}

/// The element rules the comparator applies without evaluating anything,
/// as admitted by the registry of legal differences.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Rules<'a> {
    /// Types whose subnormal results may be written as zero.
    pub flush_outputs: &'a [ElementType],
    /// Declared budgets of approximate functions (applied to the ops in
    /// `CompareContext::approximate_ops`).
    pub approximations: &'a [super::numerics::Approximation],
    /// Reductions may be reassociated (magnitude sums and error bounds apply).
    pub reassociation: bool,
}

#[cfg(test)]
impl Rules<'_> {
    /// Every element rule `n` declares (for the comparator's own tests).
    pub(crate) fn all_of(n: &super::numerics::Numerics) -> Rules<'_> {
        Rules {
            flush_outputs: &n.flush_outputs,
            approximations: &n.approximations,
            reassociation: n.reassociates_reductions,
        }
    }
}

/// The comparator with every element rule of `n` in force (tests only).
#[cfg(test)]
pub(crate) fn compare_n(
    expected: &[Literal],
    actual: &[Literal],
    spec: &ErrorSpec,
    n: &super::numerics::Numerics,
    ctx: &CompareContext<'_>,
) -> Verdict {
    let mut ctx = ctx.clone();
    ctx.rules = Rules::all_of(n);
    compare(expected, actual, spec, &ctx)
}

pub(crate) use super::magnitude_sums::root_reduction_sums;
pub use super::magnitude_sums::MagnitudeSums;

/// Everything the comparator needs besides the two results.
#[derive(Clone, Debug)]
pub(crate) struct CompareContext<'a> {
    /// The arguments (for reporting inputs at a mismatching index).
    pub inputs: &'a [Literal],
    /// Whether output element `i` was computed from input element `i` (or a scalar input).
    pub elementwise: bool,
    /// Alternative legal expected results.
    pub alternatives: Vec<Alternative<'a>>,
    /// Per output, the elements that may legally be any value (for the
    /// reason given): what the specification leaves open, or a known bug
    /// whose wrong value is not deterministic.
    pub any_value: Vec<(LegalReason, &'a [Vec<bool>])>,
    /// Magnitude sums per output (None for outputs that are not reductions).
    pub magnitude_sums: Vec<Option<MagnitudeSums>>,
    /// Ops in the program whose approximation budgets (from `Numerics`) apply.
    pub approximate_ops: Vec<Opcode>,
    /// The property forbids eliding roundings (no excess precision accepted).
    pub strict_rounding: bool,
    /// How many worst mismatches to report per output.
    pub worst: usize,
    /// Per-output specs overriding the one passed to [`compare`] (outputs of
    /// different types need bounds in their own units).
    pub output_specs: Vec<Option<ErrorSpec>>,
    /// The element rules in force.
    pub rules: Rules<'a>,
    /// Per output, enclosures of every legal value (`reference::enclose`,
    /// on the module and on its admitted variants): an element inside one
    /// is legal by the propagated bound. The first is the module's own and
    /// is shown with a mismatch.
    pub enclosures: Vec<Vec<Bounds>>,
    /// Per output, the hulls of witness runs (`reference::witness_bounds`):
    /// an element inside one is between outputs that runs within the
    /// declared numerics produce. Not enclosures: never shown as a bound.
    pub witnessed: Vec<Vec<Bounds>>,
}

impl Default for CompareContext<'_> {
    fn default() -> Self {
        CompareContext {
            inputs: &[],
            elementwise: false,
            alternatives: Vec::new(),
            any_value: Vec::new(),
            magnitude_sums: Vec::new(),
            approximate_ops: Vec::new(),
            strict_rounding: false,
            worst: 8,
            output_specs: Vec::new(),
            rules: Rules::default(),
            enclosures: Vec::new(),
            witnessed: Vec::new(),
        }
    }
}

impl<'a> CompareContext<'a> {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the inputs and whether the computation is elementwise.
    pub fn with_inputs(mut self, inputs: &'a [Literal], elementwise: bool) -> Self {
        self.inputs = inputs;
        self.elementwise = elementwise;
        self
    }
    /// Adds an alternative expected result, legal for `reason`.
    pub fn with_alternative(mut self, reason: LegalReason, outputs: &'a [Literal]) -> Self {
        self.alternatives.push(Alternative { reason, outputs });
        self
    }
    /// Accepts any value, for `reason`, at the elements `masks` marks (one
    /// mask per output, in flat element order).
    pub fn with_any_value(mut self, reason: LegalReason, masks: &'a [Vec<bool>]) -> Self {
        self.any_value.push((reason, masks));
        self
    }
    /// Sets the element rules.
    pub fn with_rules(mut self, rules: Rules<'a>) -> Self {
        self.rules = rules;
        self
    }
    /// Sets the magnitude sums of output `output`.
    pub fn with_magnitude_sums(mut self, output: usize, sums: MagnitudeSums) -> Self {
        set_output(&mut self.magnitude_sums, output, sums);
        self
    }
    /// Sets the ops whose approximation budgets apply.
    pub fn with_approximate_ops(mut self, ops: impl IntoIterator<Item = Opcode>) -> Self {
        self.approximate_ops = ops.into_iter().collect();
        self
    }
    /// Sets the spec of output `output`, overriding the common one.
    pub fn with_output_spec(mut self, output: usize, spec: ErrorSpec) -> Self {
        set_output(&mut self.output_specs, output, spec);
        self
    }
    /// The context for plane `k` of complex output `out` (of `n` elements):
    /// the output's magnitude sums replaced by that plane's (a complex sum's
    /// bound is per component; sums not laid out per plane bound no
    /// component and are dropped). None when the output has no sums.
    fn plane(&self, out: usize, k: usize, n: usize) -> Option<CompareContext<'a>> {
        let sums = self.magnitude_sums.get(out)?.as_ref()?;
        let mut own = self.clone();
        own.magnitude_sums[out] = sums.plane(k, n);
        Some(own)
    }
    /// Marks the property `strict_rounding`.
    pub fn strict_rounding(mut self) -> Self {
        self.strict_rounding = true;
        self
    }
}

/// Compares expected outputs with actual outputs element by element.
///
/// An element is accepted when it is equal (NaN by class, zeros by sign when
/// strict), within `spec`, or differs only in a way `numerics` declares
/// legal: a flushed subnormal result, an approximate function's budget, the
/// reassociation bound, or a match with an admissible alternative result.
pub(crate) fn compare(
    expected: &[Literal],
    actual: &[Literal],
    spec_all: &ErrorSpec,
    ctx: &CompareContext<'_>,
) -> Verdict {
    if expected.len() != actual.len() {
        return Verdict::ShapeMismatch {
            detail: format!(
                "the reference returned {} outputs, the backend {}",
                expected.len(),
                actual.len()
            ),
        };
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e.dtype() != a.dtype() || e.dims() != a.dims() {
            return Verdict::ShapeMismatch {
                detail: format!(
                    "output {i}: the reference returned {}, the backend {}",
                    e.shape(),
                    a.shape()
                ),
            };
        }
    }
    let mut agreement = Agreement::default();
    let mut outputs = Vec::new();
    let mut count = 0u64;
    for (out, (e, a)) in expected.iter().zip(actual).enumerate() {
        let spec = ctx.output_specs.get(out).copied().flatten();
        let spec = spec.as_ref().unwrap_or(spec_all);
        if let Some(m) = compare_output(out, e, a, spec, ctx, &mut agreement) {
            count += m.count;
            outputs.push(m);
        }
    }
    if outputs.is_empty() {
        Verdict::Agree(agreement)
    } else {
        let elements = expected.iter().map(|l| l.element_count() as u64).sum();
        Verdict::Mismatch(Box::new(MismatchReport {
            count,
            elements,
            outputs,
            agreement,
        }))
    }
}

struct ElementJudge<'c, 'a> {
    out: usize,
    dtype: ElementType,
    spec: &'c ErrorSpec,
    ctx: &'c CompareContext<'a>,
    approx: Option<(u64, f64)>,
    normwise: Option<&'c super::complex::Normwise>,
}

impl ElementJudge<'_, '_> {
    /// Ok(None): equal; Ok(Some(reason)): legal difference; Err: a mismatch.
    fn element(&self, flat: usize, e: u64, a: u64) -> Result<Option<LegalReason>, ElementFailure> {
        let failure = match self.spec.check(e, a, self.dtype) {
            ElementCheck::Equal => return Ok(None),
            ElementCheck::Within => return Ok(Some(LegalReason::WithinErrorSpec)),
            ElementCheck::Fails(f) => f,
        };
        if self.flushed_output(e, a) {
            return Ok(Some(LegalReason::FlushedSubnormalOutput));
        }
        if failure == ElementFailure::OutOfTolerance {
            if let Some((ulp, abs)) = self.approx {
                let d = ulp_distance(e, a, self.dtype).unwrap_or(u128::MAX);
                if d <= ulp as u128 || abs_error(e, a, self.dtype).is_some_and(|x| x <= abs) {
                    return Ok(Some(LegalReason::ApproximateFunction));
                }
            }
            if let Some(n) = self.normwise {
                if abs_error(e, a, self.dtype).is_some_and(|x| n.excuses(flat, x)) {
                    return Ok(Some(LegalReason::ApproximateFunction));
                }
            }
        }
        if self.ctx.rules.reassociation {
            if let Some(Some(sums)) = self.ctx.magnitude_sums.get(self.out) {
                let fmt = self.dtype.float_format();
                let value = |b| fmt.map_or(0.0, |f| crate::literal::bits_to_f64(b, &f));
                if fmt.is_some() && sums.excuses(flat, value(e), value(a)) {
                    return Ok(Some(LegalReason::Reassociation));
                }
                // the sign of a zero sum depends on the order and on the
                // accumulator's start (+0 + -0 = +0): not so for a product
                if failure == ElementFailure::SignedZero && !sums.product {
                    return Ok(Some(LegalReason::Reassociation));
                }
            }
        }
        if self.ctx.rules.reassociation
            && matches!(
                failure,
                ElementFailure::OutOfTolerance | ElementFailure::SignedZero
            )
        {
            let bound = match self.ctx.magnitude_sums.get(self.out) {
                Some(Some(sums)) => Some(sums.bound(flat, self.dtype)),
                _ => None,
            };
            if let Some(bound) = bound.filter(|b| *b > 0.0) {
                let bound = bound.max(self.spec.abs);
                if abs_error(e, a, self.dtype).is_some_and(|x| x <= bound) {
                    return Ok(Some(LegalReason::Reassociation));
                }
            }
        }
        for (reason, masks) in &self.ctx.any_value {
            if masks.get(self.out).and_then(|m| m.get(flat)) == Some(&true) {
                return Ok(Some(*reason));
            }
        }
        for alt in &self.ctx.alternatives {
            let Some(lit) = alt.outputs.get(self.out) else {
                continue;
            };
            if lit.dtype() != self.dtype || lit.element_count() <= flat {
                continue;
            }
            let alt_bits = lit.get_bits(flat);
            if self.spec.accepts(alt_bits, a, self.dtype)
                || self.flushed_output(alt_bits, a)
                || self.zero_sum_sign(alt_bits, a)
            {
                return Ok(Some(alt.reason));
            }
        }
        if let Some(all) = self.ctx.enclosures.get(self.out) {
            if all.iter().any(|b| {
                b.len() > flat
                    && b.lo.dtype() == self.dtype
                    && b.is_bounded(flat)
                    && b.contains(flat, a)
            }) {
                return Ok(Some(LegalReason::PropagatedBound));
            }
        }
        if let Some(all) = self.ctx.witnessed.get(self.out) {
            if all
                .iter()
                .any(|b| b.len() > flat && b.lo.dtype() == self.dtype && b.contains(flat, a))
            {
                return Ok(Some(LegalReason::Witnessed));
            }
        }
        Err(failure)
    }

    /// Both are zeros of a reassociated sum: the sign of a zero sum depends
    /// on the order and on the accumulator's start (`+0 + -0 = +0`), e.g. a
    /// dot of a flushed `-0` term is `-0` on XLA CPU and `+0` in the
    /// reference's accumulator.
    fn zero_sum_sign(&self, e: u64, a: u64) -> bool {
        let Some(fmt) = self.dtype.float_format() else {
            return false;
        };
        self.ctx.rules.reassociation
            && matches!(self.ctx.magnitude_sums.get(self.out), Some(Some(s)) if !s.product)
            && classify(e, &fmt) == FloatClass::Zero
            && classify(a, &fmt) == FloatClass::Zero
    }

    fn flushed_output(&self, e: u64, a: u64) -> bool {
        let Some(fmt) = self.dtype.float_format() else {
            return false;
        };
        if !self.ctx.rules.flush_outputs.contains(&self.dtype) {
            return false;
        }
        if classify(e, &fmt) != FloatClass::Subnormal || classify(a, &fmt) != FloatClass::Zero {
            return false;
        }
        let sign = 1u64 << (fmt.bit_width() - 1);
        !self.spec.strict_signed_zeros || (e & sign) == (a & sign)
    }
}

/// Sets entry `output` of a per-output list (`None` for the outputs not set).
fn set_output<T: Clone>(per_output: &mut Vec<Option<T>>, output: usize, value: T) {
    if per_output.len() <= output {
        per_output.resize(output + 1, None);
    }
    per_output[output] = Some(value);
}

fn abs_error(e: u64, a: u64, dtype: ElementType) -> Option<f64> {
    let (x, y) = match dtype.float_format() {
        Some(fmt) => (
            crate::literal::bits_to_f64(e, &fmt),
            crate::literal::bits_to_f64(a, &fmt),
        ),
        None => (
            super::ulp::int_value(e, dtype) as f64,
            super::ulp::int_value(a, dtype) as f64,
        ),
    };
    let d = (x - y).abs();
    d.is_finite().then_some(d)
}

fn element_value(lit: &Literal, i: usize) -> ElementValue {
    ElementValue::new(lit.get_bits(i), lit.get_f64(i), lit.dtype())
}

fn compare_output(
    out: usize,
    expected: &Literal,
    actual: &Literal,
    spec: &ErrorSpec,
    ctx: &CompareContext<'_>,
    agreement: &mut Agreement,
) -> Option<OutputMismatch> {
    if expected.dtype().is_complex() {
        let count = expected.element_count();
        let f = &mut |k: usize, e: &_, a: &_, n: Option<&_>| {
            // each plane is judged with its own magnitude sums
            let own = ctx.plane(out, k, count);
            compare_plane(out, e, a, spec, own.as_ref().unwrap_or(ctx), agreement, n)
        };
        let b = (ctx.approximate_ops.as_slice(), ctx.rules.approximations);
        return super::complex::compare_complex_output(expected, actual, b, f);
    }
    compare_plane(out, expected, actual, spec, ctx, agreement, None)
}

/// The summed budgets `(ulp, abs)` of the approximate functions the case
/// applies whose result type is `dtype`, or None.
fn approximation_budget(ctx: &CompareContext<'_>, dtype: ElementType) -> Option<(u64, f64)> {
    ctx.approximate_ops
        .iter()
        .filter_map(|&op| {
            ctx.rules
                .approximations
                .iter()
                .find(|a| {
                    // the real result of a complex `abs`: its operand's type
                    let of_complex = a.op == Opcode::Abs
                        && crate::literal::component_type(a.dtype) == Some(dtype);
                    a.op == op && (a.dtype == dtype || of_complex)
                })
                .map(|a| a.budget)
        })
        .map(|b| (b.ulp, b.abs))
        .reduce(|(u1, a1), (u2, a2)| (u1 + u2, a1.max(a2)))
}

/// One real output, or one plane of a complex output (`normwise`: `check::complex`).
pub(super) fn compare_plane(
    out: usize,
    expected: &Literal,
    actual: &Literal,
    spec: &ErrorSpec,
    ctx: &CompareContext<'_>,
    agreement: &mut Agreement,
    normwise: Option<&super::complex::Normwise>,
) -> Option<OutputMismatch> {
    let dtype = expected.dtype();
    let approx = approximation_budget(ctx, dtype);
    let judge = ElementJudge {
        out,
        dtype,
        spec,
        ctx,
        approx,
        normwise,
    };
    let n = expected.element_count();
    let mut histogram = [0u64; 35];
    let mut mismatches: Vec<(ElementFailure, Option<u128>, usize)> = Vec::new();
    let mut count = 0u64;
    let mut first = None;
    let mut rejected = Vec::new();
    let keep = ctx.worst.max(1);
    for i in 0..n {
        let (e, a) = (expected.get_bits(i), actual.get_bits(i));
        let ulp = ulp_distance(e, a, dtype);
        let result = judge.element(i, e, a);
        let class_failure = matches!(
            result,
            Err(ElementFailure::NanClass | ElementFailure::Infinity | ElementFailure::SignedZero)
        );
        let bucket_ulp = if class_failure {
            None
        } else {
            ulp.map(|u| u.min(u64::MAX as u128) as u64)
        };
        histogram[histogram_bucket(bucket_ulp)] += 1;
        agreement.elements += 1;
        match result {
            Ok(None) => agreement.exact += 1,
            Ok(Some(reason)) => {
                *agreement.legal.entry(reason).or_insert(0) += 1;
                if dtype.is_float() {
                    if let Some(u) = ulp {
                        agreement.max_ulp = agreement.max_ulp.max(u.min(u64::MAX as u128) as u64);
                    }
                }
            }
            Err(f) => {
                agreement.elements -= 1;
                count += 1;
                first.get_or_insert(i);
                rejected.push(i);
                mismatches.push((f, ulp, i));
                if mismatches.len() >= keep * 8 {
                    sort_worst(&mut mismatches);
                    mismatches.truncate(keep);
                }
            }
        }
    }
    let first = first?;
    sort_worst(&mut mismatches);
    mismatches.truncate(keep);
    let dims = expected.dims().to_vec();
    let worst = mismatches
        .into_iter()
        .map(|(failure, ulp, i)| ElementMismatch {
            index: ElementIndex::new(i, &dims),
            expected: element_value(expected, i),
            actual: element_value(actual, i),
            ulp: ulp.map(|u| u.min(u64::MAX as u128) as u64),
            abs_error: abs_error(expected.get_bits(i), actual.get_bits(i), dtype),
            failure,
            inputs: inputs_at(ctx, i, n),
            bound: ctx
                .enclosures
                .get(out)
                .and_then(|all| element_bound(all, i, dtype)),
        })
        .collect();
    let histogram = histogram
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(b, &count)| HistogramBucket {
            ulp: histogram_label(b),
            count,
        })
        .collect();
    Some(OutputMismatch {
        output: out,
        dtype,
        dims,
        elements: n as u64,
        count,
        first_index: ElementIndex::new(first, expected.dims()),
        worst,
        histogram,
        expected_fingerprint: expected.fingerprint(),
        actual_fingerprint: actual.fingerprint(),
        rejected,
    })
}

/// What the enclosures of `all` legalize at element `i`: an element is
/// legal inside any bounded one, and each holds the reference's value, so
/// together they are the hull of the bounded ones. Unbounded (legalizing
/// nothing) only when none is bounded there; None when there are none.
fn element_bound(all: &[Bounds], i: usize, dtype: ElementType) -> Option<ElementBound> {
    let fits: Vec<&Bounds> = all
        .iter()
        .filter(|b| b.len() > i && b.lo.dtype() == dtype)
        .collect();
    let first = *fits.first()?;
    let bounded: Vec<&Bounds> = fits.iter().copied().filter(|b| b.is_bounded(i)).collect();
    let Some(&one) = bounded.first() else {
        return Some(ElementBound {
            lo: element_value(&first.lo, i),
            hi: element_value(&first.hi, i),
            nan: first.nan[i],
            bounded: false,
        });
    };
    let (mut lo, mut hi) = (one, one);
    for &b in &bounded[1..] {
        if b.lo.get_f64(i) < lo.lo.get_f64(i) {
            lo = b;
        }
        if b.hi.get_f64(i) > hi.hi.get_f64(i) {
            hi = b;
        }
    }
    Some(ElementBound {
        lo: element_value(&lo.lo, i),
        hi: element_value(&hi.hi, i),
        nan: bounded.iter().any(|b| b.nan[i]),
        bounded: true,
    })
}

/// Class failures first, then by ULP distance (largest first), then by index.
fn sort_worst(m: &mut [(ElementFailure, Option<u128>, usize)]) {
    m.sort_by(|a, b| {
        let rank = |x: &(ElementFailure, Option<u128>, usize)| match x.0 {
            ElementFailure::OutOfTolerance => (1, u128::MAX - x.1.unwrap_or(u128::MAX)),
            _ => (0, 0),
        };
        rank(a).cmp(&rank(b)).then(a.2.cmp(&b.2))
    });
}

fn inputs_at(ctx: &CompareContext<'_>, i: usize, n: usize) -> Vec<ElementValue> {
    if !ctx.elementwise {
        return Vec::new();
    }
    ctx.inputs
        .iter()
        .filter_map(|l| match l.element_count() {
            c if c == n => Some(element_value(l, i)),
            1 => Some(element_value(l, 0)),
            _ => None,
        })
        .collect()
}

/// Every opcode in the module that may be approximate, sorted and
/// deduplicated (fusions and called computations included; `abs` only of
/// a complex operand).
pub fn module_opcodes(module: &crate::hlo::Module) -> Vec<Opcode> {
    // `abs` is exact on real numbers: it is approximate only of a complex
    // operand (a hypot), whose budget is keyed by the operand's type
    let complex_operand = |c: &crate::hlo::Computation, i: &crate::hlo::Instruction| {
        i.operands.first().is_some_and(|&o| {
            c.instr(o)
                .shape
                .as_array()
                .is_some_and(|a| a.dtype.is_complex())
        })
    };
    let mut ops: Vec<Opcode> = module
        .computations
        .iter()
        .flat_map(|c| {
            c.instructions
                .iter()
                .filter(move |i| i.opcode != Opcode::Abs || complex_operand(c, i))
                .map(|i| i.opcode)
        })
        .collect();
    ops.sort();
    ops.dedup();
    ops
}
