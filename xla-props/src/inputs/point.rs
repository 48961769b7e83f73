//! A point check: evaluates the flattened graph on concrete arguments, in f64
//! with one rounding per node to the node's type, to test each requirement
//! element by element. It covers the ops whose values requirements depend on
//! (elementwise math, shape ops, reductions); a node it cannot evaluate makes
//! its requirements "unchecked", which the caller reports. Complex values
//! are not evaluated; the real and imaginary parts of a complex entry
//! parameter are (JAX writes most complex functions as real arithmetic on
//! them).

use super::graph::{Graph, Node, Reducer};
use crate::hlo::{ArrayShape, ConstantData, ElementType, Instruction, Module, Opcode};
use crate::literal::{round_to_type, Literal};

/// The most elements one node may have for the point check to evaluate it.
pub(crate) const MAX_POINT_ELEMENTS: usize = 1 << 22;

/// Values per node, row-major; None where the point check cannot evaluate.
pub(crate) fn evaluate(module: &Module, g: &Graph, args: &[Literal]) -> Vec<Option<Vec<f64>>> {
    let mut vals: Vec<Option<Vec<f64>>> = Vec::with_capacity(g.nodes.len());
    for n in &g.nodes {
        let count = n.element_count();
        let v = if count > MAX_POINT_ELEMENTS {
            None
        } else {
            // a malformed module (bad attributes) makes its values unknown, never a panic
            eval_node(module, g, n, args, &vals).filter(|v| v.len() == count)
        };
        vals.push(v);
    }
    vals
}

/// `x[i]`, or None when out of range.
fn get(x: &[f64], i: usize) -> Option<f64> {
    x.get(i).copied()
}

fn index_of(flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    let mut rest = flat;
    for k in (0..dims.len()).rev() {
        if dims[k] > 0 {
            idx[k] = rest % dims[k];
            rest /= dims[k];
        }
    }
    idx
}

fn flat_of(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

fn udims(n: &Node) -> Vec<usize> {
    n.dims.iter().map(|&d| d.max(0) as usize).collect()
}

fn round(x: f64, t: ElementType) -> f64 {
    if t.is_float() {
        round_to_type(x, t)
    } else if t.is_pred() {
        (x != 0.0) as u8 as f64
    } else {
        // integers wrap to the type's width
        let Some((min, max)) = t.int_range() else {
            return x;
        };
        if x.is_nan() {
            return 0.0;
        }
        let span = (max - min + 1) as f64;
        let mut v = x.trunc();
        if v < min as f64 || v > max as f64 {
            v = (v - min as f64).rem_euclid(span) + min as f64;
        }
        v
    }
}

/// One node's evaluation: its operands' values and its instruction.
struct NodeEval<'a> {
    g: &'a Graph,
    n: &'a Node,
    instr: &'a Instruction,
    vals: &'a [Option<Vec<f64>>],
    dtype: ElementType,
    count: usize,
}

/// `v[i]`, with a scalar standing for every element.
fn at(v: &[f64], i: usize) -> f64 {
    if v.len() == 1 {
        v[0]
    } else {
        v[i]
    }
}

