//! How the runner's properties judge a backend: the full tolerance model of
//! `crate::check` (the backend's `Numerics`, the default error specs per
//! (op, dtype), reassociation bounds, flushed-input and excess-precision
//! alternatives), set up from a case's module and inputs.
//!
//! Judging is two-phase: a cheap comparison first (error specs, approximate
//! functions, flushed outputs), and only when that disagrees, the costly
//! evidence (magnitude sums evaluated by the reference, the reference on
//! flushed inputs or without intermediate rounding). Every extra piece of
//! evidence only adds ways to accept an element, so a first-phase agreement
//! is final.

use super::spec::Tolerance;
use crate::check::{
    canonical_unstable_sort, compare, context_for_module, default_error_spec_for_module,
    excess_precision_variant, flush_subnormal_inputs, fma_contraction_variant, module_opcodes,
    op_semantics_variant, whole_module_excess_precision_variant, AlternativeKind, CompareContext,
    ErrorSpec, KnownBug, MagnitudeSums, Numerics, Verdict,
};
use crate::hlo::{ElementType, Module, Opcode};
use crate::literal::Literal;

/// The reference, evaluating a (variant) program on (variant) inputs.
pub(crate) type EvalFn<'e> = dyn Fn(&Module, &[Literal]) -> Option<Vec<Literal>> + 'e;

/// What a comparison is between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Against {
    /// The backend against the exact reference: default error specs and the
    /// reference's alternative results apply.
    Reference,
    /// Two runs of the same backend (layouts, fusions): only the property's
    /// tolerance and the backend's numerics apply.
    Itself,
}

/// The spec of a property's tolerance for one output type: floats get the
/// bound, integers and pred stay exact; `strict_rounding` makes floats exact.
pub(crate) fn property_spec(tol: Tolerance, strict: bool, dtype: ElementType) -> ErrorSpec {
    if !dtype.is_float() || strict {
        return ErrorSpec::exact();
    }
    match tol {
        Tolerance::Exact => ErrorSpec::exact(),
        Tolerance::Ulp(n) => ErrorSpec::exact().with_ulp(n),
        Tolerance::Abs(x) => ErrorSpec::exact().with_abs(x),
        Tolerance::Rel(x) => ErrorSpec::exact().with_rel(x),
    }
}

/// Everything one judgement needs.
pub(crate) struct Judgement<'a> {
    pub module: &'a Module,
    pub inputs: &'a [Literal],
    pub numerics: &'a Numerics,
    pub tolerance: Tolerance,
    pub strict_rounding: bool,
    pub against: Against,
    /// The backend's known bugs (`Backend::known_bugs`): judged against the
    /// reference, a mismatch their models explain is a `Verdict::KnownBug`.
    pub known_bugs: &'a [KnownBug],
}

impl<'a> Judgement<'a> {
    fn spec(&self, dtype: ElementType) -> ErrorSpec {
        let own = property_spec(self.tolerance, self.strict_rounding, dtype);
        match self.against {
            Against::Reference if !self.strict_rounding => {
                own.loosest(default_error_spec_for_module(self.module, dtype))
            }
            _ => own,
        }
    }

