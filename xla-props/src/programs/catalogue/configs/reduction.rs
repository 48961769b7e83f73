//! Attribute classes of reduce, reduce-window and sort.

use super::{digits, Cfg, Res};
use crate::hlo::{
    Attrs, CompId, ComparisonDirection, ElementType, InstrId, Opcode, Shape, WindowDim,
};
use crate::inputs::Role;
use crate::programs::catalogue::{comparison_type, highest, lowest, scalar, Builder, Init};

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    match (op, class) {
        (Opcode::Reduce, _) => vec![2, 3, 4],
        (Opcode::ReduceWindow, _) => vec![4, 5],
        (Opcode::Sort, "r3-d1") => vec![2, 3, 2],
        _ => vec![4, 3],
    }
}

/// `(a0, a1, b0, b1) -> (a0 + b0, max(a1, b1))`: a variadic reducer of two operands.
fn pair_reducer(c: &mut Cfg) -> CompId {
    let t = c.t;
    let mut b = Builder::default();
    let p: Vec<InstrId> = (0..4).map(|_| b.param(scalar(t), Role::Data)).collect();
    let s = b.push(Opcode::Add, scalar(t), vec![p[0], p[2]], Attrs::default());
    let m = b.push(
        Opcode::Maximum,
        scalar(t),
        vec![p[1], p[3]],
        Attrs::default(),
    );
    let tuple = Shape::Tuple(vec![scalar(t), scalar(t)]);
    let r = b.push(Opcode::Tuple, tuple, vec![s, m], Attrs::default());
    c.b.sub(b, format!("add_max_{t}"), r)
}

fn init(c: &mut Cfg, v: Init) -> InstrId {
    let t = c.t;
    c.b.scalar_const(t, v)
}

fn reduce(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let (name, which) = class.split_once('-').ok_or("bad reduce class")?;
    let reduced = digits(which);
    let x = c.main(dims, Role::Data);
    if name == "variadic" {
        let y = c.param(t, dims, Role::Data);
        let comp = pair_reducer(c);
        let (i0, i1) = (init(c, Init::I(0)), init(c, lowest(t)));
        let attrs = Attrs {
            dimensions: Some(vec![1]),
            to_apply: Some(comp),
            ..Attrs::default()
        };
        return c.op(Opcode::Reduce, vec![x, y, i0, i1], attrs);
    }
    let (op, v) = match name {
        // two elements per output and a neutral init: the product does not depend on the
        // (unspecified) order; longer products legally differ under overflow and underflow
        "multiply" => (Opcode::Multiply, Init::I(1)),
        "minimum" => (Opcode::Minimum, Init::I(1)),
        "maximum" if which == "012" => (Opcode::Maximum, lowest(t)),
        "maximum" => (Opcode::Maximum, Init::I(0)),
        "and" => (Opcode::And, highest(t)),
        "or" => (Opcode::Or, Init::I(0)),
        _ => (Opcode::Add, Init::I(0)),
    };
    let comp = c.b.binary_comp(op, t);
    let i = init(c, v);
    let attrs = Attrs {
        dimensions: Some(reduced),
        to_apply: Some(comp),
        ..Attrs::default()
    };
    c.op(Opcode::Reduce, vec![x, i], attrs)
}

/// (size, stride, pad low, pad high, base dilation, window dilation) per dimension.
fn window_spec(class: &str) -> [(i64, i64, i64, i64, i64, i64); 2] {
    let w = |s, st| (s, st, 0, 0, 1, 1);
    match class {
        "win-d0" => [w(2, 1), w(1, 1)],
        "win-d1" => [w(1, 1), w(3, 1)],
        "win-full" => [w(4, 1), w(5, 1)],
        "stride2" => [w(2, 2), w(3, 2)],
        "pad-low" => [(2, 1, 1, 0, 1, 1), (2, 1, 1, 0, 1, 1)],
        "pad-asym" => [(2, 1, 2, 0, 1, 1), (3, 1, 0, 1, 1, 1)],
        "pad-both" => [(3, 1, 1, 1, 1, 1), (2, 1, 1, 1, 1, 1)],
        "base-dilation" => [(2, 1, 0, 0, 2, 1), w(2, 1)],
        "window-dilation" => [(2, 1, 0, 0, 1, 2), w(2, 1)],
        // two elements per window (see `reduce`)
        "multiply" => [w(1, 1), w(2, 1)],
        _ => [w(2, 1), w(2, 1)],
    }
}

