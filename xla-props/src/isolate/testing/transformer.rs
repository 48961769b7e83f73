//! A generator of transformer-like modules: layernorm, quantize/dequantize
//! with its residual, a fused qkv projection split by slices, scaled
//! attention scores, softmax, the attention dot, an output projection,
//! residual adds and a gated MLP; every elementwise stretch is a fusion.

use crate::hlo::{
    BuildError, CompId, ComputationBuilder, DotDims, ElementType::F16, ElementType::F32,
    FusionKind, InstrId, Module, ModuleBuilder, Opcode, Shape,
};

/// The fusion roles of one layer (the prefix of each fused computation's name).
pub const FUSION_ROLES: &[&str] = &[
    "layernorm",
    "quant_residual",
    "dequant",
    "query",
    "key",
    "value",
    "softmax",
    "layernorm2",
    "gelu",
];

/// A generated module and where its fusions are.
#[derive(Clone, Debug)]
pub struct Transformer {
    /// The module.
    pub module: Module,
    /// Layers generated.
    pub layers: usize,
    /// Per layer, `(role, fused computation name, fusion instruction name)`.
    pub fusions: Vec<Vec<(String, String, String)>>,
}

impl Transformer {
    /// The `(computation, fusion)` names of `role` in `layer`.
    pub fn fusion(&self, layer: usize, role: &str) -> Option<(&str, &str)> {
        self.fusions
            .get(layer)?
            .iter()
            .find(|(r, _, _)| r == role)
            .map(|(_, c, f)| (c.as_str(), f.as_str()))
    }
}

pub(super) const SEQ: i64 = 8;
pub(super) const HIDDEN: i64 = 16;
/// Weight scale: `64 * W` is one over the parameter range (64) times four (sqrt of HIDDEN).
const W: f64 = 1.0 / 64.0;

pub(super) fn dims(contract_lhs: i64, contract_rhs: i64) -> DotDims {
    DotDims {
        lhs_contracting: vec![contract_lhs],
        rhs_contracting: vec![contract_rhs],
        ..DotDims::default()
    }
}

pub(super) struct Reducers {
    pub(super) add: CompId,
    pub(super) max: CompId,
}

impl Reducers {
    /// The f32 add and max reducers, added to `m`.
    pub(super) fn new(m: &mut ModuleBuilder) -> Result<Reducers, BuildError> {
        Ok(Reducers {
            add: m.scalar_reducer(Opcode::Add, F32)?,
            max: m.scalar_reducer(Opcode::Maximum, F32)?,
        })
    }
}

pub(super) fn layernorm(
    m: &mut ModuleBuilder,
    r: &Reducers,
    name: &str,
) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, vec![SEQ, HIDDEN]))?;
        let gamma = b.parameter(Shape::array(F32, vec![HIDDEN]))?;
        let beta = b.parameter(Shape::array(F32, vec![HIDDEN]))?;
        let zero = b.constant_f64(F32, &[], &[0.0])?;
        let sum = b.reduce(&[x], &[zero], &[1], r.add)?;
        let inv_n = b.constant_f64(F32, &[], &[1.0 / HIDDEN as f64])?;
        let inv_nb = b.broadcast(inv_n, &[SEQ], &[])?;
        let mean = b.binary(Opcode::Multiply, sum, inv_nb)?;
        let mean_b = b.broadcast(mean, &[SEQ, HIDDEN], &[0])?;
        let xc = b.binary(Opcode::Subtract, x, mean_b)?;
        let sq = b.binary(Opcode::Multiply, xc, xc)?;
        let zero2 = b.constant_f64(F32, &[], &[0.0])?;
        let ss = b.reduce(&[sq], &[zero2], &[1], r.add)?;
        let inv_n2 = b.constant_f64(F32, &[], &[1.0 / HIDDEN as f64])?;
        let inv_n2b = b.broadcast(inv_n2, &[SEQ], &[])?;
        let var = b.binary(Opcode::Multiply, ss, inv_n2b)?;
        let eps = b.constant_f64(F32, &[], &[1e-5])?;
        let eps_b = b.broadcast(eps, &[SEQ], &[])?;
        let ve = b.binary(Opcode::Add, var, eps_b)?;
        let rstd = b.unary(Opcode::Rsqrt, ve)?;
        let rstd_b = b.broadcast(rstd, &[SEQ, HIDDEN], &[0])?;
        let norm = b.binary(Opcode::Multiply, xc, rstd_b)?;
        let g = b.broadcast(gamma, &[SEQ, HIDDEN], &[1])?;
        let scaled = b.binary(Opcode::Multiply, norm, g)?;
        let bb = b.broadcast(beta, &[SEQ, HIDDEN], &[1])?;
        b.binary(Opcode::Add, scaled, bb)
    })
}

