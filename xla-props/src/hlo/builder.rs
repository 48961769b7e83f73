//! A builder for HLO modules in Rust: every method infers its result shape
//! (so a program that builds is well typed), names are generated, and
//! [`ModuleBuilder::build`] returns a verified [`Module`].

use std::collections::HashSet;

use super::dtype::ElementType;
use super::ir::{Attrs, CompId, ComparisonDirection, Computation, InstrId, Instruction, Module};
use super::opcode::Opcode;
use super::shape::{Layout, Shape};
use super::shape_inference::{default_comparison_type, infer, ShapeError};
use super::verifier::{verify, VerifyError};

mod ops;

/// Why a builder call failed.
///
/// ```
/// use xla_props::hlo::{BuildError, ElementType::F32, ModuleBuilder, Shape};
/// let err = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![4]))?;
///         b.reshape(x, &[3])
///     })
///     .unwrap_err();
/// assert!(matches!(err, BuildError::Shape { .. }));
/// assert_eq!(
///     err.to_string(),
///     "computation 'main': cannot add reshape: reshape: cannot reshape f32[4] to dims {3} (element counts differ)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// Shape inference rejected an instruction.
    #[error("computation '{computation}': cannot add {opcode}: {source}")]
    Shape {
        /// The computation being built.
        computation: String,
        /// The opcode being added.
        opcode: Opcode,
        /// Why.
        source: ShapeError,
    },
    /// An [`InstrId`] that this computation builder did not hand out.
    #[error("computation '{computation}': unknown instruction #{id}")]
    UnknownInstruction {
        /// The computation being built.
        computation: String,
        /// The bad id.
        id: u32,
    },
    /// Bad arguments to a builder method (e.g. a layout that is not a permutation).
    #[error("computation '{computation}': {message}")]
    Invalid {
        /// The computation being built.
        computation: String,
        /// What is wrong.
        message: String,
    },
    /// The finished module failed verification.
    #[error("built module is invalid: {0}")]
    Verify(Box<VerifyError>),
}

/// Builds a [`Module`] one computation at a time.
///
/// Callees (reducers, fusion bodies, loop bodies) are added first with
/// [`ModuleBuilder::computation`]; the entry computation last with
/// [`ModuleBuilder::build`], which verifies the whole module.
///
/// ```
/// use xla_props::hlo::{ElementType::F32, ModuleBuilder, Opcode, Shape};
/// let mut m = ModuleBuilder::new("sum_of_squares");
/// let add = m.scalar_reducer(Opcode::Add, F32).unwrap();
/// let module = m
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![4, 8]))?;
///         let sq = b.binary(Opcode::Multiply, x, x)?;
///         let zero = b.constant_f64(F32, &[], &[0.0])?;
///         b.reduce(&[sq], &[zero], &[1], add)
///     })
///     .unwrap();
/// assert_eq!(module.result_shape(), &Shape::array(F32, vec![4]));
/// assert_eq!(module.computations.len(), 2);
/// ```
#[derive(Debug)]
pub struct ModuleBuilder {
    name: String,
    computations: Vec<Computation>,
    names: HashSet<String>,
    counter: u64,
}

impl ModuleBuilder {
    /// A builder for a module called `name`.
    pub fn new(name: impl Into<String>) -> ModuleBuilder {
        ModuleBuilder {
            name: name.into(),
            computations: Vec::new(),
            names: HashSet::new(),
            counter: 0,
        }
    }

    /// The computations added so far.
    pub fn computations(&self) -> &[Computation] {
        &self.computations
    }

    fn unique_computation_name(&self, name: &str) -> String {
        let taken = |n: &str| self.computations.iter().any(|c| c.name == n);
        if !taken(name) {
            return name.to_string();
        }
        (1..)
            .map(|k| format!("{name}.{k}"))
            .find(|n| !taken(n))
            .unwrap_or_else(|| name.to_string())
    }

