//! The one judge on op semantics and accumulation: declared fast min/max,
//! flushed products, narrow reductions (moved from the property module's judge).

use crate::check::Numerics;
use crate::hlo::ElementType;
use crate::literal::Literal;

/// Tests: `actual` judged against the exact reference's result for `m` on
/// `inputs`, under `numerics`, with no property tolerance and no known bugs.
#[cfg(test)]
fn judged(
    m: &crate::hlo::Module,
    inputs: &[Literal],
    numerics: &Numerics,
    actual: Literal,
) -> crate::check::Verdict {
    crate::check::Judge::new(numerics, &[], crate::check::Policy::Reference)
        .with_float_spec(crate::check::ErrorSpec::exact())
        .against_reference(m, inputs, &[actual])
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

    #[test]
    fn narrow_contractions_in_their_declared_type_only_when_declared() {
        let conv = parse_module(
            "HloModule m\nENTRY e {\n  x = f16[1,5,1] parameter(0)\n  y = f16[5,1,1] parameter(1)\n  \
             ROOT c = f16[1,1,1] convolution(x, y), window={size=5}, dim_labels=b0f_0io->b0f\n}\n",
        )
        .unwrap();
        let f16s = |dims: Vec<i64>, v: &[f64]| {
            Literal::from_f64s(&ArrayShape::new(ElementType::F16, dims), v).unwrap()
        };
        let inputs = [
            f16s(vec![1, 5, 1], &[2048.0, 1.0, 1.0, 1.0, -2048.0]),
            f16s(vec![5, 1, 1], &[1.0; 5]),
        ];
        let exact = crate::reference::evaluate(&conv, &inputs).unwrap();
        assert_eq!(exact[0].get_f64(0), 3.0);
        let out = |v: f64| f16s(vec![1, 1, 1], &[v]);
        let f32_accumulation = Numerics::exact().with_reassociation();
        let f16_accumulation = Numerics {
            contractions_accumulate_in_declared_type: true,
            ..Numerics::exact().with_reassociation()
        };
        // every partial sum rounded to f16, as iree-cpu sums: 2048 + 1 = 2048,
        // three times, then - 2048 = 0
        let iree = 0.0;
        assert!(!judged(&conv, &inputs, &f32_accumulation, out(iree)).is_agreement());
        assert!(judged(&conv, &inputs, &f16_accumulation, out(iree)).is_agreement());
        assert!(!judged(&conv, &inputs, &f16_accumulation, out(64.0)).is_agreement());
        // the reductions' flag alone does not cover contractions
        let reductions_only = Numerics {
            reductions_accumulate_in_declared_type: true,
            ..Numerics::exact().with_reassociation()
        };
        assert!(!judged(&conv, &inputs, &reductions_only, out(iree)).is_agreement());
    }

    /// The `operand_forms` convolution on iree-cpu (`f16`, `slice+transpose`
    /// fused): a product that is an f16 subnormal is flushed to zero, which
    /// the reassociation bound's flush floor covers when the contraction
    /// reads its operands through data movement inside a fusion, as it does
    /// when they are parameters.
    #[test]
    fn flushed_products_of_a_fused_contraction_over_moved_operands() {
        let fused = |ops: &str, lhs: &str, rhs: &str| {
            parse_module(&format!(
                "HloModule m\nf {{\n  p0 = f16[1,1,4] parameter(0)\n  p1 = f16[2,1,1] parameter(1)\n  \
                 {ops}\n  ROOT c = f16[1,1,1] convolution({lhs}, {rhs}), window={{size=1}}, \
                 dim_labels=b0f_0io->b0f\n}}\nENTRY e {{\n  a = f16[1,1,4] parameter(0)\n  \
                 w = f16[2,1,1] parameter(1)\n  ROOT r = f16[1,1,1] fusion(a, w), kind=kLoop, calls=f\n}}\n"
            ))
            .unwrap()
        };
        let moved = fused(
            "s = f16[1,1,2] slice(p0), slice={[0:1], [0:1], [1:3]}\n  \
             t = f16[1,2,1] transpose(p1), dimensions={1,0,2}\n  r = f16[1,2,1] reshape(t)",
            "s",
            "r",
        );
        let f16s = |dims: Vec<i64>, v: &[f64]| {
            Literal::from_f64s(&ArrayShape::new(ElementType::F16, dims), v).unwrap()
        };
        // -2.5 * 2^-14 + 2^-14 * 0.5: the second product (2^-15) is an f16
        // subnormal, flushed; the sum is -1.2207e-4, iree-cpu -1.5259e-4
        let inputs = [
            f16s(vec![1, 1, 4], &[7.0, -2.5, 6.103515625e-05, 7.0]),
            f16s(vec![2, 1, 1], &[6.103515625e-05, 0.5]),
        ];
        let exact = crate::reference::evaluate(&moved, &inputs).unwrap();
        assert_eq!(exact[0].get_f64(0), -1.220703125e-4);
        let iree = Numerics {
            contractions_accumulate_in_declared_type: true,
            ..Numerics::exact().with_reassociation()
        }
        .with_ftz(ElementType::F16, true, true);
        let out = |v: f64| f16s(vec![1, 1, 1], &[v]);
        assert!(judged(&moved, &inputs, &iree, out(-1.52587890625e-4)).is_agreement());
        // a value beyond the flush floor is still a mismatch
        assert!(!judged(&moved, &inputs, &iree, out(-4.8828125e-4)).is_agreement());
    }
}