/// A quantizer saturates to the range of its narrow type before converting
/// (which also tells input generation that the convert cannot overflow).
pub(super) fn saturate(b: &mut ComputationBuilder<'_>, x: InstrId) -> Result<InstrId, BuildError> {
    let lo = b.constant_f64(F32, &[], &[-60000.0])?;
    let lob = b.broadcast(lo, &[SEQ, HIDDEN], &[])?;
    let hi = b.constant_f64(F32, &[], &[60000.0])?;
    let hib = b.broadcast(hi, &[SEQ, HIDDEN], &[])?;
    b.clamp(lob, x, hib)
}

pub(super) fn round_trip(
    b: &mut ComputationBuilder<'_>,
    x: InstrId,
) -> Result<InstrId, BuildError> {
    let q = b.convert(x, F16)?;
    b.convert(q, F32)
}

fn quant_residual(m: &mut ModuleBuilder, name: &str) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, vec![SEQ, HIDDEN]))?;
        let c = saturate(b, x)?;
        let dq = round_trip(b, c)?;
        b.binary(Opcode::Subtract, c, dq)
    })
}

fn dequant(m: &mut ModuleBuilder, name: &str) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, vec![SEQ, HIDDEN]))?;
        let r = b.parameter(Shape::array(F32, vec![SEQ, HIDDEN]))?;
        let c = saturate(b, x)?;
        let dq = round_trip(b, c)?;
        b.binary(Opcode::Add, dq, r)
    })
}

/// `slice(qkv)[:, k*H:(k+1)*H]`, scaled by a constant for the query.
fn head(
    m: &mut ModuleBuilder,
    name: &str,
    k: i64,
    scale: Option<f64>,
) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let qkv = b.parameter(Shape::array(F32, vec![SEQ, 3 * HIDDEN]))?;
        let s = b.slice(qkv, &[0, k * HIDDEN], &[SEQ, (k + 1) * HIDDEN], &[1, 1])?;
        match scale {
            Some(c) => {
                let c = b.constant_f64(F32, &[], &[c])?;
                let cb = b.broadcast(c, &[SEQ, HIDDEN], &[])?;
                b.binary(Opcode::Multiply, s, cb)
            }
            None => b.copy(s),
        }
    })
}

fn softmax(m: &mut ModuleBuilder, r: &Reducers, name: &str) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let s = b.parameter(Shape::array(F32, vec![SEQ, SEQ]))?;
        let ninf = b.constant_f64(F32, &[], &[f64::NEG_INFINITY])?;
        let mx = b.reduce(&[s], &[ninf], &[1], r.max)?;
        let mxb = b.broadcast(mx, &[SEQ, SEQ], &[0])?;
        let d = b.binary(Opcode::Subtract, s, mxb)?;
        // `s - max(s)` is never positive, but interval arithmetic cannot see
        // that; the clamp tells input generation, so it need not narrow the
        // weights to keep `exp` finite and the sum positive
        let lo = b.constant_f64(F32, &[], &[-30.0])?;
        let lob = b.broadcast(lo, &[SEQ, SEQ], &[])?;
        let hi = b.constant_f64(F32, &[], &[0.0])?;
        let hib = b.broadcast(hi, &[SEQ, SEQ], &[])?;
        let dc = b.clamp(lob, d, hib)?;
        let e = b.unary(Opcode::Exponential, dc)?;
        let zero = b.constant_f64(F32, &[], &[0.0])?;
        let sum = b.reduce(&[e], &[zero], &[1], r.add)?;
        let sb = b.broadcast(sum, &[SEQ, SEQ], &[0])?;
        b.binary(Opcode::Divide, e, sb)
    })
}

/// `x * logistic(1.702 x)`.
fn gelu(m: &mut ModuleBuilder, name: &str) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, vec![SEQ, 2 * HIDDEN]))?;
        let c = b.constant_f64(F32, &[], &[1.702])?;
        let cb = b.broadcast(c, &[SEQ, 2 * HIDDEN], &[])?;
        let xs = b.binary(Opcode::Multiply, x, cb)?;
        let sig = b.unary(Opcode::Logistic, xs)?;
        b.binary(Opcode::Multiply, x, sig)
    })
}

/// `p * c` at the top level: parameters are drawn in `[-64, 64]`, and the
/// model wants weights of about `1/sqrt(fan_in)` so activations stay O(1)
/// and every layer's branch matters to the output.
pub(super) fn scaled(
    b: &mut ComputationBuilder<'_>,
    shape: &[i64],
    c: f64,
) -> Result<InstrId, BuildError> {
    let p = b.parameter(Shape::array(F32, shape.to_vec()))?;
    let k = b.constant_f64(F32, &[], &[c])?;
    let kb = b.broadcast(k, shape, &[])?;
    b.binary(Opcode::Multiply, p, kb)
}

