//! Magnitude sums of a reduced output: what the reassociation bound of each
//! element is computed from (`check::legal::reassociation`), for a reduce,
//! a dot, and the reduction at a module's root.

use super::verdict::ElementIndex;
use crate::hlo::{DotDims, ElementType, Opcode};
use crate::literal::Literal;

/// Per-element magnitude sums of one reduced output, for the reassociation bound.
#[derive(Clone, Debug, PartialEq)]
pub struct MagnitudeSums {
    /// Terms summed into each element (the reduction length).
    pub terms: u64,
    /// `sum |x|` over the terms of each element, row-major over the output.
    /// For a complex output, the real plane's elements then the imaginary
    /// plane's (`2n` values, see [`MagnitudeSums::plane`]): each component
    /// of a complex sum is a real sum of that component of the terms.
    pub sum_abs: Vec<f64>,
    /// Elements whose terms admit an order of accumulation that leaves the
    /// finite range of the result type (their magnitudes overflow it): there
    /// a reassociated result is bounded by nothing (inf or NaN included),
    /// unless the reference's own result is NaN, which every order gives.
    /// Empty means none.
    pub unbounded: Vec<bool>,
    /// The terms are multiplied, not added: an unbounded element still keeps
    /// the reference's sign (or is NaN), since a product's sign does not
    /// depend on the order.
    pub product: bool,
    /// Unbounded elements whose reference NaN comes only from finite terms
    /// overflowing (`inf - inf` of rounded products, no NaN term and no
    /// opposite infinite inputs): another order, or a fused multiply-add
    /// that keeps a product unrounded, gives an infinity or a finite value
    /// instead. Empty means none (a NaN reference is then kept).
    pub overflow_nan: Vec<bool>,
}

impl MagnitudeSums {
    /// The largest legal error of element `i` of a reassociated sum in `dtype`:
    /// `n * eps * sum|x|` (recursive summation is within `(n-1) * u * sum|x|`
    /// with `u = eps/2`; the reference's own once-rounding adds `u * |s|`).
    pub fn bound(&self, i: usize, dtype: ElementType) -> f64 {
        let eps = dtype.float_format().map_or(0.0, |f| f.epsilon());
        self.terms as f64 * eps * self.sum_abs.get(i).copied().unwrap_or(0.0)
    }

    /// Whether element `i` of a reassociated result may be any value
    /// (see [`MagnitudeSums::unbounded`]) given the reference's `expected`
    /// and the backend's `actual` values.
    pub fn excuses(&self, i: usize, expected: f64, actual: f64) -> bool {
        if !self.unbounded.get(i).copied().unwrap_or(false) {
            return false;
        }
        if expected.is_nan() {
            return self.overflow_nan.get(i).copied().unwrap_or(false);
        }
        !self.product || actual.is_nan() || actual.is_sign_negative() == expected.is_sign_negative()
    }

    /// The sums of plane `k` (0: real, 1: imaginary) of a complex output of
    /// `n` elements, laid out as [`MagnitudeSums::sum_abs`] says; None when
    /// they were not computed per plane (`2n` values).
    pub fn plane(&self, k: usize, n: usize) -> Option<MagnitudeSums> {
        if k > 1 || self.sum_abs.len() != 2 * n {
            return None;
        }
        let half = |v: &[bool]| {
            if v.len() == 2 * n {
                v[k * n..(k + 1) * n].to_vec()
            } else {
                Vec::new()
            }
        };
        Some(MagnitudeSums {
            terms: self.terms,
            sum_abs: self.sum_abs[k * n..(k + 1) * n].to_vec(),
            unbounded: half(&self.unbounded),
            product: self.product,
            overflow_nan: half(&self.overflow_nan),
        })
    }
}

