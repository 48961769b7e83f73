//! Tests of the operand-form cases: the covering array covers what it
//! promises, names parse back, and every case builds a verified module that
//! the reference evaluates.

use std::collections::HashSet;

use super::*;
use crate::hlo::{verify, ElementType, Opcode};
use crate::programs::{FUSED_SUFFIX, OPERAND_FORMS, SLOT_SEPARATOR};

fn forms_space() -> CaseSpace {
    let (idx, spec) = find_property("operand_forms").unwrap();
    CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap()
}

/// (forms per slot, fused) of a row name.
fn split_row(row: &str) -> (Vec<&str>, bool) {
    let (forms, fused) = match row.strip_suffix(FUSED_SUFFIX) {
        Some(r) => (r, true),
        None => (row, false),
    };
    (forms.split(SLOT_SEPARATOR).collect(), fused)
}

#[test]
fn every_op_with_operands_has_operand_form_cases() {
    let space = forms_space();
    let ops: HashSet<Opcode> = space.composition().iter().map(|c| c.0).collect();
    for op in catalogue_ops().filter(|&op| crate::programs::has_operand_forms(op)) {
        assert!(ops.contains(&op), "{op} has no operand-form case");
    }
    assert!(!ops.contains(&Opcode::Iota));
}

#[test]
fn the_covering_array_covers_every_form_pair_and_dtype_form() {
    let space = forms_space();
    let k = OPERAND_FORMS.len();
    let mut per_op: std::collections::HashMap<Opcode, Vec<CaseKey>> = Default::default();
    for key in space.iter() {
        per_op.entry(key.op).or_default().push(key);
    }
    for (op, keys) in &per_op {
        let slots = split_row(keys[0].param().unwrap()).0.len();
        let mut pairs: HashSet<(usize, usize, &str, &str)> = HashSet::new();
        let mut dtype_forms: HashSet<(ElementType, usize, &str)> = HashSet::new();
        let mut fused: HashSet<(usize, &str, bool)> = HashSet::new();
        for key in keys {
            let (forms, f) = split_row(key.param().unwrap());
            assert_eq!(forms.len(), slots, "{key}");
            for (s, a) in forms.iter().enumerate() {
                dtype_forms.insert((key.dtype, s, a));
                fused.insert((s, a, f));
                for (t, b) in forms.iter().enumerate().skip(s + 1) {
                    pairs.insert((s, t, a, b));
                }
            }
        }
        let dtypes: HashSet<ElementType> = keys.iter().map(|k| k.dtype).collect();
        assert_eq!(
            dtype_forms.len(),
            dtypes.len() * slots * k,
            "{op}: dtype x slot x form"
        );
        let slot_pairs = slots * slots.saturating_sub(1) / 2;
        assert_eq!(pairs.len(), slot_pairs * k * k, "{op}: every pair of forms");
        if dtypes.len() > 1 {
            assert_eq!(
                fused.len(),
                slots * k * 2,
                "{op}: every form fused and unfused"
            );
        }
    }
    // all slots constant (constant folding) for every op
    for (op, keys) in &per_op {
        assert!(
            keys.iter().any(|k| split_row(k.param().unwrap())
                .0
                .iter()
                .all(|f| *f == "const")),
            "{op}: no all-constant case"
        );
    }
    assert!(space.len() < 20_000, "{} operand-form cases", space.len());
}

