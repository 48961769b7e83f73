//! The certificate's first basis: the backend's own run, unit by unit.
//!
//! The module is run once more with every entry value exposed. When that
//! run's outputs are the judged run's, bit for bit, and every unit (fusion
//! or top-level instruction) computes, in it, a result its declared
//! numerics allow for the operands it was given there, the output is a
//! composition of legal steps: legal, however far the steps' errors carry
//! (a deep network's batch-norm gradients, bf16 attention), with no bound
//! carried through the graph at all. Where exposing a value changes how
//! the compiler orders a sum, that value is left unexposed and judged
//! inside the regions of the units that read it. A unit that departs on
//! its own operands (also with its producers), or an exposed run that
//! still computes other outputs, leaves the verdict to the carried bound,
//! which may call it a composition.

use std::collections::HashSet;

use super::localize::{candidates, is_candidate, operand_args};
use super::sides::{judge_outputs, rebuild, same_bits, worst_ulp, Tested};
use crate::check::MismatchKind;
use crate::check::{KnownBug, KnownBugNote, Numerics};
use crate::hlo::rewrite::{expose_values, extract_region};
use crate::hlo::{InstrId, Instruction, Module, Opcode};
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
    /// Values left unexposed (a reduction or a contraction that the
    /// compiler computes in another order once it is an output), each
    /// judged inside the region of every unit that reads it.
    pub(crate) hidden: usize,
    /// Units judged together with their producers, because on the exposed
    /// values alone they depart (the compiler kept a value across them
    /// unrounded or recomputed it, as its numerics allow).
    pub(crate) grown: usize,
    /// Loop iterations judged one at a time (`loop_steps`): loops that
    /// depart judged whole but compute, step by step, legal results.
    pub(crate) stepped: usize,
    /// The loops judged so.
    pub(crate) stepped_loops: usize,
    /// Known bugs whose models compute what a unit did (only when asked
    /// for: the own run then explains the output by legal steps and these
    /// bugs, an expected failure, not an agreement).
    pub(crate) known_bugs: Vec<KnownBugNote>,
}

/// Every unit legal in the backend's own run (see the module docs), or
/// None. `reference` holds the reference value of every entry instruction
/// (parameters and constants are taken from it); `actual` the judged run's
/// outputs. With `known_bugs`, a unit whose departure one of them models
/// is accepted too and its bug noted in the result (the output is then
/// explained, not legal).
///
/// When exposing every value changes the outputs, the run is tried up to
/// three times more with fewer values exposed (see [`hidden_values`]: their
/// order of summation is what exposing changes, a reduction fused into its
/// consumers, a product contracted into its add); each unit is then judged
/// together with the unexposed values it reads, recomputed from exposed
/// ones: a region judged whole by the one judge, which is sound as long as
/// the region's own bound is.
pub(crate) fn every_unit_legal_in_own_run(
    module: &Module,
    args: &[Literal],
    actual: &[Literal],
    reference: &[Option<Value>],
    tested: &Tested<'_>,
    known_bugs: &[KnownBug],
) -> Option<OwnRun> {
    let debug = std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE").is_some();
    let entry = module.entry_computation();
    let exposable: Vec<InstrId> = (0..entry.instructions.len())
        .map(|i| InstrId(i as u32))
        .filter(|&i| {
            let ins = entry.instr(i);
            !matches!(ins.opcode, Opcode::Parameter | Opcode::Constant)
                && !ins.shape.leaves().is_empty()
                && !ins.shape.has_token()
        })
        .collect();
    let numerics = tested.numerics();
    let judged = Judged {
        module,
        args,
        actual,
        reference,
        tested,
        debug,
    };
    let (values, hidden) = judged.first_own_values(&exposable);
    let values = values?;
    // each instruction's place in topological order, for ordering regions
    let mut rank = vec![0; entry.instructions.len()];
    for (k, i) in entry
        .post_order()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        rank[i.index()] = k;
    }
    let mut own = OwnRun {
        units: 0,
        worst_ulp: 0.0,
        worst_unit: String::new(),
        hidden,
        grown: 0,
        stepped: 0,
        stepped_loops: 0,
        known_bugs: Vec::new(),
    };
    for c in candidates(module) {
        // an unexposed value is judged inside its readers' regions
        let Some(got) = values.get(c.index())?.as_ref().map(Value::flatten) else {
            continue;
        };
        own.units += 1;
        let region = region_of(module, &values, &rank, &[c]);
        let ulp = match judge_region(module, &values, &region, c, &got, &numerics) {
            Ok(ulp) => ulp,
            Err(kind) => {
                let unit = Unit {
                    module,
                    values: &values,
                    rank: &rank,
                    id: c,
                    got: &got,
                    tested,
                    numerics: &numerics,
                };
                match unit.rescued(known_bugs, &mut own) {
                    Some(ulp) => ulp,
                    None => {
                        if debug {
                            eprintln!(
                                "certificate debug: `{}` departs on its own operands in the backend's run ({kind:?}), also with its producers",
                                entry.instr(c).name
                            );
                        }
                        return None;
                    }
                }
            }
        };
        if ulp > own.worst_ulp {
            own.worst_ulp = ulp;
            own.worst_unit = entry.instr(c).name.clone();
        }
    }
    Some(own)
}

