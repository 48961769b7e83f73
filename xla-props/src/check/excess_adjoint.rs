//! Where to keep excess precision, element by element: the sensitivity of
//! one output element to every value of a run (reverse mode, at the run's
//! own values), for the excess-precision witness.
//!
//! Keeping element `e` of a rounding narrow instruction in f32 instead of
//! rounding it moves the value by `d = x - round(x)`, and an output element
//! by about `adj[e] * d`, where `adj` is that output element's derivative
//! with respect to the value (its adjoint). A run aimed at the output
//! element keeps exactly the elements whose move goes its way. That is a
//! first-order guess, used only to choose runs: every run is still a legal
//! run and only what runs reach goes into the hull. An op with no rule here
//! passes no sensitivity back (the choice upstream of it stays as it was).

use super::magnitude_sums::DotRoles;
use crate::hlo::rewrite::dead_code_eliminated;
use crate::hlo::{
    ArrayShape, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape,
};
use crate::literal::{Literal, Value};
use crate::reference::data::{next_index, strides};
use crate::reference::{branch_index, scatter_targets, Run};
use std::collections::HashMap;

/// `module` with every call and fusion of the entry computation inlined
/// (at any depth), so every value of a run is an entry value; `None` when
/// there is nothing to inline or a computation cannot be ordered.
pub(super) fn inlined(module: &Module) -> Option<Module> {
    let entry = module.entry_computation();
    if !entry
        .instructions
        .iter()
        .any(|i| matches!(i.opcode, Opcode::Call | Opcode::Fusion))
    {
        return None;
    }
    let mut out = Vec::new();
    let root = inline_into(module, module.entry.index(), None, &mut out, 0)?;
    let mut m = module.clone();
    m.computations[module.entry.index()] = Computation {
        name: entry.name.clone(),
        instructions: out,
        root,
        other: entry.other.clone(),
    };
    Some(dead_code_eliminated(&m))
}

/// Calls nested deeper than this are not inlined.
const MAX_INLINE_DEPTH: usize = 32;

fn inline_into(
    module: &Module,
    comp: usize,
    args: Option<&[InstrId]>,
    out: &mut Vec<Instruction>,
    depth: usize,
) -> Option<InstrId> {
    let c = module.computations.get(comp)?;
    let mut map: Vec<Option<InstrId>> = vec![None; c.instructions.len()];
    for id in c.post_order()? {
        let ins = c.instr(id);
        if let (Opcode::Parameter, Some(args)) = (ins.opcode, args) {
            let k = usize::try_from(ins.attrs.parameter_number?).ok()?;
            map[id.index()] = Some(*args.get(k)?);
            continue;
        }
        let ops = ins
            .operands
            .iter()
            .map(|o| map.get(o.index()).copied().flatten())
            .collect::<Option<Vec<_>>>()?;
        let callee = match ins.opcode {
            Opcode::Call => ins
                .attrs
                .to_apply
                .or_else(|| ins.attrs.calls.first().copied()),
            Opcode::Fusion if ins.attrs.calls.len() == 1 => ins.attrs.calls.first().copied(),
            _ => None,
        };
        if let (Some(callee), true) = (callee, depth < MAX_INLINE_DEPTH) {
            let root = inline_into(module, callee.index(), Some(&ops), out, depth + 1)?;
            map[id.index()] = Some(root);
            continue;
        }
        let mut copy = ins.clone();
        copy.operands = ops;
        if depth > 0 {
            copy.name = format!("{}.inlined.{}", ins.name, out.len());
        }
        out.push(copy);
        map[id.index()] = Some(InstrId(out.len() as u32 - 1));
    }
    map.get(c.root.index()).copied().flatten()
}

/// An adjoint: per array element, or per tuple part.
#[derive(Clone, Debug)]
enum Adj {
    Arr(Vec<f64>),
    Tup(Vec<Option<Adj>>),
}

