//! A point check: evaluates the flattened graph on concrete arguments, in f64
//! with one rounding per node to the node's type, to test each requirement
//! element by element. It covers the ops whose values requirements depend on
//! (elementwise math, shape ops, reductions); a node it cannot evaluate makes
//! its requirements "unchecked", which the caller reports.

use super::graph::{Graph, Node, Reducer};
use crate::hlo::{ComparisonDirection, ConstantData, ElementType, Module, Opcode};
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

fn eval_node(
    module: &Module,
    g: &Graph,
    n: &Node,
    args: &[Literal],
    vals: &[Option<Vec<f64>>],
) -> Option<Vec<f64>> {
    let dtype = n.dtype?;
    let count = n.element_count();
    let instr = module.comp(n.comp).instr(n.instr);
    let operand = |k: usize| -> Option<&Vec<f64>> { vals.get(*n.operands.get(k)?)?.as_ref() };
    // elementwise operands must match the result's element count (or be scalars)
    let same =
        |k: usize| -> Option<&Vec<f64>> { operand(k).filter(|v| v.len() == count || v.len() == 1) };
    let at = |v: &Vec<f64>, i: usize| -> f64 {
        if v.len() == 1 {
            v[0]
        } else {
            v[i]
        }
    };
    let unary = |f: &dyn Fn(f64) -> f64| -> Option<Vec<f64>> {
        let x = same(0)?;
        Some((0..count).map(|i| round(f(at(x, i)), dtype)).collect())
    };
    let binary = |f: &dyn Fn(f64, f64) -> f64| -> Option<Vec<f64>> {
        let (x, y) = (operand(0)?, operand(1)?);
        Some(
            (0..count)
                .map(|i| round(f(at(x, i), at(y, i)), dtype))
                .collect(),
        )
    };
    let float = dtype.is_float();
    match n.opcode {
        Opcode::Parameter => {
            let lit = args.get(n.param?)?;
            Some(lit.to_f64_vec())
        }
        Opcode::Constant => {
            let v: Vec<f64> = match instr.attrs.constant.as_ref()? {
                ConstantData::Float(v) => v.clone(),
                ConstantData::Int(v) => v.iter().map(|&x| x as f64).collect(),
                ConstantData::Pred(v) => v.iter().map(|&b| b as u8 as f64).collect(),
                _ => return None,
            };
            (v.len() == count || v.len() == 1).then(|| (0..count).map(|i| at(&v, i)).collect())
        }
        Opcode::Iota => {
            let d = usize::try_from(instr.attrs.iota_dimension?).ok()?;
            let dims = udims(n);
            Some(
                (0..count)
                    .map(|i| round(index_of(i, &dims)[d] as f64, dtype))
                    .collect(),
            )
        }
        Opcode::Reshape | Opcode::Copy => same(0).filter(|v| v.len() == count).cloned(),
        Opcode::Bitcast => {
            let o = &g.nodes[*n.operands.first()?];
            (o.dtype == Some(dtype))
                .then(|| operand(0).cloned())
                .flatten()
        }
        Opcode::Convert => {
            let x = same(0)?;
            Some(
                (0..count)
                    .map(|i| {
                        let v = at(x, i);
                        match dtype.int_range() {
                            Some((min, max)) if !float => {
                                if v.is_nan() {
                                    0.0
                                } else {
                                    v.trunc().clamp(min as f64, max as f64)
                                }
                            }
                            _ => round(v, dtype),
                        }
                    })
                    .collect(),
            )
        }
        Opcode::Broadcast => {
            let x = operand(0)?;
            let map = instr.attrs.dimensions.clone().unwrap_or_default();
            let dims = udims(n);
            let in_dims = udims(&g.nodes[n.operands[0]]);
            if map.len() != in_dims.len() {
                return None;
            }
            (0..count)
                .map(|i| {
                    let idx = index_of(i, &dims);
                    let src: Option<Vec<usize>> = map
                        .iter()
                        .map(|&d| usize::try_from(d).ok().and_then(|d| idx.get(d).copied()))
                        .collect();
                    get(x, flat_of(&src?, &in_dims))
                })
                .collect()
        }
        Opcode::Transpose => {
            let x = operand(0)?;
            let perm = instr.attrs.dimensions.clone()?;
            let dims = udims(n);
            let in_dims = udims(&g.nodes[n.operands[0]]);
            if perm.len() != in_dims.len() || perm.len() != dims.len() {
                return None;
            }
            (0..count)
                .map(|i| {
                    let idx = index_of(i, &dims);
                    let mut src = vec![0; in_dims.len()];
                    for (k, &p) in perm.iter().enumerate() {
                        *src.get_mut(usize::try_from(p).ok()?)? = idx[k];
                    }
                    get(x, flat_of(&src, &in_dims))
                })
                .collect()
        }
        Opcode::Slice => {
            let x = operand(0)?;
            let sl = instr.attrs.slice.clone()?;
            let dims = udims(n);
            let in_dims = udims(&g.nodes[n.operands[0]]);
            if sl.len() != dims.len() || in_dims.len() != dims.len() {
                return None;
            }
            (0..count)
                .map(|i| {
                    let idx = index_of(i, &dims);
                    let src: Option<Vec<usize>> = idx
                        .iter()
                        .zip(&sl)
                        .zip(&in_dims)
                        .map(|((&j, s), &d)| {
                            let k = s.start.checked_add((j as i64).checked_mul(s.stride)?)?;
                            usize::try_from(k).ok().filter(|&k| k < d)
                        })
                        .collect();
                    get(x, flat_of(&src?, &in_dims))
                })
                .collect()
        }
        Opcode::Reverse => {
            let x = operand(0)?;
            let rev = instr.attrs.dimensions.clone().unwrap_or_default();
            let dims = udims(n);
            if rev
                .iter()
                .any(|&d| usize::try_from(d).map_or(true, |d| d >= dims.len()))
            {
                return None;
            }
            (0..count)
                .map(|i| {
                    let mut idx = index_of(i, &dims);
                    for &d in &rev {
                        let d = d as usize;
                        idx[d] = dims[d] - 1 - idx[d];
                    }
                    get(x, flat_of(&idx, &dims))
                })
                .collect()
        }
        Opcode::Negate => unary(&|x| -x),
        Opcode::Abs => unary(&f64::abs),
        Opcode::Sign => unary(&|x| {
            if x == 0.0 || x.is_nan() {
                x
            } else {
                x.signum()
            }
        }),
        Opcode::Ceil if float => unary(&f64::ceil),
        Opcode::Floor if float => unary(&f64::floor),
        Opcode::RoundNearestAfz if float => unary(&f64::round),
        Opcode::RoundNearestEven if float => unary(&f64::round_ties_even),
        Opcode::Exponential if float => unary(&f64::exp),
        Opcode::ExponentialMinusOne if float => unary(&f64::exp_m1),
        Opcode::Log if float => unary(&f64::ln),
        Opcode::LogPlusOne if float => unary(&f64::ln_1p),
        Opcode::Logistic if float => unary(&|x| 1.0 / (1.0 + (-x).exp())),
        Opcode::Sine if float => unary(&f64::sin),
        Opcode::Cosine if float => unary(&f64::cos),
        Opcode::Tan if float => unary(&f64::tan),
        Opcode::Tanh if float => unary(&f64::tanh),
        Opcode::Sqrt if float => unary(&f64::sqrt),
        Opcode::Rsqrt if float => unary(&|x| 1.0 / x.sqrt()),
        Opcode::Cbrt if float => unary(&f64::cbrt),
        Opcode::Add => binary(&|a, b| a + b),
        Opcode::Subtract => binary(&|a, b| a - b),
        Opcode::Multiply => binary(&|a, b| a * b),
        Opcode::Divide if float => binary(&|a, b| a / b),
        Opcode::Remainder if float => binary(&|a, b| a % b),
        Opcode::Power if float => binary(&f64::powf),
        Opcode::Atan2 if float => binary(&f64::atan2),
        Opcode::Maximum => binary(&|a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }),
        Opcode::Minimum => binary(&|a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }),
        Opcode::Select => {
            let (p, a, b) = (same(0)?, same(1)?, same(2)?);
            Some(
                (0..count)
                    .map(|i| if at(p, i) != 0.0 { at(a, i) } else { at(b, i) })
                    .collect(),
            )
        }
        Opcode::Clamp => {
            let (lo, x, hi) = (same(0)?, same(1)?, same(2)?);
            Some(
                (0..count)
                    .map(|i| at(x, i).max(at(lo, i)).min(at(hi, i)))
                    .collect(),
            )
        }
        Opcode::Compare => {
            let dir = instr.attrs.direction?;
            let (x, y) = (same(0)?, same(1)?);
            Some(
                (0..count)
                    .map(|i| {
                        let (a, b) = (at(x, i), at(y, i));
                        let r = match dir {
                            ComparisonDirection::Eq => a == b,
                            ComparisonDirection::Ne => a != b,
                            ComparisonDirection::Lt => a < b,
                            ComparisonDirection::Le => a <= b,
                            ComparisonDirection::Gt => a > b,
                            ComparisonDirection::Ge => a >= b,
                        };
                        r as u8 as f64
                    })
                    .collect(),
            )
        }
        Opcode::Reduce => {
            let (x, init) = (operand(0)?, operand(1)?);
            let reducer = n.reducer?;
            let f: fn(f64, f64) -> f64 = match reducer {
                Reducer::Add => |a, b| a + b,
                Reducer::Mul => |a, b| a * b,
                Reducer::Max => f64::max,
                Reducer::Min => f64::min,
                Reducer::Other => return None,
            };
            let reduced = instr.attrs.dimensions.clone().unwrap_or_default();
            let in_dims = udims(&g.nodes[n.operands[0]]);
            let kept: Vec<usize> = (0..in_dims.len())
                .filter(|d| !reduced.contains(&(*d as i64)))
                .collect();
            let out_dims: Vec<usize> = kept.iter().map(|&d| in_dims[d]).collect();
            if x.len() != in_dims.iter().product::<usize>()
                || out_dims.iter().product::<usize>() != count
            {
                return None;
            }
            let mut acc = vec![*init.first()?; count];
            for (i, &v) in x.iter().enumerate() {
                let idx = index_of(i, &in_dims);
                let o: Vec<usize> = kept.iter().map(|&d| idx[d]).collect();
                let slot = acc.get_mut(flat_of(&o, &out_dims))?;
                *slot = round(f(*slot, v), dtype);
            }
            Some(acc)
        }
        _ => None,
    }
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