/// A unit of the own run that departs judged alone on its exposed
/// operands, with what [`Unit::rescued`] needs to look again.
struct Unit<'a, 't> {
    module: &'a Module,
    values: &'a [Option<Value>],
    rank: &'a [usize],
    id: InstrId,
    got: &'a [Literal],
    tested: &'a Tested<'t>,
    numerics: &'a Numerics,
}

impl Unit<'_, '_> {
    /// The unit judged again (its worst error in ULP, counted in `own`):
    /// with its producers, recomputed from their own operands (a value
    /// kept unrounded or recomputed across the boundary: first only the
    /// producers whose value the numerics let stay unrounded, a product
    /// contracted into its add or a narrow float kept in f32, then every
    /// one); a `while` one iteration at a time (`loop_steps`); and, with
    /// `known_bugs`, as one of the backend's known bugs (its model computes
    /// what the unit did; the bug is noted in `own`). None when all fail.
    fn rescued(&self, known_bugs: &[KnownBug], own: &mut OwnRun) -> Option<f64> {
        let entry = self.module.entry_computation();
        let ins = entry.instr(self.id);
        let computed: Vec<InstrId> = ins
            .operands
            .iter()
            .copied()
            .filter(|&o| !matches!(entry.instr(o).opcode, Opcode::Parameter | Opcode::Constant))
            .collect();
        let unrounded: Vec<InstrId> = computed
            .iter()
            .copied()
            .filter(|&o| may_stay_unrounded(entry.instr(o), self.numerics))
            .collect();
        let mut tries = vec![unrounded.clone()];
        if computed.len() > unrounded.len() {
            tries.push(computed);
        }
        let grown = tries.into_iter().filter(|t| !t.is_empty()).find_map(|t| {
            let roots: Vec<InstrId> = t.into_iter().chain(std::iter::once(self.id)).collect();
            let grown = region_of(self.module, self.values, self.rank, &roots);
            judge_region(
                self.module,
                self.values,
                &grown,
                self.id,
                self.got,
                self.numerics,
            )
            .ok()
        });
        if let Some(ulp) = grown {
            own.grown += 1;
            return Some(ulp);
        }
        let init = ins
            .operands
            .first()
            .and_then(|o| self.values.get(o.index()))
            .and_then(Option::as_ref);
        if let Some(s) = init.and_then(|init| {
            super::loop_steps::while_by_steps(
                self.module,
                ins,
                init,
                self.got,
                self.tested,
                self.numerics,
            )
            .ok()
        }) {
            own.stepped += s.steps;
            own.stepped_loops += 1;
            return Some(s.worst_ulp);
        }
        if known_bugs.is_empty() {
            return None;
        }
        let region = region_of(self.module, self.values, self.rank, &[self.id]);
        let x = extract_region(self.module, &region, self.id);
        let cargs = operand_args(self.values, &x.operands)?;
        let eval = |m: &Module, a: &[Literal]| crate::reference::evaluate(m, a).ok();
        let expected = eval(&x.module, &cargs)?;
        let judge =
            crate::check::Judge::new(self.numerics, known_bugs, crate::check::Policy::Reference);
        match judge.outputs(&x.module, &cargs, &expected, self.got, &eval) {
            crate::check::Verdict::KnownBug { bugs, .. } => {
                for b in bugs {
                    if !own.known_bugs.iter().any(|k| k.id == b.id) {
                        own.known_bugs.push(b);
                    }
                }
                Some(0.0)
            }
            _ => None,
        }
    }
}

