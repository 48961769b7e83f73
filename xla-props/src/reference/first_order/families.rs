//! The radii of data movement, reductions, contractions, sorts and
//! scatters: each computed by the op itself, run in f64 on the radii and
//! magnitudes (the reducer replaced by an f64 one), so that every layout,
//! window, padding and dimension number means what it means for values.

use super::super::indexing::scatter_targets;
use super::super::reduction::select_and_scatter_windows;
use super::super::OpError;
use super::dual::f64_literal;
use super::eval::{debug_enabled, AuxReducer, Radii};
use super::moving::moving_updates;
use super::rules::{gamma, unit_roundoff};
use crate::hlo::{CompId, Instruction, Opcode};
use crate::literal::Literal;

/// How a reduction or scatter combines (its computation's root over its
/// two parameters).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Combiner {
    Add,
    Max,
    Min,
    Mul,
    /// `and` or `or` of preds, with the value that decides it alone (its
    /// absorbing element: true for `or`, false for `and`).
    Logical(bool),
    /// Returns the update (a scatter that assigns).
    Assign,
    Other,
}

/// A magnitude this large came from an unbounded radius (entered as
/// `f64::MAX`): the result it feeds is unbounded too.
const UNBOUNDED: f64 = 1e300;

impl Radii<'_, '_> {
    pub(super) fn family(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        use Opcode as O;
        let unbounded = vec![f64::INFINITY; v.element_count()];
        let r = match ins.opcode {
            op if op.copies_elements() => self.moved(ins, a, usize::MAX),
            O::DynamicSlice | O::Gather => self.moved(ins, a, 1),
            O::DynamicUpdateSlice => self.moved(ins, a, 2),
            O::Reduce | O::ReduceWindow if a.len() == 2 => self.reduction(ins, a, v),
            O::Dot | O::Convolution if a.len() == 2 => self.contraction(ins, a, v),
            O::Sort if a.len() == 1 => Ok(sorted(ins, a[0].1.as_slice(), v)),
            O::Scatter if a.len() == 3 => self.scatter(ins, a, v),
            O::SelectAndScatter if a.len() == 3 => self.select_and_scatter(ins, a, v),
            O::TriangularSolve if a.len() == 2 => {
                // each solved element may be rounded to the type before the
                // next uses it (the interpreter's narrow floats): the type's own u
                let u = Self::u_of(v, true);
                super::super::linalg::solve_radii(a[0].0, &a[0].1, &a[1].1, v, &ins.attrs, u)
                    .map_err(OpError::Invalid)
            }
            _ => Ok(unbounded.clone()),
        };
        // an op the f64 run cannot express bounds nothing
        if let (Err(e), true) = (&r, debug_enabled()) {
            eprintln!("first-order: {} unbounded: {e:?}", ins.name);
        }
        Ok(r.unwrap_or(unbounded))
    }

    /// Data movement: the op run on the radii (index operands, from
    /// `first_index` on, must be exact: a moved index moves everything).
    fn moved(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        first_index: usize,
    ) -> Result<Vec<f64>, OpError> {
        let mut ops = Vec::with_capacity(a.len());
        for (k, (l, r)) in a.iter().enumerate() {
            if k >= first_index {
                if r.iter().any(|&x| x != 0.0) {
                    return Err(OpError::Invalid("an inexact index".into()));
                }
                ops.push((*l).clone());
            } else {
                ops.push(f64_literal(l, r)?);
            }
        }
        Ok(self.f64_op(ins, &ops, None)?.to_f64_vec())
    }

    /// The combiner of a computation that ends in its op (a rounding
    /// round trip after it is [`Self::rounded_combiner`]'s, for reductions).
    fn combiner(&self, c: Option<CompId>) -> Combiner {
        match self.rounded_combiner(c) {
            (c, 0.0) => c,
            _ => Combiner::Other,
        }
    }

    /// The combiner under any converts that end its computation (XLA's
    /// bf16 normalization writes a reducer as `f32(bf16(max(a, b)))`), and
    /// the unit roundoff of the narrowest float type they round through (0
    /// when none narrows).
    fn rounded_combiner(&self, c: Option<CompId>) -> (Combiner, f64) {
        let Some(comp) = c.and_then(|c| self.module.computations.get(c.index())) else {
            return (Combiner::Other, 0.0);
        };
        let mut root = comp.instr(comp.root);
        let mut u = 0.0f64;
        while root.opcode == Opcode::Convert && root.operands.len() == 1 {
            let Some(f) = root.shape.as_array().and_then(|a| a.dtype.float_format()) else {
                return (Combiner::Other, 0.0);
            };
            u = u.max(unit_roundoff(&f));
            root = comp.instr(root.operands[0]);
        }
        (self.combiner_of(comp, root), u)
    }