    fn make<F>(&mut self, name: &str, f: F) -> Result<Computation, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let name = self.unique_computation_name(name);
        let mut b = ComputationBuilder {
            name,
            instructions: Vec::new(),
            computations: &self.computations,
            names: &mut self.names,
            counter: &mut self.counter,
            next_parameter: 0,
        };
        let root = f(&mut b)?;
        b.check(root)?;
        Ok(Computation::new(b.name, b.instructions, root))
    }

    /// Adds a (non-entry) computation built by `f`, whose return value is the root.
    /// A name already taken gets a `.N` suffix.
    pub fn computation<F>(&mut self, name: &str, f: F) -> Result<CompId, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let c = self.make(name, f)?;
        self.computations.push(c);
        Ok(CompId(self.computations.len() as u32 - 1))
    }

    /// Adds `(x: T[], y: T[]) -> T[]` computing `op(x, y)`, e.g. the add or max reducer.
    ///
    /// `op` is a binary elementwise opcode valid for `dtype`.
    pub fn scalar_reducer(&mut self, op: Opcode, dtype: ElementType) -> Result<CompId, BuildError> {
        let name = format!("{}_{}", op.name().replace('-', "_"), dtype.name());
        self.computation(&name, |b| {
            let x = b.parameter(Shape::scalar(dtype))?;
            let y = b.parameter(Shape::scalar(dtype))?;
            b.binary(op, x, y)
        })
    }

    /// Adds a sort comparator over operands of element types `dtypes`: it takes two
    /// scalars per operand and compares the first pair with `direction` (default type).
    pub fn comparator(
        &mut self,
        direction: ComparisonDirection,
        dtypes: &[ElementType],
    ) -> Result<CompId, BuildError> {
        let name = format!("compare_{}", direction.name().to_ascii_lowercase());
        self.computation(&name, |b| {
            let mut params = Vec::new();
            for &t in dtypes {
                params.push(b.parameter(Shape::scalar(t))?);
                params.push(b.parameter(Shape::scalar(t))?);
            }
            let (&lhs, &rhs, &t) = match (params.first(), params.get(1), dtypes.first()) {
                (Some(l), Some(r), Some(t)) => (l, r, t),
                _ => {
                    return Err(BuildError::Invalid {
                        computation: b.name().to_string(),
                        message: "a comparator needs at least one operand type".into(),
                    })
                }
            };
            b.compare(direction, default_comparison_type(t), lhs, rhs)
        })
    }

    /// Builds the entry computation with `f` (its return value is the root),
    /// and returns the verified module.
    pub fn build<F>(mut self, entry: &str, f: F) -> Result<Module, BuildError>
    where
        F: FnOnce(&mut ComputationBuilder<'_>) -> Result<InstrId, BuildError>,
    {
        let c = self.make(entry, f)?;
        self.computations.push(c);
        let module = Module {
            name: self.name,
            attrs: Vec::new(),
            entry: CompId(self.computations.len() as u32 - 1),
            computations: self.computations,
        };
        verify(&module).map_err(|e| BuildError::Verify(Box::new(e)))?;
        Ok(module)
    }
}

/// Builds one computation; handed to the closures of [`ModuleBuilder`].
///
/// Every method adds one instruction (named `opcode.N`, unique in the
/// module), infers its shape, and returns its id; an ill-typed instruction is
/// an error at the call that adds it.
///
/// ```
/// use xla_props::hlo::{ElementType::{F32, S32}, ModuleBuilder, Opcode, Shape};
/// let module = ModuleBuilder::new("m")
///     .build("main", |b| {
///         let x = b.parameter(Shape::array(F32, vec![2, 3]))?;
///         b.set_layout(x, &[0, 1])?; // column-major
///         let t = b.transpose(x, &[1, 0])?;
///         assert_eq!(b.shape(t), Some(&Shape::array(F32, vec![3, 2])));
///         // adding f32[3,2] to s32[3,2] is rejected right here
///         let i = b.iota(S32, &[3, 2], 0)?;
///         assert!(b.binary(Opcode::Add, t, i).is_err());
///         let f = b.convert(i, F32)?;
///         b.binary(Opcode::Add, t, f)
///     })
///     .unwrap();
/// let root = module.entry_computation().root;
/// // a rejected instruction uses up no name
/// assert_eq!(module.entry_computation().instr(root).name, "add.5");
/// ```
#[derive(Debug)]
pub struct ComputationBuilder<'m> {
    name: String,
    instructions: Vec<Instruction>,
    computations: &'m [Computation],
    names: &'m mut HashSet<String>,
    counter: &'m mut u64,
    next_parameter: i64,
}