fn add_into(slot: &mut Option<Adj>, g: Adj) {
    match slot {
        None => *slot = Some(g),
        Some(Adj::Arr(a)) => {
            if let Adj::Arr(b) = g {
                if a.len() == b.len() {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                }
            }
        }
        Some(Adj::Tup(a)) => {
            if let Adj::Tup(b) = g {
                for (x, y) in a.iter_mut().zip(b) {
                    if let Some(y) = y {
                        add_into(x, y);
                    }
                }
            }
        }
    }
}

/// The one-hot adjoint of leaf `*leaf` (tuples flattened) of `shape`.
fn seed(shape: &Shape, leaf: &mut usize, element: usize) -> Option<Adj> {
    match shape {
        Shape::Array(a) => {
            let here = *leaf == 0;
            *leaf = leaf.wrapping_sub(1);
            let n = a.element_count().map_or(0, |n| n as usize);
            (here && element < n).then(|| {
                let mut g = vec![0.0; n];
                g[element] = 1.0;
                Adj::Arr(g)
            })
        }
        Shape::Tuple(t) => Some(Adj::Tup(t.iter().map(|s| seed(s, leaf, element)).collect())),
        Shape::Token => None,
    }
}

/// Which element of which data operand each result element of a
/// data-movement op reads: `offsets[k] + i` for element `i` of data
/// operand `k`, negative for none (padding).
struct Sources {
    data: Vec<usize>,
    offsets: Vec<usize>,
    of: Vec<i64>,
}

/// The reverse pass over one (inlined, widened) module.
pub(super) struct Sensitivity<'m> {
    module: &'m Module,
    /// Per computation, its instructions operands first.
    orders: HashMap<usize, Option<Vec<InstrId>>>,
    /// Per computation and instruction, a data-movement op's sources.
    sources: HashMap<(usize, usize), Option<Sources>>,
    /// Per conditional branch, the module that runs it as its entry.
    branches: HashMap<usize, Module>,
    depth: usize,
}

/// Conditionals nested deeper than this pass nothing back.
const MAX_BRANCH_DEPTH: usize = 8;

impl<'m> Sensitivity<'m> {
    pub(super) fn new(module: &'m Module) -> Option<Self> {
        let mut s = Sensitivity {
            module,
            orders: HashMap::new(),
            sources: HashMap::new(),
            branches: HashMap::new(),
            depth: 0,
        };
        s.order(module.entry.index())?;
        Some(s)
    }

    fn order(&mut self, comp: usize) -> Option<Vec<InstrId>> {
        let m = self.module;
        self.orders
            .entry(comp)
            .or_insert_with(|| m.computations.get(comp).and_then(Computation::post_order))
            .clone()
    }

    /// Per entry instruction, the derivative of element `element` of output
    /// `output` (tuples flattened) with respect to each element of its array
    /// value, at `values` (a run's entry values); `None` where nothing
    /// passes back.
    pub(super) fn backward(
        &mut self,
        values: &[Option<Value>],
        output: usize,
        element: usize,
    ) -> Vec<Option<Vec<f64>>> {
        let comp = self.module.entry_computation();
        let mut leaf = output;
        let Some(g) = seed(&comp.instr(comp.root).shape, &mut leaf, element) else {
            return vec![None; comp.instructions.len()];
        };
        self.backward_in(self.module.entry.index(), values, g)
            .into_iter()
            .map(|a| match a {
                Some(Adj::Arr(v)) => Some(v),
                _ => None,
            })
            .collect()
    }

    /// Every instruction's adjoint in computation `comp`, from its root's
    /// adjoint `g`, at `values` (the computation's values in one run).
    fn backward_in(&mut self, comp: usize, values: &[Option<Value>], g: Adj) -> Vec<Option<Adj>> {
        let m = self.module;
        let (Some(c), Some(order)) = (m.computations.get(comp), self.order(comp)) else {
            return Vec::new();
        };
        let n = c.instructions.len();
        let mut adj: Vec<Option<Adj>> = vec![None; n];
        adj[c.root.index()] = Some(g);
        let mut done: Vec<Option<Adj>> = vec![None; n];
        for &id in order.iter().rev() {
            let Some(g) = adj[id.index()].take() else {
                continue;
            };
            let ins = c.instr(id);
            for (k, a) in self.rule((comp, id), ins, &g, values) {
                if let Some(&o) = ins.operands.get(k) {
                    add_into(&mut adj[o.index()], a);
                }
            }
            done[id.index()] = Some(g);
        }
        done
    }

