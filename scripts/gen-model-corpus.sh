#!/usr/bin/env bash
# Regenerates tests/data/models/: installs pinned JAX (CPU), flax, equinox,
# haiku and optax into a git-ignored virtual environment and dumps the forward
# pass and one train step of every model of scripts/model_corpus.py as HLO
# text before and after XLA:CPU optimization, plus MANIFEST.tsv.
#
#   scripts/gen-model-corpus.sh              # writes tests/data/models/*.hlo
#   scripts/gen-model-corpus.sh NAME...      # only these models (no MANIFEST)
#
# Idempotent: the venv is reused when its pins match. Needs python3 >= 3.11
# and access to the Python package index (only for the first run).
set -euo pipefail

# the libraries, and the dependencies whose versions can change what is
# traced (numerics, lowering); keep tests/data/models/README.md in step
PINS=(
  jax==0.10.2
  jaxlib==0.10.2
  flax==0.12.8
  equinox==0.13.8
  dm-haiku==0.0.17
  optax==0.2.8
  jmp==0.0.4
  jaxtyping==0.3.11
  numpy==2.4.6
  ml_dtypes==0.7.0
  scipy==1.17.1
  opt_einsum==3.4.0
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MODEL_VENV:-$repo_root/.cache/model-venv}"
out="$repo_root/tests/data/models"

pins_match() {
  [ -x "$venv/bin/python" ] || return 1
  local frozen
  frozen="$("$venv/bin/pip" freeze 2>/dev/null | tr '[:upper:]_' '[:lower:]-')" || return 1
  local pin
  for pin in "${PINS[@]}"; do
    grep -qx "$(echo "$pin" | tr '[:upper:]_' '[:lower:]-')" <<<"$frozen" || return 1
  done
}

if ! pins_match; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "${PINS[@]}"
  pins_match || { echo "the venv at $venv does not match the pins" >&2; exit 1; }
fi

if [ $# -eq 0 ]; then
  rm -f "$out"/*.hlo "$out/MANIFEST.tsv"
fi
# one CPU device, no GPU probing, deterministic dumps
JAX_PLATFORMS=cpu "$venv/bin/python" "$repo_root/scripts/model_corpus.py" "$out" "$@"
echo "wrote $(ls "$out"/*.hlo | wc -l) modules to $out"
