//! The deep check: every top-level instruction of the entry computation (a
//! fusion, kept whole, or a plain instruction) run on the reference's own
//! values of its operands, so an error upstream cannot flow in and a bug
//! that the module's output masks is still seen. Fingerprints first, then
//! element-wise with the judge; each local disagreement is named by its
//! fusion and the first diverging instruction inside it.

use serde::Serialize;

use super::inside::{look_inside, Fused, InsideMethod};
use super::localize::{candidates, scan_local, LocalFinding};
use super::sides::{Oracle, Tested};
use crate::check::MismatchKind;
use crate::hlo::rewrite::extract_instruction;
use crate::hlo::{Computation, InstrId, Module, Opcode};
use crate::literal::Value;

/// At most this many disagreeing fusions are looked inside (each costs a
/// probe, or one run per fused instruction); the rest are reported at the
/// fusion's root. The first one, the culprit, is always looked inside.
pub const MAX_LOOKED_INSIDE: usize = 16;

/// One top-level instruction that disagrees on the reference values of its
/// operands.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LocalDisagreement {
    /// The top-level instruction of the entry computation (the fusion, for a fusion).
    pub top_level: String,
    /// Where inside it: the fusion, its computation, the first diverging instruction.
    pub location: CulpritLocation,
    /// How the inside of the fusion was looked at (None for a plain instruction,
    /// or a fusion beyond [`MAX_LOOKED_INSIDE`], reported at its root).
    pub inside: Option<InsideMethod>,
    /// The kind of mismatch.
    pub mismatch: MismatchKind,
    /// True when the 16-byte fingerprints already differ; false when only
    /// the element-wise comparison sees it.
    pub fingerprint_differs: bool,
    /// The verdict on the instruction, first line.
    pub verdict: String,
}

/// The result of [`deep_check`].
#[derive(Clone, Debug)]
pub struct DeepCheck {
    /// Top-level instructions compared.
    pub candidates: usize,
    /// Those that disagree on the reference values of their operands, in topological order.
    pub local_disagreements: Vec<LocalDisagreement>,
    pub(crate) findings: Vec<LocalFinding>,
}

/// Compares every top-level instruction of `module` on the reference values
/// of its operands (`reference`: the value of every entry instruction, as
/// [`Oracle::all_values`] gives them). `tick` is called once per candidate.
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// use xla_props::isolate::{deep_check, Oracle, Tested};
/// let module = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![8]))?;
///         let y = b.binary(Opcode::Add, x, x)?;
///         b.unary(Opcode::Negate, y)
///     })
///     .unwrap();
/// use xla_props::inputs::{generate_inputs, Distribution};
/// let args = generate_inputs(&module, Distribution::Uniform, 0).unwrap().args;
/// let reference = Oracle::Exact.all_values(&module, &args).unwrap();
/// let backend = Interpreter::default();
/// let tested = Tested::new(&backend);
/// let deep = deep_check(&module, &reference, &Oracle::Exact, &tested, &mut |_| {});
/// assert_eq!(deep.candidates, 2);
/// assert!(deep.local_disagreements.is_empty());
/// ```
pub fn deep_check(
    module: &Module,
    reference: &[Option<Value>],
    oracle: &Oracle,
    tested: &Tested<'_>,
    tick: &mut dyn FnMut(u64),
) -> DeepCheck {
    let n = candidates(module).len();
    let findings = scan_local(module, reference, tested, tick);
    let entry = module.entry_computation();
    let mut looked = 0;
    let local_disagreements = findings
        .iter()
        .map(|f| {
            let top = entry.instr(f.located.id);
            let (location, inside) = if top.opcode == Opcode::Fusion {
                let deep = looked < MAX_LOOKED_INSIDE;
                looked += 1;
                fusion_location(module, f, deep, oracle, tested)
            } else {
                (plain_location(entry, f.located.id), None)
            };
            LocalDisagreement {
                top_level: top.name.clone(),
                location,
                inside,
                mismatch: f.located.kind,
                fingerprint_differs: f.fingerprint_differs,
                verdict: f
                    .located
                    .verdict
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            }
        })
        .collect();
    DeepCheck {
        candidates: n,
        local_disagreements,
        findings,
    }
}