    /// A conditional's: the reverse pass through the branch the run took,
    /// run again on its operand (in f32, every value kept).
    fn through_branch(
        &mut self,
        ins: &Instruction,
        g: &Adj,
        values: &[Option<Value>],
    ) -> Option<Vec<(usize, Adj)>> {
        if self.depth >= MAX_BRANCH_DEPTH {
            return None;
        }
        let value = |k: usize| values.get(ins.operands.get(k)?.index())?.as_ref();
        let sel = value(0)?.as_array()?;
        let branches = &ins.attrs.branch_computations;
        let k = if sel.dtype() == ElementType::Pred {
            branch_index(true, i128::from(sel.get_bits(0) & 1 == 1), branches.len())
        } else {
            branch_index(false, sel.get_i128(0), branches.len())
        };
        let comp = branches.get(k)?.index();
        let arg = value(k + 1)?.flatten();
        let m = self.module;
        let branch = self.branches.entry(comp).or_insert_with(|| {
            let mut b = m.clone();
            b.entry = crate::hlo::CompId(comp as u32);
            b
        });
        let inner = crate::reference::Evaluator::new()
            .evaluate_all(branch, &arg)
            .ok()?;
        self.depth += 1;
        let adj = self.backward_in(comp, &inner, g.clone());
        self.depth -= 1;
        let param = m.computations.get(comp)?.parameters().first()?.index();
        Some(vec![(k + 1, adj.into_iter().nth(param)??)])
    }

