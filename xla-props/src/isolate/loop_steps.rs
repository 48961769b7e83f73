//! A `while` unit judged iteration by iteration in the backend's own run.
//!
//! A loop is one unit of the own run (`own_run`), and judged whole it is as
//! deep as its trip count: a continued fraction's recurrence (JAX's
//! incomplete gamma) carries no finite first-order bound, so a loop that
//! computes, step by step, what its declared numerics allow may still be
//! left unexplained. Here its condition and body are compiled on the
//! backend as modules of their own (each called from an entry whose
//! parameters are the loop state's leaves, its fusions kept whole) and run
//! from the backend's own initial state: at each step the condition's and
//! the body's results are judged by the one judge against the reference on
//! the very state the backend computed, and the backend's results become
//! the next state. When every step is legal and the last state is, bit for
//! bit, what the backend's whole loop produced in the judged run, the loop's
//! result is a composition of legal steps. Any other outcome (a step that
//! departs, a compile or run failure, a different last state, a loop that
//! runs past [`MAX_STEPS`]) certifies nothing.

use super::sides::{judge_outputs, same_bits, worst_ulp, Tested};
use crate::backend::{guarded, Executable};
use crate::check::{Numerics, Verdict};
use crate::hlo::rewrite::{CompCopier, EntryBuilder};
use crate::hlo::{CompId, ElementType, Instruction, Module, Opcode, Shape};
use crate::literal::{Literal, Value};

/// At most this many iterations are stepped through.
pub(crate) const MAX_STEPS: usize = 10_000;

/// What stepping through a loop showed when every step was legal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stepped {
    /// Iterations run.
    pub(crate) steps: usize,
    /// The largest error of one step on its own state, in ULP.
    pub(crate) worst_ulp: f64,
}

/// Why a loop was not certified by its steps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NotStepped {
    /// Not a `while`, or a state that is not an array or a flat tuple.
    NotSteppable,
    /// The backend failed to compile the condition or the body alone.
    Compile(String),
    /// The condition (`cond: true`) or the body at this iteration departs
    /// on the state the backend computed, or fails to run.
    Departs { iteration: usize, cond: bool },
    /// More than [`MAX_STEPS`] iterations.
    TooManySteps,
    /// Every step legal, but the last state is not the loop's result.
    LastState { steps: usize },
}

/// The `while` instruction `ins` of `module`, whose state in the backend's
/// own run was `init` and whose result there was `got` (flattened): what
/// stepping through it showed when it is a composition of legal steps (see
/// the module docs), else why not.
pub(crate) fn while_by_steps(
    module: &Module,
    ins: &Instruction,
    init: &Value,
    got: &[Literal],
    tested: &Tested<'_>,
    numerics: &Numerics,
) -> Result<Stepped, NotStepped> {
    let r = (|| {
        let (Opcode::While, Some(cond), Some(body)) =
            (ins.opcode, ins.attrs.condition, ins.attrs.body)
        else {
            return Err(NotStepped::NotSteppable);
        };
        let pred = Shape::Array(crate::hlo::ArrayShape::new(
            ElementType::Pred,
            Vec::<i64>::new(),
        ));
        let cond_m =
            step_module(module, cond, &ins.shape, pred, "cond").ok_or(NotStepped::NotSteppable)?;
        let body_m = step_module(module, body, &ins.shape, ins.shape.clone(), "body")
            .ok_or(NotStepped::NotSteppable)?;
        let compile = |m: &Module| {
            tested
                .compile(m)
                .map_err(|e| NotStepped::Compile(e.to_string()))
        };
        let (cond_x, body_x) = (compile(&cond_m)?, compile(&body_m)?);
        let mut state = init.flatten();
        let mut out = Stepped {
            steps: 0,
            worst_ulp: 0.0,
        };
        loop {
            let iteration = out.steps;
            let departs = |cond| NotStepped::Departs { iteration, cond };
            let go = step(tested, cond_x.as_ref(), &cond_m, &state, numerics, &mut out)
                .ok_or_else(|| departs(true))?;
            let go = match go.first() {
                Some(p) if p.element_count() == 1 => p.get_bits(0) != 0,
                _ => return Err(departs(true)),
            };
            if !go {
                break;
            }
            if out.steps == MAX_STEPS {
                return Err(NotStepped::TooManySteps);
            }
            state = step(tested, body_x.as_ref(), &body_m, &state, numerics, &mut out)
                .ok_or_else(|| departs(false))?;
            out.steps += 1;
        }
        if !same_bits(&state, got) {
            return Err(NotStepped::LastState { steps: out.steps });
        }
        Ok(out)
    })();
    if let (Err(why), Some(_)) = (&r, std::env::var_os("XLA_PROPS_DEBUG_CERTIFICATE")) {
        eprintln!("certificate debug: `{}` by steps: {why:?}", ins.name);
    }
    r
}

/// One run of a step module on the backend from `state`, judged against
/// the reference on the same state; its results when legal.
fn step(
    tested: &Tested<'_>,
    exe: &dyn Executable,
    m: &Module,
    state: &[Literal],
    numerics: &Numerics,
    out: &mut Stepped,
) -> Option<Vec<Literal>> {
    tested.count();
    let got = guarded(tested.name(), || exe.execute(state)).ok()?;
    let expected = crate::reference::evaluate(m, state).ok()?;
    if !same_bits(&expected, &got) {
        match judge_outputs(m, state, &expected, &got, numerics) {
            Verdict::Agree(_) => {}
            _ => return None,
        }
        out.worst_ulp = out.worst_ulp.max(worst_ulp(&expected, &got));
    }
    Some(got)
}

