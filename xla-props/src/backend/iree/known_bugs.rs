//! The IREE 3.13.0 bugs documented in docs/findings.md that have an exact
//! model: the case's module rewritten so that the reference computes what
//! IREE computes (`check::replace_with_model`). Each model is only as wide
//! as the measured bug (its ops, dtypes and input classes). The bugs without
//! a model (sine/cosine/tan accuracy, f8e4m3fn NaN read as a number) stay
//! failures.

use crate::check::{replace_with_model, type_text, BugModel, KnownBug};
use crate::hlo::{ArrayShape, ElementType, Instruction, Module, Opcode};

/// `cbrt(±inf)` is NaN.
pub const CBRT_INF: KnownBug = KnownBug {
    id: "iree-cpu/cbrt-inf-nan",
    summary: "cbrt of +inf or -inf returns NaN (f16, bf16, f32, f8e5m2) instead of the infinity",
    documented: "docs/findings.md, \"IREE bug: `cbrt` of an infinity is NaN\"",
    model: BugModel::Rust(cbrt_inf),
};

/// `is-finite` on f8e4m3fn is false for every input.
pub const F8E4M3FN_IS_FINITE: KnownBug = KnownBug {
    id: "iree-cpu/f8e4m3fn-is-finite-false",
    summary: "is-finite of an f8e4m3fn value is false for every input, 0 and 1 included",
    documented: "docs/findings.md, \"IREE bug: f8e4m3fn `is-finite` is always false\"",
    model: BugModel::Rust(f8e4m3fn_is_finite),
};

/// bf16/f32 `floor` of a negative subnormal returns it.
pub const FLOOR_BF16_SUBNORMAL: KnownBug = KnownBug {
    id: "iree-cpu/floor-bf16-negative-subnormal",
    summary: "bf16 and f32 floor of a negative subnormal returns the subnormal itself \
              (exact: -1; flushed: -0)",
    documented:
        "docs/findings.md, \"IREE bug: bf16 and f32 `floor` of a negative subnormal returns it\"",
    model: BugModel::Rust(floor_bf16_subnormal),
};

/// The known bugs of `iree-cpu` (IREE 3.13.0).
pub const IREE_CPU_KNOWN_BUGS: &[KnownBug] = &[CBRT_INF, F8E4M3FN_IS_FINITE, FLOOR_BF16_SUBNORMAL];

/// The array type of an instruction whose opcode is `op` and dtype one of `dtypes`.
fn array_of(i: &Instruction, op: Opcode, dtypes: &[ElementType]) -> Option<ArrayShape> {
    let a = i.shape.as_array()?;
    (i.opcode == op && dtypes.contains(&a.dtype)).then(|| a.clone())
}

fn with_dtype(a: &ArrayShape, t: ElementType) -> String {
    type_text(&ArrayShape::new(t, a.dims.clone()))
}

/// `cbrt`: an infinite input gives NaN, others `cbrt`.
fn cbrt_inf(m: &Module) -> Option<Module> {
    use ElementType::{Bf16, F16, F32, F8E5M2};
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Cbrt, &[F16, Bf16, F32, F8E5M2])?;
        let t = type_text(&a);
        let f = with_dtype(&a, F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             ax = {f} abs(xf)\n  inf = f32[] constant(inf)\n  infb = {f} broadcast(inf), dimensions={{}}\n  \
             isinf = {p} compare(ax, infb), direction=EQ\n  c = {t} cbrt(x)\n  \
             nan = f32[] constant(nan)\n  nanb = {f} broadcast(nan), dimensions={{}}\n  \
             nant = {t} convert(nanb)\n  ROOT r = {t} select(isinf, nant, c)\n}}\n"
        ))
    })
}