/// `atan2(y, broadcast(1))` was missed on f32 by the pair covering alone
/// (it met `bcast-one` only against constants): every elementwise op meets
/// each constant form against parameters in every slot, on every dtype.
#[test]
fn elementwise_ops_meet_every_constant_form_against_parameters_on_every_dtype() {
    let space = forms_space();
    let mut seen: HashSet<(Opcode, ElementType, usize, String)> = HashSet::new();
    let mut slots: std::collections::HashMap<(Opcode, ElementType), usize> = Default::default();
    for key in space.iter() {
        if !matches!(
            crate::programs::Form::of(key.op),
            Some(crate::programs::Form::Elementwise | crate::programs::Form::Compare)
        ) {
            continue;
        }
        let (forms, _) = split_row(key.param().unwrap());
        slots.insert((key.op, key.dtype), forms.len());
        for (s, f) in forms.iter().enumerate() {
            let others_param = forms
                .iter()
                .enumerate()
                .all(|(t, g)| t == s || *g == "param");
            if others_param {
                seen.insert((key.op, key.dtype, s, f.to_string()));
            }
        }
    }
    for ((op, t), n) in slots {
        for s in 0..n {
            for f in ["const", "bcast-const", "bcast-one", "bcast-zero", "iota"] {
                assert!(
                    seen.contains(&(op, t, s, f.to_string())),
                    "{op} {t} slot {s}: {f}"
                );
            }
        }
    }
    let atan2 = "operand_forms::atan2::f32::f32[8,8]{1,0}::uniform.param+bcast-one";
    let key: Result<CaseKey, _> = atan2.parse();
    let any_f32 = space.iter().any(|k| {
        k.op == Opcode::Atan2
            && k.dtype == ElementType::F32
            && k.param().is_some_and(|p| p.starts_with("param+bcast-one"))
    });
    assert!(any_f32, "{atan2}: {key:?}");
}

#[test]
fn operand_form_names_parse_back_and_unknown_rows_do_not() {
    let space = forms_space();
    for i in (0..space.len()).step_by(97) {
        let key = space.get(i).unwrap();
        let name = key.to_string();
        let back: CaseKey = name.parse().unwrap();
        assert_eq!(back, key, "{name}");
    }
    let key = space
        .iter()
        .find(|k| {
            k.op == Opcode::Atan2
                && k.dtype == ElementType::F64
                && k.param().is_some_and(|p| p.starts_with("param+bcast-one"))
        })
        .expect("atan2(x, broadcast(1)) is a case");
    let name = key.to_string();
    assert!(
        name.starts_with("operand_forms::atan2::f64::f64[8,8]{"),
        "{name}"
    );
    assert_eq!(name.parse::<CaseKey>().unwrap(), key);
    let other_dist = ["uniform", "special", "mixed"]
        .into_iter()
        .find(|d| *d != key.dist.name())
        .unwrap();
    for bad in [
        name.replace("param+bcast-one", "param+nonsense"),
        name.replace("f64[8,8]", "f64[8,9]"),
        name.replace(
            &format!("::{}.", key.dist.name()),
            &format!("::{other_dist}."),
        ),
        name.replace("::atan2::", "::iota::"),
        name.replace("param+bcast-one", "param+bcast-one+param"),
    ] {
        assert!(bad.parse::<CaseKey>().is_err(), "{bad}");
    }
}

#[test]
fn every_operand_form_case_builds_a_verified_module() {
    let space = forms_space();
    let mut forms_seen: HashSet<&str> = HashSet::new();
    for key in space.iter() {
        let built = build_case(&key).unwrap_or_else(|e| panic!("{key}: {e}"));
        verify(&built.module).unwrap_or_else(|e| panic!("{key}: {e}\n{}", built.module));
        assert_eq!(
            built.roles.len(),
            built.module.parameter_shapes().len(),
            "{key}"
        );
        let (forms, _) = split_row(key.param().unwrap());
        forms_seen.extend(forms.iter().copied());
        let all_const = forms.iter().all(|f| *f == "const");
        if all_const {
            assert!(built.module.parameter_shapes().is_empty(), "{key}");
        }
    }
    assert_eq!(forms_seen.len(), OPERAND_FORMS.len());
}

#[test]
fn a_sample_of_operand_form_cases_passes_on_the_interpreter() {
    use crate::backend::{Interpreter, ReferenceBackend};
    let space = forms_space();
    let (reference, interpreter) = (ReferenceBackend::default(), Interpreter::default());
    let cache = ReferenceCache::default();
    let mut passed = 0;
    for i in (0..space.len()).step_by(23) {
        let id = space.case(i, BackendId::intern("interpreter")).unwrap();
        let mut ctx = CaseContext::new(id, &interpreter, &reference, &cache, 1, 0);
        match ctx.compare_with_reference() {
            Outcome::Pass => passed += 1,
            Outcome::Skip(_) => {}
            o => panic!("{id}: {}", o.failure().map_or(o.name(), |f| &f.summary)),
        }
    }
    assert!(passed > 100, "{passed}");
}
