//! The module verifier: structure (names, indices, parameters, call graph)
//! and shapes (every declared shape equals the inferred one, layouts ignored).

use std::collections::{HashMap, HashSet};

use super::ir::{CompId, Computation, Module};
use super::opcode::Opcode;
use super::shape::Shape;
use super::shape_inference::{arity_text, infer_shape, ShapeErrorKind};

/// Why a module is not valid HLO. Messages are lowercase and name the
/// computation and instruction involved.
///
/// ```
/// use xla_props::hlo::{verify, ElementType, ModuleBuilder, Shape, VerifyError};
/// let mut m = ModuleBuilder::new("m");
/// let mut module = m
///     .build("main", |b| b.parameter(Shape::array(ElementType::F32, vec![3])))
///     .unwrap();
/// // a second parameter numbered 0 makes the numbering invalid
/// let p = module.computations[0].instructions[0].clone();
/// module.computations[0].instructions.push(xla_props::hlo::Instruction { name: "p.dup".into(), ..p });
/// assert!(matches!(verify(&module), Err(VerifyError::ParameterNumbering { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyError {
    /// The module's entry id is out of range.
    #[error("entry computation #{0} does not exist")]
    EntryOutOfRange(u32),
    /// Two computations share a name.
    #[error("duplicate computation name '{0}'")]
    DuplicateComputation(String),
    /// Two instructions of the module share a name.
    #[error("duplicate instruction name '{name}' in computations '{first}' and '{second}'")]
    DuplicateInstruction {
        /// The name.
        name: String,
        /// The computation of its first use.
        first: String,
        /// The computation of its second use.
        second: String,
    },
    /// A computation's root is out of range (or the computation is empty).
    #[error("computation '{computation}': root #{root} does not exist")]
    RootOutOfRange {
        /// The computation.
        computation: String,
        /// The bad root index.
        root: u32,
    },
    /// An operand refers to an instruction that does not exist.
    #[error("computation '{computation}', instruction '{instruction}': operand {position} refers to undefined instruction #{id}")]
    UndefinedOperand {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// Which operand.
        position: usize,
        /// The bad index.
        id: u32,
    },
    /// An instruction calls a computation that does not exist.
    #[error("computation '{computation}', instruction '{instruction}': calls undefined computation #{id}")]
    UndefinedComputation {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// The bad index.
        id: u32,
    },
    /// The instructions of a computation form a cycle.
    #[error("computation '{computation}': its instructions form a cycle")]
    Cycle {
        /// The computation.
        computation: String,
    },
    /// Parameters are not numbered `0..n` exactly once each.
    #[error("computation '{computation}': {detail}")]
    ParameterNumbering {
        /// The computation.
        computation: String,
        /// What is wrong.
        detail: String,
    },
    /// An instruction calls the entry computation.
    #[error("computation '{computation}', instruction '{instruction}': calls the entry computation '{entry}'")]
    EntryCalled {
        /// The calling computation.
        computation: String,
        /// The calling instruction.
        instruction: String,
        /// The entry computation.
        entry: String,
    },
    /// The call graph has a cycle.
    #[error("computation '{computation}' calls itself (recursion through {path})")]
    Recursion {
        /// A computation on the cycle.
        computation: String,
        /// The cycle, as `'a' -> 'b' -> 'a'`.
        path: String,
    },
    /// Wrong number of operands for the opcode.
    #[error("computation '{computation}', instruction '{instruction}': {opcode} takes {expected} operands, got {got}")]
    Arity {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// Its opcode.
        opcode: Opcode,
        /// What the opcode table allows.
        expected: String,
        /// What it has.
        got: usize,
    },
    /// A required attribute is absent.
    #[error("computation '{computation}', instruction '{instruction}': {message}")]
    MissingAttribute {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// Which attribute, from shape inference.
        message: String,
    },
    /// A called computation has the wrong signature.
    #[error("computation '{computation}', instruction '{instruction}': {message}")]
    CalleeSignature {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// What is wrong, from shape inference.
        message: String,
    },
    /// Operands or attributes are invalid for the op (shape inference failed).
    #[error("computation '{computation}', instruction '{instruction}': {message}")]
    Invalid {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// What is wrong, from shape inference.
        message: String,
    },
    /// A shape is malformed (negative dimension, bad layout).
    #[error("computation '{computation}', instruction '{instruction}': invalid shape {shape}: {message}")]
    BadShape {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// The shape.
        shape: Box<Shape>,
        /// What is wrong.
        message: String,
    },
    /// The declared shape differs from the inferred one.
    #[error("computation '{computation}', instruction '{instruction}': declared shape {declared} but {opcode} of {operands} gives {inferred}")]
    ShapeMismatch {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// Its opcode.
        opcode: Opcode,
        /// The operand shapes, comma separated.
        operands: String,
        /// The declared shape.
        declared: Box<Shape>,
        /// The inferred shape.
        inferred: Box<Shape>,
    },
}