/// A transformer-like module of at least `min_instructions` instructions
/// (counting fused computations), `f32[8,16]` activations.
///
/// ```
/// use xla_props::isolate::testing::transformer;
/// let t = transformer(300).unwrap();
/// assert!(t.module.instruction_count() >= 300);
/// assert!(t.fusion(0, "softmax").is_some());
/// ```
pub fn transformer(min_instructions: usize) -> Result<Transformer, BuildError> {
    // measure one layer, then build enough of them
    let one = build(1)?.module.instruction_count();
    let per_layer = build(2)?.module.instruction_count() - one;
    let layers = 1 + min_instructions
        .saturating_sub(one)
        .div_ceil(per_layer.max(1));
    build(layers)
}

fn build(layers: usize) -> Result<Transformer, BuildError> {
    let mut m = ModuleBuilder::new(format!("transformer_{layers}"));
    let r = Reducers::new(&mut m)?;
    let mut comps = Vec::new();
    for l in 0..layers {
        let c = [
            layernorm(&mut m, &r, &format!("layernorm_{l}"))?,
            quant_residual(&mut m, &format!("quant_residual_{l}"))?,
            dequant(&mut m, &format!("dequant_{l}"))?,
            head(
                &mut m,
                &format!("query_{l}"),
                0,
                Some(1.0 / (HIDDEN as f64).sqrt()),
            )?,
            head(&mut m, &format!("key_{l}"), 1, None)?,
            head(&mut m, &format!("value_{l}"), 2, None)?,
            softmax(&mut m, &r, &format!("softmax_{l}"))?,
            gelu(&mut m, &format!("gelu_{l}"))?,
            layernorm(&mut m, &r, &format!("layernorm2_{l}"))?,
        ];
        comps.push(c);
    }
    let names: Vec<Vec<String>> = comps
        .iter()
        .map(|c| {
            c.iter()
                .map(|&id| m.computations()[id.index()].name.clone())
                .collect()
        })
        .collect();
    let mut fusion_ids: Vec<Vec<(String, String, InstrId)>> = Vec::new();
    let module = m.build("main", |b| {
        let mut x = scaled(b, &[SEQ, HIDDEN], 1.0 / 64.0)?;

        for (l, c) in comps.iter().enumerate() {
            let mut ids = Vec::new();
            let mut fuse = |b: &mut ComputationBuilder<'_>,
                            k: usize,
                            role: &str,
                            ops: &[InstrId]|
             -> Result<InstrId, BuildError> {
                let f = b.fusion(FusionKind::Loop, c[k], ops)?;
                ids.push((role.to_string(), names[l][k].clone(), f));
                Ok(f)
            };
            let gamma = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let beta = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let y = fuse(b, 0, "layernorm", &[x, gamma, beta])?;
            let r = fuse(b, 1, "quant_residual", &[y])?;
            let y2 = fuse(b, 2, "dequant", &[y, r])?;

            let wqkv = scaled(b, &[HIDDEN, 3 * HIDDEN], W / 4.0)?;
            let qkv = b.dot(y2, wqkv, dims(1, 0), None)?;
            let q = fuse(b, 3, "query", &[qkv])?;
            let k = fuse(b, 4, "key", &[qkv])?;
            let v = fuse(b, 5, "value", &[qkv])?;
            let scores = b.dot(q, k, dims(1, 1), None)?;
            let p = fuse(b, 6, "softmax", &[scores])?;
            let attn = b.dot(p, v, dims(1, 0), None)?;
            let wo = scaled(b, &[HIDDEN, HIDDEN], W / 4.0)?;
            let o = b.dot(attn, wo, dims(1, 0), None)?;
            let x1 = b.binary(Opcode::Add, x, o)?;
            let gamma2 = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let beta2 = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let y3 = fuse(b, 8, "layernorm2", &[x1, gamma2, beta2])?;
            let w1 = scaled(b, &[HIDDEN, 2 * HIDDEN], W / 4.0)?;
            let h = b.dot(y3, w1, dims(1, 0), None)?;
            let g = fuse(b, 7, "gelu", &[h])?;
            let w2 = scaled(b, &[2 * HIDDEN, HIDDEN], W / 4.0 / std::f64::consts::SQRT_2)?;
            let mlp = b.dot(g, w2, dims(1, 0), None)?;
            let x2 = b.binary(Opcode::Add, x1, mlp)?;
            // activation clipping keeps the residual stream's interval from
            // compounding over layers, so input generation has no reason to
            // narrow a later layer's weights to zero
            let lo = b.constant_f64(F32, &[], &[-64.0])?;
            let lob = b.broadcast(lo, &[SEQ, HIDDEN], &[])?;
            let hi = b.constant_f64(F32, &[], &[64.0])?;
            let hib = b.broadcast(hi, &[SEQ, HIDDEN], &[])?;
            x = b.clamp(lob, x2, hib)?;
            fusion_ids.push(ids);
        }
        Ok(x)
    })?;
    let entry = module.entry_computation();
    let fusions = fusion_ids
        .into_iter()
        .map(|layer| {
            layer
                .into_iter()
                .map(|(role, comp, id)| (role, comp, entry.instr(id).name.clone()))
                .collect()
        })
        .collect();
    Ok(Transformer {
        module,
        layers,
        fusions,
    })
}