/// The magnitude sums of `reduce(input, init)` over `dims` with an add
/// reducer: per output element, `|init| + sum |x|` over its terms.
///
/// ```
/// use xla_props::check::magnitude_sums_for_reduce;
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2, 3]),
///                            &[1.0, -2.0, 3.0, -4.0, 5.0, -6.0]).unwrap();
/// let s = magnitude_sums_for_reduce(&x, 0.0, &[1]);
/// assert_eq!(s.terms, 3);
/// assert_eq!(s.sum_abs, vec![6.0, 15.0]);
/// ```
pub fn magnitude_sums_for_reduce(input: &Literal, init: f64, dims: &[i64]) -> MagnitudeSums {
    let in_dims = input.dims();
    let kept: Vec<usize> = (0..in_dims.len())
        .filter(|d| !dims.contains(&(*d as i64)))
        .collect();
    let out_dims: Vec<usize> = kept.iter().map(|&d| in_dims[d]).collect();
    let out_count: usize = out_dims.iter().product();
    let terms = input
        .element_count()
        .checked_div(out_count)
        .unwrap_or_default();
    let mut sums = vec![init.abs(); out_count];
    // over finite terms only: an infinite or NaN term decides every order alike
    let finite = |v: f64| if v.is_finite() { v.abs() } else { 0.0 };
    let mut finite_sums = vec![finite(init); out_count];
    for i in 0..input.element_count() {
        let idx = ElementIndex::new(i, in_dims);
        let mut o = 0;
        for &d in &kept {
            o = o * in_dims[d] + idx.multi[d];
        }
        let v = input.get_f64(i);
        sums[o] += v.abs();
        finite_sums[o] += finite(v);
    }
    let max = input
        .dtype()
        .float_format()
        .map_or(f64::INFINITY, |f| f.max);
    MagnitudeSums {
        terms: terms as u64,
        unbounded: finite_sums.iter().map(|s| *s > max).collect(),
        sum_abs: sums,
        product: false,
        overflow_nan: Vec::new(),
    }
}

/// A dot's dimensions by role: each operand's batch (`lb`, `rb`),
/// contracting (`lc`, `rc`) and free (`lf`, `rf`) dimensions. Its output is
/// ordered batch dims, then lhs free dims, then rhs free dims.
pub(crate) struct DotRoles {
    lb: Vec<usize>,
    pub(crate) lc: Vec<usize>,
    rb: Vec<usize>,
    rc: Vec<usize>,
    lf: Vec<usize>,
    rf: Vec<usize>,
}

impl DotRoles {
    /// The roles from `[lb, lc, rb, rc]` of operands of ranks `l_rank` and
    /// `r_rank`: every other dimension is free.
    pub(crate) fn new([lb, lc, rb, rc]: [Vec<usize>; 4], l_rank: usize, r_rank: usize) -> Self {
        let free = |rank: usize, b: &[usize], c: &[usize]| -> Vec<usize> {
            (0..rank)
                .filter(|d| !b.contains(d) && !c.contains(d))
                .collect()
        };
        let (lf, rf) = (free(l_rank, &lb, &lc), free(r_rank, &rb, &rc));
        DotRoles {
            lb,
            lc,
            rb,
            rc,
            lf,
            rf,
        }
    }

    /// Sets the lhs index `li` and the rhs index `ri` at output index `oi`
    /// (their contracting dimensions left as they are).
    pub(crate) fn set_output(&self, oi: &[usize], li: &mut [usize], ri: &mut [usize]) {
        for (k, (&l, &r)) in self.lb.iter().zip(&self.rb).enumerate() {
            li[l] = oi[k];
            ri[r] = oi[k];
        }
        for (k, &l) in self.lf.iter().enumerate() {
            li[l] = oi[self.lb.len() + k];
        }
        for (k, &r) in self.rf.iter().enumerate() {
            ri[r] = oi[self.lb.len() + self.lf.len() + k];
        }
    }