fn shape_problem(s: &Shape) -> Option<String> {
    match s {
        Shape::Token => None,
        Shape::Tuple(t) => t.iter().find_map(shape_problem),
        Shape::Array(a) => {
            if let Some(d) = a.dims.iter().find(|&&d| d < 0) {
                return Some(format!("negative dimension {d}"));
            }
            if a.element_count().is_none() {
                return Some("element count overflows".into());
            }
            let l = a.layout.as_ref()?;
            let mut seen = vec![false; a.rank()];
            let perm = l.minor_to_major.len() == a.rank()
                && l.minor_to_major.iter().all(|&d| {
                    usize::try_from(d)
                        .ok()
                        .and_then(|i| seen.get_mut(i))
                        .is_some_and(|s| !std::mem::replace(s, true))
                });
            (!perm).then(|| "layout is not a permutation of the dimensions".into())
        }
    }
}

impl VerifyError {
    /// The computation and instruction the error is about, where it names
    /// one (for a location in the source text).
    pub fn site(&self) -> Option<(&str, &str)> {
        use VerifyError::*;
        match self {
            UndefinedOperand {
                computation,
                instruction,
                ..
            }
            | UndefinedComputation {
                computation,
                instruction,
                ..
            }
            | EntryCalled {
                computation,
                instruction,
                ..
            }
            | Arity {
                computation,
                instruction,
                ..
            }
            | MissingAttribute {
                computation,
                instruction,
                ..
            }
            | CalleeSignature {
                computation,
                instruction,
                ..
            }
            | Invalid {
                computation,
                instruction,
                ..
            }
            | BadShape {
                computation,
                instruction,
                ..
            }
            | ShapeMismatch {
                computation,
                instruction,
                ..
            } => Some((computation, instruction)),
            _ => None,
        }
    }
}

/// Checks that `module` is well formed and that every declared shape is the
/// one shape inference gives (layouts ignored). Parse-only ops are accepted
/// as declared.
///
/// ```
/// use xla_props::hlo::{verify, ElementType, ModuleBuilder, Opcode, Shape};
/// let module = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(ElementType::F32, vec![3]))?;
///         b.binary(Opcode::Add, x, x)
///     })
///     .unwrap();
/// assert!(verify(&module).is_ok());
///
/// let mut bad = module.clone();
/// bad.computations[0].instructions[1].shape = Shape::array(ElementType::F32, vec![2]);
/// assert_eq!(
///     verify(&bad).unwrap_err().to_string(),
///     "computation 'main', instruction 'add.2': declared shape f32[2] but add of f32[3], f32[3] gives f32[3]"
/// );
/// ```
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    let n_comps = module.computations.len();
    if module.entry.index() >= n_comps {
        return Err(VerifyError::EntryOutOfRange(module.entry.0));
    }
    let mut comp_names = HashMap::new();
    let mut instr_names: HashMap<&str, &str> = HashMap::new();
    for c in &module.computations {
        if comp_names.insert(c.name.as_str(), ()).is_some() {
            return Err(VerifyError::DuplicateComputation(c.name.clone()));
        }
        for i in &c.instructions {
            if let Some(first) = instr_names.insert(i.name.as_str(), c.name.as_str()) {
                return Err(VerifyError::DuplicateInstruction {
                    name: i.name.clone(),
                    first: first.to_string(),
                    second: c.name.clone(),
                });
            }
        }
    }
    for c in &module.computations {
        check_structure(module, c)?;
    }
    check_call_graph(module)?;
    for c in &module.computations {
        if c.post_order().is_none() {
            return Err(VerifyError::Cycle {
                computation: c.name.clone(),
            });
        }
        check_shapes(module, c)?;
    }
    Ok(())
}

/// Renames instructions so that names are unique module-wide, the way XLA's
/// text parser does: the first use of a name keeps it, later ones get the
/// first free `name.N`. HLO text may reuse a name in different computations
/// (XLA's own tests do); [`verify`] requires module-wide unique names, so call
/// this on a parsed module first. Returns how many instructions were renamed.
///
/// ```
/// use xla_props::hlo::{uniquify_names, verify, ElementType, ModuleBuilder, Shape};
/// let mut m = ModuleBuilder::new("m");
/// m.computation("f", |b| b.parameter(Shape::scalar(ElementType::F32))).unwrap();
/// let mut module = m
///     .build("main", |b| b.parameter(Shape::scalar(ElementType::F32)))
///     .unwrap();
/// module.computations[1].instructions[0].name = "p".into();
/// module.computations[0].instructions[0].name = "p".into();
/// assert!(verify(&module).is_err());
/// assert_eq!(uniquify_names(&mut module), 1);
/// assert_eq!(module.computations[1].instructions[0].name, "p.1");
/// verify(&module).unwrap();
/// ```
pub fn uniquify_names(module: &mut Module) -> usize {
    let mut taken: HashSet<String> = HashSet::new();
    let mut dups = Vec::new();
    for (c, comp) in module.computations.iter().enumerate() {
        for (i, instr) in comp.instructions.iter().enumerate() {
            if !taken.insert(instr.name.clone()) {
                dups.push((c, i));
            }
        }
    }
    for &(c, i) in &dups {
        let instr = &mut module.computations[c].instructions[i];
        let fresh = (1u64..)
            .map(|k| format!("{}.{k}", instr.name))
            .find(|n| !taken.contains(n))
            .unwrap_or_default();
        taken.insert(fresh.clone());
        instr.name = fresh;
    }
    dups.len()
}

