//! dot and convolution: operands widened to the accumulation type (f32 for
//! f16, bf16 and f32; f64 when f64 is involved; i64 for integers), products
//! summed sequentially (dot: contracting index in row-major order;
//! convolution: kernel positions in row-major order, input features
//! innermost), the sum converted once to the result type.

use std::ops::{Add, Mul};

use super::elem::{dispatch_float, dispatch_int, err, make, strides, udims, IntElem, Res};
use super::elementwise::convert;
use super::math::Compute;
use super::shape_ops::transpose;
use crate::backend::BackendError;
use crate::hlo::{
    bits_to_f64, round_to_bits, ArrayShape, Attrs, DotAlgorithm, DotDims, ElementType,
    OperandPrecision,
};
use crate::literal::{ArrayData, Literal};
use crate::reference::contraction::{dot_result_dims, TF32};

/// An accumulation type.
trait Acc: Copy + Default + Add<Output = Self> + Mul<Output = Self> + Send + Sync + 'static {
    const DTYPE: ElementType;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn mul_add(self, a: Self, b: Self) -> Self {
        self + a * b
    }
}

impl Acc for f32 {
    const DTYPE: ElementType = ElementType::F32;
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn from_i64(v: i64) -> f32 {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
}
impl Acc for f64 {
    const DTYPE: ElementType = ElementType::F64;
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn from_i64(v: i64) -> f64 {
        v as f64
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
}

/// Wrapping i64 accumulation.
#[derive(Clone, Copy, Default, PartialEq)]
struct Wrapping(i64);
impl Add for Wrapping {
    type Output = Wrapping;
    fn add(self, o: Wrapping) -> Wrapping {
        Wrapping(self.0.wrapping_add(o.0))
    }
}
impl Mul for Wrapping {
    type Output = Wrapping;
    fn mul(self, o: Wrapping) -> Wrapping {
        Wrapping(self.0.wrapping_mul(o.0))
    }
}
impl Acc for Wrapping {
    const DTYPE: ElementType = ElementType::S64;
    fn from_f64(v: f64) -> Wrapping {
        Wrapping(v as i64)
    }
    fn from_i64(v: i64) -> Wrapping {
        Wrapping(v)
    }
    fn to_f64(self) -> f64 {
        self.0 as f64
    }
    fn to_i64(self) -> i64 {
        self.0
    }
}

fn read_as<A: Acc>(x: &Literal) -> Res<Vec<A>> {
    dispatch_float!(x.data(), a: T => {
        Ok(a.iter().map(|&v: &T| A::from_f64(Compute::to_f64(super::elem::FloatElem::up(v)))).collect())
    }, _ => dispatch_int!(x.data(), a: T => {
        Ok(a.iter().map(|&v: &T| A::from_i64(v.to_i64())).collect())
    }, _ => match x.data() {
        ArrayData::Pred(a) => Ok(a.iter().map(|&b| A::from_i64(b as i64)).collect()),
        _ => err(format!("unsupported operand type {}", x.dtype())),
    }))
}

fn finish<A: Acc>(v: Vec<A>, dims: &[usize], out: ElementType) -> Res<Literal> {
    let lit = match A::DTYPE {
        ElementType::F32 => make(
            ElementType::F32,
            dims,
            v.iter().map(|&a| a.to_f64() as f32).collect::<Vec<f32>>(),
        )?,
        ElementType::F64 => make(
            ElementType::F64,
            dims,
            v.iter().map(|&a| a.to_f64()).collect::<Vec<f64>>(),
        )?,
        _ => make(
            ElementType::S64,
            dims,
            v.iter().map(|&a| a.to_i64()).collect::<Vec<i64>>(),
        )?,
    };
    if out == A::DTYPE {
        Ok(lit)
    } else {
        convert(&lit, out)
    }
}

#[derive(Clone, Copy)]
enum AccKind {
    F32,
    F64,
    I64,
}

fn acc_kind(out: ElementType, a: ElementType, b: ElementType) -> Res<AccKind> {
    if out.is_float() {
        Ok(if [out, a, b].contains(&ElementType::F64) {
            AccKind::F64
        } else {
            AccKind::F32
        })
    } else if out.is_integer() || out.is_pred() {
        if a.is_float() || b.is_float() {
            return Err(BackendError::unsupported(format!(
                "integer result from {a} and {b} operands"
            )));
        }
        Ok(AccKind::I64)
    } else {
        Err(BackendError::unsupported(format!("result type {out}")))
    }
}

fn dims_list(v: &[i64], rank: usize, what: &str) -> Res<Vec<usize>> {
    let mut seen = vec![false; rank];
    v.iter()
        .map(|&d| match usize::try_from(d).ok().filter(|&d| d < rank) {
            Some(d) if !seen[d] => {
                seen[d] = true;
                Ok(d)
            }
            _ => err(format!("dot: {what} {v:?} out of range or repeated")),
        })
        .collect()
}

/// `dot` with batch and contracting dimensions.
pub(crate) fn dot(
    lhs: &Literal,
    rhs: &Literal,
    dd: Option<&DotDims>,
    out: &ArrayShape,
) -> Res<Literal> {
    let default = DotDims {
        lhs_contracting: vec![lhs.dims().len() as i64 - 1],
        rhs_contracting: vec![0],
        ..DotDims::default()
    };
    let dd = dd.unwrap_or(&default);
    let (lr, rr) = (lhs.dims().len(), rhs.dims().len());
    let lb = dims_list(&dd.lhs_batch, lr, "lhs_batch_dims")?;
    let lc = dims_list(&dd.lhs_contracting, lr, "lhs_contracting_dims")?;
    let rb = dims_list(&dd.rhs_batch, rr, "rhs_batch_dims")?;
    let rc = dims_list(&dd.rhs_contracting, rr, "rhs_contracting_dims")?;
    let (ld, rd) = (lhs.dims(), rhs.dims());
    if lb.len() != rb.len()
        || lc.len() != rc.len()
        || lb.iter().zip(&rb).any(|(&a, &b)| ld[a] != rd[b])
        || lc.iter().zip(&rc).any(|(&a, &b)| ld[a] != rd[b])
    {
        return err(format!(
            "dot: batch or contracting dimensions of {} and {} do not match",
            lhs.shape(),
            rhs.shape()
        ));
    }
    let lf: Vec<usize> = (0..lr)
        .filter(|d| !lb.contains(d) && !lc.contains(d))
        .collect();
    let rf: Vec<usize> = (0..rr)
        .filter(|d| !rb.contains(d) && !rc.contains(d))
        .collect();
    let lperm: Vec<i64> = lb.iter().chain(&lf).chain(&lc).map(|&d| d as i64).collect();
    let rperm: Vec<i64> = rb.iter().chain(&rc).chain(&rf).map(|&d| d as i64).collect();
    let b: usize = lb.iter().map(|&d| ld[d]).product();
    let m: usize = lf.iter().map(|&d| ld[d]).product();
    let k: usize = lc.iter().map(|&d| ld[d]).product();
    let n: usize = rf.iter().map(|&d| rd[d]).product();
    let out_dims = dot_result_dims(&lb, &lf, &rf, ld, rd);
    if udims(&out.dims, "dot")? != out_dims {
        return err(format!(
            "dot: result dims {out_dims:?} differ from the declared {}",
            out
        ));
    }
    let lt = transpose(lhs, &lperm)?;
    let rt = transpose(rhs, &rperm)?;
    fn kernel<A: Acc>(l: &[A], r: &[A], b: usize, m: usize, k: usize, n: usize) -> Vec<A> {
        let mut o = vec![A::default(); b * m * n];
        for bi in 0..b {
            for mi in 0..m {
                let row = &mut o[(bi * m + mi) * n..(bi * m + mi + 1) * n];
                for ki in 0..k {
                    let a = l[(bi * m + mi) * k + ki];
                    let rrow = &r[(bi * k + ki) * n..(bi * k + ki + 1) * n];
                    for (o, &x) in row.iter_mut().zip(rrow) {
                        *o = o.mul_add(a, x);
                    }
                }
            }
        }
        o
    }
    match acc_kind(out.dtype, lhs.dtype(), rhs.dtype())? {
        AccKind::F32 => finish(
            kernel::<f32>(&read_as(&lt)?, &read_as(&rt)?, b, m, k, n),
            &out_dims,
            out.dtype,
        ),
        AccKind::F64 => finish(
            kernel::<f64>(&read_as(&lt)?, &read_as(&rt)?, b, m, k, n),
            &out_dims,
            out.dtype,
        ),
        AccKind::I64 => finish(
            kernel::<Wrapping>(&read_as(&lt)?, &read_as(&rt)?, b, m, k, n),
            &out_dims,
            out.dtype,
        ),
    }
}

/// `l`'s component `k` under `alg` (0: the value rounded to the algorithm's
/// precision, 1: the remainder rounded, ...), kept in `l`'s own type.
fn component(l: &Literal, alg: DotAlgorithm, k: usize) -> Res<Literal> {
    let fmt = match alg.operand_precision() {
        OperandPrecision::Type(t) => t.float_format(),
        OperandPrecision::Tf32 => Some(TF32),
        OperandPrecision::AnyF8 => None,
    };
    let Some(fmt) = fmt.filter(|_| l.dtype().is_float()) else {
        if k == 0 && l.dtype().is_float() {
            return Ok(l.clone());
        }
        return Err(BackendError::Unsupported {
            what: format!("dot algorithm {} on {} operands", alg.name(), l.dtype()),
        });
    };
    let round = |x: f64| bits_to_f64(round_to_bits(x, &fmt), &fmt);
    let values: Vec<f64> = (0..l.element_count())
        .map(|i| {
            let mut x = l.get_f64(i);
            for _ in 0..k {
                let p = round(x);
                x = if p.is_finite() { x - p } else { 0.0 };
            }
            round(x)
        })
        .collect();
    let shape = ArrayShape {
        dtype: l.dtype(),
        dims: l.dims().iter().map(|&d| d as i64).collect(),
        layout: None,
    };
    Literal::from_f64s(&shape, &values).map_err(|e| BackendError::Execute(e.to_string()))
}

/// A dot with the instruction's `algorithm=`: the operands split and
/// rounded as the algorithm says, one dot per component pair it names,
/// the partial results summed in the accumulation type (as a compiler
/// that runs the `_xN` algorithms as N dots does).
pub(crate) fn dot_with_algorithm(
    lhs: &Literal,
    rhs: &Literal,
    attrs: &Attrs,
    out: &ArrayShape,
) -> Res<Literal> {
    let alg = DotAlgorithm::of(attrs).map_err(BackendError::Compile)?;
    let Some(alg) = alg else {
        return dot(lhs, rhs, attrs.dot_dims.as_ref(), out);
    };
    if alg.products().len() == 1 {
        let (l, r) = (component(lhs, alg, 0)?, component(rhs, alg, 0)?);
        return dot(&l, &r, attrs.dot_dims.as_ref(), out);
    }
    let wide = ArrayShape {
        dtype: alg.accumulation_type(),
        ..out.clone()
    };
    let mut sum: Option<Vec<f64>> = None;
    for &(i, j) in alg.products() {
        let (l, r) = (component(lhs, alg, i)?, component(rhs, alg, j)?);
        let part = dot(&l, &r, attrs.dot_dims.as_ref(), &wide)?;
        let acc = sum.get_or_insert_with(|| vec![0.0; part.element_count()]);
        for (k, a) in acc.iter_mut().enumerate() {
            // summed in f32: each partial sum rounded to it
            *a = f64::from((*a + part.get_f64(k)) as f32);
        }
    }
    let sum = sum.unwrap_or_default();
    Literal::from_f64s(out, &sum).map_err(|e| BackendError::Execute(e.to_string()))
}

struct ConvGeom {
    n_out: usize,
    o_feat: usize,
    i_feat: usize,
    fgc: usize,
    bgc: usize,
    out_spatial: Vec<usize>,
    k_spatial: Vec<usize>,
    in_spatial: Vec<usize>,
    in_st: Vec<usize>,
    k_st: Vec<usize>,
    out_st: Vec<usize>,
    /// Positions of batch/feature/spatial dims: input, kernel, output.
    ib: usize,
    ifd: usize,
    kif: usize,
    kof: usize,
    ob: usize,
    of: usize,
    isp: Vec<usize>,
    ksp: Vec<usize>,
    osp: Vec<usize>,
}

/// `convolution` with dim labels, window (stride, padding, dilations,
/// reversal), feature and batch groups.
pub(crate) fn convolution(
    lhs: &Literal,
    rhs: &Literal,
    a: &Attrs,
    out: &ArrayShape,
) -> Res<Literal> {
    let cd = a
        .conv_dims
        .as_ref()
        .ok_or_else(|| BackendError::Execute("convolution: missing dim_labels".into()))?;
    let (ld, kd) = (lhs.dims().to_vec(), rhs.dims().to_vec());
    let od = udims(&out.dims, "convolution")?;
    let nsp = cd.input_spatial.len();
    let idx = |v: i64, dims: &[usize]| -> Res<usize> {
        usize::try_from(v)
            .ok()
            .filter(|&v| v < dims.len())
            .map_or_else(|| err("convolution: dim_labels out of range"), Ok)
    };
    if cd.kernel_spatial.len() != nsp
        || cd.output_spatial.len() != nsp
        || ld.len() != nsp + 2
        || kd.len() != nsp + 2
        || od.len() != nsp + 2
    {
        return err("convolution: dim_labels do not match the operand ranks");
    }
    let window = match &a.window {
        Some(w) if w.len() == nsp => w.clone(),
        None => ksp_sizes_default(&cd.kernel_spatial, &kd),
        _ => return err("convolution: window does not match the spatial rank"),
    };
    let (ib, ifd) = (idx(cd.input_batch, &ld)?, idx(cd.input_feature, &ld)?);
    let (kif, kof) = (
        idx(cd.kernel_input_feature, &kd)?,
        idx(cd.kernel_output_feature, &kd)?,
    );
    let (ob, of) = (idx(cd.output_batch, &od)?, idx(cd.output_feature, &od)?);
    let isp: Vec<usize> = cd
        .input_spatial
        .iter()
        .map(|&d| idx(d, &ld))
        .collect::<Res<_>>()?;
    let ksp: Vec<usize> = cd
        .kernel_spatial
        .iter()
        .map(|&d| idx(d, &kd))
        .collect::<Res<_>>()?;
    let osp: Vec<usize> = cd
        .output_spatial
        .iter()
        .map(|&d| idx(d, &od))
        .collect::<Res<_>>()?;
    let fgc = a.feature_group_count.unwrap_or(1).max(1) as usize;
    let bgc = a.batch_group_count.unwrap_or(1).max(1) as usize;
    let g = ConvGeom {
        n_out: od[ob],
        o_feat: od[of],
        i_feat: kd[kif],
        fgc,
        bgc,
        out_spatial: osp.iter().map(|&d| od[d]).collect(),
        k_spatial: ksp.iter().map(|&d| kd[d]).collect(),
        in_spatial: isp.iter().map(|&d| ld[d]).collect(),
        in_st: strides(&ld),
        k_st: strides(&kd),
        out_st: strides(&od),
        ib,
        ifd,
        kif,
        kof,
        ob,
        of,
        isp,
        ksp,
        osp,
    };
    if ld[ifd] != g.i_feat * fgc
        || kd[kof] != g.o_feat
        || !g.o_feat.is_multiple_of(fgc)
        || !g.o_feat.is_multiple_of(bgc)
        || ld[ib] != g.n_out * bgc
    {
        return err(format!(
            "convolution: feature or batch sizes of {}, {} and {} do not match the groups",
            lhs.shape(),
            rhs.shape(),
            out
        ));
    }
    for w in &window {
        if w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0 {
            return err("convolution: bad window");
        }
    }
    let total: usize = od.iter().product();
    match acc_kind(out.dtype, lhs.dtype(), rhs.dtype())? {
        AccKind::F32 => finish(
            conv_kernel::<f32>(&read_as(lhs)?, &read_as(rhs)?, &g, &window, total),
            &od,
            out.dtype,
        ),
        AccKind::F64 => finish(
            conv_kernel::<f64>(&read_as(lhs)?, &read_as(rhs)?, &g, &window, total),
            &od,
            out.dtype,
        ),
        AccKind::I64 => finish(
            conv_kernel::<Wrapping>(&read_as(lhs)?, &read_as(rhs)?, &g, &window, total),
            &od,
            out.dtype,
        ),
    }
}

/// The convolution loop, accumulating in `A` (kernel positions in
/// row-major order, input features innermost).
fn conv_kernel<A: Acc>(
    l: &[A],
    k: &[A],
    g: &ConvGeom,
    w: &[crate::hlo::WindowDim],
    total: usize,
) -> Vec<A> {
    let (ib, ifd, kif, kof, ob, of) = (g.ib, g.ifd, g.kif, g.kof, g.ob, g.of);
    let (isp, ksp, osp) = (&g.isp, &g.ksp, &g.osp);
    let mut out = vec![A::default(); total];
    let nsp = isp.len();
    let mut opos = vec![0usize; nsp];
    let kcount: usize = g.k_spatial.iter().product();
    let ocount: usize = g.out_spatial.iter().product();
    let mut kpos = vec![0usize; nsp];
    let per_fg = g.o_feat / g.fgc;
    let per_bg = g.o_feat / g.bgc;
    for n in 0..g.n_out {
        for o in 0..g.o_feat {
            let fg = o / per_fg;
            let bg = o / per_bg;
            let nb = bg * g.n_out + n;
            opos.iter_mut().for_each(|p| *p = 0);
            for _ in 0..ocount {
                // kernel positions in row-major order, input features innermost
                let mut acc = A::default();
                kpos.iter_mut().for_each(|p| *p = 0);
                for _ in 0..kcount {
                    let mut li = nb * g.in_st[ib] + fg * g.i_feat * g.in_st[ifd];
                    let mut ki = o * g.k_st[kof];
                    let mut inside = true;
                    for s in 0..nsp {
                        let wd = &w[s];
                        let pos = opos[s] as i64 * wd.stride + kpos[s] as i64 * wd.window_dilation
                            - wd.pad_low;
                        if pos < 0
                            || pos % wd.base_dilation != 0
                            || (pos / wd.base_dilation) as usize >= g.in_spatial[s]
                        {
                            inside = false;
                            break;
                        }
                        li += (pos / wd.base_dilation) as usize * g.in_st[isp[s]];
                        let kk = if wd.reversal {
                            g.k_spatial[s] - 1 - kpos[s]
                        } else {
                            kpos[s]
                        };
                        ki += kk * g.k_st[ksp[s]];
                    }
                    if inside {
                        let (ls, ks) = (g.in_st[ifd], g.k_st[kif]);
                        for i in 0..g.i_feat {
                            acc = acc.mul_add(l[li + i * ls], k[ki + i * ks]);
                        }
                    }
                    super::elem::next_index(&mut kpos, &g.k_spatial);
                }
                let mut oi = n * g.out_st[ob] + o * g.out_st[of];
                for s in 0..nsp {
                    oi += opos[s] * g.out_st[osp[s]];
                }
                out[oi] = acc;
                super::elem::next_index(&mut opos, &g.out_spatial);
            }
        }
    }
    out
}

fn ksp_sizes_default(ks: &[i64], kd: &[usize]) -> Vec<crate::hlo::WindowDim> {
    ks.iter()
        .map(|&d| {
            crate::hlo::WindowDim::new(
                usize::try_from(d)
                    .ok()
                    .and_then(|d| kd.get(d))
                    .copied()
                    .unwrap_or(1) as i64,
            )
        })
        .collect()
}
