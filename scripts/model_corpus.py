"""Dumps the HLO of real ML models (forward pass and train step).

Run by scripts/gen-model-corpus.sh (which pins the versions). Every model is
built from a library's own modules (flax.linen, flax.nnx, equinox.nn,
haiku); for each one four files are written into the directory given as the
first argument:

- `NAME.fwd.before.hlo`, `NAME.fwd.after.hlo`: the forward pass (inference
  mode), `lowered.as_text(dialect="hlo")` and `lowered.compile().as_text()`;
- `NAME.train.before.hlo`, `NAME.train.after.hlo`: one full train step:
  loss, `jax.value_and_grad`, an optax update and `optax.apply_updates`,
  returning the new parameters, the new model state (batch statistics), the
  new optimizer state and the loss.

Weights, model state, optimizer state, inputs and labels are all parameters
of the entry computation (the pytrees are flattened by `jax.jit`); nothing is
baked in as a constant and nothing is random inside the jitted functions.
Shapes are abstract (`jax.ShapeDtypeStruct`): no model is ever run here.
`MANIFEST.tsv` (file, library, kind, stage, instructions) is written beside
the dumps. `model_corpus.py --table DIR` prints the README's table of
models from DIR/MANIFEST.tsv.
"""

import functools
import re
import sys
from pathlib import Path

import equinox as eqx
import flax
import flax.linen as nn
import haiku as hk
import jax
import jax.numpy as jnp
import jmp
import optax
from flax import nnx
from jax import lax

f32, bf16, i32 = jnp.float32, jnp.bfloat16, jnp.int32


def s(shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def abstract(tree):
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), tree)


def zeros(tree):
    return jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), tree)


KEY = jax.random.key(0)


# --------------------------------------------------------------------------
# losses


def mse(out, y):
    return jnp.mean((out.astype(f32) - y) ** 2)


def xent(logits, labels):
    """Softmax cross-entropy with integer labels; `logits` may carry extra
    leading axes (a language model's [batch, time, vocab])."""
    return optax.softmax_cross_entropy_with_integer_labels(logits.astype(f32), labels).mean()


# --------------------------------------------------------------------------
# one model: how to apply it, its abstract parameters and state


class Model:
    """`apply(params, state, x, train) -> (out, new_state)`; `params` are the
    trained leaves, `state` the rest (batch statistics, rng counters), both
    pytrees of `ShapeDtypeStruct`."""

    def __init__(self, name, library, what, dtype, opt_name, opt, apply, params, state, x, y, loss):
        self.name, self.library, self.what, self.dtype = name, library, what, dtype
        self.opt_name, self.opt = opt_name, opt
        self.apply, self.params, self.state, self.x, self.y, self.loss = apply, params, state, x, y, loss

    def fwd(self):
        def fwd(params, state, x):
            return self.apply(params, state, x, False)[0]

        fwd.__name__ = f"{self.name}_fwd"
        return fwd, (self.params, self.state, self.x)

    def train(self):
        opt, apply, loss = self.opt, self.apply, self.loss

        def train(params, state, opt_state, x, y):
            def loss_fn(p):
                out, new_state = apply(p, state, x, True)
                return loss(out, y), new_state

            (l, new_state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
            updates, new_opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), new_state, new_opt_state, l

        train.__name__ = f"{self.name}_train"
        opt_state = jax.eval_shape(opt.init, self.params)
        return train, (self.params, self.state, opt_state, self.x, self.y)


MODELS = {}


def model(name, library, what, dtype, opt_name, opt, x, y, loss):
    """Registers a builder returning `(apply, params, state)`."""

    def register(build):
        def make():
            apply, params, state = build(x)
            return Model(name, library, what, dtype, opt_name, opt, apply, abstract(params), abstract(state), x, y, loss)

        assert name not in MODELS, name
        MODELS[name] = (library, make, (what, dtype, opt_name))
        return build

    return register


# adapters: each library's way of turning a module into apply/params/state


def linen(module, x, collections=()):
    """A flax.linen module whose `__call__(x, train)`; `collections` are the
    mutable non-parameter collections (batch_stats)."""
    variables = jax.eval_shape(lambda: module.init(KEY, zeros(x), False))
    params = variables["params"]
    state = {c: variables[c] for c in collections}

    def apply(p, st, x, train):
        if train and collections:
            out, upd = module.apply({"params": p, **st}, x, True, mutable=list(collections))
            return out, dict(upd)
        return module.apply({"params": p, **st}, x, train), st

    return apply, params, state


def nnx_model(ctor, x):
    """A flax.nnx module whose `__call__(x, train)`; parameters are the
    `nnx.Param`s, state everything else (batch statistics)."""
    abstract_model = nnx.eval_shape(lambda: ctor(nnx.Rngs(0)))
    graphdef, params, state = nnx.split(abstract_model, nnx.Param, ...)

    def apply(p, st, x, train):
        m = nnx.merge(graphdef, p, st, copy=True)
        out = m(x, train)
        return out, nnx.state(m, nnx.Not(nnx.Param))

    return apply, params, state


def is_leaf_array(a):
    return isinstance(a, (jax.Array, jax.ShapeDtypeStruct))


def eqx_model(ctor, x, stateful=False):
    """An equinox module whose `__call__(x, state, train) -> (out, state)`
    when `stateful` (eqx.nn.State for batch norm), else `__call__(x, train)`;
    the module handles a whole batch itself (most vmap inside)."""
    if stateful:
        m, st = eqx.filter_eval_shape(eqx.nn.make_with_state(ctor), KEY)
    else:
        m, st = eqx.filter_eval_shape(ctor, KEY), None
    params, static = eqx.partition(m, is_leaf_array)

    def apply(p, st, x, train):
        module = eqx.combine(p, static)
        if stateful:
            return module(x, st, train)
        return module(x, train), st

    return apply, params, st


def haiku_model(fn, x):
    """A haiku function `fn(x, train)`, transformed with state (batch
    statistics live in haiku's state); no rng."""
    t = hk.without_apply_rng(hk.transform_with_state(fn))
    params, state = jax.eval_shape(lambda: t.init(KEY, zeros(x), True))

    def apply(p, st, x, train):
        return t.apply(p, st, x, train)

    return apply, params, state


# --------------------------------------------------------------------------
# optimizers (optax); every state is a parameter of the train step


def warmup_cosine(peak):
    return optax.warmup_cosine_decay_schedule(0.0, peak, warmup_steps=10, decay_steps=100)


def causal(t):
    return jnp.tril(jnp.ones((t, t), jnp.bool_))


# --------------------------------------------------------------------------
# flax.linen models


