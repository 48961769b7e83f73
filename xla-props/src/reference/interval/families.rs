//! The interval rules of data movement, selection, control flow,
//! reductions and contractions.

use super::super::contraction::round_as;
use super::super::control::branch_index;
use super::super::indexing::scatter_targets;
use super::super::reduction::Combiner;
use super::super::OpError;
use super::bounds::*;
use super::eval::*;
use crate::hlo::{ArrayShape, ElementType, Instruction, Opcode, Shape};
use crate::literal::{Literal, Value};

impl Interval<'_, '_> {
    /// Data movement: every output element comes from one operand element
    /// (or from nowhere); the op evaluated on flat indices says which. Index
    /// operands (gather, dynamic slices: from `first_index` on) must be exact.
    pub(super) fn moved_indexed(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
        first_index: usize,
    ) -> Result<Enclosure, OpError> {
        let Some(arrays) = arrays_of(ops) else {
            return self.exact(ins, ops);
        };
        if arrays.iter().skip(first_index).any(|b| !b.is_point()) {
            return self.exact(ins, ops);
        }
        let Some(out) = ins.shape.as_array() else {
            return self.exact(ins, ops);
        };
        let mut offsets = Vec::new();
        let mut total = 1i128;
        let mut vals = Vec::new();
        for (j, b) in arrays.iter().enumerate() {
            if j >= first_index {
                vals.push(Value::Array(b.lo.clone()));
                continue;
            }
            offsets.push(total);
            let s = ArrayShape {
                dtype: ElementType::S64,
                dims: b.lo.dims().iter().map(|&d| d as i64).collect(),
                layout: b.lo.layout().cloned(),
            };
            let mut l = Literal::zeros(&s)?;
            for i in 0..l.element_count() {
                l.set_i128(i, total + i as i128);
            }
            total += l.element_count() as i128;
            vals.push(Value::Array(l));
        }
        let mut idx_ins = ins.clone();
        idx_ins.shape = Shape::Array(ArrayShape {
            dtype: ElementType::S64,
            dims: out.dims.clone(),
            layout: out.layout.clone(),
        });
        let map = match self.kernel(&idx_ins, &vals) {
            Ok(Value::Array(l)) => l,
            _ => return self.exact(ins, ops),
        };
        let mut result = Bounds::point(&Literal::zeros(out)?);
        for o in 0..map.element_count() {
            let src = map.get_i128(o);
            let Some(j) = offsets.iter().rposition(|&off| off <= src) else {
                result.unbound(o);
                continue;
            };
            let i = (src - offsets[j]) as usize;
            let b = arrays[j];
            if i >= b.len() || b.lo.dtype() != out.dtype {
                result.unbound(o);
                continue;
            }
            result.lo.set_bits(o, b.lo.get_bits(i));
            result.hi.set_bits(o, b.hi.get_bits(i));
            result.nan[o] = b.nan[i];
        }
        Ok(Enclosure::Array(result))
    }

