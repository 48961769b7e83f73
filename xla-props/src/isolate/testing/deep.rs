//! A deep transformer-like module: `layers` blocks of layernorm, dot, tanh
//! GELU, dot and residual add, with one quantization-residual feedback
//! fusion (`x + gain * (x - f32(f16(x)))`) after the middle block. It is
//! built to test isolation of a bug the output masks: with a small `gain`
//! the feedback term is below half an ULP of the residual stream, so eliding
//! the f16 round trip inside that fusion (`x - x = 0`) leaves the output
//! bit for bit unchanged; with `gain = 1` the output shows it.

use super::transformer::{dims, layernorm, round_trip, saturate, scaled, Reducers, HIDDEN, SEQ};
use crate::hlo::{
    BuildError, CompId, ElementType::F32, FusionKind, Module, ModuleBuilder, Opcode, Shape,
};

/// The feedback gain that hides the quantization residual from the output:
/// `|gain * r| <= 2^-30 * 2^-11 |x|`, far below half an ULP of `x + gain * r`.
pub const MASKING_GAIN: f64 = 1.0 / (1u64 << 30) as f64;

/// A generated deep module and where its quantization fusion is.
#[derive(Clone, Debug)]
pub struct DeepTransformer {
    /// The module.
    pub module: Module,
    /// Blocks generated.
    pub layers: usize,
    /// The block after which the quantization feedback sits.
    pub quant_layer: usize,
    /// The fused computation of the quantization feedback.
    pub quant_computation: String,
    /// The fusion instruction calling it (in the entry computation).
    pub quant_fusion: String,
}

/// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, the tanh form of GELU.
fn gelu_tanh(m: &mut ModuleBuilder, name: &str) -> Result<CompId, BuildError> {
    let d = [SEQ, 2 * HIDDEN];
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, d.to_vec()))?;
        let splat = |b: &mut crate::hlo::ComputationBuilder<'_>, v: f64| {
            let c = b.constant_f64(F32, &[], &[v])?;
            b.broadcast(c, &d, &[])
        };
        let c = splat(b, 0.044715)?;
        let k = splat(b, (2.0 / std::f64::consts::PI).sqrt())?;
        let one = splat(b, 1.0)?;
        let half = splat(b, 0.5)?;
        let x2 = b.binary(Opcode::Multiply, x, x)?;
        let x3 = b.binary(Opcode::Multiply, x2, x)?;
        let t = b.binary(Opcode::Multiply, c, x3)?;
        let u = b.binary(Opcode::Add, x, t)?;
        let v = b.binary(Opcode::Multiply, k, u)?;
        let th = b.unary(Opcode::Tanh, v)?;
        let w = b.binary(Opcode::Add, one, th)?;
        let hx = b.binary(Opcode::Multiply, half, x)?;
        b.binary(Opcode::Multiply, hx, w)
    })
}

/// `gain * (c - f32(f16(c)))` with `c` the saturated input: the
/// quantization residual, as an error-feedback term.
fn quant_feedback(m: &mut ModuleBuilder, name: &str, gain: f64) -> Result<CompId, BuildError> {
    m.computation(name, |b| {
        let x = b.parameter(Shape::array(F32, vec![SEQ, HIDDEN]))?;
        let c = saturate(b, x)?;
        let dq = round_trip(b, c)?;
        let r = b.binary(Opcode::Subtract, c, dq)?;
        let g = b.constant_f64(F32, &[], &[gain])?;
        let gb = b.broadcast(g, &[SEQ, HIDDEN], &[])?;
        b.binary(Opcode::Multiply, r, gb)
    })
}

/// A deep module of `layers` blocks (`f32[8,16]` activations) with the
/// quantization feedback of gain `gain` after block `layers / 2`.
///
/// ```
/// use xla_props::isolate::testing::{deep_transformer, MASKING_GAIN};
/// let t = deep_transformer(4, MASKING_GAIN).unwrap();
/// assert_eq!((t.layers, t.quant_layer), (4, 2));
/// assert!(t.module.entry_computation().find(&t.quant_fusion).is_some());
/// ```
pub fn deep_transformer(layers: usize, gain: f64) -> Result<DeepTransformer, BuildError> {
    let mut m = ModuleBuilder::new(format!("deep_transformer_{layers}"));
    let r = Reducers::new(&mut m)?;
    let mut blocks = Vec::new();
    for l in 0..layers {
        blocks.push((
            layernorm(&mut m, &r, &format!("layernorm_{l}"))?,
            gelu_tanh(&mut m, &format!("gelu_{l}"))?,
        ));
    }
    let quant_layer = layers / 2;
    let quant_computation = format!("quant_feedback_{quant_layer}");
    let quant = quant_feedback(&mut m, &quant_computation, gain)?;
    let mut quant_id = None;
    let module = m.build("main", |b| {
        let mut x = scaled(b, &[SEQ, HIDDEN], 1.0 / 64.0)?;
        for (l, &(ln, gelu)) in blocks.iter().enumerate() {
            if l == quant_layer {
                let fb = b.fusion(FusionKind::Loop, quant, &[x])?;
                quant_id = Some(fb);
                x = b.binary(Opcode::Add, x, fb)?;
            }
            let gamma = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let beta = scaled(b, &[HIDDEN], 1.0 / 64.0)?;
            let y = b.fusion(FusionKind::Loop, ln, &[x, gamma, beta])?;
            // weights of about 1/sqrt(fan-in) keep the activations O(1)
            let w1 = scaled(b, &[HIDDEN, 2 * HIDDEN], 1.0 / 256.0)?;
            let h = b.dot(y, w1, dims(1, 0), None)?;
            let g = b.fusion(FusionKind::Loop, gelu, &[h])?;
            let w2 = scaled(
                b,
                &[2 * HIDDEN, HIDDEN],
                1.0 / 256.0 / std::f64::consts::SQRT_2,
            )?;
            let o = b.dot(g, w2, dims(1, 0), None)?;
            x = b.binary(Opcode::Add, x, o)?;
        }
        Ok(x)
    })?;
    let quant_fusion = quant_id
        .map(|id| module.entry_computation().instr(id).name.clone())
        .unwrap_or_default();
    Ok(DeepTransformer {
        module,
        layers,
        quant_layer,
        quant_computation,
        quant_fusion,
    })
}
