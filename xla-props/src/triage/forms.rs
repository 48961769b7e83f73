//! Which operand forms a failure needs: the culprit's operands that are not
//! parameters (a constant, a broadcast, an iota...) are replaced, one at a
//! time, by parameters carrying the reference's values of them; a form whose
//! replacement keeps the failure is not part of the cause.

use super::cause::operand_form;
use crate::backend::Backend;
use crate::hlo::rewrite::{dead_code_eliminated, find_instruction, inline_fusion};
use crate::hlo::{InstrId, Instruction, Module, Opcode};
use crate::isolate::{judge_module, Oracle, Tested};
use crate::literal::{Literal, Value};

/// The operand forms of the culprit `name` (inside fusion `fusion`, when
/// fused) of `module` run on `args` that the failure of class `class`
/// needs: `parameter` for each form it does without. `None` when the
/// culprit cannot be taken apart so (it sits in a called computation, or
/// its operands are tuples).
pub(crate) fn needed_forms(
    module: &Module,
    args: &[Literal],
    name: &str,
    fusion: Option<&str>,
    class: &str,
    backend: &dyn Backend,
) -> Option<Vec<String>> {
    let flat = match fusion {
        Some(f) => {
            let (c, id) = find_instruction(module, f)?;
            if c != module.entry {
                return None;
            }
            inline_fusion(module, id)?
        }
        None => module.clone(),
    };
    let (c, culprit) = find_instruction(&flat, name)?;
    if c != flat.entry {
        return None;
    }
    let values = Oracle::Exact.all_values(&flat, args).ok()?;
    let entry = flat.entry_computation();
    let operands = entry.instr(culprit).operands.clone();
    let mut forms: Vec<String> = operands
        .iter()
        .map(|&o| operand_form(entry.instr(o).opcode).to_string())
        .collect();
    let tested = Tested::new(backend);
    let mut current = (flat.clone(), args.to_vec());
    for (k, &o) in operands.iter().enumerate() {
        if entry.instr(o).opcode == Opcode::Parameter {
            continue;
        }
        let Some(Some(Value::Array(value))) = values.get(o.index()) else {
            continue;
        };
        // the ids move as dead code goes: find the culprit again
        let Some((_, at)) = find_instruction(&current.0, name) else {
            break;
        };
        let Some(candidate) = as_parameter(&current.0, at, k, value.clone(), &current.1) else {
            continue;
        };
        let verdict = judge_module(&candidate.0, &candidate.1, &Oracle::Exact, &tested);
        if verdict.kind().is_some_and(|kind| kind.class() == class) {
            forms[k] = "parameter".into();
            current = candidate;
        }
    }
    Some(forms)
}

/// `module` with operand `k` of `culprit` (an entry instruction) a new
/// parameter carrying `value`, and `culprit` the root; with its arguments.
fn as_parameter(
    module: &Module,
    culprit: InstrId,
    k: usize,
    value: Literal,
    args: &[Literal],
) -> Option<(Module, Vec<Literal>)> {
    let mut m = module.clone();
    let e = m.entry.index();
    let entry = &mut m.computations[e];
    let o = *entry.instr(culprit).operands.get(k)?;
    let mut p = Instruction::new(
        format!("triage.operand{k}"),
        Opcode::Parameter,
        entry.instr(o).shape.clone(),
        vec![],
    );
    p.attrs.parameter_number = Some(i64::try_from(args.len()).ok()?);
    let id = entry.push(p);
    entry.instructions[culprit.index()].operands[k] = id;
    entry.root = culprit;
    let mut args = args.to_vec();
    args.push(value);
    Some((dead_code_eliminated(&m), args))
}