    /// Sets the contracting dimensions of `li` and `ri` at index `ci` of the
    /// contracted terms.
    pub(crate) fn set_term(&self, ci: &[usize], li: &mut [usize], ri: &mut [usize]) {
        for (k, (&l, &r)) in self.lc.iter().zip(&self.rc).enumerate() {
            li[l] = ci[k];
            ri[r] = ci[k];
        }
    }
}

/// The magnitude sums of `dot(lhs, rhs)`: per output element, `sum |a_k * b_k|`
/// over the contracted terms. The output is ordered batch dims, then lhs free
/// dims, then rhs free dims (XLA's dot output order).
///
/// ```
/// use xla_props::check::magnitude_sums_for_dot;
/// use xla_props::hlo::{ArrayShape, DotDims, ElementType};
/// use xla_props::literal::Literal;
/// let a = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1, 2]), &[1.0, -2.0]).unwrap();
/// let b = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![2, 1]), &[3.0, 4.0]).unwrap();
/// let dims = DotDims { lhs_contracting: vec![1], rhs_contracting: vec![0], ..Default::default() };
/// let s = magnitude_sums_for_dot(&a, &b, &dims).unwrap();
/// assert_eq!((s.terms, s.sum_abs.clone()), (2, vec![11.0])); // |1*3| + |-2*4|
/// ```
pub fn magnitude_sums_for_dot(
    lhs: &Literal,
    rhs: &Literal,
    dims: &DotDims,
) -> Result<MagnitudeSums, String> {
    let ld = lhs.dims();
    let rd = rhs.dims();
    let idx = |v: &[i64], rank: usize| -> Result<Vec<usize>, String> {
        v.iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .filter(|&d| d < rank)
                    .ok_or_else(|| format!("dot dimension {d} out of range"))
            })
            .collect()
    };
    let lb = idx(&dims.lhs_batch, ld.len())?;
    let lc = idx(&dims.lhs_contracting, ld.len())?;
    let rb = idx(&dims.rhs_batch, rd.len())?;
    let rc = idx(&dims.rhs_contracting, rd.len())?;
    if lb.len() != rb.len() || lc.len() != rc.len() {
        return Err("dot dimension numbers do not pair up".into());
    }
    let bsizes: Vec<usize> = lb.iter().map(|&d| ld[d]).collect();
    let csizes: Vec<usize> = lc.iter().map(|&d| ld[d]).collect();
    if rb.iter().map(|&d| rd[d]).ne(bsizes.iter().copied())
        || rc.iter().map(|&d| rd[d]).ne(csizes.iter().copied())
    {
        return Err("dot operand dimensions do not match".into());
    }
    let roles = DotRoles::new([lb, lc, rb, rc], ld.len(), rd.len());
    let lfs: Vec<usize> = roles.lf.iter().map(|&d| ld[d]).collect();
    let rfs: Vec<usize> = roles.rf.iter().map(|&d| rd[d]).collect();
    let mut out_dims = bsizes.clone();
    out_dims.extend(&lfs);
    out_dims.extend(&rfs);
    let out_count: usize = out_dims.iter().product();
    let terms: usize = csizes.iter().product();
    let flat = |dims: &[usize], index: &[usize]| -> usize {
        index.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
    };
    let mut sums = vec![0.0; out_count];
    let mut finite_sums = vec![0.0; out_count];
    let mut lidx = vec![0; ld.len()];
    let mut ridx = vec![0; rd.len()];
    for (o, (sum, finite_sum)) in sums.iter_mut().zip(&mut finite_sums).enumerate() {
        let oi = ElementIndex::new(o, &out_dims).multi;
        roles.set_output(&oi, &mut lidx, &mut ridx);
        for t in 0..terms {
            let ti = ElementIndex::new(t, &csizes).multi;
            roles.set_term(&ti, &mut lidx, &mut ridx);
            let p = (lhs.get_f64(flat(ld, &lidx)) * rhs.get_f64(flat(rd, &ridx))).abs();
            *sum += p;
            if p.is_finite() {
                *finite_sum += p;
            }
        }
    }
    let max = lhs.dtype().float_format().map_or(f64::INFINITY, |f| f.max);
    Ok(MagnitudeSums {
        terms: terms as u64,
        unbounded: finite_sums.iter().map(|s| *s > max).collect(),
        sum_abs: sums,
        product: false,
        overflow_nan: Vec::new(),
    })
}

