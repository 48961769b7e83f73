//! `interpreter.probe` inside a `stablehlo.while` body, read through
//! `check.expect_serialized_eq %v, probe_id = "p", iter = k`.
//!
//! The spec interpreter writes a probe's value each time the probe runs and
//! the check compares `%v` with the value of run `k`. A probe in a loop body
//! runs once per iteration, so its run `k` is the loop's iteration `k`: the
//! loop is given a counter and one value per iteration the checks ask for
//! (`slot = counter == k ? probe : slot`), and each such check becomes an
//! `expect_eq` against the loop's final slot. Probes elsewhere are left to
//! the converter (a probe in the checking function's own body is its value).

use super::ast::{Attr, Dense, Func, ModuleDef, Op, Region, Scalar, Type, ValueRef};
use crate::hlo::dtype::ElementType;

const SERIALIZED: &str = "check.expect_serialized_eq";

/// Rewrites every function of `m` as the module documentation says.
pub(super) fn read_probes_in_loops(m: &mut ModuleDef) {
    for f in &mut m.funcs {
        in_function(f);
    }
}

fn probe_id(op: &Op) -> Option<&str> {
    match op.attr("probe_id") {
        Some(Attr::Str(s)) => Some(s),
        _ => None,
    }
}

fn iter_of(op: &Op) -> Option<i128> {
    match op.attr("iter") {
        None => Some(0),
        Some(Attr::Int(k)) => Some(*k),
        _ => None,
    }
}

fn value(name: &str, pos: usize) -> ValueRef {
    ValueRef {
        name: name.to_string(),
        index: None,
        pos,
    }
}

fn i64_type() -> Type {
    Type::Tensor(Vec::new(), ElementType::S64)
}

fn new_op(pos: usize, name: &str, result: &str, operands: Vec<ValueRef>, ty: Type) -> Op {
    Op {
        pos,
        name: name.to_string(),
        results: vec![(result.to_string(), 1)],
        operands,
        attrs: Vec::new(),
        regions: Vec::new(),
        result_types: vec![ty],
        loc: None,
    }
}

fn constant(pos: usize, result: &str, s: Scalar, ty: Type) -> Op {
    let mut op = new_op(pos, "stablehlo.constant", result, Vec::new(), ty.clone());
    op.attrs
        .push(("value".into(), Attr::Dense(Dense::Splat(s), ty)));
    op
}

/// A zero of an array type's element type (None for tuples and tokens).
fn zero(ty: &Type) -> Option<Scalar> {
    let Type::Tensor(_, e) = ty else { return None };
    Some(if e.is_pred() {
        Scalar::Bool(false)
    } else if e.is_complex() {
        Scalar::Complex(Box::new(Scalar::Float(0.0)), Box::new(Scalar::Float(0.0)))
    } else if e.is_float() {
        Scalar::Float(0.0)
    } else {
        Scalar::Int(0)
    })
}

fn in_function(f: &mut Func) {
    let mut n = 0;
    let mut w = 0;
    while w < f.body.ops.len() {
        let op = &f.body.ops[w];
        if op.name != "stablehlo.while" || op.regions.len() != 2 {
            w += 1;
            continue;
        }
        let probes: Vec<(String, String, Type)> = op.regions[1]
            .ops
            .iter()
            .filter(|p| p.name == "interpreter.probe" && p.results.len() == 1)
            .filter_map(|p| {
                Some((
                    probe_id(p)?.to_string(),
                    p.results[0].0.clone(),
                    p.result_types.first()?.clone(),
                ))
            })
            .collect();
        let mut added = 0;
        for (id, probed, ty) in probes {
            let mut iters: Vec<i128> = f
                .body
                .ops
                .iter()
                .filter(|c| c.name == SERIALIZED && probe_id(c) == Some(id.as_str()))
                .filter_map(iter_of)
                .collect();
            iters.sort_unstable();
            iters.dedup();
            let Some(init) = zero(&ty) else { continue };
            if iters.is_empty() {
                continue;
            }
            let names = Names::new(n, &iters);
            n += 1;
            // the loop is at `w + added`: its initial counter and slots go before it
            let at = w + added;
            let pos = f.body.ops[at].pos;
            f.body
                .ops
                .insert(at, constant(pos, &names.zero, Scalar::Int(0), i64_type()));
            f.body
                .ops
                .insert(at + 1, constant(pos, &names.init, init, ty.clone()));
            added += 2;
            let lp = &mut f.body.ops[w + added];
            extend_loop(lp, &names, &probed, &ty);
            for c in f
                .body
                .ops
                .iter_mut()
                .filter(|c| c.name == SERIALIZED && probe_id(c) == Some(id.as_str()))
            {
                let Some(k) = iter_of(c) else { continue };
                if let Some(slot) = names.slot(k, "out") {
                    c.name = "check.expect_eq".into();
                    c.operands.push(value(&slot, c.pos));
                    c.attrs.retain(|(a, _)| a != "probe_id" && a != "iter");
                }
            }
        }
        w += 1 + added;
    }
}