class LinenMLP(nn.Module):
    features: tuple = (64, 64, 32, 10)

    @nn.compact
    def __call__(self, x, train):
        for f in self.features[:-1]:
            x = nn.gelu(nn.Dense(f)(x))
        return nn.Dense(self.features[-1])(x)


model("linen_mlp", "flax.linen", "4-layer MLP, GELU", "f32", "adam",
      optax.adam(1e-3), s((8, 16)), s((8,), i32), xent)(
    lambda x: linen(LinenMLP(), x))


class LinenCNN(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        for ch in (8, 16):
            x = nn.Conv(ch, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
            x = nn.avg_pool(nn.relu(x), (2, 2), (2, 2))
        return nn.Dense(10)(x.reshape(x.shape[0], -1))


model("linen_cnn_bn", "flax.linen", "2 conv + BatchNorm + avg-pool blocks, dense head", "f32",
      "clip_by_global_norm + sgd(momentum=0.9)",
      optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1, momentum=0.9)),
      s((4, 8, 8, 3)), s((4,), i32), xent)(
    lambda x: linen(LinenCNN(), x, ("batch_stats",)))


class LinenResBlock(nn.Module):
    ch: int
    stride: int

    @nn.compact
    def __call__(self, x, train):
        norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.9)
        y = nn.Conv(self.ch, (3, 3), self.stride, use_bias=False)(x)
        y = nn.relu(norm()(y))
        y = nn.Conv(self.ch, (3, 3), use_bias=False)(y)
        y = norm(scale_init=nn.initializers.zeros)(y)
        if x.shape[-1] != self.ch or self.stride != 1:
            x = norm()(nn.Conv(self.ch, (1, 1), self.stride, use_bias=False)(x))
        return nn.relu(x + y)


class LinenResNet(nn.Module):
    stages: tuple = ((8, 1), (8, 1), (16, 2), (16, 1), (32, 2))

    @nn.compact
    def __call__(self, x, train):
        x = nn.Conv(8, (3, 3), use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(x))
        x = nn.max_pool(x, (3, 3), (1, 1), padding="SAME")
        for ch, stride in self.stages:
            x = LinenResBlock(ch, stride)(x, train)
        return nn.Dense(10)(x.mean(axis=(1, 2)))


model("linen_resnet", "flax.linen", "ResNet: stem conv+BN+max-pool, 5 residual blocks with BatchNorm", "f32",
      "adamw", optax.adamw(1e-3, weight_decay=1e-4), s((2, 8, 8, 3)), s((2,), i32), xent)(
    lambda x: linen(LinenResNet(), x, ("batch_stats",)))


class LinenEncoderBlock(nn.Module):
    heads: int
    mlp: int

    @nn.compact
    def __call__(self, x, mask=None):
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(self.heads, deterministic=True)(h, h, mask=mask)
        h = nn.Dense(self.mlp)(nn.LayerNorm()(x))
        return x + nn.Dense(x.shape[-1])(nn.gelu(h))


class LinenEncoder(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        x = nn.Dense(32)(x)
        x = x + self.param("pos", nn.initializers.normal(0.02), x.shape[1:])
        for _ in range(3):
            x = LinenEncoderBlock(4, 64)(x)
        return nn.Dense(5)(nn.LayerNorm()(x).mean(axis=1))


model("linen_transformer", "flax.linen",
      "transformer encoder: 3 pre-LN blocks (MultiHeadDotProductAttention, 4 heads), mean-pool classifier", "f32",
      "adamw, warmup-cosine schedule", optax.adamw(warmup_cosine(1e-3)), s((4, 8, 16)), s((4,), i32), xent)(
    lambda x: linen(LinenEncoder(), x))


class LinenCausalLM(nn.Module):
    vocab: int = 32
    d: int = 32
    layers: int = 3

    @nn.compact
    def __call__(self, tokens, train):
        mp = dict(dtype=bf16, param_dtype=f32)
        embed = nn.Embed(self.vocab, self.d, **mp)
        x = embed(tokens)
        x = x + self.param("pos", nn.initializers.normal(0.02), (tokens.shape[1], self.d)).astype(bf16)
        mask = nn.make_causal_mask(tokens)
        for _ in range(self.layers):
            h = nn.RMSNorm(**mp)(x)
            x = x + nn.MultiHeadDotProductAttention(4, deterministic=True, **mp)(h, h, mask=mask)
            h = nn.RMSNorm(**mp)(x)
            x = x + nn.Dense(self.d, **mp)(nn.silu(nn.Dense(4 * self.d, **mp)(h)))
        return embed.attend(nn.RMSNorm(**mp)(x))


model("linen_causal_lm", "flax.linen",
      "causal LM: Embed, learned positions, 3 decoder blocks (causal mask, RMSNorm), tied logits", "bf16 compute, f32 params",
      "clip_by_global_norm + adam", optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3)),
      s((4, 8), i32), s((4, 8), i32), xent)(
    lambda x: linen(LinenCausalLM(), x))