/// The judged run whose own values are sought: the module, its arguments,
/// the backend's outputs on them (`actual`), the reference's values of
/// every entry instruction and the backend; `debug` prints why a run is
/// not the judged one.
#[derive(Clone, Copy)]
struct Judged<'a, 't> {
    module: &'a Module,
    args: &'a [Literal],
    actual: &'a [Literal],
    reference: &'a [Option<Value>],
    tested: &'a Tested<'t>,
    debug: bool,
}

impl Judged<'_, '_> {
    /// The first run whose outputs are the judged run's: every value
    /// exposed, then the tries with fewer (see [`hidden_values`]), whose
    /// hidden values are then exposed back (see [`expose_back`]). With how
    /// many values stay hidden.
    fn first_own_values(&self, exposable: &[InstrId]) -> (Option<Vec<Option<Value>>>, usize) {
        let numerics = self.tested.numerics();
        let mut values = self.own_values(exposable);
        let mut hidden = 0;
        // second and third tries: fewer values exposed, each left unexposed
        // judged inside the regions of its readers (larger regions, looser)
        let narrow_may_widen =
            numerics.excess_precision_anywhere || numerics.excess_precision_in_fusions;
        let tries: &[(bool, bool)] = if narrow_may_widen {
            &[(false, false), (true, false), (true, true)]
        } else {
            &[(false, false), (true, false)]
        };
        for &(reads, narrow) in tries {
            if values.is_some() {
                break;
            }
            let hide = hidden_values(self.module, reads, narrow, &numerics);
            let fewer: Vec<InstrId> = exposable
                .iter()
                .copied()
                .filter(|i| !hide[i.index()])
                .collect();
            if fewer.len() < exposable.len() {
                hidden = exposable.len() - fewer.len();
                values = self.own_values(&fewer);
                if let Some(v) = values.as_mut() {
                    let run = |exposed: &[InstrId]| self.own_values(exposed);
                    hidden = expose_back(exposable, &hide, v, run, self.debug);
                }
            }
        }
        (values, hidden)
    }

    /// The backend's values of every entry instruction when `exposed` are
    /// made outputs (parameters and constants are the reference's; a value
    /// not exposed is None), or None when that run fails or its outputs are
    /// not the judged run's, bit for bit.
    fn own_values(&self, exposed: &[InstrId]) -> Option<Vec<Option<Value>>> {
        let entry = self.module.entry_computation();
        let leaves = match self
            .tested
            .run(&expose_values(self.module, exposed), self.args)
        {
            Ok(l) => l,
            Err(e) => {
                if self.debug {
                    eprintln!("certificate debug: the exposed run failed: {e}");
                }
                return None;
            }
        };
        let mut values: Vec<Option<Value>> = entry
            .instructions
            .iter()
            .zip(self.reference)
            .map(|(ins, v)| match ins.opcode {
                Opcode::Parameter | Opcode::Constant => v.clone(),
                _ => None,
            })
            .collect();
        let mut it = leaves.into_iter();
        for &i in exposed {
            *values.get_mut(i.index())? = Some(rebuild(&entry.instr(i).shape, &mut it));
        }
        // the exposed run must be the judged run
        let outputs = values.get(entry.root.index())?.as_ref()?.flatten();
        if !same_bits(&outputs, self.actual) {
            if self.debug {
                eprintln!(
                    "certificate debug: the run with {} values exposed computes other outputs than the judged run",
                    exposed.len()
                );
            }
            return None;
        }
        Some(values)
    }
}

/// Most runs spent exposing hidden values back (see [`expose_back`]).
const EXPOSE_BACK_RUNS: usize = 12;