/// The first diverging instruction inside a disagreeing fusion (its root
/// when not looked inside, or when nothing inside diverges alone).
fn fusion_location(
    module: &Module,
    finding: &LocalFinding,
    look: bool,
    oracle: &Oracle,
    tested: &Tested<'_>,
) -> (CulpritLocation, Option<InsideMethod>) {
    let entry = module.entry_computation();
    let top = entry.instr(finding.located.id);
    let Some(fused) = top.attrs.calls.first().map(|&c| module.comp(c)) else {
        return (plain_location(entry, finding.located.id), None);
    };
    if look {
        let x = extract_instruction(module, finding.located.id);
        let root = x.module.entry_computation().root;
        if let Some(found) = look_inside(
            Fused {
                module: &x.module,
                fusion: root,
                args: &finding.located.args,
            },
            oracle,
            tested,
        ) {
            return (
                fused_location(fused, &top.name, found.id),
                Some(found.method),
            );
        }
    }
    (fused_location(fused, &top.name, fused.root), None)
}

/// Where the culprit is.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CulpritLocation {
    /// The computation the culprit instruction is in (the fused computation for a fusion).
    pub computation: String,
    /// The culprit fusion's name, or None when the culprit is a plain instruction.
    pub fusion: Option<String>,
    /// The first diverging instruction.
    pub instruction: String,
    /// Its opcode.
    pub opcode: String,
    /// Its operands, as `name (opcode)`.
    pub operands: Vec<String>,
}

/// Instruction `id` of fused computation `fused` of fusion `fusion`, as a location.
pub(crate) fn fused_location(fused: &Computation, fusion: &str, id: InstrId) -> CulpritLocation {
    location(fused, Some(fusion), id)
}

/// Instruction `id` of the entry computation `entry`, as a location.
pub(crate) fn plain_location(entry: &Computation, id: InstrId) -> CulpritLocation {
    location(entry, None, id)
}

/// Instruction `id` of `comp` (the fused computation of `fusion`, if any), as a location.
fn location(comp: &Computation, fusion: Option<&str>, id: InstrId) -> CulpritLocation {
    let ins = comp.instr(id);
    CulpritLocation {
        computation: comp.name.clone(),
        fusion: fusion.map(str::to_string),
        instruction: ins.name.clone(),
        opcode: ins.opcode.name().to_string(),
        operands: ins
            .operands
            .iter()
            .map(|&o| format!("{} ({})", comp.instr(o).name, comp.instr(o).opcode))
            .collect(),
    }
}

/// The known bugs of the backend that explain `unit`'s disagreement: the
/// unit run alone on the reference's values of its operands (`values`,
/// every entry instruction's exact value, as for [`deep_check`]) and judged
/// with `known_bugs` (the whole module's judge, with known bugs left out,
/// names the culprit; this says whether it is a documented one). Empty
/// when none does, or the unit cannot be run again.
pub fn known_bugs_of_unit(
    module: &Module,
    values: &[Option<Value>],
    unit: &LocalDisagreement,
    tested: &Tested<'_>,
    known_bugs: &[crate::check::KnownBug],
) -> Vec<crate::check::KnownBugNote> {
    let entry = module.entry_computation();
    let Some(id) = entry
        .instructions
        .iter()
        .position(|i| i.name == unit.top_level)
    else {
        return Vec::new();
    };
    let x = extract_instruction(module, InstrId(id as u32));
    let Some(unit_args) = super::localize::operand_args(values, &x.operands) else {
        return Vec::new();
    };
    let eval = |m: &Module, a: &[crate::literal::Literal]| crate::reference::evaluate(m, a).ok();
    let (Some(expected), Ok(actual)) = (
        eval(&x.module, &unit_args),
        tested.run(&x.module, &unit_args),
    ) else {
        return Vec::new();
    };
    let numerics = tested.numerics();
    let judge = crate::check::Judge::new(&numerics, known_bugs, crate::check::Policy::Reference);
    match judge.outputs(&x.module, &unit_args, &expected, &actual, &eval) {
        crate::check::Verdict::KnownBug { bugs, .. } => bugs,
        _ => Vec::new(),
    }
}
