//! reduce, reduce-window, scatter, select-and-scatter, sort and map: a typed
//! fast path when the called computation is one binary op (accumulating in
//! f32 for f16/bf16/f32), else the computation runs element by element.

use super::elem::{
    dispatch_float, dispatch_int, err, make, slice_of, strides, udims, FloatElem, IntElem, Res,
    ValRef,
};
use super::elementwise::{fmax, fmin};
use super::engine::{Compiled, Reducer};
use super::indexing::scatter_pairs;
use super::math::Compute;
use super::shape_ops::gather_flat;
use crate::backend::BackendError;
use crate::hlo::{
    ArrayShape, CompId, ComparisonDirection, ElementType, Instruction, Opcode, WindowDim,
};
use crate::literal::{ArrayData, Literal, Value};
use crate::reference::merge_sort;

fn float_fn<C: Compute>(op: Opcode) -> Option<fn(C, C) -> C> {
    Some(match op {
        Opcode::Add => |a, b| a + b,
        Opcode::Multiply => |a, b| a * b,
        Opcode::Maximum => fmax,
        Opcode::Minimum => fmin,
        _ => return None,
    })
}

fn int_fn(op: Opcode, unsigned: bool) -> Option<fn(i64, i64) -> i64> {
    Some(match (op, unsigned) {
        (Opcode::Add, _) => |a: i64, b| a.wrapping_add(b),
        (Opcode::Multiply, _) => |a: i64, b| a.wrapping_mul(b),
        (Opcode::Maximum, false) => |a: i64, b| a.max(b),
        (Opcode::Minimum, false) => |a: i64, b| a.min(b),
        (Opcode::Maximum, true) => |a: i64, b| (a as u64).max(b as u64) as i64,
        (Opcode::Minimum, true) => |a: i64, b| (a as u64).min(b as u64) as i64,
        (Opcode::And, _) => |a: i64, b| a & b,
        (Opcode::Or, _) => |a: i64, b| a | b,
        (Opcode::Xor, _) => |a: i64, b| a ^ b,
        _ => return None,
    })
}

fn pred_fn(op: Opcode) -> Option<fn(bool, bool) -> bool> {
    Some(match op {
        Opcode::And | Opcode::Minimum | Opcode::Multiply => |a, b| a & b,
        Opcode::Or | Opcode::Maximum | Opcode::Add => |a, b| a | b,
        Opcode::Xor => |a, b| a ^ b,
        _ => return None,
    })
}

/// The input offsets each output folds over, in order.
trait Groups {
    fn count(&self) -> usize;
    fn fill(&self, out: usize, buf: &mut Vec<usize>);
}

struct ReduceGroups {
    bases: Vec<usize>,
    offsets: Vec<usize>,
}

impl Groups for ReduceGroups {
    fn count(&self) -> usize {
        self.bases.len()
    }
    fn fill(&self, out: usize, buf: &mut Vec<usize>) {
        buf.clear();
        let b = self.bases[out];
        buf.extend(self.offsets.iter().map(|&o| b + o));
    }
}

struct WindowGroups {
    in_dims: Vec<usize>,
    in_strides: Vec<usize>,
    out_dims: Vec<usize>,
    window: Vec<WindowDim>,
}

impl WindowGroups {
    fn new(
        in_dims: &[usize],
        window: &[WindowDim],
        out_dims: &[usize],
        check: bool,
    ) -> Res<WindowGroups> {
        if window.len() != in_dims.len() || out_dims.len() != in_dims.len() {
            return err("window rank does not match the operand");
        }
        for (k, w) in window.iter().enumerate() {
            if w.size < 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0 {
                return err(format!("bad window in dimension {k}"));
            }
            if check {
                let d = in_dims[k] as i64;
                let dilated = if d == 0 {
                    0
                } else {
                    (d - 1) * w.base_dilation + 1
                };
                let padded = dilated + w.pad_low + w.pad_high;
                let win = if w.size == 0 {
                    0
                } else {
                    (w.size - 1) * w.window_dilation + 1
                };
                let expect = if padded < win {
                    0
                } else {
                    (padded - win) / w.stride + 1
                };
                if expect != out_dims[k] as i64 {
                    return err(format!(
                        "window gives {expect} outputs in dimension {k}, the result declares {}",
                        out_dims[k]
                    ));
                }
            }
        }
        Ok(WindowGroups {
            in_dims: in_dims.to_vec(),
            in_strides: strides(in_dims),
            out_dims: out_dims.to_vec(),
            window: window.to_vec(),
        })
    }
    fn window_dims(&self) -> Vec<usize> {
        self.window.iter().map(|w| w.size as usize).collect()
    }
}