    fn combiner_of(&self, comp: &crate::hlo::Computation, root: &Instruction) -> Combiner {
        let param = |k: usize| {
            root.operands
                .get(k)
                .is_some_and(|o| comp.instr(*o).opcode == Opcode::Parameter)
        };
        if root.opcode == Opcode::Parameter && root.attrs.parameter_number == Some(1) {
            return Combiner::Assign;
        }
        if root.operands.len() != 2 || !param(0) || !param(1) {
            return Combiner::Other;
        }
        match root.opcode {
            Opcode::Add => Combiner::Add,
            Opcode::Maximum => Combiner::Max,
            Opcode::Minimum => Combiner::Min,
            Opcode::Multiply => Combiner::Mul,
            Opcode::And => Combiner::Logical(false),
            Opcode::Or => Combiner::Logical(true),
            _ => Combiner::Other,
        }
    }

    /// The unit roundoff a sum into `v`'s type accumulates in (0 for
    /// integers: they are exact): a narrow float accumulates in f32 unless
    /// the backend declares accumulation in the declared type
    /// (`in_declared`), where its own roundoff holds every partial sum.
    fn u_of(v: &Literal, in_declared: bool) -> f64 {
        let Some(f) = v.dtype().float_format() else {
            return 0.0;
        };
        let own = unit_roundoff(&f);
        if in_declared {
            own
        } else {
            own.min(f64::from(f32::EPSILON) / 2.0)
        }
    }

    /// reduce and reduce-window of one array: an add carries the summed
    /// radii plus `gamma_n * sum |x|` for `n` terms (any order, any
    /// accumulation type at least as wide as the result's); max, min and
    /// logical reducers carry the largest radius; a product
    /// `prod(|x| + r) - prod |x|` plus `gamma_n * prod(|x| + r)`.
    fn reduction(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let ((x, rx), (init, ri)) = ((a[0].0, &a[0].1), (a[1].0, &a[1].1));
        let n = v.element_count();
        let exact = rx.iter().chain(ri.iter()).all(|&q| q == 0.0);
        let lit = |l: &Literal, f: &dyn Fn(usize) -> f64| -> Result<Literal, OpError> {
            let vals: Vec<f64> = (0..l.element_count()).map(f).collect();
            f64_literal(l, &vals)
        };
        let (combine, narrow) = self.rounded_combiner(ins.attrs.to_apply);
        let ri0 = ri.first().copied().unwrap_or(0.0);
        match combine {
            Combiner::Max | Combiner::Min | Combiner::Logical(_) => {
                self.extremum_reduction(ins, a, v, combine, narrow)
            }
            Combiner::Add => {
                let zero = lit(init, &|_| 0.0)?;
                let carried = if exact {
                    vec![0.0; n]
                } else {
                    self.f64_op(
                        ins,
                        &[lit(x, &|i| rx[i])?, zero.clone()],
                        Some(AuxReducer::Add),
                    )?
                    .to_f64_vec()
                };
                // a round trip in the reducer rounds every partial sum
                let u = Self::u_of(v, self.allow.accumulate_in_declared_type).max(narrow);
                if u == 0.0 {
                    return Ok(carried.iter().map(|c| c + ri0).collect());
                }
                let ones = self.f64_op(
                    ins,
                    &[lit(x, &|_| 1.0)?, zero.clone()],
                    Some(AuxReducer::Add),
                )?;
                let mag = self.f64_op(
                    ins,
                    &[
                        lit(x, &|i| x.get_f64(i).abs() + rx[i])?,
                        lit(init, &|_| init.get_f64(0).abs() + ri0)?,
                    ],
                    Some(AuxReducer::Add),
                )?;
                Ok((0..n)
                    .map(|i| {
                        let terms = ones.get_f64(i) + 1.0;
                        carried[i] + ri0 + gamma(terms, u) * mag.get_f64(i)
                    })
                    .collect())
            }
            Combiner::Mul => {
                // a round trip in the reducer rounds every partial product
                let u = Self::u_of(v, self.allow.accumulate_in_declared_type).max(narrow);
                let outer = self.f64_op(
                    ins,
                    &[
                        lit(x, &|i| x.get_f64(i).abs() + rx[i])?,
                        lit(init, &|_| init.get_f64(0).abs() + ri0)?,
                    ],
                    Some(AuxReducer::Mul),
                )?;
                let inner = self.f64_op(
                    ins,
                    &[
                        lit(x, &|i| x.get_f64(i).abs())?,
                        lit(init, &|_| init.get_f64(0).abs())?,
                    ],
                    Some(AuxReducer::Mul),
                )?;
                let zero = lit(init, &|_| 0.0)?;
                let ones = self.f64_op(ins, &[lit(x, &|_| 1.0)?, zero], Some(AuxReducer::Add))?;
                Ok((0..n)
                    .map(|i| {
                        let (o, p) = (outer.get_f64(i), inner.get_f64(i));
                        (o - p).max(0.0) * (1.0 + 4.0 * f64::EPSILON)
                            + gamma(ones.get_f64(i) + 1.0, u) * o
                    })
                    .collect())
            }
            Combiner::Assign | Combiner::Other => {
                if exact && ins.attrs.to_apply.is_some_and(|c| self.selects_only(c)) {
                    Ok(vec![0.0; n])
                } else {
                    Err(OpError::Invalid("a reducer with no radius rule".into()))
                }
            }
        }
    }

