//! `Mutant<B>`: a backend that is `B` with one mutation injected.

use std::sync::Arc;

use super::ctx::flush;
use super::exec::Stepper;
use super::mutation::Mutation;
use super::rewrite::rewrite;
use crate::backend::api::{Backend, Executable};
use crate::backend::error::BackendError;
use crate::check::Numerics;
use crate::hlo::Module;
use crate::literal::Literal;

/// A backend `B` with one [`Mutation`] injected: an HLO rewrite applied
/// before `B` compiles, or an emitter bug computing the targeted
/// instructions wrongly. It is named `mutant:<mutation>` (with `@<base>` when
/// the base is not the interpreter) and declares `B`'s numerics, plus, for a
/// benign variant, exactly the deviation it makes.
///
/// ```
/// use xla_props::backend::mutant::{Mutant, Mutation};
/// use xla_props::backend::{Backend, Interpreter};
/// use xla_props::hlo::parse_module;
/// use xla_props::literal::Literal;
/// use xla_props::hlo::{ArrayShape, ElementType};
/// let m = parse_module("HloModule m\nENTRY main { x = f32[2] parameter(0)\n y = f32[2] parameter(1)\n ROOT z = f32[2] maximum(x, y) }").unwrap();
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let x = Literal::from_f64s(&s, &[f64::NAN, 1.0]).unwrap();
/// let y = Literal::from_f64s(&s, &[2.0, 3.0]).unwrap();
/// let good = Interpreter::default().compile(&m).unwrap().execute(&[x.clone(), y.clone()]).unwrap();
/// assert!(good[0].get_f64(0).is_nan());
/// let mutant = Mutant::new(Interpreter::default(), Mutation::MaxMinDropNan);
/// assert_eq!(mutant.name(), "mutant:max-min-drop-nan");
/// let bad = mutant.compile(&m).unwrap().execute(&[x, y]).unwrap();
/// assert_eq!(bad[0].to_f64_vec(), vec![2.0, 3.0]);
/// ```
pub struct Mutant<B: Backend> {
    base: Arc<B>,
    mutation: Mutation,
    name: String,
}

impl<B: Backend + 'static> Mutant<B> {
    /// `base` with `mutation`.
    pub fn new(base: B, mutation: Mutation) -> Mutant<B> {
        let name = if base.name() == "interpreter" {
            format!("mutant:{}", mutation.name())
        } else {
            format!("mutant:{}@{}", mutation.name(), base.name())
        };
        Mutant {
            base: Arc::new(base),
            mutation,
            name,
        }
    }
    /// The injected mutation (the outermost one of a stack).
    pub fn mutation(&self) -> Mutation {
        self.mutation
    }
    /// The wrapped backend.
    pub fn base(&self) -> &B {
        &self.base
    }
}

impl Mutant<Box<dyn Backend>> {
    /// Several mutations at once, named `mutant:A+B+...` (with `@<base>`
    /// when the base is not the interpreter): each wraps the next, the first
    /// outermost, so every one acts on the instructions it targets and
    /// leaves the rest to the next. The mutations must differ.
    ///
    /// ```
    /// use xla_props::backend::mutant::{Mutant, Mutation};
    /// use xla_props::backend::{Backend, Interpreter};
    /// let both = Mutant::stacked(
    ///     Box::new(Interpreter::default()),
    ///     &[Mutation::SortUnstable, Mutation::IntAddSaturates],
    /// )
    /// .unwrap();
    /// assert_eq!(both.name(), "mutant:sort-unstable+int-add-saturates");
    /// ```
    pub fn stacked(
        base: Box<dyn Backend>,
        mutations: &[Mutation],
    ) -> Result<Mutant<Box<dyn Backend>>, String> {
        let Some((&first, rest)) = mutations.split_first() else {
            return Err("no mutation named".into());
        };
        for (i, m) in mutations.iter().enumerate() {
            if mutations[..i].contains(m) {
                return Err(format!("mutation `{m}` named twice"));
            }
        }
        let names: Vec<&str> = mutations.iter().map(|m| m.name()).collect();
        let name = if base.name() == "interpreter" {
            format!("mutant:{}", names.join("+"))
        } else {
            format!("mutant:{}@{}", names.join("+"), base.name())
        };
        let inner = rest.iter().rev().fold(base, |b, &m| {
            Box::new(Mutant::new(b, m)) as Box<dyn Backend>
        });
        let mut outer = Mutant::new(inner, first);
        outer.name = name;
        Ok(outer)
    }
}

impl<B: Backend + 'static> Backend for Mutant<B> {
    fn name(&self) -> &str {
        &self.name
    }
    fn numerics(&self) -> Numerics {
        self.mutation.numerics(&self.base.numerics())
    }
    /// The mutation, on the base's version.
    fn version(&self) -> Option<String> {
        let base = self
            .base
            .version()
            .unwrap_or_else(|| "version not declared".into());
        Some(format!(
            "{} with mutation {}: {}",
            self.base.name(),
            self.mutation.name(),
            base
        ))
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let module = rewrite(self.mutation, module);
        let stepper = Stepper {
            base: self.base.as_ref(),
            module: &module,
            mutation: self.mutation,
        };
        let stepped = stepper.touches(module.entry);
        let whole = if stepped {
            None
        } else {
            Some(self.base.compile(&module)?)
        };
        Ok(Box::new(MutantExecutable {
            base: self.base.clone(),
            mutation: self.mutation,
            module,
            whole,
        }))
    }
}

struct MutantExecutable<B: Backend> {
    base: Arc<B>,
    mutation: Mutation,
    module: Module,
    /// The base's executable when no instruction needs a mutated kernel.
    whole: Option<Box<dyn Executable>>,
}

impl<B: Backend> Executable for MutantExecutable<B> {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let ftz = matches!(
            self.mutation,
            Mutation::UndeclaredFtz | Mutation::DeclaredFtz
        );
        let mut args = args.to_vec();
        if ftz {
            args.iter_mut().for_each(flush);
        }
        let mut out = match &self.whole {
            Some(exe) => exe.execute(&args)?,
            None => Stepper {
                base: self.base.as_ref(),
                module: &self.module,
                mutation: self.mutation,
            }
            .run(&args)?,
        };
        if ftz {
            out.iter_mut().for_each(flush);
        }
        Ok(out)
    }
}

/// A boxed backend is a backend (so `mutant:NAME@BASE` can wrap any registry entry).
impl Backend for Box<dyn Backend> {
    fn name(&self) -> &str {
        self.as_ref().name()
    }
    fn numerics(&self) -> Numerics {
        self.as_ref().numerics()
    }
    fn version(&self) -> Option<String> {
        self.as_ref().version()
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        self.as_ref().compile(module)
    }
    fn devices(&self) -> usize {
        self.as_ref().devices()
    }
    fn pass_control(&self) -> Option<&dyn crate::backend::PassControl> {
        self.as_ref().pass_control()
    }
    fn known_bugs(&self) -> &[crate::check::KnownBug] {
        self.as_ref().known_bugs()
    }
    fn traits(&self) -> crate::backend::BackendTraits {
        self.as_ref().traits()
    }
    fn execute_many(
        &self,
        requests: &[crate::backend::BatchRequest<'_>],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<Vec<Option<Vec<Literal>>>> {
        self.as_ref().execute_many(requests, progress)
    }
}
