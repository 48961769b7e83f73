//! reduce, reduce-window, select-and-scatter, map, and the scalar
//! combiners they (and scatter) apply.
//!
//! Order: a recognized plain float `add` reducer is summed EXACTLY (order
//! does not matter) and rounded once; a plain float `multiply` is multiplied
//! in f64 in row-major order and rounded once; `maximum`/`minimum`/`and`/
//! `or`/`xor` and integer reducers are order-independent. Any other reducer
//! computation is applied as a left fold, starting from the init value, over
//! the reduced elements in row-major order of the operand.

use super::data::{bits, bits_value, dims_of, f64s, from_bits, next_index, strides};
use super::elementwise::{binary, int_binary};
use super::error::{bad, out, to_apply};
use super::exact_sum::exact_sum;
use super::scalar::{plain, round_bits, ScalarFn};
use super::{math, Calls, OpError};
use crate::hlo::{ArrayShape, CompId, ElementType, Instruction, Module, Opcode, Shape, WindowDim};
use crate::literal::{Literal, Value};

/// A scalar combiner `f(acc, x)`: a recognized plain binary op, or a computation.
#[derive(Clone, Debug)]
pub(crate) enum Combiner {
    /// The computation is `op(p0, p1)` (or `op(p1, p0)` for a commutative op) on scalars of one type.
    Plain(Opcode, ElementType),
    /// Any other computation.
    Computation(ScalarFn),
}

impl Combiner {
    /// Recognizes `comp` as a plain binary op on scalars of `t`.
    pub(crate) fn of(module: &Module, comp: CompId, t: ElementType) -> Combiner {
        let generic = Combiner::Computation(ScalarFn::new(module, comp));
        let Some(c) = module.computations.get(comp.index()) else {
            return generic;
        };
        let params = c.parameters();
        let Some(root) = c.instructions.get(c.root.index()) else {
            return generic;
        };
        let scalar_t = |s: &Shape| {
            s.as_array()
                .is_some_and(|a| a.dims.is_empty() && a.dtype == t)
        };
        if params.len() != 2
            || !params.iter().all(|&p| scalar_t(&c.instr(p).shape))
            || !scalar_t(&root.shape)
        {
            return generic;
        }
        let commutative = commutative(root.opcode);
        let known = if t.is_complex() {
            false
        } else if t.is_float() {
            math::binary(root.opcode).is_some()
        } else {
            int_binary(root.opcode).is_some() || t.is_pred()
        };
        let in_order = root.operands == [params[0], params[1]];
        let swapped = root.operands == [params[1], params[0]];
        if known && (in_order || (swapped && commutative)) && (!t.is_pred() || commutative) {
            Combiner::Plain(root.opcode, t)
        } else {
            generic
        }
    }

    /// A plain op whose operands commute (its result over a set of values
    /// does not depend on their order, up to the rounding of a float sum or
    /// product).
    pub(crate) fn commutative(&self) -> bool {
        matches!(*self, Combiner::Plain(op, _) if commutative(op))
    }

    /// `f(acc, x)` on bits of one type (plain combiners only have one operand).
    pub(crate) fn apply(
        &self,
        run: &mut dyn Calls,
        acc: &[u64],
        x: &[u64],
        types: &[ElementType],
    ) -> Result<Vec<u64>, OpError> {
        match *self {
            Combiner::Plain(op, t) => Ok(vec![plain(op, t, acc[0], x[0])?]),
            Combiner::Computation(ref f) => {
                let args: Vec<(ElementType, u64)> = types
                    .iter()
                    .zip(acc)
                    .chain(types.iter().zip(x))
                    .map(|(&t, &b)| (t, b))
                    .collect();
                f.apply(run, &args, types, &mut Vec::new())
            }
        }
    }
}

/// Whether a reducer whose root is `op` may take its operands in either order.
pub(crate) fn commutative(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Add
            | Opcode::Multiply
            | Opcode::Maximum
            | Opcode::Minimum
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
    )
}

/// What folds a group of elements into one result per operand.
struct Folder {
    comb: Combiner,
    types: Vec<ElementType>,
    inputs: Vec<Vec<u64>>,
    floats: Vec<f64>,
    init: Vec<u64>,
}