fn check_structure(module: &Module, c: &Computation) -> Result<(), VerifyError> {
    let n = c.instructions.len();
    if c.root.index() >= n {
        return Err(VerifyError::RootOutOfRange {
            computation: c.name.clone(),
            root: c.root.0,
        });
    }
    let mut params: Vec<(i64, &str)> = Vec::new();
    for i in &c.instructions {
        let at = |message: String| (c.name.clone(), i.name.clone(), message);
        for (position, o) in i.operands.iter().enumerate() {
            if o.index() >= n {
                return Err(VerifyError::UndefinedOperand {
                    computation: c.name.clone(),
                    instruction: i.name.clone(),
                    position,
                    id: o.0,
                });
            }
        }
        for callee in i.called_computations() {
            if callee.index() >= module.computations.len() {
                return Err(VerifyError::UndefinedComputation {
                    computation: c.name.clone(),
                    instruction: i.name.clone(),
                    id: callee.0,
                });
            }
        }
        if !i.opcode.arity().accepts(i.operands.len()) {
            return Err(VerifyError::Arity {
                computation: c.name.clone(),
                instruction: i.name.clone(),
                opcode: i.opcode,
                expected: arity_text(i.opcode),
                got: i.operands.len(),
            });
        }
        if let Some(message) = shape_problem(&i.shape) {
            let (computation, instruction, message) = at(message);
            return Err(VerifyError::BadShape {
                computation,
                instruction,
                shape: Box::new(i.shape.clone()),
                message,
            });
        }
        if i.opcode == Opcode::Parameter {
            match i.attrs.parameter_number {
                Some(k) => params.push((k, &i.name)),
                None => {
                    return Err(VerifyError::ParameterNumbering {
                        computation: c.name.clone(),
                        detail: format!("parameter '{}' has no number", i.name),
                    })
                }
            }
        }
    }
    params.sort();
    for (k, (num, name)) in params.iter().enumerate() {
        if *num != k as i64 {
            let detail = if k > 0 && params[k - 1].0 == *num {
                format!("parameter '{name}' repeats parameter number {num}")
            } else {
                format!(
                    "parameter '{name}' has number {num} but {k} is missing (parameters must be numbered 0..{})",
                    params.len()
                )
            };
            return Err(VerifyError::ParameterNumbering {
                computation: c.name.clone(),
                detail,
            });
        }
    }
    Ok(())
}

fn check_call_graph(module: &Module) -> Result<(), VerifyError> {
    let entry = module.entry_computation();
    let callees: Vec<Vec<CompId>> = module
        .computations
        .iter()
        .map(|c| {
            c.instructions
                .iter()
                .flat_map(|i| i.called_computations())
                .collect()
        })
        .collect();
    for c in &module.computations {
        for i in &c.instructions {
            if i.called_computations().contains(&module.entry) {
                return Err(VerifyError::EntryCalled {
                    computation: c.name.clone(),
                    instruction: i.name.clone(),
                    entry: entry.name.clone(),
                });
            }
        }
    }
    // iterative DFS; 0 = unvisited, 1 = on the stack, 2 = done
    let n = module.computations.len();
    let mut state = vec![0u8; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = callees[node].get(*next) {
                *next += 1;
                let child = child.index();
                match state[child] {
                    0 => {
                        state[child] = 1;
                        stack.push((child, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(c, _)| c == child).unwrap_or(0);
                        let mut path: Vec<String> = stack[from..]
                            .iter()
                            .map(|&(c, _)| format!("'{}'", module.computations[c].name))
                            .collect();
                        path.push(format!("'{}'", module.computations[child].name));
                        return Err(VerifyError::Recursion {
                            computation: module.computations[child].name.clone(),
                            path: path.join(" -> "),
                        });
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

fn check_shapes(module: &Module, c: &Computation) -> Result<(), VerifyError> {
    for i in &c.instructions {
        let computation = || c.name.clone();
        let instruction = || i.name.clone();
        let inferred = infer_shape(module, c, i).map_err(|e| match e.kind {
            ShapeErrorKind::MissingAttribute => VerifyError::MissingAttribute {
                computation: computation(),
                instruction: instruction(),
                message: e.message,
            },
            ShapeErrorKind::Callee => VerifyError::CalleeSignature {
                computation: computation(),
                instruction: instruction(),
                message: e.message,
            },
            _ => VerifyError::Invalid {
                computation: computation(),
                instruction: instruction(),
                message: e.message,
            },
        })?;
        if !inferred.compatible(&i.shape) {
            let operands: Vec<String> = i
                .operands
                .iter()
                .map(|o| c.instr(*o).shape.to_string())
                .collect();
            return Err(VerifyError::ShapeMismatch {
                computation: computation(),
                instruction: instruction(),
                opcode: i.opcode,
                operands: if operands.is_empty() {
                    "no operands".into()
                } else {
                    operands.join(", ")
                },
                declared: Box::new(i.shape.clone()),
                inferred: Box::new(inferred),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