    /// scatter: XLA applies updates that collide on one element in an
    /// implementation-defined order. Where that order cannot matter (no
    /// collision, or a plain commutative combiner: the point value) the point
    /// value stands (a float sum's other orders round differently: the
    /// first-order bound's gamma_n covers them); with an overwriting combiner a colliding element is any
    /// of the updates that land on it (their hull); with any other combiner
    /// it is unbounded.
    pub(super) fn scatter(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let exact = self.exact(ins, ops)?;
        let (Enclosure::Array(mut out), Some(a)) = (exact.clone(), arrays_of(ops)) else {
            return Ok(exact);
        };
        if a.len() != 3 || !out.is_point() || a.iter().any(|b| !b.is_point()) {
            return Ok(exact);
        }
        let (x, upd) = (&a[0].lo, &a[2].lo);
        let targets = scatter_targets(ins, x.dims(), &a[1].lo, upd.dims())?;
        let mut landing: Vec<Vec<usize>> = vec![Vec::new(); out.len()];
        for (k, t) in targets.iter().enumerate() {
            if let Some(l) = t.and_then(|t| landing.get_mut(t)) {
                l.push(k);
            }
        }
        if landing.iter().all(|l| l.len() < 2) {
            return Ok(exact);
        }
        let overwrite = match ins.attrs.to_apply {
            Some(comp) => match Combiner::of(self.module, comp, x.dtype()) {
                // the rounding of a float sum in another order is the
                // first-order bound's (gamma_n), not this enclosure's
                c @ Combiner::Plain(..) if c.commutative() => return Ok(exact),
                Combiner::Plain(..) => false,
                Combiner::Computation(_) => {
                    self.module.computations.get(comp.index()).is_some_and(|c| {
                        let params = c.parameters();
                        params.len() == 2 && c.root == params[1]
                    })
                }
            },
            None => false,
        };
        for (i, l) in landing.iter().enumerate().filter(|(_, l)| l.len() >= 2) {
            if !overwrite {
                out.unbound(i);
                continue;
            }
            let keys: Vec<Option<i128>> = l.iter().map(|&k| key(upd, k)).collect();
            let nan = keys.iter().any(Option::is_none);
            let range = keys
                .iter()
                .flatten()
                .fold(None, |r: Option<(i128, i128)>, &k| {
                    Some(r.map_or((k, k), |(a, b)| (a.min(k), b.max(k))))
                });
            out.set(i, range, nan);
        }
        Ok(Enclosure::Array(out))
    }

    pub(super) fn select(&mut self, p: &Bounds, t: &Bounds, f: &Bounds) -> Result<Bounds, OpError> {
        if t.len() != f.len() || t.lo.dtype() != f.lo.dtype() {
            return Err(OpError::Invalid("select branches differ".into()));
        }
        let mut out = t.clone();
        let scalar = p.len() == 1;
        for i in 0..t.len() {
            let k = if scalar { 0 } else { i };
            let (lo, hi) = p.range(k).unwrap_or((0, 1));
            let r = match (lo, hi) {
                (1, 1) => (t.range(i), t.nan[i]),
                (0, 0) => (f.range(i), f.nan[i]),
                _ => {
                    let r = match (t.range(i), f.range(i)) {
                        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                        (x, None) => x,
                        (None, y) => y,
                    };
                    (r, t.nan[i] || f.nan[i])
                }
            };
            out.set(i, r.0, r.1);
        }
        Ok(out)
    }

    pub(super) fn while_loop(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let (Some(cond), Some(body), Some(init)) =
            (ins.attrs.condition, ins.attrs.body, ops.first())
        else {
            return self.exact(ins, ops);
        };
        let mut state = (*init).clone();
        for _ in 0..crate::reference::DEFAULT_FUEL {
            let c = self.computation(cond, vec![state.clone()])?;
            match c {
                Enclosure::Array(b) if b.len() == 1 => match b.range(0) {
                    Some((1, 1)) => {}
                    Some((0, 0)) => return Ok(state),
                    _ => return Enclosure::unbounded(&ins.shape),
                },
                _ => return Enclosure::unbounded(&ins.shape),
            }
            state = self.computation(body, vec![state])?;
        }
        Enclosure::unbounded(&ins.shape)
    }

    pub(super) fn conditional(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let branches = &ins.attrs.branch_computations;
        let Some(Enclosure::Array(sel)) = ops.first() else {
            return self.exact(ins, ops);
        };
        let Some((lo, hi)) = sel.range(0) else {
            return Enclosure::unbounded(&ins.shape);
        };
        let pred = sel.lo.dtype().is_pred();
        let n = branches.len() as i128;
        let pick = |k: i128| branch_index(pred, k, branches.len());
        let mut taken: Vec<usize> = Vec::new();
        if hi - lo > n + 1 {
            taken = (0..branches.len()).collect();
        } else {
            for k in lo..=hi {
                let b = pick(k);
                if !taken.contains(&b) {
                    taken.push(b);
                }
            }
        }
        let mut acc: Option<Enclosure> = None;
        for b in taken {
            let (Some(&comp), Some(arg)) = (branches.get(b), ops.get(b + 1)) else {
                return Enclosure::unbounded(&ins.shape);
            };
            let v = self.computation(comp, vec![(*arg).clone()])?;
            acc = Some(match acc {
                None => v,
                Some(a) => match a.hull(&v) {
                    Some(h) => h,
                    None => return Enclosure::unbounded(&ins.shape),
                },
            });
        }
        match acc {
            Some(a) => Ok(a),
            None => Enclosure::unbounded(&ins.shape),
        }
    }