/// The value of instruction `id` of computation `comp` when that computation
/// runs on `frame`, by the reference.
fn value_of(
    module: &crate::hlo::Module,
    comp: crate::hlo::CompId,
    id: crate::hlo::InstrId,
    frame: &[Literal],
) -> Option<Literal> {
    let mut m = module.clone();
    m.entry = comp;
    m.computations.get_mut(comp.index())?.root = id;
    let mut out = crate::reference::evaluate(&m, frame).ok()?;
    (out.len() == 1).then(|| out.pop()).flatten()
}

/// Magnitude sums of the add-reduce or dot that produces the module's result,
/// following fusions and calls from the entry root.
pub(crate) fn root_reduction_sums(
    module: &crate::hlo::Module,
    args: &[Literal],
) -> Option<MagnitudeSums> {
    let mut comp = module.entry;
    let mut frame: Vec<Literal> = args.to_vec();
    let mut id = module.entry_computation().root;
    for _depth in 0..8 {
        let c = module.computations.get(comp.index())?;
        let instr = c.instructions.get(id.index())?;
        match (instr.opcode, instr.operands.as_slice()) {
            (Opcode::Fusion | Opcode::Call, ops) => {
                let callee = if instr.opcode == Opcode::Fusion {
                    instr.attrs.calls.first().copied()?
                } else {
                    instr.attrs.to_apply?
                };
                frame = ops
                    .iter()
                    .map(|&o| value_of(module, comp, o, &frame))
                    .collect::<Option<Vec<_>>>()?;
                comp = callee;
                id = module.computations.get(callee.index())?.root;
            }
            (Opcode::Reduce, [x, init]) => {
                let reducer = module.computations.get(instr.attrs.to_apply?.index())?;
                if reducer.instr(reducer.root).opcode != Opcode::Add {
                    return None;
                }
                let x = value_of(module, comp, *x, &frame)?;
                let init = value_of(module, comp, *init, &frame)?;
                if init.element_count() != 1 {
                    return None;
                }
                let dims = instr.attrs.dimensions.as_ref()?;
                return Some(magnitude_sums_for_reduce(&x, init.get_f64(0), dims));
            }
            (Opcode::Dot, [a, b]) => {
                let a = value_of(module, comp, *a, &frame)?;
                let b = value_of(module, comp, *b, &frame)?;
                return magnitude_sums_for_dot(&a, &b, instr.attrs.dot_dims.as_ref()?).ok();
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::MagnitudeSums;
    use crate::hlo::ElementType;

    #[test]
    fn a_complex_output_splits_into_its_planes() {
        let s = MagnitudeSums {
            terms: 4,
            sum_abs: vec![1.0, 2.0, 10.0, 20.0],
            unbounded: vec![false, true, true, false],
            product: false,
            overflow_nan: Vec::new(),
        };
        let im = s.plane(1, 2).unwrap();
        assert_eq!(im.sum_abs, [10.0, 20.0]);
        assert_eq!(im.unbounded, [true, false]);
        assert!(im.overflow_nan.is_empty());
        // 4 terms * eps(f32) * 20
        assert_eq!(
            im.bound(1, ElementType::F32),
            80.0 * f64::from(f32::EPSILON)
        );
        assert_eq!(s.plane(0, 2).unwrap().sum_abs, [1.0, 2.0]);
        // not laid out per plane: none
        assert!(s.plane(0, 4).is_none());
        assert!(s.plane(2, 2).is_none());
    }
}
