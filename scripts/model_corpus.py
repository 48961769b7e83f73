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
the dumps; with `--table`, the README's table of models is printed.
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
        MODELS[name] = (library, make)
        return build

    return register


# adapters: each library's way of turning a module into apply/params/state


def linen(module, x, collections=()):
    """A flax.linen module whose `__call__(x, train)`; `collections` are the
    mutable non-parameter collections (batch_stats)."""
    variables = jax.eval_shape(lambda: module.init(KEY, jnp.zeros(x.shape, x.dtype), False))
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
    params, state = jax.eval_shape(lambda: t.init(KEY, jnp.zeros(x.shape, x.dtype), True))

    def apply(p, st, x, train):
        return t.apply(p, st, x, train)

    return apply, params, state


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


# --------------------------------------------------------------------------
# flax.nnx models


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


# --------------------------------------------------------------------------
# equinox models


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


# --------------------------------------------------------------------------
# haiku models


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
    x = jnp.mean(x, axis=(1, 2))
    return hk.Linear(10)(x)


model("haiku_resnet", "haiku", "small ResNet: stem conv, 2 residual blocks with BatchNorm, projection shortcut",
      "f32", "adamw", optax.adamw(1e-3, weight_decay=1e-4), s((2, 8, 8, 3)), s((2,), i32), xent)(
    lambda x: haiku_model(haiku_resnet, x))


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


def instructions(text):
    return sum(1 for line in text.splitlines() if INSTRUCTION.match(line))


def main():
    out = Path(sys.argv[1])
    only = set(sys.argv[2:])
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, (library, make) in MODELS.items():
        if only and name not in only:
            continue
        m = make()
        for kind, (fn, args) in (("fwd", m.fwd()), ("train", m.train())):
            lowered = jax.jit(fn).lower(*args)
            for stage, text in (("before", lowered.as_text(dialect="hlo")), ("after", lowered.compile().as_text())):
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


if __name__ == "__main__":
    main()
