//! The templates' programs: each builds its module stage by stage
//! (`Stages` records which instructions a stage added), for the table in
//! `templates.rs` to outline into fusions.

use super::{topk_k, Dims, StagedModule};
use crate::hlo::{
    BuildError, CompId, ComparisonDirection, ComputationBuilder, ConvDims, DotDims, ElementType,
    GatherDims, InstrId, Module, ModuleBuilder, Opcode, ScatterDims, Shape, WindowDim,
};

use ElementType::{F32, S32};

/// Records which instructions each stage added.
struct Stages {
    marks: Vec<(&'static str, usize)>,
}

impl Stages {
    fn new() -> Stages {
        Stages { marks: Vec::new() }
    }
    /// Everything added since the previous mark (parameters excepted) belongs to `stage`.
    fn mark(&mut self, b: &ComputationBuilder<'_>, stage: &'static str) {
        self.marks.push((stage, b.instructions().len()));
    }
    fn finish(self, module: Module) -> StagedModule {
        let entry = module.entry_computation();
        let mut stages: Vec<(&'static str, Vec<String>)> = Vec::new();
        let mut start = 0;
        for (stage, end) in self.marks {
            let names = entry.instructions[start..end.min(entry.instructions.len())]
                .iter()
                .filter(|i| i.opcode != Opcode::Parameter)
                .map(|i| i.name.clone())
                .collect();
            stages.push((stage, names));
            start = end;
        }
        StagedModule { module, stages }
    }
}

/// The accumulation type: f32 for narrow floats (bf16 compute, f32 accumulation).
fn acc(dtype: ElementType) -> ElementType {
    if dtype == ElementType::F64 {
        dtype
    } else {
        F32
    }
}

fn arr(dtype: ElementType, dims: &[i64]) -> Shape {
    Shape::array(dtype, dims.to_vec())
}

/// A constant broadcast to `dims`.
fn splat(
    b: &mut ComputationBuilder<'_>,
    dtype: ElementType,
    value: f64,
    dims: &[i64],
) -> Result<InstrId, BuildError> {
    let c = b.constant_f64(dtype, &[], &[value])?;
    b.broadcast(c, dims, &[])
}

fn to(
    b: &mut ComputationBuilder<'_>,
    x: InstrId,
    dtype: ElementType,
) -> Result<InstrId, BuildError> {
    match b.shape(x).and_then(|s| s.as_array()).map(|a| a.dtype) {
        Some(t) if t == dtype => Ok(x),
        _ => b.convert(x, dtype),
    }
}

/// Reduces rows of `x` (`[r, c]`, dtype `dtype`) with `op`, accumulating in `acc(dtype)`;
/// returns the row results in `dtype`, broadcast back to `[r, c]`.
fn row_reduce(
    b: &mut ComputationBuilder<'_>,
    x: InstrId,
    dtype: ElementType,
    d: Dims,
    op: Opcode,
    reducer: CompId,
) -> Result<InstrId, BuildError> {
    let a = acc(dtype);
    let xa = to(b, x, a)?;
    let init = match op {
        Opcode::Maximum => f64::NEG_INFINITY,
        _ => 0.0,
    };
    let init = b.constant_f64(a, &[], &[init])?;
    let r = b.reduce(&[xa], &[init], &[1], reducer)?;
    let r = to(b, r, dtype)?;
    b.broadcast(r, &d, &[0])
}

/// Builds `m`'s entry `main`: its parameters of `params` (in order, the stage
/// `params`), then `body` on them, recording the stages `body` marks.
fn staged<F>(m: ModuleBuilder, params: &[Shape], body: F) -> Result<StagedModule, BuildError>
where
    F: FnOnce(&mut ComputationBuilder<'_>, &mut Stages, &[InstrId]) -> Result<InstrId, BuildError>,
{
    let mut st = Stages::new();
    let module = m.build("main", |b| {
        let ids = params
            .iter()
            .map(|shape| b.parameter(shape.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        st.mark(b, "params");
        body(b, &mut st, &ids)
    })?;
    Ok(st.finish(module))
}

/// The row means of `x` (`[r, c]`) broadcast back to `[r, c]`, and the splat `1/c`.
fn row_mean(
    b: &mut ComputationBuilder<'_>,
    x: InstrId,
    dtype: ElementType,
    d: Dims,
    add: CompId,
) -> Result<(InstrId, InstrId), BuildError> {
    let s = row_reduce(b, x, dtype, d, Opcode::Add, add)?;
    let n = splat(b, dtype, 1.0 / d[1] as f64, &d)?;
    let mean = b.binary(Opcode::Multiply, s, n)?;
    Ok((mean, n))
}

/// The row mean of `xc * xc` (`xc` centred, `n` the splat `1/c`).
fn row_variance(
    b: &mut ComputationBuilder<'_>,
    xc: InstrId,
    n: InstrId,
    dtype: ElementType,
    d: Dims,
    add: CompId,
) -> Result<InstrId, BuildError> {
    let sq = b.binary(Opcode::Multiply, xc, xc)?;
    let ss = row_reduce(b, sq, dtype, d, Opcode::Add, add)?;
    b.binary(Opcode::Multiply, ss, n)
}

/// `rsqrt(v + 1e-3)`.
fn rsqrt_eps(
    b: &mut ComputationBuilder<'_>,
    v: InstrId,
    dtype: ElementType,
    d: Dims,
) -> Result<InstrId, BuildError> {
    let eps = splat(b, dtype, 1e-3, &d)?;
    let ve = b.binary(Opcode::Add, v, eps)?;
    b.unary(Opcode::Rsqrt, ve)
}

/// GELU's last stage `out`: `0.5 * x * (1 + t)`.
fn gelu_out(
    b: &mut ComputationBuilder<'_>,
    st: &mut Stages,
    x: InstrId,
    t: InstrId,
    dtype: ElementType,
    d: Dims,
) -> Result<InstrId, BuildError> {
    let one = splat(b, dtype, 1.0, &d)?;
    let half = splat(b, dtype, 0.5, &d)?;
    let p = b.binary(Opcode::Add, one, t)?;
    let hx = b.binary(Opcode::Multiply, half, x)?;
    let out = b.binary(Opcode::Multiply, hx, p)?;
    st.mark(b, "out");
    Ok(out)
}

/// The stages `bias` (`bias` broadcast along `feature` of `dims`, added to `y`)
/// and `act` (ReLU).
fn bias_relu(
    b: &mut ComputationBuilder<'_>,
    st: &mut Stages,
    y: InstrId,
    bias: InstrId,
    (dims, feature): (&[i64], i64),
    dtype: ElementType,
    act: &'static str,
) -> Result<InstrId, BuildError> {
    let bb = b.broadcast(bias, dims, &[feature])?;
    let yb = b.binary(Opcode::Add, y, bb)?;
    st.mark(b, "bias");
    let zero = splat(b, dtype, 0.0, dims)?;
    let out = b.binary(Opcode::Maximum, yb, zero)?;
    st.mark(b, act);
    Ok(out)
}

pub(super) fn softmax(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let mut m = ModuleBuilder::new("softmax");
    let max = m.scalar_reducer(Opcode::Maximum, acc(dtype))?;
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    staged(m, &[arr(dtype, &d)], |b, st, p| {
        softmax_rows(b, Some(st), p[0], dtype, d, (max, add))
    })
}

/// Softmax over rows; with `st`, each step its own stage, else one stage (inside attention).
fn softmax_rows(
    b: &mut ComputationBuilder<'_>,
    mut st: Option<&mut Stages>,
    x: InstrId,
    dtype: ElementType,
    d: Dims,
    (max, add): (CompId, CompId),
) -> Result<InstrId, BuildError> {
    let mut mark = |b: &ComputationBuilder<'_>, stage| {
        if let Some(st) = st.as_deref_mut() {
            st.mark(b, stage);
        }
    };
    let mx = row_reduce(b, x, dtype, d, Opcode::Maximum, max)?;
    mark(b, "max");
    let sh = b.binary(Opcode::Subtract, x, mx)?;
    let e = b.unary(Opcode::Exponential, sh)?;
    mark(b, "exp");
    let s = row_reduce(b, e, dtype, d, Opcode::Add, add)?;
    mark(b, "sum");
    let y = b.binary(Opcode::Divide, e, s)?;
    mark(b, "div");
    Ok(y)
}

pub(super) fn layernorm(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let mut m = ModuleBuilder::new("layernorm");
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    let row = arr(dtype, &[d[1]]);
    staged(m, &[arr(dtype, &d), row.clone(), row], |b, st, p| {
        let (x, gamma, beta) = (p[0], p[1], p[2]);
        let (mean, n) = row_mean(b, x, dtype, d, add)?;
        st.mark(b, "mean");
        let xc = b.binary(Opcode::Subtract, x, mean)?;
        st.mark(b, "center");
        let var = row_variance(b, xc, n, dtype, d, add)?;
        st.mark(b, "var");
        let rstd = rsqrt_eps(b, var, dtype, d)?;
        let y = b.binary(Opcode::Multiply, xc, rstd)?;
        let g = b.broadcast(gamma, &d, &[1])?;
        let be = b.broadcast(beta, &d, &[1])?;
        let yg = b.binary(Opcode::Multiply, y, g)?;
        let out = b.binary(Opcode::Add, yg, be)?;
        st.mark(b, "scale");
        Ok(out)
    })
}

pub(super) fn rmsnorm(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let mut m = ModuleBuilder::new("rmsnorm");
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    staged(m, &[arr(dtype, &d), arr(dtype, &[d[1]])], |b, st, p| {
        let (x, gamma) = (p[0], p[1]);
        let sq = b.binary(Opcode::Multiply, x, x)?;
        let ss = row_reduce(b, sq, dtype, d, Opcode::Add, add)?;
        st.mark(b, "sumsq");
        let n = splat(b, dtype, 1.0 / d[1] as f64, &d)?;
        let ms = b.binary(Opcode::Multiply, ss, n)?;
        let r = rsqrt_eps(b, ms, dtype, d)?;
        let y = b.binary(Opcode::Multiply, x, r)?;
        let g = b.broadcast(gamma, &d, &[1])?;
        let out = b.binary(Opcode::Multiply, y, g)?;
        st.mark(b, "scale");
        Ok(out)
    })
}

pub(super) fn gelu_tanh(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let m = ModuleBuilder::new("gelu_tanh");
    staged(m, &[arr(dtype, &d)], |b, st, p| {
        let x = p[0];
        let x2 = b.binary(Opcode::Multiply, x, x)?;
        let x3 = b.binary(Opcode::Multiply, x2, x)?;
        let k = splat(b, dtype, 0.044715, &d)?;
        let kx3 = b.binary(Opcode::Multiply, k, x3)?;
        let s = b.binary(Opcode::Add, x, kx3)?;
        let c = splat(b, dtype, (2.0 / std::f64::consts::PI).sqrt(), &d)?;
        let inner = b.binary(Opcode::Multiply, c, s)?;
        st.mark(b, "inner");
        let t = b.unary(Opcode::Tanh, inner)?;
        st.mark(b, "tanh");
        gelu_out(b, st, x, t, dtype, d)
    })
}

pub(super) fn gelu_erf(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let m = ModuleBuilder::new("gelu_erf");
    staged(m, &[arr(dtype, &d)], |b, st, p| {
        let x = p[0];
        let c = splat(b, dtype, std::f64::consts::FRAC_1_SQRT_2, &d)?;
        let xs = b.binary(Opcode::Multiply, x, c)?;
        let e = b.unary(Opcode::Erf, xs)?;
        st.mark(b, "erf");
        gelu_out(b, st, x, e, dtype, d)
    })
}

fn matmul(
    b: &mut ComputationBuilder<'_>,
    x: InstrId,
    y: InstrId,
    lhs_contracting: i64,
    rhs_contracting: i64,
    dtype: ElementType,
) -> Result<InstrId, BuildError> {
    let dims = DotDims {
        lhs_batch: vec![],
        lhs_contracting: vec![lhs_contracting],
        rhs_batch: vec![],
        rhs_contracting: vec![rhs_contracting],
    };
    // narrow inputs, f32 accumulation, result back in the compute type
    let r = b.dot(x, y, dims, Some(acc(dtype)))?;
    to(b, r, dtype)
}

pub(super) fn attention(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let mut m = ModuleBuilder::new("attention");
    let max = m.scalar_reducer(Opcode::Maximum, acc(dtype))?;
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    let x = arr(dtype, &d);
    staged(m, &[x.clone(), x.clone(), x], |b, st, p| {
        let (q, k, v) = (p[0], p[1], p[2]);
        let s = matmul(b, q, k, 1, 1, dtype)?;
        st.mark(b, "scores");
        let sd = [d[0], d[0]];
        let scale = splat(b, dtype, 1.0 / (d[1] as f64).sqrt(), &sd)?;
        let scaled = b.binary(Opcode::Multiply, s, scale)?;
        let row = b.iota(S32, &sd, 0)?;
        let col = b.iota(S32, &sd, 1)?;
        let causal = b.compare(
            ComparisonDirection::Ge,
            crate::hlo::default_comparison_type(S32),
            row,
            col,
        )?;
        let neg = splat(b, dtype, -1e4, &sd)?;
        let masked = b.select(causal, scaled, neg)?;
        st.mark(b, "mask");
        let p = softmax_rows(b, None, masked, dtype, sd, (max, add))?;
        st.mark(b, "softmax");
        let out = matmul(b, p, v, 1, 0, dtype)?;
        st.mark(b, "out");
        Ok(out)
    })
}

pub(super) fn matmul_bias_relu(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let params = [
        arr(dtype, &d),
        arr(dtype, &[d[1], d[1]]),
        arr(dtype, &[d[1]]),
    ];
    let m = ModuleBuilder::new("matmul_bias_relu");
    staged(m, &params, |b, st, p| {
        let (x, w, bias) = (p[0], p[1], p[2]);
        let y = matmul(b, x, w, 1, 0, dtype)?;
        st.mark(b, "dot");
        bias_relu(b, st, y, bias, (&d, 1), dtype, "act")
    })
}

/// `dtype` is the narrow type; the data is f32.
pub(super) fn quantize(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let m = ModuleBuilder::new("quantize");
    staged(m, &[arr(F32, &d)], |b, st, p| {
        let x = p[0];
        let q = b.convert(x, dtype)?;
        st.mark(b, "quantize");
        let dq = b.convert(q, F32)?;
        st.mark(b, "dequantize");
        let r = b.binary(Opcode::Subtract, x, dq)?;
        let out = b.tuple(&[dq, r])?;
        st.mark(b, "residual");
        Ok(out)
    })
}

pub(super) fn embedding_segment_sum(
    dtype: ElementType,
    d: Dims,
) -> Result<StagedModule, BuildError> {
    let (segments, c) = (d[0], d[1]);
    let (vocab, n) = (2 * segments, 2 * segments);
    let mut m = ModuleBuilder::new("embedding_segment_sum");
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    let params = [arr(dtype, &[vocab, c]), arr(S32, &[n]), arr(S32, &[n])];
    staged(m, &params, |b, st, p| {
        let (table, ids, seg) = (p[0], p[1], p[2]);
        let rows = b.gather(
            table,
            ids,
            GatherDims {
                offset_dims: vec![1],
                collapsed_slice_dims: vec![0],
                start_index_map: vec![0],
                index_vector_dim: 1,
                operand_batching_dims: vec![],
                start_indices_batching_dims: vec![],
                slice_sizes: vec![1, c],
            },
            false,
        )?;
        st.mark(b, "gather");
        let half = splat(b, dtype, 0.5, &[n, c])?;
        let scaled = b.binary(Opcode::Multiply, rows, half)?;
        st.mark(b, "scale");
        let up = to(b, scaled, acc(dtype))?;
        let zeros = splat(b, acc(dtype), 0.0, &[segments, c])?;
        let sums = b.scatter(
            &[zeros],
            seg,
            &[up],
            ScatterDims {
                update_window_dims: vec![1],
                inserted_window_dims: vec![0],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
                input_batching_dims: vec![],
                scatter_indices_batching_dims: vec![],
            },
            add,
        )?;
        let out = to(b, sums, dtype)?;
        st.mark(b, "scatter");
        Ok(out)
    })
}

pub(super) fn topk(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let k = topk_k(d[1]);
    let mut m = ModuleBuilder::new("topk");
    let cmp = m.comparator(ComparisonDirection::Gt, &[dtype, S32])?;
    staged(m, &[arr(dtype, &d)], |b, st, p| {
        let idx = b.iota(S32, &d, 1)?;
        let sorted = b.sort(&[p[0], idx], 1, true, cmp)?;
        let vals = b.get_tuple_element(sorted, 0)?;
        let ids = b.get_tuple_element(sorted, 1)?;
        st.mark(b, "sort");
        let tv = b.slice(vals, &[0, 0], &[d[0], k], &[1, 1])?;
        let ti = b.slice(ids, &[0, 0], &[d[0], k], &[1, 1])?;
        let out = b.tuple(&[tv, ti])?;
        st.mark(b, "slice");
        Ok(out)
    })
}

pub(super) fn mean_variance(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let mut m = ModuleBuilder::new("mean_variance");
    let add = m.scalar_reducer(Opcode::Add, acc(dtype))?;
    staged(m, &[arr(dtype, &d)], |b, st, p| {
        let x = p[0];
        let (mean, n) = row_mean(b, x, dtype, d, add)?;
        st.mark(b, "mean");
        let xc = b.binary(Opcode::Subtract, x, mean)?;
        let var = row_variance(b, xc, n, dtype, d, add)?;
        let out = b.tuple(&[mean, var])?;
        st.mark(b, "var");
        Ok(out)
    })
}

pub(super) fn residual_chain(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let x = arr(dtype, &d);
    let m = ModuleBuilder::new("residual_chain");
    staged(m, &[x.clone(), x], |b, st, p| {
        let (x, y) = (p[0], p[1]);
        let h1 = b.binary(Opcode::Add, x, y)?;
        st.mark(b, "add1");
        let t = b.unary(Opcode::Tanh, h1)?;
        let h2 = b.binary(Opcode::Add, h1, t)?;
        st.mark(b, "add2");
        let p = b.binary(Opcode::Multiply, h2, y)?;
        let h3 = b.binary(Opcode::Add, h2, p)?;
        st.mark(b, "add3");
        Ok(h3)
    })
}

pub(super) fn conv_bias_relu(dtype: ElementType, d: Dims) -> Result<StagedModule, BuildError> {
    let (h, w, fin, fout) = (d[0] + 2, d[1], 2, 3);
    let params = [
        arr(dtype, &[1, h, w, fin]),
        arr(dtype, &[3, 3, fin, fout]),
        arr(dtype, &[fout]),
    ];
    let m = ModuleBuilder::new("conv_bias_relu");
    staged(m, &params, |b, st, p| {
        let (x, k, bias) = (p[0], p[1], p[2]);
        let same = WindowDim {
            pad_low: 1,
            pad_high: 1,
            ..WindowDim::new(3)
        };
        let y = b.convolution(
            x,
            k,
            ConvDims::feature_last(2),
            &[same, same],
            1,
            1,
            Some(acc(dtype)),
        )?;
        let y = to(b, y, dtype)?;
        st.mark(b, "conv");
        bias_relu(b, st, y, bias, (&[1, h, w, fout], 3), dtype, "relu")
    })
}