/// f8e4m3fn `is-finite`: false everywhere.
fn f8e4m3fn_is_finite(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::IsFinite, &[ElementType::Pred])?;
        (operand_dtype(m, i)? == ElementType::F8E4M3Fn).then(|| {
            format!(
                "HloModule model\n\nENTRY model {{\n  x = {} parameter(0)\n  f = pred[] constant(false)\n  \
                 ROOT r = {} broadcast(f), dimensions={{}}\n}}\n",
                with_dtype(&a, ElementType::F8E4M3Fn),
                type_text(&a)
            )
        })
    })
}

/// The element type of `i`'s first operand (`i` an instruction of `m`).
fn operand_dtype(m: &Module, i: &Instruction) -> Option<ElementType> {
    let c = m
        .computations
        .iter()
        .find(|c| c.instructions.iter().any(|x| std::ptr::eq(x, i)))?;
    let o = c.instructions.get(i.operands.first()?.index())?;
    o.shape.as_array().map(|a| a.dtype)
}

/// bf16/f32 `floor`: a negative subnormal input is returned as it is.
fn floor_bf16_subnormal(m: &Module) -> Option<Module> {
    replace_with_model(m, &|i| {
        let a = array_of(i, Opcode::Floor, &[ElementType::Bf16, ElementType::F32])?;
        let t = type_text(&a);
        let f = with_dtype(&a, ElementType::F32);
        let p = with_dtype(&a, ElementType::Pred);
        Some(format!(
            "HloModule model\n\nENTRY model {{\n  x = {t} parameter(0)\n  xf = {f} convert(x)\n  \
             z = f32[] constant(0)\n  zb = {f} broadcast(z), dimensions={{}}\n  \
             mn = f32[] constant(-1.1754943508222875e-38)\n  mnb = {f} broadcast(mn), dimensions={{}}\n  \
             lo = {p} compare(xf, mnb), direction=GT\n  hi = {p} compare(xf, zb), direction=LT\n  \
             sub = {p} and(lo, hi)\n  fl = {t} floor(x)\n  ROOT r = {t} select(sub, x, fl)\n}}\n"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    fn eval(m: &Module, t: ElementType, bits: &[u64]) -> Vec<u64> {
        let x = Literal::from_bits(&ArrayShape::new(t, vec![bits.len() as i64]), bits).unwrap();
        crate::reference::evaluate(m, &[x]).unwrap()[0].to_bits_vec()
    }

    fn unary(op: &str, t: &str, out: &str) -> Module {
        parse_module(&format!(
            "HloModule m\nENTRY e {{\n  x = {t}[3] parameter(0)\n  ROOT y = {out}[3] {op}(x)\n}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn the_models_compute_what_iree_computes() {
        let m = CBRT_INF.model.apply(&unary("cbrt", "f32", "f32")).unwrap();
        let y = eval(
            &m,
            ElementType::F32,
            &[0x7f80_0000, 0xff80_0000, 0x4100_0000],
        );
        assert!(y[0] & 0x7f_ffff != 0 && y[1] & 0x7f_ffff != 0, "{y:x?}");
        assert_eq!(y[2], 0x4000_0000);

        let m = F8E4M3FN_IS_FINITE
            .model
            .apply(&unary("is-finite", "f8e4m3fn", "pred"))
            .unwrap();
        assert_eq!(
            eval(&m, ElementType::F8E4M3Fn, &[0, 0x38, 0x7f]),
            vec![0, 0, 0]
        );
        assert!(F8E4M3FN_IS_FINITE
            .model
            .apply(&unary("is-finite", "f16", "pred"))
            .is_none());

        let m = FLOOR_BF16_SUBNORMAL
            .model
            .apply(&unary("floor", "bf16", "bf16"))
            .unwrap();
        assert_eq!(
            eval(&m, ElementType::Bf16, &[0x8001, 0x0001, 0xbfc0]),
            vec![0x8001, 0x0000, 0xc000]
        );
        assert!(FLOOR_BF16_SUBNORMAL
            .model
            .apply(&unary("floor", "f16", "f16"))
            .is_none());
    }
}
