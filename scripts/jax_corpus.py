"""Dumps the HLO of small JAX programs before and after XLA:CPU optimization.

Run by scripts/gen-jax-corpus.sh (which pins the versions); writes
`NAME.before.hlo` (`lowered.as_text(dialect="hlo")`) and `NAME.after.hlo`
(`lowered.compile().as_text()`) for every program into the directory given
as the first argument. Every program is our own; shapes are kept small so the
dumps stay small and the exact reference evaluates them quickly.
"""

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

f32, f16, bf16, i32, i8 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32, jnp.int8


def s(shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


def attention(q, k, v):
    scores = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    return jax.nn.softmax(scores, axis=-1) @ v


def multi_head_attention(x, wq, wk, wv):
    def heads(w):
        return (x @ w).reshape(x.shape[0], 2, -1).transpose(1, 0, 2)

    q, k, v = heads(wq), heads(wk), heads(wv)
    p = jax.nn.softmax(jnp.einsum("hqd,hkd->hqk", q, k) / 2.0, axis=-1)
    return jnp.einsum("hqk,hkd->qhd", p, v).reshape(x.shape[0], -1)


def batched_matmul(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def rms_norm(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def l2_normalize(x):
    return x * lax.rsqrt(jnp.sum(x * x, axis=-1, keepdims=True))


def gelu_tanh(x):
    return jax.nn.gelu(x, approximate=True)


def gelu_erf(x):
    return jax.nn.gelu(x, approximate=False)


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def logsumexp(x):
    return jax.scipy.special.logsumexp(x, axis=-1)


def silu_swiglu(x, w1, w2):
    return jax.nn.silu(x @ w1) * (x @ w2)


def conv2d(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def conv_strided(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))


def depthwise_conv(x, w):
    return lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=x.shape[-1]
    )


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def avg_pool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0


def scan_cumulative(xs):
    def step(c, x):
        c = jnp.tanh(c * 0.5 + x)
        return c, c * 2.0

    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)


def while_loop(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 0.9 + 1.0), (0, x))[1]


def fori_loop(x):
    return lax.fori_loop(0, 4, lambda i, a: a + jnp.sin(a) * i, x)


def cond(p, x):
    return lax.cond(p > 0, lambda y: jnp.exp(-y * y), lambda y: jnp.cos(y), x)


def switch(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)


def gather_negative(x, idx):
    return x[idx]


