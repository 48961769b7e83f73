//! `while` loops: iterated on the reference's values to its trip count.
//!
//! Where the condition may flip (a convergence test near its threshold) a
//! backend may stop at another iteration, and every state it may stop at
//! is a legal result: the enclosure is the reference's own exit state
//! widened to cover them all. Past the reference's exit the loop is
//! followed while its condition may still hold, for at most as many more
//! iterations as it ran (then unbounded).

use super::super::{EvalError, OpError};
use super::dual::Dual;
use super::eval::Radii;
use crate::hlo::{CompId, Instruction};

impl Radii<'_, '_> {
    pub(super) fn while_loop(
        &mut self,
        ins: &Instruction,
        ops: &[&Dual],
    ) -> Result<Dual, EvalError> {
        let (Some(cond), Some(body), Some(init)) =
            (ins.attrs.condition, ins.attrs.body, ops.first())
        else {
            return Err(OpError::Invalid("while without condition, body or state".into()).at(ins));
        };
        let mut state = (*init).clone();
        let mut exit: Option<Dual> = None;
        let mut others: Vec<Dual> = Vec::new();
        let (mut trips, mut past) = (0usize, 0usize);
        loop {
            self.run.burn_fuel(ins)?;
            let (goes_on, may_flip) = self.test(ins, cond, &state)?;
            match &exit {
                None if !goes_on => {
                    exit = Some(state.clone());
                    if !may_flip {
                        break;
                    }
                }
                None => {
                    if may_flip {
                        others.push(state.clone());
                    }
                    trips += 1;
                }
                // past the reference's exit: a state where a perturbed run
                // may stop is one more legal result
                Some(x) => {
                    if may_flip || !goes_on {
                        others.push(state.clone());
                    }
                    if !may_flip && !goes_on {
                        break;
                    }
                    past += 1;
                    if past > trips.max(1) {
                        return Ok(Dual::unbounded(x.value()));
                    }
                }
            }
            state = match self.computation(body, vec![state]) {
                Ok(s) => s,
                // the reference never runs past its exit: a body that
                // cannot run there bounds nothing
                Err(e) => match &exit {
                    Some(x) => return Ok(Dual::unbounded(x.value())),
                    None => return Err(e),
                },
            };
        }
        let exit = exit.unwrap_or(state);
        Ok(others.iter().fold(exit, |acc, o| acc.widest(o)))
    }

    /// Runs the condition; its value and whether it may flip.
    fn test(
        &mut self,
        ins: &Instruction,
        cond: CompId,
        state: &Dual,
    ) -> Result<(bool, bool), EvalError> {
        let c = self.computation(cond, vec![state.clone()])?;
        let Some((p, r)) = c.array() else {
            return Err(OpError::Invalid("a while condition that is not a pred".into()).at(ins));
        };
        Ok((p.get_bits(0) & 1 != 0, r.first().is_none_or(|&x| x != 0.0)))
    }
}
