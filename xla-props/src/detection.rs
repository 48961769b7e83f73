//! Measuring the suite itself: run the built-in properties on a mutant
//! backend, case by case, until the first case that fails on the mutant and
//! passes on its base (a detection), or count such cases for a benign
//! variant (false alarms).

use std::time::Instant;

use crate::backend::mutant::{Mutant, Mutation};
use crate::backend::{Backend, Interpreter, ReferenceBackend};
use crate::hlo::Opcode;
use crate::property::{
    self, registry, BackendId, CaseContext, CaseSpace, Outcome, ReferenceCache, SpaceFilter,
};

/// The ops a mutation touches: their cases run first, so detection comes fast.
pub fn relevant_ops(mutation: Mutation) -> &'static [Opcode] {
    use Mutation as M;
    use Opcode as O;
    match mutation {
        M::ElideConvertPair | M::Bf16ConvertTruncates | M::ConvertFloatIntWraps => &[O::Convert],
        M::UndeclaredFtz | M::DeclaredFtz => &[O::Negate, O::Abs, O::Add, O::Multiply],
        M::ExpLowPrecision | M::ApproxExpDeclared => &[O::Exponential],
        M::DotBf16Accumulate | M::DotBatchContractSwap => &[O::Dot],
        M::MaxMinDropNan => &[O::Maximum, O::Minimum],
        M::CompareNanEqual => &[O::Compare],
        M::IntAddSaturates => &[O::Add],
        M::ShiftRightLogicalAsArithmetic => &[O::ShiftRightLogical],
        M::SliceLimitOffByOne => &[O::Slice],
        M::ReduceIgnoresInit | M::PairwiseReduction | M::ReverseOrderReduction => &[O::Reduce],
        M::ReduceWindowIgnoresPadding => &[O::ReduceWindow],
        M::DynamicSliceNoClamp => &[O::DynamicSlice],
        M::SortUnstable => &[O::Sort],
        M::PadNegativeAsZero => &[O::Pad],
        M::IotaWrongDimension => &[O::Iota],
        M::ConcatOffsetWrong => &[O::Concatenate],
        M::RoundAfzAsEven => &[O::RoundNearestAfz],
        M::IntDivideByZeroZero | M::ReciprocalDivide => &[O::Divide],
        M::TransposeInversePermutation => &[O::Transpose],
        M::BroadcastDimsReversed => &[O::Broadcast],
        M::SelectSwappedOnBroadcastPred => &[O::Select],
        M::GatherNoClamp => &[O::Gather],
        M::ScatterDropsDuplicates => &[O::Scatter],
        M::ConvIgnoresFeatureGroups => &[O::Convolution],
        M::FmaContraction => &[O::Multiply, O::Add],
        M::ExcessPrecisionInFusion => &[O::Add, O::Multiply, O::Subtract, O::Divide],
        M::ReverseFirstDimOnly => &[O::Reverse],
        M::SliceStrideDropsStart => &[O::Slice],
        M::PadInteriorNegativeEdge => &[O::Pad],
        M::ReduceWindowPaddingSwapped => &[O::ReduceWindow],
        M::CompareTotalOrderAsFloat => &[O::Compare],
        M::ReducePrecisionKeepsExponent => &[O::ReducePrecision],
        M::SortCarriesValuesUnsorted | M::SortUnstableWhenAllowed => &[O::Sort],
        M::ScatterMinimumAsMaximum => &[O::Scatter],
        M::DotMajorContractingAsMinor => &[O::Dot],
        M::ConvIgnoresWindowReversal => &[O::Convolution],
        M::BroadcastConstantMisreadsOther => &[O::Atan2, O::Add, O::Subtract, O::Divide],
        M::DynamicSliceConstantStartOffByOne => &[O::DynamicSlice],
        M::UnsignedStartIndexAsSigned => &[O::DynamicSlice, O::DynamicUpdateSlice],
        M::DotSquareRhsContractingAsZero => &[O::Dot],
        M::DivideOfQuotientReassociated => &[O::Divide],
        // the collectives property's cases are program (fusion) cases
        M::CollectiveWrongGroup
        | M::AllReduceNarrowAccumulator
        | M::AllGatherDropsShard
        | M::CollectivePermuteOffByOne
        | M::AllReduceReversedGroupOrder => &[O::Fusion],
    }
}

/// The first case that caught a mutation.
#[derive(Clone, Debug)]
pub struct Catch {
    /// The property that caught it.
    pub property: &'static str,
    /// The case's name (on the mutant).
    pub case: String,
    /// Its one-line failure.
    pub summary: String,
}

/// What one mutation's run found.
#[derive(Clone, Debug)]
pub struct Detection {
    /// The mutation.
    pub mutation: Mutation,
    /// The first catch (for a benign variant: its first false alarm).
    pub first: Option<Catch>,
    /// Cases run until the first catch (or in all, when none).
    pub cases: u64,
    /// Seconds until the first catch (or in all).
    pub seconds: f64,
    /// For benign variants: every failing case (false alarms).
    pub false_alarms: u64,
}