    /// A max, min or logical reduction: the radius of the extremum of the
    /// group (a logical reduction decided by a certain absorbing element
    /// has none), widened where the reducer rounds through a narrower type.
    fn extremum_reduction(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
        combine: Combiner,
        narrow: f64,
    ) -> Result<Vec<f64>, OpError> {
        let ((x, rx), (init, ri)) = ((a[0].0, &a[0].1), (a[1].0, &a[1].1));
        let n = v.element_count();
        let exact = rx.iter().chain(ri.iter()).all(|&q| q == 0.0);
        let lit = |l: &Literal, f: &dyn Fn(usize) -> f64| -> Result<Literal, OpError> {
            let vals: Vec<f64> = (0..l.element_count()).map(f).collect();
            f64_literal(l, &vals)
        };
        let ri0 = ri.first().copied().unwrap_or(0.0);
        if exact {
            return Ok(vec![0.0; n]);
        }
        let mut r = match combine {
            Combiner::Max | Combiner::Min => {
                self.extremum_interval(ins, a, v, combine == Combiner::Min)?
            }
            _ => self.f64_op(
                ins,
                &[lit(x, &|i| rx[i])?, lit(init, &|_| ri0)?],
                Some(AuxReducer::Max),
            )?,
        };
        if let Combiner::Logical(absorbing) = combine {
            // an element certain to be the absorbing value (a certain
            // true under `or`) decides its group whatever the others do
            let certain = |l: &Literal, i: usize, q: f64| {
                f64::from(u8::from(q == 0.0 && (l.get_f64(i) != 0.0) == absorbing))
            };
            let decided = self.f64_op(
                ins,
                &[
                    lit(x, &|i| certain(x, i, rx[i]))?,
                    lit(init, &|_| certain(init, 0, ri0))?,
                ],
                Some(AuxReducer::Max),
            )?;
            for i in (0..n).filter(|&i| decided.get_f64(i) > 0.0) {
                r.set_f64(i, 0.0);
            }
        }
        // a round trip through a narrower type after the extremum:
        // a moved extremum may round one step of that type apart
        Ok((0..n)
            .map(|i| {
                let q = r.get_f64(i);
                if narrow > 0.0 && q > 0.0 {
                    q + 2.0 * narrow * (v.get_f64(i).abs() + q)
                } else {
                    q
                }
            })
            .collect())
    }