/// A module whose entry takes the leaves of `state` as parameters, builds
/// the state from them and calls computation `comp` of `module` on it (a
/// loop's condition or body, with everything it calls), returning `result`.
/// None for a state that is not an array or a flat tuple of arrays.
fn step_module(
    module: &Module,
    comp: CompId,
    state: &Shape,
    result: Shape,
    what: &str,
) -> Option<Module> {
    let mut copier = CompCopier::new(module);
    let mut b = EntryBuilder::default();
    let arg = match state {
        Shape::Array(a) => b.parameter("state".into(), Shape::Array(a.clone())),
        Shape::Tuple(items) => {
            let mut params = Vec::new();
            for (k, s) in items.iter().enumerate() {
                let Shape::Array(a) = s else { return None };
                params.push(b.parameter(format!("state.{k}"), Shape::Array(a.clone())));
            }
            b.push(Instruction::new(
                "state",
                Opcode::Tuple,
                state.clone(),
                params,
            ))
        }
        Shape::Token => return None,
    };
    let mut call = Instruction::new(what, Opcode::Call, result, vec![arg]);
    call.attrs.to_apply = Some(copier.copy(comp));
    let root = b.push(call);
    let name = format!("{}_{what}", module.name);
    Some(copier.finish(&name, b.finish("main", root)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    /// Twelve iterations of `v/2 + exp(-v*v)`, bounded for any start.
    const LOOP: &str = "HloModule loop
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = f32[] constant(0.5)
  cb = f32[8] broadcast(c), dimensions={}
  h = f32[8] multiply(v, cb)
  sq = f32[8] multiply(v, v)
  ng = f32[8] negate(sq)
  e = f32[8] exponential(ng)
  w = f32[8] add(h, e)
  ROOT t = (s32[], f32[8]) tuple(j, w)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8]) tuple(z, x)
  ROOT r = (s32[], f32[8]) while(t), condition=cond, body=body
}
";

    /// The interpreter with every float result moved by `moved` (relative).
    struct Moved(f64);

    struct MovedRun(Box<dyn Executable>, f64);

    impl crate::backend::Backend for Moved {
        fn name(&self) -> &str {
            "moved"
        }
        fn compile(
            &self,
            module: &Module,
        ) -> Result<Box<dyn Executable>, crate::backend::BackendError> {
            let b = crate::backend::create("interpreter")?;
            Ok(Box::new(MovedRun(b.compile(module)?, self.0)))
        }
    }

    impl Executable for MovedRun {
        fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, crate::backend::BackendError> {
            let mut out = self.0.execute(args)?;
            for l in out.iter_mut().filter(|l| l.dtype().is_float()) {
                for i in 0..l.element_count() {
                    let v = l.get_f64(i);
                    l.set_f64(i, v + v * self.1);
                }
            }
            Ok(out)
        }
    }

    /// `while_by_steps` on `backend`, from the reference's initial state,
    /// judging the backend's whole-loop result changed by `tamper`.
    fn stepped(
        backend: &dyn crate::backend::Backend,
        tamper: impl Fn(&mut Vec<Literal>),
    ) -> Result<Stepped, NotStepped> {
        let m = parse_module(LOOP).unwrap();
        let x: Vec<f64> = (0..8).map(|k| f64::from(k as u8) * 0.37 - 1.3).collect();
        let shape = crate::hlo::ArrayShape::new(ElementType::F32, vec![8]);
        let args = vec![Literal::from_f64s(&shape, &x).unwrap()];
        let values = crate::reference::Evaluator::new()
            .evaluate_all(&m, &args)
            .unwrap();
        let entry = m.entry_computation();
        let r = entry.root;
        let init = values[entry.instr(r).operands[0].index()].clone().unwrap();
        let tested = Tested::new(backend);
        let mut got = tested.run(&m, &args).unwrap();
        tamper(&mut got);
        assert_eq!(entry.instr(r).opcode, Opcode::While);
        while_by_steps(&m, entry.instr(r), &init, &got, &tested, &tested.numerics())
    }

    #[test]
    fn legal_iterations_whose_last_state_is_the_loops_result_certify_it() {
        let interpreter = crate::backend::create("interpreter").unwrap();
        let s = stepped(interpreter.as_ref(), |_| {}).expect("every step is legal");
        assert_eq!(s.steps, 12);
    }

    #[test]
    fn a_step_that_departs_or_a_last_state_that_is_not_the_result_certifies_nothing() {
        // every iteration's state moved by 1e-4: the first step departs
        let first = NotStepped::Departs {
            iteration: 0,
            cond: false,
        };
        assert_eq!(stepped(&Moved(1e-4), |_| {}), Err(first));
        // legal steps, but the loop's result is not where they lead
        let interpreter = crate::backend::create("interpreter").unwrap();
        let off = |got: &mut Vec<Literal>| {
            let v = got[1].get_f64(3);
            got[1].set_f64(3, v + v.abs() * 1e-6);
        };
        let last = NotStepped::LastState { steps: 12 };
        assert_eq!(stepped(interpreter.as_ref(), off), Err(last));
    }
}