    /// The cheap context: per-output specs, approximate ops, elementwise inputs.
    fn cheap(&self, expected: &[Literal]) -> CompareContext<'a> {
        let mut ctx = CompareContext::new()
            .with_inputs(self.inputs, elementwise(self.module, self.inputs, expected))
            .with_approximate_ops(module_opcodes(self.module));
        if self.strict_rounding {
            ctx = ctx.strict_rounding();
        }
        for (k, e) in expected.iter().enumerate() {
            ctx = ctx.with_output_spec(k, self.spec(e.dtype()));
        }
        ctx
    }

    /// Judges `actual` against `expected`; `reference` evaluates alternative
    /// programs or inputs (only called when the cheap judgement disagrees).
    pub fn judge(
        &self,
        expected: &[Literal],
        actual: &[Literal],
        reference: &EvalFn<'_>,
    ) -> Verdict {
        // an unstable sort's carried values compare as multisets per tie run
        let canonical = canonical_unstable_sort(self.module, expected)
            .zip(canonical_unstable_sort(self.module, actual));
        let (expected, actual) = match &canonical {
            Some((e, a)) => (e.as_slice(), a.as_slice()),
            None => (expected, actual),
        };
        let exact = ErrorSpec::exact();
        let cheap = self.cheap(expected);
        let v = compare(expected, actual, &exact, self.numerics, &cheap);
        if v.is_agreement() || !matches!(v, Verdict::Mismatch(_)) {
            return v;
        }
        let n = self.numerics;
        let flushes = !n.flush_inputs.is_empty();
        let excess =
            (n.excess_precision_in_fusions || n.excess_precision_anywhere) && !self.strict_rounding;
        let contracts = n.contracts_multiply_add && !self.strict_rounding;
        let semantics = n.declares_op_semantics() && self.against == Against::Reference;
        let declares_more =
            n.reassociates_reductions || flushes || excess || contracts || semantics;
        let may_be_known_bug = !self.known_bugs.is_empty() && self.against == Against::Reference;
        if !declares_more && !may_be_known_bug {
            return v;
        }
        // the costly evidence, on top of the cheap context's specs
        let mut full = context_for_module(self.module, self.inputs);
        full.approximate_ops = cheap.approximate_ops.clone();
        full.output_specs = cheap.output_specs.clone();
        full.elementwise = cheap.elementwise;
        full.strict_rounding = self.strict_rounding;
        if !declares_more {
            return self.explained_by_known_bugs(v, full, expected, actual, reference);
        }
        if n.reassociates_reductions {
            let first = expected.first();
            if let Some(sums) = first.and_then(|e| {
                let flushes = n.flushes_outputs(e.dtype()) || n.flushes_inputs(e.dtype());
                root_magnitudes(
                    self.module,
                    self.inputs,
                    e,
                    flushes,
                    n.reductions_accumulate_in_declared_type,
                    reference,
                )
            }) {
                full = full.with_magnitude_sums(0, sums);
            }
        }
        let flushed = if flushes && self.against == Against::Reference {
            flush_subnormal_inputs(self.inputs, n).and_then(|f| reference(self.module, &f))
        } else {
            None
        };
        let widened = if excess && self.against == Against::Reference {
            let variant = if n.excess_precision_anywhere {
                whole_module_excess_precision_variant(self.module)
            } else {
                excess_precision_variant(self.module)
            };
            variant.and_then(|m| reference(&m, self.inputs))
        } else {
            None
        };
        let fused = if contracts && self.against == Against::Reference {
            fma_contraction_variant(self.module).and_then(|m| reference(&m, self.inputs))
        } else {
            None
        };
        if let Some(f) = &flushed {
            full = full.with_alternative(AlternativeKind::FlushedInputs, f);
        }
        if let Some(f) = &fused {
            full = full.with_alternative(AlternativeKind::Other("fused multiply-add".into()), f);
        }
        if let Some(w) = &widened {
            full = full.with_alternative(AlternativeKind::ExcessPrecision, w);
        }
        let declared = if semantics {
            self.op_semantics_results(reference)
        } else {
            Vec::new()
        };
        for d in &declared {
            full = full.with_alternative(AlternativeKind::OpSemantics, d);
        }
        let v = compare(expected, actual, &exact, n, &full);
        self.explained_by_known_bugs(v, full, expected, actual, reference)
    }

    /// The last phase, against the reference only: a mismatch that the
    /// backend's known bugs explain (every differing element matches the
    /// exact result, a legal alternative in `full`, or a known bug's model
    /// evaluated by the reference) becomes `Verdict::KnownBug`, naming the
    /// bug that explains it alone, else every bug whose model was needed
    /// together; any other verdict is returned unchanged.
    fn explained_by_known_bugs(
        &self,
        v: Verdict,
        full: CompareContext<'_>,
        expected: &[Literal],
        actual: &[Literal],
        reference: &EvalFn<'_>,
    ) -> Verdict {
        let Verdict::Mismatch(report) = v else {
            return v;
        };
        if self.against != Against::Reference || self.known_bugs.is_empty() {
            return Verdict::Mismatch(report);
        }
        let models: Vec<(&KnownBug, Vec<Literal>)> = self
            .known_bugs
            .iter()
            .filter_map(|b| {
                let m = (b.model)(self.module)?;
                Some((b, reference(&m, self.inputs)?))
            })
            .collect();
        let kind = |b: &KnownBug| AlternativeKind::Other(format!("known bug {}", b.id));
        let explains = |ms: &[&(&KnownBug, Vec<Literal>)]| {
            let mut ctx = full.clone();
            for (b, out) in ms {
                ctx = ctx.with_alternative(kind(b), out);
            }
            compare(expected, actual, &ErrorSpec::exact(), self.numerics, &ctx).is_agreement()
        };
        let bugs: Vec<&KnownBug> = match models.iter().find(|m| explains(&[*m])) {
            Some((b, _)) => vec![*b],
            None if models.len() > 1 && explains(&models.iter().collect::<Vec<_>>()) => {
                models.iter().map(|(b, _)| *b).collect()
            }
            None => return Verdict::Mismatch(report),
        };
        Verdict::KnownBug {
            bugs: bugs.iter().map(|b| b.note()).collect(),
            mismatch: report,
        }
    }

    /// The reference's results on the module rewritten to the op semantics
    /// the backend declares (`check::op_semantics_variant`), on the inputs
    /// and, when the backend flushes inputs, on flushed inputs (the two
    /// compose, e.g. a NaN-dropping clamp whose bound is a flushed subnormal).
    fn op_semantics_results(&self, reference: &EvalFn<'_>) -> Vec<Vec<Literal>> {
        let Some(m) = op_semantics_variant(self.module, self.numerics) else {
            return Vec::new();
        };
        let mut out: Vec<Vec<Literal>> = reference(&m, self.inputs).into_iter().collect();
        if let Some(f) = flush_subnormal_inputs(self.inputs, self.numerics) {
            out.extend(reference(&m, &f));
        }
        out
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

/// How the root of a module combines terms, when it is a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    Sum,
    Product,
}

