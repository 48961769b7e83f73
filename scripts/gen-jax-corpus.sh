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

JAX_VERSION="0.10.2"
JAXLIB_VERSION="0.10.2"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${JAX_VENV:-$repo_root/.cache/jax-venv}"
out="$repo_root/tests/data/jax"

if ! "$venv/bin/python" -c "import jax, jaxlib; assert jax.__version__ == '$JAX_VERSION' and jaxlib.__version__ == '$JAXLIB_VERSION'" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "jax==$JAX_VERSION" "jaxlib==$JAXLIB_VERSION"
fi

rm -f "$out"/*.hlo
# one CPU device, no GPU probing, deterministic dumps
JAX_PLATFORMS=cpu "$venv/bin/python" "$repo_root/scripts/jax_corpus.py" "$out"
echo "wrote $(ls "$out"/*.hlo | wc -l) modules to $out"