def take_along(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


def scatter_add(x, idx, upd):
    return x.at[idx].add(upd)


def scatter_set(x, idx, upd):
    return x.at[idx].set(upd)


def dynamic_slice_negative(x, i):
    return lax.dynamic_slice_in_dim(x, i, 3, axis=0)


def dynamic_index_negative(x, i):
    return x[i]


def dynamic_update_slice(x, u, i):
    return lax.dynamic_update_slice_in_dim(x, u, i, axis=0)


def embedding_sum(table, ids):
    return jnp.sum(table[ids], axis=1)


def segment_sum(data, seg):
    return jax.ops.segment_sum(data, seg, num_segments=4)


def sort(x):
    return jnp.sort(x, axis=-1)


def argsort(x):
    return jnp.argsort(x, axis=-1)


def top_k(x):
    return lax.top_k(x, 3)


def cumsum(x):
    return jnp.cumsum(x, axis=0)


def cumprod_int(x):
    return jnp.cumprod(x, axis=-1)


def quantize_int8(x):
    scale = jnp.max(jnp.abs(x)) / 127.0
    q = jnp.clip(jnp.round(x / scale), -127, 127).astype(i8)
    return q, q.astype(f32) * scale


def quant_f16_residual(x):
    return x - x.astype(f16).astype(f32)


def int8_matmul(a, b):
    return lax.dot(a, b, preferred_element_type=i32)


def integer_ops(a, b):
    return (a * 3 + b) // 4, a % 5, jnp.right_shift(a, 2), a & b, jnp.abs(a), jnp.clip(a - b, -10, 10)


def bitcast_f32_s32(x):
    return lax.bitcast_convert_type(x, i32) & 0x7FFFFFFF


def bitcast_roundtrip(x):
    i = lax.bitcast_convert_type(x, jnp.uint32)
    return lax.bitcast_convert_type(i ^ jnp.uint32(0x80000000), f32)


def bitcast_f16_pair(x):
    return lax.bitcast_convert_type(x, f16)


def transpose_reshape(x):
    return x.transpose(2, 0, 1).reshape(4, -1) * 2.0


def reductions(x):
    return jnp.max(x, axis=0), jnp.min(x, axis=1), jnp.prod(x[:2, :3]), jnp.argmax(x, axis=1)


def where_select_chain(x):
    return jnp.where(x > 1.0, jnp.log(x), jnp.where(x < -1.0, -jnp.log(-x), x))


def erf_inv_style(x):
    return jax.scipy.special.erf(x) + jax.scipy.special.erfc(x * 0.5)


def clip_and_pad(x):
    return jnp.pad(jnp.clip(x, -1.0, 1.0), ((1, 2), (0, 1)), constant_values=0.5)


def concat_slice(a, b):
    c = jnp.concatenate([a, b], axis=0)
    return c[1:-1:2], jnp.flip(c, axis=1)


def iota_onehot(labels):
    return jax.nn.one_hot(labels, 6, dtype=f32)


def mixed_precision(x, w):
    return (x.astype(bf16) @ w.astype(bf16)).astype(f32)


def softmax_f16(x):
    return jax.nn.softmax(x, axis=-1)


def softmax_bf16(x):
    return jax.nn.softmax(x, axis=-1)


def adam_step(p, g, m, v):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return p - 0.01 * m / (jnp.sqrt(v) + 1e-8), m, v


def mlp_grad(x, w1, w2):
    def loss(ws):
        a, b = ws
        return jnp.sum(jnp.tanh(x @ a) @ b)

    return jax.grad(loss)((w1, w2))


def layer_norm_grad(x):
    return jax.grad(lambda y: jnp.sum(layer_norm(y, 1.0, 0.0) ** 2))(x)


PROGRAMS = {
    # models
    "mlp": (mlp, [s((4, 8)), s((8, 16)), s((16,)), s((16, 4)), s((4,))]),
    "attention": (attention, [s((6, 8)), s((6, 8)), s((6, 8))]),
    "multi_head_attention": (multi_head_attention, [s((5, 8)), s((8, 8)), s((8, 8)), s((8, 8))]),
    "batched_matmul": (batched_matmul, [s((3, 4, 5)), s((3, 5, 2))]),
    "cross_entropy": (cross_entropy, [s((6, 10)), s((6,), i32)]),
    "swiglu": (silu_swiglu, [s((4, 8)), s((8, 8)), s((8, 8))]),
    "adam_step": (adam_step, [s((16,)), s((16,)), s((16,)), s((16,))]),
    "mlp_grad": (mlp_grad, [s((4, 8)), s((8, 6)), s((6, 3))]),
    # normalization and activations
    "layer_norm": (layer_norm, [s((4, 16)), s((16,)), s((16,))]),
    "layer_norm_grad": (layer_norm_grad, [s((4, 16))]),
    "rms_norm": (rms_norm, [s((4, 16)), s((16,))]),
    "l2_normalize": (l2_normalize, [s((4, 16))]),
    "gelu_tanh": (gelu_tanh, [s((64,))]),
    "gelu_erf": (gelu_erf, [s((64,))]),
    "softmax_f32": (softmax, [s((4, 16))]),
    "softmax_f16": (softmax_f16, [s((4, 16), f16)]),
    "softmax_bf16": (softmax_bf16, [s((4, 16), bf16)]),
    "logsumexp": (logsumexp, [s((4, 16))]),
    "erf_style": (erf_inv_style, [s((32,))]),
    "where_select_chain": (where_select_chain, [s((32,))]),
    # convolution and pooling
    "conv2d": (conv2d, [s((1, 6, 6, 3)), s((3, 3, 3, 4))]),
    "conv_strided": (conv_strided, [s((2, 2, 7, 7)), s((3, 2, 3, 3))]),
    "depthwise_conv": (depthwise_conv, [s((1, 6, 6, 4)), s((3, 3, 1, 4))]),
    "max_pool": (max_pool, [s((1, 6, 6, 2))]),
    "avg_pool": (avg_pool, [s((1, 5, 5, 2))]),
    # control flow
    "scan": (scan_cumulative, [s((5, 4))]),
    "while_loop": (while_loop, [s((8,))]),
    "fori_loop": (fori_loop, [s((8,))]),
    "cond": (cond, [s((), f32), s((8,))]),
    "switch": (switch, [s((), i32), s((8,))]),
    # indexing
    "gather_negative": (gather_negative, [s((8, 3)), s((4,), i32)]),
    "take_along_axis": (take_along, [s((4, 6)), s((4, 2), i32)]),
    "scatter_add": (scatter_add, [s((8, 3)), s((4,), i32), s((4, 3))]),
    "scatter_set": (scatter_set, [s((8,)), s((3,), i32), s((3,))]),
    "dynamic_slice_negative": (dynamic_slice_negative, [s((8, 2)), s((), i32)]),
    "dynamic_index_negative": (dynamic_index_negative, [s((6, 4)), s((), i32)]),
    "dynamic_update_slice": (dynamic_update_slice, [s((8, 2)), s((2, 2)), s((), i32)]),
    "embedding_sum": (embedding_sum, [s((10, 4)), s((3, 5), i32)]),
    "segment_sum": (segment_sum, [s((10, 3)), s((10,), i32)]),
    "one_hot": (iota_onehot, [s((5,), i32)]),
    # ordering
    "sort": (sort, [s((4, 8))]),
    "argsort": (argsort, [s((4, 8))]),
    "top_k": (top_k, [s((3, 10))]),
    "cumsum": (cumsum, [s((8, 3))]),
    "cumprod_int": (cumprod_int, [s((3, 5), i32)]),
    # numeric formats
    "quantize_int8": (quantize_int8, [s((4, 8))]),
    "quant_f16_residual": (quant_f16_residual, [s((32,))]),
    "int8_matmul": (int8_matmul, [s((4, 8), i8), s((8, 3), i8)]),
    "integer_ops": (integer_ops, [s((16,), i32), s((16,), i32)]),
    "bitcast_f32_s32": (bitcast_f32_s32, [s((16,))]),
    "bitcast_roundtrip": (bitcast_roundtrip, [s((16,))]),
    "bitcast_f16_pair": (bitcast_f16_pair, [s((8, 2), jnp.uint16)]),
    "mixed_precision": (mixed_precision, [s((4, 8)), s((8, 4))]),
    # shapes and misc
    "transpose_reshape": (transpose_reshape, [s((2, 3, 4))]),
    "reductions": (reductions, [s((4, 5))]),
    "clip_and_pad": (clip_and_pad, [s((3, 4))]),
    "concat_slice": (concat_slice, [s((3, 4)), s((4, 4))]),
}


# source locations in the optimized dumps name this file: keep them relative
# to the repository, so the dumps do not depend on where it is checked out
ROOT = str(Path(__file__).resolve().parent.parent) + "/"


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, (fn, args) in PROGRAMS.items():
        lowered = jax.jit(fn).lower(*args)
        before = lowered.as_text(dialect="hlo")
        after = lowered.compile().as_text()
        (out / f"{name}.before.hlo").write_text(before.replace(ROOT, ""))
        (out / f"{name}.after.hlo").write_text(after.replace(ROOT, ""))
    print(f"{len(PROGRAMS)} programs, jax {jax.__version__}, jaxlib {jax.lib.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
