#!/usr/bin/env bash
# Regenerates tests/data/jax/: installs pinned JAX (CPU) into a git-ignored
# virtual environment and dumps every program of scripts/jax_corpus.py as HLO
# text before and after XLA:CPU optimization.
#
#   scripts/gen-jax-corpus.sh            # writes tests/data/jax/*.hlo
#
# Idempotent: the venv is reused when its pins match. Needs python3 >= 3.11
# and access to the Python package index (only for the first run).
set -euo pipefail

# the pins (jax, jaxlib) and the shared venv: scripts/jax-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/jax-venv.sh"

out="$repo_root/tests/data/jax"

ensure_jax_venv

rm -f "$out"/*.hlo
# one CPU device, no GPU probing, deterministic dumps
JAX_PLATFORMS=cpu "$venv/bin/python" "$repo_root/scripts/jax_corpus.py" "$out"
echo "wrote $(ls "$out"/*.hlo | wc -l) modules to $out"