class LinenLSTM(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        x = nn.RNN(nn.OptimizedLSTMCell(32))(x)
        x = nn.RNN(nn.OptimizedLSTMCell(32))(x)
        return nn.Dense(4)(x[:, -1])


model("linen_lstm", "flax.linen", "2-layer LSTM (nn.RNN over OptimizedLSTMCell, scan), 12 steps", "f32", "lion",
      optax.lion(1e-4), s((4, 12, 8)), s((4,), i32), xent)(
    lambda x: linen(LinenLSTM(), x))


class LinenBiGRU(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        t = x.shape[1]
        x = nn.Bidirectional(nn.RNN(nn.GRUCell(16), unroll=t), nn.RNN(nn.GRUCell(16), unroll=t))(x)
        return nn.Dense(3)(x)


model("linen_bigru_unrolled", "flax.linen", "bidirectional GRU (nn.Bidirectional, scan fully unrolled), per-step regression",
      "f32", "rmsprop(centered, momentum)", optax.rmsprop(1e-3, momentum=0.9, centered=True),
      s((2, 6, 8)), s((2, 6, 3)), mse)(
    lambda x: linen(LinenBiGRU(), x))


class LinenAutoencoder(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        h = nn.swish(nn.GroupNorm(4)(nn.Conv(8, (3, 3), strides=2)(x)))
        h = nn.swish(nn.GroupNorm(4)(nn.Conv(16, (3, 3), strides=2)(h)))
        z = nn.Dense(8)(h.reshape(h.shape[0], -1))
        h = nn.Dense(2 * 2 * 16)(z).reshape(-1, 2, 2, 16)
        h = nn.swish(nn.GroupNorm(4)(nn.ConvTranspose(8, (3, 3), strides=(2, 2))(h)))
        return nn.ConvTranspose(3, (3, 3), strides=(2, 2))(h)


model("linen_conv_autoencoder", "flax.linen", "conv autoencoder: strided Conv + GroupNorm down, ConvTranspose up",
      "f32", "adam", optax.adam(1e-3), s((2, 8, 8, 3)), s((2, 8, 8, 3)), mse)(
    lambda x: linen(LinenAutoencoder(), x))


class LinenResMLP(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        p = dict(dtype=bf16, param_dtype=bf16)
        x = nn.Dense(32, **p)(x)
        for _ in range(3):
            h = nn.Dense(64, **p)(nn.RMSNorm(**p)(x))
            x = x + nn.Dense(32, **p)(nn.relu(h))
        return nn.Dense(4, **p)(nn.RMSNorm(**p)(x))


model("linen_rmsnorm_mlp_bf16", "flax.linen", "residual MLP, 3 RMSNorm blocks, all in bf16", "bf16 params and compute",
      "adafactor (factored)", optax.adafactor(1e-2, min_dim_size_to_factor=8), s((8, 16)), s((8, 4)), mse)(
    lambda x: linen(LinenResMLP(), x))


class LinenViT(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        x = nn.Conv(32, (2, 2), strides=(2, 2), padding="VALID")(x)
        x = x.reshape(x.shape[0], -1, 32)
        cls = self.param("cls", nn.initializers.zeros, (1, 1, 32))
        x = jnp.concatenate([jnp.broadcast_to(cls, (x.shape[0], 1, 32)), x], axis=1)
        x = x + self.param("pos", nn.initializers.normal(0.02), x.shape[1:])
        for _ in range(2):
            x = LinenEncoderBlock(4, 64)(x)
        return nn.Dense(10)(nn.LayerNorm()(x[:, 0]))


model("linen_vit", "flax.linen", "ViT: 2x2 patch conv, class token, 2 encoder blocks", "f32", "adabelief",
      optax.adabelief(1e-3), s((2, 8, 8, 3)), s((2,), i32), xent)(
    lambda x: linen(LinenViT(), x))


# --------------------------------------------------------------------------
# flax.nnx models


class NnxMLP(nnx.Module):
    def __init__(self, rngs, sizes=(16, 64, 64, 32)):
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes, sizes[1:])])
        self.norms = nnx.List([nnx.LayerNorm(b, rngs=rngs) for b in sizes[1:]])
        self.head = nnx.Linear(sizes[-1], 10, rngs=rngs)

    def __call__(self, x, train):
        for layer, norm in zip(self.layers, self.norms):
            x = nnx.relu(norm(layer(x)))
        return self.head(x)


model("nnx_mlp_layernorm", "flax.nnx", "3 Linear + LayerNorm + ReLU layers, linear head", "f32", "adamw",
      optax.adamw(1e-3, weight_decay=1e-2), s((8, 16)), s((8,), i32), xent)(
    lambda x: nnx_model(NnxMLP, x))


class NnxCNN(nnx.Module):
    def __init__(self, rngs):
        self.conv1 = nnx.Conv(3, 8, (3, 3), rngs=rngs)
        self.bn1 = nnx.BatchNorm(8, rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, (3, 3), strides=(2, 2), rngs=rngs)
        self.bn2 = nnx.BatchNorm(16, rngs=rngs)
        self.head = nnx.Linear(16, 10, rngs=rngs)

    def __call__(self, x, train):
        x = nnx.relu(self.bn1(self.conv1(x), use_running_average=not train))
        x = nnx.max_pool(x, (2, 2), (2, 2))
        x = nnx.relu(self.bn2(self.conv2(x), use_running_average=not train))
        return self.head(x.mean(axis=(1, 2)))


model("nnx_cnn_bn", "flax.nnx", "2-conv CNN with BatchNorm, max-pool, global average pool", "f32",
      "sgd(momentum=0.9, nesterov)", optax.sgd(0.05, momentum=0.9, nesterov=True),
      s((4, 8, 8, 3)), s((4,), i32), xent)(
    lambda x: nnx_model(NnxCNN, x))


class NnxResBlock(nnx.Module):
    def __init__(self, cin, cout, stride, rngs):
        self.conv1 = nnx.Conv(cin, cout, (3, 3), strides=stride, use_bias=False, rngs=rngs)
        self.bn1 = nnx.BatchNorm(cout, momentum=0.9, rngs=rngs)
        self.conv2 = nnx.Conv(cout, cout, (3, 3), use_bias=False, rngs=rngs)
        self.bn2 = nnx.BatchNorm(cout, momentum=0.9, rngs=rngs)
        if cin != cout or stride != 1:
            self.proj = nnx.Conv(cin, cout, (1, 1), strides=stride, use_bias=False, rngs=rngs)
            self.proj_bn = nnx.BatchNorm(cout, momentum=0.9, rngs=rngs)
        else:
            self.proj = self.proj_bn = None

    def __call__(self, x, train):
        y = nnx.relu(self.bn1(self.conv1(x), use_running_average=not train))
        y = self.bn2(self.conv2(y), use_running_average=not train)
        if self.proj is not None:
            x = self.proj_bn(self.proj(x), use_running_average=not train)
        return nnx.relu(x + y)


class NnxResNet(nnx.Module):
    def __init__(self, rngs):
        self.stem = nnx.Conv(3, 8, (3, 3), use_bias=False, rngs=rngs)
        self.stem_bn = nnx.BatchNorm(8, momentum=0.9, rngs=rngs)
        spec = [(8, 8, 1), (8, 16, 2), (16, 16, 1), (16, 32, 2), (32, 32, 1)]
        self.blocks = nnx.List([NnxResBlock(a, b, st, rngs) for a, b, st in spec])
        self.head = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x, train):
        x = nnx.relu(self.stem_bn(self.stem(x), use_running_average=not train))
        for b in self.blocks:
            x = b(x, train)
        return self.head(x.mean(axis=(1, 2)))


model("nnx_resnet", "flax.nnx", "ResNet: stem conv+BN, 5 residual blocks with BatchNorm and projections", "f32",
      "clip_by_global_norm + sgd(momentum) with exponential decay",
      optax.chain(optax.clip_by_global_norm(1.0),
                  optax.sgd(optax.exponential_decay(0.1, 10, 0.9), momentum=0.9)),
      s((2, 8, 8, 3)), s((2,), i32), xent)(
    lambda x: nnx_model(NnxResNet, x))


class NnxEncoderBlock(nnx.Module):
    def __init__(self, d, heads, mlp, rngs, **mp):
        self.ln1 = nnx.LayerNorm(d, rngs=rngs, **mp)
        self.attn = nnx.MultiHeadAttention(heads, d, decode=False, deterministic=True, keep_rngs=False,
                                           rngs=rngs, **mp)
        self.ln2 = nnx.LayerNorm(d, rngs=rngs, **mp)
        self.fc1 = nnx.Linear(d, mlp, rngs=rngs, **mp)
        self.fc2 = nnx.Linear(mlp, d, rngs=rngs, **mp)

    def __call__(self, x, mask=None):
        x = x + self.attn(self.ln1(x), mask=mask)
        return x + self.fc2(nnx.gelu(self.fc1(self.ln2(x))))


class NnxEncoder(nnx.Module):
    def __init__(self, rngs, d=32, t=8):
        self.inp = nnx.Linear(16, d, rngs=rngs)
        self.pos = nnx.Param(jax.random.normal(rngs.params(), (t, d)) * 0.02)
        self.blocks = nnx.List([NnxEncoderBlock(d, 4, 64, rngs) for _ in range(3)])
        self.ln = nnx.LayerNorm(d, rngs=rngs)
        self.head = nnx.Linear(d, 5, rngs=rngs)

    def __call__(self, x, train):
        x = self.inp(x) + self.pos[...]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x).mean(axis=1))


