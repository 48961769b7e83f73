//! Attribute classes of while, conditional, call, map and tuple: their
//! structures, over an array of the case's dtype.

use super::{Cfg, Res};
use crate::hlo::{Attrs, CompId, ComparisonDirection, ElementType, InstrId, Opcode, Shape};
use crate::inputs::Role;
use crate::programs::catalogue::{arr, comparison_type, Builder, Init};

const DIMS: [i64; 2] = [3, 4];

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    match (op, class) {
        (Opcode::Map, "rank0") => vec![],
        _ => DIMS.to_vec(),
    }
}

/// A step on a value of `t`: `x + x` (`not x` on pred), as one instruction in `b`.
fn step(b: &mut Builder, t: ElementType, shape: Shape, x: InstrId) -> InstrId {
    if t.is_pred() {
        b.push(Opcode::Not, shape, vec![x], Attrs::default())
    } else {
        b.push(Opcode::Add, shape, vec![x, x], Attrs::default())
    }
}

/// A computation `x -> step(x)` (applied `times` times) over `dims`.
fn step_comp(c: &mut Cfg, dims: &[i64], times: usize, name: &str) -> CompId {
    let t = c.t;
    let mut b = Builder::default();
    let shape = arr(t, dims.to_vec(), None);
    let mut x = b.param(shape.clone(), Role::Data);
    for _ in 0..times {
        x = step(&mut b, t, shape.clone(), x);
    }
    c.b.sub(b, format!("{name}_{t}"), x)
}

fn gte(b: &mut Builder, shape: Shape, tuple: InstrId, i: i64) -> InstrId {
    let attrs = Attrs {
        index: Some(i),
        ..Attrs::default()
    };
    b.push(Opcode::GetTupleElement, shape, vec![tuple], attrs)
}

/// A loop over `(i, x[, y])` running `trips` times; the body steps `x` (by `y` when carried).
fn while_loop(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let s32 = ElementType::S32;
    let carry = class == "carry-3";
    let trips = if class == "zero-trip" { 0 } else { 3 };
    let xs = arr(t, dims.to_vec(), None);
    let mut elems = vec![arr(s32, vec![], None), xs.clone()];
    if carry {
        elems.push(xs.clone());
    }
    let state = Shape::Tuple(elems.clone());
    // condition: i < trips
    let mut cb = Builder::default();
    let p = cb.param(state.clone(), Role::Data);
    let i = gte(&mut cb, elems[0].clone(), p, 0);
    let n = cb.scalar_const(s32, Init::I(trips));
    let attrs = Attrs {
        direction: Some(ComparisonDirection::Lt),
        comparison_type: Some(comparison_type(s32, false)),
        ..Attrs::default()
    };
    let lt = cb.push(
        Opcode::Compare,
        arr(ElementType::Pred, vec![], None),
        vec![i, n],
        attrs,
    );
    let cond = c.b.sub(cb, format!("cond_{t}"), lt);
    // body: (i + 1, step(x) [or x op y], y)
    let mut bb = Builder::default();
    let p = bb.param(state.clone(), Role::Data);
    let i = gte(&mut bb, elems[0].clone(), p, 0);
    let one = bb.scalar_const(s32, Init::I(1));
    let i1 = bb.push(
        Opcode::Add,
        elems[0].clone(),
        vec![i, one],
        Attrs::default(),
    );
    let x = gte(&mut bb, xs.clone(), p, 1);
    let mut next = vec![i1];
    if carry {
        let y = gte(&mut bb, xs.clone(), p, 2);
        let op = if t.is_pred() {
            Opcode::Xor
        } else {
            Opcode::Add
        };
        next.push(bb.push(op, xs.clone(), vec![x, y], Attrs::default()));
        next.push(y);
    } else {
        next.push(step(&mut bb, t, xs.clone(), x));
    }
    let r = bb.push(Opcode::Tuple, state.clone(), next, Attrs::default());
    let body = c.b.sub(bb, format!("body_{t}"), r);
    let x = c.main(dims, Role::Data);
    let zero = c.b.scalar_const(s32, Init::I(0));
    let mut init = vec![zero, x];
    if carry {
        init.push(c.param(t, dims, Role::Data));
    }
    let tuple = c.op(Opcode::Tuple, init, Attrs::default())?;
    let attrs = Attrs {
        condition: Some(cond),
        body: Some(body),
        ..Attrs::default()
    };
    c.op(Opcode::While, vec![tuple], attrs)
}