impl Groups for WindowGroups {
    fn count(&self) -> usize {
        self.out_dims.iter().product()
    }
    fn fill(&self, out: usize, buf: &mut Vec<usize>) {
        buf.clear();
        let rank = self.in_dims.len();
        let mut o = vec![0usize; rank];
        let mut r = out;
        for k in (0..rank).rev() {
            let d = self.out_dims[k].max(1);
            o[k] = r % d;
            r /= d;
        }
        let wdims = self.window_dims();
        if wdims.contains(&0) {
            return;
        }
        let mut w = vec![0usize; rank];
        loop {
            let mut flat = 0usize;
            let mut ok = true;
            for k in 0..rank {
                let wd = &self.window[k];
                let pos = o[k] as i64 * wd.stride + w[k] as i64 * wd.window_dilation - wd.pad_low;
                if pos < 0 || pos % wd.base_dilation != 0 {
                    ok = false;
                    break;
                }
                let q = (pos / wd.base_dilation) as usize;
                if q >= self.in_dims[k] {
                    ok = false;
                    break;
                }
                flat += q * self.in_strides[k];
            }
            if ok {
                buf.push(flat);
            }
            if !super::elem::next_index(&mut w, &wdims) {
                break;
            }
        }
    }
}

/// Element `i` of `l` as a scalar ([`Literal::scalar_at`]).
fn scalar_at(l: &Literal, i: usize) -> Res<Literal> {
    l.scalar_at(i)
        .map_err(|e| BackendError::Execute(e.to_string()))
}

/// Element `j` of `from` written at element `i` of `to` (same type).
fn copy_element(to: &mut Literal, i: usize, from: &Literal, j: usize) {
    if to.dtype().is_complex() {
        let (re, im) = from.get_complex(j);
        to.set_complex(i, re, im);
    } else {
        to.set_bits(i, from.get_bits(j));
    }
}

fn filled(dtype: ElementType, dims: &[usize], init: &Literal) -> Res<Literal> {
    let n: usize = dims.iter().product();
    let shape = ArrayShape::new(dtype, dims.iter().map(|&d| d as i64).collect::<Vec<_>>());
    if dtype.is_complex() {
        let z = if init.element_count() == 1 {
            init.get_complex(0)
        } else {
            (0.0, 0.0)
        };
        return Literal::from_complex(&shape, &vec![z; n])
            .map_err(|e| BackendError::Execute(e.to_string()));
    }
    let b = if init.element_count() == 1 {
        init.get_bits(0)
    } else {
        0
    };
    Literal::from_bits(&shape, &vec![b; n]).map_err(|e| BackendError::Execute(e.to_string()))
}

/// Per group, in order: its elements of `s`, each read through `up`,
/// folded with `f` from `init`.
fn fold_groups<S: Copy, A: Copy>(
    groups: &dyn Groups,
    buf: &mut Vec<usize>,
    s: &[S],
    init: A,
    up: impl Fn(S) -> A,
    f: impl Fn(A, A) -> A,
) -> Vec<A> {
    (0..groups.count())
        .map(|g| {
            groups.fill(g, buf);
            buf.iter().fold(init, |acc, &k| f(acc, up(s[k])))
        })
        .collect()
}

/// The computation an instruction applies, or an error naming `op`.
fn to_apply(ins: &Instruction, op: &str) -> Res<CompId> {
    ins.attrs
        .to_apply
        .ok_or_else(|| BackendError::Execute(format!("{op}: missing to_apply")))
}