impl ComputationBuilder<'_> {
    /// The name of the computation being built.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The inferred shape of an instruction added so far.
    pub fn shape(&self, id: InstrId) -> Option<&Shape> {
        self.instructions.get(id.index()).map(|i| &i.shape)
    }

    /// The instructions added so far.
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    fn check(&self, id: InstrId) -> Result<(), BuildError> {
        if id.index() < self.instructions.len() {
            Ok(())
        } else {
            Err(BuildError::UnknownInstruction {
                computation: self.name.clone(),
                id: id.0,
            })
        }
    }

    fn invalid(&self, message: impl Into<String>) -> BuildError {
        BuildError::Invalid {
            computation: self.name.clone(),
            message: message.into(),
        }
    }

    fn fresh_name(&mut self, op: Opcode) -> String {
        loop {
            *self.counter += 1;
            let n = format!("{}.{}", op.name(), self.counter);
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// Adds an instruction with explicit attributes; `declared` supplies what
    /// inference cannot derive (see [`infer`]). The general form of every other method.
    pub fn add(
        &mut self,
        opcode: Opcode,
        operands: &[InstrId],
        attrs: Attrs,
        declared: Option<&Shape>,
    ) -> Result<InstrId, BuildError> {
        let mut shapes = Vec::with_capacity(operands.len());
        for &o in operands {
            self.check(o)?;
            shapes.push(&self.instructions[o.index()].shape);
        }
        let mut shape =
            infer(opcode, &shapes, &attrs, self.computations, declared).map_err(|source| {
                BuildError::Shape {
                    computation: self.name.clone(),
                    opcode,
                    source,
                }
            })?;
        if opcode == Opcode::Parameter {
            // a parameter keeps the layout it was declared with
            if let Some(d) = declared {
                shape = d.clone();
            }
        }
        let name = self.fresh_name(opcode);
        self.instructions.push(Instruction {
            name,
            opcode,
            shape,
            operands: operands.to_vec(),
            attrs,
        });
        Ok(InstrId(self.instructions.len() as u32 - 1))
    }

    fn add_attrs(
        &mut self,
        opcode: Opcode,
        operands: &[InstrId],
        set: impl FnOnce(&mut Attrs),
    ) -> Result<InstrId, BuildError> {
        let mut attrs = Attrs::default();
        set(&mut attrs);
        self.add(opcode, operands, attrs, None)
    }

    /// Sets the layout (minor-to-major) of an array-shaped instruction.
    pub fn set_layout(&mut self, id: InstrId, minor_to_major: &[i64]) -> Result<(), BuildError> {
        self.check(id)?;
        let shape = &self.instructions[id.index()].shape;
        let rank = match shape.as_array() {
            Some(a) => a.rank(),
            None => return Err(self.invalid(format!("cannot set a layout on {shape}"))),
        };
        let mut sorted = minor_to_major.to_vec();
        sorted.sort_unstable();
        if !sorted.iter().copied().eq(0..rank as i64) {
            return Err(self.invalid(format!(
                "layout {minor_to_major:?} is not a permutation of 0..{rank}"
            )));
        }
        if let Shape::Array(a) = &mut self.instructions[id.index()].shape {
            a.layout = Some(Layout {
                minor_to_major: minor_to_major.to_vec(),
                extra: None,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