fn conditional(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let branches: Vec<CompId> = (0..if class == "pred" { 2 } else { 3 })
        .map(|k| step_comp(c, dims, k, &format!("branch{k}")))
        .collect();
    let selector = match class {
        "pred" => c.param(ElementType::Pred, &[], Role::Data),
        "index-3" => c.param(ElementType::S32, &[], Role::Index(0, 2)),
        _ => c.param(ElementType::S32, &[], Role::Index(-3, 6)),
    };
    let x = c.main(dims, Role::Data);
    let mut operands = vec![selector];
    operands.extend(std::iter::repeat_n(x, branches.len()));
    let attrs = Attrs {
        // the text form of a pred conditional names true first: branch 0 is taken on true
        branch_computations: branches,
        pred_branches: class == "pred",
        ..Attrs::default()
    };
    c.op(Opcode::Conditional, operands, attrs)
}

fn call(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let inner = step_comp(c, dims, 1, "callee");
    let target = if class == "nested" {
        let t = c.t;
        let mut b = Builder::default();
        let shape = arr(t, dims.to_vec(), None);
        let x = b.param(shape.clone(), Role::Data);
        let attrs = Attrs {
            to_apply: Some(inner),
            ..Attrs::default()
        };
        let once = b.push(Opcode::Call, shape.clone(), vec![x], attrs);
        let twice = step(&mut b, t, shape, once);
        c.b.sub(b, format!("outer_{t}"), twice)
    } else {
        inner
    };
    let x = c.main(dims, Role::Data);
    let attrs = Attrs {
        to_apply: Some(target),
        ..Attrs::default()
    };
    c.op(Opcode::Call, vec![x], attrs)
}

fn map(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let binary = class == "binary";
    let comp = if binary {
        let op = if t.is_pred() {
            Opcode::Xor
        } else {
            Opcode::Add
        };
        c.b.binary_comp(op, t)
    } else {
        step_comp(c, &[], 1, "mapped")
    };
    let x = c.main(dims, Role::Data);
    let mut operands = vec![x];
    if binary {
        operands.push(c.param(t, dims, Role::Data));
    }
    let attrs = Attrs {
        dimensions: Some((0..dims.len() as i64).collect()),
        to_apply: Some(comp),
        ..Attrs::default()
    };
    c.op(Opcode::Map, operands, attrs)
}

fn tuple(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let x = c.main(dims, Role::Data);
    let y = c.param(t, &[2], Role::Data);
    if class == "flat" {
        let z = c.param(t, &[], Role::Data);
        return c.op(Opcode::Tuple, vec![x, y, z], Attrs::default());
    }
    let inner = c.op(Opcode::Tuple, vec![x, y], Attrs::default())?;
    let outer = c.op(Opcode::Tuple, vec![inner, x], Attrs::default())?;
    let at = |i| Attrs {
        index: Some(i),
        ..Attrs::default()
    };
    let first = c.op(Opcode::GetTupleElement, vec![outer], at(0))?;
    let y2 = c.op(Opcode::GetTupleElement, vec![first], at(1))?;
    let x2 = c.op(Opcode::GetTupleElement, vec![outer], at(1))?;
    c.op(Opcode::Tuple, vec![y2, x2], Attrs::default())
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    match op {
        Opcode::While => while_loop(c, class, dims),
        Opcode::Conditional => conditional(c, class, dims),
        Opcode::Call => call(c, class, dims),
        Opcode::Map => map(c, class, dims),
        Opcode::Tuple => tuple(c, class, dims),
        _ => Err(format!("`{op}` has no structure classes")),
    }
}
