"""Dumps the HLO of small multi-device (SPMD) JAX programs, before and after
XLA's SPMD partitioner.

Run by scripts/gen-spmd-corpus.sh (which pins jax/jaxlib 0.10.2 and starts
XLA:CPU with 8 host devices); writes, for every program and mesh, into the
directory given as the first argument:

  NAME.annotated.hlo     lowered.as_text(dialect="hlo"): the global module
                         with GSPMD sharding annotations (sharding={...},
                         custom-calls "Sharding", "SPMDFullToShardShape",
                         "SPMDShardToFullShape"), before partitioning
  NAME.partitioned.hlo   lowered.compile().as_text(): the per-device module
                         after SPMD partitioning and XLA:CPU optimization,
                         with its collectives
  MANIFEST.tsv           one line per file: devices, mesh, what the program
                         is, and the collective opcodes the file contains

  NAME.sdy.hlo           the same as NAME.annotated.hlo in Shardy's form
                         (jax's default): `xla.sdy.*` custom calls and
                         frontend attributes, meshes in the module header

plus, for a few programs, NAME.partitioned-meshrg.hlo (see MESH_RG below).

Two settings pick the classic text forms:
  * jax 0.10 partitions with Shardy by default, and its lowered HLO then
    carries `xla.sdy.*` frontend attributes and custom-calls
    ("xla.sdy.GlobalToLocalShape", "xla.sdy.FuncResultSharding", ...). We set
    jax_use_shardy_partitioner=False to get GSPMD's form, and turn it on
    again for the NAME.sdy.hlo dumps.
  * XLA 0.10's SPMD partitioner writes replica groups as mesh axes by default
    (`replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}`, "RGV3"). We
    compile with the debug option xla_enable_rgv3_materialization=False to get
    the iota / explicit-list forms (`[2,4]<=[8]`, `{{0,1},{2,3}}`); the
    programs in MESH_RG are also dumped with the default, as
    NAME.partitioned-meshrg.hlo, so that form is covered too.

Every program is our own; shapes are kept small so the dumps stay small and
an exact reference evaluates them quickly.
"""

import re
import sys
from pathlib import Path

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_use_shardy_partitioner", False)

f32, bf16, i32 = jnp.float32, jnp.bfloat16, jnp.int32
CLASSIC_RG = {"xla_enable_rgv3_materialization": False}