impl Compiled {
    /// Folds each group of input elements with `to_apply`, starting from `inits`.
    fn fold(
        &self,
        to_apply: CompId,
        inputs: &[&Literal],
        inits: &[&Literal],
        groups: &dyn Groups,
        out_dims: &[usize],
    ) -> Res<Vec<Literal>> {
        if inputs.is_empty() || inputs.len() != inits.len() {
            return err("reduction needs as many init values as inputs");
        }
        for (x, i) in inputs.iter().zip(inits) {
            if x.dtype() != i.dtype() || i.element_count() != 1 || x.dims() != inputs[0].dims() {
                return err("reduction inputs and init values do not match");
            }
        }
        let n = groups.count();
        let mut buf = Vec::new();
        if let (1, Reducer::Binary(op)) = (inputs.len(), self.reducer(to_apply)) {
            let (x, init) = (inputs[0], inits[0]);
            let dt = x.dtype();
            let fast: Option<Res<Literal>> = dispatch_float!(x.data(), _a: T => {
                float_fn::<<T as FloatElem>::C>(op).map(|f| -> Res<Literal> {
                    let s = slice_of::<T>(x, "reduce")?;
                    let i0 = slice_of::<T>(init, "reduce")?[0].up();
                    let acc = fold_groups(groups, &mut buf, s, i0, T::up, f);
                    make(dt, out_dims, acc.into_iter().map(T::down).collect())
                })
            }, _ => dispatch_int!(x.data(), _a: T => {
                int_fn(op, dt.is_unsigned_int()).map(|f| -> Res<Literal> {
                    let s = slice_of::<T>(x, "reduce")?;
                    let i0 = slice_of::<T>(init, "reduce")?[0].to_i64();
                    let acc = fold_groups(groups, &mut buf, s, i0, T::to_i64, f);
                    make(dt, out_dims, acc.into_iter().map(T::from_i64).collect())
                })
            }, _ => match x.data() {
                ArrayData::Pred(_) => pred_fn(op).map(|f| -> Res<Literal> {
                    let s = slice_of::<bool>(x, "reduce")?;
                    let i0 = slice_of::<bool>(init, "reduce")?[0];
                    let out = fold_groups(groups, &mut buf, s, i0, |b| b, f);
                    make(dt, out_dims, out)
                }),
                _ => None,
            }));
            if let Some(r) = fast {
                return Ok(vec![r?]);
            }
        }
        // generic: run the computation element by element
        let mut outs: Vec<Literal> = inputs
            .iter()
            .zip(inits)
            .map(|(x, i)| filled(x.dtype(), out_dims, i))
            .collect::<Res<_>>()?;
        for g in 0..n {
            groups.fill(g, &mut buf);
            let mut acc: Vec<Literal> =
                inits.iter().map(|i| scalar_at(i, 0)).collect::<Res<_>>()?;
            for &k in &buf {
                let mut args = acc;
                for x in inputs {
                    args.push(scalar_at(x, k)?);
                }
                acc = self.call_scalars(to_apply, &args)?;
                if acc.len() != inputs.len() {
                    return err("reducer returned the wrong number of values");
                }
            }
            for (o, a) in outs.iter_mut().zip(&acc) {
                if a.dtype() != o.dtype() || a.element_count() != 1 {
                    return err("reducer returned a value of the wrong type");
                }
                copy_element(o, g, a, 0);
            }
        }
        Ok(outs)
    }

    fn split_inputs<'b>(
        &self,
        ops: &[ValRef<'b>],
        name: &str,
    ) -> Res<(Vec<&'b Literal>, Vec<&'b Literal>)> {
        if !ops.len().is_multiple_of(2) || ops.is_empty() {
            return err(format!(
                "{name}: expected inputs followed by as many init values"
            ));
        }
        let n = ops.len() / 2;
        let xs = ops[..n].iter().map(|r| r.array(name)).collect::<Res<_>>()?;
        let is = ops[n..].iter().map(|r| r.array(name)).collect::<Res<_>>()?;
        Ok((xs, is))
    }

    fn pack(outs: Vec<Literal>, ins: &Instruction) -> Value {
        if ins.shape.is_tuple() {
            Value::Tuple(outs.into_iter().map(Value::Array).collect())
        } else {
            outs.into_iter()
                .next()
                .map(Value::Array)
                .unwrap_or(Value::Tuple(vec![]))
        }
    }