model("nnx_transformer", "flax.nnx", "transformer encoder: 3 pre-LN blocks (nnx.MultiHeadAttention, 4 heads)", "f32",
      "adam, piecewise-constant schedule",
      optax.adam(optax.piecewise_constant_schedule(1e-3, {10: 0.5, 50: 0.1})),
      s((4, 8, 16)), s((4,), i32), xent)(
    lambda x: nnx_model(NnxEncoder, x))


class NnxCausalLM(nnx.Module):
    def __init__(self, rngs, vocab=32, d=32, layers=3):
        mp = dict(dtype=bf16, param_dtype=f32)
        self.embed = nnx.Embed(vocab, d, rngs=rngs, **mp)
        self.blocks = nnx.List()
        for _ in range(layers):
            self.blocks.append(nnx.Dict(
                ln1=nnx.RMSNorm(d, rngs=rngs, **mp),
                attn=nnx.MultiHeadAttention(4, d, decode=False, deterministic=True, keep_rngs=False, rngs=rngs, **mp),
                ln2=nnx.RMSNorm(d, rngs=rngs, **mp),
                gate=nnx.Linear(d, 2 * d, use_bias=False, rngs=rngs, **mp),
                up=nnx.Linear(d, 2 * d, use_bias=False, rngs=rngs, **mp),
                down=nnx.Linear(2 * d, d, use_bias=False, rngs=rngs, **mp)))
        self.ln = nnx.RMSNorm(d, rngs=rngs, **mp)

    def __call__(self, tokens, train):
        x = self.embed(tokens)
        mask = nnx.make_causal_mask(tokens)
        for b in self.blocks:
            x = x + b["attn"](b["ln1"](x), mask=mask)
            h = b["ln2"](x)
            x = x + b["down"](nnx.silu(b["gate"](h)) * b["up"](h))
        return self.embed.attend(self.ln(x))


model("nnx_causal_lm", "flax.nnx", "causal LM: Embed, 3 decoder blocks (causal mask, RMSNorm, SwiGLU), tied logits",
      "bf16 compute, f32 params", "adamw", optax.adamw(3e-4, weight_decay=0.1),
      s((2, 8), i32), s((2, 8), i32), xent)(
    lambda x: nnx_model(NnxCausalLM, x))


class NnxLSTM(nnx.Module):
    def __init__(self, rngs):
        self.rnn = nnx.RNN(nnx.LSTMCell(8, 32, rngs=rngs), rngs=False)
        self.head = nnx.Linear(32, 4, rngs=rngs)

    def __call__(self, x, train):
        zeros = jnp.zeros((x.shape[0], 32), x.dtype)
        return self.head(self.rnn(x, initial_carry=(zeros, zeros))[:, -1])


model("nnx_lstm", "flax.nnx", "LSTM (nnx.RNN over LSTMCell, scan), 10 steps, last-step classifier", "f32", "lion",
      optax.lion(3e-4, weight_decay=1e-3), s((4, 10, 8)), s((4,), i32), xent)(
    lambda x: nnx_model(NnxLSTM, x))


class NnxBiGRU(nnx.Module):
    def __init__(self, rngs):
        self.rnn = nnx.Bidirectional(nnx.RNN(nnx.GRUCell(8, 16, rngs=rngs), rngs=False),
                                     nnx.RNN(nnx.GRUCell(8, 16, rngs=rngs), rngs=False), rngs=False)
        self.head = nnx.Linear(32, 3, rngs=rngs)

    def __call__(self, x, train):
        zeros = jnp.zeros((x.shape[0], 16), x.dtype)
        return self.head(self.rnn(x, initial_carry=(zeros, zeros)))


model("nnx_bigru", "flax.nnx", "bidirectional GRU (nnx.Bidirectional, scan), per-step regression", "f32", "adagrad",
      optax.adagrad(1e-2), s((2, 8, 8)), s((2, 8, 3)), mse)(
    lambda x: nnx_model(NnxBiGRU, x))


class NnxAutoencoder(nnx.Module):
    def __init__(self, rngs):
        self.enc1, self.enc_ln = nnx.Linear(32, 16, rngs=rngs), nnx.LayerNorm(16, rngs=rngs)
        self.enc2 = nnx.Linear(16, 4, rngs=rngs)
        self.dec1, self.dec_ln = nnx.Linear(4, 16, rngs=rngs), nnx.LayerNorm(16, rngs=rngs)
        self.dec2 = nnx.Linear(16, 32, rngs=rngs)

    def __call__(self, x, train):
        z = self.enc2(nnx.gelu(self.enc_ln(self.enc1(x))))
        return self.dec2(nnx.gelu(self.dec_ln(self.dec1(z))))


model("nnx_mlp_autoencoder", "flax.nnx", "MLP autoencoder 32-16-4-16-32 with LayerNorm", "f32", "rmsprop",
      optax.rmsprop(1e-3), s((8, 32)), s((8, 32)), mse)(
    lambda x: nnx_model(NnxAutoencoder, x))