impl NodeEval<'_> {
    fn operand(&self, k: usize) -> Option<&Vec<f64>> {
        self.vals.get(*self.n.operands.get(k)?)?.as_ref()
    }

    /// An elementwise operand: it must match the result's element count (or be a scalar).
    fn same(&self, k: usize) -> Option<&Vec<f64>> {
        self.operand(k)
            .filter(|v| v.len() == self.count || v.len() == 1)
    }

    fn operand_dims(&self, k: usize) -> Option<Vec<usize>> {
        Some(udims(self.g.nodes.get(*self.n.operands.get(k)?)?))
    }

    fn unary(&self, f: &dyn Fn(f64) -> f64) -> Option<Vec<f64>> {
        let x = self.same(0)?;
        Some(
            (0..self.count)
                .map(|i| round(f(at(x, i)), self.dtype))
                .collect(),
        )
    }

    fn binary(&self, f: &dyn Fn(f64, f64) -> f64) -> Option<Vec<f64>> {
        let (x, y) = (self.operand(0)?, self.operand(1)?);
        Some(
            (0..self.count)
                .map(|i| round(f(at(x, i), at(y, i)), self.dtype))
                .collect(),
        )
    }

    fn constant(&self) -> Option<Vec<f64>> {
        let v: Vec<f64> = match self.instr.attrs.constant.as_ref()? {
            ConstantData::Float(v) => v.clone(),
            ConstantData::Int(v) => v.iter().map(|&x| x as f64).collect(),
            ConstantData::Pred(v) => v.iter().map(|&b| b as u8 as f64).collect(),
            _ => return None,
        };
        (v.len() == self.count || v.len() == 1)
            .then(|| (0..self.count).map(|i| at(&v, i)).collect())
    }

    fn iota(&self) -> Option<Vec<f64>> {
        let d = usize::try_from(self.instr.attrs.iota_dimension?).ok()?;
        let dims = udims(self.n);
        Some(
            (0..self.count)
                .map(|i| round(index_of(i, &dims)[d] as f64, self.dtype))
                .collect(),
        )
    }

    fn bitcast(&self) -> Option<Vec<f64>> {
        let o = self.g.nodes.get(*self.n.operands.first()?)?;
        (o.dtype == Some(self.dtype))
            .then(|| self.operand(0).cloned())
            .flatten()
    }

    /// An element-for-element bitcast-convert (the two types equally wide):
    /// each operand value's bit pattern read as the result's type, so that an
    /// integer drawn into a float's NaN or infinity patterns is seen (a
    /// width-changing one reshapes its elements: not evaluated).
    fn bitcast_convert(&self) -> Option<Vec<f64>> {
        let from = self.g.nodes.get(*self.n.operands.first()?)?.dtype?;
        if from.is_complex() || from.bit_width() != self.dtype.bit_width() {
            return None;
        }
        let x = self.operand(0).filter(|v| v.len() == self.count)?;
        let count = i64::try_from(self.count).ok()?;
        let bits = Literal::from_f64s(&ArrayShape::new(from, [count]), x)
            .ok()?
            .to_bits_vec();
        Some(
            Literal::from_bits(&ArrayShape::new(self.dtype, [count]), &bits)
                .ok()?
                .to_f64_vec(),
        )
    }

    fn convert(&self) -> Option<Vec<f64>> {
        let x = self.same(0)?;
        let to_int = self.dtype.int_range().filter(|_| !self.dtype.is_float());
        Some(
            (0..self.count)
                .map(|i| {
                    let v = at(x, i);
                    match to_int {
                        Some(_) if v.is_nan() => 0.0,
                        Some((min, max)) => v.trunc().clamp(min as f64, max as f64),
                        None => round(v, self.dtype),
                    }
                })
                .collect(),
        )
    }

    /// A shape op: each output element copies the operand element at the
    /// index `source` maps its index to (None: not evaluable).
    fn gather_from(&self, source: impl Fn(&[usize]) -> Option<Vec<usize>>) -> Option<Vec<f64>> {
        let x = self.operand(0)?;
        let dims = udims(self.n);
        let in_dims = self.operand_dims(0)?;
        (0..self.count)
            .map(|i| get(x, flat_of(&source(&index_of(i, &dims))?, &in_dims)))
            .collect()
    }

    fn broadcast(&self) -> Option<Vec<f64>> {
        let map = self.instr.attrs.dimensions.clone().unwrap_or_default();
        if map.len() != self.operand_dims(0)?.len() {
            return None;
        }
        self.gather_from(|idx| {
            map.iter()
                .map(|&d| usize::try_from(d).ok().and_then(|d| idx.get(d).copied()))
                .collect()
        })
    }

    fn transpose(&self) -> Option<Vec<f64>> {
        let perm = self.instr.attrs.dimensions.clone()?;
        let rank = self.operand_dims(0)?.len();
        if perm.len() != rank || perm.len() != self.n.dims.len() {
            return None;
        }
        self.gather_from(|idx| {
            let mut src = vec![0; rank];
            for (k, &p) in perm.iter().enumerate() {
                *src.get_mut(usize::try_from(p).ok()?)? = idx[k];
            }
            Some(src)
        })
    }

    fn slice(&self) -> Option<Vec<f64>> {
        let sl = self.instr.attrs.slice.clone()?;
        let in_dims = self.operand_dims(0)?;
        if sl.len() != self.n.dims.len() || in_dims.len() != self.n.dims.len() {
            return None;
        }
        self.gather_from(|idx| {
            idx.iter()
                .zip(&sl)
                .zip(&in_dims)
                .map(|((&j, s), &d)| {
                    let k = s.start.checked_add((j as i64).checked_mul(s.stride)?)?;
                    usize::try_from(k).ok().filter(|&k| k < d)
                })
                .collect()
        })
    }

    /// concatenate: each output element from the operand whose span along
    /// the dimension holds it.
    fn concatenate(&self) -> Option<Vec<f64>> {
        let d = usize::try_from(*self.instr.attrs.dimensions.as_ref()?.first()?).ok()?;
        let dims = udims(self.n);
        let parts: Vec<(&Vec<f64>, Vec<usize>)> = (0..self.n.operands.len())
            .map(|k| Some((self.operand(k)?, self.operand_dims(k)?)))
            .collect::<Option<_>>()?;
        if parts
            .iter()
            .any(|(v, pd)| pd.len() != dims.len() || v.len() != pd.iter().product::<usize>())
        {
            return None;
        }
        (0..self.count)
            .map(|i| {
                let mut idx = index_of(i, &dims);
                for (v, pd) in &parts {
                    if idx[d] < pd[d] {
                        return get(v, flat_of(&idx, pd));
                    }
                    idx[d] -= pd[d];
                }
                None
            })
            .collect()
    }

    fn reverse(&self) -> Option<Vec<f64>> {
        let rev = self.instr.attrs.dimensions.clone().unwrap_or_default();
        let dims = udims(self.n);
        if rev
            .iter()
            .any(|&d| usize::try_from(d).map_or(true, |d| d >= dims.len()))
        {
            return None;
        }
        self.gather_from(|idx| {
            let mut idx = idx.to_vec();
            for &d in &rev {
                let d = d as usize;
                idx[d] = dims[d] - 1 - idx[d];
            }
            Some(idx)
        })
    }

    fn select(&self) -> Option<Vec<f64>> {
        let (p, a, b) = (self.same(0)?, self.same(1)?, self.same(2)?);
        Some(
            (0..self.count)
                .map(|i| if at(p, i) != 0.0 { at(a, i) } else { at(b, i) })
                .collect(),
        )
    }

    fn clamp(&self) -> Option<Vec<f64>> {
        let (lo, x, hi) = (self.same(0)?, self.same(1)?, self.same(2)?);
        Some(
            (0..self.count)
                .map(|i| at(x, i).max(at(lo, i)).min(at(hi, i)))
                .collect(),
        )
    }

    fn compare(&self) -> Option<Vec<f64>> {
        let dir = self.instr.attrs.direction?;
        let (x, y) = (self.same(0)?, self.same(1)?);
        Some(
            (0..self.count)
                .map(|i| {
                    let (a, b) = (at(x, i), at(y, i));
                    let r = dir.holds(a, b);
                    r as u8 as f64
                })
                .collect(),
        )
    }

    fn reduce(&self) -> Option<Vec<f64>> {
        let (x, init) = (self.operand(0)?, self.operand(1)?);
        let f: fn(f64, f64) -> f64 = match self.n.reducer? {
            Reducer::Add => |a, b| a + b,
            Reducer::Mul => |a, b| a * b,
            Reducer::Max => f64::max,
            Reducer::Min => f64::min,
            Reducer::Other => return None,
        };
        let reduced = self.instr.attrs.dimensions.clone().unwrap_or_default();
        let in_dims = self.operand_dims(0)?;
        let kept: Vec<usize> = (0..in_dims.len())
            .filter(|d| !reduced.contains(&(*d as i64)))
            .collect();
        let out_dims: Vec<usize> = kept.iter().map(|&d| in_dims[d]).collect();
        if x.len() != in_dims.iter().product::<usize>()
            || out_dims.iter().product::<usize>() != self.count
        {
            return None;
        }
        let mut acc = vec![*init.first()?; self.count];
        for (i, &v) in x.iter().enumerate() {
            let idx = index_of(i, &in_dims);
            let o: Vec<usize> = kept.iter().map(|&d| idx[d]).collect();
            let slot = acc.get_mut(flat_of(&o, &out_dims))?;
            *slot = round(f(*slot, v), self.dtype);
        }
        Some(acc)
    }
}