def s(shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def make_mesh(shape, names):
    n = int(np.prod(shape))
    return Mesh(np.array(jax.devices()[:n]).reshape(shape), names)


def jit(fn, mesh, ins, outs):
    """jax.jit with NamedShardings built from PartitionSpecs (tuples nest)."""

    def named(spec):
        if isinstance(spec, P):
            return NamedSharding(mesh, spec)
        return tuple(named(x) for x in spec)

    return jax.jit(fn, in_shardings=named(ins), out_shardings=named(outs))


def smap(body, mesh, ins, outs, check_vma=True):
    """jit(shard_map(body)) whose jit shardings match the shard_map specs."""
    return jit(jax.shard_map(body, mesh=mesh, in_specs=ins, out_specs=outs, check_vma=check_vma), mesh, ins, outs)


def ring(n):
    return [(i, (i + 1) % n) for i in range(n)]


# --------------------------------------------------------------------------
# model pieces


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


def mse_loss(params, x, y):
    w1, w2 = params
    return jnp.mean((mlp(x, w1, w2) - y) ** 2)


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def attention_bhsd(q, k, v):
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


# --------------------------------------------------------------------------
# programs: each takes a mesh and returns (jitted function, abstract args)


def dp_mlp_grad(mesh):
    """data-parallel gradient of an MLP loss: batch sharded, weights replicated"""
    n = mesh.size
    fn = jit(jax.grad(mse_loss), mesh, ((P(), P()), P("d"), P("d")), (P(), P()))
    return fn, [(s((6, 8)), s((8, 3))), s((2 * n, 6)), s((2 * n, 3))]


def tp_mlp(mesh):
    """Megatron MLP: w1 column-sharded, w2 row-sharded, activations replicated"""
    n = mesh.size
    fn = jit(lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, mesh, (P(), P(None, "m"), P("m", None)), P())
    return fn, [s((4, 8)), s((8, 2 * n)), s((2 * n, 8))]


def tp_mlp_bf16(mesh):
    """Megatron MLP in bf16: the row-parallel matmul's all-reduce is bf16"""
    fn = jit(lambda x, w1, w2: jax.nn.gelu(x @ w1) @ w2, mesh, (P(), P(None, "m"), P("m", None)), P())
    return fn, [s((4, 8), bf16), s((8, 8), bf16), s((8, 8), bf16)]


def sgd_step_dp(mesh):
    """SGD step p - lr * grad: batch sharded, params and lr replicated"""
    n = mesh.size

    def step(params, x, y, lr):
        g = jax.grad(mse_loss)(params, x, y)
        return jax.tree.map(lambda p, d: p - lr * d, params, g)

    fn = jit(step, mesh, ((P(), P()), P("d"), P("d"), P()), (P(), P()))
    return fn, [(s((4, 6)), s((6, 2))), s((n, 4)), s((n, 2)), s(())]


def cross_entropy_dp(mesh):
    """mean cross-entropy over an int32-labelled batch sharded across devices"""
    n = mesh.size
    fn = jit(cross_entropy, mesh, (P("d"), P("d")), P())
    return fn, [s((2 * n, 5)), s((2 * n,), i32)]


def softmax_sharded_axis(mesh):
    """softmax over the sharded (last) axis: max and sum all-reduced"""
    n = mesh.size
    fn = jit(lambda x: jax.nn.softmax(x, axis=-1), mesh, P(None, "x"), P(None, "x"))
    return fn, [s((3, 2 * n))]


def layer_norm_2d(mesh):
    """layernorm on a 2x2 mesh: rows over 'b', features over 'h'; g, b partially replicated"""
    fn = jit(layer_norm, mesh, (P("b", "h"), P("h"), P("h")), P("b", "h"))
    return fn, [s((4, 8)), s((8,)), s((8,))]


def attention_2d(mesh):
    """attention [batch, heads, seq, dim] with batch over 'b' and heads over 'h'"""
    spec = P("b", "h")
    fn = jit(attention_bhsd, mesh, (spec, spec, spec), spec)
    return fn, [s((2, 2, 4, 4))] * 3


def attention_seq_sharded(mesh):
    """attention with keys/values sharded along the sequence: softmax needs collectives"""
    fn = jit(attention_bhsd, mesh, (P(), P(None, None, "x"), P(None, None, "x")), P())
    return fn, [s((1, 2, 3, 4)), s((1, 2, 8, 4)), s((1, 2, 8, 4))]


def constrain(x, mesh, spec):
    return lax.with_sharding_constraint(x, NamedSharding(mesh, spec))


# jit rejects uneven in/out shardings, so uneven programs take replicated or
# evenly sharded arguments and constrain an intermediate to the uneven sharding


def uneven_rows(mesh):
    """6 rows sharded 4 ways (shards of 2,2,2,0 after padding to 8): tanh, then row and column sums"""

    def fn(x):
        y = constrain(jnp.tanh(x) * 2.0, mesh, P("x", None))
        return jnp.sum(y, axis=1), jnp.sum(y, axis=0)

    return jit(fn, mesh, P(), (P(), P())), [s((6, 5))]


def uneven_matmul(mesh):
    """10 rows sharded over the mesh (4 ways: 3,3,3,1 after padding to 12; 8 ways: 2,2,2,2,2,0,0,0): matmul, output gathered and unpadded"""

    def fn(x, w):
        return constrain(x, mesh, P("x", None)) @ w + 1.0

    return jit(fn, mesh, (P(), P()), P()), [s((10, 3)), s((3, 4))]


def uneven_contraction(mesh):
    """contraction dimension 6 (sliced from an evenly sharded 8) sharded 4 ways: padding must not leak into the sum"""

    def fn(x, w):
        xs = constrain(x[:, :6], mesh, P(None, "x"))
        return xs @ constrain(w, mesh, P("x", None))

    return jit(fn, mesh, (P(None, "x"), P()), P()), [s((3, 8)), s((6, 2))]


def uneven_reshard(mesh):
    """10x6 array resharded from rows to columns across 4 devices (both padded), then summed"""

    def fn(x):
        a = constrain(x * 3.0, mesh, P("x", None))
        b = constrain(a + 1.0, mesh, P(None, "x"))
        return jnp.sum(b * b, axis=0)

    return jit(fn, mesh, P(), P()), [s((10, 6))]


def reduce_scatter_matmul(mesh):
    """contraction sharded, output row-sharded: a reduce-scatter (XLA:CPU keeps all-reduce + dynamic-slice)"""
    n = mesh.size
    fn = jit(lambda x, w: x @ w, mesh, (P(None, "x"), P("x", None)), P("x", None))
    return fn, [s((2 * n, 2 * n)), s((2 * n, 3))]


def reshard_transpose(mesh):
    """row sharding to column sharding of the same array: an all-to-all (tuple form)"""
    n = mesh.size
    fn = jit(lambda x: x + 1.0, mesh, P("x", None), P(None, "x"))
    return fn, [s((2 * n, 2 * n))]


def dp_tp_matmul_2x4(mesh):
    """8 devices, 2x4 mesh: x rows over 'a', w columns over 'b', output replicated over 'b'"""
    fn = jit(lambda x, w: jnp.tanh(x @ w), mesh, (P("a", None), P(None, "b")), P("a", None))
    return fn, [s((4, 6)), s((6, 8))]


def int_sum_2x4(mesh):
    """8 devices, 2x4 mesh: int32 sum over the 'b'-sharded axis, result sharded over 'a'"""
    fn = jit(lambda x: jnp.sum(x * 3 - 1, axis=1), mesh, P("a", "b"), P("a"))
    return fn, [s((4, 8), i32)]


def col_max_2x4(mesh):
    """8 devices, 2x4 mesh: column max over the 'a'-sharded axis (groups strided across the mesh)"""
    fn = jit(lambda x: jnp.max(jnp.abs(x), axis=0), mesh, P("a", "b"), P("b"))
    return fn, [s((4, 8))]


# shard_map bodies


def smap_psum(mesh):
    """shard_map: lax.psum of each shard's column sums"""
    fn = smap(lambda x: lax.psum(jnp.sum(x, axis=0), "x"), mesh, P("x"), P())
    return fn, [s((2 * mesh.size, 3))]


def smap_pmax(mesh):
    """shard_map: lax.pmax of shards"""
    fn = smap(lambda x: lax.pmax(x, "x"), mesh, P("x"), P())
    return fn, [s((mesh.size * 2, 3))]


def smap_pmin_int(mesh):
    """shard_map: lax.pmin of int32 shards"""
    fn = smap(lambda x: lax.pmin(x, "x"), mesh, P("x"), P())
    return fn, [s((mesh.size * 2, 3), i32)]


def smap_pmean(mesh):
    """shard_map: lax.pmean of shards"""
    fn = smap(lambda x: lax.pmean(x * x, "x"), mesh, P("x"), P())
    return fn, [s((mesh.size, 4))]


def smap_psum_int(mesh):
    """shard_map: lax.psum of int32 shards"""
    fn = smap(lambda x: lax.psum(x * 2 + 1, "x"), mesh, P("x"), P())
    return fn, [s((mesh.size * 2, 2), i32)]


def smap_psum_bf16(mesh):
    """shard_map: lax.psum of bf16 shards"""
    fn = smap(lambda x: lax.psum(x, "x"), mesh, P("x"), P())
    return fn, [s((mesh.size * 2, 4), bf16)]


def smap_all_gather_tiled(mesh):
    """shard_map: lax.all_gather(tiled=True) along axis 0"""
    fn = smap(lambda x: lax.all_gather(x, "x", axis=0, tiled=True), mesh, P("x"), P(), check_vma=False)
    return fn, [s((mesh.size * 2, 3))]


def smap_all_gather_untiled(mesh):
    """shard_map: lax.all_gather(tiled=False) stacking shards on a new axis 1"""
    fn = smap(lambda x: lax.all_gather(x, "x", axis=1), mesh, P("x"), P(), check_vma=False)
    return fn, [s((mesh.size * 2, 3))]


def smap_all_gather_int(mesh):
    """shard_map: int32 lax.all_gather(tiled=True) along axis 1"""
    fn = smap(lambda x: lax.all_gather(x, "x", axis=1, tiled=True), mesh, P(None, "x"), P(), check_vma=False)
    return fn, [s((3, mesh.size * 2), i32)]


def smap_all_gather_bf16(mesh):
    """shard_map: bf16 lax.all_gather(tiled=True) along axis 0"""
    fn = smap(lambda x: lax.all_gather(x, "x", tiled=True), mesh, P("x"), P(), check_vma=False)
    return fn, [s((mesh.size, 4), bf16)]


def smap_all_to_all(mesh):
    """shard_map: lax.all_to_all splitting axis 1, concatenating axis 0 (tiled)"""
    n = mesh.size
    body = lambda x: lax.all_to_all(x, "x", split_axis=1, concat_axis=0, tiled=True)
    fn = smap(body, mesh, P("x", None), P(None, "x"))
    return fn, [s((2 * n, n))]


def smap_all_to_all_int(mesh):
    """shard_map: int32 lax.all_to_all, split axis 0 and concat axis 1 (untiled)"""
    n = mesh.size
    body = lambda x: lax.all_to_all(x, "x", split_axis=0, concat_axis=1)
    fn = smap(body, mesh, P(None, "x"), P(None, "x"))
    return fn, [s((n, n * 3), i32)]


def smap_ppermute_ring(mesh):
    """shard_map: lax.ppermute ring shift i -> i+1"""
    n = mesh.size
    fn = smap(lambda x: lax.ppermute(x, "x", ring(n)) - x, mesh, P("x"), P("x"))
    return fn, [s((2 * n, 3))]


def smap_ppermute_pairs(mesh):
    """shard_map: lax.ppermute swapping neighbours (0<->1, 2<->3); received + 10 * own"""
    n = mesh.size
    perm = [(i, i ^ 1) for i in range(n)]
    fn = smap(lambda x: lax.ppermute(x, "x", perm) + 10 * x, mesh, P("x"), P("x"))
    return fn, [s((n, 2), i32)]


def smap_ppermute_partial(mesh):
    """shard_map: lax.ppermute that only some devices send in (others receive zeros)"""
    n = mesh.size
    perm = [(0, n - 1), (1, 0)]
    fn = smap(lambda x: lax.ppermute(x, "x", perm), mesh, P("x"), P("x"))
    return fn, [s((n, 3))]


def smap_psum_scatter(mesh):
    """shard_map: lax.psum_scatter(scatter_dimension=1, tiled=True)"""
    n = mesh.size
    body = lambda x: lax.psum_scatter(x, "x", scatter_dimension=1, tiled=True)
    fn = smap(body, mesh, P("x", None), P(None, "x"))
    return fn, [s((2 * n, 2 * n))]


def smap_psum_scatter_untiled(mesh):
    """shard_map: lax.psum_scatter(scatter_dimension=0, tiled=False) removing the scattered axis"""
    n = mesh.size
    body = lambda x: lax.psum_scatter(x, "x", scatter_dimension=0)
    fn = smap(body, mesh, P(None, "x"), P("x"))
    return fn, [s((n, 2 * n))]


def smap_axis_index(mesh):
    """shard_map: each shard adds 100 * lax.axis_index"""
    n = mesh.size
    body = lambda x: x + 100.0 * lax.axis_index("x").astype(f32)
    fn = smap(body, mesh, P("x"), P("x"))
    return fn, [s((2 * n, 2))]


def smap_axis_index_2d(mesh):
    """shard_map on a 2x2 mesh: int32 10 * axis_index('a') + axis_index('b') and a psum over both axes"""

    def body(x):
        idx = 10 * lax.axis_index("a") + lax.axis_index("b")
        return x + idx, lax.psum(jnp.sum(x), ("a", "b"))

    fn = smap(body, mesh, P("a", "b"), (P("a", "b"), P()))
    return fn, [s((4, 4), i32)]


def smap_mesh_axis_collectives_2x4(mesh):
    """8 devices, 2x4 mesh: psum over 'b' only, pmax over 'a' only, ppermute ring over 'b'"""

    def body(x):
        row = lax.psum(x, "b")
        col = lax.pmax(x, "a")
        shifted = lax.ppermute(x, "b", ring(4))
        return row, col, shifted

    fn = smap(body, mesh, P("a", "b"), (P("a", None), P(None, "b"), P("a", "b")))
    return fn, [s((4, 8))]


def smap_gather_scatter_2x4(mesh):
    """8 devices, 2x4 mesh: all_gather over 'a', psum_scatter over 'b', all_to_all over 'b'"""

    def body(x):
        g = lax.all_gather(x, "a", axis=0, tiled=True)
        r = lax.psum_scatter(x, "b", scatter_dimension=0, tiled=True)
        t = lax.all_to_all(x, "b", split_axis=0, concat_axis=1, tiled=True)
        return g, r, t

    fn = smap(body, mesh, P("a", "b"), (P(None, "b"), P(("a", "b")), P("a", "b")), check_vma=False)
    return fn, [s((16, 8))]


def smap_dp_grad_psum(mesh):
    """shard_map data-parallel training: per-shard gradient, lax.pmean, SGD update"""

    def body(params, x, y):
        g = jax.grad(mse_loss)(params, x, y)
        g = lax.pmean(g, "d")
        return jax.tree.map(lambda p, d: p - 0.1 * d, params, g)

    n = mesh.size
    fn = smap(body, mesh, ((P(), P()), P("d"), P("d")), (P(), P()))
    return fn, [(s((4, 5)), s((5, 2))), s((2 * n, 4)), s((2 * n, 2))]


def smap_tp_mlp(mesh):
    """shard_map Megatron MLP: local column/row matmuls then an explicit lax.psum"""

    def body(x, w1, w2):
        return lax.psum(jax.nn.relu(x @ w1) @ w2, "m")

    n = mesh.size
    fn = smap(body, mesh, (P(), P(None, "m"), P("m", None)), P())
    return fn, [s((3, 6)), s((6, 2 * n)), s((2 * n, 4))]


# name -> (program, mesh axis names, [mesh shapes])
PROGRAMS = {
    "dp_mlp_grad": (dp_mlp_grad, ("d",), [(4,), (8,)]),
    "tp_mlp": (tp_mlp, ("m",), [(4,), (8,)]),
    "tp_mlp_bf16": (tp_mlp_bf16, ("m",), [(4,)]),
    "sgd_step_dp": (sgd_step_dp, ("d",), [(4,), (8,)]),
    "cross_entropy_dp": (cross_entropy_dp, ("d",), [(4,)]),
    "softmax_sharded_axis": (softmax_sharded_axis, ("x",), [(4,), (8,)]),
    "layer_norm": (layer_norm_2d, ("b", "h"), [(2, 2)]),
    "attention": (attention_2d, ("b", "h"), [(2, 2)]),
    "attention_seq_sharded": (attention_seq_sharded, ("x",), [(4,)]),
    "uneven_rows": (uneven_rows, ("x",), [(4,)]),
    "uneven_matmul": (uneven_matmul, ("x",), [(4,), (8,)]),
    "uneven_contraction": (uneven_contraction, ("x",), [(4,)]),
    "uneven_reshard": (uneven_reshard, ("x",), [(4,)]),
    "reduce_scatter_matmul": (reduce_scatter_matmul, ("x",), [(4,), (8,)]),
    "reshard_transpose": (reshard_transpose, ("x",), [(4,), (8,)]),
    "dp_tp_matmul": (dp_tp_matmul_2x4, ("a", "b"), [(2, 4)]),
    "int_sum": (int_sum_2x4, ("a", "b"), [(2, 4)]),
    "col_max": (col_max_2x4, ("a", "b"), [(2, 4)]),
    "smap_psum": (smap_psum, ("x",), [(4,), (8,)]),
    "smap_pmax": (smap_pmax, ("x",), [(4,)]),
    "smap_pmin_int": (smap_pmin_int, ("x",), [(4,)]),
    "smap_pmean": (smap_pmean, ("x",), [(4,)]),
    "smap_psum_int": (smap_psum_int, ("x",), [(4,), (8,)]),
    "smap_psum_bf16": (smap_psum_bf16, ("x",), [(4,)]),
    "smap_all_gather_tiled": (smap_all_gather_tiled, ("x",), [(4,), (8,)]),
    "smap_all_gather_untiled": (smap_all_gather_untiled, ("x",), [(4,)]),
    "smap_all_gather_int": (smap_all_gather_int, ("x",), [(4,)]),
    "smap_all_gather_bf16": (smap_all_gather_bf16, ("x",), [(4,)]),
    "smap_all_to_all": (smap_all_to_all, ("x",), [(4,), (8,)]),
    "smap_all_to_all_int": (smap_all_to_all_int, ("x",), [(4,)]),
    "smap_ppermute_ring": (smap_ppermute_ring, ("x",), [(4,), (8,)]),
    "smap_ppermute_pairs": (smap_ppermute_pairs, ("x",), [(4,)]),
    "smap_ppermute_partial": (smap_ppermute_partial, ("x",), [(4,)]),
    "smap_psum_scatter": (smap_psum_scatter, ("x",), [(4,), (8,)]),
    "smap_psum_scatter_untiled": (smap_psum_scatter_untiled, ("x",), [(4,)]),
    "smap_axis_index": (smap_axis_index, ("x",), [(4,)]),
    "smap_axis_index_2d": (smap_axis_index_2d, ("a", "b"), [(2, 2)]),
    "smap_mesh_axis_collectives": (smap_mesh_axis_collectives_2x4, ("a", "b"), [(2, 4)]),
    "smap_gather_scatter": (smap_gather_scatter_2x4, ("a", "b"), [(2, 4)]),
    "smap_dp_grad_pmean": (smap_dp_grad_psum, ("d",), [(4,)]),
    "smap_tp_mlp": (smap_tp_mlp, ("m",), [(4,), (8,)]),
}

# also dumped with XLA's default mesh-axes replica groups (NAME.partitioned-meshrg.hlo);
# only collectives the partitioner creates get them (shard_map's keep explicit lists)
MESH_RG = [
    "tp_mlp_8",
    "layer_norm_2x2",
    "softmax_sharded_axis_4",
    "uneven_rows_4",
    "reshard_transpose_4",
    "dp_tp_matmul_2x4",
    "int_sum_2x4",
    "col_max_2x4",
]

# an opcode follows its result shape: "f32[4]{0} all-reduce(", "f32[] all-reduce(",
# "(f32[2]{0}, f32[2]{0}) all-to-all("
COLLECTIVE = re.compile(
    r"(?<=[\]})] )(all-reduce|all-gather|all-to-all|collective-permute|reduce-scatter|collective-broadcast"
    r"|ragged-all-to-all)(-start|-done)?\("
)

# source locations in the optimized dumps name this file: keep them relative
# to the repository, so the dumps do not depend on where it is checked out
ROOT = str(Path(__file__).resolve().parent.parent) + "/"


def collectives(text):
    counts = {}
    for m in COLLECTIVE.finditer(text):
        op = m.group(1) + (m.group(2) or "")
        counts[op] = counts.get(op, 0) + 1
    return ",".join(f"{op}:{k}" for op, k in sorted(counts.items())) or "-"


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, (program, names, shapes) in PROGRAMS.items():
        for shape in shapes:
            mesh = make_mesh(shape, names)
            tag = "x".join(map(str, shape))
            stem = f"{name}_{tag}"
            fn, args = program(mesh)
            lowered = fn.lower(*args)
            texts = {
                "annotated": lowered.as_text(dialect="hlo"),
                "partitioned": lowered.compile(compiler_options=CLASSIC_RG).as_text(),
            }
            if stem in MESH_RG:
                texts["partitioned-meshrg"] = lowered.compile().as_text()
            # JAX's default form: Shardy (xla.sdy.* custom calls and
            # frontend attributes), the same program before partitioning
            jax.config.update("jax_use_shardy_partitioner", True)
            try:
                sfn, sargs = program(mesh)
                texts["sdy"] = sfn.lower(*sargs).as_text(dialect="hlo")
            finally:
                jax.config.update("jax_use_shardy_partitioner", False)
            what = program.__doc__.strip()
            for kind, text in texts.items():
                text = text.replace(ROOT, "")
                fname = f"{stem}.{kind}.hlo"
                (out / fname).write_text(text)
                mesh_str = ",".join(f"{a}={k}" for a, k in zip(mesh.axis_names, shape))
                rows.append((fname, str(mesh.size), mesh_str, what, collectives(text)))
    with open(out / "MANIFEST.tsv", "w") as f:
        f.write("file\tdevices\tmesh\tprogram\tcollectives\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    print(f"{len(rows)} files, jax {jax.__version__}, jaxlib {jax.lib.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
