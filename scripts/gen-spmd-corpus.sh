#!/usr/bin/env bash
# Regenerates tests/data/spmd/: installs pinned JAX (CPU) into a git-ignored
# virtual environment and dumps every multi-device program of
# scripts/spmd_corpus.py as HLO text, once with GSPMD sharding annotations
# (NAME.annotated.hlo, before the SPMD partitioner) and once as the
# partitioned, optimized per-device module (NAME.partitioned.hlo), plus
# MANIFEST.tsv.
#
#   scripts/gen-spmd-corpus.sh           # writes tests/data/spmd/*.hlo
#
# Pins: jax==0.10.2, jaxlib==0.10.2 (shares the venv of gen-jax-corpus.sh).
# XLA:CPU is started with 8 host devices; programs use 4 (1-D or 2x2 meshes)
# or 8 (1-D or 2x4 meshes). The Python script turns Shardy off
# (jax_use_shardy_partitioner=False, JAX 0.10 defaults to Shardy) so the
# annotated modules use GSPMD's `sharding={...}` form, and compiles with
# xla_enable_rgv3_materialization=False for classic replica groups.
#
# Idempotent: the venv is reused when its pins match. Needs python3 >= 3.11
# and access to the Python package index (only for the first run).
set -euo pipefail

# the pins (jax, jaxlib) and the shared venv: scripts/jax-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/jax-venv.sh"

out="$repo_root/tests/data/spmd"

ensure_jax_venv

rm -f "$out"/*.hlo "$out"/MANIFEST.tsv
# CPU only, 8 host devices, deterministic dumps
JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \
  "$venv/bin/python" "$repo_root/scripts/spmd_corpus.py" "$out" 2> >(grep -v 'GSPMD sharding propagation is going to be deprecated' >&2)
echo "wrote $(ls "$out"/*.hlo | wc -l) modules to $out"
