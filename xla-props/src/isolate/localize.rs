//! Localization: from a disagreeing module to the first top-level
//! instruction (a fusion or a plain instruction) that disagrees.
//!
//! Every candidate is extracted with the reference values of its operands as
//! its parameters, so upstream errors cannot flow in; many candidates run
//! side by side in one batch module (one backend run), and a batch the
//! backend cannot run is bisected until the failing candidate is alone.
//! When no candidate disagrees on reference inputs, the whole module is run
//! once with every value exposed and the first value that departs from the
//! reference is the culprit, whose error appears only when upstream errors
//! feed it.

use super::sides::{judge_outputs, rebuild, same_bits, Tested};
use crate::backend::BackendError;
use crate::check::MismatchKind;
use crate::check::Verdict;
use crate::hlo::rewrite::{expose_values, extract_batch, extract_instruction};
use crate::hlo::{InstrId, Module, Opcode, Shape};
use crate::literal::{Literal, Value};

/// How many candidates one batch module holds.
pub const BATCH_SIZE: usize = 256;

/// The first disagreeing top-level instruction.
#[derive(Clone, Debug)]
pub struct Located {
    /// Its id in the entry computation.
    pub id: InstrId,
    /// True when it disagrees on the reference values of its operands.
    pub local: bool,
    /// Its operand values as the culprit module's arguments: reference
    /// values when local, the backend's own values otherwise.
    pub args: Vec<Literal>,
    /// The verdict on it.
    pub verdict: Verdict,
    /// The kind of disagreement.
    pub kind: MismatchKind,
    /// For a composition: the region around it that departs when compiled
    /// whole (its module; `args` are its arguments). None: the culprit is
    /// the instruction alone.
    pub region: Option<Module>,
}

/// Why localization found nothing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LocalizeError {
    /// No instruction disagrees, alone or in place.
    #[error(
        "the module disagrees as a whole but no instruction's value departs from the reference"
    )]
    NotFound,
    /// The backend could not run the module with every value exposed.
    #[error("the backend failed to run the module with its values exposed: {0}")]
    Backend(String),
}

/// Instructions worth checking: everything that computes (parameters,
/// constants and tuple plumbing only move values).
pub fn is_candidate(op: Opcode) -> bool {
    !matches!(
        op,
        Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
    )
}

/// The candidates of `module` in topological order.
pub fn candidates(module: &Module) -> Vec<InstrId> {
    let entry = module.entry_computation();
    entry
        .post_order()
        .unwrap_or_default()
        .into_iter()
        .filter(|&i| {
            let ins = entry.instr(i);
            is_candidate(ins.opcode) && !matches!(ins.shape, Shape::Token)
        })
        .collect()
}

/// The arguments of a candidate whose parameters stand for `operands`.
pub(crate) fn operand_args(values: &[Option<Value>], operands: &[InstrId]) -> Option<Vec<Literal>> {
    let mut out = Vec::new();
    for o in operands {
        out.extend(values.get(o.index())?.as_ref()?.flatten());
    }
    Some(out)
}

/// Searches `module` for the first disagreeing candidate, in topological
/// order. `reference` holds the reference value of every entry instruction,
/// `args` the module's arguments. `tick` is called once per candidate judged.
pub fn localize(
    module: &Module,
    args: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    tick: &mut dyn FnMut(u64),
) -> Result<Located, LocalizeError> {
    let cands = candidates(module);
    let numerics = tested.numerics();
    for chunk in cands.chunks(BATCH_SIZE) {
        let mut found = Vec::new();
        scan_batch(
            module, chunk, reference, tested, &numerics, true, &mut found, tick,
        );
        if let Some(first) = found.into_iter().next() {
            return Ok(first.located);
        }
    }
    follow_errors(module, args, reference, tested)
}

/// One top-level candidate that disagrees on the reference values of its
/// operands, with how its fingerprints compared.
#[derive(Clone, Debug)]
pub(crate) struct LocalFinding {
    /// The candidate, its arguments and its verdict.
    pub(crate) located: Located,
    /// True when the 16-byte fingerprints of the two sides already differ
    /// (false: only the element-wise comparison sees it).
    pub(crate) fingerprint_differs: bool,
}

/// Every candidate of `module` that disagrees on the reference values of
/// its operands, in topological order (not only the first).
pub(crate) fn scan_local(
    module: &Module,
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    tick: &mut dyn FnMut(u64),
) -> Vec<LocalFinding> {
    let cands = candidates(module);
    let numerics = tested.numerics();
    let mut found = Vec::new();
    for chunk in cands.chunks(BATCH_SIZE) {
        scan_batch(
            module, chunk, reference, tested, &numerics, false, &mut found, tick,
        );
    }
    found
}

/// When no candidate disagrees on reference inputs: runs the whole module
/// once with every value exposed and returns the first candidate whose
/// value departs from the reference when fed the backend's own values.
pub(crate) fn follow_errors(
    module: &Module,
    args: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
) -> Result<Located, LocalizeError> {
    let cands = candidates(module);
    let numerics = tested.numerics();
    let entry = module.entry_computation();
    let all: Vec<InstrId> = (0..entry.instructions.len() as u32)
        .map(InstrId)
        .filter(|&i| !matches!(entry.instr(i).shape, Shape::Token))
        .collect();
    let exposed = expose_values(module, &all);
    let flat = tested
        .run(&exposed, args)
        .map_err(|e| LocalizeError::Backend(e.to_string()))?;
    let mut it = flat.into_iter();
    let mut actual: Vec<Option<Value>> = vec![None; entry.instructions.len()];
    for &i in &all {
        actual[i.index()] = Some(rebuild(&entry.instr(i).shape, &mut it));
    }
    for &c in &cands {
        let (Some(Some(e)), Some(Some(a))) = (reference.get(c.index()), actual.get(c.index()))
        else {
            continue;
        };
        let x = extract_instruction(module, c);
        let Some(cargs) = operand_args(&actual, &x.operands) else {
            continue;
        };
        let verdict = judge_outputs(&x.module, &cargs, &e.flatten(), &a.flatten(), &numerics);
        if let Some(kind) = verdict.kind() {
            return Ok(Located {
                id: c,
                local: false,
                args: cargs,
                verdict,
                kind,
                region: None,
            });
        }
    }
    Err(LocalizeError::NotFound)
}