/// The hidden values are exposed back, a group at a time (first a sixth
/// of them, then halves of the groups that failed), keeping each group
/// whose run still gives the judged outputs bit for bit; `values` becomes
/// the last such run's. Which values change the program once exposed is
/// the compiler's choice (a reduction fused into its readers, a product
/// contracted into its add), and every value exposed back is one a region
/// no longer recomputes: the regions that judge hidden values shrink from
/// a network's whole forward pass to the few units around a sum. Sound as
/// the first run is: only a run with the judged outputs is used. Returns
/// how many values stay hidden.
fn expose_back(
    exposable: &[InstrId],
    hide: &[bool],
    values: &mut Vec<Option<Value>>,
    mut run: impl FnMut(&[InstrId]) -> Option<Vec<Option<Value>>>,
    debug: bool,
) -> usize {
    let mut hidden: HashSet<InstrId> = exposable
        .iter()
        .copied()
        .filter(|i| hide[i.index()])
        .collect();
    let order: Vec<InstrId> = exposable
        .iter()
        .copied()
        .filter(|i| hidden.contains(i))
        .collect();
    let size = order.len().div_ceil(6).max(1);
    let mut groups: std::collections::VecDeque<Vec<InstrId>> =
        order.chunks(size).map(<[InstrId]>::to_vec).collect();
    let mut runs = 0;
    while let Some(group) = groups.pop_front() {
        if runs == EXPOSE_BACK_RUNS {
            break;
        }
        runs += 1;
        let exposed: Vec<InstrId> = exposable
            .iter()
            .copied()
            .filter(|i| !hidden.contains(i) || group.contains(i))
            .collect();
        match run(&exposed) {
            Some(v) => {
                for i in &group {
                    hidden.remove(i);
                }
                *values = v;
            }
            None if group.len() > 1 => {
                let (a, b) = group.split_at(group.len() / 2);
                groups.push_back(a.to_vec());
                groups.push_back(b.to_vec());
            }
            None => {}
        }
    }
    if debug {
        eprintln!(
            "certificate debug: {} values stay hidden after {runs} runs exposing them back",
            hidden.len()
        );
    }
    hidden.len()
}

/// The entry values to leave unexposed: what a reduction or contraction
/// computes and what only moves such a value (reshape, broadcast,
/// transpose, ...), and with `reads` also what a reduction or contraction
/// reads (exposing it changes how the compiler fuses the producer into the
/// sum, and so its order) and a product an add reads where the numerics
/// let it be contracted (exposed, it is rounded first), and with `narrow`
/// also every narrow float (bf16, f16, f8) where the numerics allow excess
/// precision: a compiler that keeps a narrow chain in f32 inside one
/// kernel rounds a value first once it is an output. A value is left
/// unexposed only where every reader is a unit, whose region then judges
/// it: never the root, nor a value that tuples or get-tuple-elements read.
fn hidden_values(module: &Module, reads: bool, narrow: bool, numerics: &Numerics) -> Vec<bool> {
    let entry = module.entry_computation();
    let n = entry.instructions.len();
    let sums_alone: Vec<bool> = entry
        .instructions
        .iter()
        .map(|ins| reassociates(module, ins))
        .collect();
    let mut read_by_unit = vec![true; n];
    let mut read_by_sum = vec![false; n];
    for (ins, &alone) in entry.instructions.iter().zip(&sums_alone) {
        let sums = alone
            || (matches!(ins.opcode, Opcode::Add | Opcode::Subtract)
                && numerics.contracts_multiply_add);
        for &o in &ins.operands {
            read_by_unit[o.index()] &= is_candidate(ins.opcode);
            read_by_sum[o.index()] |= sums
                && (!matches!(ins.opcode, Opcode::Add | Opcode::Subtract)
                    || entry.instr(o).opcode == Opcode::Multiply);
        }
    }
    let mut hide = vec![false; n];
    for i in entry.post_order().unwrap_or_default() {
        let ins = entry.instr(i);
        if i == entry.root
            || !read_by_unit[i.index()]
            || matches!(ins.opcode, Opcode::Parameter | Opcode::Constant)
        {
            continue;
        }
        let moves_hidden = moves_data(ins.opcode) && ins.operands.iter().any(|o| hide[o.index()]);
        let narrow_float = ins
            .shape
            .as_array()
            .is_some_and(|a| a.dtype.is_float() && a.dtype.bit_width() < 32);
        hide[i.index()] = sums_alone[i.index()]
            || moves_hidden
            || (reads && read_by_sum[i.index()])
            || (narrow && narrow_float);
    }
    hide
}

/// Whether the numerics let a value of `ins` reach its readers unrounded:
/// a float product of f32 or narrower contracted into its add, or a narrow
/// float result kept in f32 (excess precision).
fn may_stay_unrounded(ins: &Instruction, numerics: &Numerics) -> bool {
    let Some(t) = ins.shape.as_array().map(|a| a.dtype) else {
        return false;
    };
    if !t.is_float() {
        return false;
    }
    (numerics.contracts_multiply_add && ins.opcode == Opcode::Multiply)
        || (t.bit_width() < 32
            && (numerics.excess_precision_anywhere || numerics.excess_precision_in_fusions))
}

/// Ops that only move or replicate elements.
fn moves_data(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Reshape
            | Opcode::Broadcast
            | Opcode::Transpose
            | Opcode::Bitcast
            | Opcode::Copy
            | Opcode::Slice
            | Opcode::Reverse
            | Opcode::Concatenate
            | Opcode::Pad
    )
}