/// How much of the case space to run per mutation.
#[derive(Clone, Debug)]
pub struct DetectionOptions {
    /// Only the ops the mutation touches ([`relevant_ops`]); otherwise all ops after them.
    pub relevant_only: bool,
    /// At most this many cases per property and pass.
    pub max_cases_per_property: u64,
    /// Stop a benign run at its first false alarm.
    pub stop_at_first_false_alarm: bool,
    /// Only these properties (empty: every built-in property).
    pub properties: Vec<String>,
    /// Only these dtypes (empty: all).
    pub dtypes: Vec<crate::hlo::ElementType>,
}

impl Default for DetectionOptions {
    fn default() -> DetectionOptions {
        DetectionOptions {
            relevant_only: true,
            max_cases_per_property: u64::MAX,
            stop_at_first_false_alarm: false,
            properties: Vec::new(),
            dtypes: Vec::new(),
        }
    }
}

fn run_case(
    spec: &'static property::PropertySpec,
    id: property::CaseId,
    on: &dyn Backend,
    reference: &dyn Backend,
    cache: &ReferenceCache,
) -> Outcome {
    let mut ctx = CaseContext::new(id, on, reference, cache, 1, 0);
    let body = spec.body;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut ctx)))
        .unwrap_or_else(|_| Outcome::fail("the property body panicked"))
}

/// A step coprime with `len`, so that `i * step mod len` visits every case once, scattered.
fn scatter_step(len: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    [7919u64, 7927, 7933, 7937, 7949, 7951]
        .into_iter()
        .find(|&p| len == 0 || gcd(p, len) == 1)
        .unwrap_or(1)
}

/// Runs the suite's properties on `mutation` (wrapping the interpreter) until the first detection.
///
/// ```no_run
/// use xla_props::backend::mutant::Mutation;
/// use xla_props::detection::{detect, DetectionOptions};
/// let d = detect(Mutation::RoundAfzAsEven, &DetectionOptions::default());
/// assert!(d.first.is_some());
/// ```
pub fn detect(mutation: Mutation, options: &DetectionOptions) -> Detection {
    let mutant = Mutant::new(Interpreter::default(), mutation);
    let base = Interpreter::default();
    let reference = ReferenceBackend::default();
    let cache = ReferenceCache::new();
    let start = Instant::now();
    let mut cases = 0u64;
    let mut first = None;
    let mut false_alarms = 0u64;
    let mutant_id = BackendId::intern(mutant.name());
    let relevant = relevant_ops(mutation).to_vec();
    let mut passes = vec![SpaceFilter {
        ops: relevant.clone(),
        dtypes: options.dtypes.clone(),
    }];
    if !options.relevant_only {
        passes.push(SpaceFilter {
            ops: vec![],
            dtypes: options.dtypes.clone(),
        });
    }
    'outer: for (pass, filter) in passes.iter().enumerate() {
        // properties take turns, and each walks its cases in a scattered
        // order, so that every op, dtype and distribution comes up early
        let spaces: Vec<(&'static property::PropertySpec, CaseSpace, u64, u64)> = registry()
            .iter()
            .enumerate()
            .filter(|(_, spec)| {
                spec.is_builtin()
                    && (options.properties.is_empty()
                        || options.properties.iter().any(|p| p == spec.name))
            })
            .filter_map(|(i, spec)| {
                let space = CaseSpace::new(i as u16, spec, filter).ok()?;
                let len = space.len();
                let limit = len.min(options.max_cases_per_property);
                Some((*spec, space, limit, scatter_step(len)))
            })
            .collect();
        let rounds = spaces.iter().map(|s| s.2).max().unwrap_or(0);
        for n in 0..rounds {
            for (spec, space, limit, step) in &spaces {
                if n >= *limit {
                    continue;
                }
                let index = ((u128::from(n) * u128::from(*step)) % u128::from(space.len())) as u64;
                let Some(key) = space.get(index) else {
                    continue;
                };
                if pass > 0 && relevant.contains(&key.op) {
                    continue;
                }
                let id = key.on(mutant_id);
                cases += 1;
                let Outcome::Fail(f) = run_case(spec, id, &mutant, &reference, &cache) else {
                    continue;
                };
                // a failure the base shares is the suite's or the base's, not the mutation's
                let base_id = key.on(BackendId::intern("interpreter"));
                if matches!(
                    run_case(spec, base_id, &base, &reference, &cache),
                    Outcome::Fail(_)
                ) {
                    continue;
                }
                false_alarms += 1;
                if first.is_none() {
                    first = Some(Catch {
                        property: spec.name,
                        case: id.to_string(),
                        summary: f.summary.clone(),
                    });
                }
                if !mutation.is_benign() || options.stop_at_first_false_alarm {
                    break 'outer;
                }
            }
        }
    }
    Detection {
        mutation,
        first,
        cases,
        seconds: start.elapsed().as_secs_f64(),
        false_alarms: if mutation.is_benign() {
            false_alarms
        } else {
            0
        },
    }
}