    /// reduce and reduce-window of one array with a plain add, multiply (of
    /// non-negative terms), max, min, and or or reducer: monotone in every
    /// term; the add reducer widens by the reassociation bound.
    pub(super) fn reduce(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let (Some(Enclosure::Array(x)), Some(Enclosure::Array(init)), 2) =
            (ops.first(), ops.get(1), ops.len())
        else {
            return self.exact(ins, ops);
        };
        if x.is_point() && init.is_point() && !self.allow.reassociates {
            return self.exact(ins, ops);
        }
        let Some(reducer) = ins
            .attrs
            .to_apply
            .and_then(|c| self.module.computations.get(c.index()))
        else {
            return self.exact(ins, ops);
        };
        let root = reducer.instr(reducer.root);
        let plain = root.operands.len() == 2
            && root
                .operands
                .iter()
                .all(|o| reducer.instr(*o).opcode == Opcode::Parameter);
        let combine = if plain { root.opcode } else { Opcode::Tuple };
        let nonneg = |b: &Bounds| (0..b.len()).all(|i| b.range(i).is_some_and(|(a, _)| a >= 0));
        let monotone = match combine {
            Opcode::Add | Opcode::Maximum | Opcode::Minimum | Opcode::And | Opcode::Or => true,
            Opcode::Multiply => nonneg(x) && nonneg(init),
            _ => false,
        };
        if !monotone {
            return self.exact(ins, ops);
        }
        let mut v = self.corners(ins, ops, Rule::Corners)?;
        if x.is_point() && init.is_point() {
            v = self.exact(ins, ops)?;
        }
        if combine != Opcode::Add || !self.allow.reassociates {
            return Ok(v);
        }
        let Enclosure::Array(b) = &mut v else {
            return Ok(v);
        };
        let t = b.lo.dtype();
        let Some(fmt) = t.float_format() else {
            return Ok(v);
        };
        // sum |x| per output element, from the same reduction of the magnitudes
        let mag = |l: &Bounds| -> Result<Literal, OpError> {
            let mut m = l.hi.clone();
            for i in 0..l.len() {
                let a = l.lo.get_f64(i).abs();
                let c = l.hi.get_f64(i).abs();
                let v = if a.is_nan() || c.is_nan() {
                    0.0
                } else {
                    a.max(c)
                };
                m.set_f64(i, v);
            }
            Ok(m)
        };
        let sums = match self.kernel(ins, &[Value::Array(mag(x)?), Value::Array(mag(init)?)]) {
            Ok(Value::Array(l)) => l,
            _ => return Ok(v),
        };
        let terms = reduction_terms(ins, x) as f64;
        let eps_type = fmt.epsilon();
        let eps_acc = if self.allow.accumulate_in_declared_type {
            eps_type
        } else {
            eps_type.min(f64::from(f32::EPSILON))
        };
        let floor = if self.allow.flush_outputs.contains(&t) || self.allow.flush_inputs.contains(&t)
        {
            fmt.min_normal()
        } else {
            fmt.min_subnormal()
        };
        // any order of n terms in the accumulation type is within
        // (n - 1) * u * sum|x| of the exact sum (u = eps / 2); the reference
        // sums exactly and rounds once, which the rounded ends already hold
        for i in 0..b.len() {
            let s = sums.get_f64(i) * (1.0 + 2.0 * terms * eps_type);
            let bound = terms * eps_acc / 2.0 * s + terms * floor;
            widen_abs(b, i, &fmt, bound);
        }
        Ok(v)
    }