/// Whether an instruction sums in an order the compiler chooses (and may
/// choose otherwise when its value becomes an output): a reduction, a
/// contraction or a scatter, or a fusion or call that holds one.
fn reassociates(module: &Module, ins: &Instruction) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![ins];
    while let Some(i) = stack.pop() {
        if matches!(
            i.opcode,
            Opcode::Reduce
                | Opcode::ReduceWindow
                | Opcode::Dot
                | Opcode::Convolution
                | Opcode::Scatter
                | Opcode::SelectAndScatter
        ) {
            return true;
        }
        if !matches!(i.opcode, Opcode::Fusion | Opcode::Call) {
            continue;
        }
        for c in i.called_computations() {
            if seen.insert(c) {
                if let Some(comp) = module.computations.get(c.index()) {
                    stack.extend(comp.instructions.iter());
                }
            }
        }
    }
    false
}

/// `roots` with every unexposed value they read, transitively, in
/// topological order (`rank`: each instruction's place in it).
fn region_of(
    module: &Module,
    values: &[Option<Value>],
    rank: &[usize],
    roots: &[InstrId],
) -> Vec<InstrId> {
    let entry = module.entry_computation();
    let mut inside: HashSet<InstrId> = roots.iter().copied().collect();
    let mut stack: Vec<InstrId> = roots.to_vec();
    while let Some(i) = stack.pop() {
        for &o in &entry.instr(i).operands {
            if values.get(o.index()).is_some_and(Option::is_none) && inside.insert(o) {
                stack.push(o);
            }
        }
    }
    let mut region: Vec<InstrId> = inside.into_iter().collect();
    region.sort_by_key(|i| rank[i.index()]);
    region
}

