#!/usr/bin/env bash
# Regenerates tests/data/harnesses/: installs pinned JAX (CPU) into the same
# git-ignored virtual environment as scripts/gen-jax-corpus.sh and dumps a
# selection of JAX's own primitive test harnesses
# (jax._src.internal_test_util.test_harnesses, chosen in
# scripts/harness_corpus.py) as HLO text before and after XLA:CPU
# optimization, with MANIFEST.tsv and the generated counts of README.md.
#
#   scripts/gen-harness-corpus.sh        # writes tests/data/harnesses/*
#
# Idempotent and deterministic: the venv is reused when its pins match, and a
# second run writes the same bytes. Needs python3 >= 3.11 and access to the
# Python package index (only for the first run).
set -euo pipefail

# the pins (jax, jaxlib) and the shared venv: scripts/jax-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/jax-venv.sh"
# test_harnesses imports absl.testing (not a dependency of the jax wheel)
ABSL_VERSION="2.5.1"

out="$repo_root/tests/data/harnesses"

ensure_jax_venv
if ! "$venv/bin/python" -c "import absl, importlib.metadata as m; assert m.version('absl-py') == '$ABSL_VERSION'" 2>/dev/null; then
  "$venv/bin/pip" install --quiet "absl-py==$ABSL_VERSION"
fi

mkdir -p "$out"
rm -f "$out"/*.hlo
# CPU only (the script sets JAX_PLATFORMS=cpu and JAX_ENABLE_X64 per child)
JAX_PLATFORMS=cpu "$venv/bin/python" "$repo_root/scripts/harness_corpus.py" "$out"
echo "wrote $(ls "$out"/*.hlo | wc -l) modules ($(du -sh "$out" | cut -f1)) to $out"