class NnxUNet(nnx.Module):
    def __init__(self, rngs):
        self.c1 = nnx.Conv(3, 8, (3, 3), rngs=rngs)
        self.n1 = nnx.GroupNorm(8, num_groups=2, rngs=rngs)
        self.down = nnx.Conv(8, 16, (3, 3), strides=(2, 2), rngs=rngs)
        self.n2 = nnx.GroupNorm(16, num_groups=4, rngs=rngs)
        self.up = nnx.ConvTranspose(16, 8, (2, 2), strides=(2, 2), rngs=rngs)
        self.n3 = nnx.GroupNorm(16, num_groups=4, rngs=rngs)
        self.out = nnx.Conv(16, 4, (1, 1), rngs=rngs)

    def __call__(self, x, train):
        a = nnx.silu(self.n1(self.c1(x)))
        b = nnx.silu(self.n2(self.down(a)))
        u = jnp.concatenate([a, self.up(b)], axis=-1)
        return self.out(nnx.silu(self.n3(u)))


model("nnx_unet_groupnorm", "flax.nnx", "tiny U-Net: Conv + GroupNorm, strided down, ConvTranspose up, skip concat; per-pixel classes",
      "f32", "adafactor (factored)", optax.adafactor(1e-2, min_dim_size_to_factor=4),
      s((2, 8, 8, 3)), s((2, 8, 8), i32), xent)(
    lambda x: nnx_model(NnxUNet, x))


# --------------------------------------------------------------------------
# equinox models (equinox modules take one example: the models vmap)


class EqxMLP(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, key):
        self.mlp = eqx.nn.MLP(16, 10, 64, depth=3, activation=jax.nn.gelu, key=key)

    def __call__(self, x, train):
        return jax.vmap(self.mlp)(x)


model("eqx_mlp", "equinox", "eqx.nn.MLP, depth 3, width 64, GELU", "f32", "nadam",
      optax.nadam(1e-3), s((8, 16)), s((8,), i32), xent)(
    lambda x: eqx_model(EqxMLP, x))


class EqxCNN(eqx.Module):
    layers: list

    def __init__(self, key):
        k = jax.random.split(key, 3)
        self.layers = [
            eqx.nn.Conv2d(3, 8, 3, padding=1, key=k[0]), jax.nn.relu, eqx.nn.MaxPool2d(2, 2),
            eqx.nn.Conv2d(8, 16, 3, padding=1, key=k[1]), jax.nn.relu, eqx.nn.AvgPool2d(2, 2),
            jnp.ravel, eqx.nn.Linear(16 * 2 * 2, 10, key=k[2]),
        ]

    def __call__(self, x, train):
        def one(x):
            for layer in self.layers:
                x = layer(x)
            return x

        return jax.vmap(one)(x)


model("eqx_cnn", "equinox", "Conv2d + MaxPool2d, Conv2d + AvgPool2d, Linear (channel-first)", "f32",
      "sgd(momentum=0.9)", optax.sgd(0.01, momentum=0.9), s((4, 3, 8, 8)), s((4,), i32), xent)(
    lambda x: eqx_model(EqxCNN, x))


class EqxCNNBN(eqx.Module):
    conv1: eqx.nn.Conv2d
    bn1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    bn2: eqx.nn.BatchNorm
    head: eqx.nn.Linear

    def __init__(self, key):
        k = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(3, 8, 3, padding=1, key=k[0])
        self.bn1 = eqx.nn.BatchNorm(8, axis_name="batch", momentum=0.9, mode="ema")
        self.conv2 = eqx.nn.Conv2d(8, 16, 3, stride=2, padding=1, key=k[1])
        self.bn2 = eqx.nn.BatchNorm(16, axis_name="batch", momentum=0.9, mode="ema")
        self.head = eqx.nn.Linear(16, 10, key=k[2])

    def one(self, x, state, train):
        x, state = self.bn1(self.conv1(x), state, inference=not train)
        x, state = self.bn2(self.conv2(jax.nn.relu(x)), state, inference=not train)
        return self.head(jax.nn.relu(x).mean(axis=(1, 2))), state

    def __call__(self, x, state, train):
        return jax.vmap(self.one, axis_name="batch", in_axes=(0, None, None), out_axes=(0, None))(x, state, train)


model("eqx_cnn_bn", "equinox", "2 Conv2d + BatchNorm (eqx.nn.State, vmap axis_name), global average pool", "f32",
      "adamw", optax.adamw(1e-3), s((4, 3, 8, 8)), s((4,), i32), xent)(
    lambda x: eqx_model(EqxCNNBN, x, stateful=True))


class EqxBlock(eqx.Module):
    ln1: eqx.nn.LayerNorm
    attn: eqx.nn.MultiheadAttention
    ln2: eqx.nn.LayerNorm
    fc1: eqx.nn.Linear
    fc2: eqx.nn.Linear

    def __init__(self, d, heads, mlp, key):
        k = jax.random.split(key, 3)
        self.ln1, self.ln2 = eqx.nn.LayerNorm(d), eqx.nn.LayerNorm(d)
        self.attn = eqx.nn.MultiheadAttention(heads, d, use_query_bias=True, use_key_bias=True,
                                              use_value_bias=True, use_output_bias=True, key=k[0])
        self.fc1 = eqx.nn.Linear(d, mlp, key=k[1])
        self.fc2 = eqx.nn.Linear(mlp, d, key=k[2])

    def __call__(self, x, mask=None):
        h = jax.vmap(self.ln1)(x)
        x = x + self.attn(h, h, h, mask=mask, inference=True)
        h = jax.vmap(self.fc1)(jax.vmap(self.ln2)(x))
        return x + jax.vmap(self.fc2)(jax.nn.gelu(h))


class EqxTransformer(eqx.Module):
    inp: eqx.nn.Linear
    pos: jax.Array
    blocks: list
    ln: eqx.nn.LayerNorm
    head: eqx.nn.Linear

    def __init__(self, key, d=32, t=8):
        k = jax.random.split(key, 5)
        self.inp = eqx.nn.Linear(16, d, key=k[0])
        self.pos = jax.random.normal(k[1], (t, d)) * 0.02
        self.blocks = [EqxBlock(d, 4, 64, kk) for kk in k[2:4]]
        self.ln = eqx.nn.LayerNorm(d)
        self.head = eqx.nn.Linear(d, 5, key=k[4])

    def __call__(self, x, train):
        def one(x):
            x = jax.vmap(self.inp)(x) + self.pos
            for b in self.blocks:
                x = b(x)
            return self.head(jax.vmap(self.ln)(x).mean(axis=0))

        return jax.vmap(one)(x)


model("eqx_transformer", "equinox", "transformer encoder: 2 pre-LN blocks (eqx.nn.MultiheadAttention, 4 heads)", "f32",
      "clip_by_global_norm + adamw, warmup-cosine schedule",
      optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(warmup_cosine(1e-3))),
      s((4, 8, 16)), s((4,), i32), xent)(
    lambda x: eqx_model(EqxTransformer, x))