    /// The operands' adjoints from the result's.
    fn rule(
        &mut self,
        (comp, id): (usize, InstrId),
        ins: &Instruction,
        g: &Adj,
        values: &[Option<Value>],
    ) -> Vec<(usize, Adj)> {
        let g = match (ins.opcode, g) {
            (Opcode::Conditional, g) => {
                return self.through_branch(ins, g, values).unwrap_or_default();
            }
            (Opcode::Tuple, Adj::Tup(parts)) => {
                return parts
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| p.clone().map(|p| (k, p)))
                    .collect();
            }
            (Opcode::GetTupleElement, g) => {
                let Some(Shape::Tuple(parts)) = ins
                    .operands
                    .first()
                    .and_then(|o| Some(&self.module.computations.get(comp)?.instr(*o).shape))
                else {
                    return Vec::new();
                };
                let index = ins.attrs.index.unwrap_or(-1);
                let tup = (0..parts.len())
                    .map(|k| (k as i64 == index).then(|| g.clone()))
                    .collect();
                return vec![(0, Adj::Tup(tup))];
            }
            (_, Adj::Arr(g)) => g,
            _ => return Vec::new(),
        };
        let operand = |k: usize| -> Option<&Literal> {
            ins.operands
                .get(k)
                .and_then(|o| values.get(o.index()))
                .and_then(Option::as_ref)
                .and_then(Value::as_array)
        };
        let result = values
            .get(id.index())
            .and_then(Option::as_ref)
            .and_then(Value::as_array);
        let mut out = match self.arithmetic(ins, g, &operand, result) {
            Some(out) => out,
            None => self.moved((comp, id), ins, g, values).unwrap_or_default(),
        };
        for (_, a) in &mut out {
            if let Adj::Arr(v) = a {
                v.iter_mut()
                    .filter(|x| !x.is_finite())
                    .for_each(|x| *x = 0.0);
            }
        }
        out
    }

    /// Elementwise ops, contractions and reductions; `None` for the rest.
    fn arithmetic<'v>(
        &self,
        ins: &Instruction,
        g: &[f64],
        operand: &dyn Fn(usize) -> Option<&'v Literal>,
        result: Option<&'v Literal>,
    ) -> Option<Vec<(usize, Adj)>> {
        use Opcode as O;
        let vals = |k: usize| operand(k).map(Literal::to_f64_vec).unwrap_or_default();
        let y = result.map(Literal::to_f64_vec).unwrap_or_default();
        let same = |v: &[f64]| v.len() == g.len();
        let map = |v: &[f64], f: &dyn Fn(usize, f64) -> f64| -> Adj {
            Adj::Arr(g.iter().enumerate().map(|(e, &d)| d * f(e, v[e])).collect())
        };
        let unary = |f: &dyn Fn(f64, f64) -> f64| -> Vec<(usize, Adj)> {
            let x = vals(0);
            if !same(&x) || !same(&y) {
                return Vec::new();
            }
            vec![(0, map(&x, &|e, x| f(x, y[e])))]
        };
        let (a, b) = (vals(0), vals(1));
        let binary = same(&a) && same(&b);
        Some(match ins.opcode {
            O::Add if binary => vec![(0, Adj::Arr(g.to_vec())), (1, Adj::Arr(g.to_vec()))],
            O::Subtract if binary => vec![
                (0, Adj::Arr(g.to_vec())),
                (1, Adj::Arr(g.iter().map(|d| -d).collect())),
            ],
            O::Multiply if binary => vec![(0, map(&b, &|_, b| b)), (1, map(&a, &|_, a| a))],
            O::Divide if binary && same(&y) => vec![
                (0, map(&b, &|_, b| 1.0 / b)),
                (1, map(&b, &|e, b| -y[e] / b)),
            ],
            O::Maximum | O::Minimum if binary && same(&y) => vec![
                (0, map(&a, &|e, a| f64::from(u8::from(a == y[e])))),
                (1, map(&a, &|e, a| f64::from(u8::from(a != y[e])))),
            ],
            O::Power if binary && same(&y) => vec![
                (0, map(&a, &|e, a| b[e] * y[e] / a)),
                (
                    1,
                    map(&a, &|e, a| if a > 0.0 { y[e] * a.ln() } else { 0.0 }),
                ),
            ],
            O::Select => {
                let p = vals(0);
                let (t, f) = (vals(1), vals(2));
                if !same(&t) || !same(&f) || p.is_empty() {
                    return Some(Vec::new());
                }
                let pick = |e: usize| p[if p.len() == 1 { 0 } else { e.min(p.len() - 1) }] != 0.0;
                vec![
                    (1, map(&t, &|e, _| f64::from(u8::from(pick(e))))),
                    (2, map(&f, &|e, _| f64::from(u8::from(!pick(e))))),
                ]
            }
            O::Clamp => {
                let x = vals(1);
                if !same(&x) || !same(&y) {
                    return Some(Vec::new());
                }
                vec![(1, map(&x, &|e, x| f64::from(u8::from(x == y[e]))))]
            }
            O::Convert => {
                let float = operand(0).is_some_and(|l| l.dtype().is_float());
                if !float {
                    return Some(Vec::new());
                }
                unary(&|_, _| 1.0)
            }
            O::Negate => unary(&|_, _| -1.0),
            O::Abs => unary(&|x, _| x.signum()),
            O::Exponential => unary(&|_, y| y),
            O::ExponentialMinusOne => unary(&|_, y| y + 1.0),
            O::Log => unary(&|x, _| 1.0 / x),
            O::LogPlusOne => unary(&|x, _| 1.0 / (1.0 + x)),
            O::Sqrt => unary(&|_, y| 0.5 / y),
            O::Rsqrt => unary(&|x, y| -0.5 * y / x),
            O::Cbrt => unary(&|x, y| y / (3.0 * x)),
            O::Tanh => unary(&|_, y| 1.0 - y * y),
            O::Logistic => unary(&|_, y| y * (1.0 - y)),
            O::Sine => unary(&|x, _| x.cos()),
            O::Cosine => unary(&|x, _| -x.sin()),
            O::Tan => unary(&|_, y| 1.0 + y * y),
            O::Erf => unary(&|x, _| std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp()),
            O::Dot => {
                let (a, b) = (operand(0)?, operand(1)?);
                let (da, db) = dot_adjoints(ins, a, b, g)?;
                vec![(0, Adj::Arr(da)), (1, Adj::Arr(db))]
            }
            O::Reduce if ins.operands.len() == 2 => {
                let x = operand(0)?;
                vec![(0, Adj::Arr(self.reduce_adjoint(ins, x, g)?))]
            }
            O::Scatter if ins.operands.len() == 3 => {
                let (x, idx, u) = (operand(0)?, operand(1)?, operand(2)?);
                self.scatter_adjoint(ins, x, idx, u, g)?
            }
            _ => return None,
        })
    }

    /// A scatter's adjoints: an add combiner passes the result's adjoint
    /// to the operand and to every update at the element it lands on; an
    /// assigning one to each update at its element and to the operand
    /// where no update lands.
    fn scatter_adjoint(
        &self,
        ins: &Instruction,
        x: &Literal,
        idx: &Literal,
        u: &Literal,
        g: &[f64],
    ) -> Option<Vec<(usize, Adj)>> {
        let root = applied_op(self.module, ins)?;
        let assigns = root.opcode == Opcode::Parameter && root.attrs.parameter_number == Some(1);
        if root.opcode != Opcode::Add && !assigns {
            return None;
        }
        let targets = scatter_targets(ins, x.dims(), idx, u.dims()).ok()?;
        let mut dx = g.to_vec();
        let du: Vec<f64> = targets
            .iter()
            .map(|t| t.and_then(|t| g.get(t).copied()).unwrap_or(0.0))
            .collect();
        if assigns {
            for t in targets.iter().flatten() {
                if let Some(d) = dx.get_mut(*t) {
                    *d = 0.0;
                }
            }
        }
        Some(vec![(0, Adj::Arr(dx)), (2, Adj::Arr(du))])
    }

    /// A reduction's operand adjoint: an add passes the result's adjoint to
    /// every element it sums, a max or min to its extremum.
    fn reduce_adjoint(&self, ins: &Instruction, x: &Literal, g: &[f64]) -> Option<Vec<f64>> {
        let root = applied_op(self.module, ins)?;
        let dims: Vec<usize> = ins
            .attrs
            .dimensions
            .as_ref()?
            .iter()
            .map(|&d| d as usize)
            .collect();
        let xd = x.dims();
        let kept: Vec<usize> = (0..xd.len()).filter(|d| !dims.contains(d)).collect();
        let out_strides = strides(&kept.iter().map(|&d| xd[d]).collect::<Vec<_>>());
        let mut to_out = vec![0usize; xd.len()];
        for (t, &d) in kept.iter().enumerate() {
            to_out[d] = out_strides[t];
        }
        let at = offsets(xd, &to_out);
        let xv = x.to_f64_vec();
        let mut dx = vec![0.0; xv.len()];
        match root.opcode {
            Opcode::Add => {
                for (i, &o) in at.iter().enumerate() {
                    dx[i] = g.get(o).copied().unwrap_or(0.0);
                }
            }
            Opcode::Maximum | Opcode::Minimum => {
                let max = root.opcode == Opcode::Maximum;
                let mut best: Vec<Option<usize>> = vec![None; g.len()];
                for (i, &o) in at.iter().enumerate() {
                    let slot = best.get_mut(o)?;
                    let better = slot.is_none_or(|b| (xv[i] > xv[b]) == max && xv[i] != xv[b]);
                    if better {
                        *slot = Some(i);
                    }
                }
                for (o, b) in best.iter().enumerate() {
                    if let Some(i) = b {
                        dx[*i] = g[o];
                    }
                }
            }
            _ => return None,
        }
        Some(dx)
    }

    /// Data movement: the result's adjoint summed back onto the elements
    /// each result element reads.
    fn moved(
        &mut self,
        (comp, id): (usize, InstrId),
        ins: &Instruction,
        g: &[f64],
        values: &[Option<Value>],
    ) -> Option<Vec<(usize, Adj)>> {
        let key = (comp, id.index());
        if !self.sources.contains_key(&key) {
            let s = sources(self.module, ins, values);
            self.sources.insert(key, s);
        }
        let s = self.sources.get(&key)?.as_ref()?;
        let mut out: Vec<(usize, Vec<f64>)> = s
            .data
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let n = s.offsets.get(k + 1).copied().unwrap_or(0) - s.offsets[k];
                (d, vec![0.0; n])
            })
            .collect();
        for (j, &src) in s.of.iter().enumerate() {
            let (Ok(src), Some(&d)) = (usize::try_from(src), g.get(j)) else {
                continue;
            };
            let k = s.offsets.partition_point(|&o| o <= src).saturating_sub(1);
            if let Some((_, v)) = out.get_mut(k) {
                if let Some(x) = v.get_mut(src - s.offsets[k]) {
                    *x += d;
                }
            }
        }
        Some(out.into_iter().map(|(k, v)| (k, Adj::Arr(v))).collect())
    }
}