    /// A max (min) reduction's exact image of its terms' intervals: the
    /// extremum lies in `[max(x - r), max(x + r)]` (for min, of the
    /// negated terms), so an element far below the others (a masked logit
    /// at -1e30, whatever its radius) cannot move it; the radius is that
    /// interval's distance from the reference's extremum.
    fn extremum_interval(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
        min: bool,
    ) -> Result<Literal, OpError> {
        let ((x, rx), (init, ri)) = ((a[0].0, &a[0].1), (a[1].0, &a[1].1));
        let ri0 = ri.first().copied().unwrap_or(0.0);
        let sign = if min { -1.0 } else { 1.0 };
        // one end of an element's interval, negated for min; an unbounded
        // radius at an infinite value spans everything
        let end = |value: f64, radius: f64, up: bool| -> f64 {
            let e = if up {
                sign * value + radius
            } else {
                sign * value - radius
            };
            match (e.is_nan(), up) {
                (false, _) => e,
                (true, true) => f64::INFINITY,
                (true, false) => f64::NEG_INFINITY,
            }
        };
        let mut bound = |up: bool| -> Result<Literal, OpError> {
            let xs: Vec<f64> = (0..x.element_count())
                .map(|i| end(x.get_f64(i), rx[i], up))
                .collect();
            let is: Vec<f64> = (0..init.element_count())
                .map(|_| end(init.get_f64(0), ri0, up))
                .collect();
            self.f64_op(
                ins,
                &[f64_literal(x, &xs)?, f64_literal(init, &is)?],
                Some(AuxReducer::Max),
            )
        };
        let (lo, hi) = (bound(false)?, bound(true)?);
        let radii: Vec<f64> = (0..v.element_count())
            .map(|i| {
                let (m, l, h) = (sign * v.get_f64(i), lo.get_f64(i), hi.get_f64(i));
                if l == m && h == m {
                    return 0.0;
                }
                let d = (h - m).max(m - l);
                if d.is_nan() {
                    f64::INFINITY
                } else {
                    d
                }
            })
            .collect();
        f64_literal(v, &radii)
    }

    /// dot and convolution: `op(|a|, rb) + op(ra, |b|) + op(ra, rb)`
    /// carried, plus `gamma_n * op(|a|, |b|)` with `n` the terms per output
    /// element (`op(1, 1)`); a dot algorithm that rounds its operands to a
    /// narrower type adds that type's rounding of both.
    fn contraction(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let ((x, rx), (y, ry)) = ((a[0].0, &a[0].1), (a[1].0, &a[1].1));
        let n = v.element_count();
        // an unbounded radius enters as the largest finite value: times an
        // exact zero of the other operand (a mask) it contributes nothing,
        // where `inf * 0` would poison the whole sum with NaN
        let abs = |l: &Literal, r: &[f64]| -> Result<Literal, OpError> {
            let vals: Vec<f64> = (0..l.element_count())
                .map(|i| (l.get_f64(i).abs() + r[i]).min(f64::MAX))
                .collect();
            f64_literal(l, &vals)
        };
        let unbounded = |q: f64| q.is_nan() || q >= UNBOUNDED;
        let of = |l: &Literal, r: &[f64]| f64_literal(l, r);
        let zx = vec![0.0; x.element_count()];
        let zy = vec![0.0; y.element_count()];
        let mut r = vec![0.0; n];
        let exact_x = rx.iter().all(|&q| q == 0.0);
        let exact_y = ry.iter().all(|&q| q == 0.0);
        // (|x| + rx)(|y| + ry) - |x||y| = |x| ry + rx |y| + rx ry
        let mag_hi = self.f64_op(ins, &[abs(x, rx)?, abs(y, ry)?], None)?;
        let mag = if exact_x && exact_y {
            mag_hi.clone()
        } else {
            let m = self.f64_op(ins, &[abs(x, &zx)?, abs(y, &zy)?], None)?;
            for (i, q) in r.iter_mut().enumerate() {
                let hi = mag_hi.get_f64(i);
                *q = if unbounded(hi) {
                    f64::INFINITY
                } else {
                    (hi - m.get_f64(i)).max(0.0) * (1.0 + 4.0 * f64::EPSILON)
                };
            }
            m
        };
        let u = Self::u_of(v, self.allow.contract_in_declared_type);
        if u == 0.0 {
            return Ok(r);
        }
        let ones_x = of(x, &vec![1.0; x.element_count()])?;
        let ones_y = of(y, &vec![1.0; y.element_count()])?;
        let terms = self.f64_op(ins, &[ones_x, ones_y], None)?;
        let narrowed = algorithm_roundoff(ins);
        for (i, q) in r.iter_mut().enumerate() {
            let m = mag_hi.get_f64(i).max(mag.get_f64(i));
            *q += if unbounded(m) {
                f64::INFINITY
            } else {
                gamma(terms.get_f64(i), u) * m + narrowed * m
            };
        }
        Ok(r)
    }