class EqxDecoderBlock(eqx.Module):
    ln1: eqx.nn.RMSNorm
    attn: eqx.nn.MultiheadAttention
    rope: eqx.nn.RotaryPositionalEmbedding
    ln2: eqx.nn.RMSNorm
    fc1: eqx.nn.Linear
    fc2: eqx.nn.Linear

    def __init__(self, d, heads, key):
        k = jax.random.split(key, 3)
        self.ln1, self.ln2 = eqx.nn.RMSNorm(d), eqx.nn.RMSNorm(d)
        self.attn = eqx.nn.MultiheadAttention(heads, d, key=k[0])
        self.rope = eqx.nn.RotaryPositionalEmbedding(d // heads)
        self.fc1 = eqx.nn.Linear(d, 4 * d, use_bias=False, key=k[1])
        self.fc2 = eqx.nn.Linear(4 * d, d, use_bias=False, key=k[2])

    def __call__(self, x):
        def heads(q, k, v):
            rot = jax.vmap(self.rope, in_axes=1, out_axes=1)
            return rot(q), rot(k), v

        h = jax.vmap(self.ln1)(x)
        x = x + self.attn(h, h, h, mask=causal(x.shape[0]), inference=True, process_heads=heads)
        h = jax.vmap(self.fc1)(jax.vmap(self.ln2)(x))
        return x + jax.vmap(self.fc2)(jax.nn.silu(h))


class EqxCausalLM(eqx.Module):
    embed: eqx.nn.Embedding
    blocks: list
    ln: eqx.nn.RMSNorm
    head: eqx.nn.Linear

    def __init__(self, key, vocab=32, d=32):
        k = jax.random.split(key, 5)
        self.embed = eqx.nn.Embedding(vocab, d, key=k[0])
        self.blocks = [EqxDecoderBlock(d, 4, kk) for kk in k[1:4]]
        self.ln = eqx.nn.RMSNorm(d)
        self.head = eqx.nn.Linear(d, vocab, use_bias=False, key=k[4])

    def __call__(self, tokens, train):
        # mixed precision: f32 master weights, bf16 compute
        weights, rest = eqx.partition(self, eqx.is_inexact_array)
        m = eqx.combine(jax.tree.map(lambda w: w.astype(bf16), weights), rest)

        def one(t):
            x = jax.vmap(m.embed)(t)
            for b in m.blocks:
                x = b(x)
            return jax.vmap(m.head)(jax.vmap(m.ln)(x))

        return jax.vmap(one)(tokens)


model("eqx_causal_lm", "equinox", "causal LM: Embedding, 3 decoder blocks (RoPE via process_heads, causal mask, RMSNorm)",
      "bf16 compute, f32 params", "apply_if_finite(adam)", optax.apply_if_finite(optax.adam(1e-3), 3),
      s((2, 8), i32), s((2, 8), i32), xent)(
    lambda x: eqx_model(EqxCausalLM, x))


class EqxLSTM(eqx.Module):
    cell: eqx.nn.LSTMCell
    head: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.LSTMCell(8, 32, key=k1)
        self.head = eqx.nn.Linear(32, 4, key=k2)

    def __call__(self, xs, train):
        def one(seq):
            def step(carry, x):
                return self.cell(x, carry), None

            zeros = jnp.zeros(self.cell.hidden_size)
            (h, _), _ = lax.scan(step, (zeros, zeros), seq)
            return self.head(h)

        return jax.vmap(one)(xs)


model("eqx_lstm", "equinox", "LSTMCell over lax.scan (12 steps), linear head", "f32", "lamb",
      optax.lamb(1e-3), s((4, 12, 8)), s((4,), i32), xent)(
    lambda x: eqx_model(EqxLSTM, x))


class EqxGRU(eqx.Module):
    cell: eqx.nn.GRUCell
    head: eqx.nn.Linear
    hidden: int = eqx.field(static=True)

    def __init__(self, key, n_in=8, hidden=32, n_out=4):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.GRUCell(n_in, hidden, key=k1)
        self.head = eqx.nn.Linear(hidden, n_out, key=k2)
        self.hidden = hidden

    def __call__(self, xs, train):
        def one(seq):
            def step(h, x):
                h = self.cell(x, h)
                return h, None

            h, _ = lax.scan(step, jnp.zeros(self.hidden, seq.dtype), seq)
            return self.head(h)

        return jax.vmap(one)(xs)


model("eqx_gru", "equinox", "GRUCell over lax.scan (10 steps), linear head", "f32", "rmsprop",
      optax.rmsprop(1e-3), s((4, 10, 8)), s((4, 4)), mse)(
    lambda x: eqx_model(EqxGRU, x))


class EqxAutoencoder(eqx.Module):
    enc: list
    dec: list

    def __init__(self, key):
        k = jax.random.split(key, 4)
        self.enc = [eqx.nn.Conv2d(3, 8, 3, stride=2, padding=1, key=k[0]), eqx.nn.GroupNorm(4, 8), jax.nn.silu,
                    eqx.nn.Conv2d(8, 16, 3, stride=2, padding=1, key=k[1]), eqx.nn.GroupNorm(4, 16), jax.nn.silu]
        self.dec = [eqx.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1, key=k[2]), eqx.nn.GroupNorm(4, 8),
                    jax.nn.silu, eqx.nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1, key=k[3])]

    def __call__(self, x, train):
        def one(x):
            for layer in self.enc + self.dec:
                x = layer(x)
            return x

        return jax.vmap(one)(x)


model("eqx_conv_autoencoder", "equinox", "conv autoencoder: strided Conv2d + GroupNorm, ConvTranspose2d", "f32",
      "adam", optax.adam(1e-3), s((2, 3, 8, 8)), s((2, 3, 8, 8)), mse)(
    lambda x: eqx_model(EqxAutoencoder, x))


class EqxResBlock(eqx.Module):
    conv1: eqx.nn.Conv2d
    norm1: eqx.nn.GroupNorm
    conv2: eqx.nn.Conv2d
    norm2: eqx.nn.GroupNorm
    proj: eqx.nn.Conv2d | None

    def __init__(self, cin, cout, stride, key):
        k = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(cin, cout, 3, stride=stride, padding=1, use_bias=False, key=k[0])
        self.norm1 = eqx.nn.GroupNorm(4, cout)
        self.conv2 = eqx.nn.Conv2d(cout, cout, 3, padding=1, use_bias=False, key=k[1])
        self.norm2 = eqx.nn.GroupNorm(4, cout)
        self.proj = eqx.nn.Conv2d(cin, cout, 1, stride=stride, key=k[2]) if cin != cout or stride != 1 else None

    def __call__(self, x):
        y = jax.nn.relu(self.norm1(self.conv1(x)))
        y = self.norm2(self.conv2(y))
        return jax.nn.relu((x if self.proj is None else self.proj(x)) + y)


