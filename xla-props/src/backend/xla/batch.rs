//! Batching: many small independent modules as one module, so that one XLA
//! compile serves them all (see docs/perf.md: 256 single-op cases compile
//! 16x faster per case in one module).
//!
//! XLA optimizes across the whole batch (it may merge equal constants, for
//! instance), so a case that fails batched must be confirmed unbatched
//! before it is reported.

use crate::hlo::rewrite::remap_called;
use crate::hlo::{CompId, Computation, InstrId, Instruction, Module, Opcode, Shape};

/// A batch of modules merged into one, and how to split its outputs back.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The merged module: its entry takes every module's parameters in order
    /// and returns a tuple of every module's result.
    pub module: Module,
    /// Per input module: how many flattened outputs it owns.
    pub output_counts: Vec<usize>,
}

impl Batch {
    /// Splits the merged module's flattened outputs back per input module.
    pub fn split<T: Clone>(&self, outputs: &[T]) -> Option<Vec<Vec<T>>> {
        if outputs.len() != self.output_counts.iter().sum::<usize>() {
            return None;
        }
        let mut rest = outputs;
        let mut out = Vec::with_capacity(self.output_counts.len());
        for &n in &self.output_counts {
            let (head, tail) = rest.split_at(n);
            out.push(head.to_vec());
            rest = tail;
        }
        Some(out)
    }
}

fn remap(id: CompId, offset: u32) -> CompId {
    CompId(id.0 + offset)
}

/// Merges independent modules: each module's computations are kept (renamed
/// `b<k>.<name>`), and a new entry calls every module's entry on its own
/// parameters and returns the tuple of the results.
///
/// ```
/// use xla_props::hlo::{CompId, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape};
/// use xla_props::backend::xla::batch::batch_modules;
/// let s = Shape::array(ElementType::F32, vec![2]);
/// let mut p = Instruction::new("p", Opcode::Parameter, s.clone(), vec![]);
/// p.attrs.parameter_number = Some(0);
/// let n = Instruction::new("n", Opcode::Negate, s, vec![InstrId(0)]);
/// let c = Computation { name: "main".into(), instructions: vec![p, n], root: InstrId(1), other: vec![] };
/// let m = Module { name: "m".into(), attrs: vec![], computations: vec![c], entry: CompId(0) };
/// let b = batch_modules(&[&m, &m]);
/// assert_eq!(b.module.parameter_shapes().len(), 2);
/// assert_eq!(b.output_counts, vec![1, 1]);
/// ```
pub fn batch_modules(modules: &[&Module]) -> Batch {
    let mut computations: Vec<Computation> = Vec::new();
    let mut entry_instrs: Vec<Instruction> = Vec::new();
    let mut results: Vec<InstrId> = Vec::new();
    let mut result_shapes: Vec<Shape> = Vec::new();
    let mut output_counts = Vec::new();
    let mut param_number = 0i64;
    for (k, m) in modules.iter().enumerate() {
        let offset = computations.len() as u32;
        for c in &m.computations {
            let mut c = c.clone();
            c.name = format!("b{k}.{}", c.name);
            for i in &mut c.instructions {
                remap_called(&mut i.attrs, &|c| remap(c, offset));
            }
            computations.push(c);
        }
        let mut operands = Vec::new();
        for shape in m.parameter_shapes() {
            let mut p = Instruction::new(
                format!("b{k}.p{param_number}"),
                Opcode::Parameter,
                shape.clone(),
                vec![],
            );
            p.attrs.parameter_number = Some(param_number);
            param_number += 1;
            entry_instrs.push(p);
            operands.push(InstrId(entry_instrs.len() as u32 - 1));
        }
        let result = m.result_shape().clone();
        let mut call =
            Instruction::new(format!("b{k}.call"), Opcode::Call, result.clone(), operands);
        call.attrs.to_apply = Some(remap(m.entry, offset));
        entry_instrs.push(call);
        results.push(InstrId(entry_instrs.len() as u32 - 1));
        output_counts.push(result.leaves().len());
        result_shapes.push(result);
    }
    entry_instrs.push(Instruction::new(
        "batch.results",
        Opcode::Tuple,
        Shape::Tuple(result_shapes),
        results,
    ));
    computations.push(Computation {
        name: "batch.main".into(),
        root: InstrId(entry_instrs.len() as u32 - 1),
        instructions: entry_instrs,
        other: vec![],
    });
    Batch {
        module: Module {
            name: "batch".into(),
            attrs: vec![],
            entry: CompId(computations.len() as u32 - 1),
            computations,
        },
        output_counts,
    }
}