    /// scatter of one array: the update's radii scattered the way values
    /// are (added, assigned, maxed), the sums' rounding added.
    fn scatter(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let ((x, rx), (idx, ridx), (upd, ru)) =
            ((a[0].0, &a[0].1), (a[1].0, &a[1].1), (a[2].0, &a[2].1));
        let n = v.element_count();
        // updates that may land elsewhere (inexact indices): only a sum is followed
        let moves = if ridx.iter().any(|&q| q != 0.0) {
            if self.rounded_combiner(ins.attrs.to_apply).0 != Combiner::Add {
                return Err(OpError::Invalid("inexact scatter indices".into()));
            }
            Some(moving_updates(ins, x.dims(), idx, ridx, upd, ru)?)
        } else {
            None
        };
        let lit = |l: &Literal, f: &dyn Fn(usize) -> f64| -> Result<Literal, OpError> {
            let vals: Vec<f64> = (0..l.element_count()).map(f).collect();
            f64_literal(l, &vals)
        };
        let exact = moves.is_none() && rx.iter().chain(ru.iter()).all(|&q| q == 0.0);
        // a round trip after the combiner (bf16 normalization) rounds every
        // partial sum to its type: only an add's rule takes that
        let (combine, narrow) = self.rounded_combiner(ins.attrs.to_apply);
        let reducer = match combine {
            Combiner::Add => AuxReducer::Add,
            Combiner::Assign if narrow == 0.0 => AuxReducer::Assign,
            Combiner::Max | Combiner::Min | Combiner::Logical(_) if narrow == 0.0 => {
                AuxReducer::Max
            }
            _ => {
                return Err(OpError::Invalid(
                    "a scatter combiner with no radius rule".into(),
                ))
            }
        };
        let carried = if exact {
            vec![0.0; n]
        } else {
            self.f64_op(
                ins,
                &[lit(x, &|i| rx[i])?, idx.clone(), lit(upd, &|i| ru[i])?],
                Some(reducer),
            )?
            .to_f64_vec()
        };
        if reducer == AuxReducer::Assign {
            // colliding updates land in an implementation-defined order: the
            // element is any of them
            let targets = scatter_targets(ins, x.dims(), idx, upd.dims())?;
            let mut carried = carried;
            let mut hits = vec![0u32; n];
            for t in targets.iter().flatten() {
                if let Some(h) = hits.get_mut(*t) {
                    *h += 1;
                }
            }
            for (k, t) in targets.iter().enumerate() {
                if let Some(&t) = t.as_ref().filter(|&&t| hits.get(t) > Some(&1)) {
                    let d = (upd.get_f64(k) - v.get_f64(t)).abs() + ru[k];
                    carried[t] = carried[t].max(if d.is_nan() { f64::INFINITY } else { d });
                }
            }
            return Ok(carried);
        }
        let u = Self::u_of(v, self.allow.accumulate_in_declared_type).max(narrow);
        if reducer != AuxReducer::Add || (u == 0.0 && moves.is_none()) {
            return Ok(carried);
        }
        let ones = self.f64_op(
            ins,
            &[lit(x, &|_| 1.0)?, idx.clone(), lit(upd, &|_| 1.0)?],
            Some(AuxReducer::Add),
        )?;
        let mag = self.f64_op(
            ins,
            &[
                lit(x, &|i| x.get_f64(i).abs() + rx[i])?,
                idx.clone(),
                lit(upd, &|i| upd.get_f64(i).abs() + ru[i])?,
            ],
            Some(AuxReducer::Add),
        )?;
        let (extra, more) = match &moves {
            Some(m) => (m.magnitude.as_slice(), m.gained.as_slice()),
            None => (&[][..], &[][..]),
        };
        // the reference folds colliding updates in one order, rounding each
        // partial sum: its value is itself up to `gamma_n sum|x|` from the
        // exact sum that every order's bound is centred on. The distance is
        // measured against the same fold in f64, within f64's own gamma_n
        let folded = self.scatter_sum(ins, x, idx, upd)?;
        let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
        Ok((0..n)
            .map(|i| {
                let (e, g) = (at(extra, i), at(more, i));
                let (terms, m) = (ones.get_f64(i) + g, mag.get_f64(i) + e);
                let off = (v.get_f64(i) - folded[i]).abs() + gamma(terms, f64::EPSILON) * m;
                carried[i] + off + e + gamma(terms, u) * m
            })
            .collect())
    }