    pub(super) fn reduce(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let (xs, inits) = self.split_inputs(ops, "reduce")?;
        let to_apply = to_apply(ins, "reduce")?;
        let dims = ins.attrs.dimensions.clone().unwrap_or_default();
        let in_dims = xs[0].dims().to_vec();
        let rank = in_dims.len();
        let mut reduced = vec![false; rank];
        for &d in &dims {
            match usize::try_from(d).ok().filter(|&d| d < rank) {
                Some(d) => reduced[d] = true,
                None => return err(format!("reduce: dimension {d} out of range")),
            }
        }
        let st = strides(&in_dims);
        let kept: Vec<usize> = (0..rank).filter(|&k| !reduced[k]).collect();
        let red: Vec<usize> = (0..rank).filter(|&k| reduced[k]).collect();
        let offsets_of = |ds: &[usize]| -> Vec<usize> {
            let sizes: Vec<usize> = ds.iter().map(|&k| in_dims[k]).collect();
            let n: usize = sizes.iter().product();
            let mut v = Vec::with_capacity(n);
            let mut idx = vec![0usize; ds.len()];
            for _ in 0..n {
                v.push(idx.iter().zip(ds).map(|(&i, &k)| i * st[k]).sum());
                super::elem::next_index(&mut idx, &sizes);
            }
            v
        };
        let out_dims: Vec<usize> = kept.iter().map(|&k| in_dims[k]).collect();
        let groups = ReduceGroups {
            bases: offsets_of(&kept),
            offsets: offsets_of(&red),
        };
        let outs = self.fold(to_apply, &xs, &inits, &groups, &out_dims)?;
        Ok(Self::pack(outs, ins))
    }

    pub(super) fn reduce_window(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let (xs, inits) = self.split_inputs(ops, "reduce-window")?;
        let to_apply = to_apply(ins, "reduce-window")?;
        let window = ins
            .attrs
            .window
            .clone()
            .ok_or_else(|| BackendError::Execute("reduce-window: missing window".into()))?;
        let out_shape = ins
            .shape
            .leaves()
            .first()
            .map(|a| a.dims.clone())
            .unwrap_or_default();
        let out_dims = udims(&out_shape, "reduce-window")?;
        let groups = WindowGroups::new(xs[0].dims(), &window, &out_dims, true)?;
        let outs = self.fold(to_apply, &xs, &inits, &groups, &out_dims)?;
        Ok(Self::pack(outs, ins))
    }

    pub(super) fn select_and_scatter(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let name = "select-and-scatter";
        let (x, source, init) = match ops {
            [a, b, c] => (a.array(name)?, b.array(name)?, c.array(name)?),
            _ => return err("select-and-scatter: expected 3 operands"),
        };
        let a = &ins.attrs;
        let (Some(select), Some(scatter), Some(window)) = (a.select, a.scatter, a.window.as_ref())
        else {
            return err("select-and-scatter: missing select, scatter or window");
        };
        if source.dtype() != x.dtype() || init.dtype() != x.dtype() {
            return err("select-and-scatter: operand, source and init types differ");
        }
        let groups = WindowGroups::new(x.dims(), window, source.dims(), true)?;
        let mut out = filled(x.dtype(), x.dims(), init)?;
        let mut buf = Vec::new();
        for g in 0..groups.count() {
            groups.fill(g, &mut buf);
            let Some((&first, rest)) = buf.split_first() else {
                continue;
            };
            let mut best = first;
            for &k in rest {
                let keep = self.call_scalars(select, &[scalar_at(x, best)?, scalar_at(x, k)?])?;
                let keep = keep
                    .first()
                    .map(|l| l.get_bits(0) != 0)
                    .ok_or_else(|| BackendError::Execute("select returned nothing".into()))?;
                if !keep {
                    best = k;
                }
            }
            let r = self.call_scalars(scatter, &[scalar_at(&out, best)?, scalar_at(source, g)?])?;
            let r = r
                .first()
                .ok_or_else(|| BackendError::Execute("scatter returned nothing".into()))?;
            copy_element(&mut out, best, r, 0);
        }
        Ok(Value::Array(out))
    }