/// Whether two flattened outputs differ already in their fingerprints.
fn fingerprints_differ(expected: &[Literal], actual: &[Literal]) -> bool {
    expected.len() != actual.len()
        || expected
            .iter()
            .zip(actual)
            .any(|(e, a)| e.fingerprint().to_bytes() != a.fingerprint().to_bytes())
}

/// Runs one batch; on a backend failure bisects it. Pushes the
/// disagreeing candidates of `chunk` onto `found`, each confirmed by a run
/// of its own; with `first_only`, stops at the first. Candidates are
/// compared by fingerprint first, and every one whose bits differ is then
/// judged element-wise (a fingerprint localizes, it does not prove).
#[expect(
    clippy::too_many_arguments,
    reason = "one recursive scan and its context"
)]
fn scan_batch(
    module: &Module,
    chunk: &[InstrId],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    numerics: &crate::check::Numerics,
    first_only: bool,
    found: &mut Vec<LocalFinding>,
    tick: &mut dyn FnMut(u64),
) {
    if chunk.is_empty() {
        return;
    }
    let batch = extract_batch(module, chunk);
    let mut bargs = Vec::new();
    for ops in &batch.operands {
        let Some(a) = operand_args(reference, ops) else {
            return;
        };
        bargs.extend(a);
    }
    match tested.run(&batch.module, &bargs) {
        Ok(outputs) => {
            let mut at = 0;
            for (k, &c) in chunk.iter().enumerate() {
                let n = batch.leaves[k];
                let actual = outputs.get(at..at + n).unwrap_or(&[]);
                at += n;
                tick(1);
                let Some(Some(expected)) = reference.get(c.index()) else {
                    continue;
                };
                let expected_flat = expected.flatten();
                let fingerprint_differs = fingerprints_differ(&expected_flat, actual);
                if !fingerprint_differs && same_bits(&expected_flat, actual) {
                    continue;
                }
                let x = extract_instruction(module, c);
                let Some(cargs) = operand_args(reference, &x.operands) else {
                    continue;
                };
                let verdict = judge_outputs(&x.module, &cargs, &expected_flat, actual, numerics);
                if verdict.kind().is_some() {
                    // the batch says so; the verdict comes from a run of its own
                    if let Some(located) = confirm(&x.module, c, cargs, expected, tested, numerics)
                    {
                        found.push(LocalFinding {
                            located,
                            fingerprint_differs,
                        });
                        if first_only {
                            return;
                        }
                    }
                }
            }
        }
        Err(e) if chunk.len() == 1 => {
            tick(1);
            let c = chunk[0];
            let x = extract_instruction(module, c);
            let Some(cargs) = operand_args(reference, &x.operands) else {
                return;
            };
            if e.is_unsupported() {
                return;
            }
            let verdict = Verdict::OnlyOneFailed {
                failed: crate::check::Side::Backend,
                error: e.to_string(),
            };
            found.push(LocalFinding {
                located: Located {
                    id: c,
                    local: true,
                    args: cargs,
                    verdict,
                    kind: MismatchKind::BackendFailed,
                    region: None,
                },
                fingerprint_differs: true,
            });
        }
        Err(_) => {
            let (a, b) = chunk.split_at(chunk.len() / 2);
            scan_batch(
                module, a, reference, tested, numerics, first_only, found, tick,
            );
            if first_only && !found.is_empty() {
                return;
            }
            scan_batch(
                module, b, reference, tested, numerics, first_only, found, tick,
            );
        }
    }
}

fn confirm(
    cand: &Module,
    id: InstrId,
    cargs: Vec<Literal>,
    expected: &Value,
    tested: &Tested<'_>,
    numerics: &crate::check::Numerics,
) -> Option<Located> {
    let verdict = match tested.run(cand, &cargs) {
        Ok(actual) => {
            let verdict = judge_outputs(cand, &cargs, &expected.flatten(), &actual, numerics);
            if verdict.kind().is_some() && legal_by_steps(cand, &cargs, &actual, tested, numerics) {
                return None;
            }
            verdict
        }
        Err(BackendError::Unsupported { .. }) => return None,
        Err(e) => Verdict::OnlyOneFailed {
            failed: crate::check::Side::Backend,
            error: e.to_string(),
        },
    };
    let kind = verdict.kind()?;
    Some(Located {
        id,
        local: true,
        args: cargs,
        verdict,
        kind,
        region: None,
    })
}

/// Whether `cand`, a `while` extracted with its state as its one
/// parameter, computed `actual` from `cargs` as a composition of legal
/// iterations (`loop_steps`).
fn legal_by_steps(
    cand: &Module,
    cargs: &[Literal],
    actual: &[Literal],
    tested: &Tested<'_>,
    numerics: &crate::check::Numerics,
) -> bool {
    let entry = cand.entry_computation();
    let root = entry.instr(entry.root);
    let [state] = root.operands[..] else {
        return false;
    };
    let param = entry.instr(state);
    if root.opcode != Opcode::While || param.opcode != Opcode::Parameter {
        return false;
    }
    let init = rebuild(&param.shape, &mut cargs.iter().cloned());
    super::loop_steps::while_by_steps(cand, root, &init, actual, tested, numerics).is_ok()
}