    /// An add-combining scatter's sums in f64 (the updates folded into the
    /// operand in the reference's order, each partial sum exact to f64's
    /// roundoff): the centre of every summation order's result.
    pub(super) fn scatter_sum(
        &mut self,
        ins: &Instruction,
        x: &Literal,
        idx: &Literal,
        upd: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let f64_of = |l: &Literal| f64_literal(l, &l.to_f64_vec());
        Ok(self
            .f64_op(
                ins,
                &[f64_of(x)?, idx.clone(), f64_of(upd)?],
                Some(AuxReducer::Add),
            )?
            .to_f64_vec())
    }

    /// An add-combining scatter's f64 sums (`scatter_sum`), for the witness
    /// runs to move from; `None` for any other instruction.
    pub(super) fn scatter_centre(
        &mut self,
        ins: &Instruction,
        ops: &[&Literal],
    ) -> Option<Vec<f64>> {
        let [x, idx, upd] = ops else { return None };
        let adds = ins.opcode == Opcode::Scatter
            && self.rounded_combiner(ins.attrs.to_apply) == (Combiner::Add, 0.0);
        adds.then(|| self.scatter_sum(ins, x, idx, upd).ok())
            .flatten()
    }

    /// Whether `ins` combines with max, min, a logical op or an assignment
    /// and no rounding: its result is one of its operands' values, never
    /// rounded (a reduce-window max, a max-combining scatter).
    pub(super) fn selects_a_value(&self, ins: &Instruction) -> bool {
        matches!(
            ins.opcode,
            Opcode::Reduce | Opcode::ReduceWindow | Opcode::Scatter
        ) && matches!(
            self.rounded_combiner(ins.attrs.to_apply),
            (
                Combiner::Max | Combiner::Min | Combiner::Logical(_) | Combiner::Assign,
                0.0
            )
        )
    }

    /// select-and-scatter (a max-pool's gradient): the selection must not
    /// flip (an exact operand); the source's radii are scattered with an
    /// add, the sums' rounding added.
    fn select_and_scatter(
        &mut self,
        ins: &Instruction,
        a: &[(&Literal, Vec<f64>)],
        v: &Literal,
    ) -> Result<Vec<f64>, OpError> {
        let ((x, rx), (src, rs), (init, ri)) =
            ((a[0].0, &a[0].1), (a[1].0, &a[1].1), (a[2].0, &a[2].1));
        if self.combiner(ins.attrs.scatter) != Combiner::Add {
            return Err(OpError::Invalid("a scatter that does not add".into()));
        }
        // where a moved operand may flip the selection: the window elements
        // that may be its extremum, each of which may gain or lose the
        // source value
        let flips = if rx.iter().any(|&q| q != 0.0) {
            let Some(max) = self.selects_max(ins.attrs.select) else {
                return Err(OpError::Invalid("a selection that may flip".into()));
            };
            let windows = select_and_scatter_windows(ins, x.dims(), src.dims())?;
            let mut extra = vec![0.0f64; v.element_count()];
            let mut count = vec![0.0f64; v.element_count()];
            for (w, cover) in windows.iter().enumerate() {
                // exact values choose as the reference does, ties included
                if cover.iter().all(|&i| rx[i] == 0.0) {
                    continue;
                }
                let s = src.get_f64(w).abs() + rs[w];
                // the value's side of its range: a candidate can win when
                // its best case reaches the others' worst cases
                let key = |i: usize, toward: f64| {
                    let (q, r) = (x.get_f64(i), rx[i]);
                    if max {
                        q + toward * r
                    } else {
                        -q + toward * r
                    }
                };
                let floor = cover
                    .iter()
                    .map(|&i| key(i, -1.0))
                    .fold(f64::NEG_INFINITY, f64::max);
                let candidates: Vec<usize> = cover
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let k = key(i, 1.0);
                        k.is_nan() || floor.is_nan() || k >= floor
                    })
                    .collect();
                if candidates.len() > 1 {
                    for i in candidates {
                        extra[i] += s;
                        count[i] += 1.0;
                    }
                }
            }
            if debug_enabled() {
                let flipping = count.iter().filter(|&&c| c > 0.0).count();
                eprintln!(
                    "first-order: {}: {flipping} operand elements may gain or lose a source value",
                    ins.name
                );
            }
            Some((extra, count))
        } else {
            None
        };
        let n = v.element_count();
        let lit = |l: &Literal, f: &dyn Fn(usize) -> f64| -> Result<Literal, OpError> {
            let vals: Vec<f64> = (0..l.element_count()).map(f).collect();
            f64_literal(l, &vals)
        };
        let ri0 = ri.first().copied().unwrap_or(0.0);
        // the operand in f64 too (exactly: the selection does not change),
        // so that the kernel sees one type
        let x = &lit(x, &|i| x.get_f64(i))?;
        let carried = self
            .f64_op(
                ins,
                &[x.clone(), lit(src, &|i| rs[i])?, lit(init, &|_| ri0)?],
                Some(AuxReducer::Add),
            )?
            .to_f64_vec();
        let u = Self::u_of(v, self.allow.accumulate_in_declared_type);
        let ones = self.f64_op(
            ins,
            &[x.clone(), lit(src, &|_| 1.0)?, lit(init, &|_| 0.0)?],
            Some(AuxReducer::Add),
        )?;
        let mag = self.f64_op(
            ins,
            &[
                x.clone(),
                lit(src, &|i| src.get_f64(i).abs() + rs[i])?,
                lit(init, &|_| init.get_f64(0).abs() + ri0)?,
            ],
            Some(AuxReducer::Add),
        )?;
        Ok((0..n)
            .map(|i| {
                let (e, c) = flips.as_ref().map_or((0.0, 0.0), |(e, c)| (e[i], c[i]));
                carried[i] + e + gamma(ones.get_f64(i) + c + 1.0, u) * (mag.get_f64(i) + e)
            })
            .collect())
    }

    /// Whether a select computation picks the larger value (`a >= b` or
    /// `a > b` keeps the current one), the smaller (`<=`, `<`), or neither
    /// that can be read (None).
    fn selects_max(&self, c: Option<CompId>) -> Option<bool> {
        use crate::hlo::ComparisonDirection as D;
        let d = super::eval::select_comparison(self.module, c?)?;
        Some(matches!(d, D::Ge | D::Gt))
    }
}