/// Judges the backend's value `got` of `root`, computed by `region` from
/// the backend's own values of the region's operands: its worst error in
/// ULP when legal, else the kind of the mismatch.
fn judge_region(
    module: &Module,
    values: &[Option<Value>],
    region: &[InstrId],
    root: InstrId,
    got: &[Literal],
    numerics: &Numerics,
) -> Result<f64, MismatchKind> {
    let x = extract_region(module, region, root);
    let cargs = operand_args(values, &x.operands).ok_or(MismatchKind::ReferenceFailed)?;
    let expected =
        crate::reference::evaluate(&x.module, &cargs).map_err(|_| MismatchKind::ReferenceFailed)?;
    if same_bits(&expected, got) {
        return Ok(0.0);
    }
    let verdict = judge_outputs(&x.module, &cargs, &expected, got, numerics);
    if verdict.kind().is_some() && std::env::var_os("XLA_PROPS_DEBUG_OWN_RUN").is_some() {
        eprintln!(
            "own-run debug: region of {} instructions around `{}`:\n{}\n{verdict}",
            region.len(),
            module.entry_computation().instr(root).name,
            x.module
        );
    }
    match verdict.kind() {
        Some(kind) => Err(kind),
        None => Ok(worst_ulp(&expected, got)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;

    const TEXT: &str = "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum_fused {
  p = f32[4,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
}
scale_fused {
  p = f32[4] parameter(0)
  ROOT m = f32[4] multiply(p, p)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  s = f32[4] fusion(x), kind=kLoop, calls=sum_fused
  q = f32[4] fusion(s), kind=kLoop, calls=scale_fused
  ROOT n = f32[4] negate(q)
}
";

    fn id(m: &Module, name: &str) -> InstrId {
        m.entry_computation().find(name).unwrap()
    }

    #[test]
    fn a_fusion_that_holds_a_reduction_reassociates_and_an_elementwise_one_does_not() {
        let m = parse_module(TEXT).unwrap();
        let entry = m.entry_computation();
        assert!(reassociates(&m, entry.instr(id(&m, "s"))));
        assert!(!reassociates(&m, entry.instr(id(&m, "q"))));
        assert!(!reassociates(&m, entry.instr(id(&m, "n"))));
    }

    /// A max-pool gradient's value-and-index reduce-window: the reducer
    /// keeps the first of equal maxima (associative, `(0, -1)` its
    /// identity, not commutative). Its operands keep their order in the
    /// reduction tree, so one index is legal among ties, the first: a
    /// result that broke the tie otherwise is a mismatch, also under a
    /// compiler's permissive numerics.
    #[test]
    fn an_argmax_window_over_ties_allows_only_the_first_maximum() {
        let text = "HloModule rw
red {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  m1 = s32[] constant(-1)
  c0 = pred[] compare(ai, m1), direction=NE
  c1 = pred[] compare(bi, m1), direction=NE
  ge = pred[] compare(a, b), direction=GE
  nc1 = pred[] not(c1)
  and = pred[] and(ge, c0)
  or = pred[] or(and, nc1)
  v = f32[] select(or, a, b)
  i = s32[] select(or, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[1,4] parameter(0)
  io = s32[1,4] iota(), iota_dimension=1
  z = f32[] constant(0)
  m1 = s32[] constant(-1)
  ROOT r = (f32[1,1], s32[1,1]) reduce-window(x, io, z, m1), window={size=1x4}, to_apply=red
}
";
        use crate::hlo::ArrayShape;
        use crate::hlo::ElementType::{F32, S32};
        let m = parse_module(text).unwrap();
        let shape = |dtype, dims: Vec<i64>| ArrayShape {
            dtype,
            dims,
            layout: None,
        };
        // a ReLU's zeros, a tie among all four
        let args =
            vec![Literal::from_f64s(&shape(F32, vec![1, 4]), &[0.0, 0.0, 0.0, 0.0]).unwrap()];
        let expected = crate::reference::evaluate(&m, &args).unwrap();
        assert_eq!(expected[1].get_f64(0), 0.0, "the first maximum");
        let numerics = crate::backend::iree::numerics::iree_cpu_numerics();
        let with_index = |i: f64| {
            vec![
                expected[0].clone(),
                Literal::from_f64s(&shape(S32, vec![1, 1]), &[i]).unwrap(),
            ]
        };
        assert!(
            judge_outputs(&m, &args, &expected, &with_index(0.0), &numerics)
                .kind()
                .is_none()
        );
        assert!(
            judge_outputs(&m, &args, &expected, &with_index(3.0), &numerics)
                .kind()
                .is_some()
        );
    }

    #[test]
    fn hidden_values_are_exposed_back_except_the_one_that_changes_the_outputs() {
        // twelve values, all hidden; exposing `5` changes the program
        let exposable: Vec<InstrId> = (0..12).map(InstrId).collect();
        let hide = vec![true; 12];
        let mut values: Vec<Option<Value>> = vec![None; 12];
        let mut runs = 0;
        let stay = expose_back(
            &exposable,
            &hide,
            &mut values,
            |exposed: &[InstrId]| {
                runs += 1;
                if exposed.contains(&InstrId(5)) {
                    return None;
                }
                // a run's values: each exposed value is its own index
                let mut v = vec![None; 12];
                for i in exposed {
                    v[i.index()] = Some(Value::Array(Literal::scalar(
                        crate::hlo::ElementType::F32,
                        i.index() as f64,
                    )));
                }
                Some(v)
            },
            false,
        );
        assert_eq!(stay, 1);
        assert!(runs <= EXPOSE_BACK_RUNS);
        // the values are the last successful run's: all but `5`
        let shown: Vec<usize> = (0..12).filter(|&i| values[i].is_some()).collect();
        assert_eq!(shown, vec![0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
    }

    #[test]
    fn no_value_is_exposed_back_when_every_run_changes_the_outputs() {
        let exposable: Vec<InstrId> = (0..4).map(InstrId).collect();
        let hide = vec![false, true, true, false];
        let mut values: Vec<Option<Value>> = vec![None; 4];
        let stay = expose_back(&exposable, &hide, &mut values, |_: &[InstrId]| None, false);
        assert_eq!(stay, 2);
        assert!(values.iter().all(Option::is_none));
    }

    #[test]
    fn a_region_takes_in_every_unexposed_value_it_reads_and_stops_at_exposed_ones() {
        let m = parse_module(TEXT).unwrap();
        let n = m.entry_computation().instructions.len();
        let some = Some(Value::Array(Literal::scalar(
            crate::hlo::ElementType::F32,
            0.0,
        )));
        let mut values: Vec<Option<Value>> = vec![some.clone(); n];
        let rank: Vec<usize> = (0..n).collect();
        // `s` hidden: `q`'s region recomputes it from `x`
        values[id(&m, "s").index()] = None;
        let r = region_of(&m, &values, &rank, &[id(&m, "q")]);
        assert_eq!(r, vec![id(&m, "s"), id(&m, "q")]);
        // `q` exposed: `n`'s region is `n` alone
        assert_eq!(
            region_of(&m, &values, &rank, &[id(&m, "n")]),
            vec![id(&m, "n")]
        );
    }
}