class EqxResNet(eqx.Module):
    stem: eqx.nn.Conv2d
    blocks: list
    head: eqx.nn.Linear

    def __init__(self, key):
        k = jax.random.split(key, 6)
        self.stem = eqx.nn.Conv2d(3, 8, 3, padding=1, key=k[0])
        spec = [(8, 8, 1), (8, 16, 2), (16, 16, 1), (16, 32, 2)]
        self.blocks = [EqxResBlock(a, b, st, kk) for (a, b, st), kk in zip(spec, k[1:5])]
        self.head = eqx.nn.Linear(32, 10, key=k[5])

    def __call__(self, x, train):
        def one(x):
            x = self.stem(x)
            for b in self.blocks:
                x = b(x)
            return self.head(x.mean(axis=(1, 2)))

        return jax.vmap(one)(x)


model("eqx_resnet_groupnorm", "equinox", "ResNet: stem conv, 4 residual blocks with GroupNorm and projections", "f32",
      "add_decayed_weights + sgd, cosine decay",
      optax.chain(optax.add_decayed_weights(1e-4), optax.sgd(optax.cosine_decay_schedule(0.1, 100))),
      s((2, 3, 8, 8)), s((2,), i32), xent)(
    lambda x: eqx_model(EqxResNet, x))


# --------------------------------------------------------------------------
# haiku models


def haiku_mlp(x, train):
    return hk.nets.MLP([64, 64, 10], activation=jax.nn.relu)(x)


model("haiku_mlp", "haiku", "hk.nets.MLP 16-64-64-10, ReLU", "f32", "sgd(momentum=0.9)",
      optax.sgd(0.01, momentum=0.9), s((8, 16)), s((8,), i32), xent)(
    lambda x: haiku_model(haiku_mlp, x))


def haiku_cnn(x, train):
    for ch in (8, 16):
        x = hk.Conv2D(ch, 3)(x)
        x = jax.nn.relu(hk.BatchNorm(True, True, 0.9)(x, is_training=train))
        x = hk.MaxPool(2, 2, "VALID")(x)
    return hk.Linear(10)(hk.Flatten()(x))


model("haiku_cnn_bn", "haiku", "2 Conv2D + BatchNorm + MaxPool, linear head", "f32", "adam",
      optax.adam(1e-3), s((4, 8, 8, 3)), s((4,), i32), xent)(
    lambda x: haiku_model(haiku_cnn, x))


def haiku_resnet(x, train):
    def block(x, ch, stride, name):
        with hk.name_scope(name):
            shortcut = x
            y = hk.Conv2D(ch, 3, stride=stride, with_bias=False)(x)
            y = jax.nn.relu(hk.BatchNorm(True, True, 0.9)(y, is_training=train))
            y = hk.Conv2D(ch, 3, with_bias=False)(y)
            y = hk.BatchNorm(True, True, 0.9)(y, is_training=train)
            if stride != 1 or x.shape[-1] != ch:
                shortcut = hk.Conv2D(ch, 1, stride=stride, with_bias=False)(x)
                shortcut = hk.BatchNorm(True, True, 0.9)(shortcut, is_training=train)
            return jax.nn.relu(y + shortcut)

    x = hk.Conv2D(8, 3)(x)
    x = block(x, 8, 1, "block1")
    x = block(x, 16, 2, "block2")
    x = block(x, 16, 1, "block3")
    x = block(x, 32, 2, "block4")
    x = jnp.mean(x, axis=(1, 2))
    return hk.Linear(10)(x)


model("haiku_resnet", "haiku", "ResNet: stem conv, 4 residual blocks with BatchNorm, projection shortcuts",
      "f32", "adamw", optax.adamw(1e-3, weight_decay=1e-4), s((2, 8, 8, 3)), s((2,), i32), xent)(
    lambda x: haiku_model(haiku_resnet, x))