/// The root's reduction kind and its number of terms per output element.
fn root_reduction(module: &Module) -> Option<(Combine, u64)> {
    let entry = module.entry_computation();
    let root = entry.instr(entry.root);
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
    match root.opcode {
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
    }
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
fn root_magnitudes(
    module: &Module,
    inputs: &[Literal],
    expected: &Literal,
    flushes: bool,
    narrow_accumulation: bool,
    reference: &EvalFn<'_>,
) -> Option<MagnitudeSums> {
    let (combine, terms) = root_reduction(module)?;
    let dtype = module.result_shape().as_array()?.dtype;
    let fmt = dtype.float_format()?;
    let finite_abs = |v: f64| if v.is_finite() { v.abs() } else { 0.0 };
    let magnitude = reference(module, &mapped(inputs, f64::abs))?.pop()?;
    let (sum_abs, unbounded, overflow_nan) = match combine {
        Combine::Sum => {
            let finite = reference(module, &mapped(inputs, finite_abs))?.pop()?;
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
            // every partial sum: n * eps(type) * sum|x|
            let entry = module.entry_computation();
            let root_op = entry.instr(entry.root).opcode;
            let declared_type =
                narrow_accumulation && matches!(root_op, Opcode::Reduce | Opcode::ReduceWindow);
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
            let overflow_nan = if (0..n).any(|i| unbounded[i] && expected.get_f64(i).is_nan()) {
                let unit = |v: f64| {
                    if v.is_finite() && v != 0.0 {
                        v.signum()
                    } else {
                        v
                    }
                };
                let signs = reference(module, &mapped(inputs, unit))?.pop()?;
                (0..n)
                    .map(|i| {
                        unbounded[i] && expected.get_f64(i).is_nan() && !signs.get_f64(i).is_nan()
                    })
                    .collect()
            } else {
                Vec::new()
            };
            (sum_abs, unbounded, overflow_nan)
        }
        Combine::Product => {
            let large = |v: f64| {
                if v.is_finite() && v != 0.0 {
                    v.abs().max(1.0)
                } else {
                    1.0
                }
            };
            let high = reference(module, &mapped(inputs, large))?.pop()?;
            let n = magnitude.element_count();
            let scale = fmt.min_normal() / fmt.epsilon();
            let sum_abs = (0..n)
                .map(|i| magnitude.get_f64(i) + high.get_f64(i) * scale)
                .collect();
            let unbounded = (0..n)
                .map(|i| !high.get_f64(i).is_finite() || high.get_f64(i) >= fmt.max)
                .collect();
            (sum_abs, unbounded, Vec::new())
        }
    };
    Some(MagnitudeSums {
        terms,
        sum_abs,
        unbounded,
        product: combine == Combine::Product,
        overflow_nan,
    })
}

/// Formats element `i` of a literal exactly enough to reproduce it.
pub fn element_text(l: &Literal, i: usize) -> String {
    let t = l.dtype();
    if t.is_float() {
        let v = l.get_f64(i);
        format!(
            "{v:?} (0x{:0w$x})",
            l.get_bits(i),
            w = (t.bit_width() as usize).div_ceil(4)
        )
    } else if t.is_pred() {
        (l.get_i128(i) != 0).to_string()
    } else {
        l.get_i128(i).to_string()
    }
}

/// Tests: `actual` judged against the exact reference's result for `m` on
/// `inputs`, under `numerics`, with no property tolerance and no known bugs.
#[cfg(test)]
fn judged(m: &Module, inputs: &[Literal], numerics: &Numerics, actual: Literal) -> Verdict {
    let j = Judgement {
        module: m,
        inputs,
        numerics,
        tolerance: Tolerance::Exact,
        strict_rounding: false,
        against: Against::Reference,
        known_bugs: &[],
    };
    let eval = |m: &Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
    let expected = eval(m, inputs).expect("the reference evaluates the test module");
    j.judge(&expected, &[actual], &eval)
}

#[cfg(test)]
mod op_semantics_tests {
    use super::*;
    use crate::hlo::{parse_module, ArrayShape};

    fn f32s(bits: &[u64]) -> Literal {
        Literal::from_bits(
            &ArrayShape::new(ElementType::F32, vec![bits.len() as i64]),
            bits,
        )
        .unwrap()
    }

    #[test]
    fn declared_fast_min_max_is_judged_on_the_variant_and_composes_with_flushing() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  lo = f32[3] parameter(0)\n  x = f32[3] parameter(1)\n  hi = f32[3] parameter(2)\n  ROOT r = f32[3] clamp(lo, x, hi)\n}\n",
        )
        .unwrap();
        // clamp(2.33, NaN, 1.73) = 1.73; clamp(-max, 0, -2^-149) = +0 (flushed
        // bound, NaN rule); clamp(1, 2, 3) = 2
        let inputs = [
            f32s(&[0x4015_1eb8, 0xff7f_ffff, 0x3f80_0000]),
            f32s(&[0x7fc0_0000, 0, 0x4000_0000]),
            f32s(&[0x3fdd_70a4, 0x8000_0001, 0x4040_0000]),
        ];
        let xla = Numerics {
            fast_min_max: true,
            ..Numerics::exact()
        }
        .with_ftz(ElementType::F32, true, true);
        let judge =
            |numerics: &Numerics, actual: &[u64]| judged(&m, &inputs, numerics, f32s(actual));
        let measured = [0x3fdd_70a4, 0, 0x4000_0000];
        assert!(judge(&xla, &measured).is_agreement());
        // not declared: the same result is a mismatch
        let ftz_only = Numerics::exact().with_ftz(ElementType::F32, true, true);
        assert!(!judge(&ftz_only, &measured).is_agreement());
        // a wrong value is still caught: the operand instead of the bound
        assert!(!judge(&xla, &[0x4015_1eb8, 0, 0x4000_0000]).is_agreement());
        assert!(!judge(&xla, &[0x3fdd_70a4, 0, 0x4040_0000]).is_agreement());
    }

    #[test]
    fn flushed_products_are_within_the_bound_only_when_the_type_flushes() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
        )
        .unwrap();
        // 2^-100 * 2^-30 = 2^-130 is a subnormal product, flushed to 0 by
        // XLA CPU; the sum 2^-126 + 2^-130 is normal, XLA gives 2^-126
        let p = |e: i32| f64::from(2f32.powi(e));
        let shape = ArrayShape::new(ElementType::F32, vec![2]);
        let inputs = [
            Literal::from_f64s(&shape, &[p(-100), 1.0]).unwrap(),
            Literal::from_f64s(&shape, &[p(-30), p(-126)]).unwrap(),
        ];
        let scalar = |v: f64| {
            Literal::from_f64s(&ArrayShape::new(ElementType::F32, Vec::<i64>::new()), &[v]).unwrap()
        };
        let judge =
            |numerics: &Numerics, actual: f64| judged(&m, &inputs, numerics, scalar(actual));
        let flushing =
            Numerics::exact()
                .with_reassociation()
                .with_ftz(ElementType::F32, true, true);
        assert!(judge(&flushing, p(-126)).is_agreement());
        // a backend that keeps subnormals has no such excuse
        assert!(!judge(&Numerics::exact().with_reassociation(), p(-126)).is_agreement());
        // a wrong sum is still caught
        assert!(!judge(&flushing, p(-123)).is_agreement());
    }
}