/// NaN-propagating max/min (XLA's semantics).
fn nan_or(a: f64, b: f64, f: fn(f64, f64) -> f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        f(a, b)
    }
}

fn eval_node(
    module: &Module,
    g: &Graph,
    n: &Node,
    args: &[Literal],
    vals: &[Option<Vec<f64>>],
) -> Option<Vec<f64>> {
    let e = NodeEval {
        g,
        n,
        instr: module.comp(n.comp).instr(n.instr),
        vals,
        dtype: n.dtype.filter(|t| !t.is_complex())?,
        count: n.element_count(),
    };
    let float = e.dtype.is_float();
    match n.opcode {
        Opcode::Parameter => Some(args.get(n.param?)?.to_f64_vec()),
        Opcode::Constant => e.constant(),
        Opcode::Iota => e.iota(),
        Opcode::Reshape | Opcode::Copy => e.same(0).filter(|v| v.len() == e.count).cloned(),
        Opcode::Bitcast => e.bitcast(),
        Opcode::Convert => e.convert(),
        Opcode::BitcastConvert => e.bitcast_convert(),
        Opcode::Broadcast => e.broadcast(),
        Opcode::Transpose => e.transpose(),
        Opcode::Slice => e.slice(),
        Opcode::Concatenate => e.concatenate(),
        Opcode::Reverse => e.reverse(),
        Opcode::Negate => e.unary(&|x| -x),
        Opcode::Abs => e.unary(&f64::abs),
        Opcode::Sign => e.unary(&|x| {
            if x == 0.0 || x.is_nan() {
                x
            } else {
                x.signum()
            }
        }),
        Opcode::Ceil if float => e.unary(&f64::ceil),
        Opcode::Floor if float => e.unary(&f64::floor),
        Opcode::RoundNearestAfz if float => e.unary(&f64::round),
        Opcode::RoundNearestEven if float => e.unary(&f64::round_ties_even),
        Opcode::Exponential if float => e.unary(&f64::exp),
        Opcode::ExponentialMinusOne if float => e.unary(&f64::exp_m1),
        Opcode::Log if float => e.unary(&f64::ln),
        Opcode::LogPlusOne if float => e.unary(&f64::ln_1p),
        Opcode::Logistic if float => e.unary(&|x| 1.0 / (1.0 + (-x).exp())),
        Opcode::Sine if float => e.unary(&f64::sin),
        Opcode::Cosine if float => e.unary(&f64::cos),
        Opcode::Tan if float => e.unary(&f64::tan),
        Opcode::Tanh if float => e.unary(&f64::tanh),
        Opcode::Sqrt if float => e.unary(&f64::sqrt),
        Opcode::Rsqrt if float => e.unary(&|x| 1.0 / x.sqrt()),
        Opcode::Cbrt if float => e.unary(&f64::cbrt),
        Opcode::Add => e.binary(&|a, b| a + b),
        Opcode::Subtract => e.binary(&|a, b| a - b),
        Opcode::Multiply => e.binary(&|a, b| a * b),
        Opcode::Divide if float => e.binary(&|a, b| a / b),
        Opcode::Remainder if float => e.binary(&|a, b| a % b),
        Opcode::Power if float => e.binary(&f64::powf),
        Opcode::Atan2 if float => e.binary(&f64::atan2),
        Opcode::Maximum => e.binary(&|a, b| nan_or(a, b, f64::max)),
        Opcode::Minimum => e.binary(&|a, b| nan_or(a, b, f64::min)),
        Opcode::Select => e.select(),
        Opcode::Clamp => e.clamp(),
        Opcode::Compare => e.compare(),
        Opcode::Reduce => e.reduce(),
        Opcode::Real | Opcode::Imag => part(g, n, args, vals, n.opcode == Opcode::Real),
        _ => None,
    }
}

