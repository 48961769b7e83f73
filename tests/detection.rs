//! The whole mutant catalogue is killed by the built-in suite, and no benign
//! variant is flagged, each on a fast filtered subset (the property and dtype
//! that catch it in the detection matrix, docs/detection.md).

use xla_props::backend::mutant::Mutation;
use xla_props::detection::{detect, DetectionOptions};
use xla_props::hlo::ElementType as T;

/// The property and dtype of a fast detecting subset.
fn subset(m: Mutation) -> (&'static str, T) {
    use Mutation as M;
    match m {
        M::ElideConvertPair | M::Bf16ConvertTruncates => ("round_trip_residual", T::F32),
        M::UndeclaredFtz
        | M::ExpLowPrecision
        | M::MaxMinDropNan
        | M::CompareNanEqual
        | M::SliceLimitOffByOne
        | M::ReduceWindowIgnoresPadding
        | M::PadNegativeAsZero
        | M::ConcatOffsetWrong
        | M::RoundAfzAsEven
        | M::ConvertFloatIntWraps
        | M::DotBatchContractSwap => ("vs_reference", T::F32),
        M::DotBf16Accumulate => ("vs_reference", T::Bf16),
        M::IntAddSaturates | M::ShiftRightLogicalAsArithmetic => ("vs_reference", T::S8),
        M::DynamicSliceNoClamp | M::IotaWrongDimension | M::GatherNoClamp => {
            ("vs_reference", T::S32)
        }
        M::ReduceIgnoresInit => ("reduce_with_init", T::F32),
        M::SortUnstable => ("stable_sort_pairs", T::S32),
        M::IntDivideByZeroZero => ("integer_division_edges", T::S32),
        M::TransposeInversePermutation | M::BroadcastDimsReversed => ("layout_invariance", T::F32),
        M::SelectSwappedOnBroadcastPred => ("select_broadcast_pred", T::F32),
        M::ScatterDropsDuplicates => ("scatter_duplicate_indices", T::F32),
        M::ConvIgnoresFeatureGroups => ("grouped_convolution", T::F32),
        M::ReverseFirstDimOnly
        | M::SliceStrideDropsStart
        | M::PadInteriorNegativeEdge
        | M::ReduceWindowPaddingSwapped
        | M::CompareTotalOrderAsFloat
        | M::ReducePrecisionKeepsExponent
        | M::SortCarriesValuesUnsorted
        | M::ScatterMinimumAsMaximum
        | M::DotMajorContractingAsMinor
        | M::ConvIgnoresWindowReversal
        | M::DotSquareRhsContractingAsZero => ("configurations", T::F32),
        M::UnsignedStartIndexAsSigned => ("configurations", T::U8),
        M::BroadcastConstantMisreadsOther | M::DynamicSliceConstantStartOffByOne => {
            ("operand_forms", T::F32)
        }
        M::DivideOfQuotientReassociated => ("chains_vs_reference", T::F32),
        M::CollectiveWrongGroup
        | M::AllReduceNarrowAccumulator
        | M::AllGatherDropsShard
        | M::CollectivePermuteOffByOne => ("collectives", T::F32),
        _ => ("vs_reference", T::F32),
    }
}

#[test]
fn every_mutation_is_detected() {
    let mut missed = Vec::new();
    for m in Mutation::bugs() {
        let (property, dtype) = subset(m);
        let options = DetectionOptions {
            properties: vec![property.to_string()],
            dtypes: vec![dtype],
            ..DetectionOptions::default()
        };
        let d = detect(m, &options);
        match &d.first {
            Some(c) => assert!(
                c.case.ends_with(&format!("mutant:{}", m.name())),
                "{}",
                c.case
            ),
            None => missed.push(format!(
                "{m} ({} cases of {property} on {dtype:?})",
                d.cases
            )),
        }
    }
    assert!(missed.is_empty(), "missed: {missed:?}");
}

#[test]
fn no_benign_variant_is_flagged() {
    for m in Mutation::benign() {
        let options = DetectionOptions {
            dtypes: vec![T::F16, T::F32],
            max_cases_per_property: 300,
            ..DetectionOptions::default()
        };
        let d = detect(m, &options);
        assert!(d.cases > 0, "{m}: no case ran");
        assert_eq!(d.false_alarms, 0, "{m}: first false alarm {:?}", d.first);
    }
}