class HaikuBlock(hk.Module):
    def __init__(self, d, heads, rms=False, name=None):
        super().__init__(name=name)
        self.d, self.heads, self.rms = d, heads, rms

    def norm(self):
        return hk.RMSNorm(-1) if self.rms else hk.LayerNorm(-1, True, True)

    def __call__(self, x, mask=None):
        h = self.norm()(x)
        attn = hk.MultiHeadAttention(self.heads, self.d // self.heads, w_init=hk.initializers.VarianceScaling(1.0))
        x = x + attn(h, h, h, mask=mask)
        h = hk.Linear(4 * self.d)(self.norm()(x))
        return x + hk.Linear(self.d)(jax.nn.gelu(h))


def haiku_transformer(x, train):
    x = hk.Linear(32)(x)
    x = x + hk.get_parameter("pos", x.shape[1:], init=hk.initializers.RandomNormal(0.02))
    for _ in range(3):
        x = HaikuBlock(32, 4)(x)
    return hk.Linear(5)(hk.LayerNorm(-1, True, True)(x).mean(axis=1))


model("haiku_transformer", "haiku", "transformer encoder: 3 pre-LN blocks (hk.MultiHeadAttention, 4 heads)", "f32",
      "adamw", optax.adamw(1e-3, weight_decay=1e-2), s((4, 8, 16)), s((4,), i32), xent)(
    lambda x: haiku_model(haiku_transformer, x))


class HaikuLM(hk.Module):
    def __call__(self, tokens):
        vocab, d = 32, 32
        embed = hk.Embed(vocab, d)
        x = embed(tokens)
        mask = causal(tokens.shape[1])[None, None]
        for _ in range(3):
            x = HaikuBlock(d, 4, rms=True)(x, mask=mask)
        return hk.RMSNorm(-1)(x) @ embed.embeddings.T


# haiku's mixed precision: f32 parameters, cast to bf16 for the computation
hk.mixed_precision.set_policy(HaikuLM, jmp.get_policy("params=float32,compute=bfloat16,output=bfloat16"))


model("haiku_causal_lm", "haiku", "causal LM: Embed, 3 decoder blocks (causal mask, RMSNorm), tied logits",
      "bf16 compute (jmp policy), f32 params", "clip_by_global_norm + adam, exponential decay",
      optax.chain(optax.clip_by_global_norm(1.0), optax.adam(optax.exponential_decay(1e-3, 20, 0.5))),
      s((2, 8), i32), s((2, 8), i32), xent)(
    lambda x: haiku_model(lambda t, train: HaikuLM()(t), x))


def haiku_lstm(x, train):
    core = hk.LSTM(32)
    xs = jnp.swapaxes(x, 0, 1)
    out, _ = hk.dynamic_unroll(core, xs, core.initial_state(x.shape[0]))
    return hk.Linear(4)(out[-1])


model("haiku_lstm", "haiku", "hk.LSTM with hk.dynamic_unroll (scan), 12 steps", "f32", "rmsprop(momentum)",
      optax.rmsprop(1e-3, momentum=0.9), s((4, 12, 8)), s((4,), i32), xent)(
    lambda x: haiku_model(haiku_lstm, x))


def haiku_deep_gru(x, train):
    core = hk.DeepRNN([hk.GRU(32), jax.nn.relu, hk.GRU(32)])
    xs = jnp.swapaxes(x, 0, 1)
    out, _ = hk.static_unroll(core, xs, core.initial_state(x.shape[0]))
    return jnp.swapaxes(hk.Linear(3)(out), 0, 1)


model("haiku_deep_gru_unrolled", "haiku", "2-layer hk.DeepRNN of hk.GRU with hk.static_unroll (Python-unrolled), 8 steps",
      "f32", "adamax", optax.adamax(1e-3), s((2, 8, 8)), s((2, 8, 3)), mse)(
    lambda x: haiku_model(haiku_deep_gru, x))


def haiku_autoencoder(x, train):
    h = jax.nn.silu(hk.GroupNorm(4)(hk.Conv2D(8, 3, stride=2)(x)))
    h = jax.nn.silu(hk.GroupNorm(4)(hk.Conv2D(16, 3, stride=2)(h)))
    h = jax.nn.silu(hk.GroupNorm(4)(hk.Conv2DTranspose(8, 3, stride=2)(h)))
    return hk.Conv2DTranspose(3, 3, stride=2)(h)


model("haiku_conv_autoencoder", "haiku", "conv autoencoder: strided Conv2D + GroupNorm, Conv2DTranspose", "f32",
      "adabelief", optax.adabelief(1e-3), s((2, 8, 8, 3)), s((2, 8, 8, 3)), mse)(
    lambda x: haiku_model(haiku_autoencoder, x))


def haiku_vae(inputs, train):
    x, eps = inputs
    h = jax.nn.gelu(hk.LayerNorm(-1, True, True)(hk.Linear(32)(x)))
    mean, logvar = hk.Linear(4)(h), hk.Linear(4)(h)
    z = mean + jnp.exp(0.5 * logvar) * eps  # the noise is an input: no rng inside
    h = jax.nn.gelu(hk.LayerNorm(-1, True, True)(hk.Linear(32)(z)))
    return hk.Linear(x.shape[-1])(h), mean, logvar


def vae_loss(out, y):
    recon, mean, logvar = out
    kl = -0.5 * jnp.mean(jnp.sum(1 + logvar - mean**2 - jnp.exp(logvar), axis=-1))
    return mse(recon, y) + 0.1 * kl


model("haiku_vae", "haiku", "VAE: MLP encoder/decoder with LayerNorm, reparameterization noise as an input", "f32",
      "adamw + MultiSteps(2)", optax.MultiSteps(optax.adamw(1e-3), every_k_schedule=2),
      (s((8, 16)), s((8, 4))), s((8, 16)), vae_loss)(
    lambda x: haiku_model(haiku_vae, x))


# --------------------------------------------------------------------------
# dumping

# source locations in the dumps name this file and the libraries: keep them
# relative (to the repository, and to site-packages), so the dumps do not
# depend on where the repository or the venv are
ROOT = str(Path(__file__).resolve().parent.parent) + "/"
SITE = re.compile(r'"[^"\n]*/site-packages/')

INSTRUCTION = re.compile(r"^\s+(ROOT )?%?[\w.\-]+ = ")


def relative(text):
    return SITE.sub('"site-packages/', text.replace(ROOT, ""))


def entry_parameters(text):
    entry = text[text.index("\nENTRY"):]
    return sum(1 for line in entry[: entry.index("\n}")].splitlines() if " parameter(" in line)


def instructions(text):
    return sum(1 for line in text.splitlines() if INSTRUCTION.match(line))


def table(out):
    """The README's table of models, from MANIFEST.tsv."""
    counts = {}
    for line in (out / "MANIFEST.tsv").read_text().splitlines()[1:]:
        file, _, kind, stage, n = line.split("\t")
        counts[file] = n
    print("| model | library | what it is | dtype | optimizer | fwd before | fwd after | train before | train after |")
    print("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |")
    for name, (library, _, (what, dtype, opt_name)) in MODELS.items():
        n = [counts[f"{name}.{k}.{s}.hlo"] for k in ("fwd", "train") for s in ("before", "after")]
        print(f"| `{name}` | {library} | {what} | {dtype} | {opt_name} | " + " | ".join(n) + " |")


def main():
    if sys.argv[1] == "--table":
        return table(Path(sys.argv[2]))
    out = Path(sys.argv[1])
    only = set(sys.argv[2:])
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, (library, make, _) in MODELS.items():
        if only and name not in only:
            continue
        m = make()
        for kind, (fn, args) in (("fwd", m.fwd()), ("train", m.train())):
            # keep_unused: every leaf is an entry parameter, even one the step
            # ignores (adafactor's placeholder moments), so the entry matches
            # the pytrees and a step's outputs can be fed back
            lowered = jax.jit(fn, keep_unused=True).lower(*args)
            before = lowered.as_text(dialect="hlo")
            assert entry_parameters(before) == len(jax.tree.leaves(args)), (name, kind)
            for stage, text in (("before", before), ("after", optimized_text(lowered.compile()))):
                text = relative(text)
                file = f"{name}.{kind}.{stage}.hlo"
                (out / file).write_text(text)
                manifest.append((file, library, kind, stage, instructions(text)))
                print(f"{file}: {instructions(text)} instructions, {len(text)} bytes", file=sys.stderr)
    if not only:
        rows = ["file\tlibrary\tkind\tstage\tinstructions"] + ["\t".join(map(str, r)) for r in manifest]
        (out / "MANIFEST.tsv").write_text("\n".join(rows) + "\n")
    print(f"{len(manifest) // 4} models, jax {jax.__version__}, flax {flax.__version__}, "
          f"equinox {eqx.__version__}, haiku {hk.__version__}, optax {optax.__version__}", file=sys.stderr)


def optimized_text(compiled):
    """The optimized module's text, as `compiled.as_text()` prints it, but
    with every constant written out: the default printer elides large
    constants as `{...}`, which no reader can evaluate."""
    text = compiled.as_text()
    if "{...}" not in text:
        return text
    from jaxlib import _hlo
    options = _hlo.HloPrintOptions()
    options.print_large_constants = True
    return compiled.runtime_executable().hlo_modules()[0].to_string(options)


if __name__ == "__main__":
    main()