/// The op a reducer or combiner applies, past the round trips through a
/// narrower type that XLA puts after it.
fn applied_op<'m>(module: &'m Module, ins: &Instruction) -> Option<&'m Instruction> {
    let comp = module.computations.get(ins.attrs.to_apply?.index())?;
    let mut root = comp.instr(comp.root);
    while root.opcode == Opcode::Convert && root.operands.len() == 1 {
        root = comp.instr(root.operands[0]);
    }
    Some(root)
}

/// Which operands of a data-movement op carry data (the others are
/// indices or a padding value); `None` for any other op.
fn data_operands(ins: &Instruction) -> Option<Vec<usize>> {
    use Opcode as O;
    Some(match ins.opcode {
        O::Copy
        | O::Bitcast
        | O::Reshape
        | O::Broadcast
        | O::Transpose
        | O::Slice
        | O::Reverse
        | O::Pad
        | O::Gather
        | O::DynamicSlice => vec![0],
        O::DynamicUpdateSlice => vec![0, 1],
        O::Concatenate => (0..ins.operands.len()).collect(),
        _ => return None,
    })
}

/// The sources of a data-movement op, found by running it in f64 on the
/// elements' own numbers (its index operands as the run computed them).
fn sources(module: &Module, ins: &Instruction, values: &[Option<Value>]) -> Option<Sources> {
    let data = data_operands(ins)?;
    let mut offsets = vec![0usize];
    let mut ops = Vec::with_capacity(ins.operands.len());
    for (k, o) in ins.operands.iter().enumerate() {
        let l = values.get(o.index())?.as_ref()?.as_array()?;
        let numbered = |f: &dyn Fn(usize) -> f64| -> Option<Literal> {
            let s = ArrayShape {
                dtype: ElementType::F64,
                dims: l.dims().iter().map(|&d| d as i64).collect(),
                layout: l.layout().cloned(),
            };
            let v: Vec<f64> = (0..l.element_count()).map(f).collect();
            Literal::from_f64s(&s, &v).ok()
        };
        if data.contains(&k) {
            let base = *offsets.last()?;
            ops.push(Value::Array(numbered(&|i| (base + i) as f64)?));
            offsets.push(base + l.element_count());
        } else if ins.opcode == Opcode::Pad {
            ops.push(Value::Array(numbered(&|_| -1.0)?));
        } else {
            ops.push(Value::Array(l.clone()));
        }
    }
    let mut f64_ins = ins.clone();
    let Shape::Array(a) = &ins.shape else {
        return None;
    };
    f64_ins.shape = Shape::Array(ArrayShape {
        dtype: ElementType::F64,
        ..a.clone()
    });
    let refs: Vec<&Value> = ops.iter().collect();
    let v = Run::new(module).step_op(&f64_ins, &refs).ok()?;
    let of = v
        .as_array()?
        .to_f64_vec()
        .into_iter()
        .map(|x| x as i64)
        .collect();
    Some(Sources {
        data: data
            .into_iter()
            .map(|k| k.min(ins.operands.len()))
            .collect(),
        offsets,
        of,
    })
}