#[cfg(test)]
mod accumulation_tests {
    use super::*;
    use crate::hlo::{parse_module, ArrayShape};

    #[test]
    fn narrow_reductions_in_their_declared_type_only_when_declared() {
        let m = parse_module(
            "HloModule m\nadd {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  ROOT s = f16[] add(a, b)\n}\nENTRY e {\n  x = f16[5] parameter(0)\n  z = f16[] constant(0)\n  ROOT r = f16[] reduce(x, z), dimensions={0}, to_apply=add\n}\n",
        )
        .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F16, vec![5]),
            &[2048.0, 1.0, 1.0, 1.0, -2048.0],
        )
        .unwrap();
        let inputs = [x];
        let out =
            |v: f64| Literal::from_f64s(&ArrayShape::new(ElementType::F16, vec![]), &[v]).unwrap();
        let judge = |numerics: &Numerics, actual: f64| judged(&m, &inputs, numerics, out(actual));
        let exact = crate::reference::evaluate(&m, &inputs).unwrap();
        assert_eq!(exact[0].get_f64(0), 3.0);
        let f32_accumulation = Numerics::exact().with_reassociation();
        let f16_accumulation = Numerics {
            reductions_accumulate_in_declared_type: true,
            ..Numerics::exact().with_reassociation()
        };
        // every partial sum rounded to f16: 2048 + 1 = 2048, three times,
        // then - 2048 = 0 (the exact sum is 3)
        assert!(!judge(&f32_accumulation, 0.0).is_agreement());
        assert!(judge(&f16_accumulation, 0.0).is_agreement());
        // far off is still caught
        assert!(!judge(&f16_accumulation, 64.0).is_agreement());
    }
}