    /// dot and convolution of floats, in midpoint-radius form computed in
    /// f64: `mid = op(ma, mb)`, `rad = op(|ma|, rb) + op(ra, |mb|) + op(ra, rb)`,
    /// then rounded outward to the result type; reassociated, widened by
    /// `n * eps * op(|a|, |b|)`.
    pub(super) fn contraction(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let (Some(Enclosure::Array(a)), Some(Enclosure::Array(b)), 2) =
            (ops.first(), ops.get(1), ops.len())
        else {
            return self.exact(ins, ops);
        };
        if let Ok(Some(alg)) = crate::hlo::DotAlgorithm::of(&ins.attrs) {
            return self.algorithm_contraction(ins, ops, (a, b), alg);
        }
        let finite = |x: &Bounds| {
            (0..x.len())
                .all(|i| !x.nan[i] && x.lo.get_f64(i).is_finite() && x.hi.get_f64(i).is_finite())
        };
        if (a.is_point() && b.is_point() && !self.allow.reassociates) || !finite(a) || !finite(b) {
            return self.exact(ins, ops);
        }
        let Some(out) = ins.shape.as_array() else {
            return self.exact(ins, ops);
        };
        let Some(fmt) = out.dtype.float_format() else {
            return self.exact(ins, ops);
        };
        let mid = |lo: f64, hi: f64| lo + (hi - lo) / 2.0;
        let rad = |lo: f64, hi: f64| (hi - lo) / 2.0;
        let amid = |lo: f64, hi: f64| mid(lo, hi).abs();
        let amax = |lo: f64, hi: f64| lo.abs().max(hi.abs());
        let mut wide_ins = ins.clone();
        wide_ins.shape = Shape::Array(ArrayShape {
            dtype: ElementType::F64,
            dims: out.dims.clone(),
            layout: out.layout.clone(),
        });
        let mut op = |x: Literal, y: Literal| -> Option<Literal> {
            match self
                .run
                .step_op(&wide_ins, &[&Value::Array(x), &Value::Array(y)])
            {
                Ok(Value::Array(l)) => Some(l),
                _ => None,
            }
        };
        // rad = |ma| rb + ra (|mb| + rb): two products (none for a point operand)
        let reassociates = self.allow.reassociates;
        let (a_point, b_point) = (a.is_point(), b.is_point());
        let amid_plus_rad = |lo: f64, hi: f64| amid(lo, hi) + rad(lo, hi);
        let parts = (|| {
            let m = op(wide(a, &mid).ok()?, wide(b, &mid).ok()?)?;
            let r1 = if b_point {
                None
            } else {
                Some(op(wide(a, &amid).ok()?, wide(b, &rad).ok()?)?)
            };
            let r2 = if a_point {
                None
            } else {
                Some(op(wide(a, &rad).ok()?, wide(b, &amid_plus_rad).ok()?)?)
            };
            let s = if reassociates || !(a_point && b_point) {
                Some(op(wide(a, &amax).ok()?, wide(b, &amax).ok()?)?)
            } else {
                None
            };
            Some((m, r1, r2, s))
        })();
        let Some((m, r1, r2, s)) = parts else {
            return self.exact(ins, ops);
        };
        let terms = contraction_terms(ins, a, b) as f64;
        let t = out.dtype;
        let eps_acc = if self.allow.contract_in_declared_type {
            fmt.epsilon()
        } else {
            fmt.epsilon().min(f64::from(f32::EPSILON))
        };
        let floor = if self.allow.flush_outputs.contains(&t) || self.allow.flush_inputs.contains(&t)
        {
            fmt.min_normal()
        } else {
            fmt.min_subnormal()
        };
        let mut result = Bounds::point(&Literal::zeros(out)?);
        let at = |l: &Option<Literal>, i: usize| l.as_ref().map_or(0.0, |l| l.get_f64(i));
        for i in 0..result.len() {
            let sum = at(&s, i);
            let mut r =
                (at(&r1, i) + at(&r2, i)) * (1.0 + 1e-14) + (terms + 4.0) * f64::EPSILON * sum;
            if reassociates {
                // products and sums of any order: within n * u * sum|a*b|
                r += terms * eps_acc / 2.0 * sum + terms * floor;
            }
            let c = m.get_f64(i);
            let (lo, hi) = (c - r, c + r);
            if !lo.is_finite() || !hi.is_finite() {
                result.unbound(i);
                continue;
            }
            let lk = round_key(lo, &fmt);
            let hk = round_key(hi, &fmt);
            result.set(i, Some((lk, hk)), false);
        }
        Ok(Enclosure::Array(result))
    }