/// For every element of an array of `dims` (row-major), the sum of its
/// index times `per_dim`.
fn offsets(dims: &[usize], per_dim: &[usize]) -> Vec<usize> {
    let n: usize = dims.iter().product();
    let mut idx = vec![0usize; dims.len()];
    (0..n)
        .map(|_| {
            let o = idx.iter().zip(per_dim).map(|(i, s)| i * s).sum();
            next_index(&mut idx, dims);
            o
        })
        .collect()
}

/// Sets an lhs and an rhs index from a result or term index (`DotRoles`).
type SetIndex<'r> = dyn Fn(&[usize], &mut [usize], &mut [usize]) + 'r;

/// The dims of an array result.
fn result_dims(ins: &Instruction) -> Option<Vec<usize>> {
    match &ins.shape {
        Shape::Array(a) => Some(a.dims.iter().map(|&d| d as usize).collect()),
        _ => None,
    }
}

/// A dot's operand adjoints: `dA[b,i,k] = sum_j g[b,i,j] B[b,k,j]`, and
/// the same for `B`, for any batch, contracting and free dimensions.
fn dot_adjoints(
    ins: &Instruction,
    a: &Literal,
    b: &Literal,
    g: &[f64],
) -> Option<(Vec<f64>, Vec<f64>)> {
    let d = ins.attrs.dot_dims.as_ref()?;
    let (ad, bd) = (a.dims(), b.dims());
    let to_usize = |v: &[i64]| -> Vec<usize> { v.iter().map(|&x| x as usize).collect() };
    let lc = to_usize(&d.lhs_contracting);
    let con_dims: Vec<usize> = lc
        .iter()
        .map(|&l| ad.get(l).copied())
        .collect::<Option<_>>()?;
    let roles = DotRoles::new(
        [
            to_usize(&d.lhs_batch),
            lc,
            to_usize(&d.rhs_batch),
            to_usize(&d.rhs_contracting),
        ],
        ad.len(),
        bd.len(),
    );
    let (sa, sb) = (strides(ad), strides(bd));
    let flat = |i: &[usize], s: &[usize]| -> usize { i.iter().zip(s).map(|(i, s)| i * s).sum() };
    // each result element's and each contracted term's place in the operands
    let places = |dims: &[usize], set: &SetIndex| {
        let (mut oi, mut places) = (vec![0usize; dims.len()], Vec::new());
        for _ in 0..dims.iter().product::<usize>() {
            let (mut li, mut ri) = (vec![0usize; ad.len()], vec![0usize; bd.len()]);
            set(&oi, &mut li, &mut ri);
            places.push((flat(&li, &sa), flat(&ri, &sb)));
            next_index(&mut oi, dims);
        }
        places
    };
    let out = places(&result_dims(ins)?, &|o, l, r| roles.set_output(o, l, r));
    let terms = places(&con_dims, &|c, l, r| roles.set_term(c, l, r));
    if out.len() != g.len() {
        return None;
    }
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let (mut da, mut db) = (vec![0.0; av.len()], vec![0.0; bv.len()]);
    for (o, &go) in g.iter().enumerate() {
        if go == 0.0 {
            continue;
        }
        let (pa, pb) = out[o];
        for &(qa, qb) in &terms {
            let (i, j) = (pa + qa, pb + qb);
            if i < av.len() && j < bv.len() {
                da[i] += go * bv[j];
                db[j] += go * av[i];
            }
        }
    }
    Some((da, db))
}
