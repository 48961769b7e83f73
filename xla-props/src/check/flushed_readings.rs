//! The fuzzer's rejudging of one instruction on every reading of its
//! operands that flushing allows (beside the registry of legal differences,
//! `legal/`, not in it: the readings change the expected side, not the
//! accepted values; and it asks the judge, which asks the registry). A backend
//! that flushes subnormals may have read an operand flushed, or (flushing
//! outputs only where a value leaves the program) unflushed where it
//! returned a zero; the instruction is wrong only when every reading says so.

use crate::check::{
    flush_subnormal_inputs, Judge, LegalReason, Numerics, Policy, Produced, Verdict,
};
use crate::hlo::rewrite::with_root;
use crate::hlo::{Instruction, Module};
use crate::literal::Literal;

/// Runs a module on the exact reference, as one side of a comparison (the
/// caller's `backend::run_reference`: `check` never runs anything itself).
pub(crate) type RunFn<'a> = dyn Fn(&Module, &[Literal]) -> Produced + 'a;

/// Judges one instruction (alone in `single`, its operands made
/// parameters) with more legal results, each accepted element by element:
/// the one judge under its per-instruction policy, no known bugs.
pub(crate) fn judge_with_alternatives(
    single: &Module,
    operands: &[Literal],
    expected: &Produced,
    actual: &Produced,
    numerics: &Numerics,
    others: &[(LegalReason, Vec<Literal>)],
    run: &RunFn<'_>,
) -> Verdict {
    let mut judge = Judge::new(numerics, &[], Policy::Instruction);
    for (reason, outs) in others {
        judge = judge.with_alternative(*reason, outs.clone());
    }
    let eval = |m: &Module, a: &[Literal]| run(m, a).into_outputs();
    judge.judge(single, operands, expected, actual, &eval)
}

/// The operand values a backend that flushes subnormal outputs may have
/// used inside one execution: where it returned ±0 for an operand (of a type
/// whose outputs it flushes), a subnormal, since the flush happens only
/// where a value leaves the program: the reference's value there when it is
/// subnormal, else the smallest subnormal of that sign. None when nothing changes.
pub(crate) fn unflushed_operands(
    module: &Module,
    args: &[Literal],
    ins: &Instruction,
    operands: &[Literal],
    numerics: &Numerics,
    run: &RunFn<'_>,
) -> Option<Vec<Literal>> {
    if numerics.flush_outputs.is_empty() {
        return None;
    }
    let mut changed = false;
    let mut out = operands.to_vec();
    for (k, o) in ins.operands.iter().enumerate() {
        let t = out[k].dtype();
        let Some(fmt) = t.float_format().filter(|_| numerics.flushes_outputs(t)) else {
            continue;
        };
        let Some(exact) = with_root(module, *o)
            .and_then(|m| run(&m, args).outputs().and_then(|v| v.first().cloned()))
            .filter(|e| e.dtype() == t && e.element_count() == out[k].element_count())
        else {
            continue;
        };
        for i in 0..exact.element_count() {
            let e = exact.get_f64(i);
            let a = out[k].get_f64(i);
            if a != 0.0 {
                continue;
            }
            // the reference's subnormal, or (where the backend's own
            // rounding made one the reference does not have) the smallest
            if e != 0.0 && e.abs() < fmt.min_normal() {
                out[k].set_bits(i, exact.get_bits(i));
            } else {
                out[k].set_f64(i, fmt.min_subnormal().copysign(a));
            }
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Judges one instruction on every reading of its operands the backend's
/// numerics allow: the values the backend returned, those with subnormals
/// flushed (a backend flushing inputs), and those with flushed outputs
/// restored (a backend flushing outputs, see [`unflushed_operands`]). Each
/// reading in turn is the expected result of [`judge_with_alternatives`] (so a
/// reassociated sum of flushed operands is legal), with the reference's
/// results on the other readings as alternatives element by element (each
/// element may have been flushed or not). The instruction is wrong only when
/// every reading says so; the verdict is the first reading's.
pub(crate) fn judge_readings(
    single: &Module,
    operands: &[Literal],
    actual: &Produced,
    numerics: &Numerics,
    unflushed: impl FnOnce() -> Option<Vec<Literal>>,
    run: &RunFn<'_>,
) -> Verdict {
    let expected = run(single, operands);
    let first = judge_with_alternatives(single, operands, &expected, actual, numerics, &[], run);
    if first.kind().is_none()
        || numerics.flush_inputs.is_empty() && numerics.flush_outputs.is_empty()
    {
        return first;
    }
    let mut readings: Vec<(Vec<Literal>, Produced)> = vec![(operands.to_vec(), expected)];
    for ops in flush_subnormal_inputs(operands, numerics)
        .into_iter()
        .chain(unflushed())
    {
        let e = run(single, &ops);
        readings.push((ops, e));
    }
    for (k, (ops, e)) in readings.iter().enumerate() {
        // reading 0 is as returned; the others flush inputs or restore
        // flushed outputs
        let others: Vec<(LegalReason, Vec<Literal>)> = readings
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .filter_map(|(j, (_, r))| {
                let reason = match j {
                    0 => LegalReason::Alternative,
                    1 => LegalReason::FlushedInputs,
                    _ => LegalReason::FlushedSubnormalOutput,
                };
                r.outputs().map(|o| (reason, o.to_vec()))
            })
            .collect();
        let v = judge_with_alternatives(single, ops, e, actual, numerics, &others, run);
        if v.kind().is_none() {
            return v;
        }
    }
    first
}