fn reduce_window(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let window: Vec<WindowDim> = window_spec(class)
        .iter()
        .map(|&(size, stride, lo, hi, base, win)| WindowDim {
            stride,
            pad_low: lo,
            pad_high: hi,
            base_dilation: base,
            window_dilation: win,
            ..WindowDim::new(size)
        })
        .collect();
    let x = c.main(dims, Role::Data);
    let attrs = |comp| Attrs {
        window: Some(window.clone()),
        to_apply: Some(comp),
        ..Attrs::default()
    };
    if class == "variadic-2" {
        let y = c.param(t, dims, Role::Data);
        let comp = pair_reducer(c);
        let (i0, i1) = (init(c, Init::I(0)), init(c, lowest(t)));
        return c.op(Opcode::ReduceWindow, vec![x, y, i0, i1], attrs(comp));
    }
    let (op, v) = match class {
        "maximum" => (Opcode::Maximum, lowest(t)),
        "minimum" => (Opcode::Minimum, highest(t)),
        "multiply" => (Opcode::Multiply, Init::I(1)),
        _ => (Opcode::Add, Init::I(0)),
    };
    let comp = c.b.binary_comp(op, t);
    let i = init(c, v);
    c.op(Opcode::ReduceWindow, vec![x, i], attrs(comp))
}

/// A comparator over `n` operands: `dir` on the key operand `key`, or two
/// keys lexicographically.
fn comparator(c: &mut Cfg, n: usize, key: usize, dir: ComparisonDirection, two: bool) -> CompId {
    let t = c.t;
    let mut b = Builder::default();
    let p: Vec<InstrId> = (0..2 * n).map(|_| b.param(scalar(t), Role::Data)).collect();
    let pred = scalar(ElementType::Pred);
    let cmp = |b: &mut Builder, d, k: usize| {
        let attrs = Attrs {
            direction: Some(d),
            comparison_type: Some(comparison_type(t, true)),
            ..Attrs::default()
        };
        b.push(
            Opcode::Compare,
            pred.clone(),
            vec![p[2 * k], p[2 * k + 1]],
            attrs,
        )
    };
    let root = if two {
        let lt0 = cmp(&mut b, ComparisonDirection::Lt, 0);
        let eq0 = cmp(&mut b, ComparisonDirection::Eq, 0);
        let lt1 = cmp(&mut b, ComparisonDirection::Lt, 1);
        let tie = b.push(Opcode::And, pred.clone(), vec![eq0, lt1], Attrs::default());
        b.push(Opcode::Or, pred.clone(), vec![lt0, tie], Attrs::default())
    } else {
        cmp(&mut b, dir, key)
    };
    c.b.sub(b, format!("comparator_{t}"), root)
}

fn sort(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    let (n, dim) = match class {
        "r3-d1" => (1, 1),
        "unstable-n2" | "cmp-on-values" | "cmp-two-keys" => (2, 0),
        "cmp-gt" => (1, 1),
        _ => (
            class[1..2].parse().map_err(|_| "bad operand count")?,
            class[4..5].parse().map_err(|_| "bad dimension")?,
        ),
    };
    let dir = if class == "cmp-gt" {
        ComparisonDirection::Gt
    } else {
        ComparisonDirection::Lt
    };
    let key = usize::from(class == "cmp-on-values");
    let comp = comparator(c, n, key, dir, class == "cmp-two-keys");
    let mut operands = vec![c.main(dims, Role::Data)];
    for _ in 1..n {
        operands.push(c.param(t, dims, Role::Data));
    }
    let attrs = Attrs {
        dimensions: Some(vec![dim]),
        is_stable: class != "unstable-n2",
        to_apply: Some(comp),
        ..Attrs::default()
    };
    c.op(Opcode::Sort, operands, attrs)
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    match op {
        Opcode::Reduce => reduce(c, class, dims),
        Opcode::ReduceWindow => reduce_window(c, class, dims),
        Opcode::Sort => sort(c, class, dims),
        _ => Err(format!("`{op}` is not a reduction")),
    }
}