/// The names of one probe's counter and slots.
struct Names {
    zero: String,
    init: String,
    prefix: String,
    iters: Vec<i128>,
}

impl Names {
    fn new(n: usize, iters: &[i128]) -> Names {
        let prefix = format!("__probe{n}");
        Names {
            zero: format!("{prefix}_zero"),
            init: format!("{prefix}_init"),
            prefix,
            iters: iters.to_vec(),
        }
    }
    /// `role` of the counter (`count`) or of iteration `k`'s slot.
    fn of(&self, role: &str) -> String {
        format!("{}_{role}", self.prefix)
    }
    fn slot(&self, k: i128, role: &str) -> Option<String> {
        self.iters
            .contains(&k)
            .then(|| format!("{}_iter{k}_{role}", self.prefix))
    }
}

/// Gives `lp` the counter and the slots: operands, results, block
/// arguments of both regions, and the updates in the body after the probe.
fn extend_loop(lp: &mut Op, names: &Names, probed: &str, ty: &Type) {
    let pos = lp.pos;
    let slots: Vec<(i128, String)> = names
        .iters
        .iter()
        .filter_map(|&k| Some((k, names.slot(k, "arg")?)))
        .collect();
    lp.operands.push(value(&names.zero, pos));
    lp.result_types.push(i64_type());
    lp.results.push((names.of("count_out"), 1));
    let mut args = vec![(names.of("count"), i64_type())];
    for (k, arg) in &slots {
        lp.operands.push(value(&names.init, pos));
        lp.result_types.push(ty.clone());
        lp.results
            .push((names.slot(*k, "out").unwrap_or_default(), 1));
        args.push((arg.clone(), ty.clone()));
    }
    for r in &mut lp.regions {
        r.args.extend(args.iter().cloned());
    }
    let body: &mut Region = &mut lp.regions[1];
    let Some(at) = body
        .ops
        .iter()
        .position(|o| o.results.first().is_some_and(|(r, _)| r == probed))
    else {
        return;
    };
    let count = names.of("count");
    let mut ops = vec![
        constant(pos, &names.of("one"), Scalar::Int(1), i64_type()),
        new_op(
            pos,
            "stablehlo.add",
            &names.of("count_next"),
            vec![value(&count, pos), value(&names.of("one"), pos)],
            i64_type(),
        ),
    ];
    let mut next = vec![value(&names.of("count_next"), pos)];
    for (k, arg) in &slots {
        let kc = format!("{arg}_k");
        let is = format!("{arg}_is");
        let nx = format!("{arg}_next");
        ops.push(constant(pos, &kc, Scalar::Int(*k), i64_type()));
        let mut cmp = new_op(
            pos,
            "stablehlo.compare",
            &is,
            vec![value(&count, pos), value(&kc, pos)],
            Type::Tensor(Vec::new(), ElementType::Pred),
        );
        cmp.attrs.push((
            "comparison_direction".into(),
            Attr::Enum("comparison_direction".into(), "EQ".into()),
        ));
        ops.push(cmp);
        ops.push(new_op(
            pos,
            "stablehlo.select",
            &nx,
            vec![value(&is, pos), value(probed, pos), value(arg, pos)],
            ty.clone(),
        ));
        next.push(value(&nx, pos));
    }
    let tail = body.ops.split_off(at + 1);
    body.ops.extend(ops);
    body.ops.extend(tail);
    if let Some(ret) = body
        .ops
        .iter_mut()
        .rev()
        .find(|o| o.name == "stablehlo.return" || o.name == "func.return")
    {
        ret.operands.extend(next);
    }
}