#[cfg(test)]
mod composed_known_bugs_tests {
    use super::*;
    use crate::check::{replace_with_model, BugModel, Judge, KnownBug, Policy, Verdict};
    use crate::hlo::{parse_module, ArrayShape, Module, Opcode};

    fn unary_model(m: &Module, op: Opcode, to: &str) -> Option<Module> {
        replace_with_model(m, &|i| {
            (i.opcode == op).then(|| {
                format!(
                    "HloModule model\n\nENTRY model {{\n  x = f32[3] parameter(0)\n  \
                     ROOT r = f32[3] {to}(x)\n}}\n"
                )
            })
        })
    }
    fn negate_is_abs(m: &Module) -> Option<Module> {
        unary_model(m, Opcode::Negate, "abs")
    }
    fn exp_is_log(m: &Module) -> Option<Module> {
        unary_model(m, Opcode::Exponential, "log")
    }
    const NEGATE_IS_ABS: KnownBug = KnownBug {
        id: "test/negate-is-abs",
        summary: "negate computes abs",
        documented: "here",
        model: BugModel::Rust(negate_is_abs),
    };
    const EXP_IS_LOG: KnownBug = KnownBug {
        id: "test/exp-is-log",
        summary: "exponential computes log",
        documented: "here",
        model: BugModel::Rust(exp_is_log),
    };

    /// Two bugs acting in one program: `exp(-x)` computed as `log(|x|)` is
    /// what neither model computes alone; their composition names both.
    #[test]
    fn bugs_acting_together_are_explained_by_their_composed_models() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  n = f32[3] negate(x)\n  \
             ROOT r = f32[3] exponential(n)\n}\n",
        )
        .unwrap();
        let both = parse_module(
            "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  n = f32[3] abs(x)\n  \
             ROOT r = f32[3] log(n)\n}\n",
        )
        .unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![3]),
            &[-2.0, 0.5, 3.0],
        )
        .unwrap();
        let actual = crate::reference::evaluate(&both, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        let numerics = Numerics::exact();
        let judge = |bugs: &[KnownBug], actual: Literal| {
            Judge::new(&numerics, bugs, Policy::Reference)
                .with_float_spec(crate::check::ErrorSpec::exact())
                .against_reference(&m, std::slice::from_ref(&x), &[actual])
        };
        match judge(&[NEGATE_IS_ABS, EXP_IS_LOG], actual.clone()) {
            Verdict::KnownBug { bugs, .. } => {
                let ids: Vec<&str> = bugs.iter().map(|b| b.id.as_str()).collect();
                assert_eq!(ids, [NEGATE_IS_ABS.id, EXP_IS_LOG.id]);
            }
            v => panic!("expected the two bugs together, got {v:?}"),
        }
        // either bug alone does not explain it
        for alone in [NEGATE_IS_ABS, EXP_IS_LOG] {
            assert!(matches!(
                judge(&[alone], actual.clone()),
                Verdict::Mismatch(_)
            ));
        }
        // nor does the composition explain another wrong value
        let wrong = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![3]),
            &[1.0, 1.0, 1.0],
        )
        .unwrap();
        assert!(matches!(
            judge(&[NEGATE_IS_ABS, EXP_IS_LOG], wrong),
            Verdict::Mismatch(_)
        ));
    }
}