impl Folder {
    fn new(
        module: &Module,
        comp: Option<CompId>,
        xs: &[&Literal],
        inits: &[&Literal],
        given: Option<Combiner>,
    ) -> Result<Folder, OpError> {
        let comp = comp.ok_or_else(|| bad("missing to_apply"))?;
        if xs.len() != inits.len() || xs.is_empty() {
            return Err(bad("operands and init values do not pair up"));
        }
        let types: Vec<ElementType> = xs.iter().map(|x| x.dtype()).collect();
        for (x, i) in xs.iter().zip(inits) {
            if i.element_count() != 1 || i.dtype() != x.dtype() || x.dims() != xs[0].dims() {
                return Err(bad(
                    "init values must be scalars of the operands' types, operands of one shape",
                ));
            }
        }
        let comb = if let Some(c) = given {
            c
        } else if xs.len() == 1 {
            Combiner::of(module, comp, types[0])
        } else {
            Combiner::Computation(ScalarFn::new(module, comp))
        };
        let floats = match comb {
            Combiner::Plain(Opcode::Add | Opcode::Multiply, t) if t.is_float() => f64s(xs[0]),
            _ => Vec::new(),
        };
        Ok(Folder {
            comb,
            types,
            inputs: xs.iter().map(|x| bits(x)).collect(),
            floats,
            init: inits.iter().map(|i| bits(i)[0]).collect(),
        })
    }

    /// Folds the elements at flat indices `idx` (in this order) into the init values.
    fn fold(&self, run: &mut dyn Calls, idx: &[usize]) -> Result<Vec<u64>, OpError> {
        match self.comb {
            Combiner::Plain(Opcode::Add, t) if t.is_float() => {
                let mut v = Vec::with_capacity(idx.len() + 1);
                v.push(bits_value(self.init[0], t));
                v.extend(idx.iter().map(|&i| self.floats[i]));
                Ok(vec![round_bits(exact_sum(&v, t), t)])
            }
            Combiner::Plain(Opcode::Multiply, t) if t.is_float() => {
                let p = idx
                    .iter()
                    .fold(bits_value(self.init[0], t), |acc, &i| acc * self.floats[i]);
                Ok(vec![round_bits(p, t)])
            }
            Combiner::Plain(op, t)
                if t.is_integer() && matches!(op, Opcode::Add | Opcode::Multiply) =>
            {
                let w = t.bit_width();
                let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                let r = idx.iter().fold(self.init[0], |acc, &i| {
                    let x = self.inputs[0][i];
                    if op == Opcode::Add {
                        acc.wrapping_add(x)
                    } else {
                        acc.wrapping_mul(x)
                    }
                });
                Ok(vec![r & mask])
            }
            Combiner::Plain(op, t) => {
                let mut acc = self.init[0];
                for &i in idx {
                    acc = plain(op, t, acc, self.inputs[0][i])?;
                }
                Ok(vec![acc])
            }
            _ => {
                let mut acc = self.init.clone();
                let mut x = vec![0u64; self.inputs.len()];
                for &i in idx {
                    for (k, input) in self.inputs.iter().enumerate() {
                        x[k] = input[i];
                    }
                    acc = self.comb.apply(run, &acc, &x, &self.types)?;
                }
                Ok(acc)
            }
        }
    }
}

/// Splits reduce-like operands `[x1..xN, init1..initN]`.
fn halves<'l>(ops: &[&'l Literal]) -> Result<(Vec<&'l Literal>, Vec<&'l Literal>), OpError> {
    if ops.len() & 1 == 1 || ops.is_empty() {
        return Err(bad("expected operands followed by as many init values"));
    }
    let n = ops.len() / 2;
    Ok((ops[..n].to_vec(), ops[n..].to_vec()))
}

/// The output array shapes of a (possibly variadic) result.
pub(super) fn out_shapes(ins: &Instruction, n: usize) -> Result<Vec<&ArrayShape>, OpError> {
    let shapes: Vec<&ArrayShape> = match &ins.shape {
        Shape::Tuple(t) => t
            .iter()
            .map(|s| s.as_array())
            .collect::<Option<_>>()
            .ok_or_else(|| bad("nested tuple result"))?,
        Shape::Array(a) => vec![a],
        Shape::Token => vec![],
    };
    if shapes.len() != n {
        return Err(bad(format!(
            "result has {} arrays, expected {n}",
            shapes.len()
        )));
    }
    Ok(shapes)
}

