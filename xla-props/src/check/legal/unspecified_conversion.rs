//! Unspecified conversions: a float -> integer `convert` of NaN, or of a
//! value whose truncation the integer type cannot represent, may give any
//! value (StableHLO: "the behavior is TBD", openxla/stablehlo#180). Only
//! those elements; every other element is judged as usual.

use super::{Case, Evidence, LegalDifference, Setting};
use crate::check::policy::Policy;
use crate::check::{output_masks, LegalReason};
use crate::hlo::{Module, Opcode, TypeKind};
use crate::literal::Literal;

pub(crate) struct UnspecifiedConversion;

impl LegalDifference for UnspecifiedConversion {
    fn reason(&self) -> LegalReason {
        LegalReason::UnspecifiedConversion
    }
    fn summary(&self) -> &'static str {
        "a float-to-integer convert of NaN or of a value out of the integer type's range, which the StableHLO specification leaves open: any value at exactly those elements (`Numerics::out_of_range_float_to_int_unspecified`)"
    }
    fn admissible(&self, s: &Setting<'_>) -> bool {
        s.numerics.out_of_range_float_to_int_unspecified && s.policy != Policy::Itself
    }
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>> {
        unspecified_conversions(c.module, c.inputs)
            .map(Evidence::AnyValue)
            .into_iter()
            .collect()
    }
}

/// Per output of `module`, the elements that are a float -> integer
/// `convert` of an entry parameter whose value on `inputs` is NaN or
/// truncates out of the integer type's range; `None` when no output is
/// such a conversion (or none of its elements is out of range).
pub(crate) fn unspecified_conversions(
    module: &Module,
    inputs: &[Literal],
) -> Option<Vec<Vec<bool>>> {
    output_masks(module, |out, n| {
        let Some(x) = conversion_input(module, out, inputs) else {
            return vec![false; n];
        };
        // a conversion to pred is specified (zero is false, anything else true)
        let range = out
            .shape
            .as_array()
            .filter(|a| matches!(a.dtype.kind(), TypeKind::Signed | TypeKind::Unsigned))
            .and_then(|a| a.dtype.int_range());
        let Some((lo, hi)) = range.filter(|_| x.element_count() == n) else {
            return vec![false; n];
        };
        (0..n).map(|i| out_of_range(x.get_f64(i), lo, hi)).collect()
    })
}

/// The float input of `out` when it is a `convert` of an entry parameter to
/// an integer type.
fn conversion_input<'a>(
    module: &Module,
    out: &crate::hlo::Instruction,
    inputs: &'a [Literal],
) -> Option<&'a Literal> {
    let entry = module.entry_computation();
    if out.opcode != Opcode::Convert {
        return None;
    }
    let operand = entry.instr(*out.operands.first()?);
    let k = operand.attrs.parameter_number?;
    if operand.opcode != Opcode::Parameter {
        return None;
    }
    let x = inputs.get(usize::try_from(k).ok()?)?;
    x.dtype().float_format().is_some().then_some(x)
}

/// NaN, or a truncation outside `[lo, hi]`.
fn out_of_range(v: f64, lo: i128, hi: i128) -> bool {
    if v.is_nan() {
        return true;
    }
    let t = v.trunc();
    // |t| < 2^127 converts exactly
    if t.abs() >= 1.7e38 {
        return true;
    }
    let t = t as i128;
    t < lo || t > hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{judge_against_reference, Numerics, Verdict};
    use crate::hlo::{parse_module, ArrayShape, ElementType};

    fn convert(from: &str, to: &str, n: usize) -> Module {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {from}[{n}] parameter(0)\n  ROOT y = {to}[{n}] convert(x)\n}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn only_nan_and_out_of_range_inputs_are_unspecified() {
        let m = convert("f32", "s8", 8);
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![8]),
            &[
                f64::NAN,
                f64::INFINITY,
                -1e10,
                127.9,
                -128.9,
                128.0,
                -129.0,
                3.5,
            ],
        )
        .unwrap();
        let masks = unspecified_conversions(&m, std::slice::from_ref(&x)).unwrap();
        assert_eq!(
            masks,
            vec![vec![true, true, true, false, false, true, true, false]]
        );
        // u8: -0.5 truncates to 0, in range; -1 is not
        let m = convert("f32", "u8", 3);
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![3]),
            &[-0.5, -1.0, 255.5],
        )
        .unwrap();
        assert_eq!(
            unspecified_conversions(&m, &[x]).unwrap(),
            vec![vec![false, true, false]]
        );
        // in range everywhere, or not a float -> integer convert: nothing
        let m = convert("f32", "s32", 2);
        let x =
            Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2]), &[1.0, -2.0]).unwrap();
        assert_eq!(unspecified_conversions(&m, &[x]), None);
        let m = convert("f32", "pred", 2);
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![2]),
            &[2.0, f64::NAN],
        )
        .unwrap();
        assert_eq!(unspecified_conversions(&m, std::slice::from_ref(&x)), None);
        let m = convert("f32", "f16", 2);
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![2]),
            &[f64::NAN, 1e10],
        )
        .unwrap();
        assert_eq!(unspecified_conversions(&m, &[x]), None);
    }

    #[test]
    fn any_value_at_an_out_of_range_element_and_a_wrong_in_range_value_still_fails() {
        let m = convert("f32", "s8", 4);
        let s = ArrayShape::new(ElementType::F32, vec![4]);
        let x = Literal::from_f64s(&s, &[f64::INFINITY, f64::NAN, 300.0, -5.7]).unwrap();
        let t = ArrayShape::new(ElementType::S8, vec![4]);
        let expected = crate::reference::evaluate(&m, std::slice::from_ref(&x)).unwrap();
        let n = Numerics {
            out_of_range_float_to_int_unspecified: true,
            ..Numerics::exact()
        };
        // IREE's answers (docs/findings.md): INT_MIN for inf and NaN, 127 for 300
        let iree = Literal::from_f64s(&t, &[-128.0, -128.0, 127.0, -5.0]).unwrap();
        let v = judge_against_reference(
            &m,
            std::slice::from_ref(&x),
            &expected,
            std::slice::from_ref(&iree),
            &n,
            &[],
            false,
        );
        match &v {
            Verdict::Agree(a) => assert_eq!(
                a.legal
                    .get(&crate::check::LegalReason::UnspecifiedConversion),
                Some(&2)
            ),
            v => panic!("expected agreement, got {v}"),
        }
        // a wrong value for the in-range -5.7 fails
        let wrong = Literal::from_f64s(&t, &[-128.0, -128.0, 127.0, -6.0]).unwrap();
        let v = judge_against_reference(
            &m,
            std::slice::from_ref(&x),
            &expected,
            &[wrong],
            &n,
            &[],
            false,
        );
        assert!(v.is_disagreement(), "{v}");
        // and without the declaration the out-of-range elements fail
        let v =
            judge_against_reference(&m, &[x], &expected, &[iree], &Numerics::exact(), &[], false);
        assert!(v.is_disagreement(), "{v}");
    }
}