/// `real(x)` or `imag(x)`: of a complex entry parameter, its parts; of a
/// real value, the value or 0. Other complex values are not evaluated.
fn part(
    g: &Graph,
    n: &Node,
    args: &[Literal],
    vals: &[Option<Vec<f64>>],
    real: bool,
) -> Option<Vec<f64>> {
    let dtype = n.dtype?;
    let x = g.nodes.get(*n.operands.first()?)?;
    let count = n.element_count();
    if !x.dtype?.is_complex() {
        let v = vals.get(*n.operands.first()?)?.as_ref()?;
        return Some(if real { v.clone() } else { vec![0.0; v.len()] });
    }
    if x.opcode != Opcode::Parameter {
        return None;
    }
    let lit = args.get(x.param?)?;
    if lit.element_count() != count || !lit.dtype().is_complex() {
        return None;
    }
    Some(
        (0..count)
            .map(|i| {
                let (re, im) = lit.get_complex(i);
                round(if real { re } else { im }, dtype)
            })
            .collect(),
    )
}

/// Which elements of each node reach the output: a select's untaken branch
/// does not, elementwise ops pass liveness element by element, and any other
/// op makes all of an operand live when one of its own elements is. A
/// requirement holds only on live elements (XLA evaluates both branches of a
/// select; a NaN in the one not taken is discarded). An empty mask means
/// every element is live (too large to track).
pub(crate) fn live_elements(g: &Graph, vals: &[Option<Vec<f64>>]) -> Vec<Vec<bool>> {
    let mut live: Vec<Vec<bool>> = g
        .nodes
        .iter()
        .map(|n| {
            let c = n.element_count();
            if c > MAX_POINT_ELEMENTS {
                Vec::new()
            } else {
                vec![false; c]
            }
        })
        .collect();
    if let Some(r) = live.get_mut(g.root) {
        r.iter_mut().for_each(|b| *b = true);
    }
    fn mark_all(m: &mut [bool]) {
        m.iter_mut().for_each(|b| *b = true);
    }
    for id in (0..g.nodes.len()).rev() {
        let mine = std::mem::take(&mut live[id]);
        let all = mine.is_empty();
        if !all && !mine.iter().any(|&b| b) {
            live[id] = mine;
            continue;
        }
        let n = &g.nodes[id];
        let pred = (n.opcode == Opcode::Select)
            .then(|| n.operands.first().and_then(|&p| vals.get(p)?.as_ref()))
            .flatten();
        for (k, &o) in n.operands.iter().enumerate() {
            if o == id {
                continue;
            }
            let elementwise = n.opcode.is_elementwise() && !all && live[o].len() == mine.len();
            if !elementwise {
                mark_all(&mut live[o]);
                continue;
            }
            for (i, &l) in mine.iter().enumerate() {
                if !l {
                    continue;
                }
                let taken = match (pred, k) {
                    (Some(p), 1 | 2) => {
                        let v = if p.len() == 1 {
                            p[0]
                        } else {
                            p.get(i).copied().unwrap_or(1.0)
                        };
                        (v != 0.0) == (k == 1)
                    }
                    _ => true,
                };
                if taken {
                    live[o][i] = true;
                }
            }
        }
        live[id] = mine;
    }
    live
}
