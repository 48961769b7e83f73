//! The StableHLO interpreter's `interpreter.run_parallel`, read as a custom
//! call with target [`RUN_PARALLEL`]: it runs a grid of functions, one per
//! process (`num_replicas` rows of `num_partitions`), each on its own
//! thread, with collectives between them grouped the spec's way
//! ([`GroupOrder::StableHlo`]), and returns every process's results in
//! row-major process order.
//!
//! The custom call's attributes:
//! - `called_computations`: the programs, row-major;
//! - `num_replicas=R`, `num_partitions=P`;
//! - `program_results={n0,n1,...}`: how many results each program returns;
//! - `infeed_count=N`: the last `N` operands are the infeed queue, in order
//!   (the other operands are the programs' arguments, in process order).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::collective::DeviceContext;
use super::rendezvous::{on_threads, Rendezvous};
use super::{EvalError, OpError};
pub use crate::hlo::collective::RUN_PARALLEL;
use crate::hlo::collective::{verbatim, DeviceGrid, GroupOrder, MAX_DEVICES};
use crate::hlo::{CompId, Instruction, Module, Opcode};
use crate::literal::{Literal, Value};

/// Whether `ins` is a run_parallel call.
pub fn is_run_parallel(ins: &Instruction) -> bool {
    ins.opcode == Opcode::CustomCall
        && ins.attrs.custom_call_target.as_deref() == Some(RUN_PARALLEL)
}

/// What a run_parallel call runs.
#[derive(Debug, PartialEq)]
struct Plan {
    grid: DeviceGrid,
    programs: Vec<CompId>,
    results: Vec<usize>,
    infeed: usize,
}

fn count(ins: &Instruction, key: &str) -> Result<usize, String> {
    verbatim(ins, key)
        .and_then(|v| v.trim().parse::<usize>().ok())
        .ok_or_else(|| format!("`{}`: `{key}` is not a count", ins.name))
}

fn plan(ins: &Instruction) -> Result<Plan, String> {
    let grid = DeviceGrid {
        replicas: count(ins, "num_replicas")?,
        partitions: count(ins, "num_partitions")?,
    };
    let results: Vec<usize> = verbatim(ins, "program_results")
        .and_then(|v| {
            v.trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| p.parse::<usize>().ok())
                .collect()
        })
        .ok_or_else(|| format!("`{}`: `program_results` is not a list", ins.name))?;
    let programs = ins.attrs.calls.clone();
    let n = grid.devices();
    if n == 0 || n > MAX_DEVICES {
        return Err(format!(
            "`{}`: {n} processes (1..={MAX_DEVICES} are run)",
            ins.name
        ));
    }
    if programs.len() != n || results.len() != n {
        return Err(format!(
            "`{}`: {} programs and {} result counts for {n} processes",
            ins.name,
            programs.len(),
            results.len()
        ));
    }
    Ok(Plan {
        grid,
        programs,
        results,
        infeed: count(ins, "infeed_count")?,
    })
}

/// Runs one process: a program on its arguments, as the device `ctx`
/// names; returns the program's root value.
pub(crate) type Process<'p> =
    dyn Fn(CompId, Vec<Value>, DeviceContext) -> Result<Value, EvalError> + Sync + 'p;

/// Runs the processes of run_parallel call `ins` on operands `ops`, each
/// with `process`.
pub(crate) fn run_parallel(
    module: &Module,
    ins: &Instruction,
    ops: &[&Value],
    process: &Process<'_>,
) -> Result<Value, OpError> {
    let plan = plan(ins).map_err(OpError::Invalid)?;
    let Some(split) = ops.len().checked_sub(plan.infeed) else {
        return Err(OpError::Invalid(format!(
            "`{}`: fewer operands than infeed values",
            ins.name
        )));
    };
    let (inputs, feed) = ops.split_at(split);
    let queue: VecDeque<Literal> = feed
        .iter()
        .map(|v| match v {
            Value::Array(l) => Ok(l.clone()),
            _ => Err(OpError::Invalid("an infeed value is not an array".into())),
        })
        .collect::<Result<_, _>>()?;
    let queue = Arc::new(Mutex::new(queue));
    // each process takes as many inputs as its program has parameters
    let mut args: Vec<Vec<Value>> = Vec::with_capacity(plan.programs.len());
    let mut next = inputs.iter();
    for &p in &plan.programs {
        let comp = module
            .computations
            .get(p.index())
            .ok_or_else(|| OpError::Invalid(format!("`{}` runs a missing program", ins.name)))?;
        let n = comp.parameters().len();
        let mine: Vec<Value> = next.by_ref().take(n).map(|v| (*v).clone()).collect();
        if mine.len() != n {
            return Err(OpError::Invalid(format!(
                "`{}`: too few inputs for program `{}`",
                ins.name, comp.name
            )));
        }
        args.push(mine);
    }
    if next.next().is_some() {
        return Err(OpError::Invalid(format!(
            "`{}`: more inputs than the programs take",
            ins.name
        )));
    }
    let rendezvous = Arc::new(Rendezvous::<Value>::new(plan.grid.devices()));
    let outcomes = run_processes(module, process, &plan, args, &rendezvous, &queue);
    let mut results = Vec::new();
    let values = super::rendezvous::first_cause(outcomes).map_err(OpError::Nested)?;
    for (k, v) in values.into_iter().enumerate() {
        results.extend(program_results(v, plan.results[k], ins)?);
    }
    Ok(if results.len() == 1 {
        results.remove(0)
    } else {
        Value::Tuple(results)
    })
}

/// A program's root value as its list of results.
fn program_results(v: Value, n: usize, ins: &Instruction) -> Result<Vec<Value>, OpError> {
    match (n, v) {
        (1, v) => Ok(vec![v]),
        (n, Value::Tuple(items)) if items.len() == n => Ok(items),
        (n, v) => Err(OpError::Invalid(format!(
            "`{}`: a program returned {} where {n} results were expected",
            ins.name,
            v.shape()
        ))),
    }
}

/// One thread per process; each process's root value or error.
fn run_processes(
    module: &Module,
    process: &Process<'_>,
    plan: &Plan,
    args: Vec<Vec<Value>>,
    rendezvous: &Arc<Rendezvous<Value>>,
    queue: &Arc<Mutex<VecDeque<Literal>>>,
) -> Vec<Result<Value, EvalError>> {
    let no_shardings = Arc::new(std::collections::HashMap::new());
    let items: Vec<_> = args
        .into_iter()
        .enumerate()
        .map(|(d, args)| {
            let ctx = DeviceContext::new(
                plan.grid.device(d),
                plan.grid,
                Arc::clone(rendezvous),
                Arc::clone(&no_shardings),
            )
            .with_order(GroupOrder::StableHlo)
            .with_infeed(Arc::clone(queue));
            (plan.programs[d], args, ctx, Arc::clone(rendezvous))
        })
        .collect();
    let run = |d: usize,
               (program, args, ctx, meeting): (
        CompId,
        Vec<Value>,
        DeviceContext,
        Arc<Rendezvous<Value>>,
    )| {
        let r = process(program, args, ctx);
        meeting.leave(r.as_ref().err().map(|e| format!("process {d}: {e}")));
        r
    };
    let not_started = |d: usize, e: &std::io::Error| {
        rendezvous.leave(Some(format!("process {d} did not start: {e}")));
    };
    on_threads(items, "process", run, not_started)
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|lost| {
                Err(EvalError::Invalid {
                    instruction: module.name.clone(),
                    message: lost.message("process", "a process's evaluation panicked"),
                })
            })
        })
        .collect()
}