    pub(super) fn scatter(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let name = "scatter";
        if ops.len() < 3 || ops.len() % 2 != 1 {
            return err("scatter: expected operands, indices and as many updates");
        }
        let n = (ops.len() - 1) / 2;
        let xs: Vec<&Literal> = ops[..n].iter().map(|r| r.array(name)).collect::<Res<_>>()?;
        let indices = ops[n].array(name)?;
        let ups: Vec<&Literal> = ops[n + 1..]
            .iter()
            .map(|r| r.array(name))
            .collect::<Res<_>>()?;
        let to_apply = to_apply(ins, "scatter")?;
        let sd =
            ins.attrs.scatter_dims.as_ref().ok_or_else(|| {
                BackendError::Execute("scatter: missing dimension numbers".into())
            })?;
        for (x, u) in xs.iter().zip(&ups) {
            if x.dtype() != u.dtype() || x.dims() != xs[0].dims() || u.dims() != ups[0].dims() {
                return err("scatter: operand and update types or shapes differ");
            }
        }
        let pairs = scatter_pairs(xs[0].dims(), indices, ups[0].dims(), sd)?;
        let mut outs: Vec<Literal> = xs.iter().map(|&x| x.clone()).collect();
        match (n, self.reducer(to_apply)) {
            (1, Reducer::TakeSecond) => {
                let (o, u) = (&mut outs[0], ups[0]);
                for &(t, s) in &pairs {
                    copy_element(o, t, u, s);
                }
            }
            _ => {
                for &(t, s) in &pairs {
                    let mut args: Vec<Literal> =
                        outs.iter().map(|o| scalar_at(o, t)).collect::<Res<_>>()?;
                    for u in &ups {
                        args.push(scalar_at(u, s)?);
                    }
                    let r = self.call_scalars(to_apply, &args)?;
                    if r.len() != n {
                        return err(
                            "scatter: update computation returned the wrong number of values",
                        );
                    }
                    for (o, v) in outs.iter_mut().zip(&r) {
                        if v.dtype() != o.dtype() {
                            return err("scatter: update computation returned the wrong type");
                        }
                        copy_element(o, t, v, 0);
                    }
                }
            }
        }
        Ok(Self::pack(outs, ins))
    }

    pub(super) fn sort(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let xs: Vec<&Literal> = ops.iter().map(|r| r.array("sort")).collect::<Res<_>>()?;
        let Some(first) = xs.first() else {
            return err("sort: no operands");
        };
        let dims = first.dims().to_vec();
        if xs.iter().any(|x| x.dims() != dims.as_slice()) {
            return err("sort: operands have different shapes");
        }
        let d = ins
            .attrs
            .dimensions
            .as_ref()
            .and_then(|v| v.first().copied())
            .unwrap_or(0);
        let Some(d) = usize::try_from(d).ok().filter(|&d| d < dims.len().max(1)) else {
            return err(format!("sort: dimension {d} out of range"));
        };
        let cmp = to_apply(ins, "sort")?;
        let n = first.element_count();
        let len = if dims.is_empty() { 1 } else { dims[d] };
        let st = strides(&dims);
        let step = if dims.is_empty() { 1 } else { st[d] };
        let simple = self.simple_compare(cmp);
        let keys = simple
            .map(|s| SortKeys::new(first, s.total_order))
            .transpose()?;
        let mut idx = vec![0usize; n];
        let mut perm: Vec<usize> = Vec::with_capacity(len);
        for base in 0..n {
            // visit each slice once, from its first element
            if len > 0 && (base / step) % len != 0 {
                continue;
            }
            perm.clear();
            perm.extend(0..len);
            let at = |k: usize| base + k * step;
            let mut less = |i: usize, j: usize| -> Res<bool> {
                match (&simple, &keys) {
                    (Some(s), Some(k)) => Ok(k.less(s.direction, at(i), at(j))),
                    _ => {
                        let mut args = Vec::with_capacity(2 * xs.len());
                        for x in &xs {
                            args.push(scalar_at(x, at(i))?);
                            args.push(scalar_at(x, at(j))?);
                        }
                        let r = self.call_scalars(cmp, &args)?;
                        match r.first() {
                            Some(l) if l.dtype() == ElementType::Pred => Ok(l.get_bits(0) != 0),
                            _ => err("sort: comparator did not return a pred"),
                        }
                    }
                }
            };
            perm = merge_sort(perm, &mut less)?;
            for (k, &p) in perm.iter().enumerate() {
                idx[at(k)] = at(p);
            }
        }
        let outs: Vec<Literal> = xs
            .iter()
            .map(|x| gather_flat(x, &idx, &dims, None))
            .collect::<Res<_>>()?;
        Ok(Self::pack(outs, ins))
    }