/// Builds the (possibly tuple) result from bits per operand.
pub(super) fn assemble(
    ins: &Instruction,
    shapes: &[&ArrayShape],
    types: &[ElementType],
    cols: Vec<Vec<u64>>,
) -> Result<Value, OpError> {
    if shapes.iter().zip(types).any(|(s, &t)| s.dtype != t) {
        return Err(bad("result element types differ from the operands'"));
    }
    let lits = shapes
        .iter()
        .zip(&cols)
        .map(|(s, c)| from_bits(s, c).map(Value::Array))
        .collect::<Result<Vec<_>, _>>()?;
    if ins.shape.is_tuple() {
        Ok(Value::Tuple(lits))
    } else {
        lits.into_iter().next().ok_or_else(|| bad("empty result"))
    }
}

/// reduce over `dimensions`, variadic.
pub(crate) fn reduce(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Value, OpError> {
    reduce_with(run, ins, ops, None)
}

/// reduce, with `comb` (when given) in place of the reducer's own combiner
/// (a complex sum reduces each plane with the component type's `add`).
pub(crate) fn reduce_with(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
    comb: Option<Combiner>,
) -> Result<Value, OpError> {
    let (xs, inits) = halves(ops)?;
    let folder = Folder::new(run.module(), ins.attrs.to_apply, &xs, &inits, comb)?;
    let xd = xs[0].dims().to_vec();
    let red = ins
        .attrs
        .dimensions
        .as_deref()
        .ok_or_else(|| bad("reduce without dimensions"))?;
    let mut is_red = vec![false; xd.len()];
    for &d in red {
        let d = usize::try_from(d)
            .ok()
            .filter(|&d| d < xd.len())
            .ok_or_else(|| bad(format!("reduce dimension {d} out of range")))?;
        is_red[d] = true;
    }
    let kept: Vec<usize> = (0..xd.len()).filter(|&d| !is_red[d]).collect();
    let reduced: Vec<usize> = (0..xd.len()).filter(|&d| is_red[d]).collect();
    let shapes = out_shapes(ins, xs.len())?;
    for s in &shapes {
        if dims_of(s)? != kept.iter().map(|&d| xd[d]).collect::<Vec<_>>() {
            return Err(bad(format!(
                "reduce of {} over {red:?} does not give {s}",
                xs[0].shape()
            )));
        }
    }
    let st = strides(&xd);
    let kdims: Vec<usize> = kept.iter().map(|&d| xd[d]).collect();
    let rdims: Vec<usize> = reduced.iter().map(|&d| xd[d]).collect();
    let n_out: usize = kdims.iter().product();
    let n_red: usize = rdims.iter().product();
    // flat offsets of the reduced elements in row-major order of the reduced dims
    let mut offs = Vec::with_capacity(n_red);
    if n_red > 0 {
        let mut r = vec![0usize; rdims.len()];
        loop {
            offs.push(
                r.iter()
                    .zip(&reduced)
                    .map(|(&i, &d)| i * st[d])
                    .sum::<usize>(),
            );
            if !next_index(&mut r, &rdims) {
                break;
            }
        }
    }
    let mut cols = vec![Vec::with_capacity(n_out); xs.len()];
    let mut k = vec![0usize; kdims.len()];
    let mut group = vec![0usize; n_red];
    for _ in 0..n_out {
        let base: usize = k.iter().zip(&kept).map(|(&i, &d)| i * st[d]).sum();
        for (g, &o) in group.iter_mut().zip(&offs) {
            *g = base + o;
        }
        for (c, v) in cols.iter_mut().zip(folder.fold(run, &group)?) {
            c.push(v);
        }
        next_index(&mut k, &kdims);
    }
    assemble(ins, &shapes, &folder.types, cols)
}

/// The input flat indices one window covers, in row-major window order
/// (positions in padding or between dilated elements are skipped).
fn window_elements(
    out_idx: &[usize],
    win: &[WindowDim],
    xd: &[usize],
    st: &[usize],
    buf: &mut Vec<usize>,
) {
    buf.clear();
    let wdims: Vec<usize> = win.iter().map(|w| w.size.max(0) as usize).collect();
    if wdims.contains(&0) {
        return;
    }
    let mut w = vec![0usize; win.len()];
    loop {
        let mut flat = 0;
        let mut ok = true;
        for d in 0..win.len() {
            let wd = &win[d];
            let p = out_idx[d] as i64 * wd.stride + w[d] as i64 * wd.window_dilation - wd.pad_low;
            if p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= xd[d] as i64 {
                ok = false;
                break;
            }
            flat += (p / wd.base_dilation) as usize * st[d];
        }
        if ok {
            buf.push(flat);
        }
        if !next_index(&mut w, &wdims) {
            break;
        }
    }
}

fn check_window(win: &[WindowDim], rank: usize) -> Result<(), OpError> {
    if win.len() != rank
        || win
            .iter()
            .any(|w| w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 || w.size < 0)
    {
        return Err(bad(
            "window does not match the operand rank or has non-positive strides/dilations",
        ));
    }
    Ok(())
}

/// reduce-window, variadic, with padding and base/window dilation.
pub(crate) fn reduce_window(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Value, OpError> {
    reduce_window_with(run, ins, ops, None)
}

/// reduce-window, with `comb` (when given) in place of the reducer's own combiner.
pub(crate) fn reduce_window_with(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
    comb: Option<Combiner>,
) -> Result<Value, OpError> {
    let (xs, inits) = halves(ops)?;
    let folder = Folder::new(run.module(), ins.attrs.to_apply, &xs, &inits, comb)?;
    let xd = xs[0].dims().to_vec();
    let win = ins
        .attrs
        .window
        .as_deref()
        .ok_or_else(|| bad("reduce-window without a window"))?;
    check_window(win, xd.len())?;
    let shapes = out_shapes(ins, xs.len())?;
    let od = dims_of(shapes[0])?;
    if od.len() != xd.len() {
        return Err(bad("reduce-window result rank differs from the operand's"));
    }
    let st = strides(&xd);
    let n_out: usize = od.iter().product();
    let mut cols = vec![Vec::with_capacity(n_out); xs.len()];
    let mut o = vec![0usize; od.len()];
    let mut buf = Vec::new();
    for _ in 0..n_out {
        window_elements(&o, win, &xd, &st, &mut buf);
        for (c, v) in cols.iter_mut().zip(folder.fold(run, &buf)?) {
            c.push(v);
        }
        next_index(&mut o, &od);
    }
    assemble(ins, &shapes, &folder.types, cols)
}

/// select-and-scatter: for each source element, the `select` winner of its
/// window (first valid element, replaced by each later one the selector does
/// not prefer) gets the source value scattered into it (row-major source order).
pub(crate) fn select_and_scatter(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Literal, OpError> {
    let [x, src, init] = ops else {
        return Err(bad(
            "select-and-scatter takes operand, source and init value",
        ));
    };
    let (sel, sc) = (
        ins.attrs.select.ok_or_else(|| bad("missing select"))?,
        ins.attrs.scatter.ok_or_else(|| bad("missing scatter"))?,
    );
    let t = x.dtype();
    if src.dtype() != t || init.dtype() != t || init.element_count() != 1 {
        return Err(bad("select-and-scatter operand types differ"));
    }
    let xd = x.dims().to_vec();
    let win = ins
        .attrs
        .window
        .as_deref()
        .ok_or_else(|| bad("select-and-scatter without a window"))?;
    check_window(win, xd.len())?;
    let sd = src.dims().to_vec();
    if sd.len() != xd.len() {
        return Err(bad("source rank differs from the operand's"));
    }
    let comb = Combiner::of(run.module(), sc, t);
    let result = out(ins)?;
    if result.dtype != t || dims_of(result)? != xd {
        return Err(bad(format!(
            "select-and-scatter of {} cannot give {result}",
            x.shape()
        )));
    }
    let xb = bits(x);
    let sb = bits(src);
    let st = strides(&xd);
    let select = ScalarFn::new(run.module(), sel);
    let mut regs = Vec::new();
    let mut res = vec![bits(init)[0]; xb.len()];
    let mut o = vec![0usize; sd.len()];
    let mut buf = Vec::new();
    for &source in &sb {
        window_elements(&o, win, &xd, &st, &mut buf);
        let mut chosen: Option<usize> = None;
        for &i in &buf {
            chosen = match chosen {
                None => Some(i),
                Some(c) => {
                    let keep = select.apply(
                        run,
                        &[(t, xb[c]), (t, xb[i])],
                        &[ElementType::Pred],
                        &mut regs,
                    )?;
                    Some(if keep[0] & 1 == 1 { c } else { i })
                }
            };
        }
        if let Some(c) = chosen {
            res[c] = comb.apply(run, &[res[c]], &[source], &[t])?[0];
        }
        next_index(&mut o, &sd);
    }
    from_bits(result, &res)
}

/// The operand elements (flat, in window order) that the window of each
/// source element of a select-and-scatter covers, in row-major source
/// order: where its select may choose.
pub(crate) fn select_and_scatter_windows(
    ins: &Instruction,
    xd: &[usize],
    sd: &[usize],
) -> Result<Vec<Vec<usize>>, OpError> {
    let win = ins
        .attrs
        .window
        .as_deref()
        .ok_or_else(|| bad("select-and-scatter without a window"))?;
    check_window(win, xd.len())?;
    if sd.len() != xd.len() {
        return Err(bad("source rank differs from the operand's"));
    }
    let st = strides(xd);
    let n: usize = sd.iter().product();
    let mut o = vec![0usize; sd.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut buf = Vec::new();
        window_elements(&o, win, xd, &st, &mut buf);
        out.push(buf);
        next_index(&mut o, sd);
    }
    Ok(out)
}

/// map: applies `to_apply` to the operands elementwise.
pub(crate) fn map(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Literal, OpError> {
    let comp = to_apply(ins)?;
    let o = out(ins)?;
    let first = ops.first().ok_or_else(|| bad("map of nothing"))?;
    if ops.iter().any(|x| x.dims() != first.dims()) {
        return Err(bad("map operands differ in shape"));
    }
    if let ([a, b], Combiner::Plain(op, t)) = (ops, Combiner::of(run.module(), comp, first.dtype()))
    {
        if b.dtype() == t && o.dtype == t {
            return binary(op, a, b, o);
        }
    }
    let types: Vec<ElementType> = ops.iter().map(|x| x.dtype()).collect();
    let cols: Vec<Vec<u64>> = ops.iter().map(|x| bits(x)).collect();
    let n = first.element_count();
    let body = ScalarFn::new(run.module(), comp);
    let mut regs = Vec::new();
    let mut res = Vec::with_capacity(n);
    for i in 0..n {
        let args: Vec<(ElementType, u64)> =
            types.iter().zip(&cols).map(|(&t, c)| (t, c[i])).collect();
        res.push(body.apply(run, &args, &[o.dtype], &mut regs)?[0]);
    }
    from_bits(o, &res)
}

/// The reference's reduction of a group's arrays: exact sums (rounded once)
/// for a plain float add, f64 products rounded once for a plain float
/// multiply, the plain op or the computation folded in group order else.
pub(crate) fn exact_group_reduce(
    run: &mut dyn Calls,
    ins: &Instruction,
    xs: &[&Literal],
) -> Result<Literal, String> {
    let comp = ins.to_apply()?;
    let first = xs.first().ok_or("an empty group")?;
    let t = first.dtype();
    if xs
        .iter()
        .any(|x| x.dtype() != t || x.dims() != first.dims())
    {
        return Err(format!(
            "`{}`: devices sent arrays of different shapes",
            ins.name
        ));
    }
    let comb = Combiner::of(run.module(), comp, t);
    let n = first.element_count();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let bits: Vec<u64> = xs.iter().map(|x| x.get_bits(i)).collect();
        let v = match comb {
            Combiner::Plain(Opcode::Add, t) if t.is_float() => {
                let vals: Vec<f64> = xs.iter().map(|x| x.get_f64(i)).collect();
                round_bits(exact_sum(&vals, t), t)
            }
            Combiner::Plain(Opcode::Multiply, t) if t.is_float() => {
                round_bits(xs.iter().map(|x| x.get_f64(i)).product(), t)
            }
            Combiner::Plain(op, t) => {
                let mut acc = bits[0];
                for &b in &bits[1..] {
                    acc = plain(op, t, acc, b).map_err(|e| format!("{e:?}"))?;
                }
                acc
            }
            Combiner::Computation(_) => {
                let mut acc = vec![bits[0]];
                for &b in &bits[1..] {
                    acc = comb
                        .apply(run, &acc, &[b], &[t])
                        .map_err(|e| format!("{e:?}"))?;
                }
                acc[0]
            }
        };
        out.push(v);
    }
    Literal::from_bits(
        &ArrayShape::new(
            t,
            first.dims().iter().map(|&d| d as i64).collect::<Vec<_>>(),
        ),
        &out,
    )
    .map_err(|e| e.to_string())
}