/// What a dot algorithm that rounds its operands to a narrower type adds,
/// relative to `op(|a|, |b|)`: both operands rounded (`(1 + u)^2 - 1 <
/// 2.01 u`), since a moved operand may round the other way (0 without an
/// algorithm, or one that keeps the operands or splits them exactly).
fn algorithm_roundoff(ins: &Instruction) -> f64 {
    let Ok(Some(alg)) = crate::hlo::DotAlgorithm::of(&ins.attrs) else {
        return 0.0;
    };
    let u = match alg.operand_precision() {
        crate::hlo::OperandPrecision::Type(t) => {
            t.float_format().map_or(0.0, |f| unit_roundoff(&f))
        }
        crate::hlo::OperandPrecision::Tf32 => 2f64.powi(-11),
        // e5m2 is the coarser of the f8 types
        crate::hlo::OperandPrecision::AnyF8 => 2f64.powi(-3),
    };
    if alg.components() > 1 {
        // split into pieces: what the dropped cross products and the last
        // piece's rounding leave is second order in u
        4.0 * u * u
    } else {
        2.01 * u
    }
}

/// A sort of one array: each sorted slice moves by at most its largest
/// radius (sorting is 1-Lipschitz in the largest norm).
fn sorted(ins: &Instruction, r: &[f64], v: &Literal) -> Vec<f64> {
    let dims = v.dims();
    let d = ins
        .attrs
        .dimensions
        .as_ref()
        .and_then(|d| d.first().copied())
        .and_then(|d| usize::try_from(d).ok())
        .filter(|&d| d < dims.len());
    let Some(d) = d else {
        return vec![f64::INFINITY; v.element_count()];
    };
    let inner: usize = dims[d + 1..].iter().product();
    let len = dims[d];
    let key = |i: usize| (i / (inner * len)) * inner + i % inner;
    let mut widest = std::collections::HashMap::new();
    for (i, &q) in r.iter().enumerate() {
        let e = widest.entry(key(i)).or_insert(0.0f64);
        *e = e.max(q);
    }
    (0..r.len()).map(|i| widest[&key(i)]).collect()
}