    pub(super) fn map(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let xs: Vec<&Literal> = ops.iter().map(|r| r.array("map")).collect::<Res<_>>()?;
        let to_apply = to_apply(ins, "map")?;
        let out = ins
            .shape
            .as_array()
            .ok_or_else(|| BackendError::Execute("map: result is not an array".into()))?;
        let dims = udims(&out.dims, "map")?;
        let n: usize = dims.iter().product();
        if xs.iter().any(|x| x.dims() != dims.as_slice()) {
            return err("map: operand shapes differ from the result");
        }
        let mut o = filled(out.dtype, &dims, &Literal::scalar(out.dtype, 0.0))?;
        for i in 0..n {
            let args: Vec<Literal> = xs.iter().map(|x| scalar_at(x, i)).collect::<Res<_>>()?;
            let r = self.call_scalars(to_apply, &args)?;
            match r.first() {
                Some(l) if l.dtype() == out.dtype => copy_element(&mut o, i, l, 0),
                _ => return err("map: computation returned the wrong type"),
            }
        }
        Ok(Value::Array(o))
    }
}

/// Precomputed sort keys of the first operand, for a one-compare comparator.
enum SortKeys {
    Float(Vec<f64>),
    Total(Vec<i64>),
    Int(Vec<i128>),
}

impl SortKeys {
    fn new(x: &Literal, total: bool) -> Res<SortKeys> {
        let dt = x.dtype();
        Ok(if dt.is_float() && total {
            let w = dt.bit_width();
            SortKeys::Total(
                x.to_bits_vec()
                    .into_iter()
                    .map(|b| {
                        let mag = (b & ((1u64 << (w - 1)) - 1)) as i64;
                        if (b >> (w - 1)) & 1 == 1 {
                            -mag - 1
                        } else {
                            mag
                        }
                    })
                    .collect(),
            )
        } else if dt.is_float() {
            SortKeys::Float(x.to_f64_vec())
        } else {
            SortKeys::Int(x.to_i128_vec())
        })
    }
    fn less(&self, d: ComparisonDirection, i: usize, j: usize) -> bool {
        match self {
            SortKeys::Float(v) => d.holds(v[i], v[j]),
            SortKeys::Total(v) => d.holds(v[i], v[j]),
            SortKeys::Int(v) => d.holds(v[i], v[j]),
        }
    }
}

impl Compiled {
    /// topk along the last dimension: (values, s32 indices), largest first
    /// (smallest first with `largest=false`), ties by the lower index, floats
    /// in the total order.
    pub(super) fn topk(&self, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let x = ops
            .first()
            .ok_or_else(|| BackendError::Execute("topk: no operand".into()))?
            .array("topk")?;
        let attr = |name: &str| {
            ins.attrs
                .other
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.trim().to_string())
        };
        let k: usize = attr("k")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| BackendError::Execute("topk: missing or bad k=".into()))?;
        let largest = attr("largest").is_none_or(|v| v != "false");
        let crate::hlo::Shape::Tuple(outs) = &ins.shape else {
            return err("topk: the result must be a (values, indices) tuple");
        };
        let (Some(vs), Some(is)) = (
            outs.first().and_then(|s| s.as_array()),
            outs.get(1).and_then(|s| s.as_array()),
        ) else {
            return err("topk: the result must be a (values, indices) tuple");
        };
        if x.dtype().is_complex() {
            return Err(BackendError::unsupported("topk of complex values"));
        }
        let n = match x.dims().last() {
            Some(&n) if k <= n => n,
            _ => return err(format!("topk: k={k} does not fit {}", x.shape())),
        };
        let keys = SortKeys::new(x, true)?;
        let bits = x.to_bits_vec();
        let rows = x.element_count().checked_div(n).unwrap_or(0);
        let (mut values, mut indices) = (Vec::new(), Vec::new());
        let first = if largest {
            ComparisonDirection::Gt
        } else {
            ComparisonDirection::Lt
        };
        for r in 0..rows {
            let mut order: Vec<usize> = (r * n..(r + 1) * n).collect();
            // a stable sort keeps the lower index first among ties
            order.sort_by(|&a, &b| {
                if keys.less(first, a, b) {
                    std::cmp::Ordering::Less
                } else if keys.less(first, b, a) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            });
            for &j in order.iter().take(k) {
                values.push(bits[j]);
                indices.push((j - r * n) as u64);
            }
        }
        let lit = |s: &ArrayShape, b: &[u64]| {
            Literal::from_bits(s, b).map_err(|e| BackendError::Execute(format!("topk: {e}")))
        };
        Ok(Value::Tuple(vec![
            Value::Array(lit(vs, &values)?),
            Value::Array(lit(is, &indices)?),
        ]))
    }
}