    /// A dot algorithm: rounding each operand is monotone, so its
    /// enclosure is the rounded ends; the plain dot of those follows
    /// (several components per operand: only a point result).
    fn algorithm_contraction(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
        (a, b): (&Bounds, &Bounds),
        alg: crate::hlo::DotAlgorithm,
    ) -> Result<Enclosure, OpError> {
        if alg.components() > 1 {
            return self.exact(ins, ops);
        }
        let rounded = |x: &Bounds| -> Result<Bounds, OpError> {
            let (mut lo, mut hi) = (x.lo.clone(), x.hi.clone());
            for i in 0..x.len() {
                let own = x.lo.dtype();
                lo.set_f64(i, round_as(x.lo.get_f64(i), alg.operand_precision(), own));
                hi.set_f64(i, round_as(x.hi.get_f64(i), alg.operand_precision(), own));
            }
            Ok(Bounds {
                lo,
                hi,
                nan: x.nan.clone(),
            })
        };
        let (ra, rb) = (Enclosure::Array(rounded(a)?), Enclosure::Array(rounded(b)?));
        let mut plain = ins.clone();
        plain.attrs.other.retain(|(k, _)| k != "algorithm");
        self.contraction(&plain, &[&ra, &rb])
    }
}

/// The f64 array of `f(lo, hi)` of each element of `x`.
fn wide(x: &Bounds, f: &dyn Fn(f64, f64) -> f64) -> Result<Literal, OpError> {
    let s = ArrayShape {
        dtype: ElementType::F64,
        dims: x.lo.dims().iter().map(|&d| d as i64).collect(),
        layout: x.lo.layout().cloned(),
    };
    let mut l = Literal::zeros(&s)?;
    for i in 0..x.len() {
        l.set_f64(i, f(x.lo.get_f64(i), x.hi.get_f64(i)));
    }
    Ok(l)
}

/// Terms summed into each output element of a reduce or reduce-window.
pub(super) fn reduction_terms(ins: &Instruction, x: &Bounds) -> u64 {
    match ins.opcode {
        Opcode::ReduceWindow => {
            ins.attrs
                .window
                .as_ref()
                .map_or(1, |w| w.iter().map(|d| d.size.max(1) as u64).product())
                + 1
        }
        _ => {
            let out = ins
                .shape
                .as_array()
                .and_then(|a| a.element_count())
                .unwrap_or(1)
                .max(1);
            x.len() as u64 / out + 1
        }
    }
}

/// Products summed into each output element of a dot or convolution.
pub(super) fn contraction_terms(ins: &Instruction, a: &Bounds, b: &Bounds) -> u64 {
    match ins.opcode {
        Opcode::Dot => ins.attrs.dot_dims.as_ref().map_or(1, |d| {
            d.lhs_contracting
                .iter()
                .map(|&k| a.lo.dims().get(k as usize).copied().unwrap_or(1).max(1) as u64)
                .product()
        }),
        _ => {
            let outf = ins
                .attrs
                .conv_dims
                .as_ref()
                .and_then(|cd| b.lo.dims().get(cd.kernel_output_feature as usize).copied())
                .unwrap_or(1)
                .max(1);
            (b.len() / outf).max(1) as u64
        }
    }
}
