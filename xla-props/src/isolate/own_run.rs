//! The certificate's first basis: the backend's own run, unit by unit.
//!
//! The module is run once more with every entry value exposed. When that
//! run's outputs are the judged run's, bit for bit, and every unit (fusion
//! or top-level instruction) computes, in it, a result its declared
//! numerics allow for the operands it was given there, the output is a
//! composition of legal steps: legal, however far the steps' errors carry
//! (a deep network's batch-norm gradients, bf16 attention), with no bound
//! carried through the graph at all. A unit that departs on its own
//! operands, or an exposed run that computes other outputs (the compiler
//! formed something across units that exposing the values undid), leaves
//! the verdict to the carried bound, which may call it a composition.

use super::judge::{judge_outputs, rebuild, ulp_of, MismatchKind, Tested};
use super::localize::{candidates, operand_args};
use crate::hlo::rewrite::{expose_values, extract_instruction};
use crate::hlo::{InstrId, Module, Opcode};
use crate::literal::{Literal, Value};

/// What the own run shows when every unit is legal in it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OwnRun {
    /// Units judged on their own operands.
    pub(crate) units: usize,
    /// The largest error a unit makes on its own operands, in ULP.
    pub(crate) worst_ulp: f64,
    /// The unit that makes it.
    pub(crate) worst_unit: String,
}

/// Every unit legal in the backend's own run (see the module docs), or
/// None. `reference` holds the reference value of every entry instruction
/// (parameters and constants are taken from it); `actual` the judged run's
/// outputs.
pub(crate) fn every_unit_legal_in_own_run(
    module: &Module,
    args: &[Literal],
    actual: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
) -> Option<OwnRun> {
    let debug = std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE").is_some();
    let entry = module.entry_computation();
    let exposed_ids: Vec<InstrId> = (0..entry.instructions.len())
        .map(|i| InstrId(i as u32))
        .filter(|&i| {
            let ins = entry.instr(i);
            !matches!(ins.opcode, Opcode::Parameter | Opcode::Constant)
                && !ins.shape.leaves().is_empty()
                && !ins.shape.has_token()
        })
        .collect();
    let exposed = expose_values(module, &exposed_ids);
    let leaves = match tested.run(&exposed, args) {
        Ok(l) => l,
        Err(e) => {
            if debug {
                eprintln!("certificate debug: the exposed run failed: {e}");
            }
            return None;
        }
    };
    // the run's own values; parameters and constants are the reference's
    let mut values: Vec<Option<Value>> = entry
        .instructions
        .iter()
        .zip(reference)
        .map(|(ins, v)| match ins.opcode {
            Opcode::Parameter | Opcode::Constant => v.clone(),
            _ => None,
        })
        .collect();
    let mut it = leaves.into_iter();
    for &i in &exposed_ids {
        *values.get_mut(i.index())? = Some(rebuild(&entry.instr(i).shape, &mut it));
    }
    // the exposed run must be the judged run
    let outputs = values.get(entry.root.index())?.as_ref()?.flatten();
    let same = outputs.len() == actual.len()
        && outputs
            .iter()
            .zip(actual)
            .all(|(a, b)| a.to_bits_vec() == b.to_bits_vec());
    if !same {
        if debug {
            eprintln!(
                "certificate debug: the exposed run computes other outputs than the judged run"
            );
        }
        return None;
    }
    let numerics = tested.numerics();
    let mut own = OwnRun {
        units: 0,
        worst_ulp: 0.0,
        worst_unit: String::new(),
    };
    for c in candidates(module) {
        own.units += 1;
        let x = extract_instruction(module, c);
        let cargs = operand_args(&values, &x.operands)?;
        let got = values.get(c.index())?.as_ref()?.flatten();
        let expected = crate::reference::evaluate(&x.module, &cargs).ok()?;
        if expected.len() == got.len()
            && expected
                .iter()
                .zip(&got)
                .all(|(e, g)| e.to_bits_vec() == g.to_bits_vec())
        {
            continue;
        }
        let verdict = judge_outputs(&x.module, &cargs, &expected, &got, &numerics);
        if let Some(kind) = MismatchKind::of(&verdict) {
            if debug {
                eprintln!(
                    "certificate debug: `{}` departs on its own operands in the backend's run ({kind:?})",
                    entry.instr(c).name
                );
            }
            return None;
        }
        let ulp = worst_ulp(&expected, &got);
        if ulp > own.worst_ulp {
            own.worst_ulp = ulp;
            own.worst_unit = entry.instr(c).name.clone();
        }
    }
    Some(own)
}

/// The largest float difference between two flat results, in ULP of the
/// expected value.
fn worst_ulp(expected: &[Literal], got: &[Literal]) -> f64 {
    let mut worst = 0.0f64;
    for (e, g) in expected.iter().zip(got) {
        if !e.dtype().is_float() {
            continue;
        }
        for i in 0..e.element_count().min(g.element_count()) {
            let (p, q) = (e.get_f64(i), g.get_f64(i));
            if e.get_bits(i) != g.get_bits(i) && p.is_finite() && q.is_finite() {
                worst = worst.max((p - q).abs() / ulp_of(e, p));
            }
        }
    }
    worst
}
